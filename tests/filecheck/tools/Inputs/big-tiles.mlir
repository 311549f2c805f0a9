// A stage loop whose tiles (16 x 4096 of each operand) do not fit a block's
// shared memory.
kernel.func @mm outs(%out: memref<65536xf32>) ins(%a: memref<1048576xf32>, %b: memref<1048576xf32>) space [256, 256, 4096]
    plan [block 0:16, block 1:16, stage 2:1, serial 2:4096, unroll 0:1, unroll 1:1, thread 0:16, thread 1:16] {
  %0 = kernel.load %a <[256, 256, 4096] strides [4096, 0, 1] offset 0> : memref<1048576xf32>
  %1 = kernel.load %b <[256, 256, 4096] strides [0, 1, 256] offset 0> : memref<1048576xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out <[256, 256, 4096] strides [256, 1, 0] offset 0>, %3 : memref<65536xf32>
}
