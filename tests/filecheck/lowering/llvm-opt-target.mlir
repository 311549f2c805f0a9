// RUN: mlfuse-opt %s --split-input-file -p convert-kernel-to-loops,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm,cpu-entry-points -t llvm-opt | filecheck %s

// The `-t llvm-opt` target: the LLVM IR after LLVM's O3 for the host CPU.
// The GEP addressing and noalias buffers must let the loop vectorizer work,
// in the kernel body behind the entry point that takes the array of buffer
// pointers (cpu-entry-points): the body is not inlined, so it keeps its
// noalias arguments and needs no runtime alias checks.
// The vector width depends on the host (8 with AVX2, 16 with AVX-512, 4 with
// SSE or NEON), so it is matched, not fixed.

// A contiguous elementwise kernel: the inner loop loads, computes and stores
// whole vectors, addressed without integer casts.

// CHECK-LABEL: define internal {{.*}}void @axpy.body(
// CHECK-SAME:    ptr noalias
// CHECK-NOT:     {{ptrtoint|inttoptr}}
// CHECK-DAG:     = load <{{[0-9]+}} x float>, ptr
// CHECK-DAG:     = fmul <{{[0-9]+}} x float> {{.*}}2.000000e+00
// CHECK-DAG:     = fadd <{{[0-9]+}} x float>
// CHECK:         store <{{[0-9]+}} x float> {{%[^ ]+}}, ptr
// CHECK-NOT:     {{ptrtoint|inttoptr}}
// CHECK:         ret void
// CHECK-LABEL: define void @axpy(ptr
// CHECK:         [[B0:%.*]] = load ptr, ptr
// CHECK:         [[B1:%.*]] = load ptr, ptr
// CHECK:         [[B2:%.*]] = load ptr, ptr
// CHECK-NEXT:    call {{.*}}void @axpy.body(ptr [[B0]], ptr [[B1]], ptr [[B2]], i64
// CHECK-NEXT:    ret void
kernel.func @axpy outs(%out: memref<4096xf32>) ins(%a: memref<4096xf32>, %b: memref<4096xf32>) space [64, 64] {
  %0 = kernel.load %a <[64, 64] strides [64, 1] offset 0> : memref<4096xf32>
  %1 = kernel.load %b <[64, 64] strides [64, 1] offset 0> : memref<4096xf32>
  %c = arith.constant 2.000000e+00 : f32
  %2 = arith.mulf %0, %c : f32
  %3 = arith.addf %2, %1 : f32
  kernel.store %out <[64, 64] strides [64, 1] offset 0>, %3 : memref<4096xf32>
}

// -----

// A row sum: the reassoc flag lets LLVM vectorize the reduction loop.

// CHECK-LABEL: define internal {{.*}}void @rowsum.body(
// CHECK:         = load <{{[0-9]+}} x float>, ptr
// CHECK:         = fadd {{.*}}<{{[0-9]+}} x float>
// CHECK:         ret void
kernel.func @rowsum outs(%out: memref<16xf32>) ins(%x: memref<4096xf32>) space [16, 256] {
  %0 = kernel.load %x <[16, 256] strides [256, 1] offset 0> : memref<4096xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[16, 256] strides [1, 0] offset 0>, %1 : memref<16xf32>
}

// -----

// Softmax over rows of 256 from the front end: the three row loops (max, sum
// of exp, exp/div/store) all vectorize in the body behind the entry point.

// CHECK-LABEL: define internal {{.*}}void @softmax.body(
// CHECK-SAME:    ptr noalias
// CHECK:         call <{{[0-9]+}} x float> @llvm.maximum.v{{[0-9]+}}f32(
// CHECK:         call float @llvm.vector.reduce.fmaximum.v{{[0-9]+}}f32(
// CHECK:         fadd {{.*}}<{{[0-9]+}} x float>
// CHECK:         fdiv <{{[0-9]+}} x float>
// CHECK:         store <{{[0-9]+}} x float>
// CHECK-LABEL: define void @softmax(ptr
kernel.func @softmax outs(%0: memref<4096xf32>) ins(%1: memref<4096xf32>) space [16, 256] attributes {origin = ["softmax"], ops = ["reduce", "sub", "exp", "reduce", "div"], reasons = ["output"]} {
  %2 = kernel.load %1 <[16, 256] strides [256, 1] offset 0> : memref<4096xf32>
  %3 = kernel.reduce max %2 [1] : f32
  %4 = arith.subf %2, %3 : f32
  %5 = math.exp %4 : f32
  %6 = kernel.reduce add %5 [1] : f32
  %7 = arith.divf %5, %6 : f32
  kernel.store %0 <[16, 256] strides [256, 1] offset 0>, %7 : memref<4096xf32>
}
