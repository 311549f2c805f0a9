// RUN: mlfuse-opt %s -p window-kernel-inputs | filecheck %s
// RUN: mlfuse-opt %s -p 'window-kernel-inputs{alignment=256}' | filecheck %s --check-prefix=A256

// window-kernel-inputs: each launch passes the window of an input buffer its
// kernel reads (from the first element read, rounded down to `alignment`
// bytes, to the last), and the kernel's loads read the window from its start.
// Two steps of a sequence that differed only in the row they read become the
// same kernel text.

// CHECK-LABEL: kernel.func @step1
// CHECK-SAME:    ins(%x: memref<32xf32>, %h: memref<32xf32>)
// CHECK-NEXT:    kernel.load %x <[2, 16] strides [16, 1] offset 0> : memref<32xf32>
kernel.func @step1 outs(%o: memref<32xf32>) ins(%x: memref<128xf32>, %h: memref<32xf32>) space [2, 16] {
  %0 = kernel.load %x <[2, 16] strides [16, 1] offset 32> : memref<128xf32>
  %1 = kernel.load %h <[2, 16] strides [16, 1] offset 0> : memref<32xf32>
  %2 = arith.addf %0, %1 : f32
  kernel.store %o <[2, 16] strides [16, 1] offset 0>, %2 : memref<32xf32>
}

// CHECK-LABEL: kernel.func @step2
// CHECK-SAME:    ins(%x: memref<32xf32>, %h: memref<32xf32>)
// CHECK-NEXT:    kernel.load %x <[2, 16] strides [16, 1] offset 0> : memref<32xf32>
kernel.func @step2 outs(%o: memref<32xf32>) ins(%x: memref<128xf32>, %h: memref<32xf32>) space [2, 16] {
  %0 = kernel.load %x <[2, 16] strides [16, 1] offset 64> : memref<128xf32>
  %1 = kernel.load %h <[2, 16] strides [16, 1] offset 0> : memref<32xf32>
  %2 = arith.addf %0, %1 : f32
  kernel.store %o <[2, 16] strides [16, 1] offset 0>, %2 : memref<32xf32>
}

// An unaligned start: the window starts at the 64-byte boundary below it
// (element 32) and the load keeps the rest of its offset (40 - 32 = 8).
// With 256-byte alignment (prefix A256) the window starts at 0, 57 elements long.
// CHECK-LABEL: kernel.func @unaligned
// CHECK-SAME:    ins(%x: memref<25xf32>)
// CHECK-NEXT:    kernel.load %x <[17] strides [1] offset 8> : memref<25xf32>
// A256-LABEL:  kernel.func @unaligned
// A256-SAME:     ins(%x: memref<57xf32>)
// A256-NEXT:     kernel.load %x <[17] strides [1] offset 40> : memref<57xf32>
kernel.func @unaligned outs(%o: memref<17xf32>) ins(%x: memref<128xf32>) space [17] {
  %0 = kernel.load %x <[17] strides [1] offset 40> : memref<128xf32>
  kernel.store %o <[17] strides [1] offset 0>, %0 : memref<17xf32>
}

// Read at data-dependent positions by a gather: the whole buffer.
// CHECK-LABEL: kernel.func @gathered
// CHECK-SAME:    ins(%x: memref<128xf32>, %i: memref<4xi64>)
kernel.func @gathered outs(%o: memref<4xf32>) ins(%x: memref<128xf32>, %i: memref<4xi64>) space [4] {
  %0 = kernel.load %i <[4] strides [1] offset 0> : memref<4xi64>
  %1 = kernel.gather %x <[4] strides [0] offset 64>, %0 stride 1 size 64 : memref<128xf32>, i64
  kernel.store %o <[4] strides [1] offset 0>, %1 : memref<4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: memref<128xf32>, %[[H:.*]]: memref<32xf32>, %[[I:.*]]: memref<4xi64>)
// CHECK:         %[[W1:.*]] = kernel.window %[[X]] [32] : memref<128xf32> -> memref<32xf32>
// CHECK-NEXT:    kernel.launch @step1 outs(%{{.*}} : memref<32xf32>) ins(%[[W1]] : memref<32xf32>, %[[H]] : memref<32xf32>)
// CHECK:         %[[W2:.*]] = kernel.window %[[X]] [64] : memref<128xf32> -> memref<32xf32>
// CHECK-NEXT:    kernel.launch @step2 outs(%{{.*}} : memref<32xf32>) ins(%[[W2]] : memref<32xf32>, %{{.*}} : memref<32xf32>)
// CHECK:         %[[W3:.*]] = kernel.window %[[X]] [32] : memref<128xf32> -> memref<25xf32>
// CHECK-NEXT:    kernel.launch @unaligned outs(%{{.*}} : memref<17xf32>) ins(%[[W3]] : memref<25xf32>)
// CHECK-NOT:     kernel.window
// CHECK:         kernel.launch @gathered outs(%{{.*}} : memref<4xf32>) ins(%[[X]] : memref<128xf32>, %[[I]] : memref<4xi64>)
// A256:          kernel.window %{{.*}} [0] : memref<128xf32> -> memref<57xf32>
func.func @main(%x: memref<128xf32>, %h: memref<32xf32>, %i: memref<4xi64>) -> memref<32xf32> {
  %0 = kernel.alloc : memref<32xf32>
  kernel.launch @step1 outs(%0 : memref<32xf32>) ins(%x : memref<128xf32>, %h : memref<32xf32>)
  %1 = kernel.alloc : memref<32xf32>
  kernel.launch @step2 outs(%1 : memref<32xf32>) ins(%x : memref<128xf32>, %0 : memref<32xf32>)
  %2 = kernel.alloc : memref<17xf32>
  kernel.launch @unaligned outs(%2 : memref<17xf32>) ins(%x : memref<128xf32>)
  %3 = kernel.alloc : memref<4xf32>
  kernel.launch @gathered outs(%3 : memref<4xf32>) ins(%x : memref<128xf32>, %i : memref<4xi64>)
  func.return %1 : memref<32xf32>
}
