// RUN: mlfuse-opt %s --split-input-file -p convert-kernel-to-loops,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm,cpu-entry-points | filecheck %s --enable-var-scope

// The CPU pipeline, kernel dialect -> llvm dialect in one -p: kernels (as
// the front end outlines them) come out as llvm.func ops with no scf, cf,
// arith, math or memref op left, each called through an entry point taking
// an array of buffer pointers; the schedule stays.

// Softmax from the front end: the kernel body @k0.body takes %lo/%hi (i64)
// after its noalias buffers and has three inner loops in one chunk loop: max
// (the only maximum), sum of exp (reassoc), then exp/div/store. The max and
// the sum are loop-carried block arguments used by the later loops, not
// recomputed. The entry point @k0 loads the two buffer pointers and calls it.
// The schedule stays a func.func calling the kernel.

// CHECK-LABEL: llvm.func internal @k0.body(%0: !llvm.ptr {llvm.noalias}, %1: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {no_inline} {
// CHECK-NOT:     {{(scf|cf|arith|math|memref)\.}}
// CHECK:         llvm.br ^bb1(%lo : i64)
// CHECK-NEXT:  ^bb1(%p: i64):
// CHECK-NEXT:    [[MORE:%.*]] = llvm.icmp "slt" %p, %hi : i64
// CHECK-NEXT:    llvm.cond_br [[MORE]], ^bb2, ^[[EXIT:bb[0-9]+]]
// CHECK:       ^bb3({{%.*}}: i64, [[MAX:%.*]]: f32):
// CHECK-NOT:     {{(scf|cf|arith|math|memref)\.}}
// CHECK:         llvm.call_intrinsic "llvm.maximum.f32"([[MAX]], {{%.*}}) : (f32, f32) -> f32
// CHECK-NOT:     llvm.maximum
// CHECK:       ^bb6({{%.*}}: i64, [[SUM:%.*]]: f32):
// CHECK-NOT:     llvm.maximum
// CHECK:         [[D:%.*]] = llvm.fsub {{%.*}}, [[MAX]] : f32
// CHECK-NEXT:    [[E:%.*]] = llvm.call_intrinsic "llvm.exp.f32"([[D]]) : (f32) -> f32
// CHECK-NEXT:    llvm.fadd [[SUM]], [[E]] {fastmathFlags = #llvm.fastmath<reassoc,contract>} : f32
// CHECK-NOT:     llvm.maximum
// CHECK:       ^bb9([[J:%.*]]: i64):
// CHECK-NOT:     llvm.maximum
// CHECK:         [[D2:%.*]] = llvm.fsub {{%.*}}, [[MAX]] : f32
// CHECK-NEXT:    [[E2:%.*]] = llvm.call_intrinsic "llvm.exp.f32"([[D2]]) : (f32) -> f32
// CHECK-NEXT:    [[Y:%.*]] = llvm.fdiv [[E2]], [[SUM]] : f32
// CHECK-NEXT:    [[R:%.*]] = llvm.mul %p, {{%.*}} : i64
// CHECK-NEXT:    [[OFF:%.*]] = llvm.add [[R]], [[J]] : i64
// CHECK-NEXT:    [[PTR:%.*]] = llvm.getelementptr inbounds %0{{\[}}[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store [[Y]], [[PTR]] : f32, !llvm.ptr
// CHECK-NOT:     {{(scf|cf|arith|math|memref)\.}}
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }
// CHECK-NEXT:  llvm.func @k0(%buffers: !llvm.ptr, [[LO:%.*]]: i64, [[HI:%.*]]: i64) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64, mlfuse.work = 96 : i64, mlfuse.num_buffers = 2 : i64} {
// CHECK-NEXT:    [[S0:%.*]] = llvm.getelementptr inbounds %buffers[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    [[B0:%.*]] = llvm.load [[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    [[S1:%.*]] = llvm.getelementptr inbounds %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    [[B1:%.*]] = llvm.load [[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @k0.body([[B0]], [[B1]], [[LO]], [[HI]]) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @main(%in0: memref<32xf32>) -> memref<32xf32> attributes {peak_bytes = 128 : i64, reused = 0 : i64} {
// CHECK-NEXT:    [[BUF:%.*]] = kernel.alloc : memref<32xf32>
// CHECK-NEXT:    kernel.launch @k0 outs([[BUF]] : memref<32xf32>) ins(%in0 : memref<32xf32>)

kernel.func @k0 outs(%0: memref<32xf32>) ins(%1: memref<32xf32>) space [4, 8] attributes {origin = ["softmax"], ops = ["reduce", "sub", "exp", "reduce", "div"], reasons = ["output"]} {
  %2 = kernel.load %1 <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %3 = kernel.reduce max %2 [1] : f32
  %4 = arith.subf %2, %3 : f32
  %5 = math.exp %4 : f32
  %6 = kernel.reduce add %5 [1] : f32
  %7 = arith.divf %5, %6 : f32
  kernel.store %0 <[4, 8] strides [8, 1] offset 0>, %7 : memref<32xf32>
}
func.func @main(%in0: memref<32xf32>) -> memref<32xf32> attributes {peak_bytes = 128 : i64, reused = 0 : i64} {
  %0 = kernel.alloc : memref<32xf32>
  kernel.launch @k0 outs(%0 : memref<32xf32>) ins(%in0 : memref<32xf32>)
  func.return %0 : memref<32xf32>
}

// -----

// A permuted 3-D read: the chunk loop covers the 4*2 outer points, %p is
// split into i = p / 2 and j = p % 2, the last dim is the inner loop; the load
// offset is i + 12*j + 4*k, the store offset 6*i + 3*j + k.

// CHECK-LABEL: llvm.func internal @k0.body(%0: !llvm.ptr {llvm.noalias}, %1: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {no_inline} {
// CHECK-DAG:     [[C3:%.*]] = llvm.mlir.constant(3) : i64
// CHECK-DAG:     [[C4:%.*]] = llvm.mlir.constant(4) : i64
// CHECK-DAG:     [[C6:%.*]] = llvm.mlir.constant(6) : i64
// CHECK-DAG:     [[C12:%.*]] = llvm.mlir.constant(12) : i64
// CHECK:       ^bb2:
// CHECK-NEXT:    [[TWO:%.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    [[I:%.*]] = llvm.sdiv %p, [[TWO]] : i64
// CHECK-NEXT:    [[TWO2:%.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    [[J:%.*]] = llvm.srem %p, [[TWO2]] : i64
// CHECK-NEXT:    [[UB:%.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    llvm.br ^bb3
// CHECK-NEXT:  ^bb3([[K:%.*]]: i64):
// CHECK-NEXT:    [[MORE:%.*]] = llvm.icmp "slt" [[K]], [[UB]] : i64
// CHECK-NEXT:    llvm.cond_br [[MORE]], ^bb4, ^bb5
// CHECK-NEXT:  ^bb4:
// CHECK-NEXT:    [[T0:%.*]] = llvm.mul [[J]], [[C12]] : i64
// CHECK-NEXT:    [[T1:%.*]] = llvm.add [[I]], [[T0]] : i64
// CHECK-NEXT:    [[T2:%.*]] = llvm.mul [[K]], [[C4]] : i64
// CHECK-NEXT:    [[LOFF:%.*]] = llvm.add [[T1]], [[T2]] : i64
// CHECK-NEXT:    [[LPTR:%.*]] = llvm.getelementptr inbounds %1{{\[}}[[LOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    [[X:%.*]] = llvm.load [[LPTR]] : !llvm.ptr -> f32
// CHECK-NEXT:    [[Y:%.*]] = llvm.call_intrinsic "llvm.exp.f32"([[X]]) : (f32) -> f32
// CHECK-NEXT:    [[S0:%.*]] = llvm.mul [[I]], [[C6]] : i64
// CHECK-NEXT:    [[S1:%.*]] = llvm.mul [[J]], [[C3]] : i64
// CHECK-NEXT:    [[S2:%.*]] = llvm.add [[S0]], [[S1]] : i64
// CHECK-NEXT:    [[SOFF:%.*]] = llvm.add [[S2]], [[K]] : i64
// CHECK-NEXT:    [[SPTR:%.*]] = llvm.getelementptr inbounds %0{{\[}}[[SOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store [[Y]], [[SPTR]] : f32, !llvm.ptr

kernel.func @k0 outs(%0: memref<24xf32>) ins(%1: memref<24xf32>) space [4, 2, 3] attributes {origin = ["permute", "exp"], ops = ["exp"], reasons = ["output"]} {
  %2 = kernel.load %1 <[4, 2, 3] strides [1, 12, 4] offset 0> : memref<24xf32>
  %3 = math.exp %2 : f32
  kernel.store %0 <[4, 2, 3] strides [6, 3, 1] offset 0>, %3 : memref<24xf32>
}

// -----

// A pad: the masked load stays guarded down to the llvm dialect.

// CHECK-LABEL: llvm.func internal @k0.body
// CHECK:       ^bb4:
// CHECK-NEXT:    [[GE:%.*]] = llvm.icmp "sge" [[J:%.*]], {{%.*}} : i64
// CHECK-NEXT:    [[LT:%.*]] = llvm.icmp "slt" [[J]], {{%.*}} : i64
// CHECK-NEXT:    [[VALID:%.*]] = llvm.and [[GE]], [[LT]] : i1
// CHECK-NEXT:    [[R:%.*]] = llvm.mul %p, {{%.*}} : i64
// CHECK-NEXT:    [[T:%.*]] = llvm.add [[R]], [[J]] : i64
// CHECK-NEXT:    [[OFF:%.*]] = llvm.add [[T]], {{%.*}} : i64
// CHECK-NEXT:    [[SAFE:%.*]] = llvm.select [[VALID]], [[OFF]], {{%.*}} : i1, i64
// CHECK-NEXT:    [[PTR:%.*]] = llvm.getelementptr inbounds %1{{\[}}[[SAFE]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    [[X:%.*]] = llvm.load [[PTR]] : !llvm.ptr -> f32
// CHECK-NEXT:    [[V:%.*]] = llvm.select [[VALID]], [[X]], {{%.*}} : i1, f32

kernel.func @k0 outs(%0: memref<40xf32>) ins(%1: memref<32xf32>) space [4, 10] attributes {origin = ["pad"], ops = [], reasons = ["output"]} {
  %2 = kernel.load %1 <[4, 10] strides [8, 1] offset -1 mask [[0, 4], [1, 9]]> : memref<32xf32>
  kernel.store %0 <[4, 10] strides [10, 1] offset 0>, %2 : memref<40xf32>
}
