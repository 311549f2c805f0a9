// RUN: mlfuse-opt %s --split-input-file -p expand-math,convert-kernel-to-loops,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm,cpu-entry-points -t llvm-opt | filecheck %s

// After expand-math, exp and log over a large array vectorize: the kernel
// body computes whole vectors (8 floats with AVX2, 16 with AVX-512, 4 with
// SSE or NEON: the width is matched, not fixed) with no call to libm's expf
// or logf and no scalarized llvm.exp/llvm.log intrinsic left.

// CHECK-LABEL: define internal {{.*}}void @exp.body(
// CHECK-NOT:     {{@expf|@llvm.exp}}
// CHECK:         = load <[[W:[0-9]+]] x float>, ptr
// CHECK-NOT:     {{@expf|@llvm.exp}}
// CHECK:         call <[[W]] x float> @llvm.fma.v[[W]]f32(
// CHECK-NOT:     {{@expf|@llvm.exp}}
// CHECK:         bitcast <[[W]] x i32> {{%.*}} to <[[W]] x float>
// CHECK-NOT:     {{@expf|@llvm.exp}}
// CHECK:         fmul <[[W]] x float>
// CHECK-NOT:     {{@expf|@llvm.exp}}
// CHECK:         store <[[W]] x float> {{%[^ ]+}}, ptr
// CHECK-NOT:     {{@expf|@llvm.exp}}
// CHECK:         ret void
// CHECK-LABEL: define void @exp(ptr
kernel.func @exp outs(%out: memref<16777216xf32>) ins(%a: memref<16777216xf32>) space [16777216] {
  %0 = kernel.load %a <[16777216] strides [1] offset 0> : memref<16777216xf32>
  %1 = math.exp %0 : f32
  kernel.store %out <[16777216] strides [1] offset 0>, %1 : memref<16777216xf32>
}

// -----

// CHECK-LABEL: define internal {{.*}}void @log.body(
// CHECK-NOT:     {{@logf|@llvm.log}}
// CHECK:         fdiv <[[W:[0-9]+]] x float>
// CHECK-NOT:     {{@logf|@llvm.log}}
// CHECK:         store <[[W]] x float> {{%[^ ]+}}, ptr
// CHECK-NOT:     {{@logf|@llvm.log}}
// CHECK:         ret void
kernel.func @log outs(%out: memref<65536xf32>) ins(%a: memref<65536xf32>) space [65536] {
  %0 = kernel.load %a <[65536] strides [1] offset 0> : memref<65536xf32>
  %1 = math.log %0 : f32
  kernel.store %out <[65536] strides [1] offset 0>, %1 : memref<65536xf32>
}
