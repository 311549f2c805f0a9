// lazy.scan: round-trip of the custom and generic forms.
// RUN: mlfuse-opt %s | filecheck %s
// RUN: mlfuse-opt %s --print-op-generic | mlfuse-opt | filecheck %s

// CHECK-LABEL: func.func @kinds
// CHECK-NEXT:    %0 = lazy.scan add %x dim 1 : tensor<4x8xf32>
// CHECK-NEXT:    %1 = lazy.scan mul %0 dim 0 : tensor<4x8xf32>
// CHECK-NEXT:    %2 = lazy.scan max %1 dim 1 {realize = "output"} : tensor<4x8xf32>
// CHECK-NEXT:    %3 = lazy.scan min %i dim 0 : tensor<5xi64>
// CHECK-NEXT:    %4 = lazy.scan max %u dim 0 : tensor<3xui8>
func.func @kinds(%x: tensor<4x8xf32>, %i: tensor<5xi64>, %u: tensor<3xui8>) -> tensor<4x8xf32> {
  %0 = lazy.scan add %x dim 1 : tensor<4x8xf32>
  %1 = lazy.scan mul %0 dim 0 : tensor<4x8xf32>
  %2 = lazy.scan max %1 dim 1 {realize = "output"} : tensor<4x8xf32>
  %3 = lazy.scan min %i dim 0 : tensor<5xi64>
  %4 = lazy.scan max %u dim 0 : tensor<3xui8>
  func.return %2 : tensor<4x8xf32>
}
