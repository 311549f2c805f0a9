// RUN: mlfuse-opt %s -p 'push-views{max-reads=0}' | filecheck %s

// max-reads=0 turns the rule off: the reverse view is pushed through the
// five-read value to every load, computing it twice (4 + 4 + 1 adds).
// CHECK-LABEL: func.func @shared_many_reads
// CHECK-NOT:     realize
// CHECK-COUNT-9: lazy.add
// CHECK-NOT:     lazy.add
// CHECK:         func.return
func.func @shared_many_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>, %e: tensor<8xf32>) -> tensor<8xf32> {
  %0 = lazy.add %a, %b : tensor<8xf32>
  %1 = lazy.add %0, %c : tensor<8xf32>
  %2 = lazy.add %1, %d : tensor<8xf32>
  %3 = lazy.add %2, %e : tensor<8xf32>
  %4 = lazy.view %3 <[8] strides [-1] offset 7> : tensor<8xf32> -> tensor<8xf32>
  %5 = lazy.add %3, %4 : tensor<8xf32>
  func.return %5 : tensor<8xf32>
}
