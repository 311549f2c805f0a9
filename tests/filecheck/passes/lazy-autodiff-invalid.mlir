// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p lazy-autodiff | filecheck %s

// lazy-autodiff refuses what it cannot differentiate, naming the function.

// CHECK: lazy-autodiff: @views: 'lazy.view' (a composed view) has no graph form: run this before lazy-canonicalize, on the movement ops
func.func @views(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0 = lazy.view %x <[2] strides [2] offset 0> : tensor<4xf32> -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// CHECK: lazy-autodiff: @ints: the first result must be a float tensor, got tensor<4xi32>
func.func @ints(%x: tensor<4xi32>) -> tensor<4xi32> {
  func.return %x : tensor<4xi32>
}
