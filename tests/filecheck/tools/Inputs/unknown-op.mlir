func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lazy.frobnicate %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
