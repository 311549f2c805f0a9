// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p convert-parallel-to-cpu | filecheck %s --enable-var-scope

// convert-parallel-to-cpu: each kernel gets %lo and %hi index arguments and
// its scf.parallel becomes `scf.for %p = %lo to %hi`, one chunk of
// [0, mlfuse.parallel_extent) per call. Extra dims are delinearized from %p
// (divsi/remsi); the last parallel dim stays an inner scf.for. mlfuse.work
// counts the innermost loop iterations of a whole launch (the runtime's
// estimate of the kernel's work, for choosing a thread count).

// A 1-D parallel loop becomes the chunk loop itself: %p is the index.

// CHECK-LABEL: func.func @one(%out: memref<4xf32>, %x: memref<4xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64, mlfuse.work = 4 : i64} {
// CHECK:         [[ONE:%[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %p = %lo to %hi step [[ONE]] {
// CHECK-NEXT:      [[V:%.*]] = memref.load %x[%p] : memref<4xf32>
// CHECK-NEXT:      memref.store [[V]], %out[%p] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NOT:     scf.parallel

func.func @one(%out: memref<4xf32>, %x: memref<4xf32>) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// 2-D: the chunk loop runs over the rows (extent 4), the last dim becomes an
// inner scf.for over [0, 8) so the innermost loop stays contiguous.

// CHECK-LABEL: func.func @two(%out: memref<32xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64, mlfuse.work = 32 : i64} {
// CHECK:         [[ZERO:%[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    [[ONE:%.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %p = %lo to %hi step [[ONE]] {
// CHECK-NEXT:      [[UB:%.*]] = arith.constant 8 : index
// CHECK-NEXT:      scf.for [[J:%.*]] = [[ZERO]] to [[UB]] step [[ONE]] {
// CHECK-NEXT:        [[R:%.*]] = arith.muli %p, %c8 : index
// CHECK-NEXT:        [[O:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:        memref.store %f, %out{{\[}}[[O]]] : memref<32xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

func.func @two(%out: memref<32xf32>) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %c0, %c4, %c8, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %r = arith.muli %i, %c8 : index
    %o = arith.addi %r, %j : index
    memref.store %f, %out[%o] : memref<32xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// -----

// 3-D [2, 3, 4]: %p runs over the 2*3 outer points (extent 6) and is
// delinearized row-major, i = p / 3, j = p % 3; k is the inner loop.

// CHECK-LABEL: func.func @three(%out: memref<24xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel, mlfuse.parallel_extent = 6 : i64, mlfuse.work = 24 : i64} {
// CHECK:         [[ZERO:%[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    [[ONE:%.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %p = %lo to %hi step [[ONE]] {
// CHECK-NEXT:      [[C3:%.*]] = arith.constant 3 : index
// CHECK-NEXT:      [[I:%.*]] = arith.divsi %p, [[C3]] : index
// CHECK-NEXT:      [[C3B:%.*]] = arith.constant 3 : index
// CHECK-NEXT:      [[J:%.*]] = arith.remsi %p, [[C3B]] : index
// CHECK-NEXT:      [[C4:%.*]] = arith.constant 4 : index
// CHECK-NEXT:      scf.for [[K:%.*]] = [[ZERO]] to [[C4]] step [[ONE]] {
// CHECK-NEXT:        [[A:%.*]] = arith.muli [[I]], %c12 : index
// CHECK-NEXT:        [[B:%.*]] = arith.muli [[J]], %c4 : index
// CHECK-NEXT:        [[AB:%.*]] = arith.addi [[A]], [[B]] : index
// CHECK-NEXT:        [[O:%.*]] = arith.addi [[AB]], [[K]] : index
// CHECK-NEXT:        memref.store %f, %out{{\[}}[[O]]] : memref<24xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }

func.func @three(%out: memref<24xf32>) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c12 = arith.constant 12 : index
  %f = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %c0, %c0, %c2, %c3, %c4, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
  ^bb0(%i: index, %j: index, %k: index):
    %a = arith.muli %i, %c12 : index
    %b = arith.muli %j, %c4 : index
    %ab = arith.addi %a, %b : index
    %o = arith.addi %ab, %k : index
    memref.store %f, %out[%o] : memref<24xf32>
    scf.reduce
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  func.return
}

// -----

// 4-D [2, 3, 4, 5]: extent 2*3*4 = 24; i = p / 12, j = (p / 4) % 3, k = p % 4,
// and the last dim (5) is the inner loop.

// CHECK-LABEL: func.func @four(%out: memref<120xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel, mlfuse.parallel_extent = 24 : i64, mlfuse.work = 120 : i64} {
// CHECK:         scf.for %p = %lo to %hi step {{%.*}} {
// CHECK-NEXT:      [[C12:%.*]] = arith.constant 12 : index
// CHECK-NEXT:      [[I:%.*]] = arith.divsi %p, [[C12]] : index
// CHECK-NEXT:      [[C4:%.*]] = arith.constant 4 : index
// CHECK-NEXT:      [[Q:%.*]] = arith.divsi %p, [[C4]] : index
// CHECK-NEXT:      [[C3:%.*]] = arith.constant 3 : index
// CHECK-NEXT:      [[J:%.*]] = arith.remsi [[Q]], [[C3]] : index
// CHECK-NEXT:      [[C4B:%.*]] = arith.constant 4 : index
// CHECK-NEXT:      [[K:%.*]] = arith.remsi %p, [[C4B]] : index
// CHECK-NEXT:      [[C5:%.*]] = arith.constant 5 : index
// CHECK-NEXT:      scf.for [[L:%.*]] = {{%.*}} to [[C5]] step {{%.*}} {
// CHECK-NEXT:        [[A:%.*]] = arith.addi [[I]], [[J]] : index
// CHECK-NEXT:        [[B:%.*]] = arith.addi [[A]], [[K]] : index
// CHECK-NEXT:        [[O:%.*]] = arith.addi [[B]], [[L]] : index
// CHECK-NEXT:        memref.store %f, %out{{\[}}[[O]]] : memref<120xf32>

func.func @four(%out: memref<120xf32>) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %f = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %c0, %c0, %c0, %c2, %c3, %c4, %c5, %c1, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 4, 4, 4, 0>}> ({
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    %a = arith.addi %i, %j : index
    %b = arith.addi %a, %k : index
    %o = arith.addi %b, %l : index
    memref.store %f, %out[%o] : memref<120xf32>
    scf.reduce
  }) : (index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  func.return
}

// -----

// A reduce loop inside the parallel body moves into the chunk loop intact.

// CHECK-LABEL: func.func @rows(%out: memref<4xf32>, %x: memref<32xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64, mlfuse.work = 32 : i64} {
// CHECK:         scf.for %p = %lo to %hi step {{%.*}} {
// CHECK-NEXT:      [[S:%.*]] = scf.for [[J:%.*]] = %c0 to %c8 step %c1 iter_args([[ACC:%.*]] = %zero) -> (f32) {
// CHECK-NEXT:        [[R:%.*]] = arith.muli %p, %c8 : index
// CHECK-NEXT:        [[O:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:        [[V:%.*]] = memref.load %x{{\[}}[[O]]] : memref<32xf32>
// CHECK-NEXT:        [[N:%.*]] = arith.addf [[ACC]], [[V]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield [[N]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store [[S]], %out[%p] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

func.func @rows(%out: memref<4xf32>, %x: memref<32xf32>) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %r = arith.muli %i, %c8 : index
      %o = arith.addi %r, %j : index
      %v = memref.load %x[%o] : memref<32xf32>
      %n = arith.addf %acc, %v fastmath<reassoc> : f32
      scf.yield %n : f32
    }
    memref.store %s, %out[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Work adds up over sibling loops and multiplies through nested ones: per row,
// a loop of 8 around a loop of 2 (16) then a loop of 8 (8): 4 * (16 + 8) = 96.

// CHECK-LABEL: func.func @work(%out: memref<4xf32>, %x: memref<32xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64, mlfuse.work = 96 : i64} {

func.func @work(%out: memref<4xf32>, %x: memref<32xf32>) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    scf.for %j = %c0 to %c8 step %c1 {
      scf.for %k = %c0 to %c2 step %c1 {
        memref.store %f, %out[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      memref.store %f, %out[%i] : memref<4xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Functions not marked mlfuse.kernel are left alone.

// CHECK-LABEL: func.func @not_a_kernel(%out: memref<4xf32>) {
// CHECK-NOT:     %lo
// CHECK-NOT:     mlfuse.parallel_extent
// CHECK:         "scf.parallel"(%c0, %c4, %c1)
// CHECK-NEXT:    ^bb0(%i: index):
// CHECK-NEXT:      memref.store %f, %out[%i] : memref<4xf32>
// CHECK-NEXT:      scf.reduce

func.func @not_a_kernel(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    memref.store %f, %out[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Negative cases (printed by --verify-diagnostics, one per split).

// CHECK: convert-parallel-to-cpu: parallel loop bounds must be constants

func.func @dynamic(%out: memref<4xf32>, %n: index) attributes {mlfuse.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    memref.store %f, %out[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// CHECK: convert-parallel-to-cpu: expected 0-based unit-step loops

func.func @offset(%out: memref<4xf32>) attributes {mlfuse.kernel} {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  "scf.parallel"(%c1, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    memref.store %f, %out[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
