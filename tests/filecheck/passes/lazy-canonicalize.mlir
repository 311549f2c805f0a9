// RUN: mlfuse-opt %s -p lazy-canonicalize --split-input-file | filecheck %s

// lazy-canonicalize: every movement op becomes one lazy.view carrying the
// composed index map; chains of views compose; identity views, unmasked views
// of constants and algebraic identities fold away; constants fold.

// Each movement op alone becomes one lazy.view (x is 4x8, row-major strides [8, 1]).
// CHECK-LABEL: func.func @movement_ops
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT:     lazy.{{reshape|permute|expand|shrink|flip|stride|pad}}
// reshape: same strides, new shape
// CHECK-NEXT:    %[[R:.*]] = lazy.view %[[X]] <[2, 16] strides [16, 1] offset 0> : tensor<4x8xf32> -> tensor<2x16xf32>
// permute: strides swap
// CHECK-NEXT:    %[[P:.*]] = lazy.view %[[X]] <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
// reshape + expand compose into one view: the broadcast dim has stride 0
// CHECK-NEXT:    %[[E:.*]] = lazy.view %[[X]] <[3, 4, 8] strides [0, 8, 1] offset 0> : tensor<4x8xf32> -> tensor<3x4x8xf32>
// shrink [[1, 3], [2, 7]]: offset 1*8 + 2 = 10
// CHECK-NEXT:    %[[S:.*]] = lazy.view %[[X]] <[2, 5] strides [8, 1] offset 10> : tensor<4x8xf32> -> tensor<2x5xf32>
// flip dim 0: stride -8, offset 3*8 = 24
// CHECK-NEXT:    %[[F:.*]] = lazy.view %[[X]] <[4, 8] strides [-8, 1] offset 24> : tensor<4x8xf32> -> tensor<4x8xf32>
// stride [2, 2]: strides doubled
// CHECK-NEXT:    %[[T:.*]] = lazy.view %[[X]] <[2, 4] strides [16, 2] offset 0> : tensor<4x8xf32> -> tensor<2x4xf32>
// pad [[1, 1], [0, 1]] (zero): offset -8 and a validity mask
// CHECK-NEXT:    %[[D:.*]] = lazy.view %[[X]] <[6, 9] strides [8, 1] offset -8 mask {{\[\[}}1, 5], [0, 8]]> : tensor<4x8xf32> -> tensor<6x9xf32>
// CHECK-NEXT:    func.return %[[R]], %[[P]], %[[E]], %[[S]], %[[F]], %[[T]], %[[D]] :
func.func @movement_ops(%x: tensor<4x8xf32>) -> (tensor<2x16xf32>, tensor<8x4xf32>, tensor<3x4x8xf32>, tensor<2x5xf32>, tensor<4x8xf32>, tensor<2x4xf32>, tensor<6x9xf32>) {
  %0 = lazy.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
  %1 = lazy.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %r = lazy.reshape %x : tensor<4x8xf32> -> tensor<1x4x8xf32>
  %2 = lazy.expand %r : tensor<1x4x8xf32> -> tensor<3x4x8xf32>
  %3 = lazy.shrink %x [[1, 3], [2, 7]] : tensor<4x8xf32> -> tensor<2x5xf32>
  %4 = lazy.flip %x [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = lazy.stride %x [2, 2] : tensor<4x8xf32> -> tensor<2x4xf32>
  %6 = lazy.pad %x [[1, 1], [0, 1]] : tensor<4x8xf32> -> tensor<6x9xf32>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<2x16xf32>, tensor<8x4xf32>, tensor<3x4x8xf32>, tensor<2x5xf32>, tensor<4x8xf32>, tensor<2x4xf32>, tensor<6x9xf32>
}

// -----

// A chain permute -> shrink -> reshape -> permute -> flip -> pad is one view.
// Result (a, b, c) reads x at 24 + a + 4b - 8c for c in [1, 3).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[V:.*]] = lazy.view %{{.*}} <[4, 2, 4] strides [1, 4, -8] offset 24 mask {{\[\[}}0, 4], [0, 2], [1, 3]]> : tensor<4x8xf32> -> tensor<4x2x4xf32>
// CHECK-NEXT:    func.return %[[V]]
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x2x4xf32> {
  %0 = lazy.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %1 = lazy.shrink %0 [[0, 8], [1, 3]] : tensor<8x4xf32> -> tensor<8x2xf32>
  %2 = lazy.reshape %1 : tensor<8x2xf32> -> tensor<2x4x2xf32>
  %3 = lazy.permute %2 [1, 0, 2] : tensor<2x4x2xf32> -> tensor<4x2x2xf32>
  %4 = lazy.flip %3 [2] : tensor<4x2x2xf32> -> tensor<4x2x2xf32>
  %5 = lazy.pad %4 [[0, 0], [0, 0], [1, 1]] : tensor<4x2x2xf32> -> tensor<4x2x4xf32>
  func.return %5 : tensor<4x2x4xf32>
}

// A reshape that cannot merge with a transpose stays one op, with a stack of
// two views (buffer side first).
// CHECK-LABEL: func.func @stacked
// CHECK-NEXT:    %[[V:.*]] = lazy.view %{{.*}} <[8, 4] strides [1, 8] offset 0 | [2, 16] strides [16, 1] offset 0> : tensor<4x8xf32> -> tensor<2x16xf32>
// CHECK-NEXT:    func.return %[[V]]
func.func @stacked(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %0 = lazy.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %1 = lazy.reshape %0 : tensor<8x4xf32> -> tensor<32xf32>
  %2 = lazy.reshape %1 : tensor<32xf32> -> tensor<2x16xf32>
  func.return %2 : tensor<2x16xf32>
}

// -----

// Views that compose to the identity disappear.
// CHECK-LABEL: func.func @identity_views
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[X]] :
func.func @identity_views(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = lazy.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %1 = lazy.permute %0 [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %2 = lazy.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %3 = lazy.reshape %2 : tensor<32xf32> -> tensor<4x8xf32>
  %4 = lazy.flip %x [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = lazy.flip %4 [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %1, %3, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// A view with two users: the transpose-of-transpose user reads x directly,
// the other user keeps its view.
// CHECK-LABEL: func.func @shared_view
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[T:.*]] = lazy.view %[[X]] <[8, 4] strides [1, 8] offset 0>
// CHECK-NEXT:    %[[E:.*]] = lazy.exp %[[T]] : tensor<8x4xf32>
// CHECK-NEXT:    %[[A:.*]] = lazy.add %[[X]], %[[X]] : tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[E]], %[[A]]
func.func @shared_view(%x: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>) {
  %0 = lazy.permute %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %e = lazy.exp %0 : tensor<8x4xf32>
  %1 = lazy.permute %0 [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %2 = lazy.add %1, %x : tensor<4x8xf32>
  func.return %e, %2 : tensor<8x4xf32>, tensor<4x8xf32>
}

// -----

// Unmasked views of a constant fold into a constant of the view's shape; a
// masked one (pad: zeros outside) stays a view of the constant.
// CHECK-LABEL: func.func @view_of_const
// CHECK-NEXT:    %[[C:.*]] = lazy.const 2.5 : tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = lazy.view %[[C]] <[6, 8] strides [8, 1] offset -8 mask {{\[\[}}1, 5], [0, 8]]> : tensor<4x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:    %[[I:.*]] = lazy.const 7 : tensor<2x2xi32>
// CHECK-NEXT:    func.return %[[C]], %[[P]], %[[I]] :
func.func @view_of_const() -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<2x2xi32>) {
  %c = lazy.const 2.5 : tensor<f32>
  %0 = lazy.reshape %c : tensor<f32> -> tensor<1x1xf32>
  %1 = lazy.expand %0 : tensor<1x1xf32> -> tensor<4x8xf32>
  %2 = lazy.pad %1 [[1, 1], [0, 0]] : tensor<4x8xf32> -> tensor<6x8xf32>
  %i = lazy.const 7 : tensor<4x4xi32>
  %3 = lazy.shrink %i [[0, 2], [2, 4]] : tensor<4x4xi32> -> tensor<2x2xi32>
  func.return %1, %2, %3 : tensor<4x8xf32>, tensor<6x8xf32>, tensor<2x2xi32>
}

// -----

// pad with a non-zero value: where(view(true), view(x), value), both views
// carrying the pad's mask; no lazy.pad is left.
// CHECK-LABEL: func.func @pad_value
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     lazy.pad
// CHECK-NEXT:    %[[V:.*]] = lazy.view %[[X]] <[7] strides [1] offset -1 mask {{\[\[}}1, 5]]> : tensor<4xf32> -> tensor<7xf32>
// CHECK-NEXT:    %[[T:.*]] = lazy.const true : tensor<4xi1>
// CHECK-NEXT:    %[[M:.*]] = lazy.view %[[T]] <[7] strides [1] offset -1 mask {{\[\[}}1, 5]]> : tensor<4xi1> -> tensor<7xi1>
// CHECK-NEXT:    %[[F:.*]] = lazy.const -1.5 : tensor<7xf32>
// CHECK-NEXT:    %[[W:.*]] = lazy.where %[[M]], %[[V]], %[[F]] : tensor<7xf32>
// CHECK-NEXT:    func.return %[[W]]
func.func @pad_value(%x: tensor<4xf32>) -> tensor<7xf32> {
  %0 = lazy.pad %x [[1, 2]] value -1.5 : tensor<4xf32> -> tensor<7xf32>
  func.return %0 : tensor<7xf32>
}

// -----

// x*1, 1*x, x+(-0.0), (-0.0)+x, x-0.0, x/1, neg(neg(x)) and a cast to the same type are x.
// Not identities: 0-x, x/1 on integers (the rule is for floats only), and x+0.0 on
// floats (-0.0 + 0.0 is +0.0); on integers x+0 is x.
// CHECK-LABEL: func.func @identities
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[Z:.*]] = lazy.const 0.0 : tensor<4xf32>
// CHECK-NEXT:    %[[ONE:.*]] = lazy.const 1 : tensor<4xi32>
// CHECK-NEXT:    %[[D:.*]] = lazy.div %[[I]], %[[ONE]] : tensor<4xi32>
// CHECK-NEXT:    %[[S:.*]] = lazy.sub %[[Z]], %[[X]] : tensor<4xf32>
// CHECK-NEXT:    %[[ADD:.*]] = lazy.add %[[X]], %[[Z]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[I]], %[[D]], %[[S]], %[[ADD]], %[[I]] :
func.func @identities(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %one = lazy.const 1.0 : tensor<4xf32>
  %zero = lazy.const 0.0 : tensor<4xf32>
  %negzero = lazy.const -0.0 : tensor<4xf32>
  %0 = lazy.mul %x, %one : tensor<4xf32>
  %1 = lazy.mul %one, %x : tensor<4xf32>
  %2 = lazy.add %x, %negzero : tensor<4xf32>
  %3 = lazy.add %negzero, %x : tensor<4xf32>
  %4 = lazy.sub %x, %zero : tensor<4xf32>
  %5 = lazy.div %x, %one : tensor<4xf32>
  %n = lazy.neg %x : tensor<4xf32>
  %6 = lazy.neg %n : tensor<4xf32>
  %7 = lazy.cast %i : tensor<4xi32> to tensor<4xi32>
  %ione = lazy.const 1 : tensor<4xi32>
  %8 = lazy.div %i, %ione : tensor<4xi32>
  %9 = lazy.sub %zero, %x : tensor<4xf32>
  %10 = lazy.add %x, %zero : tensor<4xf32>
  %izero = lazy.const 0 : tensor<4xi32>
  %11 = lazy.add %i, %izero : tensor<4xi32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}

// Identities also see a 1 or a 0 through a broadcast of a scalar constant.
// CHECK-LABEL: func.func @identity_through_view
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @identity_through_view(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = lazy.const 1.0 : tensor<f32>
  %0 = lazy.reshape %c : tensor<f32> -> tensor<1x1xf32>
  %1 = lazy.expand %0 : tensor<1x1xf32> -> tensor<4x8xf32>
  %2 = lazy.mul %x, %1 : tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// A reduce over size-1 axes only is its input; one over a real axis stays.
// CHECK-LABEL: func.func @reduce_size1
// CHECK-SAME:    (%[[X:.*]]: tensor<4x1x8xf32>)
// CHECK-NEXT:    %[[R:.*]] = lazy.reduce max %[[X]] [1, 2] : tensor<4x1x8xf32> -> tensor<4x1x1xf32>
// CHECK-NEXT:    func.return %[[X]], %[[R]] :
func.func @reduce_size1(%x: tensor<4x1x8xf32>) -> (tensor<4x1x8xf32>, tensor<4x1x1xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x1x8xf32> -> tensor<4x1x8xf32>
  %1 = lazy.reduce max %x [1, 2] : tensor<4x1x8xf32> -> tensor<4x1x1xf32>
  func.return %0, %1 : tensor<4x1x8xf32>, tensor<4x1x1xf32>
}

// -----

// Constant folding: (2 + 3) * 3 = 15, broadcast to the use's shape; integer
// arithmetic wraps like the element type (i32 max + 1).
// CHECK-LABEL: func.func @fold
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     lazy.add
// CHECK-NEXT:    %[[C:.*]] = lazy.const 15.0 : tensor<4xf32>
// CHECK-NEXT:    %[[Y:.*]] = lazy.mul %[[X]], %[[C]] : tensor<4xf32>
// CHECK-NEXT:    %[[W:.*]] = lazy.const -2147483648 : tensor<4xi32>
// CHECK-NEXT:    func.return %[[Y]], %[[W]] :
func.func @fold(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %a = lazy.const 2.0 : tensor<f32>
  %b = lazy.const 3.0 : tensor<f32>
  %s = lazy.add %a, %b : tensor<f32>
  %m = lazy.mul %s, %b : tensor<f32>
  %r = lazy.reshape %m : tensor<f32> -> tensor<1xf32>
  %e = lazy.expand %r : tensor<1xf32> -> tensor<4xf32>
  %y = lazy.mul %x, %e : tensor<4xf32>
  %i = lazy.const 2147483647 : tensor<4xi32>
  %j = lazy.const 1 : tensor<4xi32>
  %w = lazy.add %i, %j : tensor<4xi32>
  func.return %y, %w : tensor<4xf32>, tensor<4xi32>
}

// -----

// Nothing is computed from zero elements: a value with no elements is a
// constant, a sum over an empty axis is its identity (0), a max over one is
// -inf, and a pad of an empty tensor reads only padding (0).
// CHECK-LABEL: func.func @empty
// CHECK-SAME:    (%[[X:.*]]: tensor<0x4xf32>)
// CHECK-DAG:     %[[E:.*]] = lazy.const 0.0 : tensor<0x4xf32>
// CHECK-DAG:     %[[S:.*]] = lazy.const 0.0 : tensor<1x4xf32>
// CHECK-DAG:     %[[M:.*]] = lazy.const -inf : tensor<1x4xf32>
// CHECK-DAG:     %[[P:.*]] = lazy.const 0.0 : tensor<2x4xf32>
// CHECK-NOT:     lazy.{{exp|reduce|view|pad}}
// CHECK:         func.return %[[E]], %[[S]], %[[M]], %[[P]] :
func.func @empty(%x: tensor<0x4xf32>) -> (tensor<0x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<2x4xf32>) {
  %0 = lazy.exp %x : tensor<0x4xf32>
  %1 = lazy.reduce add %x [0] : tensor<0x4xf32> -> tensor<1x4xf32>
  %2 = lazy.reduce max %x [0] : tensor<0x4xf32> -> tensor<1x4xf32>
  %3 = lazy.pad %x [[1, 1], [0, 0]] : tensor<0x4xf32> -> tensor<2x4xf32>
  func.return %0, %1, %2, %3 : tensor<0x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<2x4xf32>
}

// -----

// Folding constants: casts convert as kernels do (floats to ints saturate,
// NaN to 0), compares give bools, a where with a constant condition is one of
// its operands, a reduce of a constant is c*n (add), c**n (mul) or c (max);
// exp is not folded (its value is the kernel's math library's).
// CHECK-LABEL: func.func @fold_more
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-DAG:     lazy.const 3 : tensor<4xi32>
// CHECK-DAG:     lazy.const 2147483647 : tensor<4xi32>
// CHECK-DAG:     lazy.const true : tensor<4xi1>
// CHECK-DAG:     lazy.const 24.0 : tensor<1x1xf32>
// CHECK-DAG:     lazy.const 16.0 : tensor<1x1xf32>
// CHECK-DAG:     lazy.const 2.0 : tensor<1x1xf32>
// CHECK-DAG:     %[[E:.*]] = lazy.exp
// CHECK-NOT:     lazy.{{cast|cmplt|where|reduce}}
// CHECK:         func.return {{.*}}, %[[X]], {{.*}}, %[[E]] :
func.func @fold_more(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<4xf32>) {
  %a = lazy.const 3.7 : tensor<4xf32>
  %0 = lazy.cast %a : tensor<4xf32> to tensor<4xi32>
  %b = lazy.const 1.0e20 : tensor<4xf32>
  %1 = lazy.cast %b : tensor<4xf32> to tensor<4xi32>
  %c = lazy.const 1.0 : tensor<4xf32>
  %2 = lazy.cmplt %c, %a : tensor<4xf32>
  %3 = lazy.where %2, %x, %y : tensor<4xf32>
  %t = lazy.const 2.0 : tensor<3x4xf32>
  %4 = lazy.reduce add %t [0, 1] : tensor<3x4xf32> -> tensor<1x1xf32>
  %u = lazy.const 2.0 : tensor<2x2xf32>
  %5 = lazy.reduce mul %u [0, 1] : tensor<2x2xf32> -> tensor<1x1xf32>
  %6 = lazy.reduce max %u [0, 1] : tensor<2x2xf32> -> tensor<1x1xf32>
  %7 = lazy.exp %c : tensor<4xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<4xf32>
}

// -----

// contiguous(contiguous(x)) is one contiguous; assigning a buffer its own
// values changes nothing.
// CHECK-LABEL: func.func @no_ops
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C:.*]] = lazy.contiguous %[[X]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[C]], %[[X]] :
func.func @no_ops(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = lazy.contiguous %x : tensor<4xf32>
  %1 = lazy.contiguous %0 : tensor<4xf32>
  %2 = lazy.assign %x, %x : tensor<4xf32>
  func.return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
