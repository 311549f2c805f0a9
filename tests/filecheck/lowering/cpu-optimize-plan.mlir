// RUN: mlfuse-opt %s --split-input-file -p 'cpu-optimize-plan{vector-bytes=64 registers=32}' | filecheck %s --check-prefixes=CHECK,AVX512
// RUN: mlfuse-opt %s --split-input-file -p 'cpu-optimize-plan{vector-bytes=32 registers=16}' | filecheck %s --check-prefixes=CHECK,AVX2

// cpu-optimize-plan, the CPU's cost model, for 64-byte vectors and 32
// registers (AVX-512) and for 32-byte vectors and 16 registers (AVX2).

// A matrix product: N is vectorized (B and C are contiguous along it), the
// register block is MR x NR vectors (6 x 4 of 16 lanes: 24 accumulators,
// 4 rows of B and a broadcast of A fit 32 registers; 6 x 2 of 8 lanes in 16),
// and the blocks of N (B's panels) are the outermost parallel loop.
// CHECK-LABEL:  kernel.func @matmul
// AVX512-SAME:    plan [parallel 1:1, parallel 0:16, serial 2, unroll 1:4, unroll 0:6, vector 1:16]
// AVX2-SAME:      plan [parallel 1:4, parallel 0:16, serial 2, unroll 1:2, unroll 0:6, vector 1:8]
kernel.func @matmul outs(%out0: memref<6144xf32>) ins(%in0: memref<3072xf32>, %in1: memref<4096xf32>) space [96, 64, 32] {
  %0 = kernel.load %in0 <[96, 64, 32] strides [32, 0, 1] offset 0> : memref<3072xf32>
  %1 = kernel.load %in1 <[96, 64, 32] strides [0, 1, 64] offset 0> : memref<4096xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out0 <[96, 64, 32] strides [64, 1, 0] offset 0>, %3 : memref<6144xf32>
}

// -----

// A row sum: no output dim is contiguous, the reduce axis is: vector
// partial sums, 4 pieces of the row so that the adds do not wait on one
// another (one stream from memory).
// CHECK-LABEL:  kernel.func @rowsum
// AVX512-SAME:    plan [parallel 0, serial 1:4, unroll 1:4, vector 1:16]
// AVX2-SAME:      plan [parallel 0, serial 1:8, unroll 1:4, vector 1:8]
kernel.func @rowsum outs(%out: memref<16xf32>) ins(%x: memref<4096xf32>) space [16, 256] {
  %0 = kernel.load %x <[16, 256] strides [256, 1] offset 0> : memref<4096xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[16, 256] strides [1, 0] offset 0>, %1 : memref<16xf32>
}

// -----

// A kernel that walks each row twice (a max, then the store of x - max):
// 4 rows at once, so the second pass finds them in cache.
// CHECK-LABEL:  kernel.func @centered
// AVX512-SAME:    plan [parallel 0:4, serial 1:16, unroll 0:4, vector 1:16]
// AVX2-SAME:      plan [parallel 0:4, serial 1:32, unroll 0:4, vector 1:8]
kernel.func @centered outs(%out: memref<4096xf32>) ins(%x: memref<4096xf32>) space [16, 256] {
  %0 = kernel.load %x <[16, 256] strides [256, 1] offset 0> : memref<4096xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  kernel.store %out <[16, 256] strides [256, 1] offset 0>, %2 : memref<4096xf32>
}

// -----

// Two long rows: 4 pieces of each row.
// CHECK-LABEL:  kernel.func @two_rows
// AVX512-SAME:    plan [parallel 0, serial 1:16, unroll 1:4, vector 1:16]
// AVX2-SAME:      plan [parallel 0, serial 1:32, unroll 1:4, vector 1:8]
kernel.func @two_rows outs(%out: memref<2xf32>) ins(%x: memref<2048xf32>) space [2, 1024] {
  %0 = kernel.load %x <[2, 1024] strides [1024, 1] offset 0> : memref<2048xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[2, 1024] strides [1, 0] offset 0>, %1 : memref<2xf32>
}

// -----

// A column sum walks the rows and keeps a vector of column sums.
// CHECK-LABEL:  kernel.func @colsum
// AVX512-SAME:    plan [parallel 0:4, serial 1, vector 0:16]
// AVX2-SAME:      plan [parallel 0:8, serial 1, vector 0:8]
kernel.func @colsum outs(%out: memref<64xf32>) ins(%x: memref<16384xf32>) space [64, 256] {
  %0 = kernel.load %x <[64, 256] strides [1, 64] offset 0> : memref<16384xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[64, 256] strides [1, 0] offset 0>, %1 : memref<64xf32>
}

// -----

// Elementwise with a broadcast operand: the broadcast is read once per row.
// CHECK-LABEL:  kernel.func @bias
// AVX512-SAME:    plan [parallel 0, parallel 1:2, vector 1:16]
// AVX2-SAME:      plan [parallel 0, parallel 1:4, vector 1:8]
kernel.func @bias outs(%out: memref<256xf32>) ins(%x: memref<256xf32>, %b: memref<8xf32>) space [8, 32] {
  %0 = kernel.load %x <[8, 32] strides [32, 1] offset 0> : memref<256xf32>
  %1 = kernel.load %b <[8, 32] strides [1, 0] offset 0> : memref<8xf32>
  %2 = arith.addf %0, %1 : f32
  kernel.store %out <[8, 32] strides [32, 1] offset 0>, %2 : memref<256xf32>
}

// -----

// A padded read (a conv's halo) is read as vectors too, with masked loads.
// CHECK-LABEL:  kernel.func @padded
// AVX512-SAME:    plan [parallel 0:4, vector 0:16]
// AVX2-SAME:      plan [parallel 0:8, vector 0:8]
kernel.func @padded outs(%out: memref<64xf32>) ins(%x: memref<62xf32>) space [64] {
  %0 = kernel.load %x <[64] strides [1] offset -1 mask [[1, 63]]> : memref<62xf32>
  kernel.store %out <[64] strides [1] offset 0>, %0 : memref<64xf32>
}

// -----

// A transposed read: no dim is contiguous for every view, so W x W tiles,
// vectors along the output's rows, unrolled W times down its columns (the
// lowering reads x's tile as rows and transposes it in registers).
// CHECK-LABEL:  kernel.func @transposed
// AVX512-SAME:    plan [parallel 0:2, parallel 1:2, unroll 0:16, vector 1:16]
// AVX2-SAME:      plan [parallel 0:4, parallel 1:4, unroll 0:8, vector 1:8]
kernel.func @transposed outs(%out: memref<1024xf32>) ins(%x: memref<1024xf32>, %y: memref<1024xf32>) space [32, 32] {
  %0 = kernel.load %x <[32, 32] strides [1, 32] offset 0> : memref<1024xf32>
  %1 = kernel.load %y <[32, 32] strides [32, 1] offset 0> : memref<1024xf32>
  %2 = arith.addf %0, %1 : f32
  kernel.store %out <[32, 32] strides [32, 1] offset 0>, %2 : memref<1024xf32>
}

// -----

// Plans the pass leaves alone: i1 buffers (LLVM
// packs vectors of i1 into bits), an op with no vector form in xDSL
// (arith.fptosi), a width that divides no dim, and a plan with register
// loops already (written by hand).
// CHECK-LABEL:  kernel.func @bools
// CHECK-SAME:     plan [parallel 0] {
// CHECK-LABEL:  kernel.func @trunc
// CHECK-SAME:     plan [parallel 0] {
// CHECK-LABEL:  kernel.func @odd
// CHECK-SAME:     plan [parallel 0] {
// CHECK-LABEL:  kernel.func @by_hand
// CHECK-SAME:     plan [parallel 0:8, unroll 0:4] {
kernel.func @bools outs(%out: memref<64xi1>) ins(%x: memref<64xf32>) space [64] {
  %0 = kernel.load %x <[64] strides [1] offset 0> : memref<64xf32>
  %1 = arith.constant 0.000000e+00 : f32
  %2 = arith.cmpf ogt, %0, %1 : f32
  kernel.store %out <[64] strides [1] offset 0>, %2 : memref<64xi1>
}
kernel.func @trunc outs(%out: memref<64xi32>) ins(%x: memref<64xf32>) space [64] {
  %0 = kernel.load %x <[64] strides [1] offset 0> : memref<64xf32>
  %1 = arith.fptosi %0 : f32 to i32
  kernel.store %out <[64] strides [1] offset 0>, %1 : memref<64xi32>
}
kernel.func @odd outs(%out: memref<30xf32>) ins(%x: memref<30xf32>) space [30] {
  %0 = kernel.load %x <[30] strides [1] offset 0> : memref<30xf32>
  kernel.store %out <[30] strides [1] offset 0>, %0 : memref<30xf32>
}
kernel.func @by_hand outs(%out: memref<32xf32>) ins(%x: memref<32xf32>) space [32] plan [parallel 0:8, unroll 0:4] {
  %0 = kernel.load %x <[32] strides [1] offset 0> : memref<32xf32>
  kernel.store %out <[32] strides [1] offset 0>, %0 : memref<32xf32>
}

// -----

// A product whose left factor is computed inside the reduction (attention's
// softmax @ v: an exp per point of A): a register block computes it once per
// panel of B it walks. With 16 registers the block is one row of A under the
// widest panel that fits (here all of N: the exp is computed once); the
// AVX-512 block (4 vectors of 16) already covers N.
// CHECK-LABEL:  kernel.func @exp_times_v
// AVX512-SAME:    plan [parallel 1:1, parallel 0:4, serial 2, unroll 1:4, unroll 0:4, vector 1:16]
// AVX2-SAME:      plan [parallel 1:1, parallel 0, serial 2, unroll 1:8, vector 1:8]
kernel.func @exp_times_v outs(%out: memref<1024xf32>) ins(%x: memref<512xf32>, %v: memref<2048xf32>) space [16, 64, 32] {
  %0 = kernel.load %x <[16, 64, 32] strides [32, 0, 1] offset 0> : memref<512xf32>
  %1 = math.exp %0 : f32
  %2 = kernel.load %v <[16, 64, 32] strides [0, 1, 64] offset 0> : memref<2048xf32>
  %3 = arith.mulf %1, %2 : f32
  %4 = kernel.reduce add %3 [2] : f32
  kernel.store %out <[16, 64, 32] strides [64, 1, 0] offset 0>, %4 : memref<1024xf32>
}

// -----

// A cheap left factor (a bias added inside the reduction) keeps the MR x NR block.
// CHECK-LABEL:  kernel.func @shifted_product
// AVX512-SAME:    plan [parallel 1:1, parallel 0:4, serial 2, unroll 1:4, unroll 0:4, vector 1:16]
// AVX2-SAME:      plan [parallel 1:4, parallel 0:4, serial 2, unroll 1:2, unroll 0:4, vector 1:8]
kernel.func @shifted_product outs(%out: memref<1024xf32>) ins(%x: memref<512xf32>, %v: memref<2048xf32>) space [16, 64, 32] {
  %0 = kernel.load %x <[16, 64, 32] strides [32, 0, 1] offset 0> : memref<512xf32>
  %1 = arith.constant 1.0 : f32
  %2 = arith.addf %0, %1 : f32
  %3 = kernel.load %v <[16, 64, 32] strides [0, 1, 64] offset 0> : memref<2048xf32>
  %4 = arith.mulf %2, %3 : f32
  %5 = kernel.reduce add %4 [2] : f32
  kernel.store %out <[16, 64, 32] strides [64, 1, 0] offset 0>, %5 : memref<1024xf32>
}

// -----

// A convolution read as one reduction over (channels, taps) of a padded copy's
// windows: rows of 56 take vectors along the output width; the register block
// is output channels (broadcasts of weights) x rows of the image.
// CHECK-LABEL:  kernel.func @conv_windows
// AVX512-SAME:    plan [parallel 0, parallel 2:14, parallel 3:7, parallel 1:16, serial 4, serial 5, serial 6, unroll 2:4, unroll 1:4, vector 3:8]
// AVX2-SAME:      plan [parallel 0, parallel 2:28, parallel 3:7, parallel 1:16, serial 4, serial 5, serial 6, unroll 2:2, unroll 1:4, vector 3:8]
kernel.func @conv_windows outs(%out0: memref<1605632xf32>) ins(%in0: memref<1722368xf32>, %in1: memref<36864xf32>) space [8, 64, 56, 56, 64, 3, 3] {
  %0 = kernel.load %in0 <[8, 64, 56, 56, 64, 3, 3] strides [215296, 0, 58, 1, 3364, 58, 1] offset 0> : memref<1722368xf32>
  %1 = kernel.load %in1 <[8, 64, 56, 56, 64, 3, 3] strides [0, 576, 0, 0, 9, 3, 1] offset 0> : memref<36864xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [4, 5, 6] : f32
  kernel.store %out0 <[8, 64, 56, 56, 64, 3, 3] strides [200704, 3136, 56, 1, 0, 0, 0] offset 0>, %3 : memref<1605632xf32>
}

// -----

// Rows of 14 are too short for vectors: a contraction whose (packed) weights are
// contiguous along the output channels vectorizes along them, and stores its
// results lane by lane (once each, after the whole reduction).
// CHECK-LABEL:  kernel.func @conv_short_rows
// AVX512-SAME:    plan [parallel 1:1, parallel 0, parallel 2, parallel 3:7, serial 4, serial 5, serial 6, unroll 1:2, unroll 3:2, vector 1:16]
// AVX2-SAME:      plan [parallel 1:1, parallel 0, parallel 2, parallel 3:7, serial 4, serial 5, serial 6, unroll 1:4, unroll 3:2, vector 1:8]
kernel.func @conv_short_rows outs(%out0: memref<18816xf32>) ins(%in0: memref<24576xf32>, %in1: memref<9216xf32>) space [3, 32, 14, 14, 32, 3, 3] {
  %0 = kernel.load %in0 <[3, 32, 14, 14, 32, 3, 3] strides [8192, 0, 16, 1, 256, 16, 1] offset 0> : memref<24576xf32>
  %1 = kernel.load %in1 <[3, 32, 14, 14, 32, 3, 3] strides [0, 1, 0, 0, 288, 96, 32] offset 0> : memref<9216xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [4, 5, 6] : f32
  kernel.store %out0 <[3, 32, 14, 14, 32, 3, 3] strides [6272, 196, 14, 1, 0, 0, 0] offset 0>, %3 : memref<18816xf32>
}
