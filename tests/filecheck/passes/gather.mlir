// RUN: mlfuse-opt %s -p lazy-canonicalize,push-views,mark-realize | filecheck %s --check-prefix=MARK
// RUN: mlfuse-opt %s -p lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory | filecheck %s --check-prefix=KERNEL

// lazy.gather through the lazy pipeline. The gather is an elementwise-like
// value over the index's shape: its index computation and its consumers fuse
// into its kernel. Its source is read at data-dependent positions, so it must
// be a buffer seen through one unmasked view: a computed source, or a padded
// view of an argument, is stored first ("gather source"); a transposed
// argument is read in place. A gather of a constant is that constant, and an
// empty one computes nothing.

// MARK-LABEL: func.func @fused
// MARK-NEXT:    %0 = lazy.view %i <[3, 4] strides [1, 0] offset 0> : tensor<3xi64> -> tensor<3x4xi64>
// MARK-NEXT:    %1 = lazy.gather %x[%0] dim 0 : tensor<10x4xf32>, tensor<3x4xi64>
// MARK-NEXT:    %2 = lazy.const 2.0 : tensor<3x4xf32>
// MARK-NEXT:    %3 = lazy.mul %1, %2 {realize = "output"} : tensor<3x4xf32>

// KERNEL-LABEL: kernel.func @k0 outs(%out0: memref<12xf32>) ins(%i: memref<3xi64>, %x: memref<40xf32>) space [3, 4]
// KERNEL-SAME:    ops = ["gather", "mul"]
// KERNEL-NEXT:    %0 = kernel.load %i <[3, 4] strides [1, 0] offset 0> : memref<3xi64>
// KERNEL-NEXT:    %1 = kernel.gather %x <[3, 4] strides [0, 1] offset 0>, %0 stride 4 size 10 : memref<40xf32>, i64
// KERNEL-NEXT:    %2 = arith.constant 2.000000e+00 : f32
// KERNEL-NEXT:    %3 = arith.mulf %1, %2 : f32
// KERNEL-NEXT:    kernel.store %out0 <[3, 4] strides [4, 1] offset 0>, %3 : memref<12xf32>
// KERNEL-LABEL: func.func @fused
// KERNEL:         kernel.launch @k0
// KERNEL-NOT:     kernel.launch
// KERNEL:         func.return
func.func @fused(%x: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %0 = lazy.reshape %i : tensor<3xi64> -> tensor<3x1xi64>
  %1 = lazy.expand %0 : tensor<3x1xi64> -> tensor<3x4xi64>
  %2 = lazy.gather %x[%1] dim 0 : tensor<10x4xf32>, tensor<3x4xi64>
  %3 = lazy.const 2.0 : tensor<3x4xf32>
  %4 = lazy.mul %2, %3 : tensor<3x4xf32>
  func.return %4 : tensor<3x4xf32>
}

// MARK-LABEL: func.func @computed
// MARK-NEXT:    %0 = lazy.exp %x {realize = "gather source"} : tensor<10x4xf32>
// MARK-NEXT:    %1 = lazy.gather %0[%i] dim 0 {realize = "output"}

// KERNEL-LABEL: kernel.func @k1
// KERNEL-SAME:    ops = ["exp"], reasons = ["gather source"]
// KERNEL-LABEL: kernel.func @k2 outs(%out0: memref<12xf32>) ins(%i: memref<12xi64>, %0: memref<40xf32>)
// KERNEL:         kernel.gather %0 <[3, 4] strides [0, 1] offset 0>, %{{.*}} stride 4 size 10 : memref<40xf32>, i64
func.func @computed(%x: tensor<10x4xf32>, %i: tensor<3x4xi64>) -> tensor<3x4xf32> {
  %0 = lazy.exp %x : tensor<10x4xf32>
  %1 = lazy.gather %0[%i] dim 0 : tensor<10x4xf32>, tensor<3x4xi64>
  func.return %1 : tensor<3x4xf32>
}

// MARK-LABEL: func.func @padded
// MARK-NEXT:    %0 = lazy.view %x <[12, 4] strides [4, 1] offset -4 mask {{\[\[}}1, 11], [0, 4]]> {realize = "gather source"}
// MARK-NEXT:    %1 = lazy.gather %0[%i] dim 0 {realize = "output"}

// KERNEL-LABEL: kernel.func @k3
// KERNEL-SAME:    reasons = ["gather source"]
// KERNEL-LABEL: kernel.func @k4
// KERNEL:         kernel.gather %0 <[3, 4] strides [0, 1] offset 0>, %{{.*}} stride 4 size 12 : memref<48xf32>, i64
func.func @padded(%x: tensor<10x4xf32>, %i: tensor<3x4xi64>) -> tensor<3x4xf32> {
  %0 = lazy.pad %x [[1, 1], [0, 0]] : tensor<10x4xf32> -> tensor<12x4xf32>
  %1 = lazy.gather %0[%i] dim 0 : tensor<12x4xf32>, tensor<3x4xi64>
  func.return %1 : tensor<3x4xf32>
}

// MARK-LABEL: func.func @transposed
// MARK-NEXT:    %0 = lazy.view %x <[10, 4] strides [1, 10] offset 0> : tensor<4x10xf32> -> tensor<10x4xf32>
// MARK-NEXT:    %1 = lazy.gather %0[%i] dim 0 {realize = "output"}

// KERNEL-LABEL: kernel.func @k5 outs(%out0: memref<12xf32>) ins(%i: memref<12xi64>, %x: memref<40xf32>)
// KERNEL:         kernel.gather %x <[3, 4] strides [0, 10] offset 0>, %{{.*}} stride 1 size 10 : memref<40xf32>, i64
func.func @transposed(%x: tensor<4x10xf32>, %i: tensor<3x4xi64>) -> tensor<3x4xf32> {
  %0 = lazy.permute %x [1, 0] : tensor<4x10xf32> -> tensor<10x4xf32>
  %1 = lazy.gather %0[%i] dim 0 : tensor<10x4xf32>, tensor<3x4xi64>
  func.return %1 : tensor<3x4xf32>
}

// MARK-LABEL: func.func @of_const
// MARK-NEXT:    %0 = lazy.const 1.5 {realize = "output"} : tensor<3x4xf32>
func.func @of_const(%i: tensor<3x4xi64>) -> tensor<3x4xf32> {
  %0 = lazy.const 1.5 : tensor<10x4xf32>
  %1 = lazy.gather %0[%i] dim 0 : tensor<10x4xf32>, tensor<3x4xi64>
  func.return %1 : tensor<3x4xf32>
}

// MARK-LABEL: func.func @empty
// MARK-NEXT:    %0 = lazy.const 0.0 {realize = "output"} : tensor<0x4xf32>
func.func @empty(%x: tensor<10x4xf32>, %i: tensor<0x4xi64>) -> tensor<0x4xf32> {
  %1 = lazy.gather %x[%i] dim 0 : tensor<10x4xf32>, tensor<0x4xi64>
  func.return %1 : tensor<0x4xf32>
}
