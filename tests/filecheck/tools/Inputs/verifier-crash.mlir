func.func @bitcast_index(%x: tensor<4xindex>) -> tensor<4xi64> {
  %0 = lazy.bitcast %x : tensor<4xindex> to tensor<4xi64>
  func.return %0 : tensor<4xi64>
}
