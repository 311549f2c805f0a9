// RUN: not mlfuse-opt %s -p emulate-nvvm 2>&1 | filecheck %s

// An NVVM intrinsic the emulator has no runtime function for is named.
// CHECK-NOT: Traceback
// CHECK: emulate-nvvm: the emulator has no 'llvm.nvvm.read.ptx.sreg.laneid'
llvm.func @k(%out: !llvm.ptr) attributes {mlfuse.kernel, mlfuse.grid = 1 : i64, mlfuse.block = 32 : i64} {
  %l = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.laneid"() : () -> i32
  llvm.store %l, %out : i32, !llvm.ptr
  llvm.return
}
