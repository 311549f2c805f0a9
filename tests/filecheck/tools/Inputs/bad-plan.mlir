// A kernel plan with an unknown loop kind.

kernel.func @plan_kind outs(%o: memref<4xf32>) ins(%x: memref<4xf32>) space [4] plan [warp 0] {
  %0 = kernel.load %x <[4] strides [1] offset 0> : memref<4xf32>
  kernel.store %o <[4] strides [1] offset 0>, %0 : memref<4xf32>
}
