// Negative tests for lazy.scan's verifier: each case fails with this message.
// RUN: mlfuse-opt %s --verify-diagnostics --split-input-file | filecheck %s

// CHECK: Operation does not verify: lazy.scan: unknown kind 'sub' (expected one of add, mul, max, min)
func.func @kind(%x: tensor<4x8xf32>) {
  %0 = lazy.scan sub %x dim 1 : tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.scan: dim 2 out of range for a rank-2 operand
func.func @dim(%x: tensor<4x8xf32>) {
  %0 = lazy.scan add %x dim 2 : tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.scan: dim 0 out of range for a rank-0 operand
func.func @scalar(%x: tensor<f32>) {
  %0 = lazy.scan add %x dim 0 : tensor<f32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.scan: cannot scan bool elements (cast first)
func.func @bool(%x: tensor<4xi1>) {
  %0 = lazy.scan max %x dim 0 : tensor<4xi1>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.scan: result type must be the operand type tensor<4x8xf32>, got tensor<4x8xf64>
func.func @type(%x: tensor<4x8xf32>) {
  %0 = "lazy.scan"(%x) <{kind = "add", dim = 1 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf64>
  func.return
}
