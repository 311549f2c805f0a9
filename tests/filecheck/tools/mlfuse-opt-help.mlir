// mlfuse-opt --help: mlfuse's passes first, each with its one-line description
// and options, then each target's passes, the -t targets, and xDSL's passes last.
//
// RUN: mlfuse-opt --help | filecheck %s

// CHECK: usage: mlfuse-opt
// CHECK: -t TARGET, --target TARGET
// CHECK-NEXT: what to print: llvm, llvm-opt, asm, ptx, nvptx-llvm,
// CHECK-NEXT: mlir
// CHECK: mlfuse passes (-p):
// CHECK-NEXT: lazy-canonicalize {{ +}}Fold movement chains into views, fold constants, drop identities.
// CHECK: push-views {{ +}}Move views through elementwise ops
// CHECK: group-reduces {{ +}}Group ops into kernels: reduces with their producers and consumers.
// CHECK-NEXT: options: max-buffers=32 horizontal=true recompute=3 max-ops=2048 max-loops=16 factor-elements=32768
// CHECK: plan-vectorize {{ +}}Split width iterations of dim into a vector loop.
// CHECK-NEXT: options: dim=0 width=8
// CHECK: convert-kernel-to-loops {{ +}}Lower every kernel.func to a func.func of scf loops
// CHECK: options: grid=false
// CHECK: passes of the cpu target (-p):
// CHECK-NEXT: cpu-optimize-plan {{ +}}Choose each kernel's vector dim
// CHECK: passes of the cuda target (-p):
// CHECK-NEXT: gpu-map-plan
// CHECK-NOT: passes of the cuda_sim target
// CHECK: output targets (-t):
// CHECK-NEXT: llvm {{ +}}LLVM IR of the module's llvm.func ops, for the host.
// CHECK-NEXT: llvm-opt {{ +}}the LLVM IR after LLVM's O3 for the host CPU.
// CHECK-NEXT: asm {{ +}}the host CPU's assembly after O3.
// CHECK-NEXT: ptx {{ +}}PTX for the module's GPU kernels.
// CHECK-NEXT: nvptx-llvm
// CHECK-NEXT: mlir {{ +}}the IR after the passes (default)
// CHECK-EMPTY:
// CHECK-NEXT: xDSL's passes (-p
// CHECK-NEXT: apply-individual-rewrite,
// CHECK-SAME: apply-pdl,
// CHECK: {{ canonicalize, }}
// CHECK-NOT: x86-asm
// CHECK-NOT: riscv-asm
