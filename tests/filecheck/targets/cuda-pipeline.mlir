// RUN: mlfuse-opt %s -p 'expand-math,merge-sums,gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t ptx | filecheck %s
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true}' | filecheck %s --check-prefix=LOOPS

// The CUDA pipeline from kernels to PTX for sm_90. A row sum: one block per
// row of 1024 (256 threads, 4 consecutive elements each: one 16-byte load,
// coalesced), the threads' partial sums combined by a butterfly of five warp
// shuffles, one slot per warp in shared memory (written by the warp's first
// lane) between two barriers, and the first thread storing.

// LOOPS:      func.func @rowsum(%out: memref<64xf32>, %x: memref<65536xf32>) attributes {mlfuse.kernel, mlfuse.register_points = 4 : i64, mlfuse.grid = 64 : i64, mlfuse.block = 256 : i64}
// LOOPS:        "gpu.block_id"() <{dimension = #gpu<dim x>}>
// LOOPS:        "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// LOOPS-COUNT-4: memref.load %x
// LOOPS:        "gpu.all_reduce"(%{{.*}}) <{op = #gpu<all_reduce_op add>, uniform}>
// LOOPS:        arith.cmpi eq
// LOOPS-NEXT:   scf.if
// LOOPS-NEXT:     memref.store

// CHECK:      .target sm_90
// CHECK:      .visible .entry rowsum(
// CHECK:      .maxntid 256
// CHECK:      .shared .align 8 .b8 rowsum__smem[64];
// CHECK:      mov.u32 {{.*}}%ctaid.x;
// CHECK:      mov.u32 {{.*}}%tid.x;
// CHECK:      ld.global.nc.v4.b32
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK:      @%p{{[0-9]+}} bra [[SKIP:\$L__BB0_[0-9]+]];
// CHECK:      st.shared.b32
// CHECK-NEXT: [[SKIP]]:
// CHECK-NEXT: bar.sync 0;
// CHECK:      ld.shared.b32
// CHECK:      bar.sync 0;
// CHECK:      st.global.b32
kernel.func @rowsum outs(%out: memref<64xf32>) ins(%x: memref<65536xf32>) space [64, 1024]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[64, 1024] strides [1024, 1] offset 0> : memref<65536xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[64, 1024] strides [1, 0] offset 0>, %1 : memref<64xf32>
}

// A matmul: 16x16 threads, each an 8x8 register block of fused multiply-adds.
// LOOPS:      func.func @mm(
// LOOPS-SAME:   mlfuse.grid = 4 : i64, mlfuse.block = 256 : i64
// CHECK:      .visible .entry mm(
// CHECK:      .maxntid 256
// CHECK-COUNT-64: fma.rn.f32
kernel.func @mm outs(%out: memref<65536xf32>) ins(%a: memref<65536xf32>, %b: memref<65536xf32>) space [256, 256, 256]
    plan [parallel 0, parallel 1, serial 2] {
  %0 = kernel.load %a <[256, 256, 256] strides [256, 0, 1] offset 0> : memref<65536xf32>
  %1 = kernel.load %b <[256, 256, 256] strides [0, 1, 256] offset 0> : memref<65536xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out <[256, 256, 256] strides [256, 1, 0] offset 0>, %3 : memref<65536xf32>
}

// An elementwise kernel: 256 threads, 4 consecutive elements each, which LLVM
// merges into 16-byte loads and stores (the buffers are `align 16`).
// LOOPS:      func.func @scale(
// LOOPS-SAME:   mlfuse.grid = 64 : i64, mlfuse.block = 256 : i64
// CHECK:      .visible .entry scale(
// CHECK:      ld.global.nc.v4.b32
// CHECK:      st.global.v4.b32
kernel.func @scale outs(%out: memref<65536xf32>) ins(%x: memref<65536xf32>) space [65536]
    plan [parallel 0] {
  %0 = kernel.load %x <[65536] strides [1] offset 0> : memref<65536xf32>
  %1 = arith.constant 2.0 : f32
  %2 = arith.mulf %0, %1 : f32
  kernel.store %out <[65536] strides [1] offset 0>, %2 : memref<65536xf32>
}

// Rows of 16: a group of 16 threads per row, 16 rows to a block of 256. Each
// group's partial sums combine by four shuffles within its warp (offsets 8, 4,
// 2, 1), with no shared memory and no barrier; the first thread of each group
// stores.
// LOOPS:      func.func @shortrows(
// LOOPS-SAME:   mlfuse.grid = 64 : i64, mlfuse.block = 256 : i64
// LOOPS:        "gpu.all_reduce"(%{{.*}}) <{op = #gpu<all_reduce_op add>, uniform}> ({
// LOOPS-NEXT:   }) {mlfuse.lanes = 16 : i64} : (f32) -> f32
// CHECK:      .visible .entry shortrows(
// CHECK-NOT:  .shared
// CHECK-COUNT-4: shfl.sync.bfly.b32
// CHECK-NOT:  bar.sync
// CHECK:      st.global.b32
// CHECK:      ret;
kernel.func @shortrows outs(%out: memref<1024xf32>) ins(%x: memref<16384xf32>) space [1024, 16]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[1024, 16] strides [16, 1] offset 0> : memref<16384xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[1024, 16] strides [1, 0] offset 0>, %1 : memref<1024xf32>
}
