// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p convert-loops-to-llvm | filecheck %s --enable-var-scope
// RUN: not mlfuse-opt %s --split-input-file -p convert-loops-to-llvm 2>&1 | filecheck %s --check-prefix=ERR

// convert-loops-to-llvm: lowered kernels (func/cf/arith/math/memref) become
// llvm.func ops in one walk.

// Kernels must be in cf form: scf left over is an error naming the function
// and the passes to run first (exit status 1 in the ERR run, no traceback).
// Keep this case first: the ERR run stops at it.

// ERR-NOT:   Traceback
// ERR:       mlfuse-opt: error: convert-loops-to-llvm: @scf_left still has scf ops; lower its scf.parallel for a target (as the target's kernel pipeline does) and run convert-scf-to-cf first
// ERR-NOT:   llvm.func

// CHECK:     convert-loops-to-llvm: @scf_left still has scf ops; lower its scf.parallel for a target (as the target's kernel pipeline does) and run convert-scf-to-cf first
// CHECK-NOT: llvm.func @scf_left

func.func @scf_left(%out: memref<4xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel} {
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.000000e+00 : f32
  scf.for %p = %lo to %hi step %c1 {
    memref.store %f, %out[%p] : memref<4xf32>
  }
  func.return
}

// -----

// A row sum after convert-scf-to-cf: memref arguments become noalias
// pointers, index becomes i64, memref.load/store become
// `getelementptr inbounds` + llvm.load/store (no ptrtoint/inttoptr), block
// arguments and branches map one to one, fast-math flags are carried. The
// schedule (@main) is not a kernel and stays untouched.

// CHECK-LABEL: llvm.func @rowsum(%out: !llvm.ptr {llvm.noalias}, %x: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64} {
// CHECK-NEXT:    [[C8:%.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    [[ZERO:%.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT:    [[C1:%.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    [[C0:%.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    llvm.br ^bb1(%lo : i64)
// CHECK-NEXT:  ^bb1(%p: i64):
// CHECK-NEXT:    [[CMP:%.*]] = llvm.icmp "slt" %p, %hi : i64
// CHECK-NEXT:    llvm.cond_br [[CMP]], ^bb2, ^bb6
// CHECK-NEXT:  ^bb2:
// CHECK-NEXT:    llvm.br ^bb3([[C0]], [[ZERO]] : i64, f32)
// CHECK-NEXT:  ^bb3(%j: i64, %acc: f32):
// CHECK-NEXT:    [[CMP2:%.*]] = llvm.icmp "slt" %j, [[C8]] : i64
// CHECK-NEXT:    llvm.cond_br [[CMP2]], ^bb4, ^bb5
// CHECK-NEXT:  ^bb4:
// CHECK-NEXT:    [[R:%.*]] = llvm.mul %p, [[C8]] : i64
// CHECK-NEXT:    [[OFF:%.*]] = llvm.add [[R]], %j : i64
// CHECK-NOT:     ptrtoint
// CHECK-NOT:     inttoptr
// CHECK-NEXT:    [[PTR:%.*]] = llvm.getelementptr inbounds %x{{\[}}[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    [[V:%.*]] = llvm.load [[PTR]] : !llvm.ptr -> f32
// CHECK-NEXT:    [[NEW:%.*]] = llvm.fadd %acc, [[V]] {fastmathFlags = #llvm.fastmath<reassoc>} : f32
// CHECK-NEXT:    [[J1:%.*]] = llvm.add %j, [[C1]] : i64
// CHECK-NEXT:    llvm.br ^bb3([[J1]], [[NEW]] : i64, f32)
// CHECK-NEXT:  ^bb5:
// CHECK-NOT:     ptrtoint
// CHECK-NOT:     inttoptr
// CHECK-NEXT:    [[OPTR:%.*]] = llvm.getelementptr inbounds %out[%p] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %acc, [[OPTR]] : f32, !llvm.ptr
// CHECK-NEXT:    [[P1:%.*]] = llvm.add %p, [[C1]] : i64
// CHECK-NEXT:    llvm.br ^bb1([[P1]] : i64)
// CHECK-NEXT:  ^bb6:
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @main(%in0: memref<32xf32>) -> memref<4xf32> {
// CHECK-NEXT:    [[BUF:%.*]] = kernel.alloc : memref<4xf32>
// CHECK-NEXT:    kernel.launch @rowsum outs([[BUF]] : memref<4xf32>) ins(%in0 : memref<32xf32>)
// CHECK-NEXT:    func.return [[BUF]] : memref<4xf32>
// CHECK-NEXT:  }

func.func @rowsum(%out: memref<4xf32>, %x: memref<32xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64} {
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  cf.br ^bb1(%lo : index)
^bb1(%p: index):
  %0 = arith.cmpi slt, %p, %hi : index
  cf.cond_br %0, ^bb2, ^bb6
^bb2:
  cf.br ^bb3(%c0, %zero : index, f32)
^bb3(%j: index, %acc: f32):
  %1 = arith.cmpi slt, %j, %c8 : index
  cf.cond_br %1, ^bb4, ^bb5
^bb4:
  %2 = arith.muli %p, %c8 : index
  %3 = arith.addi %2, %j : index
  %4 = memref.load %x[%3] : memref<32xf32>
  %5 = arith.addf %acc, %4 fastmath<reassoc> : f32
  %6 = arith.addi %j, %c1 : index
  cf.br ^bb3(%6, %5 : index, f32)
^bb5:
  memref.store %acc, %out[%p] : memref<4xf32>
  %7 = arith.addi %p, %c1 : index
  cf.br ^bb1(%7 : index)
^bb6:
  func.return
}
func.func @main(%in0: memref<32xf32>) -> memref<4xf32> {
  %0 = kernel.alloc : memref<4xf32>
  kernel.launch @rowsum outs(%0 : memref<4xf32>) ins(%in0 : memref<32xf32>)
  func.return %0 : memref<4xf32>
}

// -----

// cf.cond_br with arguments on both successors, cf.br with two.

// CHECK-LABEL: llvm.func @branch_args
// CHECK:         [[NEG:%.*]] = llvm.icmp "slt" [[V:%.*]], [[Z:%.*]] : i32
// CHECK-NEXT:    llvm.cond_br [[NEG]], ^bb1([[V]] : i32), ^bb2([[Z]], [[V]] : i32, i32)
// CHECK-NEXT:  ^bb1(%a: i32):
// CHECK-NEXT:    [[N:%.*]] = llvm.sub [[Z]], %a : i32
// CHECK-NEXT:    llvm.br ^bb2([[N]], %a : i32, i32)
// CHECK-NEXT:  ^bb2(%r: i32, %s: i32):
// CHECK-NOT:     cf.

func.func @branch_args(%out: memref<4xi32>, %x: memref<4xi32>, %lo: index, %hi: index) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xi32>
  %z = arith.constant 0 : i32
  %neg = arith.cmpi slt, %v, %z : i32
  cf.cond_br %neg, ^bb1(%v : i32), ^bb2(%z, %v : i32, i32)
^bb1(%a: i32):
  %n = arith.subi %z, %a : i32
  cf.br ^bb2(%n, %a : i32, i32)
^bb2(%r: i32, %s: i32):
  memref.store %r, %out[%c0] : memref<4xi32>
  func.return
}

// -----

// Scalar ops: arith/math map to llvm ops or intrinsics; fptosi saturates;
// a bool -> float uitofp is a select; i1 buffers are i1 loads/stores.

// CHECK-LABEL: llvm.func @ops(%f: !llvm.ptr {llvm.noalias}, %d: !llvm.ptr {llvm.noalias}, %i: !llvm.ptr {llvm.noalias}, %b: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {mlfuse.kernel} {
// CHECK-NEXT:    [[C3:%.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    [[PF:%.*]] = llvm.getelementptr inbounds %f{{\[}}[[C3]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    [[X:%.*]] = llvm.load [[PF]] : !llvm.ptr -> f32
// CHECK-NEXT:    [[PD:%.*]] = llvm.getelementptr inbounds %d{{\[}}[[C3]]] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:    [[Y:%.*]] = llvm.load [[PD]] : !llvm.ptr -> f64
// CHECK-NEXT:    [[PI:%.*]] = llvm.getelementptr inbounds %i{{\[}}[[C3]]] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// CHECK-NEXT:    [[N:%.*]] = llvm.load [[PI]] : !llvm.ptr -> i32
// CHECK-NEXT:    [[PB:%.*]] = llvm.getelementptr inbounds %b{{\[}}[[C3]]] : (!llvm.ptr, i64) -> !llvm.ptr, i1
// CHECK-NEXT:    [[P:%.*]] = llvm.load [[PB]] : !llvm.ptr -> i1
// CHECK-NEXT:    [[V0:%.*]] = llvm.fadd [[X]], [[X]] {fastmathFlags = #llvm.fastmath<nnan,ninf>} : f32
// CHECK-NEXT:    [[V1:%.*]] = llvm.fmul [[V0]], [[X]] {fastmathFlags = #llvm.fastmath<fast>} : f32
// CHECK-NEXT:    [[V2:%.*]] = llvm.fsub [[V1]], [[X]] : f32
// CHECK-NEXT:    [[V3:%.*]] = llvm.fdiv [[V2]], [[X]] : f32
// CHECK-NEXT:    [[V4:%.*]] = llvm.fneg [[V3]] : f32
// CHECK-NEXT:    [[V5:%.*]] = llvm.call_intrinsic "llvm.maximum.f32"([[V4]], [[X]]) : (f32, f32) -> f32
// CHECK-NEXT:    [[V6:%.*]] = llvm.call_intrinsic "llvm.minimum.f32"([[V5]], [[X]]) : (f32, f32) -> f32
// CHECK-NEXT:    [[V7:%.*]] = llvm.call_intrinsic "llvm.exp.f32"([[V6]]) : (f32) -> f32
// CHECK-NEXT:    [[V8:%.*]] = llvm.call_intrinsic "llvm.sqrt.f32"([[V7]]) : (f32) -> f32
// CHECK-NEXT:    [[V9:%.*]] = llvm.intr.fma([[V8]], [[X]], [[X]]) : (f32, f32, f32) -> f32
// CHECK-NEXT:    [[V10:%.*]] = llvm.call_intrinsic "llvm.fabs.f32"([[V9]]) : (f32) -> f32
// CHECK-NEXT:    [[V11:%.*]] = llvm.fpext [[V10]] : f32 to f64
// CHECK-NEXT:    [[V12:%.*]] = llvm.fadd [[V11]], [[Y]] : f64
// CHECK-NEXT:    [[V13:%.*]] = llvm.fptrunc [[V12]] : f64 to f32
// CHECK-NEXT:    [[V14:%.*]] = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"([[V13]]) : (f32) -> i32
// CHECK-NEXT:    [[V15:%.*]] = llvm.call_intrinsic "llvm.smax.i32"([[V14]], [[N]]) : (i32, i32) -> i32
// CHECK-NEXT:    [[V16:%.*]] = llvm.sdiv [[V15]], [[N]] : i32
// CHECK-NEXT:    [[V17:%.*]] = llvm.srem [[V16]], [[N]] : i32
// CHECK-NEXT:    [[NOPOISON:%.*]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT:    [[V18:%.*]] = llvm.call_intrinsic "llvm.abs.i32"([[V17]], [[NOPOISON]]) : (i32, i1) -> i32
// CHECK-NEXT:    [[V19:%.*]] = llvm.sitofp [[V18]] : i32 to f32
// CHECK-NEXT:    [[V20:%.*]] = llvm.fcmp "une" [[V19]], [[X]] : f32
// CHECK-NEXT:    [[V21:%.*]] = llvm.icmp "sge" [[V18]], [[N]] : i32
// CHECK-NEXT:    [[V22:%.*]] = llvm.or [[V20]], [[V21]] : i1
// CHECK-NEXT:    [[TRUE:%.*]] = llvm.mlir.constant(true) : i1
// CHECK-NEXT:    [[V23:%.*]] = llvm.xor [[V22]], [[TRUE]] : i1
// CHECK-NEXT:    [[V24:%.*]] = llvm.and [[V23]], [[P]] : i1
// CHECK-NEXT:    [[FONE:%.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT:    [[FZERO:%.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT:    [[V25:%.*]] = llvm.select [[V24]], [[FONE]], [[FZERO]] : i1, f32
// CHECK-NEXT:    [[V26:%.*]] = llvm.zext [[V24]] : i1 to i32
// CHECK-NEXT:    [[V27:%.*]] = llvm.select [[V24]], [[V26]], [[V18]] : i1, i32
// CHECK-NEXT:    [[SF:%.*]] = llvm.getelementptr inbounds %f{{\[}}[[C3]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store [[V25]], [[SF]] : f32, !llvm.ptr
// CHECK-NEXT:    [[SI:%.*]] = llvm.getelementptr inbounds %i{{\[}}[[C3]]] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// CHECK-NEXT:    llvm.store [[V27]], [[SI]] : i32, !llvm.ptr
// CHECK-NEXT:    [[SB:%.*]] = llvm.getelementptr inbounds %b{{\[}}[[C3]]] : (!llvm.ptr, i64) -> !llvm.ptr, i1
// CHECK-NEXT:    llvm.store [[V24]], [[SB]] : i1, !llvm.ptr
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }

func.func @ops(%f: memref<16xf32>, %d: memref<16xf64>, %i: memref<16xi32>, %b: memref<16xi1>, %lo: index, %hi: index) attributes {mlfuse.kernel} {
  %c3 = arith.constant 3 : index
  %x = memref.load %f[%c3] : memref<16xf32>
  %y = memref.load %d[%c3] : memref<16xf64>
  %n = memref.load %i[%c3] : memref<16xi32>
  %p = memref.load %b[%c3] : memref<16xi1>
  %0 = arith.addf %x, %x fastmath<nnan,ninf> : f32
  %1 = arith.mulf %0, %x fastmath<fast> : f32
  %2 = arith.subf %1, %x : f32
  %3 = arith.divf %2, %x : f32
  %4 = arith.negf %3 : f32
  %5 = arith.maximumf %4, %x : f32
  %6 = arith.minimumf %5, %x : f32
  %7 = math.exp %6 : f32
  %8 = math.sqrt %7 : f32
  %9 = math.fma %8, %x, %x : f32
  %10 = math.absf %9 : f32
  %11 = arith.extf %10 : f32 to f64
  %12 = arith.addf %11, %y : f64
  %13 = arith.truncf %12 : f64 to f32
  %14 = arith.fptosi %13 : f32 to i32
  %15 = arith.maxsi %14, %n : i32
  %16 = arith.divsi %15, %n : i32
  %17 = arith.remsi %16, %n : i32
  %18 = math.absi %17 : i32
  %19 = arith.sitofp %18 : i32 to f32
  %20 = arith.cmpf une, %19, %x : f32
  %21 = arith.cmpi sge, %18, %n : i32
  %22 = arith.ori %20, %21 : i1
  %true = arith.constant true
  %23 = arith.xori %22, %true : i1
  %24 = arith.andi %23, %p : i1
  %25 = arith.uitofp %24 : i1 to f32
  %26 = arith.extui %24 : i1 to i32
  %27 = arith.select %24, %26, %18 : i32
  memref.store %25, %f[%c3] : memref<16xf32>
  memref.store %27, %i[%c3] : memref<16xi32>
  memref.store %24, %b[%c3] : memref<16xi1>
  func.return
}

// -----

// Functions not marked mlfuse.kernel are not converted.

// CHECK-LABEL: func.func @not_a_kernel(%x: memref<4xf32>) -> f32 {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %v = memref.load %x[%c0] : memref<4xf32>
// CHECK-NEXT:    %w = arith.addf %v, %v : f32
// CHECK-NEXT:    func.return %w : f32

func.func @not_a_kernel(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %w = arith.addf %v, %v : f32
  func.return %w : f32
}

// -----

// Negative cases (printed by --verify-diagnostics).

// CHECK: convert-loops-to-llvm: uitofp is only lowered from i1

func.func @uitofp_i32(%out: memref<4xf32>, %x: memref<4xi32>, %lo: index, %hi: index) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xi32>
  %w = arith.uitofp %v : i32 to f32
  memref.store %w, %out[%c0] : memref<4xf32>
  func.return
}

// -----

// index_cast: i64 <-> index is free; narrower or wider integers truncate or sign-extend.
// CHECK-LABEL: llvm.func @index_cast
// CHECK:         %[[V:.*]] = llvm.trunc %{{.*}} : i64 to i32
// CHECK:         llvm.sext %[[V]] : i32 to i64
func.func @index_cast(%out: memref<4xi32>, %lo: index, %hi: index) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %v = arith.index_cast %lo : index to i32
  %w = arith.index_cast %v : i32 to index
  %u = arith.index_cast %w : index to i32
  memref.store %u, %out[%c0] : memref<4xi32>
  func.return
}

// -----

// CHECK: convert-loops-to-llvm: cannot lower 'arith.ceildivsi' (lower it to func/cf/arith/math/memref first)

func.func @ceildiv(%out: memref<4xindex>, %lo: index, %hi: index) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %v = arith.ceildivsi %lo, %hi : index
  memref.store %v, %out[%c0] : memref<4xindex>
  func.return
}

// -----

// A GPU kernel's gpu ops are lowered by the target first.
// CHECK: convert-loops-to-llvm: cannot lower 'gpu.thread_id' (a GPU kernel: run convert-gpu-to-nvvm first)

func.func @gpu_ids(%out: memref<4xf32>) attributes {mlfuse.kernel} {
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %c = arith.constant 1.0 : f32
  memref.store %c, %out[%t] : memref<4xf32>
  func.return
}

// -----

// The constant fcmp predicates need no compare (regression: they once failed
// to lower, and xDSL's LLVM translation cannot print them).
// CHECK-LABEL: llvm.func @cmpf_constant_predicates
// CHECK-NOT:     llvm.fcmp
// CHECK-DAG:     %[[F:.*]] = llvm.mlir.constant(false) : i1
// CHECK-DAG:     %[[T:.*]] = llvm.mlir.constant(true) : i1
// CHECK:         llvm.or %[[F]], %[[T]] : i1
func.func @cmpf_constant_predicates(%a: f32, %b: f32) attributes {mlfuse.kernel} {
  %0 = arith.cmpf false, %a, %b : f32
  %1 = arith.cmpf true, %a, %b : f32
  %2 = arith.ori %0, %1 : i1
  func.return
}

// -----

// Vectors (from a kernel's vector loop): loads and stores of whole vectors
// assume only the element's alignment (buffers are element-aligned); a
// broadcast is an insertelement and a zero-mask shufflevector; an extract is
// a one-lane shufflevector bitcast to the scalar; intrinsics get vector suffixes.
// CHECK-LABEL: llvm.func @vectors(
// CHECK:         [[P:%.*]] = llvm.getelementptr inbounds %x[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    [[V:%.*]] = llvm.load [[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NEXT:    [[U:%.*]] = llvm.mlir.undef : vector<4xf32>
// CHECK-NEXT:    [[Z:%.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    [[I:%.*]] = llvm.insertelement %s, [[U]]{{\[}}[[Z]] : i32] : vector<4xf32>
// CHECK-NEXT:    [[B:%.*]] = llvm.shufflevector [[I]], [[U]] [0, 0, 0, 0] : vector<4xf32>
// CHECK-NEXT:    [[M:%.*]] = llvm.call_intrinsic "llvm.maximum.v4f32"([[V]], [[B]]) : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK-NEXT:    [[TWO:%.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:    [[W:%.*]] = llvm.insertelement %s, [[M]]{{\[}}[[TWO]] : i32] : vector<4xf32>
// CHECK-NEXT:    [[H:%.*]] = llvm.shufflevector [[W]], [[W]] [2, 3] : vector<4xf32>
// CHECK-NEXT:    [[L:%.*]] = llvm.shufflevector [[H]], [[H]] [1] : vector<2xf32>
// CHECK-NEXT:    [[E:%.*]] = llvm.bitcast [[L]] : vector<1xf32> to f32
// CHECK:         llvm.store [[W]], {{%.*}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
// CHECK:         llvm.store [[E]], {{%.*}} : f32, !llvm.ptr
func.func @vectors(%out: memref<8xf32>, %x: memref<8xf32>, %i: index, %s: f32) attributes {mlfuse.kernel} {
  %v = vector.load %x[%i] : memref<8xf32>, vector<4xf32>
  %b = vector.broadcast %s : f32 to vector<4xf32>
  %m = arith.maximumf %v, %b : vector<4xf32>
  %w = vector.insert %s, %m [2] : f32 into vector<4xf32>
  %h = vector.shuffle %w, %w [2, 3] : vector<4xf32>, vector<4xf32>
  %e = vector.extract %h[1] : f32 from vector<2xf32>
  vector.store %w, %out[%i] : memref<8xf32>, vector<4xf32>
  memref.store %e, %out[%i] : memref<8xf32>
  func.return
}

// -----

// math.powf is a call of the intrinsic named with its type, so a scalar and a
// vector power in one kernel are two declarations (an untyped llvm.pow would be
// declared once, with the first width, and the second call would mismatch it).

// CHECK-LABEL: llvm.func @pow_widths
// CHECK:         llvm.call_intrinsic "llvm.pow.v4f64"(%{{.*}}, %{{.*}}) : (vector<4xf64>, vector<4xf64>) -> vector<4xf64>
// CHECK:         llvm.call_intrinsic "llvm.pow.f64"(%{{.*}}, %{{.*}}) : (f64, f64) -> f64

func.func @pow_widths(%out: memref<4xf64>, %x: memref<4xf64>, %lo: index, %hi: index) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %e0 = arith.constant 3.500000e+00 : f64
  %e = vector.broadcast %e0 : f64 to vector<4xf64>
  %s = arith.constant 2.857000e-01 : f64
  %v = vector.load %x[%c0] : memref<4xf64>, vector<4xf64>
  %p = math.powf %v, %e : vector<4xf64>
  vector.store %p, %out[%c0] : memref<4xf64>, vector<4xf64>
  %a = memref.load %x[%c0] : memref<4xf64>
  %q = math.powf %a, %s : f64
  memref.store %q, %out[%c0] : memref<4xf64>
  func.return
}
