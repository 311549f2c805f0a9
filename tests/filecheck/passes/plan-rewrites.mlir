// The generic plan rewrites: plan-vectorize, plan-unroll and plan-interchange
// only change the kernel's plan (the body stays), and refuse rewrites that do
// not fit the kernel, naming it.
//
// RUN: mlfuse-opt %s -p 'plan-vectorize{dim=1 width=16}' | filecheck %s --check-prefix=VEC
// RUN: mlfuse-opt %s -p 'plan-vectorize{dim=1 width=16},plan-unroll{dim=1 factor=2},plan-unroll{dim=0 factor=3}' | filecheck %s --check-prefix=BLOCK
// RUN: mlfuse-opt %s -p 'plan-vectorize{dim=1 width=64},plan-unroll{dim=0 factor=3},plan-interchange{order=1,0,2}' | filecheck %s --check-prefix=SWAP
// RUN: mlfuse-opt %s -p 'plan-vectorize{dim=2 width=8},plan-unroll{dim=2 factor=4}' | filecheck %s --check-prefix=RED
// RUN: not mlfuse-opt %s -p 'plan-vectorize{dim=1 width=48}' 2>&1 | filecheck %s --check-prefix=NODIV
// RUN: not mlfuse-opt %s -p 'plan-vectorize{dim=1 width=16},plan-vectorize{dim=0 width=2}' 2>&1 | filecheck %s --check-prefix=TWOVEC
// RUN: not mlfuse-opt %s -p 'plan-interchange{order=2,0,1}' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not mlfuse-opt %s -p 'plan-interchange{order=0,1}' 2>&1 | filecheck %s --check-prefix=PERM

// A 96x64 matrix product over k=32.

// Vectorizing dim 1 splits its parallel loop: 64 = 4 x 16 lanes.
// VEC:      kernel.func @mm
// VEC-SAME:   plan [parallel 0, parallel 1:4, serial 2, vector 1:16]
// VEC-NEXT:   kernel.load %in0 <[96, 64, 32] strides [32, 0, 1] offset 0>

// Unrolling goes after the other unroll loops, before the vector loop; each
// split takes its iterations off the innermost code loop over the dim.
// BLOCK:      plan [parallel 0:32, parallel 1:2, serial 2, unroll 1:2, unroll 0:3, vector 1:16]

// A vector loop covering the whole dim leaves a one-iteration loop, kept so
// that the parallel loops can still be reordered.
// SWAP:       plan [parallel 1:1, parallel 0:32, serial 2, unroll 0:3, vector 1:64]

// Vector and unroll loops over a reduce axis: the reduction keeps 4 vectors
// of 8 partial sums.
// RED:        plan [parallel 0, parallel 1, serial 2:1, unroll 2:4, vector 2:8]

// NODIV:      plan-vectorize: @mm: cannot split 48 iterations off loop 'parallel 1' (64 iterations)
// TWOVEC:     plan-vectorize: @mm: the plan already has a vector loop
// ORDER:      plan-interchange: @mm: the plan would be [serial 2, parallel 0, parallel 1]: loops must be block/parallel, then serial, then unroll/vector (register), then thread loops
// PERM:       plan-interchange: @mm: order [0, 1] is not a permutation of the code loops [0, 1, 2]
// CHECK-NOT:  Traceback

kernel.func @mm outs(%out0: memref<6144xf32>) ins(%in0: memref<3072xf32>, %in1: memref<4096xf32>) space [96, 64, 32] plan [parallel 0, parallel 1, serial 2] {
  %0 = kernel.load %in0 <[96, 64, 32] strides [32, 0, 1] offset 0> : memref<3072xf32>
  %1 = kernel.load %in1 <[96, 64, 32] strides [0, 1, 64] offset 0> : memref<4096xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out0 <[96, 64, 32] strides [64, 1, 0] offset 0>, %3 : memref<6144xf32>
}
