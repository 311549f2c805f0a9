// lazy.gather: custom syntax round-trips, and so does the generic form.
// RUN: mlfuse-opt %s | filecheck %s
// RUN: mlfuse-opt %s --print-op-generic | mlfuse-opt | filecheck %s

// CHECK-LABEL: func.func @rows
// CHECK-NEXT:    %0 = lazy.gather %x[%i] dim 0 : tensor<10x4xf32>, tensor<3x4xi64>
// CHECK-NEXT:    func.return %0 : tensor<3x4xf32>
func.func @rows(%x: tensor<10x4xf32>, %i: tensor<3x4xi64>) -> tensor<3x4xf32> {
  %0 = lazy.gather %x[%i] dim 0 : tensor<10x4xf32>, tensor<3x4xi64>
  func.return %0 : tensor<3x4xf32>
}

// the index may be smaller than the source off the gathered dim, of any signed
// integer type; the source of any element type

// CHECK-LABEL: func.func @smaller
// CHECK-NEXT:    %0 = lazy.gather %x[%i] dim 1 : tensor<4x8xbf16>, tensor<2x9xi8>
// CHECK-NEXT:    %1 = lazy.gather %b[%j] dim 0 : tensor<5xi1>, tensor<7xi32>
func.func @smaller(%x: tensor<4x8xbf16>, %i: tensor<2x9xi8>, %b: tensor<5xi1>, %j: tensor<7xi32>) -> (tensor<2x9xbf16>, tensor<7xi1>) {
  %0 = lazy.gather %x[%i] dim 1 : tensor<4x8xbf16>, tensor<2x9xi8>
  %1 = lazy.gather %b[%j] dim 0 : tensor<5xi1>, tensor<7xi32>
  func.return %0, %1 : tensor<2x9xbf16>, tensor<7xi1>
}

// CHECK-LABEL: func.func @generic
// CHECK-NEXT:    %0 = lazy.gather %x[%i] dim 2 : tensor<2x3x4xf32>, tensor<2x3x1xi64>
func.func @generic(%x: tensor<2x3x4xf32>, %i: tensor<2x3x1xi64>) -> tensor<2x3x1xf32> {
  %0 = "lazy.gather"(%x, %i) <{dim = 2 : i64}> : (tensor<2x3x4xf32>, tensor<2x3x1xi64>) -> tensor<2x3x1xf32>
  func.return %0 : tensor<2x3x1xf32>
}
