// kernel.gather: round-trip of the custom and generic forms, and its domain in
// the default plan (the view's dims and the index's).
// RUN: mlfuse-opt %s | filecheck %s
// RUN: mlfuse-opt %s --print-op-generic | mlfuse-opt | filecheck %s

// CHECK-LABEL: kernel.func @rows
// CHECK-SAME:    space [3, 4] plan [parallel 0, parallel 1]
// CHECK-NEXT:    %0 = kernel.load %i <[3, 4] strides [1, 0] offset 0> : memref<3xi64>
// CHECK-NEXT:    %1 = kernel.gather %x <[3, 4] strides [0, 1] offset 0>, %0 stride 4 size 10 : memref<40xf32>, i64
// CHECK-NEXT:    kernel.store %o <[3, 4] strides [4, 1] offset 0>, %1 : memref<12xf32>
kernel.func @rows outs(%o: memref<12xf32>) ins(%x: memref<40xf32>, %i: memref<3xi64>) space [3, 4] {
  %0 = kernel.load %i <[3, 4] strides [1, 0] offset 0> : memref<3xi64>
  %1 = kernel.gather %x <[3, 4] strides [0, 1] offset 0>, %0 stride 4 size 10 : memref<40xf32>, i64
  kernel.store %o <[3, 4] strides [4, 1] offset 0>, %1 : memref<12xf32>
}

// a negative stride (a flipped source) and a narrow index type

// CHECK-LABEL: kernel.func @flipped
// CHECK:         kernel.gather %x <[5] strides [0] offset 7>, %0 stride -1 size 8 : memref<8xi8>, i16
kernel.func @flipped outs(%o: memref<5xi8>) ins(%x: memref<8xi8>, %i: memref<5xi16>) space [5] {
  %0 = kernel.load %i <[5] strides [1] offset 0> : memref<5xi16>
  %1 = kernel.gather %x <[5] strides [0] offset 7>, %0 stride -1 size 8 : memref<8xi8>, i16
  kernel.store %o <[5] strides [1] offset 0>, %1 : memref<5xi8>
}
