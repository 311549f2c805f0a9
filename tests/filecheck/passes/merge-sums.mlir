// RUN: mlfuse-opt %s --split-input-file -p merge-sums | filecheck %s --enable-var-scope

// merge-sums: sums of reductions over the same axes become one reduction of
// the sum; a chain (a convolution's taps) merges into one reduce.

// CHECK-LABEL: kernel.func @chain
// CHECK:         [[P0:%[a-z0-9]+]] = arith.mulf
// CHECK-NEXT:    [[P1:%[a-z0-9]+]] = arith.mulf
// CHECK-NEXT:    [[S01:%[a-z0-9]+]] = arith.addf [[P0]], [[P1]] : f32
// CHECK-NEXT:    [[P2:%[a-z0-9]+]] = arith.mulf
// CHECK-NEXT:    [[S:%[a-z0-9]+]] = arith.addf [[S01]], [[P2]] : f32
// CHECK-NEXT:    [[R:%[a-z0-9]+]] = kernel.reduce add [[S]] [1] : f32
// CHECK-NEXT:    kernel.store %o <[4, 8] strides [1, 0] offset 0>, [[R]]
// CHECK-NOT:     kernel.reduce
kernel.func @chain outs(%o: memref<4xf32>) ins(%x: memref<32xf32>, %w: memref<8xf32>) space [4, 8] {
  %x0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %w0 = kernel.load %w <[4, 8] strides [0, 1] offset 0> : memref<8xf32>
  %p0 = arith.mulf %x0, %w0 : f32
  %r0 = kernel.reduce add %p0 [1] : f32
  %p1 = arith.mulf %x0, %x0 : f32
  %r1 = kernel.reduce add %p1 [1] : f32
  %a = arith.addf %r0, %r1 : f32
  %p2 = arith.mulf %w0, %w0 : f32
  %r2 = kernel.reduce add %p2 [1] : f32
  %b = arith.addf %a, %r2 : f32
  kernel.store %o <[4, 8] strides [1, 0] offset 0>, %b : memref<4xf32>
}

// -----

// What stays: a sum added to a max, a sum used twice.
// CHECK-LABEL: kernel.func @kept
// CHECK:         [[S:%[a-z0-9]+]] = kernel.reduce add %x0 [1] : f32
// CHECK-NEXT:    [[M:%[a-z0-9]+]] = kernel.reduce max %x0 [1] : f32
// CHECK-NEXT:    arith.addf [[S]], [[M]] : f32
// CHECK:         arith.addf [[S]], [[S]] : f32
kernel.func @kept outs(%o: memref<4xf32>, %o2: memref<4xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %x0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %s = kernel.reduce add %x0 [1] : f32
  %m = kernel.reduce max %x0 [1] : f32
  %a = arith.addf %s, %m : f32
  kernel.store %o <[4, 8] strides [1, 0] offset 0>, %a : memref<4xf32>
  %t = arith.addf %s, %s : f32
  kernel.store %o2 <[4, 8] strides [1, 0] offset 0>, %t : memref<4xf32>
}
