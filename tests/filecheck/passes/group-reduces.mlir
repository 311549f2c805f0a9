// RUN: mlfuse-opt %s --split-input-file -p lazy-canonicalize,push-views,mark-realize,group-reduces | filecheck %s
// RUN: mlfuse-opt %s --split-input-file -p 'lazy-canonicalize,push-views,mark-realize,group-reduces{horizontal=false}' | filecheck %s --check-prefix=NOH
// RUN: mlfuse-opt %s --split-input-file -p 'lazy-canonicalize,push-views,mark-realize,group-reduces{max-buffers=2}' | filecheck %s --check-prefix=MAXB
// RUN: mlfuse-opt %s --split-input-file -p mark-realize,group-reduces 2>&1 | filecheck %s --check-prefix=RAW
// RUN: mlfuse-opt %s --split-input-file -p 'lazy-canonicalize,push-views,mark-realize,group-reduces{recompute=4}' | filecheck %s --check-prefix=RECOMPUTE
// RUN: mlfuse-opt %s --split-input-file -p 'lazy-canonicalize,push-views,mark-realize,group-reduces{max-ops=3}' | filecheck %s --check-prefix=MAXOPS
// RUN: mlfuse-opt %s --split-input-file -p 'lazy-canonicalize,push-views,mark-realize,group-reduces{max-loops=2}' | filecheck %s --check-prefix=MAXLOOPS
// RUN: mlfuse-opt %s --split-input-file -p 'lazy-canonicalize,push-views,mark-realize,group-reduces{factor-elements=64}' | filecheck %s --check-prefix=FACTOR

// group-reduces: every op gets {group = N} (N numbers the kernels in program
// order); values a kernel cannot compute without recomputing a reduction get a
// realize reason; every refused merge is recorded in the function's not_fused
// list with the two groups and the reason (`stored`: a value between them is
// materialized; `heuristic`: refused for profitability, not correctness).
// Inputs are front-end programs; the prerequisite passes run first.
//
// RUN 4 (prefix RAW) feeds the same programs without lazy-canonicalize: the
// kernel planner reads raw movement ops (lazy.expand/reshape) as the views
// they are, so softmax is still one group (regression: the planner once
// asserted on them and mlfuse-opt died with a traceback).
// RAW-NOT: Traceback
// RAW-LABEL: func.func @softmax
// RAW:       lazy.expand {{.*}} {group = 0 : i64}
// RAW:       lazy.expand {{.*}} {group = 0 : i64}
// RAW-NEXT:  lazy.div {{.*}} {realize = "output", group = 0 : i64}
// RAW-NOT: Traceback
//
// The CHECK lines of the default run end in "{group = 0 : i64}" for ops that
// are not materialized (no realize in the same dictionary).

// softmax: both reduces, the exp and the division are one kernel.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    lazy.reduce max {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.sub {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.exp {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.reduce add {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.div {{.*}} {realize = "output", group = 0 : i64}
// CHECK-NEXT:    func.return
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.expand %0 : tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = lazy.sub %x, %1 : tensor<4x8xf32>
  %3 = lazy.exp %2 : tensor<4x8xf32>
  %4 = lazy.reduce add %3 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %5 = lazy.expand %4 : tensor<4x1xf32> -> tensor<4x8xf32>
  %6 = lazy.div %3, %5 : tensor<4x8xf32>
  func.return %6 : tensor<4x8xf32>
}

// x - x.max(1, keepdim=True): the broadcast back of the max stays in the kernel.
// CHECK-LABEL: func.func @sub_max
// CHECK-NEXT:    lazy.reduce max {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.sub {{.*}} {realize = "output", group = 0 : i64}
// CHECK-NEXT:    func.return
func.func @sub_max(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.expand %0 : tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = lazy.sub %x, %1 : tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----

// layernorm: mean, centered variance and the normalization are one kernel;
// nothing but the output is materialized.
// CHECK-LABEL: func.func @layernorm
// CHECK-NEXT:    lazy.reduce add {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.const {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.mul {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.sub {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.mul {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.reduce add {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.mul {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.const {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.add {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.sqrt {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.div {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.view %{{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.mul {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.view %{{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.add {{.*}} {realize = "output", group = 0 : i64}
// CHECK-NEXT:    func.return
func.func @layernorm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.const 0.125 : tensor<f32>
  %2 = lazy.reshape %1 : tensor<f32> -> tensor<1x1xf32>
  %3 = lazy.expand %2 : tensor<1x1xf32> -> tensor<4x1xf32>
  %4 = lazy.mul %0, %3 : tensor<4x1xf32>
  %5 = lazy.expand %4 : tensor<4x1xf32> -> tensor<4x8xf32>
  %6 = lazy.sub %x, %5 : tensor<4x8xf32>
  %7 = lazy.mul %6, %6 : tensor<4x8xf32>
  %8 = lazy.reduce add %7 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %9 = lazy.mul %8, %3 : tensor<4x1xf32>
  %10 = lazy.const 1.0e-05 : tensor<4x1xf32>
  %11 = lazy.add %9, %10 : tensor<4x1xf32>
  %12 = lazy.sqrt %11 : tensor<4x1xf32>
  %13 = lazy.expand %12 : tensor<4x1xf32> -> tensor<4x8xf32>
  %14 = lazy.div %6, %13 : tensor<4x8xf32>
  %15 = lazy.reshape %w : tensor<8xf32> -> tensor<1x8xf32>
  %16 = lazy.expand %15 : tensor<1x8xf32> -> tensor<4x8xf32>
  %17 = lazy.mul %14, %16 : tensor<4x8xf32>
  %18 = lazy.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %19 = lazy.expand %18 : tensor<1x8xf32> -> tensor<4x8xf32>
  %20 = lazy.add %17, %19 : tensor<4x8xf32>
  func.return %20 : tensor<4x8xf32>
}

// -----

// mlp2 = (x@w1 + b1).relu() @ w2 + b2: the second matmul broadcasts the first
// layer's output, so the relu is materialized ("expand of reduce") and ends
// kernel 0; the second layer is kernel 1.
// CHECK-LABEL: func.func @mlp2
// CHECK:         %[[H:.*]] = lazy.max %{{.*}}, %{{.*}} {realize = "expand of reduce", group = 0 : i64} : tensor<4x16xf32>
// CHECK-NEXT:    lazy.view %[[H]] <[4, 4, 16] strides [16, 0, 1] offset 0> {group = 1 : i64}
// CHECK-NEXT:    lazy.view %{{.*}} {group = 1 : i64}
// CHECK-NEXT:    lazy.mul {{.*}} {group = 1 : i64}
// CHECK-NEXT:    lazy.reduce add {{.*}} [2] {group = 1 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {group = 1 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {group = 1 : i64}
// CHECK-NEXT:    lazy.add {{.*}} {realize = "output", group = 1 : i64} : tensor<4x4xf32>
// CHECK-NEXT:    func.return
// NOH-LABEL:   func.func @mlp2
// NOH:           lazy.max {{.*}} {realize = "expand of reduce", group = 0 : i64}
// MAXB-LABEL:  func.func @mlp2
// MAXB:          lazy.max {{.*}} {realize = "expand of reduce", group = 0 : i64}
func.func @mlp2(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>, %w2: tensor<16x4xf32>, %b2: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = lazy.reshape %x : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %1 = lazy.expand %0 : tensor<4x1x8xf32> -> tensor<4x16x8xf32>
  %2 = lazy.permute %w1 [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %3 = lazy.reshape %2 : tensor<16x8xf32> -> tensor<1x16x8xf32>
  %4 = lazy.expand %3 : tensor<1x16x8xf32> -> tensor<4x16x8xf32>
  %5 = lazy.mul %1, %4 : tensor<4x16x8xf32>
  %6 = lazy.reduce add %5 [2] : tensor<4x16x8xf32> -> tensor<4x16x1xf32>
  %7 = lazy.reshape %6 : tensor<4x16x1xf32> -> tensor<4x16xf32>
  %8 = lazy.reshape %b1 : tensor<16xf32> -> tensor<1x16xf32>
  %9 = lazy.expand %8 : tensor<1x16xf32> -> tensor<4x16xf32>
  %10 = lazy.add %7, %9 : tensor<4x16xf32>
  %11 = lazy.const 0.0 : tensor<4x16xf32>
  %12 = lazy.max %10, %11 : tensor<4x16xf32>
  %13 = lazy.reshape %12 : tensor<4x16xf32> -> tensor<4x1x16xf32>
  %14 = lazy.expand %13 : tensor<4x1x16xf32> -> tensor<4x4x16xf32>
  %15 = lazy.permute %w2 [1, 0] : tensor<16x4xf32> -> tensor<4x16xf32>
  %16 = lazy.reshape %15 : tensor<4x16xf32> -> tensor<1x4x16xf32>
  %17 = lazy.expand %16 : tensor<1x4x16xf32> -> tensor<4x4x16xf32>
  %18 = lazy.mul %14, %17 : tensor<4x4x16xf32>
  %19 = lazy.reduce add %18 [2] : tensor<4x4x16xf32> -> tensor<4x4x1xf32>
  %20 = lazy.reshape %19 : tensor<4x4x1xf32> -> tensor<4x4xf32>
  %21 = lazy.reshape %b2 : tensor<4xf32> -> tensor<1x4xf32>
  %22 = lazy.expand %21 : tensor<1x4xf32> -> tensor<4x4xf32>
  %23 = lazy.add %20, %22 : tensor<4x4xf32>
  func.return %23 : tensor<4x4xf32>
}

// -----

// x.sum(1).sum(0): the second reduce runs over the dim the first one's result
// varies along, so the first one is computed inside the second one's loop,
// once per row: a multi-stage reduction, one group.
// CHECK-LABEL: func.func @sum_sum
// CHECK-NOT:     not_fused
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %{{.*}} [1] {group = 0 : i64}
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[R]] <[4] strides [1] offset 0> {group = 0 : i64}
// CHECK-NEXT:    %[[S:.*]] = lazy.reduce add %[[V]] [0] {group = 0 : i64}
// CHECK-NEXT:    lazy.view %[[S]] {{.*}} {realize = "output", group = 0 : i64}
// CHECK-NEXT:    func.return
func.func @sum_sum(%x: tensor<4x8xf32>) -> tensor<f32> {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.reshape %0 : tensor<4x1xf32> -> tensor<4xf32>
  %2 = lazy.reduce add %1 [0] : tensor<4xf32> -> tensor<1xf32>
  %3 = lazy.reshape %2 : tensor<1xf32> -> tensor<f32>
  func.return %3 : tensor<f32>
}

// -----

// s = x.sum(1); outputs s + 1 and s * 2: both outputs need the reduce, one
// kernel computes both (merged, one group, the reduce itself not stored).
// Not a horizontal merge: it happens with horizontal=false too. With
// max-buffers=2 the merged kernel would need 3 buffers (x and two outputs),
// so s is materialized instead and its two readers stay apart.
// CHECK-LABEL: func.func @shared_reduce
// CHECK-NOT:     not_fused
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %{{.*}} [1] {group = 0 : i64}
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[R]] {{.*}} {group = 0 : i64}
// CHECK-NEXT:    %[[ONE:.*]] = lazy.const 1.0 {group = 0 : i64}
// CHECK-NEXT:    lazy.add %[[V]], %[[ONE]] {realize = "output", group = 0 : i64}
// CHECK-NEXT:    %[[TWO:.*]] = lazy.const 2.0 {group = 0 : i64}
// CHECK-NEXT:    lazy.mul %[[V]], %[[TWO]] {realize = "output", group = 0 : i64}
// CHECK-NEXT:    func.return
// NOH-LABEL:   func.func @shared_reduce
// NOH-NOT:       group = 1
// NOH:           func.return
// MAXB-LABEL:  func.func @shared_reduce
// MAXB-SAME:     attributes {not_fused = [{groups = array<i64: 1, 2>, reason = "more than max-buffers=2 buffers"}, {groups = array<i64: 0, 1>, reason = "read by 2 kernels", stored}, {groups = array<i64: 0, 2>, reason = "read by 2 kernels", stored}]}
// MAXB-NEXT:     %[[R:.*]] = lazy.reduce add %{{.*}} [1] {group = 0 : i64}
// MAXB-NEXT:     %[[V:.*]] = lazy.view %[[R]] {{.*}} {realize = "read by 2 kernels", group = 0 : i64}
// MAXB-NEXT:     lazy.const 1.0 {group = 1 : i64}
// MAXB-NEXT:     lazy.add %[[V]], %{{.*}} {realize = "output", group = 1 : i64}
// MAXB-NEXT:     lazy.const 2.0 {group = 2 : i64}
// MAXB-NEXT:     lazy.mul %[[V]], %{{.*}} {realize = "output", group = 2 : i64}
func.func @shared_reduce(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.reshape %0 : tensor<4x1xf32> -> tensor<4xf32>
  %2 = lazy.const 1.0 : tensor<4xf32>
  %3 = lazy.add %1, %2 : tensor<4xf32>
  %4 = lazy.const 2.0 : tensor<4xf32>
  %5 = lazy.mul %1, %4 : tensor<4xf32>
  func.return %3, %5 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A reduce two kernels need that one kernel cannot compute for both (one
// reduces it again in its loop, the other stores it in its own loop: it would
// be computed twice) is materialized once: "read by 2 kernels".
// CHECK-LABEL: func.func @read_by_two
// CHECK-SAME:    attributes {not_fused = [{groups = array<i64: 1, 2>, reason = "not one kernel (reduce of reduce)"}, {groups = array<i64: 0, 1>, reason = "read by 2 kernels", stored}, {groups = array<i64: 0, 2>, reason = "read by 2 kernels", stored}]}
// The value materialized is the last one both need (the sweep runs from the
// outputs up): the row sums as the (4,) tensor both kernels read.
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce add %{{.*}} [1] {group = 0 : i64}
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[R]] <[4] strides [1] offset 0> {realize = "read by 2 kernels", group = 0 : i64}
// CHECK-NEXT:    lazy.reduce add %[[V]] [0] {realize = "output", group = 1 : i64}
// CHECK-NEXT:    lazy.const 2.0 {group = 2 : i64}
// CHECK-NEXT:    lazy.mul %[[V]], %{{.*}} {realize = "output", group = 2 : i64}
func.func @read_by_two(%x: tensor<4x8xf32>) -> (tensor<1xf32>, tensor<4xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.reshape %0 : tensor<4x1xf32> -> tensor<4xf32>
  %2 = lazy.reduce add %1 [0] : tensor<4xf32> -> tensor<1xf32>
  %3 = lazy.const 2.0 : tensor<4xf32>
  %4 = lazy.mul %1, %3 : tensor<4xf32>
  func.return %2, %4 : tensor<1xf32>, tensor<4xf32>
}

// -----

// multi_output: y = x*2; outputs y + 1 and y.sum(0). The horizontal merge is
// legal but refused by the parallel-extent heuristic (logged); the cheap y is
// cloned into both kernels instead of being materialized.
// CHECK-LABEL: func.func @multi_output
// CHECK-SAME:    attributes {not_fused = [{groups = array<i64: 0, 1>, reason = "parallel extent would drop from 32 to 8", heuristic}]}
// CHECK-NEXT:    %[[C0:.*]] = lazy.const 2.0 {group = 0 : i64}
// CHECK-NEXT:    %[[C1:.*]] = lazy.const 2.0 {group = 1 : i64}
// CHECK-NEXT:    %[[Y0:.*]] = lazy.mul %[[X:.*]], %[[C0]] {group = 0 : i64}
// CHECK-NEXT:    %[[Y1:.*]] = lazy.mul %[[X]], %[[C1]] {group = 1 : i64}
// CHECK-NEXT:    lazy.const 1.0 {group = 0 : i64}
// CHECK-NEXT:    lazy.add %[[Y0]], %{{.*}} {realize = "output", group = 0 : i64}
// CHECK-NEXT:    %[[S:.*]] = lazy.reduce add %[[Y1]] [0] {group = 1 : i64}
// CHECK-NEXT:    lazy.view %[[S]] {{.*}} {realize = "output", group = 1 : i64}
// CHECK-NOT:     realize
// NOH-LABEL:   func.func @multi_output
// NOH-NOT:       not_fused
// NOH:           lazy.reduce add {{.*}} {group = 1 : i64}
// MAXB-LABEL:  func.func @multi_output
// MAXB-SAME:     not_fused = [{groups = array<i64: 0, 1>, reason = "more than max-buffers=2 buffers"}]
func.func @multi_output(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %0 = lazy.const 2.0 : tensor<4x8xf32>
  %1 = lazy.mul %x, %0 : tensor<4x8xf32>
  %2 = lazy.const 1.0 : tensor<4x8xf32>
  %3 = lazy.add %1, %2 : tensor<4x8xf32>
  %4 = lazy.reduce add %1 [0] : tensor<4x8xf32> -> tensor<1x8xf32>
  %5 = lazy.reshape %4 : tensor<1x8xf32> -> tensor<8xf32>
  func.return %3, %5 : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// Two reduces over the same rows of the same input merge horizontally into
// one kernel; horizontal=false keeps them apart (and logs nothing); with
// max-buffers=2 the merge (x and two outputs) is refused and logged.
// CHECK-LABEL: func.func @sum_and_max
// CHECK-NOT:     not_fused
// CHECK-NEXT:    lazy.reduce add {{.*}} {realize = "output", group = 0 : i64}
// CHECK-NEXT:    lazy.reduce max {{.*}} {realize = "output", group = 0 : i64}
// NOH-LABEL:   func.func @sum_and_max
// NOH-NOT:       not_fused
// NOH-NEXT:      lazy.reduce add {{.*}} {realize = "output", group = 0 : i64}
// NOH-NEXT:      lazy.reduce max {{.*}} {realize = "output", group = 1 : i64}
// MAXB-LABEL:  func.func @sum_and_max
// MAXB-SAME:     attributes {not_fused = [{groups = array<i64: 0, 1>, reason = "more than max-buffers=2 buffers"}]}
// MAXB-NEXT:     lazy.reduce add {{.*}} {realize = "output", group = 0 : i64}
// MAXB-NEXT:     lazy.reduce max {{.*}} {realize = "output", group = 1 : i64}
func.func @sum_and_max(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %0, %1 : tensor<4x1xf32>, tensor<4x1xf32>
}

// A row sum and a column max of the same product: one kernel would have to
// loop over each reduce's output dim inside the other; refused and logged.
// The shared cheap product is cloned into both kernels.
// CHECK-LABEL: func.func @row_and_column
// CHECK-SAME:    attributes {not_fused = [{groups = array<i64: 0, 1>, reason = "not one kernel (outputs of different shapes)"}]}
// CHECK-NEXT:    %[[P0:.*]] = lazy.mul %[[X:.*]], %[[Y:.*]] {group = 0 : i64}
// CHECK-NEXT:    %[[P1:.*]] = lazy.mul %[[X]], %[[Y]] {group = 1 : i64}
// CHECK-NEXT:    lazy.reduce add %[[P0]] [1] {realize = "output", group = 0 : i64}
// CHECK-NEXT:    lazy.reduce max %[[P1]] [0] {realize = "output", group = 1 : i64}
func.func @row_and_column(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<1x8xf32>) {
  %0 = lazy.mul %x, %y : tensor<4x8xf32>
  %1 = lazy.reduce add %0 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %2 = lazy.reduce max %0 [0] : tensor<4x8xf32> -> tensor<1x8xf32>
  func.return %1, %2 : tensor<4x1xf32>, tensor<1x8xf32>
}

// -----

// A multi-stage reduction: x.sum(2).relu().sum(1) is one kernel; the inner
// sums are computed inside the outer sum's loop, each once.
// CHECK-LABEL: func.func @multistage
// CHECK-NOT:     not_fused
// CHECK-NEXT:    lazy.reduce add {{.*}} [2] {group = 0 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.const 0.0 {group = 0 : i64}
// CHECK-NEXT:    lazy.max {{.*}} {group = 0 : i64}
// CHECK-NEXT:    lazy.reduce add {{.*}} [1] {group = 0 : i64}
// CHECK-NEXT:    lazy.view {{.*}} {realize = "output", group = 0 : i64}
func.func @multistage(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  %0 = lazy.reduce add %x [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %1 = lazy.reshape %0 : tensor<2x3x1xf32> -> tensor<2x3xf32>
  %c = lazy.const 0.0 : tensor<2x3xf32>
  %2 = lazy.max %1, %c : tensor<2x3xf32>
  %3 = lazy.reduce add %2 [1] : tensor<2x3xf32> -> tensor<2x1xf32>
  %4 = lazy.reshape %3 : tensor<2x1xf32> -> tensor<2xf32>
  func.return %4 : tensor<2xf32>
}

// -----

// Cheap work is recomputed in at most three loops of a kernel. Four
// normalizations in a row (h = exp(h - max(h))) would compute the first
// exp in the loops of all three later maxes and in the store loop: the value
// is materialized instead, "recomputed in 4 loops" (all cuts of a long chain
// are found at once).
// With recompute=4 the four normalizations are one kernel.
// CHECK-LABEL: func.func @budget
// CHECK-SAME:    not_fused = [{groups = array<i64: 0, 1>, reason = "recomputed in 4 loops", stored}]
// RECOMPUTE-LABEL: func.func @budget
// RECOMPUTE-NOT:     realize = "recomputed
// RECOMPUTE:         lazy.exp {{.*}} {realize = "output", group = 0 : i64}
// CHECK:         lazy.exp {{.*}} {realize = "recomputed in 4 loops", group = 0 : i64}
// CHECK-NOT:     realize = "recomputed
// CHECK:         lazy.exp {{.*}} {realize = "output", group = 1 : i64}
func.func @budget(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %b0 = lazy.expand %m0 : tensor<4x1xf32> -> tensor<4x8xf32>
  %d0 = lazy.sub %x, %b0 : tensor<4x8xf32>
  %h0 = lazy.exp %d0 : tensor<4x8xf32>
  %m1 = lazy.reduce max %h0 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %b1 = lazy.expand %m1 : tensor<4x1xf32> -> tensor<4x8xf32>
  %d1 = lazy.sub %h0, %b1 : tensor<4x8xf32>
  %h1 = lazy.exp %d1 : tensor<4x8xf32>
  %m2 = lazy.reduce max %h1 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %b2 = lazy.expand %m2 : tensor<4x1xf32> -> tensor<4x8xf32>
  %d2 = lazy.sub %h1, %b2 : tensor<4x8xf32>
  %h2 = lazy.exp %d2 : tensor<4x8xf32>
  %m3 = lazy.reduce max %h2 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %b3 = lazy.expand %m3 : tensor<4x1xf32> -> tensor<4x8xf32>
  %d3 = lazy.sub %h2, %b3 : tensor<4x8xf32>
  %h3 = lazy.exp %d3 : tensor<4x8xf32>
  func.return %h3 : tensor<4x8xf32>
}

// -----

// A kernel computes at most max-ops ops: with max-ops=3 a chain of eight is
// cut, from the output up, into kernels of three (every cut found at once).
// MAXOPS-LABEL: func.func @long_chain
// MAXOPS:         lazy.add {{.*}} {group = 0 : i64}
// MAXOPS-NEXT:    lazy.mul {{.*}} {realize = "kernel over 3 ops", group = 0 : i64}
// MAXOPS-NEXT:    lazy.add {{.*}} {group = 1 : i64}
// MAXOPS-NEXT:    lazy.mul {{.*}} {group = 1 : i64}
// MAXOPS-NEXT:    lazy.add {{.*}} {realize = "kernel over 3 ops", group = 1 : i64}
// MAXOPS-NEXT:    lazy.mul {{.*}} {group = 2 : i64}
// MAXOPS-NEXT:    lazy.add {{.*}} {group = 2 : i64}
// MAXOPS-NEXT:    lazy.mul {{.*}} {realize = "output", group = 2 : i64}
// CHECK-LABEL: func.func @long_chain
// CHECK-NOT:     realize = "kernel
func.func @long_chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = lazy.const 2.0 : tensor<8xf32>
  %0 = lazy.add %x, %c : tensor<8xf32>
  %1 = lazy.mul %0, %c : tensor<8xf32>
  %2 = lazy.add %1, %c : tensor<8xf32>
  %3 = lazy.mul %2, %c : tensor<8xf32>
  %4 = lazy.add %3, %c : tensor<8xf32>
  %5 = lazy.mul %4, %c : tensor<8xf32>
  %6 = lazy.add %5, %c : tensor<8xf32>
  %7 = lazy.mul %6, %c : tensor<8xf32>
  func.return %7 : tensor<8xf32>
}

// -----

// A kernel has at most max-loops reduce loop nests: with max-loops=2 a sum of
// four row sums is cut after every two (at the running sum, not at a reduce).
// MAXLOOPS-LABEL: func.func @many_reduces
// MAXLOOPS:         lazy.add {{.*}} {realize = "kernel over 2 loops", group = 0 : i64}
// MAXLOOPS:         lazy.add {{.*}} {realize = "output", group = 1 : i64}
// CHECK-LABEL: func.func @many_reduces
// CHECK-NOT:     realize = "kernel
func.func @many_reduces(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>, %d: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = lazy.reduce add %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.reduce add %b [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %2 = lazy.reduce add %c [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %3 = lazy.reduce add %d [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %4 = lazy.add %0, %1 : tensor<4x1xf32>
  %5 = lazy.add %4, %2 : tensor<4x1xf32>
  %6 = lazy.add %5, %3 : tensor<4x1xf32>
  func.return %6 : tensor<4x1xf32>
}

// -----

// A kernel that reads the old contents of %x runs before the kernel assigning
// %x, so a merge must not put the assign in a kernel that also runs after that
// reader. Here %3 reads %x (old) and %2 (an assign() result, a boundary): the
// assign of %x shares %3's kernel (it reads %x where it writes it), and %0
// and the assign of %y stay apart (merging them with %x's assign would need
// %3's kernel in between, which reads %2).
// CHECK-LABEL: func.func @assign_after_its_readers
// CHECK-SAME:    attributes {not_fused = [{groups = array<i64: 0, 1>, reason = "one reads the other's assign() result"}
// CHECK-NEXT:    %[[S:.*]] = lazy.add %{{.*}}, %{{.*}} {realize = "output", group = 0 : i64}
// CHECK-NEXT:    lazy.assign %{{.*}}, %[[S]] {realize = "output", group = 1 : i64}
// CHECK-NEXT:    lazy.assign %{{.*}}, %[[S]] {realize = "assign", group = 2 : i64}
// CHECK-NEXT:    lazy.add {{.*}} {realize = "output", group = 1 : i64}
func.func @assign_after_its_readers(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = lazy.add %x, %x : tensor<2x3xf32>
  %1 = lazy.assign %x, %0 : tensor<2x3xf32>
  %2 = lazy.assign %y, %0 : tensor<2x3xf32>
  %3 = lazy.add %x, %2 : tensor<2x3xf32>
  func.return %1, %0, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Each assign reads the other's old buffer through a flip: the kernel writing
// %x must run before the one writing %y and after it. The old %x is copied
// first ("read before its assign"), in the kernel that assigns %x (it reads
// %x where it writes it), and the assign of %y reads the copy.
// CHECK-LABEL: func.func @swap_through_flips
// CHECK-SAME:    not_fused = [{groups = array<i64: 0, 1>, reason = "read before its assign", stored}
// CHECK-NEXT:    %[[OLD:.*]] = lazy.contiguous %[[X:.*]] {realize = "read before its assign", group = 0 : i64}
// CHECK-NEXT:    %[[FY:.*]] = lazy.view %[[Y:.*]] <[2, 3] strides [-3, 1] offset 3> {group = 0 : i64}
// CHECK-NEXT:    lazy.assign %[[X]], %[[FY]] {realize = "output", group = 0 : i64}
// CHECK-NEXT:    %[[FX:.*]] = lazy.view %[[OLD]] <[2, 3] strides [-3, 1] offset 3> {group = 1 : i64}
// CHECK-NEXT:    lazy.assign %[[Y]], %[[FX]] {realize = "output", group = 1 : i64}
func.func @swap_through_flips(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = lazy.flip %y [0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = lazy.assign %x, %0 : tensor<2x3xf32>
  %2 = lazy.flip %x [0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = lazy.assign %y, %2 : tensor<2x3xf32>
  func.return %1, %3 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// softmax(s) @ v: the softmax is a factor of the product that computes exp inside
// its reduction. Small, it stays in the product's kernel (its reduces are
// computed before the product's loop); from factor-elements on it is
// materialized, so it is computed once, in vectors, and the product is a plain one.
// CHECK-LABEL: func.func @softmax_times_v
// CHECK-NOT:     realize = "costly factor of a contraction"
// CHECK:         lazy.reduce add {{.*}} [2] {group = 0 : i64}
// FACTOR-LABEL: func.func @softmax_times_v
// FACTOR-SAME:    not_fused = [{groups = array<i64: 0, 1>, reason = "costly factor of a contraction", stored}]
// FACTOR:         lazy.exp {{.*}} {group = 0 : i64}
// FACTOR:         lazy.div {{.*}} {realize = "costly factor of a contraction", group = 0 : i64}
// FACTOR:         lazy.reduce add {{.*}} [2] {group = 1 : i64}
// A factor that is a broadcast value (push-views moved the expand under the exp)
// would be stored larger than it is: it stays in the product.
// FACTOR-LABEL: func.func @exp_times_v
// FACTOR-NOT:     costly
// FACTOR:         lazy.reduce add {{.*}} [2] {group = 0 : i64}
func.func @softmax_times_v(%s: tensor<8x8xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = lazy.reduce max %s [1] : tensor<8x8xf32> -> tensor<8x1xf32>
  %1 = lazy.expand %0 : tensor<8x1xf32> -> tensor<8x8xf32>
  %2 = lazy.sub %s, %1 : tensor<8x8xf32>
  %3 = lazy.exp %2 : tensor<8x8xf32>
  %4 = lazy.reduce add %3 [1] : tensor<8x8xf32> -> tensor<8x1xf32>
  %5 = lazy.expand %4 : tensor<8x1xf32> -> tensor<8x8xf32>
  %6 = lazy.div %3, %5 : tensor<8x8xf32>
  %7 = lazy.reshape %6 : tensor<8x8xf32> -> tensor<8x1x8xf32>
  %8 = lazy.expand %7 : tensor<8x1x8xf32> -> tensor<8x4x8xf32>
  %9 = lazy.permute %v [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %10 = lazy.reshape %9 : tensor<4x8xf32> -> tensor<1x4x8xf32>
  %11 = lazy.expand %10 : tensor<1x4x8xf32> -> tensor<8x4x8xf32>
  %12 = lazy.mul %8, %11 : tensor<8x4x8xf32>
  %13 = lazy.reduce add %12 [2] : tensor<8x4x8xf32> -> tensor<8x4x1xf32>
  %14 = lazy.reshape %13 : tensor<8x4x1xf32> -> tensor<8x4xf32>
  func.return %14 : tensor<8x4xf32>
}

func.func @exp_times_v(%s: tensor<8x8xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = lazy.exp %s : tensor<8x8xf32>
  %1 = lazy.reshape %0 : tensor<8x8xf32> -> tensor<8x1x8xf32>
  %2 = lazy.expand %1 : tensor<8x1x8xf32> -> tensor<8x4x8xf32>
  %3 = lazy.permute %v [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %4 = lazy.reshape %3 : tensor<4x8xf32> -> tensor<1x4x8xf32>
  %5 = lazy.expand %4 : tensor<1x4x8xf32> -> tensor<8x4x8xf32>
  %6 = lazy.mul %2, %5 : tensor<8x4x8xf32>
  %7 = lazy.reduce add %6 [2] : tensor<8x4x8xf32> -> tensor<8x4x1xf32>
  %8 = lazy.reshape %7 : tensor<8x4x1xf32> -> tensor<8x4xf32>
  func.return %8 : tensor<8x4xf32>
}
