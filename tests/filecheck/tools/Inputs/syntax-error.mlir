func.func @missing_comma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lazy.add %x %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
