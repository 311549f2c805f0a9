// Every kernel op in its custom syntax: printed as written, stable under
// print -> parse -> print, and the generic form parses back to the same IR.
//
// RUN: mlfuse-opt %s | filecheck %s
// RUN: mlfuse-opt %s --print-op-generic | mlfuse-opt | filecheck %s
// RUN: mlfuse-opt %s | mlfuse-opt | filecheck %s

// A row sum: the store view has stride 0 along the reduced axis. Parsed
// without a plan, the kernel gets the default one: rows in parallel, the
// reduced axis serial.
// CHECK-LABEL: kernel.func @row_sum
// CHECK-SAME: outs(%out: memref<64xf32>) ins(%x: memref<4096xf32>) space [64, 64] plan [parallel 0, serial 1] {
kernel.func @row_sum outs(%out: memref<64xf32>) ins(%x: memref<4096xf32>) space [64, 64] {
  // CHECK-NEXT: [[V:%.*]] = kernel.load %x <[64, 64] strides [64, 1] offset 0> : memref<4096xf32>
  // CHECK-NEXT: [[S:%.*]] = kernel.reduce add [[V]] [1] : f32
  // CHECK-NEXT: kernel.store %out <[64, 64] strides [1, 0] offset 0>, [[S]] : memref<64xf32>
  // CHECK-NEXT: }
  %0 = kernel.load %x <[64, 64] strides [64, 1] offset 0> : memref<4096xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[64, 64] strides [1, 0] offset 0>, %1 : memref<64xf32>
}

// Two outputs, two inputs, attributes; a masked load (a pad) with its
// validity, arith/math scalar ops, a stacked load view, max and mul reduces.
// CHECK-LABEL: kernel.func @padded
// CHECK-SAME: outs(%o: memref<36xf32>, %o2: memref<36xi32>) ins(%x: memref<16xf32>, %y: memref<16xi32>) space [6, 6] plan [serial 0, serial 1] attributes {reason = "pad"} {
kernel.func @padded outs(%o: memref<36xf32>, %o2: memref<36xi32>) ins(%x: memref<16xf32>, %y: memref<16xi32>) space [6, 6] attributes {reason = "pad"} {
  // CHECK-NEXT: [[L:%.*]] = kernel.load %x <[6, 6] strides [4, 1] offset -5 mask {{\[\[}}1, 5], [1, 5]]> : memref<16xf32>
  // CHECK-NEXT: [[OK:%.*]] = kernel.valid <[6, 6] strides [4, 1] offset -5 mask {{\[\[}}1, 5], [1, 5]]>
  // CHECK-NEXT: [[ONE:%.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT: [[SEL:%.*]] = arith.select [[OK]], [[L]], [[ONE]] : f32
  // CHECK-NEXT: [[E:%.*]] = math.exp [[SEL]] : f32
  // CHECK-NEXT: [[M:%.*]] = kernel.reduce max [[E]] [] : f32
  // CHECK-NEXT: kernel.store %o <[6, 6] strides [6, 1] offset 0>, [[M]] : memref<36xf32>
  // CHECK-NEXT: [[T:%.*]] = kernel.load %y <[4, 4] strides [1, 4] offset 0 | [6, 6] strides [0, 0] offset 3> : memref<16xi32>
  // CHECK-NEXT: [[P:%.*]] = kernel.reduce mul [[T]] [0, 1] : i32
  // CHECK-NEXT: kernel.store %o2 <[6, 6] strides [0, 0] offset 0>, [[P]] : memref<36xi32>
  // CHECK-NEXT: }
  %0 = kernel.load %x <[6, 6] strides [4, 1] offset -5 mask [[1, 5], [1, 5]]> : memref<16xf32>
  %1 = kernel.valid <[6, 6] strides [4, 1] offset -5 mask [[1, 5], [1, 5]]>
  %2 = arith.constant 1.0 : f32
  %3 = arith.select %1, %0, %2 : f32
  %4 = math.exp %3 : f32
  %5 = kernel.reduce max %4 [] : f32
  kernel.store %o <[6, 6] strides [6, 1] offset 0>, %5 : memref<36xf32>
  %6 = kernel.load %y <[4, 4] strides [1, 4] offset 0 | [6, 6] strides [0, 0] offset 3> : memref<16xi32>
  %7 = kernel.reduce mul %6 [0, 1] : i32
  kernel.store %o2 <[6, 6] strides [0, 0] offset 0>, %7 : memref<36xi32>
}

// A 0-d space and a kernel with no inputs.
// CHECK-LABEL: kernel.func @scalar
// CHECK-SAME: outs(%s: memref<1xf32>) ins() space [] plan [] {
kernel.func @scalar outs(%s: memref<1xf32>) ins() space [] {
  // CHECK-NEXT: [[C:%.*]] = arith.constant 2.500000e+00 : f32
  // CHECK-NEXT: kernel.store %s <[] strides [] offset 0>, [[C]] : memref<1xf32>
  // CHECK-NEXT: }
  %0 = arith.constant 2.5 : f32
  kernel.store %s <[] strides [] offset 0>, %0 : memref<1xf32>
}

// A plan written by hand is kept as written: here the columns run in
// parallel and the rows in a serial loop.
// CHECK-LABEL: kernel.func @by_hand
// CHECK-SAME: space [4, 8] plan [parallel 1, serial 0] {
kernel.func @by_hand outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 1, serial 0] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %0 : memref<32xf32>
}

// A constant result needs no kernel: a one-element buffer, read through a
// broadcasting view (upstream memref.reinterpret_cast).
// CHECK-LABEL: func.func @constant
// CHECK-NEXT: [[C:%.*]] = kernel.constant 2.5 : memref<1xf32>
// CHECK-NEXT: [[I:%.*]] = kernel.constant -3 : memref<1xi32>
// CHECK-NEXT: [[B:%.*]] = kernel.constant true : memref<1xi1>
// CHECK-NEXT: [[V:%.*]] = memref.reinterpret_cast [[C]] to offset: [0], sizes: [2, 3], strides: [0, 0] : memref<1xf32> to memref<2x3xf32, strided<[0, 0]>>
// CHECK-NEXT: func.return [[V]], [[I]], [[B]] :
func.func @constant() -> (memref<2x3xf32, strided<[0, 0]>>, memref<1xi32>, memref<1xi1>) {
  %0 = kernel.constant 2.5 : memref<1xf32>
  %1 = kernel.constant -3 : memref<1xi32>
  %2 = kernel.constant true : memref<1xi1>
  %3 = memref.reinterpret_cast %0 to offset: [0], sizes: [2, 3], strides: [0, 0] : memref<1xf32> to memref<2x3xf32, strided<[0, 0]>>
  func.return %3, %1, %2 : memref<2x3xf32, strided<[0, 0]>>, memref<1xi32>, memref<1xi1>
}

// The schedule: a func.func of alloc / launch / free in execution order.
// CHECK-LABEL: func.func @schedule
// CHECK-SAME: (%in: memref<4096xf32>, %y: memref<16xi32>) -> memref<64xf32> {
func.func @schedule(%in: memref<4096xf32>, %y: memref<16xi32>) -> memref<64xf32> {
  // CHECK-NEXT: [[SUM:%.*]] = kernel.alloc : memref<64xf32>
  // CHECK-NEXT: kernel.launch @row_sum outs([[SUM]] : memref<64xf32>) ins(%in : memref<4096xf32>)
  // CHECK-NEXT: [[W:%.*]] = kernel.window %in [1024] : memref<4096xf32> -> memref<64xf32>
  // CHECK-NEXT: [[X:%.*]] = kernel.alloc {reused = false} : memref<16xf32>
  // CHECK-NEXT: [[A:%.*]] = kernel.alloc : memref<36xf32>
  // CHECK-NEXT: [[B:%.*]] = kernel.alloc : memref<36xi32>
  // CHECK-NEXT: kernel.launch @padded outs([[A]] : memref<36xf32>, [[B]] : memref<36xi32>) ins([[X]] : memref<16xf32>, %y : memref<16xi32>)
  // CHECK-NEXT: [[S:%.*]] = kernel.alloc : memref<1xf32>
  // CHECK-NEXT: kernel.launch @scalar outs([[S]] : memref<1xf32>) ins()
  // CHECK-NEXT: kernel.free [[X]] : memref<16xf32>
  // CHECK-NEXT: kernel.free [[A]] : memref<36xf32>
  // CHECK-NEXT: kernel.free [[B]] : memref<36xi32>
  // CHECK-NEXT: kernel.free [[S]] : memref<1xf32>
  // CHECK-NEXT: func.return [[SUM]] : memref<64xf32>
  %0 = kernel.alloc : memref<64xf32>
  kernel.launch @row_sum outs(%0 : memref<64xf32>) ins(%in : memref<4096xf32>)
  %w = kernel.window %in [1024] : memref<4096xf32> -> memref<64xf32>
  %1 = kernel.alloc {reused = false} : memref<16xf32>
  %2 = kernel.alloc : memref<36xf32>
  %3 = kernel.alloc : memref<36xi32>
  kernel.launch @padded outs(%2 : memref<36xf32>, %3 : memref<36xi32>) ins(%1 : memref<16xf32>, %y : memref<16xi32>)
  %4 = kernel.alloc : memref<1xf32>
  kernel.launch @scalar outs(%4 : memref<1xf32>) ins()
  kernel.free %1 : memref<16xf32>
  kernel.free %2 : memref<36xf32>
  kernel.free %3 : memref<36xi32>
  kernel.free %4 : memref<1xf32>
  func.return %0 : memref<64xf32>
}

// A kernel with arguments and an empty body (regression: the body once
// printed an entry block header `^bb0(%o: memref<4xf32>):` repeating the
// arguments, which the parser rejects).
// CHECK-LABEL: kernel.func @empty
// CHECK-SAME: outs(%o: memref<4xf32>) ins() space [4] plan [serial 0] {
// CHECK-NEXT: }
kernel.func @empty outs(%o: memref<4xf32>) ins() space [4] {
}
