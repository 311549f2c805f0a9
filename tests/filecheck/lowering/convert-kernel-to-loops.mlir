// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p convert-kernel-to-loops | filecheck %s --enable-var-scope

// convert-kernel-to-loops gives each kernel.func the loops its plan says: one
// scf.parallel over the plan's parallel dims, scf.for loops carrying the
// accumulator of each reduce, scf.for store loops over the remaining dims,
// serial loops nested in plan order. Kernels written here without a plan get
// the default one (parallel over the dims every reduce and store varies
// along). Every value is emitted once per loop that needs it, in the
// outermost loop covering its domain. Constants go to the top of the function
// (in no promised order: CHECK-DAG).

// An elementwise kernel: one 2-D scf.parallel, loads and the store at
// offset i*8 + j. The schedule is not a kernel and stays as it is.

// CHECK-LABEL: func.func @ew(%out: memref<32xf32>, %a: memref<32xf32>, %b: memref<32xf32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK:         "scf.parallel"([[C0]], [[C0]], [[C4]], [[C8]], [[C1]], [[C1]]) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
// CHECK-NEXT:    ^bb0([[I:%.*]]: index, [[J:%.*]]: index):
// CHECK-NEXT:      [[R:%.*]] = arith.muli [[I]], [[C8]] : index
// CHECK-NEXT:      [[OFF:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:      [[A:%.*]] = memref.load %a{{\[}}[[OFF]]] : memref<32xf32>
// CHECK-NEXT:      [[R2:%.*]] = arith.muli [[I]], [[C8]] : index
// CHECK-NEXT:      [[OFF2:%.*]] = arith.addi [[R2]], [[J]] : index
// CHECK-NEXT:      [[B:%.*]] = memref.load %b{{\[}}[[OFF2]]] : memref<32xf32>
// CHECK-NEXT:      [[SUM:%.*]] = arith.addf [[A]], [[B]] : f32
// CHECK-NEXT:      [[R3:%.*]] = arith.muli [[I]], [[C8]] : index
// CHECK-NEXT:      [[OFF3:%.*]] = arith.addi [[R3]], [[J]] : index
// CHECK-NEXT:      memref.store [[SUM]], %out{{\[}}[[OFF3]]] : memref<32xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index, index, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @main(%in0: memref<32xf32>, %in1: memref<32xf32>) -> memref<32xf32> {
// CHECK-NEXT:    [[BUF:%.*]] = kernel.alloc : memref<32xf32>
// CHECK-NEXT:    kernel.launch @ew outs([[BUF]] : memref<32xf32>) ins(%in0 : memref<32xf32>, %in1 : memref<32xf32>)
// CHECK-NEXT:    func.return [[BUF]] : memref<32xf32>
kernel.func @ew outs(%out: memref<32xf32>) ins(%a: memref<32xf32>, %b: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %a <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.load %b <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %2 = arith.addf %0, %1 : f32
  kernel.store %out <[4, 8] strides [8, 1] offset 0>, %2 : memref<32xf32>
}
func.func @main(%in0: memref<32xf32>, %in1: memref<32xf32>) -> memref<32xf32> {
  %0 = kernel.alloc : memref<32xf32>
  kernel.launch @ew outs(%0 : memref<32xf32>) ins(%in0 : memref<32xf32>, %in1 : memref<32xf32>)
  func.return %0 : memref<32xf32>
}

// -----

// A row sum: parallel over the rows, an scf.for over the row carrying the
// accumulator (initialized with 0.0), combined with fastmath<reassoc>; the
// result is stored once per row, after the loop.

// CHECK-LABEL: func.func @rowsum(%out: memref<4xf32>, %x: memref<32xf32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK-DAG:     [[ZERO:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         "scf.parallel"([[C0]], [[C4]], [[C1]]) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0([[I:%.*]]: index):
// CHECK-NEXT:      [[RES:%.*]] = scf.for [[J:%.*]] = [[C0]] to [[C8]] step [[C1]] iter_args([[ACC:%.*]] = [[ZERO]]) -> (f32) {
// CHECK-NEXT:        [[R:%.*]] = arith.muli [[I]], [[C8]] : index
// CHECK-NEXT:        [[OFF:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:        [[X:%.*]] = memref.load %x{{\[}}[[OFF]]] : memref<32xf32>
// CHECK-NEXT:        [[NEW:%.*]] = arith.addf [[ACC]], [[X]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:        scf.yield [[NEW]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store [[RES]], %out{{\[}}[[I]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    })
kernel.func @rowsum outs(%out: memref<4xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[4, 8] strides [1, 0] offset 0>, %1 : memref<4xf32>
}

// -----

// max starts from -inf (0xff800000) and combines with maximumf.

// CHECK-LABEL: func.func @rowmax
// CHECK-DAG:     [[NEGINF:%.*]] = arith.constant 0xff800000 : f32
// CHECK:         scf.for {{%.*}} = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[ACC:%.*]] = [[NEGINF]]) -> (f32) {
// CHECK:           [[X:%.*]] = memref.load %x
// CHECK-NEXT:      [[NEW:%.*]] = arith.maximumf [[ACC]], [[X]] fastmath<reassoc> : f32
// CHECK-NEXT:      scf.yield [[NEW]] : f32
kernel.func @rowmax outs(%out: memref<4xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce max %0 [1] : f32
  kernel.store %out <[4, 8] strides [1, 0] offset 0>, %1 : memref<4xf32>
}

// -----

// mul starts from 1.0.

// CHECK-LABEL: func.func @rowprod
// CHECK-DAG:     [[ONE:%.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         scf.for {{%.*}} = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[ACC:%.*]] = [[ONE]]) -> (f32) {
// CHECK:           [[X:%.*]] = memref.load %x
// CHECK-NEXT:      [[NEW:%.*]] = arith.mulf [[ACC]], [[X]] fastmath<reassoc> : f32
// CHECK-NEXT:      scf.yield [[NEW]] : f32
kernel.func @rowprod outs(%out: memref<4xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce mul %0 [1] : f32
  kernel.store %out <[4, 8] strides [1, 0] offset 0>, %1 : memref<4xf32>
}

// -----

// A column sum: the parallel loop runs over the kept dim 1 (extent 8), the
// reduce loop over dim 0 (extent 4), reading x[k*8 + j].

// CHECK-LABEL: func.func @colsum
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK:         "scf.parallel"([[C0]], [[C8]], [[C1]])
// CHECK-NEXT:    ^bb0([[J:%.*]]: index):
// CHECK-NEXT:      [[RES:%.*]] = scf.for [[K:%.*]] = [[C0]] to [[C4]] step [[C1]] iter_args([[ACC:%.*]] = {{%.*}}) -> (f32) {
// CHECK-NEXT:        [[R:%.*]] = arith.muli [[K]], [[C8]] : index
// CHECK-NEXT:        [[OFF:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:        memref.load %x{{\[}}[[OFF]]]
// CHECK:           }
// CHECK-NEXT:      memref.store [[RES]], %out{{\[}}[[J]]] : memref<8xf32>
kernel.func @colsum outs(%out: memref<8xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce add %0 [0] : f32
  kernel.store %out <[4, 8] strides [0, 1] offset 0>, %1 : memref<8xf32>
}

// -----

// A reduce over two axes (0 and 2 of [2, 3, 4]): two nested scf.for loops,
// the inner one starting from the outer one's accumulator.

// CHECK-LABEL: func.func @reduce_two_axes
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C2:%.*]] = arith.constant 2 : index
// CHECK-DAG:     [[C3:%.*]] = arith.constant 3 : index
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK-DAG:     [[C12:%.*]] = arith.constant 12 : index
// CHECK-DAG:     [[ZERO:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         "scf.parallel"([[C0]], [[C3]], [[C1]])
// CHECK-NEXT:    ^bb0([[J:%.*]]: index):
// CHECK-NEXT:      [[RES:%.*]] = scf.for [[I:%.*]] = [[C0]] to [[C2]] step [[C1]] iter_args([[A0:%.*]] = [[ZERO]]) -> (f32) {
// CHECK-NEXT:        [[IN:%.*]] = scf.for [[K:%.*]] = [[C0]] to [[C4]] step [[C1]] iter_args([[A1:%.*]] = [[A0]]) -> (f32) {
// CHECK-NEXT:          [[T0:%.*]] = arith.muli [[I]], [[C12]] : index
// CHECK-NEXT:          [[T1:%.*]] = arith.muli [[J]], [[C4]] : index
// CHECK-NEXT:          [[T2:%.*]] = arith.addi [[T0]], [[T1]] : index
// CHECK-NEXT:          [[OFF:%.*]] = arith.addi [[T2]], [[K]] : index
// CHECK-NEXT:          [[X:%.*]] = memref.load %x{{\[}}[[OFF]]] : memref<24xf32>
// CHECK-NEXT:          [[NEW:%.*]] = arith.addf [[A1]], [[X]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:          scf.yield [[NEW]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.yield [[IN]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store [[RES]], %out{{\[}}[[J]]] : memref<3xf32>
kernel.func @reduce_two_axes outs(%out: memref<3xf32>) ins(%x: memref<24xf32>) space [2, 3, 4] {
  %0 = kernel.load %x <[2, 3, 4] strides [12, 4, 1] offset 0> : memref<24xf32>
  %1 = kernel.reduce add %0 [0, 2] : f32
  kernel.store %out <[2, 3, 4] strides [0, 1, 0] offset 0>, %1 : memref<3xf32>
}

// -----

// Softmax in one kernel: the max loop, the sum loop, then the store loop, all
// in the same parallel body. The max is computed once: the sum and store
// loops use its result and contain no maximumf; the sum is used by the store
// loop, not recomputed there.

// CHECK-LABEL: func.func @softmax(%out: memref<32xf32>, %x: memref<32xf32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK-DAG:     [[ZERO:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[NEGINF:%.*]] = arith.constant 0xff800000 : f32
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^bb0([[I:%.*]]: index):
// CHECK-NEXT:      [[MAX:%.*]] = scf.for [[J:%.*]] = [[C0]] to [[C8]] step [[C1]] iter_args([[M:%.*]] = [[NEGINF]]) -> (f32) {
// CHECK-NEXT:        arith.muli [[I]], [[C8]]
// CHECK-NEXT:        [[OFF:%.*]] = arith.addi {{%.*}}, [[J]]
// CHECK-NEXT:        [[X:%.*]] = memref.load %x{{\[}}[[OFF]]]
// CHECK-NEXT:        [[M2:%.*]] = arith.maximumf [[M]], [[X]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield [[M2]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      [[SUM:%.*]] = scf.for [[J2:%.*]] = [[C0]] to [[C8]] step [[C1]] iter_args([[S:%.*]] = [[ZERO]]) -> (f32) {
// CHECK-NEXT:        arith.muli [[I]], [[C8]]
// CHECK-NEXT:        [[OFF2:%.*]] = arith.addi {{%.*}}, [[J2]]
// CHECK-NEXT:        [[X2:%.*]] = memref.load %x{{\[}}[[OFF2]]]
// CHECK-NEXT:        [[D2:%.*]] = arith.subf [[X2]], [[MAX]] : f32
// CHECK-NEXT:        [[E2:%.*]] = math.exp [[D2]] : f32
// CHECK-NEXT:        [[S2:%.*]] = arith.addf [[S]], [[E2]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:        scf.yield [[S2]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for [[J3:%.*]] = [[C0]] to [[C8]] step [[C1]] {
// CHECK-NEXT:        arith.muli [[I]], [[C8]]
// CHECK-NEXT:        [[OFF3:%.*]] = arith.addi {{%.*}}, [[J3]]
// CHECK-NEXT:        [[X3:%.*]] = memref.load %x{{\[}}[[OFF3]]]
// CHECK-NEXT:        [[D3:%.*]] = arith.subf [[X3]], [[MAX]] : f32
// CHECK-NEXT:        [[E3:%.*]] = math.exp [[D3]] : f32
// CHECK-NEXT:        [[Y:%.*]] = arith.divf [[E3]], [[SUM]] : f32
// CHECK-NEXT:        arith.muli [[I]], [[C8]]
// CHECK-NEXT:        [[OFF4:%.*]] = arith.addi {{%.*}}, [[J3]]
// CHECK-NEXT:        memref.store [[Y]], %out{{\[}}[[OFF4]]] : memref<32xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    })
// CHECK-NOT:     arith.maximumf
kernel.func @softmax outs(%out: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  %3 = math.exp %2 : f32
  %4 = kernel.reduce add %3 [1] : f32
  %5 = arith.divf %3, %4 : f32
  kernel.store %out <[4, 8] strides [8, 1] offset 0>, %5 : memref<32xf32>
}

// -----

// A reduce broadcast back (x - max(x)): the max loop runs once per row,
// before the store loop, which only subtracts.

// CHECK-LABEL: func.func @broadcast_back
// CHECK:         ^bb0([[I:%.*]]: index):
// CHECK-NEXT:      [[MAX:%.*]] = scf.for
// CHECK:             arith.maximumf
// CHECK:           }
// CHECK-NEXT:      scf.for [[J:%.*]] = {{.*}} {
// CHECK-NOT:         arith.maximumf
// CHECK:             [[X:%.*]] = memref.load %x
// CHECK-NEXT:        [[Y:%.*]] = arith.subf [[X]], [[MAX]] : f32
// CHECK-NOT:         arith.maximumf
// CHECK:             memref.store [[Y]], %out
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
kernel.func @broadcast_back outs(%out: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  kernel.store %out <[4, 8] strides [8, 1] offset 0>, %2 : memref<32xf32>
}

// -----

// A reduce result stored at full level (every element of a row gets the row
// sum): the sum is computed before the store loop, which stores it 8 times.

// CHECK-LABEL: func.func @sum_stored_full
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK:         ^bb0([[I:%.*]]: index):
// CHECK-NEXT:      [[SUM:%.*]] = scf.for
// CHECK:             arith.addf {{.*}} fastmath<reassoc,contract>
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for [[J:%.*]] = [[C0]] to [[C8]] step [[C1]] {
// CHECK-NEXT:        [[R:%.*]] = arith.muli [[I]], [[C8]] : index
// CHECK-NEXT:        [[OFF:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:        memref.store [[SUM]], %out{{\[}}[[OFF]]] : memref<32xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
kernel.func @sum_stored_full outs(%out: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// -----

// Two outputs at two levels: x*2 at full level (a store loop), its row sum at
// reduced level (after the reduce loop), in program order.

// CHECK-LABEL: func.func @two_levels(%full: memref<32xf32>, %red: memref<4xf32>, %x: memref<32xf32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     %c = arith.constant 2.000000e+00 : f32
// CHECK-DAG:     [[ZERO:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         ^bb0([[I:%.*]]: index):
// CHECK-NEXT:      scf.for [[J:%.*]] = {{.*}} {
// CHECK:             [[X:%.*]] = memref.load %x
// CHECK-NEXT:        [[Y:%.*]] = arith.mulf [[X]], %c : f32
// CHECK:             memref.store [[Y]], %full{{\[}}{{.*}}] : memref<32xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      [[SUM:%.*]] = scf.for [[K:%.*]] = {{.*}} iter_args([[ACC:%.*]] = [[ZERO]]) -> (f32) {
// CHECK:             [[X2:%.*]] = memref.load %x
// CHECK-NEXT:        [[Y2:%.*]] = arith.mulf [[X2]], %c : f32
// CHECK-NEXT:        [[NEW:%.*]] = arith.addf [[ACC]], [[Y2]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:        scf.yield [[NEW]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store [[SUM]], %red{{\[}}[[I]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
kernel.func @two_levels outs(%full: memref<32xf32>, %red: memref<4xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %c = arith.constant 2.000000e+00 : f32
  %1 = arith.mulf %0, %c : f32
  kernel.store %full <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
  %2 = kernel.reduce add %1 [1] : f32
  kernel.store %red <[4, 8] strides [1, 0] offset 0>, %2 : memref<4xf32>
}

// -----

// A masked load (pad by one column on each side): the offset i*8 + j - 1 is
// only used where 1 <= j < 9; elsewhere the load reads offset 0 and the value
// is replaced by 0.0.

// CHECK-LABEL: func.func @pad(%out: memref<40xf32>, %x: memref<32xf32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK-DAG:     [[C9:%.*]] = arith.constant 9 : index
// CHECK-DAG:     [[C10:%.*]] = arith.constant 10 : index
// CHECK-DAG:     [[CM1:%.*]] = arith.constant -1 : index
// CHECK-DAG:     [[ZERO:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         ^bb0([[I:%.*]]: index, [[J:%.*]]: index):
// CHECK-NEXT:      [[GE:%.*]] = arith.cmpi sge, [[J]], [[C1]] : index
// CHECK-NEXT:      [[LT:%.*]] = arith.cmpi slt, [[J]], [[C9]] : index
// CHECK-NEXT:      [[VALID:%.*]] = arith.andi [[GE]], [[LT]] : i1
// CHECK-NEXT:      [[R:%.*]] = arith.muli [[I]], [[C8]] : index
// CHECK-NEXT:      [[T:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:      [[OFF:%.*]] = arith.addi [[T]], [[CM1]] : index
// CHECK-NEXT:      [[SAFE:%.*]] = arith.select [[VALID]], [[OFF]], [[C0]] : index
// CHECK-NEXT:      [[X:%.*]] = memref.load %x{{\[}}[[SAFE]]] : memref<32xf32>
// CHECK-NEXT:      [[V:%.*]] = arith.select [[VALID]], [[X]], [[ZERO]] : f32
// CHECK-NEXT:      [[R2:%.*]] = arith.muli [[I]], [[C10]] : index
// CHECK-NEXT:      [[OFF2:%.*]] = arith.addi [[R2]], [[J]] : index
// CHECK-NEXT:      memref.store [[V]], %out{{\[}}[[OFF2]]] : memref<40xf32>
// CHECK-NEXT:      scf.reduce
kernel.func @pad outs(%out: memref<40xf32>) ins(%x: memref<32xf32>) space [4, 10] {
  %0 = kernel.load %x <[4, 10] strides [8, 1] offset -1 mask [[0, 4], [1, 9]]> : memref<32xf32>
  kernel.store %out <[4, 10] strides [10, 1] offset 0>, %0 : memref<40xf32>
}

// -----

// A stacked view (a transpose read back as a flat [32]): the flat index p is
// unraveled into (p / 8, p % 8) of the inner [4, 8] view with strides [1, 4].

// CHECK-LABEL: func.func @stacked
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK-DAG:     [[TWO:%.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         ^bb0([[P:%.*]]: index):
// CHECK-NEXT:      [[ROW:%.*]] = arith.divsi [[P]], [[C8]] : index
// CHECK-NEXT:      [[COL:%.*]] = arith.remsi [[P]], [[C8]] : index
// CHECK-NEXT:      [[T:%.*]] = arith.muli [[COL]], [[C4]] : index
// CHECK-NEXT:      [[OFF:%.*]] = arith.addi [[ROW]], [[T]] : index
// CHECK-NEXT:      [[X:%.*]] = memref.load %x{{\[}}[[OFF]]] : memref<32xf32>
// CHECK-NEXT:      [[Y:%.*]] = arith.mulf [[X]], [[TWO]] : f32
// CHECK-NEXT:      memref.store [[Y]], %out{{\[}}[[P]]] : memref<32xf32>
// CHECK-NEXT:      scf.reduce
kernel.func @stacked outs(%out: memref<32xf32>) ins(%x: memref<32xf32>) space [32] {
  %0 = kernel.load %x <[4, 8] strides [1, 4] offset 0 | [32] strides [1] offset 0> : memref<32xf32>
  %1 = arith.constant 2.000000e+00 : f32
  %2 = arith.mulf %0, %1 : f32
  kernel.store %out <[32] strides [1] offset 0>, %2 : memref<32xf32>
}

// -----

// kernel.valid of a masked constant (a padded ones tensor): the mask becomes
// an i1, no memory is read.

// CHECK-LABEL: func.func @valid(%out: memref<40xf32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C9:%.*]] = arith.constant 9 : index
// CHECK-DAG:     [[ONE:%.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     [[ZERO:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         ^bb0([[I:%.*]]: index, [[J:%.*]]: index):
// CHECK-NEXT:      [[GE:%.*]] = arith.cmpi sge, [[J]], [[C1]] : index
// CHECK-NEXT:      [[LT:%.*]] = arith.cmpi slt, [[J]], [[C9]] : index
// CHECK-NEXT:      [[VALID:%.*]] = arith.andi [[GE]], [[LT]] : i1
// CHECK-NOT:       memref.load
// CHECK:           [[V:%.*]] = arith.select [[VALID]], [[ONE]], [[ZERO]] : f32
// CHECK-NOT:       memref.load
// CHECK:           memref.store [[V]], %out
// CHECK-NEXT:      scf.reduce
kernel.func @valid outs(%out: memref<40xf32>) ins() space [4, 10] {
  %0 = arith.constant 1.000000e+00 : f32
  %1 = kernel.valid <[4, 10] strides [8, 1] offset -1 mask [[0, 4], [1, 9]]>
  %2 = arith.constant 0.000000e+00 : f32
  %3 = arith.select %1, %0, %2 : f32
  kernel.store %out <[4, 10] strides [10, 1] offset 0>, %3 : memref<40xf32>
}

// -----

// An integer max: the identity is INT32_MIN, the combine is maxsi without
// fast-math flags; the elementwise op on the result stays after the loop.

// CHECK-LABEL: func.func @imax(%out: memref<4xi32>, %x: memref<32xi32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     [[MIN:%.*]] = arith.constant -2147483648 : i32
// CHECK:         ^bb0([[I:%.*]]: index):
// CHECK-NEXT:      [[RES:%.*]] = scf.for {{%.*}} = {{.*}} iter_args([[ACC:%.*]] = [[MIN]]) -> (i32) {
// CHECK:             [[X:%.*]] = memref.load %x{{\[}}{{%.*}}] : memref<32xi32>
// CHECK-NEXT:        [[NEW:%.*]] = arith.maxsi [[ACC]], [[X]] : i32
// CHECK-NEXT:        scf.yield [[NEW]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      [[Y:%.*]] = arith.addi [[RES]], [[RES]] : i32
// CHECK-NEXT:      memref.store [[Y]], %out{{\[}}[[I]]] : memref<4xi32>
kernel.func @imax outs(%out: memref<4xi32>) ins(%x: memref<32xi32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xi32>
  %1 = kernel.reduce max %0 [1] : i32
  %2 = arith.addi %1, %1 : i32
  kernel.store %out <[4, 8] strides [1, 0] offset 0>, %2 : memref<4xi32>
}

// -----

// Bool (i1) buffers are loaded and stored as i1.

// CHECK-LABEL: func.func @bool(%out: memref<32xi1>, %x: memref<32xf32>, %m: memref<32xi1>) attributes {mlfuse.kernel} {
// CHECK:           [[X:%.*]] = memref.load %x{{\[}}{{%.*}}] : memref<32xf32>
// CHECK-NEXT:      [[LT:%.*]] = arith.cmpf olt, [[X]], %c : f32
// CHECK:           [[M:%.*]] = memref.load %m{{\[}}{{%.*}}] : memref<32xi1>
// CHECK-NEXT:      [[B:%.*]] = arith.andi [[LT]], [[M]] : i1
// CHECK:           memref.store [[B]], %out{{\[}}{{%.*}}] : memref<32xi1>
kernel.func @bool outs(%out: memref<32xi1>) ins(%x: memref<32xf32>, %m: memref<32xi1>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.load %m <[4, 8] strides [8, 1] offset 0> : memref<32xi1>
  %c = arith.constant 0.000000e+00 : f32
  %2 = arith.cmpf olt, %0, %c : f32
  %3 = arith.andi %2, %1 : i1
  kernel.store %out <[4, 8] strides [8, 1] offset 0>, %3 : memref<32xi1>
}

// -----

// A 0-d space: a one-iteration parallel loop, every access at offset 0.

// CHECK-LABEL: func.func @scalar(%out: memref<1xf32>, %x: memref<1xf32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[TWO:%.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         "scf.parallel"([[C0]], [[C1]], [[C1]]) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0({{%.*}}: index):
// CHECK-NEXT:      [[X:%.*]] = memref.load %x{{\[}}[[C0]]] : memref<1xf32>
// CHECK-NEXT:      [[Y:%.*]] = arith.mulf [[X]], [[TWO]] : f32
// CHECK-NEXT:      memref.store [[Y]], %out{{\[}}[[C0]]] : memref<1xf32>
// CHECK-NEXT:      scf.reduce
kernel.func @scalar outs(%out: memref<1xf32>) ins(%x: memref<1xf32>) space [] {
  %0 = kernel.load %x <[] strides [] offset 0> : memref<1xf32>
  %1 = arith.constant 2.000000e+00 : f32
  %2 = arith.mulf %0, %1 : f32
  kernel.store %out <[] strides [] offset 0>, %2 : memref<1xf32>
}

// -----

// A full reduction (x.sum()): no parallel dim is left, so the parallel loop
// has one iteration and the reduce loop runs over the whole buffer.

// CHECK-LABEL: func.func @full_reduce
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK:         "scf.parallel"([[C0]], [[C1]], [[C1]])
// CHECK-NEXT:    ^bb0({{%.*}}: index):
// CHECK-NEXT:      [[RES:%.*]] = scf.for [[K:%.*]] = [[C0]] to [[C4]] step [[C1]] iter_args([[ACC:%.*]] = {{%.*}}) -> (f32) {
// CHECK-NEXT:        [[X:%.*]] = memref.load %x{{\[}}[[K]]] : memref<4xf32>
// CHECK-NEXT:        [[NEW:%.*]] = arith.addf [[ACC]], [[X]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:        scf.yield [[NEW]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store [[RES]], %out{{\[}}[[C0]]] : memref<1xf32>
kernel.func @full_reduce outs(%out: memref<1xf32>) ins(%x: memref<4xf32>) space [4] {
  %0 = kernel.load %x <[4] strides [1] offset 0> : memref<4xf32>
  %1 = kernel.reduce add %0 [0] : f32
  kernel.store %out <[4] strides [0] offset 0>, %1 : memref<1xf32>
}

// -----

// Loop-invariant work is hoisted: the per-row bias load and its add sit in
// the parallel body, between the max loop and the store loop, not inside it.

// CHECK-LABEL: func.func @hoist(%out: memref<32xf32>, %x: memref<32xf32>, %bias: memref<4xf32>) attributes {mlfuse.kernel} {
// CHECK:         ^bb0([[I:%.*]]: index):
// CHECK-NEXT:      [[MAX:%.*]] = scf.for
// CHECK:           }
// CHECK-NEXT:      [[B:%.*]] = memref.load %bias{{\[}}[[I]]] : memref<4xf32>
// CHECK-NEXT:      [[B1:%.*]] = arith.addf [[B]], %c : f32
// CHECK-NEXT:      scf.for [[J:%.*]] = {{.*}} {
// CHECK-NOT:         %bias
// CHECK:             [[X:%.*]] = memref.load %x
// CHECK-NEXT:        [[D:%.*]] = arith.subf [[X]], [[MAX]] : f32
// CHECK-NEXT:        [[Y:%.*]] = arith.mulf [[D]], [[B1]] : f32
// CHECK-NOT:         %bias
// CHECK:             memref.store [[Y]], %out
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
kernel.func @hoist outs(%out: memref<32xf32>) ins(%x: memref<32xf32>, %bias: memref<4xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  %3 = kernel.load %bias <[4, 8] strides [1, 0] offset 0> : memref<4xf32>
  %c = arith.constant 1.000000e+00 : f32
  %4 = arith.addf %3, %c : f32
  %5 = arith.mulf %2, %4 : f32
  kernel.store %out <[4, 8] strides [8, 1] offset 0>, %5 : memref<32xf32>
}

// -----

// Guard: a reduce over i1 must not reach this pass. Lowered, a bool max
// would be arith.maxsi from `true` (as a signed i1, true = -1 < false = 0, so
// it computes "all" instead of numpy's "any"). The kernel verifier refuses
// it; the front end reduces bools as i32.

// CHECK:         Operation does not verify: kernel.reduce: cannot reduce i1 values
// CHECK-NOT:     arith.maxsi
kernel.func @bool_any outs(%out: memref<4xi1>) ins(%x: memref<32xi1>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xi1>
  %1 = kernel.reduce max %0 [1] : i1
  kernel.store %out <[4, 8] strides [1, 0] offset 0>, %1 : memref<4xi1>
}

// -----

// The lowering only reads the plan. The elementwise kernel @ew above gets
// the default plan [parallel 0, parallel 1]; written by hand as
// [parallel 1, serial 0], the same body runs the columns in parallel and the
// rows in a serial loop inside.

// CHECK-LABEL: func.func @cols_parallel(%out: memref<32xf32>, %a: memref<32xf32>) attributes {mlfuse.kernel} {
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK:         "scf.parallel"([[C0]], [[C8]], [[C1]]) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0([[J:%.*]]: index):
// CHECK-NEXT:      scf.for [[I:%.*]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT:        [[R:%.*]] = arith.muli [[I]], [[C8]] : index
// CHECK-NEXT:        [[OFF:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:        [[A:%.*]] = memref.load %a{{\[}}[[OFF]]] : memref<32xf32>
// CHECK-NEXT:        [[E:%.*]] = math.exp [[A]] : f32
// CHECK:             memref.store [[E]], %out
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
kernel.func @cols_parallel outs(%out: memref<32xf32>) ins(%a: memref<32xf32>) space [4, 8] plan [parallel 1, serial 0] {
  %0 = kernel.load %a <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = math.exp %0 : f32
  kernel.store %out <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// -----

// No parallel dim: a one-iteration parallel loop; the serial loops nest in
// plan order, here column-major (dim 1 outside dim 0).

// CHECK-LABEL: func.func @all_serial_swapped
// CHECK-DAG:     [[C0:%.*]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%.*]] = arith.constant 1 : index
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%.*]] = arith.constant 8 : index
// CHECK:         "scf.parallel"([[C0]], [[C1]], [[C1]])
// CHECK-NEXT:    ^bb0({{%.*}}: index):
// CHECK-NEXT:      scf.for [[J:%.*]] = [[C0]] to [[C8]] step [[C1]] {
// CHECK-NEXT:        scf.for [[I:%.*]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT:          [[R:%.*]] = arith.muli [[I]], [[C8]] : index
// CHECK-NEXT:          [[OFF:%.*]] = arith.addi [[R]], [[J]] : index
// CHECK-NEXT:          memref.load %a{{\[}}[[OFF]]]
kernel.func @all_serial_swapped outs(%out: memref<32xf32>) ins(%a: memref<32xf32>) space [4, 8] plan [serial 1, serial 0] {
  %0 = kernel.load %a <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  kernel.store %out <[4, 8] strides [8, 1] offset 0>, %0 : memref<32xf32>
}

// -----

// A reduce over two axes nests its loops in plan order: @reduce_two_axes
// above runs dim 0 outside dim 2; with the plan [parallel 1, serial 2,
// serial 0] dim 2 is the outer loop.

// CHECK-LABEL: func.func @reduce_order
// CHECK-DAG:     [[C2:%.*]] = arith.constant 2 : index
// CHECK-DAG:     [[C4:%.*]] = arith.constant 4 : index
// CHECK:         ^bb0([[J:%.*]]: index):
// CHECK-NEXT:      [[RES:%.*]] = scf.for [[K:%.*]] = {{%.*}} to [[C4]] step {{%.*}} iter_args([[A0:%.*]] = {{%.*}}) -> (f32) {
// CHECK-NEXT:        [[IN:%.*]] = scf.for [[I:%.*]] = {{%.*}} to [[C2]] step {{%.*}} iter_args([[A1:%.*]] = [[A0]]) -> (f32) {
// CHECK:               arith.addf [[A1]], {{%.*}} fastmath<reassoc,contract> : f32
// CHECK:             scf.yield [[IN]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store [[RES]], %out{{\[}}[[J]]] : memref<3xf32>
kernel.func @reduce_order outs(%out: memref<3xf32>) ins(%x: memref<24xf32>) space [2, 3, 4] plan [parallel 1, serial 2, serial 0] {
  %0 = kernel.load %x <[2, 3, 4] strides [12, 4, 1] offset 0> : memref<24xf32>
  %1 = kernel.reduce add %0 [0, 2] : f32
  kernel.store %out <[2, 3, 4] strides [0, 1, 0] offset 0>, %1 : memref<3xf32>
}

// -----

// A reduce inside another reduce's loop (x.sum(2).relu().sum(1)): the inner
// sum varies along dim 1, which the outer sum loops over, so it is computed
// once per iteration of that loop, inside it: one kernel, each sum once.

// CHECK-LABEL: func.func @multistage
// CHECK:         ^bb0([[B:%.*]]: index):
// CHECK-NEXT:      [[OUTER:%.*]] = scf.for [[I:%.*]] = {{.*}} iter_args([[ACC:%.*]] = {{%.*}}) -> (f32) {
// CHECK-NEXT:        [[INNER:%.*]] = scf.for [[J:%.*]] = {{.*}} iter_args([[ACC2:%.*]] = {{%.*}}) -> (f32) {
// CHECK:               memref.load %x
// CHECK-NEXT:          [[S:%.*]] = arith.addf [[ACC2]], {{%.*}} fastmath<reassoc,contract> : f32
// CHECK-NEXT:          scf.yield [[S]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        [[RELU:%.*]] = arith.maximumf [[INNER]], %c : f32
// CHECK-NEXT:        [[T:%.*]] = arith.addf [[ACC]], [[RELU]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:        scf.yield [[T]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store [[OUTER]], %out{{\[}}[[B]]] : memref<2xf32>
kernel.func @multistage outs(%out: memref<2xf32>) ins(%x: memref<24xf32>) space [2, 3, 4] {
  %0 = kernel.load %x <[2, 3, 4] strides [12, 4, 1] offset 0> : memref<24xf32>
  %1 = kernel.reduce add %0 [2] : f32
  %c = arith.constant 0.0 : f32
  %2 = arith.maximumf %1, %c : f32
  %3 = kernel.reduce add %2 [1] : f32
  kernel.store %out <[2, 3, 4] strides [1, 0, 0] offset 0>, %3 : memref<2xf32>
}

// -----

// A reduce over a dim whose loop is already open around it (the plan nests the
// store loops 0 then 1, and the column sum over dim 0 is wanted per column):
// the reduce runs its own loop over dim 0, and its input is loaded at that
// loop's index, not at the enclosing store loop's.

// CHECK-LABEL: func.func @shadowed_reduce
// CHECK:         scf.for [[I:%.*]] = {{%.*}} to {{%.*}} step {{%.*}} {
// CHECK-NEXT:      scf.for [[J:%.*]] = {{%.*}} to {{%.*}} step {{%.*}} {
// CHECK:             memref.load %x
// CHECK-NEXT:        {{%.*}} = scf.for [[K:%.*]] = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[ACC:%.*]] = {{%.*}}) -> (f32) {
// CHECK-NEXT:          [[ROW:%.*]] = arith.muli [[K]], {{%.*}} : index
// CHECK-NEXT:          [[OFF:%.*]] = arith.addi [[ROW]], [[J]] : index
// CHECK-NEXT:          [[Y:%.*]] = memref.load %y{{\[}}[[OFF]]] : memref<6xf32>
// CHECK-NEXT:          {{%.*}} = arith.addf [[ACC]], [[Y]] fastmath<reassoc,contract> : f32
kernel.func @shadowed_reduce outs(%out: memref<6xf32>) ins(%x: memref<6xf32>, %y: memref<6xf32>) space [2, 3] plan [serial 0, serial 1] {
  %0 = kernel.load %x <[2, 3] strides [3, 1] offset 0> : memref<6xf32>
  %1 = kernel.load %y <[2, 3] strides [3, 1] offset 0> : memref<6xf32>
  %2 = kernel.reduce add %1 [0] : f32
  %3 = arith.addf %0, %2 : f32
  kernel.store %out <[2, 3] strides [3, 1] offset 0>, %3 : memref<6xf32>
}
