// RUN: mlfuse-opt %s -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels' | filecheck %s
// RUN: mlfuse-opt %s -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory,legalize-float-types,expand-math,merge-sums,cpu-optimize-plan,convert-kernel-to-loops,expand-large-sincos,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm,cpu-entry-points' -t llvm | filecheck %s --check-prefix=LLVM

// uint16/uint32/uint64 conversions without uitofp/fptoui (xDSL's llvm dialect
// has neither): ui32 widens before sitofp; ui64 converts half the value with
// its lowest bit kept (sticky) and doubles it where the top bit is set.
// CHECK-LABEL: kernel.func @k0
// CHECK:         [[X:%.*]] = kernel.load %a {{.*}} : memref<8xui64>
// CHECK:         [[ONE:%.*]] = arith.constant 1 : i64
// CHECK-NEXT:    [[SH:%.*]] = arith.shrui [[X]], [[ONE]] : i64
// CHECK-NEXT:    [[LOW:%.*]] = arith.andi [[X]], [[ONE]] : i64
// CHECK-NEXT:    [[HALF:%.*]] = arith.ori [[SH]], [[LOW]] : i64
// CHECK-NEXT:    [[SMALL:%.*]] = arith.sitofp [[X]] : i64 to f64
// CHECK-NEXT:    [[BIG:%.*]] = arith.sitofp [[HALF]] : i64 to f64
// CHECK-NEXT:    [[TWICE:%.*]] = arith.addf [[BIG]], [[BIG]] : f64
// CHECK-NEXT:    [[ZERO:%.*]] = arith.constant 0 : i64
// CHECK-NEXT:    [[TOP:%.*]] = arith.cmpi slt, [[X]], [[ZERO]] : i64
// CHECK-NEXT:    arith.select [[TOP]], [[TWICE]], [[SMALL]] : f64
// CHECK-LABEL: kernel.func @k1
// CHECK:         arith.extui {{%.*}} : i32 to i64
// CHECK-NEXT:    arith.sitofp {{%.*}} : i64 to f32

// float -> uint64: from 2**63 up, fptosi of x - 2**63 with the top bit set
// again; float -> uint32 through int64, wrapping.
// CHECK-LABEL: kernel.func @k2
// CHECK:         [[F:%.*]] = kernel.load %c {{.*}} : memref<8xf32>
// CHECK:         [[T:%.*]] = arith.constant 9.22337204e+18 : f32
// CHECK-NEXT:    [[GE:%.*]] = arith.cmpf oge, [[F]], [[T]] : f32
// CHECK-NEXT:    [[SUB:%.*]] = arith.subf [[F]], [[T]] : f32
// CHECK-NEXT:    [[V:%.*]] = arith.select [[GE]], [[SUB]], [[F]] : f32
// CHECK-NEXT:    [[I:%.*]] = arith.fptosi [[V]] : f32 to i64
// CHECK-NEXT:    [[M:%.*]] = arith.constant -9223372036854775808 : i64
// CHECK-NEXT:    [[FL:%.*]] = arith.xori [[I]], [[M]] : i64
// CHECK-NEXT:    arith.select [[GE]], [[FL]], [[I]] : i64
// CHECK:         [[W:%.*]] = arith.fptosi {{%.*}} : f32 to i64
// CHECK-NEXT:    arith.trunci [[W]] : i64 to i32
// CHECK:         kernel.store %out1 {{.*}} : memref<8xui32>

// Below the kernel dialect the conversions are LLVM's signed ones, saturating.
// LLVM-LABEL: define internal void @"k0.body"
// LLVM:         lshr i64
// LLVM:         sitofp i64 {{%.*}} to double
// LLVM:         icmp slt i64
// LLVM-LABEL: define internal void @"k2.body"
// LLVM:         call i64 @"llvm.fptosi.sat.i64.f32"
// LLVM:         xor i64 {{%.*}}, -9223372036854775808
// LLVM:         trunc i64 {{%.*}} to i32
// LLVM-NOT:     uitofp
// LLVM-NOT:     fptoui

func.func @to_float(%a: tensor<8xui64>) -> tensor<8xf64> {
  %r = lazy.cast %a : tensor<8xui64> to tensor<8xf64>
  func.return %r : tensor<8xf64>
}
func.func @narrow(%b: tensor<8xui32>) -> tensor<8xf32> {
  %r = lazy.cast %b : tensor<8xui32> to tensor<8xf32>
  func.return %r : tensor<8xf32>
}
func.func @from_float(%c: tensor<8xf32>) -> (tensor<8xui64>, tensor<8xui32>) {
  %u = lazy.cast %c : tensor<8xf32> to tensor<8xui64>
  %v = lazy.cast %c : tensor<8xf32> to tensor<8xui32>
  func.return %u, %v : tensor<8xui64>, tensor<8xui32>
}
