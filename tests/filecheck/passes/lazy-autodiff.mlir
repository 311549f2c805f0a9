// RUN: mlfuse-opt %s --split-input-file -p lazy-autodiff | filecheck %s --enable-var-scope
// RUN: mlfuse-opt %s --split-input-file -p lazy-autodiff,lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory | filecheck %s --check-prefix=FUSED

// lazy-autodiff appends the gradients of the first result with respect to the
// float arguments, built by the front end's gradient rules (mlfuse.autograd).

// d/dx sum(exp(x * w)) = exp(x * w) * w, and likewise for w; the integer
// argument gets no gradient. The backward ops fuse with the forward: one
// kernel for the sum, one for both gradients.

// CHECK-LABEL: func.func @exp_sum
// CHECK-SAME:    -> (tensor<1xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[P:.*]] = lazy.mul %x, %w : tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = lazy.exp %[[P]] : tensor<4xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.reduce add %[[E]] [0]
// CHECK-NEXT:    %[[ONE:.*]] = lazy.const 1.0 : tensor<f32>
// CHECK-NEXT:    %[[R:.*]] = lazy.reshape %[[ONE]] : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT:    %[[G:.*]] = lazy.expand %[[R]] : tensor<1xf32> -> tensor<4xf32>
// CHECK-NEXT:    %[[GE:.*]] = lazy.mul %[[G]], %[[E]] : tensor<4xf32>
// CHECK-NEXT:    %[[DX:.*]] = lazy.mul %[[GE]], %w : tensor<4xf32>
// CHECK-NEXT:    %[[DW:.*]] = lazy.mul %[[GE]], %x : tensor<4xf32>
// CHECK-NEXT:    func.return %[[S]], %[[DX]], %[[DW]] : tensor<1xf32>, tensor<4xf32>, tensor<4xf32>

// FUSED-LABEL: kernel.func @k1
// FUSED-SAME:    ops = ["mul", "exp", "mul", "mul"]
// FUSED-LABEL: func.func @exp_sum
// FUSED-COUNT-2: kernel.launch
// FUSED-NOT:     kernel.launch
// FUSED:         func.return
func.func @exp_sum(%x: tensor<4xf32>, %w: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<1xf32> {
  %0 = lazy.mul %x, %w : tensor<4xf32>
  %1 = lazy.exp %0 : tensor<4xf32>
  %2 = lazy.reduce add %1 [0] : tensor<4xf32> -> tensor<1xf32>
  func.return %2 : tensor<1xf32>
}

// -----

// movement ops transpose back: the gradient of a permute is the inverse
// permute, of a pad a shrink, of an expand a sum over the expanded dim

// CHECK-LABEL: func.func @movement
// CHECK-SAME:    -> (tensor<1x1xf32>, tensor<2x3xf32>, tensor<3x1xf32>)
// CHECK:         lazy.permute %{{.*}} [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
// CHECK:         lazy.reduce add %{{.*}} [1] : tensor<3x2xf32> -> tensor<3x1xf32>
func.func @movement(%x: tensor<2x3xf32>, %b: tensor<3x1xf32>) -> tensor<1x1xf32> {
  %0 = lazy.permute %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = lazy.expand %b : tensor<3x1xf32> -> tensor<3x2xf32>
  %2 = lazy.mul %0, %1 : tensor<3x2xf32>
  %3 = lazy.reduce add %2 [0, 1] : tensor<3x2xf32> -> tensor<1x1xf32>
  func.return %3 : tensor<1x1xf32>
}

// -----

// a running sum's gradient is the reversed running sum: flip, scan, flip

// CHECK-LABEL: func.func @cumsum
// CHECK:         lazy.flip %{{.*}} [1] : tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    lazy.scan add %{{.*}} dim 1 : tensor<2x4xf32>
// CHECK-NEXT:    lazy.flip %{{.*}} [1] : tensor<2x4xf32> -> tensor<2x4xf32>
func.func @cumsum(%x: tensor<2x4xf32>) -> tensor<1x1xf32> {
  %0 = lazy.scan add %x dim 1 : tensor<2x4xf32>
  %1 = lazy.mul %0, %0 : tensor<2x4xf32>
  %2 = lazy.reduce add %1 [0, 1] : tensor<2x4xf32> -> tensor<1x1xf32>
  func.return %2 : tensor<1x1xf32>
}

// -----

// an argument the result does not depend on gets zeros

// CHECK-LABEL: func.func @unused
// CHECK:         %[[Z:.*]] = lazy.const 0.0 : tensor<f32>
// CHECK:         func.return %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<3xf32>, tensor<2xf32>
func.func @unused(%x: tensor<3xf32>, %y: tensor<2xf32>) -> tensor<f32> {
  %0 = lazy.reduce add %x [0] : tensor<3xf32> -> tensor<1xf32>
  %1 = lazy.reshape %0 : tensor<1xf32> -> tensor<f32>
  func.return %1 : tensor<f32>
}

