// RUN: mlfuse-opt %s -p push-views --split-input-file | filecheck %s

// push-views: "views on loads, contiguous stores". A view of a computed value
// moves through elementwise ops (and single-use reduces) onto the block
// arguments, so every computed value is produced in its own row-major layout.
// Inputs are in lazy-canonicalize form (movement ops are lazy.view).

// transpose(a + b) -> add(transpose a, transpose b)
// CHECK-LABEL: func.func @transpose_add
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[VA:.*]] = lazy.view %[[A]] <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %[[VB:.*]] = lazy.view %[[B]] <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.add %[[VA]], %[[VB]] : tensor<8x4xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @transpose_add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = lazy.add %a, %b : tensor<4x8xf32>
  %1 = lazy.view %0 <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return %1 : tensor<8x4xf32>
}

// A chain of elementwise ops: the view reaches every leaf; the shared leaf
// %x gets one view, shared by both uses (views of a value sit right after it).
// CHECK-LABEL: func.func @pad_add_mul
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NOT:     lazy.where
// CHECK-NEXT:    %[[VX:.*]] = lazy.view %[[X]] <[6] strides [1] offset -1 mask {{\[\[}}1, 5]]> : tensor<4xf32> -> tensor<6xf32>
// CHECK-NEXT:    %[[VY:.*]] = lazy.view %[[Y]] <[6] strides [1] offset -1 mask {{\[\[}}1, 5]]> : tensor<4xf32> -> tensor<6xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.add %[[VX]], %[[VY]] : tensor<6xf32>
// CHECK-NEXT:    %[[M:.*]] = lazy.mul %[[S]], %[[VX]] : tensor<6xf32>
// CHECK-NEXT:    func.return %[[M]]
func.func @pad_add_mul(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<6xf32> {
  %0 = lazy.add %x, %y : tensor<4xf32>
  %1 = lazy.mul %0, %x : tensor<4xf32>
  %2 = lazy.view %1 <[6] strides [1] offset -1 mask [[1, 5]]> : tensor<4xf32> -> tensor<6xf32>
  func.return %2 : tensor<6xf32>
}

// -----

// A pad through exp is unsafe (exp(0) = 1 would leak into the padding): the
// computation is masked instead, where(view(true), exp(view x), 0).
// CHECK-LABEL: func.func @pad_exp
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[X]] <[6] strides [1] offset -1 mask {{\[\[}}1, 5]]> : tensor<4xf32> -> tensor<6xf32>
// CHECK-NEXT:    %[[E:.*]] = lazy.exp %[[V]] : tensor<6xf32>
// CHECK-NEXT:    %[[T:.*]] = lazy.const true : tensor<4xi1>
// CHECK-NEXT:    %[[M:.*]] = lazy.view %[[T]] <[6] strides [1] offset -1 mask {{\[\[}}1, 5]]> : tensor<4xi1> -> tensor<6xi1>
// CHECK-NEXT:    %[[Z:.*]] = lazy.const 0.0 : tensor<6xf32>
// CHECK-NEXT:    %[[W:.*]] = lazy.where %[[M]], %[[E]], %[[Z]] : tensor<6xf32>
// CHECK-NEXT:    func.return %[[W]]
func.func @pad_exp(%x: tensor<4xf32>) -> tensor<6xf32> {
  %0 = lazy.exp %x : tensor<4xf32>
  %1 = lazy.view %0 <[6] strides [1] offset -1 mask [[1, 5]]> : tensor<4xf32> -> tensor<6xf32>
  func.return %1 : tensor<6xf32>
}

// -----

// permute of a single-use reduce: the view moves into the reduce's input and
// the reduced axis 1 becomes axis 2 (out[k, i, 0] = sum_j x[i, j, k]).
// CHECK-LABEL: func.func @permute_reduce
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8x16xf32>)
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[X]] <[16, 4, 8] strides [1, 128, 16] offset 0> : tensor<4x8x16xf32> -> tensor<16x4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %[[V]] [2] : tensor<16x4x8xf32> -> tensor<16x4x1xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @permute_reduce(%x: tensor<4x8x16xf32>) -> tensor<16x4x1xf32> {
  %0 = lazy.reduce add %x [1] : tensor<4x8x16xf32> -> tensor<4x1x16xf32>
  %1 = lazy.view %0 <[16, 4, 1] strides [1, 16, 0] offset 0> : tensor<4x1x16xf32> -> tensor<16x4x1xf32>
  func.return %1 : tensor<16x4x1xf32>
}

// shrink of a reduce (rows 1..2): the input is shrunk to those rows instead.
// CHECK-LABEL: func.func @shrink_reduce
// CHECK-NEXT:    %[[V:.*]] = lazy.view %{{.*}} <[2, 8] strides [8, 1] offset 8> : tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce max %[[V]] [1] : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @shrink_reduce(%x: tensor<4x8xf32>) -> tensor<2x1xf32> {
  %0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[2, 1] strides [1, 0] offset 1> : tensor<4x1xf32> -> tensor<2x1xf32>
  func.return %1 : tensor<2x1xf32>
}

// A pad of a kept dim goes into the reduce (a reduce of zeros is 0).
// CHECK-LABEL: func.func @pad_reduce
// CHECK-NEXT:    %[[V:.*]] = lazy.view %{{.*}} <[6, 8] strides [8, 1] offset -8 mask {{\[\[}}1, 5], [0, 8]]> : tensor<4x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce max %[[V]] [1] : tensor<6x8xf32> -> tensor<6x1xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @pad_reduce(%x: tensor<4x8xf32>) -> tensor<6x1xf32> {
  %0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[6, 1] strides [1, 0] offset -1 mask [[1, 5], [0, 1]]> : tensor<4x1xf32> -> tensor<6x1xf32>
  func.return %1 : tensor<6x1xf32>
}

// A pad of the reduced (size-1) dim has nowhere to go on the reduce's input:
// it stays above the reduce, as a mask on an unmasked broadcast of it
// (where(mask, view(r), 0)), which a kernel can read.
// CHECK-LABEL: func.func @pad_reduced_axis
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce max %{{.*}} [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[R]] <[4, 3] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[T:.*]] = lazy.const true : tensor<4x1xi1>
// CHECK-NEXT:    %[[M:.*]] = lazy.view %[[T]] <[4, 3] strides [1, 0] offset 0 mask {{\[\[}}0, 4], [1, 2]]> : tensor<4x1xi1> -> tensor<4x3xi1>
// CHECK-NEXT:    %[[Z:.*]] = lazy.const 0.0 : tensor<4x3xf32>
// CHECK-NEXT:    %[[W:.*]] = lazy.where %[[M]], %[[V]], %[[Z]] : tensor<4x3xf32>
// CHECK-NEXT:    func.return %[[W]]
func.func @pad_reduced_axis(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4, 3] strides [1, 0] offset 0 mask [[0, 4], [1, 2]]> : tensor<4x1xf32> -> tensor<4x3xf32>
  func.return %1 : tensor<4x3xf32>
}

// -----

// A permute through exp and then through the reduce below it.
// CHECK-LABEL: func.func @permute_exp_reduce
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8x2xf32>)
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[X]] <[2, 4, 8] strides [1, 16, 2] offset 0> : tensor<4x8x2xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %[[V]] [2] : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %[[E:.*]] = lazy.exp %[[R]] : tensor<2x4x1xf32>
// CHECK-NEXT:    func.return %[[E]]
func.func @permute_exp_reduce(%x: tensor<4x8x2xf32>) -> tensor<2x4x1xf32> {
  %0 = lazy.reduce add %x [1] : tensor<4x8x2xf32> -> tensor<4x1x2xf32>
  %1 = lazy.exp %0 : tensor<4x1x2xf32>
  %2 = lazy.view %1 <[2, 4, 1] strides [1, 2, 0] offset 0> : tensor<4x1x2xf32> -> tensor<2x4x1xf32>
  func.return %2 : tensor<2x4x1xf32>
}

// -----

// An expand of a value computed from a reduce stays where it is (pushed down,
// the epilogue exp would be recomputed per copy); the expand of the cheap
// neg(y) is pushed onto %y as usual.
// CHECK-LABEL: func.func @expand_of_reduce
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x1xf32>)
// CHECK-NEXT:    %[[BY:.*]] = lazy.view %[[Y]] <[4, 8] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %[[X]] [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[E:.*]] = lazy.exp %[[R]] : tensor<4x1xf32>
// CHECK-NEXT:    %[[BE:.*]] = lazy.view %[[E]] <[4, 8] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[N:.*]] = lazy.neg %[[BY]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.sub %[[BE]], %[[N]] : tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @expand_of_reduce(%x: tensor<4x8xf32>, %y: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.exp %0 : tensor<4x1xf32>
  %2 = lazy.view %1 <[4, 8] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x8xf32>
  %3 = lazy.neg %y : tensor<4x1xf32>
  %4 = lazy.view %3 <[4, 8] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x8xf32>
  %5 = lazy.sub %2, %4 : tensor<4x8xf32>
  func.return %5 : tensor<4x8xf32>
}

// The broadcast-back of a reduce (x - max(x)) stays on the reduce.
// CHECK-LABEL: func.func @broadcast_back
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce max %[[X]] [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[B:.*]] = lazy.view %[[R]] <[4, 8] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.sub %[[X]], %[[B]] : tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @broadcast_back(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4, 8] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = lazy.sub %x, %1 : tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// A reduce with two uses is not pushed through (that would compute it twice).
// CHECK-LABEL: func.func @reduce_two_uses
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %[[X]] [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[R]] <[1, 4] strides [0, 1] offset 0> : tensor<4x1xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    func.return %[[V]], %[[R]] :
// CHECK-NOT:     lazy.reduce
func.func @reduce_two_uses(%x: tensor<4x8xf32>) -> (tensor<1x4xf32>, tensor<4x1xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[1, 4] strides [0, 1] offset 0> : tensor<4x1xf32> -> tensor<1x4xf32>
  func.return %1, %0 : tensor<1x4xf32>, tensor<4x1xf32>
}

// -----

// A view pushed through a graph that reaches one value along several paths
// makes one view of it, not one per path (on a chain of x = x + x, one per
// path would double at every step).
// CHECK-LABEL: func.func @shared_paths
// CHECK-SAME:    (%[[X:.*]]: tensor<4x1xf32>)
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[X]] <[1, 4] strides [0, 1] offset 0> : tensor<4x1xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[A:.*]] = lazy.add %[[V]], %[[V]] : tensor<1x4xf32>
// CHECK-NEXT:    %[[B:.*]] = lazy.add %[[A]], %[[A]] : tensor<1x4xf32>
// CHECK-NEXT:    %[[C:.*]] = lazy.add %[[B]], %[[B]] : tensor<1x4xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @shared_paths(%x: tensor<4x1xf32>) -> tensor<1x4xf32> {
  %0 = lazy.add %x, %x : tensor<4x1xf32>
  %1 = lazy.add %0, %0 : tensor<4x1xf32>
  %2 = lazy.add %1, %1 : tensor<4x1xf32>
  %3 = lazy.view %2 <[1, 4] strides [0, 1] offset 0> : tensor<4x1xf32> -> tensor<1x4xf32>
  func.return %3 : tensor<1x4xf32>
}

// -----

// A masked view of a reduce that reads inside it without its mask (here a
// padded broadcast of a sum) becomes where(mask, unmasked view, 0): a kernel
// reads a reduce through an unmasked view, so the sum need not be stored.
// CHECK-LABEL: func.func @masked_view_of_reduce
// CHECK:         %[[R:.*]] = lazy.reduce add %{{.*}} [0, 1, 2] : tensor<3x4x5xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[R]] <[4, 5, 6] strides [0, 0, 0] offset 0> : tensor<1x1x1xf32> -> tensor<4x5x6xf32>
// CHECK-NEXT:    %[[T:.*]] = lazy.const true : tensor<1x1x1xi1>
// CHECK-NEXT:    %[[M:.*]] = lazy.view %[[T]] <[4, 5, 6] strides [0, 0, 0] offset 0 mask {{\[\[}}0, 3], [0, 4], [0, 5]]> : tensor<1x1x1xi1> -> tensor<4x5x6xi1>
// CHECK-NEXT:    %[[Z:.*]] = lazy.const 0.0 : tensor<4x5x6xf32>
// CHECK-NEXT:    lazy.where %[[M]], %[[V]], %[[Z]] : tensor<4x5x6xf32>
func.func @masked_view_of_reduce(%a: tensor<3x4x5xf32>, %b: tensor<3x4x5xf32>) -> tensor<4x5x6xf32> {
  %0 = lazy.reduce add %a [0, 1, 2] : tensor<3x4x5xf32> -> tensor<1x1x1xf32>
  %1 = lazy.view %0 <[3, 4, 5] strides [0, 0, 0] offset 0> : tensor<1x1x1xf32> -> tensor<3x4x5xf32>
  %2 = lazy.add %1, %b : tensor<3x4x5xf32>
  %3 = lazy.exp %2 : tensor<3x4x5xf32>
  %4 = lazy.view %3 <[4, 5, 6] strides [20, 5, 1] offset 0 mask [[0, 3], [0, 4], [0, 5]]> : tensor<3x4x5xf32> -> tensor<4x5x6xf32>
  func.return %4 : tensor<4x5x6xf32>
}

// -----

// A value read through two views (itself and its reverse) with five reads of
// its own: pushing the reverse through it would read a..e twice. It is
// materialized instead (Inductor's rule: several users, more than 4 reads),
// and the view stays on it.
// CHECK-LABEL: func.func @shared_many_reads
// CHECK:         %[[S:.*]] = lazy.add %{{.*}}, %{{.*}} {realize = "read through 2 views"} : tensor<8xf32>
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[S]] <[8] strides [-1] offset 7>
// CHECK-NEXT:    %[[R:.*]] = lazy.add %[[S]], %[[V]] : tensor<8xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @shared_many_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>, %e: tensor<8xf32>) -> tensor<8xf32> {
  %0 = lazy.add %a, %b : tensor<8xf32>
  %1 = lazy.add %0, %c : tensor<8xf32>
  %2 = lazy.add %1, %d : tensor<8xf32>
  %3 = lazy.add %2, %e : tensor<8xf32>
  %4 = lazy.view %3 <[8] strides [-1] offset 7> : tensor<8xf32> -> tensor<8xf32>
  %5 = lazy.add %3, %4 : tensor<8xf32>
  func.return %5 : tensor<8xf32>
}

// Four reads (constants count none): the reverse is pushed to the loads.
// CHECK-LABEL: func.func @shared_few_reads
// CHECK-NOT:     realize
// CHECK:         lazy.view %{{.*}} <[8] strides [-1] offset 7>
// CHECK:         func.return
func.func @shared_few_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>) -> tensor<8xf32> {
  %k = lazy.const 2.0 : tensor<8xf32>
  %0 = lazy.add %a, %b : tensor<8xf32>
  %1 = lazy.add %0, %c : tensor<8xf32>
  %2 = lazy.add %1, %d : tensor<8xf32>
  %3 = lazy.mul %2, %k : tensor<8xf32>
  %4 = lazy.view %3 <[8] strides [-1] offset 7> : tensor<8xf32> -> tensor<8xf32>
  %5 = lazy.add %3, %4 : tensor<8xf32>
  func.return %5 : tensor<8xf32>
}
