// RUN: mlfuse-opt %s --split-input-file -p legalize-float-types | filecheck %s

// legalize-float-types: kernels keep loading and storing 16-bit floats, but
// every op on them runs in f32 and rounds back after each op (PyTorch's CPU
// semantics); reductions accumulate in f32 and round once.

// f16: extf / op in f32 / truncf; the product is rounded to f16 before the
// sum sees it, the sum accumulates in f32.
// CHECK-LABEL: kernel.func @dot_f16
// CHECK:         [[A:%.*]] = kernel.load %a
// CHECK-NEXT:    [[B:%.*]] = kernel.load %b
// CHECK-NEXT:    [[A32:%.*]] = arith.extf [[A]] : f16 to f32
// CHECK-NEXT:    [[B32:%.*]] = arith.extf [[B]] : f16 to f32
// CHECK-NEXT:    [[P:%.*]] = arith.mulf [[A32]], [[B32]] : f32
// CHECK-NEXT:    [[P16:%.*]] = arith.truncf [[P]] : f32 to f16
// CHECK-NEXT:    [[P32:%.*]] = arith.extf [[P16]] : f16 to f32
// CHECK-NEXT:    [[S:%.*]] = kernel.reduce add [[P32]] [1] : f32
// CHECK-NEXT:    [[S16:%.*]] = arith.truncf [[S]] : f32 to f16
// CHECK-NEXT:    kernel.store %out0 <[4, 8] strides [1, 0] offset 0>, [[S16]] : memref<4xf16>
// CHECK-NOT:     : f16{{$}}
kernel.func @dot_f16 outs(%out0: memref<4xf16>) ins(%a: memref<32xf16>, %b: memref<32xf16>) space [4, 8] plan [parallel 0, serial 1] {
  %0 = kernel.load %a <[4, 8] strides [8, 1] offset 0> : memref<32xf16>
  %1 = kernel.load %b <[4, 8] strides [8, 1] offset 0> : memref<32xf16>
  %2 = arith.mulf %0, %1 : f16
  %3 = kernel.reduce add %2 [1] : f16
  kernel.store %out0 <[4, 8] strides [1, 0] offset 0>, %3 : memref<4xf16>
}

// -----

// bf16: widening is a shift of the bits into the high half of an i32;
// narrowing rounds to nearest even (+0x7fff + the kept lsb) and keeps NaNs
// quiet (| 0x40) through an all-ones mask made without a compare, so the
// kernel still vectorizes. Constants become i16 bits (1.5 = 0x3fc0 = 16320).
// Compares, selects and math run on the widened values; where() selects bf16.
// CHECK-LABEL: kernel.func @bf16
// CHECK-DAG:     [[C16:%.*]] = arith.constant 16 : i32
// CHECK-DAG:     [[ONE:%.*]] = arith.constant 1 : i32
// CHECK-DAG:     [[BIAS:%.*]] = arith.constant 32767 : i32
// CHECK-DAG:     [[ABS:%.*]] = arith.constant 2147483647 : i32
// CHECK-DAG:     [[INF:%.*]] = arith.constant 2139095040 : i32
// CHECK-DAG:     [[C31:%.*]] = arith.constant 31 : i32
// CHECK-DAG:     [[QUIET:%.*]] = arith.constant 64 : i32
// CHECK:         [[X:%.*]] = kernel.load %a <[16] strides [1] offset 0> : memref<16xbf16>
// CHECK-NEXT:    [[CB:%.*]] = arith.constant 16320 : i16
// CHECK-NEXT:    [[C:%.*]] = arith.bitcast [[CB]] : i16 to bf16
// CHECK-NEXT:    [[XB:%.*]] = arith.bitcast [[X]] : bf16 to i16
// CHECK-NEXT:    [[XW:%.*]] = arith.extui [[XB]] : i16 to i32
// CHECK-NEXT:    [[XS:%.*]] = arith.shli [[XW]], [[C16]] : i32
// CHECK-NEXT:    [[X32:%.*]] = arith.bitcast [[XS]] : i32 to f32
// CHECK:         [[SUM:%.*]] = arith.addf [[X32]], {{%.*}} : f32
// CHECK-NEXT:    [[U:%.*]] = arith.bitcast [[SUM]] : f32 to i32
// CHECK-NEXT:    [[HIGH:%.*]] = arith.shrui [[U]], [[C16]] : i32
// CHECK-NEXT:    [[LSB:%.*]] = arith.andi [[HIGH]], [[ONE]] : i32
// CHECK-NEXT:    [[ADD:%.*]] = arith.addi [[LSB]], [[BIAS]] : i32
// CHECK-NEXT:    [[UP:%.*]] = arith.addi [[U]], [[ADD]] : i32
// CHECK-NEXT:    [[R:%.*]] = arith.shrui [[UP]], [[C16]] : i32
// CHECK-NEXT:    [[MAG:%.*]] = arith.andi [[U]], [[ABS]] : i32
// CHECK-NEXT:    [[D:%.*]] = arith.subi [[INF]], [[MAG]] : i32
// CHECK-NEXT:    [[NAN:%.*]] = arith.shrsi [[D]], [[C31]] : i32
// CHECK-NEXT:    [[Q:%.*]] = arith.ori [[HIGH]], [[QUIET]] : i32
// CHECK:         [[BITS:%.*]] = arith.ori {{%.*}}, {{%.*}} : i32
// CHECK-NEXT:    [[T:%.*]] = arith.trunci [[BITS]] : i32 to i16
// CHECK-NEXT:    [[S:%.*]] = arith.bitcast [[T]] : i16 to bf16
// CHECK:         math.exp {{%.*}} : f32
// CHECK-NOT:     arith.cmpf {{.*}} : bf16
// CHECK:         [[LT:%.*]] = arith.cmpf olt, {{%.*}}, {{%.*}} : f32
// CHECK:         [[W:%.*]] = arith.select [[LT]], {{%.*}}, {{%.*}} : bf16
// CHECK-NEXT:    kernel.store %out0 <[16] strides [1] offset 0>, [[W]] : memref<16xbf16>
kernel.func @bf16 outs(%out0: memref<16xbf16>) ins(%a: memref<16xbf16>, %b: memref<16xbf16>) space [16] plan [parallel 0] {
  %0 = kernel.load %a <[16] strides [1] offset 0> : memref<16xbf16>
  %1 = arith.constant 1.500000e+00 : bf16
  %2 = arith.addf %0, %1 : bf16
  %3 = math.exp %2 : bf16
  %4 = kernel.load %b <[16] strides [1] offset 0> : memref<16xbf16>
  %5 = arith.cmpf olt, %3, %4 : bf16
  %6 = arith.select %5, %3, %4 : bf16
  kernel.store %out0 <[16] strides [1] offset 0>, %6 : memref<16xbf16>
}

// -----

// Conversions: f64 -> f16 rounds through f32 (as PyTorch converts doubles
// to half); f16 -> f32 and f32 -> f16 stay; bf16 -> f64 widens by bits, then
// extends; integer -> f16 converts to f32 and rounds.
// CHECK-LABEL: kernel.func @convert
// CHECK:         [[D:%.*]] = kernel.load %d
// CHECK-NEXT:    [[DF:%.*]] = arith.truncf [[D]] : f64 to f32
// CHECK-NEXT:    [[H:%.*]] = arith.truncf [[DF]] : f32 to f16
// CHECK:         [[I:%.*]] = kernel.load %i
// CHECK-NEXT:    [[IF:%.*]] = arith.sitofp [[I]] : i32 to f32
// CHECK-NEXT:    arith.truncf [[IF]] : f32 to f16
// CHECK:         arith.bitcast {{%.*}} : i32 to f32
// CHECK-NEXT:    arith.extf {{%.*}} : f32 to f64
kernel.func @convert outs(%o1: memref<4xf16>, %o2: memref<4xf16>, %o3: memref<4xf64>) ins(%d: memref<4xf64>, %i: memref<4xi32>, %b: memref<4xbf16>) space [4] plan [parallel 0] {
  %0 = kernel.load %d <[4] strides [1] offset 0> : memref<4xf64>
  %1 = arith.truncf %0 : f64 to f16
  kernel.store %o1 <[4] strides [1] offset 0>, %1 : memref<4xf16>
  %2 = kernel.load %i <[4] strides [1] offset 0> : memref<4xi32>
  %3 = arith.sitofp %2 : i32 to f16
  kernel.store %o2 <[4] strides [1] offset 0>, %3 : memref<4xf16>
  %4 = kernel.load %b <[4] strides [1] offset 0> : memref<4xbf16>
  %5 = arith.extf %4 : bf16 to f64
  kernel.store %o3 <[4] strides [1] offset 0>, %5 : memref<4xf64>
}
