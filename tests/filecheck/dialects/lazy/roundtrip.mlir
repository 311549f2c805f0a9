// Every lazy op in its custom syntax: printed as written, stable under
// print -> parse -> print, and the generic form parses back to the same IR.
//
// RUN: mlfuse-opt %s | filecheck %s
// RUN: mlfuse-opt %s --print-op-generic | mlfuse-opt | filecheck %s
// RUN: mlfuse-opt %s | mlfuse-opt | filecheck %s

// Pad and shrink arguments start with `[[`, which FileCheck reads as a
// variable; they are matched as {{\[\[}} below.

// CHECK-LABEL: func.func @consts()
func.func @consts() -> (tensor<4xf32>, tensor<4xi1>, tensor<2x3xi32>) {
  // CHECK-NEXT: %0 = lazy.const 1.5 : tensor<4xf32>
  // CHECK-NEXT: %1 = lazy.const true : tensor<4xi1>
  // CHECK-NEXT: %2 = lazy.const false : tensor<4xi1>
  // CHECK-NEXT: %3 = lazy.const -7 : tensor<2x3xi32>
  // CHECK-NEXT: %4 = lazy.const 127 : tensor<4xi8>
  // CHECK-NEXT: %5 = lazy.const -9223372036854775808 : tensor<1xi64>
  // CHECK-NEXT: %6 = lazy.const -inf : tensor<4xf32>
  // CHECK-NEXT: %7 = lazy.const inf : tensor<4xf16>
  // CHECK-NEXT: %8 = lazy.const nan : tensor<4xf64>
  // CHECK-NEXT: %9 = lazy.const -0.0 : tensor<4xf64>
  // CHECK-NEXT: %10 = lazy.const 2 : tensor<4xi32>
  // CHECK-NEXT: %11 = lazy.const 0.10000000149011612 : tensor<4xf32>
  // CHECK-NEXT: %12 = lazy.const 1.0 : tensor<4xbf16>
  // CHECK-NEXT: %13 = lazy.const 0.0 {tag = "zero"} : tensor<4xf32>
  %0 = lazy.const 1.5 : tensor<4xf32>
  %1 = lazy.const true : tensor<4xi1>
  %2 = lazy.const false : tensor<4xi1>
  %3 = lazy.const -7 : tensor<2x3xi32>
  %4 = lazy.const 127 : tensor<4xi8>
  %5 = lazy.const -9223372036854775808 : tensor<1xi64>
  %6 = lazy.const -inf : tensor<4xf32>
  %7 = lazy.const inf : tensor<4xf16>
  %8 = lazy.const nan : tensor<4xf64>
  %9 = lazy.const -0.0 : tensor<4xf64>
  // an integral float literal is accepted for an integer type
  %10 = lazy.const 2.0 : tensor<4xi32>
  // f32 constants are rounded to f32 and printed exactly
  %11 = lazy.const 0.1 : tensor<4xf32>
  %12 = lazy.const 1.0 : tensor<4xbf16>
  %13 = lazy.const 0 {tag = "zero"} : tensor<4xf32>
  // CHECK-NEXT: func.return %0, %1, %3
  func.return %0, %1, %3 : tensor<4xf32>, tensor<4xi1>, tensor<2x3xi32>
}

// Floats whose shortest repr has no '.' (1e+16, 1e-05) must still print in
// a form the parser reads back (MLIR float literals need a '.'; regression:
// they once printed as `1e+16`).
// CHECK-LABEL: func.func @const_exponents()
func.func @const_exponents() -> (tensor<4xf64>, tensor<4xf64>) {
  // CHECK-NEXT: %0 = lazy.const 1{{(\.0*)?}}e{{\+?}}16 : tensor<4xf64>
  // CHECK-NEXT: %1 = lazy.const 1{{(\.0*)?}}e-{{0?}}5 : tensor<4xf64>
  %0 = lazy.const 1.0e16 : tensor<4xf64>
  %1 = lazy.const 1.0e-5 : tensor<4xf64>
  func.return %0, %1 : tensor<4xf64>, tensor<4xf64>
}

// CHECK-LABEL: func.func @unary(
// CHECK-SAME: %x: tensor<4xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>
func.func @unary(%x: tensor<4xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>) -> tensor<4xf32> {
  // CHECK-NEXT: %0 = lazy.neg %x : tensor<4xf32>
  // CHECK-NEXT: %1 = lazy.neg %i : tensor<4xi32>
  // CHECK-NEXT: %2 = lazy.recip %x : tensor<4xf32>
  // CHECK-NEXT: %3 = lazy.sqrt %x : tensor<4xf32>
  // CHECK-NEXT: %4 = lazy.exp %x : tensor<4xf32>
  // CHECK-NEXT: %5 = lazy.exp2 %x : tensor<4xf32>
  // CHECK-NEXT: %6 = lazy.log %x : tensor<4xf32>
  // CHECK-NEXT: %7 = lazy.log2 %x : tensor<4xf32>
  // CHECK-NEXT: %8 = lazy.sin %x : tensor<4xf32>
  // CHECK-NEXT: %9 = lazy.cos %x : tensor<4xf32>
  // CHECK-NEXT: %10 = lazy.abs %i : tensor<4xi32>
  // CHECK-NEXT: %11 = lazy.floor %x : tensor<4xf32>
  // CHECK-NEXT: %12 = lazy.ceil %x : tensor<4xf32>
  // CHECK-NEXT: %13 = lazy.not %b : tensor<4xi1>
  // CHECK-NEXT: %14 = lazy.not %i : tensor<4xi32>
  // CHECK-NEXT: %15 = lazy.exp %x {fastmath} : tensor<4xf32>
  %0 = lazy.neg %x : tensor<4xf32>
  %1 = lazy.neg %i : tensor<4xi32>
  %2 = lazy.recip %x : tensor<4xf32>
  %3 = lazy.sqrt %x : tensor<4xf32>
  %4 = lazy.exp %x : tensor<4xf32>
  %5 = lazy.exp2 %x : tensor<4xf32>
  %6 = lazy.log %x : tensor<4xf32>
  %7 = lazy.log2 %x : tensor<4xf32>
  %8 = lazy.sin %x : tensor<4xf32>
  %9 = lazy.cos %x : tensor<4xf32>
  %10 = lazy.abs %i : tensor<4xi32>
  %11 = lazy.floor %x : tensor<4xf32>
  %12 = lazy.ceil %x : tensor<4xf32>
  %13 = lazy.not %b : tensor<4xi1>
  %14 = lazy.not %i : tensor<4xi32>
  %15 = lazy.exp %x {fastmath} : tensor<4xf32>
  // CHECK-NEXT: func.return %15 : tensor<4xf32>
  func.return %15 : tensor<4xf32>
}

// CHECK-LABEL: func.func @binary(
func.func @binary(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>, %i: tensor<2x4xi32>, %b: tensor<2x4xi1>) -> tensor<2x4xi1> {
  // CHECK-NEXT: %0 = lazy.add %x, %y : tensor<2x4xf32>
  // CHECK-NEXT: %1 = lazy.sub %x, %y : tensor<2x4xf32>
  // CHECK-NEXT: %2 = lazy.mul %i, %i : tensor<2x4xi32>
  // CHECK-NEXT: %3 = lazy.div %x, %y : tensor<2x4xf32>
  // CHECK-NEXT: %4 = lazy.div %i, %i : tensor<2x4xi32>
  // CHECK-NEXT: %5 = lazy.idiv %i, %i : tensor<2x4xi32>
  // CHECK-NEXT: %6 = lazy.mod %i, %i : tensor<2x4xi32>
  // CHECK-NEXT: %7 = lazy.max %x, %y : tensor<2x4xf32>
  // CHECK-NEXT: %8 = lazy.min %i, %i : tensor<2x4xi32>
  // CHECK-NEXT: %9 = lazy.pow %x, %y : tensor<2x4xf32>
  // CHECK-NEXT: %10 = lazy.and %b, %b : tensor<2x4xi1>
  // CHECK-NEXT: %11 = lazy.or %i, %i : tensor<2x4xi32>
  // CHECK-NEXT: %12 = lazy.xor %b, %b : tensor<2x4xi1>
  // CHECK-NEXT: %13 = lazy.cmplt %x, %y : tensor<2x4xf32>
  // CHECK-NEXT: %14 = lazy.cmple %i, %i : tensor<2x4xi32>
  // CHECK-NEXT: %15 = lazy.cmpeq %b, %b : tensor<2x4xi1>
  // CHECK-NEXT: %16 = lazy.cmpne %x, %y {tag = 1 : i64} : tensor<2x4xf32>
  %0 = lazy.add %x, %y : tensor<2x4xf32>
  %1 = lazy.sub %x, %y : tensor<2x4xf32>
  %2 = lazy.mul %i, %i : tensor<2x4xi32>
  %3 = lazy.div %x, %y : tensor<2x4xf32>
  %4 = lazy.div %i, %i : tensor<2x4xi32>
  %5 = lazy.idiv %i, %i : tensor<2x4xi32>
  %6 = lazy.mod %i, %i : tensor<2x4xi32>
  %7 = lazy.max %x, %y : tensor<2x4xf32>
  %8 = lazy.min %i, %i : tensor<2x4xi32>
  %9 = lazy.pow %x, %y : tensor<2x4xf32>
  %10 = lazy.and %b, %b : tensor<2x4xi1>
  %11 = lazy.or %i, %i : tensor<2x4xi32>
  %12 = lazy.xor %b, %b : tensor<2x4xi1>
  %13 = lazy.cmplt %x, %y : tensor<2x4xf32>
  %14 = lazy.cmple %i, %i : tensor<2x4xi32>
  %15 = lazy.cmpeq %b, %b : tensor<2x4xi1>
  %16 = lazy.cmpne %x, %y {tag = 1 : i64} : tensor<2x4xf32>
  // comparisons give bool tensors
  // CHECK-NEXT: func.return %13 : tensor<2x4xi1>
  func.return %13 : tensor<2x4xi1>
}

// CHECK-LABEL: func.func @ternary_and_convert(
func.func @ternary_and_convert(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK-NEXT: [[LT:%.*]] = lazy.cmplt %x, %y : tensor<4xf32>
  // CHECK-NEXT: [[SEL:%.*]] = lazy.where [[LT]], %x, %y : tensor<4xf32>
  // CHECK-NEXT: [[FMA:%.*]] = lazy.mulacc %x, %y, [[SEL]] : tensor<4xf32>
  // CHECK-NEXT: [[F:%.*]] = lazy.cast %i : tensor<4xi32> to tensor<4xf32>
  // CHECK-NEXT: [[H:%.*]] = lazy.cast [[FMA]] : tensor<4xf32> to tensor<4xf16>
  // CHECK-NEXT: [[B:%.*]] = lazy.cast [[LT]] : tensor<4xi1> to tensor<4xf32>
  // CHECK-NEXT: [[BITS:%.*]] = lazy.bitcast [[F]] : tensor<4xf32> to tensor<4xi32>
  // CHECK-NEXT: [[HB:%.*]] = lazy.bitcast [[H]] : tensor<4xf16> to tensor<4xi16>
  // CHECK-NEXT: func.return [[BITS]] : tensor<4xi32>
  %0 = lazy.cmplt %x, %y : tensor<4xf32>
  %1 = lazy.where %0, %x, %y : tensor<4xf32>
  %2 = lazy.mulacc %x, %y, %1 : tensor<4xf32>
  %3 = lazy.cast %i : tensor<4xi32> to tensor<4xf32>
  %4 = lazy.cast %2 : tensor<4xf32> to tensor<4xf16>
  %5 = lazy.cast %0 : tensor<4xi1> to tensor<4xf32>
  %6 = lazy.bitcast %3 : tensor<4xf32> to tensor<4xi32>
  %7 = lazy.bitcast %4 : tensor<4xf16> to tensor<4xi16>
  func.return %6 : tensor<4xi32>
}

// Reduced axes stay as size-1 dims.
// CHECK-LABEL: func.func @reduce(
func.func @reduce(%x: tensor<4x8xf32>, %i: tensor<2x3x4xi32>) -> tensor<4x1xf32> {
  // CHECK-NEXT: [[SUM:%.*]] = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  // CHECK-NEXT: %{{.*}} = lazy.reduce max %x [0, 1] : tensor<4x8xf32> -> tensor<1x1xf32>
  // CHECK-NEXT: %{{.*}} = lazy.reduce mul %i [0, 2] : tensor<2x3x4xi32> -> tensor<1x3x1xi32>
  // CHECK-NEXT: %{{.*}} = lazy.reduce add %x [] {why = "empty"} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: func.return [[SUM]] : tensor<4x1xf32>
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.reduce max %x [0, 1] : tensor<4x8xf32> -> tensor<1x1xf32>
  %2 = lazy.reduce mul %i [0, 2] : tensor<2x3x4xi32> -> tensor<1x3x1xi32>
  %3 = lazy.reduce add %x [] {why = "empty"} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %0 : tensor<4x1xf32>
}

// CHECK-LABEL: func.func @movement(
func.func @movement(%x: tensor<4x8xf32>, %c: tensor<1x8xf32>, %i: tensor<4xi32>) -> tensor<8x4xf32> {
  // CHECK-NEXT: %0 = lazy.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
  // CHECK-NEXT: %1 = lazy.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  // CHECK-NEXT: %2 = lazy.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  // CHECK-NEXT: %3 = lazy.expand %c : tensor<1x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %4 = lazy.pad %x {{\[\[}}1, 2], [0, 3]] : tensor<4x8xf32> -> tensor<7x11xf32>
  // CHECK-NEXT: %5 = lazy.pad %x {{\[\[}}1, 1], [1, 1]] value -inf : tensor<4x8xf32> -> tensor<6x10xf32>
  // CHECK-NEXT: %6 = lazy.pad %x {{\[\[}}0, 0], [2, 0]] value 1.5 : tensor<4x8xf32> -> tensor<4x10xf32>
  // CHECK-NEXT: %7 = lazy.pad %i {{\[\[}}2, 0]] value -1 : tensor<4xi32> -> tensor<6xi32>
  // CHECK-NEXT: %8 = lazy.shrink %x {{\[\[}}1, 3], [0, 8]] : tensor<4x8xf32> -> tensor<2x8xf32>
  // CHECK-NEXT: %9 = lazy.flip %x [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %10 = lazy.stride %x [2, 3] : tensor<4x8xf32> -> tensor<2x3xf32>
  %0 = lazy.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
  %1 = lazy.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %2 = lazy.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %3 = lazy.expand %c : tensor<1x8xf32> -> tensor<4x8xf32>
  %4 = lazy.pad %x [[1, 2], [0, 3]] : tensor<4x8xf32> -> tensor<7x11xf32>
  %5 = lazy.pad %x [[1, 1], [1, 1]] value -inf : tensor<4x8xf32> -> tensor<6x10xf32>
  %6 = lazy.pad %x [[0, 0], [2, 0]] value 1.5 : tensor<4x8xf32> -> tensor<4x10xf32>
  %7 = lazy.pad %i [[2, 0]] value -1 : tensor<4xi32> -> tensor<6xi32>
  %8 = lazy.shrink %x [[1, 3], [0, 8]] : tensor<4x8xf32> -> tensor<2x8xf32>
  %9 = lazy.flip %x [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %10 = lazy.stride %x [2, 3] : tensor<4x8xf32> -> tensor<2x3xf32>
  // a transpose as a view
  // CHECK-NEXT: [[T:%.*]] = lazy.view %x <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
  // a masked view (a pad by 1 on every side); its offset is negative
  // CHECK-NEXT: %{{.*}} = lazy.view %x <[6, 10] strides [8, 1] offset -9 mask {{\[\[}}1, 5], [1, 9]]> : tensor<4x8xf32> -> tensor<6x10xf32>
  // a transpose then a reshape: two stacked views, the buffer-side one first
  // CHECK-NEXT: %{{.*}} = lazy.view %x <[4, 8] strides [1, 4] offset 0 | [2, 16] strides [16, 1] offset 0> : tensor<4x8xf32> -> tensor<2x16xf32>
  // CHECK-NEXT: %{{.*}} = lazy.view %x <[4, 8] strides [-8, -1] offset 31> {tag} : tensor<4x8xf32> -> tensor<4x8xf32>
  %11 = lazy.view %x <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
  %12 = lazy.view %x <[6, 10] strides [8, 1] offset -9 mask [[1, 5], [1, 9]]> : tensor<4x8xf32> -> tensor<6x10xf32>
  %13 = lazy.view %x <[4, 8] strides [1, 4] offset 0 | [2, 16] strides [16, 1] offset 0> : tensor<4x8xf32> -> tensor<2x16xf32>
  %14 = lazy.view %x <[4, 8] strides [-8, -1] offset 31> {tag} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: func.return [[T]] : tensor<8x4xf32>
  func.return %11 : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @meta(
func.func @meta(%x: tensor<4xf32>, %buf: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: [[C:%.*]] = lazy.contiguous %x : tensor<4xf32>
  // CHECK-NEXT: [[D:%.*]] = lazy.copy [[C]] to "cpu" : tensor<4xf32>
  // CHECK-NEXT: [[A:%.*]] = lazy.assign %buf, [[D]] {reason = "output"} : tensor<4xf32>
  // CHECK-NEXT: func.return [[A]] : tensor<4xf32>
  %0 = lazy.contiguous %x : tensor<4xf32>
  %1 = lazy.copy %0 to "cpu" : tensor<4xf32>
  %2 = lazy.assign %buf, %1 {reason = "output"} : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
