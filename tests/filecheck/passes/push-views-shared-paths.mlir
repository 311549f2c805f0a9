// RUN: mlfuse-opt %s -p push-views | filecheck %s
// RUN: mlfuse-opt %s -p push-views | grep -c lazy.cmplt | filecheck %s --check-prefix=COMPARES
// RUN: mlfuse-opt %s -p push-views | grep -c lazy.where | filecheck %s --check-prefix=SELECTS

// A running maximum: each step reads the previous one twice (the compare and
// the select), through no view, so max-reads leaves it alone. A view of the
// last step reaches every earlier step along 2^n paths; each step is pushed
// through once and the other paths reuse it: 6 steps stay 6 compares and 6
// selects, not 2^6.
// COMPARES: {{^}}6{{$}}
// SELECTS: {{^}}6{{$}}
// The view ends on the loads, read once each.
// CHECK-LABEL: func.func @running_max
// CHECK-NOT:     realize
// CHECK-COUNT-7: lazy.view %{{.}} <[12] strides [1] offset 0>
// CHECK-NOT:     lazy.view
// CHECK:         %r = lazy.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<12xf32>
// CHECK-NEXT:    func.return %r : tensor<12xf32>
func.func @running_max(%x: tensor<3x4xf32>, %a: tensor<3x4xf32>, %b: tensor<3x4xf32>, %c: tensor<3x4xf32>, %d: tensor<3x4xf32>, %e: tensor<3x4xf32>, %f: tensor<3x4xf32>) -> tensor<12xf32> {
  %c1 = lazy.cmplt %x, %a : tensor<3x4xf32>
  %m1 = lazy.where %c1, %a, %x : tensor<3x4xf32>
  %c2 = lazy.cmplt %m1, %b : tensor<3x4xf32>
  %m2 = lazy.where %c2, %b, %m1 : tensor<3x4xf32>
  %c3 = lazy.cmplt %m2, %c : tensor<3x4xf32>
  %m3 = lazy.where %c3, %c, %m2 : tensor<3x4xf32>
  %c4 = lazy.cmplt %m3, %d : tensor<3x4xf32>
  %m4 = lazy.where %c4, %d, %m3 : tensor<3x4xf32>
  %c5 = lazy.cmplt %m4, %e : tensor<3x4xf32>
  %m5 = lazy.where %c5, %e, %m4 : tensor<3x4xf32>
  %c6 = lazy.cmplt %m5, %f : tensor<3x4xf32>
  %m6 = lazy.where %c6, %f, %m5 : tensor<3x4xf32>
  %r = lazy.view %m6 <[12] strides [1] offset 0> : tensor<3x4xf32> -> tensor<12xf32>
  func.return %r : tensor<12xf32>
}
