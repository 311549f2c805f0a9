// Negative tests for kernel.scan's verifier and for plans that would move a
// scan out of the one serial loop that carries its running value.
// RUN: mlfuse-opt %s --verify-diagnostics --split-input-file | filecheck %s

// CHECK: Operation does not verify: kernel.scan: unknown kind 'sub' (expected one of add, mul, max, min)
kernel.func @kind outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.scan sub %0 dim 1 : f32
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// -----

// CHECK: Operation does not verify: kernel.scan: dim 2 out of range for a rank-2 space
kernel.func @dim outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.scan add %0 dim 2 : f32
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// -----

// CHECK: Operation does not verify: kernel.scan: cannot scan i1 values
kernel.func @bool outs(%o: memref<32xi1>) ins(%x: memref<32xi1>) space [4, 8] plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xi1>
  %1 = kernel.scan max %0 dim 1 : i1
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xi1>
}

// -----

// CHECK: kernel.func @parallel: bad plan [parallel 0, parallel 1]: dim 1 is scanned, so it needs exactly one serial loop (a scan carries its running value from one step to the next), not [parallel 1]
kernel.func @parallel outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 0, parallel 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.scan add %0 dim 1 : f32
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// -----

// CHECK: kernel.func @vector: bad plan [parallel 0, serial 1:2, vector 1:4]: dim 1 is scanned, so it needs exactly one serial loop (a scan carries its running value from one step to the next), not [serial 1:2, vector 1:4]
kernel.func @vector outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 0, serial 1:2, vector 1:4] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.scan add %0 dim 1 : f32
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// -----

// CHECK: kernel.func @thread: bad plan [serial 0, thread 1]: dim 1 is scanned, so it needs exactly one serial loop (a scan carries its running value from one step to the next), not [thread 1]
kernel.func @thread outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [serial 0, thread 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.scan add %0 dim 1 : f32
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// -----

// the scan's loop must be the innermost code loop over its dims: here the loop
// over dim 0 runs inside it, which would need a running value per row
// CHECK: kernel.func @order: bad plan [serial 1, serial 0]: the scan along dim 1 (value 1) must be computed once, in the serial loop over dim 1, inside every other code loop over the dims it varies along
kernel.func @order outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [serial 1, serial 0] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.scan add %0 dim 1 : f32
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}
