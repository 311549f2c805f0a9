// RUN: mlfuse-opt %s -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory,legalize-float-types,expand-math,merge-sums,cpu-optimize-plan,convert-kernel-to-loops,expand-large-sincos,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm,cpu-entry-points' -t llvm | filecheck %s
// RUN: mlfuse-opt %s -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels' | filecheck %s --check-prefix=KERNEL

// float16, bfloat16 and uint8 lazy programs through the whole CPU pipeline
// to LLVM IR.

// f16: half loads widened to float vectors, the product rounded to half and
// widened again, the sum accumulated in float, rounded once when stored.
// CHECK-LABEL: define internal void @"k0.body"
// CHECK:         [[A:%.*]] = load <8 x half>
// CHECK-NEXT:    fpext <8 x half> [[A]] to <8 x float>
// CHECK:         [[P:%.*]] = fmul <8 x float>
// CHECK-NEXT:    [[P16:%.*]] = fptrunc <8 x float> [[P]] to <8 x half>
// CHECK-NEXT:    fpext <8 x half> [[P16]] to <8 x float>
// CHECK:         [[S:%.*]] = fptrunc float {{%.*}} to half
// CHECK:         store half [[S]]

// bf16: i16 in LLVM (no bfloat anywhere): loaded bits shifted into a float,
// rounded back with integer ops, stored as i16.
// CHECK-LABEL: define internal void @"k1.body"
// CHECK-NOT:     bfloat
// CHECK:         [[X:%.*]] = load i16
// CHECK-NEXT:    [[XW:%.*]] = zext i16 [[X]] to i32
// CHECK-NEXT:    [[XS:%.*]] = shl i32 [[XW]], 16
// CHECK-NEXT:    bitcast i32 [[XS]] to float
// CHECK:         fadd float
// CHECK:         add i32 {{%.*}}, 32767
// CHECK:         sub i32 2139095040
// CHECK:         trunc i32 {{%.*}} to i16
// CHECK:         store i16
// CHECK-NOT:     bfloat

// ui8: i8 in LLVM with unsigned ops: udiv, lshr guarded against amounts of
// 8 or more (icmp uge), the unsigned max as a signed one of the values ^ 0x80
// (identity -128, i.e. 0 unsigned), and zext before sitofp for the cast.
// CHECK-LABEL: define internal void @"k2.body"
// CHECK:         phi i8 [-128
// CHECK:         [[BIG:%.*]] = icmp uge i8 [[B:%.*]], 8
// CHECK:         udiv i8
// CHECK:         [[AMOUNT:%.*]] = select i1 [[BIG]], i8 0, i8 [[B]]
// CHECK-NEXT:    [[SH:%.*]] = lshr i8 {{%.*}}, [[AMOUNT]]
// CHECK-NEXT:    [[OUT:%.*]] = select i1 [[BIG]], i8 0, i8 [[SH]]
// CHECK-NEXT:    [[FLIP:%.*]] = xor i8 [[OUT]], -128
// CHECK-NEXT:    call i8 @"llvm.smax.i8"(i8 {{%.*}}, i8 [[FLIP]])
// CHECK:         xor i8 {{%.*}}, -128
// CHECK:         store i8
// CHECK-LABEL: define internal void @"k3.body"
// CHECK:         [[U:%.*]] = load i8
// CHECK-NEXT:    [[W:%.*]] = zext i8 [[U]] to i32
// CHECK-NEXT:    sitofp i32 [[W]] to float

// The kernels keep their dtypes on buffers (the schedule and the runtime read
// them there), compute in signless types with the signedness on the ops.
// KERNEL-LABEL: kernel.func @k2 outs(%out0: memref<4xui8>) ins(%a: memref<32xui8>, %b: memref<32xui8>)
// KERNEL:         [[B:%.*]] = kernel.load %b <[4, 8] strides [8, 1] offset 0> : memref<32xui8>
// KERNEL:         arith.divui {{%.*}}, {{%.*}} : i8
// KERNEL:         arith.cmpi uge, [[B]], {{%.*}} : i8
// KERNEL:         arith.shrui
// KERNEL:         [[FLIP:%.*]] = arith.constant -128 : i8
// KERNEL-NEXT:    [[X:%.*]] = arith.xori {{%.*}}, [[FLIP]] : i8
// KERNEL-NEXT:    [[M:%.*]] = kernel.reduce max [[X]] [1] : i8
// KERNEL-NEXT:    [[R:%.*]] = arith.xori [[M]], [[FLIP]] : i8
// KERNEL-NEXT:    kernel.store %out0 <[4, 8] strides [1, 0] offset 0>, [[R]] : memref<4xui8>
// KERNEL-LABEL: kernel.func @k3
// KERNEL:         arith.extui {{%.*}} : i8 to i32
// KERNEL-NEXT:    arith.sitofp {{%.*}} : i32 to f32
// KERNEL-LABEL: func.func @ui8(%a: memref<32xui8>, %b: memref<32xui8>) -> (memref<4xui8>, memref<32xf32>)

func.func @f16(%a: tensor<4x8xf16>, %b: tensor<4x8xf16>) -> tensor<4x1xf16> {
  %s = lazy.mul %a, %b : tensor<4x8xf16>
  %r = lazy.reduce add %s [1] : tensor<4x8xf16> -> tensor<4x1xf16>
  func.return %r : tensor<4x1xf16>
}
func.func @bf16(%a: tensor<16xbf16>, %b: tensor<16xbf16>) -> tensor<16xbf16> {
  %c = lazy.const 1.5 : tensor<16xbf16>
  %s = lazy.add %a, %c : tensor<16xbf16>
  %e = lazy.exp %s : tensor<16xbf16>
  %m = lazy.cmplt %e, %b : tensor<16xbf16>
  %w = lazy.where %m, %e, %b : tensor<16xbf16>
  func.return %w : tensor<16xbf16>
}
func.func @ui8(%a: tensor<4x8xui8>, %b: tensor<4x8xui8>) -> (tensor<4x1xui8>, tensor<4x8xf32>) {
  %q = lazy.idiv %a, %b : tensor<4x8xui8>
  %s = lazy.shr %q, %b : tensor<4x8xui8>
  %r = lazy.reduce max %s [1] : tensor<4x8xui8> -> tensor<4x1xui8>
  %f = lazy.cast %a : tensor<4x8xui8> to tensor<4x8xf32>
  func.return %r, %f : tensor<4x1xui8>, tensor<4x8xf32>
}
