// Negative tests for kernel.gather's verifier.
// RUN: mlfuse-opt %s --verify-diagnostics --split-input-file | filecheck %s

// CHECK: Operation does not verify: kernel.gather: view and stride 4 x size 11 reach offsets [0, 43] outside the buffer of 40 elements
kernel.func @beyond outs(%o: memref<12xf32>) ins(%x: memref<40xf32>, %i: memref<3xi64>) space [3, 4] {
  %0 = kernel.load %i <[3, 4] strides [1, 0] offset 0> : memref<3xi64>
  %1 = kernel.gather %x <[3, 4] strides [0, 1] offset 0>, %0 stride 4 size 11 : memref<40xf32>, i64
  kernel.store %o <[3, 4] strides [4, 1] offset 0>, %1 : memref<12xf32>
}

// -----

// CHECK: Operation does not verify: kernel.gather: view and stride -1 x size 8 reach offsets [-1, 6] outside the buffer of 8 elements
kernel.func @below outs(%o: memref<5xf32>) ins(%x: memref<8xf32>, %i: memref<5xi64>) space [5] {
  %0 = kernel.load %i <[5] strides [1] offset 0> : memref<5xi64>
  %1 = kernel.gather %x <[5] strides [0] offset 6>, %0 stride -1 size 8 : memref<8xf32>, i64
  kernel.store %o <[5] strides [1] offset 0>, %1 : memref<5xf32>
}

// -----

// CHECK: Operation does not verify: kernel.gather: the view must be unmasked
kernel.func @masked outs(%o: memref<5xf32>) ins(%x: memref<8xf32>, %i: memref<5xi64>) space [5] {
  %0 = kernel.load %i <[5] strides [1] offset 0> : memref<5xi64>
  %1 = kernel.gather %x <[5] strides [0] offset 0 mask [[0, 3]]>, %0 stride 1 size 8 : memref<8xf32>, i64
  kernel.store %o <[5] strides [1] offset 0>, %1 : memref<5xf32>
}

// -----

// CHECK: Operation does not verify: kernel.gather: the index must be an integer, got i1
kernel.func @bool_index outs(%o: memref<5xf32>) ins(%x: memref<8xf32>, %i: memref<5xi1>) space [5] {
  %0 = kernel.load %i <[5] strides [1] offset 0> : memref<5xi1>
  %1 = kernel.gather %x <[5] strides [0] offset 0>, %0 stride 1 size 8 : memref<8xf32>, i1
  kernel.store %o <[5] strides [1] offset 0>, %1 : memref<5xf32>
}

// -----

// CHECK: Operation does not verify: kernel.gather: view shape [4] differs from the kernel space [5]
kernel.func @shape outs(%o: memref<5xf32>) ins(%x: memref<8xf32>, %i: memref<5xi64>) space [5] {
  %0 = kernel.load %i <[5] strides [1] offset 0> : memref<5xi64>
  %1 = kernel.gather %x <[4] strides [0] offset 0>, %0 stride 1 size 8 : memref<8xf32>, i64
  kernel.store %o <[5] strides [1] offset 0>, %1 : memref<5xf32>
}

// -----

// CHECK: Operation does not verify: kernel.gather: result type f64 differs from the buffer's element type f32
kernel.func @result outs(%o: memref<5xf64>) ins(%x: memref<8xf32>, %i: memref<5xi64>) space [5] {
  %0 = kernel.load %i <[5] strides [1] offset 0> : memref<5xi64>
  %1 = "kernel.gather"(%x, %0) <{view = #lazy.view<[5] strides [0] offset 0>, stride = 1 : i64, size = 8 : i64}> : (memref<8xf32>, i64) -> f64
  kernel.store %o <[5] strides [1] offset 0>, %1 : memref<5xf64>
}
