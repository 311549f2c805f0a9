// mlfuse-opt on bad input: a diagnostic on stderr and a non-zero exit status,
// never a Python traceback. The inputs with errors are in Inputs/; this file
// itself is valid IR, used by the cases whose error is on the command line.
//
// RUN: not mlfuse-opt %S/Inputs/syntax-error.mlir 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not mlfuse-opt %S/Inputs/unknown-op.mlir 2>&1 | filecheck %s --check-prefix=UNKNOWN-OP
// RUN: not mlfuse-opt %S/Inputs/bad-plan.mlir 2>&1 | filecheck %s --check-prefix=BAD-PLAN
// RUN: not mlfuse-opt %S/Inputs/verify-error.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not mlfuse-opt %S/Inputs/big-tiles.mlir -p 'convert-kernel-to-loops{grid=true}' 2>&1 | filecheck %s --check-prefix=BIG-TILES
// RUN: not mlfuse-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN-PASS
// RUN: not mlfuse-opt %s -p 'lazy-canonicalize{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=BAD-OPTION
// RUN: not mlfuse-opt %s -p 'group-reduces{max-buffers=many}' 2>&1 | filecheck %s --check-prefix=BAD-OPTION-VALUE
// RUN: not mlfuse-opt %s -t llvm 2>&1 | filecheck %s --check-prefix=NO-LLVM
// RUN: not mlfuse-opt %s -t no-such-target 2>&1 | filecheck %s --check-prefix=BAD-TARGET
// xDSL's targets for its own low-level dialects are not offered; each says why:
// RUN: not mlfuse-opt %s -t x86-asm 2>&1 | filecheck %s --check-prefix=XDSL-TARGET
// RUN: not mlfuse-opt %s -t riscv-asm 2>&1 | filecheck %s --check-prefix=XDSL-TARGET
// RUN: not mlfuse-opt %s -t wgsl 2>&1 | filecheck %s --check-prefix=XDSL-TARGET
// The host's targets refuse kernels lowered for a GPU grid (LLVM would abort):
// RUN: not mlfuse-opt %s -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory,legalize-float-types,expand-math,merge-sums,gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t asm 2>&1 | filecheck %s --check-prefix=GPU-ASM
// RUN: not mlfuse-opt %S/Inputs/no-such-file.mlir 2>&1 | filecheck %s --check-prefix=NO-FILE
// A verifier that raises something other than a VerifyException (a bug in
// that verifier) must still end in a diagnostic:
// RUN: not mlfuse-opt %S/Inputs/verifier-crash.mlir 2>&1 | filecheck %s --check-prefix=CRASH

// The checks: the message, where it applies the location with the source line
// and a caret under the offending token, and no traceback anywhere.

// SYNTAX-NOT: Traceback
// SYNTAX: mlfuse-opt: parse error: {{.*}}syntax-error.mlir:2:20
// SYNTAX-NEXT: %0 = lazy.add %x %x : tensor<4xf32>
// SYNTAX-NEXT: ^^
// SYNTAX-NEXT: Expected ','
// SYNTAX-NOT: Traceback

// BIG-TILES-NOT: Traceback
// BIG-TILES: mlfuse-opt: error: convert-kernel-to-loops: @mm: the tiles of plan [{{.*}}stage 2:1, serial 2:4096{{.*}}] take 524288 bytes of shared memory; a block has 49152 (stage fewer steps)

// BAD-PLAN-NOT: Traceback
// BAD-PLAN: mlfuse-opt: parse error: {{.*}}bad-plan.mlir:3:{{[0-9]+}}
// BAD-PLAN: unknown loop kind 'warp' (known: parallel, serial, stage, unroll, vector, block, thread)

// UNKNOWN-OP-NOT: Traceback
// UNKNOWN-OP: mlfuse-opt: parse error: {{.*}}unknown-op.mlir:2:{{[0-9]+}}
// UNKNOWN-OP-NEXT: %0 = lazy.frobnicate %x : tensor<4xf32>

// UNKNOWN-OP-NOT: Traceback

// Without --verify-diagnostics a verifier error is fatal: the message, then
// the module with the failing op marked.
// VERIFY-NOT: Traceback
// VERIFY: mlfuse-opt: error: lazy.exp needs float elements, got i32
// VERIFY: %0 = "lazy.exp"(%x) : (tensor<4xi32>) -> tensor<4xi32>
// VERIFY-NEXT: ^^^^
// VERIFY-NEXT: | Operation does not verify: lazy.exp needs float elements, got i32
// VERIFY-NOT: Traceback

// UNKNOWN-PASS-NOT: Traceback
// UNKNOWN-PASS: mlfuse-opt: error: {{.*}}no-such-pass
// UNKNOWN-PASS-NOT: Traceback

// BAD-OPTION-NOT: Traceback
// BAD-OPTION: mlfuse-opt: error: {{.*}}no{{[-_]}}such{{[-_]}}option
// BAD-OPTION-NOT: Traceback

// BAD-OPTION-VALUE-NOT: Traceback
// BAD-OPTION-VALUE: mlfuse-opt: error: {{.*}}many{{.*}}int
// BAD-OPTION-VALUE-NOT: Traceback

// NO-LLVM-NOT: Traceback
// NO-LLVM: mlfuse-opt: error: no llvm.func to translate; lower the kernels first
// NO-LLVM-NOT: Traceback

// BAD-TARGET-NOT: Traceback
// BAD-TARGET: mlfuse-opt: error: argument -t/--target: invalid choice: 'no-such-target'
// BAD-TARGET-NOT: Traceback

// XDSL-TARGET-NOT: usage:
// XDSL-TARGET: mlfuse-opt: error: argument -t/--target: '{{x86-asm|riscv-asm|wgsl}}' is xDSL's target for its own low-level dialects and cannot take mlfuse IR; mlfuse's targets: llvm, llvm-opt, asm, ptx, nvptx-llvm, mlir (-t asm prints the host's assembly)
// XDSL-TARGET-NOT: {{.}}

// GPU-ASM-NOT: Traceback
// GPU-ASM: mlfuse-opt: error: @k0 was lowered for a GPU grid (the CUDA pipeline); -t ptx or -t nvptx-llvm print it, -t llvm/llvm-opt/asm take the CPU's pipeline's output
// GPU-ASM-NOT: {{.}}

// NO-FILE-NOT: Traceback
// NO-FILE: mlfuse-opt: {{.*}}No such file or directory{{.*}}no-such-file.mlir
// NO-FILE-NOT: Traceback

// CRASH-NOT: Traceback
// CRASH: mlfuse-opt: error: {{.*}}lazy.bitcast
// CRASH-NOT: Traceback

func.func @valid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lazy.add %x, %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
