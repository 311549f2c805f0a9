// RUN: mlfuse-opt %s -p gpu-map-plan | filecheck %s --check-prefix=PLAN
// RUN: mlfuse-opt %s -p 'expand-math,merge-sums,gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t ptx | filecheck %s --check-prefix=PTX

// A large elementwise kernel (2^26 elements: 2^24 vectors of 4) gives each
// thread two 16-byte vectors, a warp-row (256 x 4 elements, 4096 bytes) apart:
// both loads are issued before either value is used, and a block's 256 threads
// cover 2048 consecutive elements.
// PLAN:       kernel.func @big
// PLAN-SAME:    plan [block 0, block 1:4, unroll 1:2, thread 1:256, unroll 1:4]
// PTX:        .visible .entry big(
// PTX:        .maxntid 256
// PTX:        ld.global.nc.v4.b32 {{.*}}, [%rd[[A:[0-9]+]]];
// PTX-NEXT:   ld.global.nc.v4.b32 {{.*}}, [%rd[[A]]+4096];
// PTX:        st.global.v4.b32 [%rd[[B:[0-9]+]]],
// PTX-NEXT:   st.global.v4.b32 [%rd[[B]]+4096],
kernel.func @big outs(%out: memref<67108864xf32>) ins(%x: memref<67108864xf32>) space [8192, 8192]
    plan [parallel 0, parallel 1] {
  %0 = kernel.load %x <[8192, 8192] strides [8192, 1] offset 0> : memref<67108864xf32>
  %1 = arith.constant 2.0 : f32
  %2 = arith.mulf %0, %1 : f32
  kernel.store %out <[8192, 8192] strides [8192, 1] offset 0>, %2 : memref<67108864xf32>
}

// Below a million vectors a thread keeps one (more threads fill the GPU).
// PLAN:       kernel.func @small
// PLAN-SAME:    plan [block 0, block 1:2, thread 1:256, unroll 1:4]
kernel.func @small outs(%out: memref<2097152xf32>) ins(%x: memref<2097152xf32>) space [1024, 2048]
    plan [parallel 0, parallel 1] {
  %0 = kernel.load %x <[1024, 2048] strides [2048, 1] offset 0> : memref<2097152xf32>
  %1 = arith.constant 2.0 : f32
  %2 = arith.mulf %0, %1 : f32
  kernel.store %out <[1024, 2048] strides [2048, 1] offset 0>, %2 : memref<2097152xf32>
}

// A dim the pair of vectors does not divide keeps one vector a thread.
// PLAN:       kernel.func @odd
// PLAN-SAME:    plan [block 0, block 1:3, thread 1:256, unroll 1:4]
kernel.func @odd outs(%out: memref<25165824xf32>) ins(%x: memref<25165824xf32>) space [8192, 3072]
    plan [parallel 0, parallel 1] {
  %0 = kernel.load %x <[8192, 3072] strides [3072, 1] offset 0> : memref<25165824xf32>
  %1 = arith.constant 2.0 : f32
  %2 = arith.mulf %0, %1 : f32
  kernel.store %out <[8192, 3072] strides [3072, 1] offset 0>, %2 : memref<25165824xf32>
}
