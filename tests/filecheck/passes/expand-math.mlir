// RUN: mlfuse-opt %s --split-input-file -p expand-math | filecheck %s
// RUN: mlfuse-opt %s --split-input-file -p 'expand-math{f64-pow=true}' | filecheck %s --check-prefix=F64POW

// expand-math: transcendental math ops become elementwise arith (range
// reduction, a polynomial as an fma chain, the exponent built in integer
// bits), so LLVM can vectorize them instead of calling libm.

// exp(x), f32: clamp with IEEE minimum/maximum (NaN passes both; no compare,
// so it vectorizes under any plan), n = round(x log2 e) by the
// magic constant 1.5·2^23, r = x - n·ln2 with ln2 in two parts (r_hi exact),
// 1 + (r_hi + (r_lo + r²·q(r))) with q an fma chain, then
// 2^n in two exponent-bit factors.

// CHECK-LABEL: func.func @exp_f32(%x: f32) -> f32 {
// CHECK-NOT:     math.exp
// CHECK-NOT:     arith.cmpf
// CHECK:         [[HI:%.*]] = arith.constant 8.900000e+01 : f32
// CHECK-NEXT:    [[X1:%.*]] = arith.minimumf %x, [[HI]] : f32
// CHECK-NEXT:    [[LO:%.*]] = arith.constant -1.100000e+02 : f32
// CHECK-NEXT:    [[X:%.*]] = arith.maximumf [[X1]], [[LO]] : f32
// CHECK:         [[MAGIC:%.*]] = arith.constant 0x4B400000 : f32
// CHECK-NEXT:    [[T:%.*]] = math.fma [[X]], {{%.*}}, [[MAGIC]] : f32
// CHECK-NEXT:    [[N:%.*]] = arith.subf [[T]], [[MAGIC]] : f32
// CHECK-NEXT:    [[TI:%.*]] = arith.bitcast [[T]] : f32 to i32
// CHECK:         [[NI:%.*]] = arith.subi [[TI]], {{%.*}} : i32
// CHECK:         [[RHI:%.*]] = math.fma [[N]], {{%.*}}, [[X]] : f32
// CHECK:         [[RLO:%.*]] = arith.mulf [[N]], {{%.*}} : f32
// CHECK-NEXT:    [[R:%.*]] = arith.addf [[RHI]], [[RLO]] : f32
// CHECK-NEXT:    [[Z:%.*]] = arith.mulf [[R]], [[R]] : f32
// CHECK-COUNT-5: math.fma {{%.*}}, [[R]], {{%.*}} : f32
// CHECK-NEXT:    [[ZQ:%.*]] = math.fma [[Z]], {{%.*}}, [[RLO]] : f32
// CHECK-NEXT:    [[EM1:%.*]] = arith.addf [[RHI]], [[ZQ]] : f32
// CHECK:         [[P:%.*]] = arith.addf [[EM1]], {{%.*}} : f32
// CHECK:         [[N1:%.*]] = arith.shrsi [[NI]], {{%.*}} : i32
// CHECK-NEXT:    [[N2:%.*]] = arith.subi [[NI]], [[N1]] : i32
// CHECK:         arith.shli
// CHECK-NEXT:    [[S1:%.*]] = arith.bitcast {{%.*}} : i32 to f32
// CHECK:         arith.shli
// CHECK-NEXT:    [[S2:%.*]] = arith.bitcast {{%.*}} : i32 to f32
// CHECK-NEXT:    [[Y1:%.*]] = arith.mulf [[P]], [[S1]] : f32
// CHECK-NEXT:    [[Y:%.*]] = arith.mulf [[Y1]], [[S2]] : f32
// CHECK-NEXT:    func.return [[Y]] : f32
func.func @exp_f32(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  func.return %0 : f32
}

// -----

// f64 uses f64 constants (clamp at 710, magic 1.5·2^52) and a longer chain.

// CHECK-LABEL: func.func @exp_f64(%x: f64) -> f64 {
// CHECK-NOT:     math.exp
// CHECK:         arith.constant 7.100000e+02 : f64
// CHECK:         arith.constant 0x4338000000000000 : f64
// CHECK:         arith.bitcast {{%.*}} : f64 to i64
// CHECK-COUNT-12: math.fma {{.*}} : f64
// CHECK:         arith.constant 1023 : i64
// CHECK:         arith.constant 52 : i64
// CHECK:         func.return
func.func @exp_f64(%x: f64) -> f64 {
  %0 = math.exp %x : f64
  func.return %0 : f64
}

// -----

// log: denormal inputs are scaled by 2^23 first; x < 0 or NaN -> NaN,
// 0 -> -inf, inf -> inf by selects at the end.

// CHECK-LABEL: func.func @log_f32(%x: f32) -> f32 {
// CHECK-NOT:     math.log
// CHECK:         arith.cmpf olt, %x, {{%.*}} : f32
// CHECK:         arith.constant 0x4B000000 : f32
// CHECK:         arith.divf
// CHECK:         [[NEG:%.*]] = arith.cmpf ult, %x, [[ZERO:%.*]] : f32
// CHECK-NEXT:    [[NAN:%.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:    [[Y1:%.*]] = arith.select [[NEG]], [[NAN]], {{%.*}} : f32
// CHECK-NEXT:    [[IS0:%.*]] = arith.cmpf oeq, %x, [[ZERO]] : f32
// CHECK-NEXT:    [[NINF:%.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    [[Y2:%.*]] = arith.select [[IS0]], [[NINF]], [[Y1]] : f32
// CHECK-NEXT:    [[INF:%.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:    [[ISINF:%.*]] = arith.cmpf oeq, %x, [[INF]] : f32
// CHECK-NEXT:    [[Y:%.*]] = arith.select [[ISINF]], [[INF]], [[Y2]] : f32
// CHECK-NEXT:    func.return [[Y]] : f32
func.func @log_f32(%x: f32) -> f32 {
  %0 = math.log %x : f32
  func.return %0 : f32
}

// -----

// sin/cos of f32 are computed in f64 and rounded back: j = round(x·2/π),
// r = x − j·π/2 in three parts, the quadrant bits pick and negate on the
// integer bits (no compares: they vectorize). Arguments of 2^50 and more
// take kernel.sincos_large's value (narrow: an f32's, below 2^128), picked
// by a mask built from |x|'s bits.

// CHECK-LABEL: func.func @sincos_f32(%x: f32) -> (f32, f32) {
// CHECK-NOT:     math.sin
// CHECK:         [[XD:%.*]] = arith.extf %x : f32 to f64
// CHECK-NOT:     arith.cmpf
// CHECK:         [[BIG:%.*]] = kernel.sincos_large sin narrow [[XD]] : f64
// CHECK:         [[LIM:%.*]] = arith.constant 4832362400168542207 : i64
// CHECK-NEXT:    [[D:%.*]] = arith.subi [[LIM]], {{%.*}} : i64
// CHECK-NEXT:    [[LARGE:%.*]] = arith.shrsi [[D]], {{%.*}} : i64
// CHECK:         arith.truncf {{%.*}} : f64 to f32
// CHECK-NOT:     math.cos
// CHECK:         arith.extf %x : f32 to f64
// CHECK:         kernel.sincos_large cos narrow {{%.*}} : f64
// CHECK:         arith.truncf {{%.*}} : f64 to f32
// CHECK-NOT:     math.
// CHECK:         func.return
func.func @sincos_f32(%x: f32) -> (f32, f32) {
  %0 = math.sin %x : f32
  %1 = math.cos %x : f32
  func.return %0, %1 : f32, f32
}

// -----

// powf: f32 through f64 (log2 and exp2 expanded there), f64 keeps math.powf
// (lowered to llvm.pow); f16 goes through f32; other math ops are untouched.

// With f64-pow (the GPU's pipelines: no libm to call), f64 powf is expanded
// too: log2|x| and y·log2|x| carried as double-doubles (fma products), then
// exp2 of the pair and C99's special cases.
// F64POW-LABEL: func.func @others(
// F64POW-NOT:     math.powf
// F64POW:         arith.divf {{%.*}}, {{%.*}} : f64
// F64POW:         math.fma {{%.*}}, {{%.*}}, {{%.*}} : f64
// F64POW:         arith.select
// F64POW:         func.return

// CHECK-LABEL: func.func @others(%x: f32, %d: f64, %h: f16) -> (f32, f64, f16, f32) {
// CHECK:         arith.extf %x : f32 to f64
// CHECK-NOT:     math.powf {{.*}} : f32
// CHECK:         arith.truncf {{%.*}} : f64 to f32
// CHECK:         math.powf %d, %d : f64
// CHECK:         arith.extf %h : f16 to f32
// CHECK-NOT:     math.exp
// CHECK:         arith.truncf {{%.*}} : f32 to f16
// CHECK:         math.sqrt %x : f32
func.func @others(%x: f32, %d: f64, %h: f16) -> (f32, f64, f16, f32) {
  %0 = math.powf %x, %x : f32
  %1 = math.powf %d, %d : f64
  %2 = math.exp %h : f16
  %3 = math.sqrt %x : f32
  func.return %0, %1, %2, %3 : f32, f64, f16, f32
}

// -----

// Vectors: the same expansion with splat constants and integer vectors.

// CHECK-LABEL: func.func @exp_vector(%v: vector<8xf32>) -> vector<8xf32> {
// CHECK-NOT:     math.exp
// CHECK:         arith.constant dense<8.900000e+01> : vector<8xf32>
// CHECK:         arith.bitcast {{%.*}} : vector<8xf32> to vector<8xi32>
// CHECK:         arith.shrsi {{%.*}}, {{%.*}} : vector<8xi32>
// CHECK:         func.return
func.func @exp_vector(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %v : vector<8xf32>
  func.return %0 : vector<8xf32>
}

// -----

// Inside a kernel body (where the CPU pipeline runs the pass).

// CHECK-LABEL: kernel.func @softmax_exp
// CHECK-NOT:     math.exp
// CHECK:         math.fma
// CHECK:         kernel.store
kernel.func @softmax_exp outs(%o: memref<64xf32>) ins(%i: memref<64xf32>) space [64] {
  %0 = kernel.load %i <[64] strides [1] offset 0> : memref<64xf32>
  %1 = math.exp %0 : f32
  kernel.store %o <[64] strides [1] offset 0>, %1 : memref<64xf32>
}
