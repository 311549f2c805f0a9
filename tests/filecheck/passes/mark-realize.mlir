// RUN: mlfuse-opt %s -p mark-realize --split-input-file | filecheck %s

// mark-realize: every value that must be materialized gets
// {realize = "<reason>"}; everything else is left unannotated (a line that
// ends in "] : tensor" or "%x : tensor" has no attribute dictionary).

// The meta ops record their own reason, the returned values "output".
// CHECK-LABEL: func.func @reasons
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[ACC:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[E:.*]] = lazy.exp %[[X]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[C:.*]] = lazy.contiguous %[[E]] {realize = "contiguous"} : tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = lazy.copy %[[C]] to "cpu" {realize = "copy"} : tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.add %[[P]], %[[ACC]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[A:.*]] = lazy.assign %[[ACC]], %[[S]] {realize = "assign"} : tensor<4x8xf32>
// CHECK-NEXT:    %[[M:.*]] = lazy.mul %[[A]], %[[P]] {realize = "output"} : tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[M]]
func.func @reasons(%x: tensor<4x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.exp %x : tensor<4x8xf32>
  %1 = lazy.contiguous %0 : tensor<4x8xf32>
  %2 = lazy.copy %1 to "cpu" : tensor<4x8xf32>
  %3 = lazy.add %2, %acc : tensor<4x8xf32>
  %4 = lazy.assign %acc, %3 : tensor<4x8xf32>
  %5 = lazy.mul %4, %2 : tensor<4x8xf32>
  func.return %5 : tensor<4x8xf32>
}

// A returned block argument needs nothing.
// CHECK-LABEL: func.func @passthrough
// CHECK-NEXT:    func.return %{{.*}} : tensor<4xf32>
func.func @passthrough(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// A returned argument the function also assigns is its old value: it is
// returned through a contiguous (a copy made before the assign), once however
// often it is returned.
// CHECK-LABEL: func.func @returned_and_assigned
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = lazy.assign %[[X]], %[[Y]] {realize = "output"} : tensor<4xf32>
// CHECK-NEXT:    %[[C:.*]] = lazy.contiguous %[[X]] {realize = "output"} : tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[C]], %[[Y]], %[[C]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @returned_and_assigned(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = lazy.assign %x, %y : tensor<4xf32>
  func.return %0, %x, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A masked view (pad of the reduced dim) of a computed reduce: the reduce is
// materialized ("view of reduce"); the view itself is not.
// CHECK-LABEL: func.func @masked_view_of_reduce
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce max %{{.*}} [1] {realize = "view of reduce"} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[R]] <[4, 3] strides [1, 0] offset 0 mask {{\[\[}}0, 4], [1, 2]]> : tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[E:.*]] = lazy.exp %[[V]] {realize = "output"} : tensor<4x3xf32>
func.func @masked_view_of_reduce(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4, 3] strides [1, 0] offset 0 mask [[0, 4], [1, 2]]> : tensor<4x1xf32> -> tensor<4x3xf32>
  %2 = lazy.exp %1 : tensor<4x3xf32>
  func.return %2 : tensor<4x3xf32>
}

// A stack of views (transpose, then a reshape that cannot merge) of a reduce.
// CHECK-LABEL: func.func @stacked_view_of_reduce
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %{{.*}} [2] {realize = "view of reduce"} : tensor<4x6x3xf32> -> tensor<4x6x1xf32>
// CHECK-NEXT:    lazy.view %[[R]] <{{.*}} | {{.*}}> : tensor<4x6x1xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    lazy.neg %{{.*}} {realize = "output"} : tensor<3x8xf32>
func.func @stacked_view_of_reduce(%x: tensor<4x6x3xf32>) -> tensor<3x8xf32> {
  %0 = lazy.reduce add %x [2] : tensor<4x6x3xf32> -> tensor<4x6x1xf32>
  %1 = lazy.view %0 <[6, 4] strides [1, 6] offset 0 | [3, 8] strides [8, 1] offset 0> : tensor<4x6x1xf32> -> tensor<3x8xf32>
  %2 = lazy.neg %1 : tensor<3x8xf32>
  func.return %2 : tensor<3x8xf32>
}

// Views a kernel can express on a computed reduce need no realize here: the
// broadcast back over the reduced axis, and a contiguous reshape.
// CHECK-LABEL: func.func @expressible_views
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %{{.*}} [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[B:.*]] = lazy.view %[[R]] <[4, 8] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.sub %{{.*}}, %[[B]] {realize = "output"} : tensor<4x8xf32>
// CHECK-NEXT:    %[[F:.*]] = lazy.view %[[R]] <[4] strides [1] offset 0> {realize = "output"} : tensor<4x1xf32> -> tensor<4xf32>
func.func @expressible_views(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4, 8] strides [1, 0] offset 0> : tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = lazy.sub %x, %1 : tensor<4x8xf32>
  %3 = lazy.view %0 <[4] strides [1] offset 0> : tensor<4x1xf32> -> tensor<4xf32>
  func.return %2, %3 : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Outputs win: a returned reduce that is also read through a masked view, a
// returned contiguous, a returned assign and a returned copy are all "output".
// CHECK-LABEL: func.func @output_wins
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %{{.*}} [1] {realize = "output"} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[R]] <[4, 3] {{.*}}> {realize = "output"} : tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[C:.*]] = lazy.contiguous %{{.*}} {realize = "output"} : tensor<4x8xf32>
// CHECK-NEXT:    %[[A:.*]] = lazy.assign %{{.*}}, %[[C]] {realize = "output"} : tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = lazy.copy %[[A]] to "cpu" {realize = "output"} : tensor<4x8xf32>
// CHECK-NOT:     realize = "{{contiguous|assign|copy|view of reduce}}"
func.func @output_wins(%x: tensor<4x8xf32>, %acc: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.view %0 <[4, 3] strides [1, 0] offset 0 mask [[0, 4], [1, 2]]> : tensor<4x1xf32> -> tensor<4x3xf32>
  %2 = lazy.contiguous %x : tensor<4x8xf32>
  %3 = lazy.assign %acc, %2 : tensor<4x8xf32>
  %4 = lazy.copy %3 to "cpu" : tensor<4x8xf32>
  func.return %0, %2, %1, %3, %4 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
