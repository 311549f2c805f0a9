// RUN: mlfuse-opt %s -p lazy-canonicalize,push-views,mark-realize | filecheck %s --check-prefix=MARK
// RUN: mlfuse-opt %s -p lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory | filecheck %s --check-prefix=KERNEL

// lazy.scan through the lazy pipeline. A scan yields its running value at
// every step of the serial loop over its dim, so elementwise producers fuse in
// front of it and consumers after it; a reduce over the scanned dim shares the
// scan's loop. lazy-canonicalize drops scans of one element and running
// maxima of constants; push-views moves a view of a scan that walks the
// scanned dim whole and forward to its input (a transpose); any other view
// (a flip, a pad) reads the stored scan.

// MARK-LABEL: func.func @fold
// MARK-NEXT:    %c = lazy.const 3.0 {realize = "output"} : tensor<4x8xf32>
// MARK-NEXT:    func.return %x, %c : tensor<4x1xf32>, tensor<4x8xf32>
func.func @fold(%x: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
  %0 = lazy.scan add %x dim 1 : tensor<4x1xf32>
  %c = lazy.const 3.0 : tensor<4x8xf32>
  %1 = lazy.scan max %c dim 1 : tensor<4x8xf32>
  func.return %0, %1 : tensor<4x1xf32>, tensor<4x8xf32>
}

// MARK-LABEL: func.func @fused
// MARK:         lazy.scan add %{{.*}} dim 1 : tensor<4x8xf32>
// MARK:         lazy.add %{{.*}} {realize = "output"}

// KERNEL-LABEL: kernel.func @k0 outs(%out0: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 0, serial 1]
// KERNEL-SAME:    ops = ["mul", "scan", "add"]
// KERNEL-NEXT:    %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
// KERNEL-NEXT:    %1 = arith.constant 2.000000e+00 : f32
// KERNEL-NEXT:    %2 = arith.mulf %0, %1 : f32
// KERNEL-NEXT:    %3 = kernel.scan add %2 dim 1 : f32
// KERNEL-NEXT:    %4 = arith.constant 1.000000e+00 : f32
// KERNEL-NEXT:    %5 = arith.addf %3, %4 : f32
// KERNEL-NEXT:    kernel.store %out0 <[4, 8] strides [8, 1] offset 0>, %5 : memref<32xf32>
// KERNEL-LABEL: func.func @fused
// KERNEL:         kernel.launch @k0
// KERNEL-NOT:     kernel.launch
// KERNEL:         func.return
func.func @fused(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = lazy.const 2.0 : tensor<4x8xf32>
  %0 = lazy.mul %x, %c : tensor<4x8xf32>
  %1 = lazy.scan add %0 dim 1 : tensor<4x8xf32>
  %one = lazy.const 1.0 : tensor<4x8xf32>
  %2 = lazy.add %1, %one : tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// MARK-LABEL: func.func @transposed
// MARK-NEXT:    %0 = lazy.view %x <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
// MARK-NEXT:    %1 = lazy.scan add %0 dim 0 {realize = "output"} : tensor<8x4xf32>

// KERNEL-LABEL: kernel.func @k1
// KERNEL-SAME:    space [8, 4] plan [parallel 1, serial 0]
// KERNEL-NEXT:    %0 = kernel.load %x <[8, 4] strides [1, 8] offset 0> : memref<32xf32>
// KERNEL-NEXT:    %1 = kernel.scan add %0 dim 0 : f32
// KERNEL-NEXT:    kernel.store %out0 <[8, 4] strides [4, 1] offset 0>, %1 : memref<32xf32>
func.func @transposed(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = lazy.scan add %x dim 1 : tensor<4x8xf32>
  %1 = lazy.permute %0 [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return %1 : tensor<8x4xf32>
}

// a flip walks the scanned dim backwards: the scan is stored, then read flipped

// MARK-LABEL: func.func @flipped
// MARK-NEXT:    %0 = lazy.scan add %x dim 1 : tensor<4x8xf32>
// MARK-NEXT:    %1 = lazy.view %0 <[4, 8] strides [8, -1] offset 7> : tensor<4x8xf32> -> tensor<4x8xf32>
// MARK-NEXT:    %2 = lazy.exp %1 {realize = "output"}

// KERNEL-LABEL: kernel.func @k2
// KERNEL-SAME:    reasons = ["view of scan"]
// KERNEL:         kernel.scan add %0 dim 1 : f32
// KERNEL-LABEL: kernel.func @k3
// KERNEL-NEXT:    kernel.load %{{.*}} <[4, 8] strides [8, -1] offset 7>
// KERNEL-NEXT:    math.exp
// KERNEL-LABEL: func.func @flipped
// KERNEL-SAME:    not_fused = ["k2 (scan) -> k3 (exp): view of scan (k3 reads k2's scan through a view that does not walk the scanned dim forward in one loop)"]
func.func @flipped(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.scan add %x dim 1 : tensor<4x8xf32>
  %1 = lazy.flip %0 [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = lazy.exp %1 : tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// mark-realize stores a scan read through a masked view (a pad)

// MARK-LABEL: func.func @padded
// MARK-NEXT:    %0 = lazy.scan add %x dim 1 {realize = "view of scan"} : tensor<4x8xf32>
func.func @padded(%x: tensor<4x8xf32>) -> tensor<4x10xf32> {
  %0 = lazy.scan add %x dim 1 : tensor<4x8xf32>
  %1 = lazy.pad %0 [[0, 0], [1, 1]] : tensor<4x8xf32> -> tensor<4x10xf32>
  func.return %1 : tensor<4x10xf32>
}

// a sum of running products, and running sums divided by the row total: one
// kernel each (the reduce's loop carries the running value too; the total's
// loop runs before the loop that scans)

// KERNEL-LABEL: kernel.func @k6
// KERNEL-SAME:    plan [parallel 0, serial 1]
// KERNEL-NEXT:    kernel.load
// KERNEL-NEXT:    %1 = kernel.scan mul %0 dim 1 : f32
// KERNEL-NEXT:    %2 = kernel.reduce add %1 [1] : f32
// KERNEL-LABEL: func.func @sum_of_scan
// KERNEL:         kernel.launch @k6
// KERNEL-NOT:     kernel.launch
func.func @sum_of_scan(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = lazy.scan mul %x dim 1 : tensor<4x8xf32>
  %1 = lazy.reduce add %0 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %1 : tensor<4x1xf32>
}

// KERNEL-LABEL: kernel.func @k7
// KERNEL-SAME:    ops = ["scan", "reduce", "div"]
// KERNEL-LABEL: func.func @normalized
// KERNEL:         kernel.launch @k7
// KERNEL-NOT:     kernel.launch
func.func @normalized(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.scan add %x dim 1 : tensor<4x8xf32>
  %1 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %2 = lazy.expand %1 : tensor<4x1xf32> -> tensor<4x8xf32>
  %3 = lazy.div %0, %2 : tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// two scans along different dims of one value: the first is stored (a scan's
// loop must be the innermost over its dims, and the second scan's is not)

// KERNEL-LABEL: kernel.func @k8
// KERNEL-SAME:    reasons = ["scan outside its loop"]
// KERNEL:         kernel.scan add %0 dim 1 : i64
// KERNEL-LABEL: kernel.func @k9
// KERNEL:         kernel.scan add %{{.*}} dim 0 : i64
// KERNEL-LABEL: func.func @both_dims
// KERNEL-SAME:    not_fused = ["k8 (scan) -> k9 (scan): scan outside its loop
func.func @both_dims(%x: tensor<4x8xi64>) -> tensor<4x8xi64> {
  %0 = lazy.scan add %x dim 1 : tensor<4x8xi64>
  %1 = lazy.scan add %0 dim 0 : tensor<4x8xi64>
  func.return %1 : tensor<4x8xi64>
}

// a scan over a dim that the view of its input splits (a broadcast copy
// reshaped into the scanned dim): the scan's input is stored, contiguous, and
// the scan reads it in one loop; the scan's own result needs no store

// KERNEL-LABEL: kernel.func @k{{[0-9]+}}
// KERNEL-SAME:    space [4, 2, 3]
// KERNEL-SAME:    reasons = ["view into scan"]
// KERNEL-NEXT:    kernel.load %x <[4, 2, 3] strides [3, 0, 1] offset 0>
// KERNEL-NEXT:    math.exp
// KERNEL-LABEL: kernel.func @k{{[0-9]+}}
// KERNEL-SAME:    space [8, 3] plan [parallel 1, serial 0]
// KERNEL-SAME:    reasons = ["output"]
// KERNEL-NEXT:    kernel.load %0 <[8, 3] strides [3, 1] offset 0>
// KERNEL-NEXT:    kernel.scan add %{{.*}} dim 0 : f32
// KERNEL-LABEL: func.func @split_by_input
// KERNEL-SAME:    not_fused = ["k{{[0-9]+}} (exp) -> k{{[0-9]+}} (scan): view into scan (k{{[0-9]+}} scans k{{[0-9]+}}'s values, read through a view that splits the scanned dim across loops)"]
func.func @split_by_input(%x: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %0 = lazy.reshape %x : tensor<4x3xf32> -> tensor<1x4x3xf32>
  %1 = lazy.expand %0 : tensor<1x4x3xf32> -> tensor<2x4x3xf32>
  %2 = lazy.reshape %1 : tensor<2x4x3xf32> -> tensor<8x3xf32>
  %3 = lazy.exp %2 : tensor<8x3xf32>
  %4 = lazy.scan add %3 dim 0 : tensor<8x3xf32>
  func.return %4 : tensor<8x3xf32>
}
