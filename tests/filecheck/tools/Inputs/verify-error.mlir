func.func @exp_of_ints(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = lazy.exp %x : tensor<4xi32>
  func.return %0 : tensor<4xi32>
}
