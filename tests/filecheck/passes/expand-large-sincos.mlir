// RUN: mlfuse-opt %s --split-input-file -p expand-large-sincos | filecheck %s
// RUN: mlfuse-opt %s --split-input-file | filecheck %s --check-prefix=ROUNDTRIP

// expand-large-sincos: kernel.sincos_large (sin/cos where |x| >= 2^50) becomes
// Payne-Hanek's reduction behind an scf.if taken only when some lane needs it.

// ROUNDTRIP-LABEL: func.func @scalar
// ROUNDTRIP:         kernel.sincos_large sin %x : f64
// ROUNDTRIP:         kernel.sincos_large cos narrow %x : f64

// A scalar: the branch tests |x|'s bits against 2^50's; the f64 reduction
// finds the exponent's bucket b = max(k >> 7, 0), scales x by 2^(-128b) and
// picks 2^(128b)·2/π mod 4 (five doubles) by b's bits; the products with x
// are exact pairs (fma) reduced mod 4, summed as a double-double.
// CHECK-LABEL: func.func @scalar(%x: f64) -> (f64, f64) {
// CHECK:         [[LIM:%.*]] = arith.constant 4832362400168542207 : i64
// CHECK:         [[M:%.*]] = arith.shrsi {{%.*}}, {{%.*}} : i64
// CHECK:         [[ANY:%.*]] = arith.cmpi ne, [[M]], {{%.*}} : i64
// CHECK-NEXT:    [[S:%.*]] = scf.if [[ANY]] -> (f64) {
// CHECK:           arith.maxsi {{%.*}}, {{%.*}} : i64
// CHECK:           [[XS:%.*]] = arith.mulf %x, {{%.*}} : f64
// CHECK:           math.fma [[XS]], {{%.*}}, {{%.*}} : f64
// CHECK:           math.floor
// CHECK:           scf.yield {{%.*}} : f64
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %x : f64
// CHECK-NEXT:    }
// A narrow (f32-valued) argument: no buckets, x itself times four parts.
// CHECK:         [[C:%.*]] = scf.if {{%.*}} -> (f64) {
// CHECK-NOT:       arith.maxsi
// CHECK:           math.fma %x, {{%.*}}, {{%.*}} : f64
// CHECK:           scf.yield
// CHECK:         func.return [[S]], [[C]] : f64, f64
func.func @scalar(%x: f64) -> (f64, f64) {
  %0 = kernel.sincos_large sin %x : f64
  %1 = kernel.sincos_large cos narrow %x : f64
  func.return %0, %1 : f64, f64
}

// -----

// A vector (a vectorized loop): the lanes' masks are ORed into one branch
// condition; the reduction runs on the whole vector (it has no compares).
// CHECK-LABEL: func.func @vector(%x: vector<4xf64>) -> vector<4xf64> {
// CHECK:         [[M:%.*]] = arith.shrsi {{%.*}}, {{%.*}} : vector<4xi64>
// CHECK:         [[L0:%.*]] = vector.extract [[M]][0] : i64 from vector<4xi64>
// CHECK:         [[L1:%.*]] = vector.extract [[M]][1] : i64 from vector<4xi64>
// CHECK:         [[L2:%.*]] = vector.extract [[M]][2] : i64 from vector<4xi64>
// CHECK:         [[L3:%.*]] = vector.extract [[M]][3] : i64 from vector<4xi64>
// CHECK:         [[O1:%.*]] = arith.ori [[L0]], [[L1]] : i64
// CHECK:         [[O2:%.*]] = arith.ori [[O1]], [[L2]] : i64
// CHECK:         [[O3:%.*]] = arith.ori [[O2]], [[L3]] : i64
// CHECK:         [[ANY:%.*]] = arith.cmpi ne, [[O3]], {{%.*}} : i64
// CHECK-NEXT:    [[Y:%.*]] = scf.if [[ANY]] -> (vector<4xf64>) {
// CHECK:           math.fma {{.*}} : vector<4xf64>
// CHECK:           scf.yield {{%.*}} : vector<4xf64>
// CHECK:         func.return [[Y]] : vector<4xf64>
func.func @vector(%x: vector<4xf64>) -> vector<4xf64> {
  %0 = kernel.sincos_large sin narrow %x : vector<4xf64>
  func.return %0 : vector<4xf64>
}
