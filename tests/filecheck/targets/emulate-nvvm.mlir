// RUN: mlfuse-opt %s -p emulate-nvvm | filecheck %s
// RUN: mlfuse-opt %s -p 'expand-math,merge-sums,gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm,emulate-nvvm' --split-input-file | filecheck %s --check-prefix=PIPE

// emulate-nvvm: NVVM's special registers, shuffles and barriers become calls of
// the cuda_emu runtime (barriers numbered), and every load and store takes its
// address from a check of the bytes it touches, the alignment it claims and
// whether it writes (shared memory's race check needs to know).

// CHECK-LABEL: llvm.func @k(
// CHECK:        %[[TID:.*]] = llvm.call @mlfuse_emu_tid() : () -> i32
// CHECK:        llvm.call @mlfuse_emu_ctaid() : () -> i32
// A float load: 4 bytes, aligned to 4 (its natural alignment), site 0, a read.
// CHECK:        %[[A:.*]] = llvm.ptrtoint %[[P:.*]] : !llvm.ptr to i64
// CHECK-NEXT:   %[[N:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:   %[[AL:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:   %[[S:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %[[W:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %[[C:.*]] = llvm.call @mlfuse_emu_check(%[[A]], %[[N]], %[[AL]], %[[S]], %[[W]]) : (i64, i64, i64, i64, i64) -> i64
// CHECK-NEXT:   %[[Q:.*]] = llvm.inttoptr %[[C]] : i64 to !llvm.ptr
// CHECK-NEXT:   llvm.load %[[Q]] : !llvm.ptr -> f32
// CHECK:        llvm.call @mlfuse_emu_shfl_bfly(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32) -> i32
// A shared store keeps its address space; it is the second access (site 1).
// CHECK:        %[[SLOT:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<3>
// CHECK-NEXT:   llvm.ptrtoint %[[SLOT]] : !llvm.ptr<3> to i64
// CHECK-NEXT:   llvm.mlir.constant(4) : i64
// CHECK-NEXT:   llvm.mlir.constant(4) : i64
// CHECK-NEXT:   llvm.mlir.constant(1) : i64
// CHECK-NEXT:   llvm.mlir.constant(1) : i64
// CHECK-NEXT:   llvm.call @mlfuse_emu_check
// CHECK-NEXT:   %[[SH:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<3>
// CHECK-NEXT:   llvm.store %{{.*}}, %[[SH]] : i32, !llvm.ptr<3>
// CHECK:        %[[B0:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   llvm.call @mlfuse_emu_barrier(%[[B0]]) : (i64) -> ()
// A vector store: 16 bytes, at the alignment it states (site 4).
// CHECK:        llvm.ptrtoint %out : !llvm.ptr to i64
// CHECK-NEXT:   llvm.mlir.constant(16) : i64
// CHECK-NEXT:   llvm.mlir.constant(16) : i64
// CHECK-NEXT:   llvm.mlir.constant(4) : i64
// CHECK-NEXT:   llvm.mlir.constant(1) : i64
// CHECK-NEXT:   llvm.call @mlfuse_emu_check
// CHECK:        llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// CHECK:        %[[B1:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   llvm.call @mlfuse_emu_barrier(%[[B1]]) : (i64) -> ()
// CHECK-NOT:    llvm.nvvm
// The runtime's functions are declared, those the kernels call only.
// CHECK-DAG:    llvm.func @mlfuse_emu_tid() -> i32
// CHECK-DAG:    llvm.func @mlfuse_emu_ctaid() -> i32
// CHECK-DAG:    llvm.func @mlfuse_emu_shfl_bfly(i32, i32, i32, i32) -> i32
// CHECK-DAG:    llvm.func @mlfuse_emu_barrier(i64)
// CHECK-DAG:    llvm.func @mlfuse_emu_check(i64, i64, i64, i64, i64) -> i64
llvm.mlir.global internal @k__smem() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<64 x i8>
llvm.func @k(%out: !llvm.ptr {llvm.noalias}, %x: !llvm.ptr {llvm.noalias}) attributes {mlfuse.kernel, mlfuse.grid = 2 : i64, mlfuse.block = 64 : i64} {
  %tid32 = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
  %cta32 = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.x"() : () -> i32
  %tid = llvm.zext %tid32 : i32 to i64
  %p = llvm.getelementptr inbounds %x[%tid] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %p : !llvm.ptr -> f32
  %bits = llvm.bitcast %v : f32 to i32
  %m = llvm.mlir.constant(-1 : i32) : i32
  %o = llvm.mlir.constant(16 : i32) : i32
  %c = llvm.mlir.constant(31 : i32) : i32
  %s = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"(%m, %bits, %o, %c) : (i32, i32, i32, i32) -> i32
  %smem = llvm.mlir.addressof @k__smem : !llvm.ptr<3>
  %at = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
  %slot = llvm.inttoptr %at : i64 to !llvm.ptr<3>
  llvm.store %s, %slot : i32, !llvm.ptr<3>
  llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()
  %r = llvm.load %slot : !llvm.ptr<3> -> i32
  %vec = llvm.load %x {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.store %vec, %out {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
  llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()
  llvm.return
}

// -----

// From a kernel: the CUDA pipeline's row sum, its reduction's two barriers numbered.
// PIPE-LABEL: llvm.func @rowsum(
// PIPE-COUNT-5: llvm.call @mlfuse_emu_shfl_bfly
// PIPE:         llvm.call @mlfuse_emu_barrier
// PIPE:         llvm.call @mlfuse_emu_barrier
// PIPE-NOT:     llvm.nvvm
kernel.func @rowsum outs(%out: memref<64xf32>) ins(%x: memref<65536xf32>) space [64, 1024]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[64, 1024] strides [1024, 1] offset 0> : memref<65536xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[64, 1024] strides [1, 0] offset 0>, %1 : memref<64xf32>
}
