// Lazy IR over an element type no mlfuse dtype has (i4).
func.func @main(%a: tensor<4xi4>) -> tensor<4xi4> {
  %s = lazy.add %a, %a : tensor<4xi4>
  func.return %s : tensor<4xi4>
}
