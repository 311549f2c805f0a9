// RUN: mlfuse-opt %s -p gpu-map-plan | filecheck %s --check-prefix=PLAN
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true}' | filecheck %s --check-prefix=LOOPS
// RUN: mlfuse-opt %s -p 'expand-math,merge-sums,gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t ptx | filecheck %s --check-prefix=PTX

// Dims without a good divisor get whole warps, and the grid runs past their
// end: 1021 (prime) elements take 4 blocks of 256 threads, not 1021 blocks of
// one. The threads past the end load the last element (a clamped index) and
// store nothing.
// PLAN:       kernel.func @scale
// PLAN-SAME:    plan [block 0:4, thread 0:256]
// LOOPS:      func.func @scale(
// LOOPS-DAG:    %[[N:.*]] = arith.constant 1021 : index
// LOOPS-DAG:    %[[LAST:.*]] = arith.constant 1020 : index
// LOOPS:        %[[I:.*]] = arith.addi
// LOOPS-NEXT:   %[[C:.*]] = arith.minsi %[[I]], %[[LAST]] : index
// LOOPS-NEXT:   memref.load %x[%[[C]]]
// LOOPS:        %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : index
// LOOPS-NEXT:   scf.if %[[IN]] {
// LOOPS-NEXT:     memref.store
// LLVM sinks the load into the guarded store's branch: no clamp is left.
// PTX:        .visible .entry scale(
// PTX:        setp.gt.u64 %p1, %rd{{[0-9]+}}, 1020;
// PTX-NEXT:   @%p1 bra
// PTX:        ld.global.nc.b32
// PTX:        st.global.b32
kernel.func @scale outs(%out: memref<1021xf32>) ins(%x: memref<1021xf32>) space [1021]
    plan [parallel 0] {
  %0 = kernel.load %x <[1021] strides [1] offset 0> : memref<1021xf32>
  %1 = arith.constant 2.0 : f32
  %2 = arith.mulf %0, %1 : f32
  kernel.store %out <[1021] strides [1] offset 0>, %2 : memref<1021xf32>
}

// A row of 1000 (4 x 250: no multiple of 32 divides 250) is reduced by 256
// threads of 4 consecutive elements each; the 24 points past its end count as
// the identity (-inf for a max), so every thread still takes part in the
// block's reduction.
// PLAN:       kernel.func @rowmax
// PLAN-SAME:    plan [block 0, serial 1:1, thread 1:256, unroll 1:4]
// LOOPS:      func.func @rowmax(
// LOOPS-DAG:    %[[N:.*]] = arith.constant 1000 : index
// LOOPS-DAG:    %[[NEG:.*]] = arith.constant 0xff800000 : f32
// LOOPS:        scf.for
// LOOPS:          %[[X:.*]] = memref.load %x
// LOOPS:          %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : index
// LOOPS-NEXT:     %[[V:.*]] = arith.select %[[IN]], %[[X]], %[[NEG]] : f32
// LOOPS:          arith.maximumf %{{.*}}, %[[V]]
// LOOPS:        "gpu.all_reduce"
// PTX:        .visible .entry rowmax(
// PTX:        .maxntid 256
// PTX:        shfl.sync.bfly.b32
kernel.func @rowmax outs(%out: memref<8xf32>) ins(%x: memref<8000xf32>) space [8, 1000]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[8, 1000] strides [1000, 1] offset 0> : memref<8000xf32>
  %1 = kernel.reduce max %0 [1] : f32
  kernel.store %out <[8, 1000] strides [1, 0] offset 0>, %1 : memref<8xf32>
}

// A matmul of 17 x 64 x 17: 16 x 16 threads and two blocks along each output
// dim, not one thread per block.
// PLAN:       kernel.func @mm17
// PLAN-SAME:    plan [block 0:2, block 1:2, stage 2:4, serial 2:16, unroll 0:1, unroll 1:1, thread 0:16, thread 1:16]
kernel.func @mm17 outs(%out: memref<289xf32>) ins(%a: memref<1088xf32>, %b: memref<1088xf32>) space [17, 17, 64]
    plan [parallel 0, parallel 1, serial 2] {
  %0 = kernel.load %a <[17, 17, 64] strides [64, 0, 1] offset 0> : memref<1088xf32>
  %1 = kernel.load %b <[17, 17, 64] strides [0, 1, 17] offset 0> : memref<1088xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out <[17, 17, 64] strides [17, 1, 0] offset 0>, %3 : memref<289xf32>
}
