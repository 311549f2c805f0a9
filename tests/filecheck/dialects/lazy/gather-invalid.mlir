// Negative tests for lazy.gather's verifier: each case fails with this message.
// RUN: mlfuse-opt %s --verify-diagnostics --split-input-file | filecheck %s

// CHECK: Operation does not verify: lazy.gather: index [3] must have the rank of the source [4, 8]
func.func @rank(%x: tensor<4x8xf32>, %i: tensor<3xi64>) {
  %0 = "lazy.gather"(%x, %i) <{dim = 0 : i64}> : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<3xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.gather: index [5, 2] is larger than the source [4, 8] along dim 0 (only dim 1 is gathered)
func.func @larger(%x: tensor<4x8xf32>, %i: tensor<5x2xi64>) {
  %0 = lazy.gather %x[%i] dim 1 : tensor<4x8xf32>, tensor<5x2xi64>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.gather: dim 2 out of range for a rank-2 source
func.func @dim(%x: tensor<4x8xf32>, %i: tensor<4x8xi64>) {
  %0 = lazy.gather %x[%i] dim 2 : tensor<4x8xf32>, tensor<4x8xi64>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.gather: index elements must be signed integers (i8, i16, i32, i64), got f32
func.func @float_index(%x: tensor<4xf32>, %i: tensor<2xf32>) {
  %0 = lazy.gather %x[%i] dim 0 : tensor<4xf32>, tensor<2xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.gather: index elements must be signed integers (i8, i16, i32, i64), got ui8
func.func @unsigned_index(%x: tensor<4xf32>, %i: tensor<2xui8>) {
  %0 = lazy.gather %x[%i] dim 0 : tensor<4xf32>, tensor<2xui8>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.gather: source [0, 3] has no elements along dim 0 to gather
func.func @empty(%x: tensor<0x3xf32>, %i: tensor<2x3xi64>) {
  %0 = lazy.gather %x[%i] dim 0 : tensor<0x3xf32>, tensor<2x3xi64>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.gather: result type must be tensor<2xf32>, got tensor<2xi64>
func.func @result(%x: tensor<4xf32>, %i: tensor<2xi64>) {
  %0 = "lazy.gather"(%x, %i) <{dim = 0 : i64}> : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xi64>
  func.return
}
