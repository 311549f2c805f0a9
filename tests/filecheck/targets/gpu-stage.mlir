// RUN: mlfuse-opt %s -p gpu-map-plan | filecheck %s --check-prefix=PLAN
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true}' | filecheck %s --check-prefix=LOOPS
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm' | filecheck %s --check-prefix=NVVM
// RUN: mlfuse-opt %s -p 'expand-math,merge-sums,gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t ptx | filecheck %s --check-prefix=PTX

// Contractions stage their operand tiles in shared memory. The product's
// reduce loop (512) becomes `stage 2:32` (a tile copy per step) around
// `serial 2:16` (the steps one tile covers). The tiles are double-buffered:
// before the loop the 256 threads copy the first step's tiles, A's 128 x 16
// (8 elements each, as two aligned 4-element vectors; consecutive threads read
// consecutive k, as A is stored) and B's 16 x 128 (consecutive n), then a
// barrier. Each step reads the next step's tiles into registers, runs 16 steps
// of 8 x 8 fused multiply-adds on this step's buffer, stores the registers into
// the other buffer and ends with one barrier. A thread's 8 x 8 register block
// is two groups of 4 consecutive rows and columns (`unroll 2, thread 16,
// unroll 4`), read from the tiles as 4-lane vectors.

// PLAN:       kernel.func @mm
// PLAN-SAME:    plan [block 0:2, block 1:2, stage 2:32, serial 2:16, unroll 0:2, unroll 1:2, thread 0:16, thread 1:16, unroll 0:4, unroll 1:4]

// In shared memory A's tile is stored k-major (the register block reads a
// row of m at each k); its rows are padded to 132 so that the copy, writing
// down columns (8 consecutive threads, 8 consecutive rows m, for each of
// 4 groups of k), spreads over the banks while the rows stay 16-byte aligned
// for the vector reads. Each copied vector of A is stored lane by lane, 132
// apart; B's tile keeps n innermost, so its vectors are stored whole. Each
// tile memory holds two buffers (A: 2 x 2112, B: 2 x 2048).
// LOOPS:      func.func @mm(
// LOOPS-DAG:    %[[B_TILE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4096xf32, 3 : i64>
// LOOPS-DAG:    %[[A_TILE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4224xf32, 3 : i64>
// LOOPS-DAG:    %[[PAD:.*]] = arith.constant 132 : index
// LOOPS-DAG:    %[[A_BUF:.*]] = arith.constant 2112 : index
// LOOPS-DAG:    %[[LAST:.*]] = arith.constant 31 : index
// LOOPS:        %[[TID:.*]] = "gpu.thread_id"()
// The first step's tiles, into the first buffers:
// LOOPS:        %[[KG:.*]] = arith.remsi %[[TID]], %{{.*}} : index
// LOOPS:        %[[M:.*]] = arith.divsi %[[TID]], %{{.*}} : index
// LOOPS:        %[[K:.*]] = arith.muli %[[KG]], %{{.*}} : index
// LOOPS:        %[[ROW:.*]] = arith.muli %[[K]], %[[PAD]] : index
// LOOPS-NEXT:   %[[AT:.*]] = arith.addi %[[ROW]], %[[M]] : index
// LOOPS-NEXT:   %[[X:.*]] = vector.load %a[%{{.*}}] {alignment = 16 : i64} : memref<262144xf32>, vector<4xf32>
// LOOPS:        vector.load %a
// LOOPS-NEXT:   %[[X0:.*]] = vector.extract %[[X]][0] : f32 from vector<4xf32>
// LOOPS-NEXT:   memref.store %[[X0]], %[[A_TILE]][%[[AT]]] : memref<4224xf32, 3 : i64>
// LOOPS-NEXT:   %[[AT1:.*]] = arith.addi %[[AT]], %[[PAD]] : index
// LOOPS-COUNT-7: memref.store %{{.*}}, %[[A_TILE]]
// LOOPS-NOT:    memref.store %{{.*}}, %[[A_TILE]]
// LOOPS:        vector.load %b[%{{.*}}] {alignment = 16 : i64} : memref<131072xf32>, vector<4xf32>
// LOOPS:        vector.load %b
// LOOPS-NEXT:   vector.store %{{.*}}, %[[B_TILE]][%{{.*}}] : memref<4096xf32, 3 : i64>, vector<4xf32>
// LOOPS-NEXT:   vector.store %{{.*}}, %[[B_TILE]][%{{.*}}] : memref<4096xf32, 3 : i64>, vector<4xf32>
// LOOPS-NEXT:   "gpu.barrier"() : () -> ()
// Each step: the next step's tiles (the last step's own again) into registers,
// the buffer this step reads (step % 2) and the one the next is stored to.
// LOOPS:        scf.for %[[KO:.*]] = %{{.*}} to %{{.*}} step
// LOOPS-NEXT:     %[[NEXT:.*]] = arith.addi %[[KO]], %{{.*}} : index
// LOOPS-NEXT:     %[[STEP:.*]] = arith.minsi %[[NEXT]], %[[LAST]] : index
// LOOPS-NEXT:     %[[READ:.*]] = arith.remsi %[[KO]], %{{.*}} : index
// LOOPS-NEXT:     %[[WRITE:.*]] = arith.remsi %[[NEXT]], %{{.*}} : index
// LOOPS:          %[[WA:.*]] = arith.muli %[[WRITE]], %[[A_BUF]] : index
// LOOPS:          %[[NA0:.*]] = vector.load %a[%{{.*}}] {alignment = 16 : i64}
// LOOPS:          %[[NA1:.*]] = vector.load %a[%{{.*}}] {alignment = 16 : i64}
// LOOPS-NEXT:     %[[RA:.*]] = arith.muli %[[READ]], %[[A_BUF]] : index
// LOOPS-COUNT-2:  vector.load %b
// LOOPS-NOT:      gpu.barrier
// LOOPS:          scf.for
// LOOPS-COUNT-2:    vector.load %[[A_TILE]][%{{.*}}] : memref<4224xf32, 3 : i64>, vector<4xf32>
// LOOPS-COUNT-2:    vector.load %[[B_TILE]][%{{.*}}] : memref<4096xf32, 3 : i64>, vector<4xf32>
// LOOPS-COUNT-64:   arith.addf
// LOOPS:            scf.yield
// LOOPS:          vector.extract %[[NA0]][0]
// LOOPS-NEXT:     memref.store %{{.*}}, %[[A_TILE]]
// LOOPS-COUNT-7:  memref.store %{{.*}}, %[[A_TILE]]
// LOOPS-COUNT-2:  vector.store %{{.*}}, %[[B_TILE]]
// LOOPS-NEXT:     "gpu.barrier"() : () -> ()
// LOOPS-NEXT:     scf.yield

// The tiles become globals in shared memory (address space 3), addressed
// through integers so that no GEP casts their pointers to address space 0.
// NVVM-DAG:   llvm.mlir.global internal @mm__tile0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16896 x i8>
// NVVM-DAG:   llvm.mlir.global internal @mm__tile1() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16384 x i8>
// NVVM:       func.func @mm(
// NVVM-NOT:     memref.alloca
// NVVM:         llvm.mlir.addressof @mm__tile0 : !llvm.ptr<3>
// NVVM:         llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<3>
// NVVM:         llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// NVVM:         llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// NVVM:         llvm.call_intrinsic "llvm.nvvm.barrier0"()
// NVVM:         llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// NVVM:         llvm.call_intrinsic "llvm.nvvm.barrier0"()

// PTX:        .visible .entry mm(
// PTX-DAG:    .shared .align 16 .b8 mm__tile0[16896];
// PTX-DAG:    .shared .align 16 .b8 mm__tile1[16384];
// The copies read 16 bytes per thread and instruction (a warp: 512 bytes).
// PTX-NOT:    ld.global.nc.b32
// PTX-COUNT-2: ld.global.nc.v4.b32
// PTX-COUNT-8: st.shared.b32
// PTX-COUNT-2: ld.global.nc.v4.b32
// PTX-COUNT-2: st.shared.v4.b32
// PTX-NEXT:   bar.sync 0;
// In the loop, the next tiles' global loads come before the products.
// PTX:        $L__BB0_1:
// PTX-COUNT-4: ld.global.nc.v4.b32
// PTX-NOT:    st.shared
// PTX:        $L__BB0_2:
// PTX-COUNT-4: ld.shared.v4.b32
// PTX-COUNT-64: fma.rn.f32
// PTX-COUNT-8: st.shared.b32
// PTX-COUNT-2: st.shared.v4.b32
// PTX-NEXT:   bar.sync 0;
// Each thread stores its 4 consecutive outputs at once (buffers are align 16).
// PTX-COUNT-16: st.global.v4.b32
kernel.func @mm outs(%out: memref<65536xf32>) ins(%a: memref<262144xf32>, %b: memref<131072xf32>) space [256, 256, 512]
    plan [parallel 0, parallel 1, serial 2] {
  %0 = kernel.load %a <[256, 256, 512] strides [512, 0, 1] offset 0> : memref<262144xf32>
  %1 = kernel.load %b <[256, 256, 512] strides [0, 1, 256] offset 0> : memref<131072xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out <[256, 256, 512] strides [256, 1, 0] offset 0>, %3 : memref<65536xf32>
}

// A reduce length with no divisor between 4 and 16 (37, prime) is read from
// global memory: a tile of one step would cost two barriers per step.
// PLAN:       kernel.func @prime_k
// PLAN-SAME:    plan [block 0:2, block 1:2, serial 2, unroll 0:8, unroll 1:8, thread 0:16, thread 1:16]
kernel.func @prime_k outs(%out: memref<65536xf32>) ins(%a: memref<9472xf32>, %b: memref<9472xf32>) space [256, 256, 37]
    plan [parallel 0, parallel 1, serial 2] {
  %0 = kernel.load %a <[256, 256, 37] strides [37, 0, 1] offset 0> : memref<9472xf32>
  %1 = kernel.load %b <[256, 256, 37] strides [0, 1, 256] offset 0> : memref<9472xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out <[256, 256, 37] strides [256, 1, 0] offset 0>, %3 : memref<65536xf32>
}

// A tile of fewer points than the block has threads (a 10-step reduce over a
// 4 x 128 output: 40 points of A for 64 threads) copies under a guard: the
// threads past the tile read its last point and store nothing.
// PLAN:       kernel.func @guarded
// PLAN-SAME:    plan [block 0:1, block 1:1, stage 2:1, serial 2:10, unroll 0:1, unroll 1:8, thread 0:4, thread 1:16]
// LOOPS:      func.func @guarded(
// LOOPS:        %[[IN:.*]] = arith.cmpi slt, %[[TID:.*]], %{{.*}} : index
// LOOPS-NEXT:   %[[E:.*]] = arith.minsi %[[TID]], %{{.*}} : index
// LOOPS:        %[[X:.*]] = memref.load %a
// LOOPS-NEXT:   scf.if %[[IN]] {
// LOOPS-NEXT:     memref.store %[[X]], %{{.*}} : memref<40xf32, 3 : i64>
// LOOPS-NEXT:   }
// LOOPS:        "gpu.barrier"() : () -> ()
kernel.func @guarded outs(%out: memref<512xf32>) ins(%a: memref<40xf32>, %b: memref<1280xf32>) space [4, 128, 10]
    plan [parallel 0, parallel 1, serial 2] {
  %0 = kernel.load %a <[4, 128, 10] strides [10, 0, 1] offset 0> : memref<40xf32>
  %1 = kernel.load %b <[4, 128, 10] strides [0, 1, 128] offset 0> : memref<1280xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out <[4, 128, 10] strides [128, 1, 0] offset 0>, %3 : memref<512xf32>
}
