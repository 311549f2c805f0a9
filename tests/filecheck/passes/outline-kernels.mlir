// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p outline-kernels | filecheck %s
// RUN: not mlfuse-opt %s --split-input-file -p outline-kernels 2>&1 | filecheck %s --check-prefix=ERR
// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p outline-kernels | filecheck %s --check-prefix=BUG

// outline-kernels: each {group = N} becomes a kernel.func (buffers outs then
// ins, an iteration space, the front-end origins, the lazy ops and why each
// output is stored); the lazy function becomes a schedule over memrefs of
// kernel.alloc / kernel.launch in a topological order. Inputs are annotated
// by hand as mark-realize and group-reduces would annotate them.
//
// RUN 1 checks the good cases and the diagnostics (printed in place with
// --verify-diagnostics); RUN 2 checks that the first error (an assign hazard)
// ends mlfuse-opt with a non-zero status and a one-line diagnostic; RUN 3
// (prefix BUG) pins two regressions, see the end of the file.

// softmax as one kernel: one load of x, the max, exp, sum and division at the
// kernel's space [4, 8] with reduces over space axis 1, one store.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    outs(%[[OUT:.*]]: memref<32xf32>) ins(%[[X:.*]]: memref<32xf32>) space [4, 8]
// CHECK-SAME:    attributes {origin = ["softmax", "exp", "sum"], ops = ["reduce", "sub", "exp", "reduce", "div"], reasons = ["output"]}
// CHECK-NEXT:    %[[L:.*]] = kernel.load %[[X]] <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
// CHECK-NEXT:    %[[M:.*]] = kernel.reduce max %[[L]] [1] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.subf %[[L]], %[[M]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT:    %[[Z:.*]] = kernel.reduce add %[[E]] [1] : f32
// CHECK-NEXT:    %[[D:.*]] = arith.divf %[[E]], %[[Z]] : f32
// CHECK-NEXT:    kernel.store %[[OUT]] <[4, 8] strides [8, 1] offset 0>, %[[D]] : memref<32xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @softmax(%[[XB:.*]]: memref<32xf32>) -> memref<32xf32> {
// CHECK-NEXT:    %[[B:.*]] = kernel.alloc : memref<32xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[B]] : memref<32xf32>) ins(%[[XB]] : memref<32xf32>)
// CHECK-NEXT:    func.return %[[B]] : memref<32xf32>
// CHECK-NOT:     lazy.
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.reduce max %x [1] {group = 0 : i64} : tensor<4x8xf32> -> tensor<4x1xf32> loc("softmax")
  %1 = lazy.view %0 <[4, 8] strides [1, 0] offset 0> {group = 0 : i64} : tensor<4x1xf32> -> tensor<4x8xf32> loc("softmax")
  %2 = lazy.sub %x, %1 {group = 0 : i64} : tensor<4x8xf32> loc("softmax")
  %3 = lazy.exp %2 {group = 0 : i64} : tensor<4x8xf32> loc("exp")
  %4 = lazy.reduce add %3 [1] {group = 0 : i64} : tensor<4x8xf32> -> tensor<4x1xf32> loc("sum")
  %5 = lazy.view %4 <[4, 8] strides [1, 0] offset 0> {group = 0 : i64} : tensor<4x1xf32> -> tensor<4x8xf32> loc("softmax")
  %6 = lazy.div %3, %5 {realize = "output", group = 0 : i64} : tensor<4x8xf32> loc("softmax")
  func.return %6 : tensor<4x8xf32>
}

// -----

// Loads carry the composed views: a transposed, padded x (masked load), a
// broadcast b; a padded constant becomes select(kernel.valid(mask), c, 0).
// The store is contiguous.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    outs(%[[OUT:.*]]: memref<48xf32>) ins(%[[X:.*]]: memref<32xf32>, %[[B:.*]]: memref<8xf32>) space [8, 6]
// CHECK-NEXT:    %[[LX:.*]] = kernel.load %[[X]] <[8, 6] strides [1, 8] offset -8 mask {{\[\[}}0, 8], [1, 5]]> : memref<32xf32>
// CHECK-NEXT:    %[[LB:.*]] = kernel.load %[[B]] <[8, 6] strides [1, 0] offset 0> : memref<8xf32>
// CHECK-NEXT:    %[[A:.*]] = arith.addf %[[LX]], %[[LB]] : f32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[V:.*]] = kernel.valid <[8, 6] strides [1, 8] offset -8 mask {{\[\[}}0, 8], [1, 5]]>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[C:.*]] = arith.select %[[V]], %[[ONE]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[A]], %[[C]] : f32
// CHECK-NEXT:    kernel.store %[[OUT]] <[8, 6] strides [6, 1] offset 0>, %[[M]] : memref<48xf32>
// CHECK:       func.func @views(%[[XB:.*]]: memref<32xf32>, %[[BB:.*]]: memref<8xf32>) -> memref<48xf32>
// CHECK-NEXT:    %[[O:.*]] = kernel.alloc : memref<48xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[O]] : memref<48xf32>) ins(%[[XB]] : memref<32xf32>, %[[BB]] : memref<8xf32>)
func.func @views(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<8x6xf32> {
  %0 = lazy.view %x <[8, 6] strides [1, 8] offset -8 mask [[0, 8], [1, 5]]> {group = 0 : i64} : tensor<4x8xf32> -> tensor<8x6xf32>
  %1 = lazy.view %b <[8, 6] strides [1, 0] offset 0> {group = 0 : i64} : tensor<8xf32> -> tensor<8x6xf32>
  %2 = lazy.add %0, %1 {group = 0 : i64} : tensor<8x6xf32>
  %3 = lazy.const 1.0 {group = 0 : i64} : tensor<4x8xf32>
  %4 = lazy.view %3 <[8, 6] strides [1, 8] offset -8 mask [[0, 8], [1, 5]]> {group = 0 : i64} : tensor<4x8xf32> -> tensor<8x6xf32>
  %5 = lazy.mul %2, %4 {realize = "output", group = 0 : i64} : tensor<8x6xf32>
  func.return %5 : tensor<8x6xf32>
}

// A sum over a transposed input reduces over a space axis: out[j] = sum_i x[j, i] + y[i, j].
// CHECK-LABEL: kernel.func @k1
// CHECK-SAME:    outs(%[[OUT:.*]]: memref<4xf32>) ins(%[[X:.*]]: memref<32xf32>, %[[Y:.*]]: memref<32xf32>) space [4, 8]
// CHECK-SAME:    reasons = ["output"]
// CHECK-NEXT:    %[[LX:.*]] = kernel.load %[[X]] <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
// CHECK-NEXT:    %[[LY:.*]] = kernel.load %[[Y]] <[4, 8] strides [1, 4] offset 0> : memref<32xf32>
// CHECK-NEXT:    %[[A:.*]] = arith.addf %[[LX]], %[[LY]] : f32
// CHECK-NEXT:    %[[R:.*]] = kernel.reduce add %[[A]] [1] : f32
// CHECK-NEXT:    kernel.store %[[OUT]] <[4, 8] strides [1, 0] offset 0>, %[[R]] : memref<4xf32>
func.func @transposed_sum(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<1x4xf32> {
  %0 = lazy.view %x <[8, 4] strides [1, 8] offset 0> {group = 0 : i64} : tensor<4x8xf32> -> tensor<8x4xf32>
  %1 = lazy.add %0, %y {group = 0 : i64} : tensor<8x4xf32>
  %2 = lazy.reduce add %1 [0] {realize = "output", group = 0 : i64} : tensor<8x4xf32> -> tensor<1x4xf32>
  func.return %2 : tensor<1x4xf32>
}

// -----

// Two kernels, numbered against their launch order (the consumer is group 0):
// the schedule still launches the producer of the row sums first.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    outs(%{{.*}}: memref<4xf32>) ins(%{{.*}}: memref<32xf32>) space [4, 8]
// CHECK-SAME:    reasons = ["reduce of reduce"]
// CHECK:         kernel.reduce add %{{.*}} [1] : f32
// CHECK-LABEL: kernel.func @k1
// CHECK-SAME:    outs(%{{.*}}: memref<1xf32>) ins(%{{.*}}: memref<4xf32>) space [4]
// CHECK:         kernel.reduce max %{{.*}} [0] : f32
// CHECK:       func.func @two_kernels(%[[X:.*]]: memref<32xf32>) -> memref<1xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = kernel.alloc : memref<4xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[ROWS]] : memref<4xf32>) ins(%[[X]] : memref<32xf32>)
// CHECK-NEXT:    %[[M:.*]] = kernel.alloc : memref<1xf32>
// CHECK-NEXT:    kernel.launch @k1 outs(%[[M]] : memref<1xf32>) ins(%[[ROWS]] : memref<4xf32>)
// CHECK-NEXT:    func.return %[[M]] : memref<1xf32>
func.func @two_kernels(%x: tensor<4x8xf32>) -> tensor<f32> {
  %0 = lazy.reduce add %x [1] {group = 1 : i64} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4] strides [1] offset 0> {realize = "reduce of reduce", group = 1 : i64} : tensor<4x1xf32> -> tensor<4xf32>
  %2 = lazy.reduce max %1 [0] {group = 0 : i64} : tensor<4xf32> -> tensor<1xf32>
  %3 = lazy.view %2 <[] strides [] offset 0> {realize = "output", group = 0 : i64} : tensor<1xf32> -> tensor<f32>
  func.return %3 : tensor<f32>
}

// -----

// One kernel, two outputs of the same shape: one launch with two outs.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    outs(%[[O1:.*]]: memref<4xf32>, %[[O2:.*]]: memref<4xf32>) ins(%[[X:.*]]: memref<32xf32>) space [4, 8]
// CHECK-SAME:    reasons = ["output", "output"]
// CHECK-NEXT:    %[[L:.*]] = kernel.load %[[X]]
// CHECK-NEXT:    %[[R:.*]] = kernel.reduce add %[[L]] [1] : f32
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[A:.*]] = arith.addf %[[R]], %[[C1]] : f32
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[R]], %[[C2]] : f32
// CHECK-NEXT:    kernel.store %[[O1]] <[4, 8] strides [1, 0] offset 0>, %[[A]] : memref<4xf32>
// CHECK-NEXT:    kernel.store %[[O2]] <[4, 8] strides [1, 0] offset 0>, %[[M]] : memref<4xf32>
// CHECK:       func.func @shared_reduce
// CHECK-NEXT:    %[[B1:.*]] = kernel.alloc : memref<4xf32>
// CHECK-NEXT:    %[[B2:.*]] = kernel.alloc : memref<4xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[B1]] : memref<4xf32>, %[[B2]] : memref<4xf32>) ins(%{{.*}} : memref<32xf32>)
// CHECK-NEXT:    func.return %[[B1]], %[[B2]]
func.func @shared_reduce(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = lazy.reduce add %x [1] {group = 0 : i64} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4] strides [1] offset 0> {group = 0 : i64} : tensor<4x1xf32> -> tensor<4xf32>
  %2 = lazy.const 1.0 {group = 0 : i64} : tensor<4xf32>
  %3 = lazy.add %1, %2 {realize = "output", group = 0 : i64} : tensor<4xf32>
  %4 = lazy.const 2.0 {group = 0 : i64} : tensor<4xf32>
  %5 = lazy.mul %1, %4 {realize = "output", group = 0 : i64} : tensor<4xf32>
  func.return %3, %5 : tensor<4xf32>, tensor<4xf32>
}

// -----

// An assign writes into the argument's buffer: no alloc, launch outs(%acc),
// and the kernel reads %acc through its store view (allowed). Kernel 1 reads
// the old contents of %acc, so it is launched before the assign's kernel
// although it comes later in the program.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    reasons = ["output"]
// CHECK:       kernel.func @k1 outs(%[[T:.*]]: memref<16xf32>) ins(%[[B:.*]]: memref<16xf32>)
// CHECK-SAME:    ops = ["add", "assign"], reasons = ["assign"]
// CHECK-NEXT:    %[[OLD:.*]] = kernel.load %[[T]] <[4, 4] strides [4, 1] offset 0> : memref<16xf32>
// CHECK-NEXT:    %[[LB:.*]] = kernel.load %[[B]] <[4, 4] strides [4, 1] offset 0> : memref<16xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[OLD]], %[[LB]] : f32
// CHECK-NEXT:    kernel.store %[[T]] <[4, 4] strides [4, 1] offset 0>, %[[S]] : memref<16xf32>
// CHECK:       func.func @assign(%[[ACC:.*]]: memref<16xf32>, %[[BB:.*]]: memref<16xf32>)
// CHECK-NEXT:    %[[O:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[O]] : memref<16xf32>) ins(%[[ACC]] : memref<16xf32>)
// CHECK-NEXT:    kernel.launch @k1 outs(%[[ACC]] : memref<16xf32>) ins(%[[BB]] : memref<16xf32>)
// CHECK-NEXT:    func.return %[[O]], %[[ACC]] :
func.func @assign(%acc: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = lazy.add %acc, %b {group = 0 : i64} : tensor<4x4xf32>
  %1 = lazy.assign %acc, %0 {realize = "assign", group = 0 : i64} : tensor<4x4xf32>
  %2 = lazy.const 3.0 {group = 1 : i64} : tensor<4x4xf32>
  %3 = lazy.mul %acc, %2 {realize = "output", group = 1 : i64} : tensor<4x4xf32>
  func.return %3, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The kernel writing %acc would read it transposed: an error, not a kernel
// (group-reduces materializes the transposed read first).
// CHECK: outline-kernels: group 0 cannot be one kernel (reads the buffer it assigns); run group-reduces to split it
// ERR-NOT: Traceback
// ERR:     mlfuse-opt: error: outline-kernels: group 0 cannot be one kernel (reads the buffer it assigns)
// ERR-NOT: Traceback
func.func @assign_hazard(%acc: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = lazy.view %acc <[4, 4] strides [1, 4] offset 0> {group = 0 : i64} : tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = lazy.add %0, %b {group = 0 : i64} : tensor<4x4xf32>
  %2 = lazy.assign %acc, %1 {realize = "output", group = 0 : i64} : tensor<4x4xf32>
  func.return %2 : tensor<4x4xf32>
}

// -----

// Kernel 1 needs both the old %acc and the assigned one: no order exists.
// CHECK: lazy.assign: no kernel order reads %acc before it is overwritten
func.func @assign_cycle(%acc: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = lazy.add %acc, %b {group = 0 : i64} : tensor<4x4xf32>
  %1 = lazy.assign %acc, %0 {realize = "assign", group = 0 : i64} : tensor<4x4xf32>
  %2 = lazy.add %1, %acc {realize = "output", group = 1 : i64} : tensor<4x4xf32>
  func.return %2 : tensor<4x4xf32>
}

// -----

// outline-kernels alone on unannotated IR.
// CHECK: outline-kernels: 'lazy.exp' has no group; run mark-realize and group-reduces first
func.func @no_groups(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lazy.exp %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// A group that cannot be one kernel (the row sums are needed twice: inside
// the total's loop and by their own store) is refused.
// CHECK: outline-kernels: group 0 cannot be one kernel (reduce of reduce); run group-reduces to split it
func.func @cannot_plan(%x: tensor<4x8xf32>) -> (tensor<1xf32>, tensor<4xf32>) {
  %0 = lazy.reduce add %x [1] {group = 0 : i64} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4] strides [1] offset 0> {realize = "output", group = 0 : i64} : tensor<4x1xf32> -> tensor<4xf32>
  %2 = lazy.reduce add %1 [0] {realize = "output", group = 0 : i64} : tensor<4xf32> -> tensor<1xf32>
  func.return %2, %1 : tensor<1xf32>, tensor<4xf32>
}

// -----

// CHECK: outline-kernels: group 0 has no realized output
func.func @no_root(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lazy.exp %x {group = 0 : i64} : tensor<4xf32>
  %1 = lazy.neg %x {realize = "output", group = 1 : i64} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// REGRESSION (RUN 3): an output that is a view of a reduce is stored through its
// own index map. out[a, b] = r[a + 2b] with r = x.sum(1): x is read at
// 8(a + 2b) + k and a row-major 2x2 output is written at 2a + b (regression:
// the store once used the reduce's map, a + 2b, so (x @ w).T came back
// untransposed).
// BUG:       kernel.func @k0 outs(%[[OUT:.*]]: memref<4xf32>) ins(%[[X:.*]]: memref<32xf32>) space [2, 2, 8]
// BUG-NEXT:    %[[L:.*]] = kernel.load %[[X]] <[2, 2, 8] strides [8, 16, 1] offset 0> : memref<32xf32>
// BUG-NEXT:    %[[R:.*]] = kernel.reduce add %[[L]] [2] : f32
// BUG-NEXT:    kernel.store %[[OUT]] <[2, 2, 8] strides [2, 1, 0] offset 0>, %[[R]] : memref<4xf32>
func.func @view_of_reduce_output(%x: tensor<4x8xf32>) -> tensor<2x2xf32> {
  %0 = lazy.reduce add %x [1] {group = 0 : i64} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[2, 2] strides [1, 2] offset 0> {realize = "output", group = 0 : i64} : tensor<4x1xf32> -> tensor<2x2xf32>
  func.return %1 : tensor<2x2xf32>
}

// -----

// REGRESSION (RUN 3): a group whose outputs come smaller-first in program order
// (s = x.sum(1) and x - s): the kernel's outs follow the planner's order
// (largest first), and each value is stored into its own buffer (regression:
// they were once swapped; from the front end, s = x.sum(1, keepdim=True);
// realize(s + 1, x - s) failed the kernel.store verifier).
// BUG:       kernel.func @k0
// BUG-SAME:    space [4, 8] plan [parallel 0, serial 1] attributes {origin = [], ops = ["reduce", "sub"], reasons = ["output", "output"]}
// BUG:         %[[R:.*]] = kernel.reduce add %{{.*}} [1] : f32
// BUG:         %[[D:.*]] = arith.subf %{{.*}}, %[[R]] : f32
// BUG-DAG:     kernel.store %{{.*}} <[4, 8] strides [8, 1] offset 0>, %[[D]] : memref<32xf32>
// BUG-DAG:     kernel.store %{{.*}} <[4, 8] strides [1, 0] offset 0>, %[[R]] : memref<4xf32>
// BUG:         func.func @smaller_output_first(%{{.*}}: memref<32xf32>) -> (memref<4xf32>, memref<32xf32>)
func.func @smaller_output_first(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
  %0 = lazy.reduce add %x [1] {realize = "output", group = 0 : i64} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4, 8] strides [1, 0] offset 0> {group = 0 : i64} : tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = lazy.sub %x, %1 {realize = "output", group = 0 : i64} : tensor<4x8xf32>
  func.return %0, %2 : tensor<4x1xf32>, tensor<4x8xf32>
}

// -----

// A realized tensor is a buffer plus a view: outputs that are unmasked views
// of buffer arguments (an expand, a transpose, a row slice) need no kernel, a
// contiguous() of a row-major view is the buffer itself, and a constant is a
// one-element buffer read through a broadcasting view. Kernels that read such
// a value read its source through the view. A contiguous() of a transpose is
// a copy (a kernel).
// CHECK:       kernel.func @k0 outs(%{{.*}}: memref<16xf32>) ins(%[[X:.*]]: memref<16xf32>) space [4, 4] plan [parallel 0, parallel 1] attributes {origin = [], ops = ["contiguous"], reasons = ["output"]}
// CHECK-NEXT:    kernel.load %[[X]] <[4, 4] strides [1, 4] offset 0> : memref<16xf32>
// CHECK-NEXT:    kernel.store
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @k1
// CHECK-SAME:    outs(%{{.*}}: memref<16xf32>) ins(%[[A:.*]]: memref<4xf32>)
// CHECK-NEXT:    kernel.load %[[A]] <[4, 4] strides [1, 0] offset 0> : memref<4xf32>
// CHECK:       func.func @views(%[[XB:.*]]: memref<16xf32>, %[[AB:.*]]: memref<4xf32>) -> (memref<4x4xf32, strided<[1, 0]>>, memref<16xf32>, memref<4x4xf32, strided<[1, 4]>>, memref<2x4xf32, strided<[4, 1], offset: 4>>, memref<16xf32>, memref<16xf32>, memref<3x3xf32, strided<[0, 0]>>)
// CHECK-NEXT:    %[[T:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[T]] : memref<16xf32>) ins(%[[XB]] : memref<16xf32>)
// CHECK-NEXT:    %[[S:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @k1 outs(%[[S]] : memref<16xf32>) ins(%[[AB]] : memref<4xf32>)
// CHECK-NEXT:    %[[E:.*]] = memref.reinterpret_cast %[[AB]] to offset: [0], sizes: [4, 4], strides: [1, 0] : memref<4xf32> to memref<4x4xf32, strided<[1, 0]>>
// CHECK-NEXT:    %[[TR:.*]] = memref.reinterpret_cast %[[XB]] to offset: [0], sizes: [4, 4], strides: [1, 4] : memref<16xf32> to memref<4x4xf32, strided<[1, 4]>>
// CHECK-NEXT:    %[[R:.*]] = memref.reinterpret_cast %[[XB]] to offset: [4], sizes: [2, 4], strides: [4, 1] : memref<16xf32> to memref<2x4xf32, strided<[4, 1], offset: 4>>
// CHECK-NEXT:    %[[C:.*]] = kernel.constant 2.0 : memref<1xf32>
// CHECK-NEXT:    %[[CV:.*]] = memref.reinterpret_cast %[[C]] to offset: [0], sizes: [3, 3], strides: [0, 0] : memref<1xf32> to memref<3x3xf32, strided<[0, 0]>>
// CHECK-NEXT:    func.return %[[E]], %[[S]], %[[TR]], %[[R]], %[[XB]], %[[T]], %[[CV]]
func.func @views(%x: tensor<4x4xf32>, %a: tensor<4x1xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3x3xf32>) {
  %0 = lazy.view %a <[4, 4] strides [1, 0] offset 0> {realize = "output"} : tensor<4x1xf32> -> tensor<4x4xf32>
  %c = lazy.const 1.0 {group = 1 : i64} : tensor<4x4xf32>
  %v = lazy.view %a <[4, 4] strides [1, 0] offset 0> {group = 1 : i64} : tensor<4x1xf32> -> tensor<4x4xf32>
  %1 = lazy.add %v, %c {realize = "output", group = 1 : i64} : tensor<4x4xf32>
  %2 = lazy.view %x <[4, 4] strides [1, 4] offset 0> {realize = "output"} : tensor<4x4xf32> -> tensor<4x4xf32>
  %3 = lazy.view %x <[2, 4] strides [4, 1] offset 4> {realize = "output"} : tensor<4x4xf32> -> tensor<2x4xf32>
  %4 = lazy.contiguous %x {realize = "output"} : tensor<4x4xf32>
  %t = lazy.view %x <[4, 4] strides [1, 4] offset 0> {group = 0 : i64} : tensor<4x4xf32> -> tensor<4x4xf32>
  %5 = lazy.contiguous %t {realize = "output", group = 0 : i64} : tensor<4x4xf32>
  %6 = lazy.const 2.0 {realize = "output"} : tensor<3x3xf32>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3x3xf32>
}

// -----

// A view of a buffer the function overwrites is not free: it reads the old
// contents, so a kernel copies them before the assign's kernel runs.
// CHECK-LABEL: func.func @view_of_assigned
// CHECK:         kernel.launch @{{.*}} outs(%[[COPY:.*]] : memref<16xf32>) ins(%[[X:.*]] : memref<16xf32>)
// CHECK-NEXT:    kernel.launch @{{.*}} outs(%[[X]] : memref<16xf32>) ins()
// CHECK-NEXT:    func.return %[[COPY]], %[[X]]
func.func @view_of_assigned(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = lazy.view %x <[4, 4] strides [1, 4] offset 0> {realize = "output", group = 0 : i64} : tensor<4x4xf32> -> tensor<4x4xf32>
  %c = lazy.const 0.0 {group = 1 : i64} : tensor<4x4xf32>
  %1 = lazy.assign %x, %c {realize = "assign", group = 1 : i64} : tensor<4x4xf32>
  func.return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}
