// mlfuse-opt refuses element types it cannot lower with a diagnostic that
// names the type and the op, never an internal error. This file itself is
// valid bf16 lazy IR, lowered without legalize-float-types.
//
// RUN: not mlfuse-opt %S/Inputs/i4-elements.mlir -p lazy-canonicalize 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: not mlfuse-opt %s -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory,convert-kernel-to-loops,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm' 2>&1 | filecheck %s --check-prefix=BF16
// RUN: mlfuse-opt %s -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory,legalize-float-types,convert-kernel-to-loops,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm' | filecheck %s --check-prefix=OK

// TYPE: mlfuse-opt: error: lazy.add: lhs has element type i4; lazy tensors hold i1, ui8, i8, i16, i32, i64, ui16, ui32, ui64, f16, bf16, f32, f64
// TYPE-NOT: internal error
// TYPE-NOT: Traceback

// BF16: mlfuse-opt: error: convert-loops-to-llvm: cannot lower 'arith.addf' on bf16 values (LLVM has no bfloat arithmetic here); run legalize-float-types on the kernels first
// BF16-NOT: internal error
// BF16-NOT: Traceback

// The same with legalize-float-types: the kernel has no bf16 left (its bits
// are i16), the schedule keeps the dtype on its buffers.
// OK-LABEL: llvm.func @k0(
// OK-NOT: bf16
// OK: llvm.load {{%.*}} : !llvm.ptr -> i16
// OK-NOT: bf16
// OK: llvm.store {{%.*}}, {{%.*}} : i16, !llvm.ptr
// OK-NOT: bf16
// OK-LABEL: func.func @main(%a_1: memref<8xbf16>, %b_1: memref<8xbf16>) -> memref<8xbf16>
func.func @main(%a: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<8xbf16> {
  %s = lazy.add %a, %b : tensor<8xbf16>
  func.return %s : tensor<8xbf16>
}
