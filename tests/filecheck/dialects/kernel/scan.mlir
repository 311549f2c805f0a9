// kernel.scan: round-trip of the custom and generic forms, and its default plan:
// the scanned dim is never parallel, and its serial loop runs inside the other
// serial loops over the dims the scan varies along.
// RUN: mlfuse-opt %s | filecheck %s
// RUN: mlfuse-opt %s --print-op-generic | mlfuse-opt | filecheck %s

// CHECK-LABEL: kernel.func @rows
// CHECK-SAME:    space [4, 8] plan [parallel 0, serial 1]
// CHECK-NEXT:    %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
// CHECK-NEXT:    %1 = kernel.scan add %0 dim 1 : f32
// CHECK-NEXT:    kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
kernel.func @rows outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.scan add %0 dim 1 : f32
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// a scan along dim 0 of a value broadcast along dim 2: a parallel loop over
// dim 2 (or a serial one around the scan's) would repeat the scan for every
// copy, so the loop over dim 2 runs inside the scan's loop, reading its value

// CHECK-LABEL: kernel.func @columns
// CHECK-SAME:    space [6, 4, 3] plan [parallel 1, serial 0, serial 2]
// CHECK:         kernel.scan min %0 dim 0 : i32
kernel.func @columns outs(%o: memref<72xi32>) ins(%x: memref<24xi32>) space [6, 4, 3] {
  %0 = kernel.load %x <[6, 4, 3] strides [4, 1, 0] offset 0> : memref<24xi32>
  %1 = kernel.scan min %0 dim 0 : i32
  kernel.store %o <[6, 4, 3] strides [12, 3, 1] offset 0>, %1 : memref<72xi32>
}

// a scan inside a reduce over the same dim: the reduce's loop carries both the
// sum and the running value

// CHECK-LABEL: kernel.func @sum_of_scan
// CHECK-SAME:    space [4, 8] plan [parallel 0, serial 1]
// CHECK:         %1 = kernel.scan mul %0 dim 1 : f64
// CHECK-NEXT:    %2 = kernel.reduce add %1 [1] : f64
kernel.func @sum_of_scan outs(%o: memref<4xf64>) ins(%x: memref<32xf64>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf64>
  %1 = kernel.scan mul %0 dim 1 : f64
  %2 = kernel.reduce add %1 [1] : f64
  kernel.store %o <[4, 8] strides [1, 0] offset 0>, %2 : memref<4xf64>
}
