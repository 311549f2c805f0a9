// RUN: mlfuse-opt %s -p lazy-canonicalize,split-reduces,push-views,mark-realize,group-reduces,outline-kernels | filecheck %s

// The kernel planner splits a space dim whose views walk several axes (a
// (2, 3, 3, 4) value flattened as a gather source) and may split one of the
// parts again. Parts of parts are dims of their own: the planner settles
// (it once split the same part on every restart and gave up).
// Unpooling the maxima of a 2x2 max pool (x.max_pool2d(return_indices=True)
// then max_unpool2d), before its inputs are computed:

// CHECK:       kernel.func @k0 outs(%out0: memref<72xf32>)
// CHECK:       kernel.func @k1 outs(%out0: memref<336xf32>)
// CHECK-SAME:    space [2, 3, 7, 8]
// CHECK:         kernel.gather
// CHECK-LABEL: func.func @main
// CHECK:         kernel.launch @k0
// CHECK:         kernel.launch @k1
func.func @main(%in0: tensor<336xi1>, %in1: tensor<3x4xi1>, %in2: tensor<3x4xi1>, %in3: tensor<3x4xi1>, %in4: tensor<2x3x7x8xf32>, %in5: tensor<3x4xi1>, %in6: tensor<336xi32>) -> tensor<2x3x7x8xf32> {
  %0 = lazy.reshape %in1 : tensor<3x4xi1> -> tensor<1x1x3x4xi1>
  %1 = lazy.expand %0 : tensor<1x1x3x4xi1> -> tensor<2x3x3x4xi1>
  %2 = lazy.reshape %in2 : tensor<3x4xi1> -> tensor<1x1x3x4xi1>
  %3 = lazy.expand %2 : tensor<1x1x3x4xi1> -> tensor<2x3x3x4xi1>
  %4 = lazy.reshape %in3 : tensor<3x4xi1> -> tensor<1x1x3x4xi1>
  %5 = lazy.expand %4 : tensor<1x1x3x4xi1> -> tensor<2x3x3x4xi1>
  %6 = lazy.shrink %in4 [[0, 2], [0, 3], [0, 5], [0, 7]] : tensor<2x3x7x8xf32> -> tensor<2x3x5x7xf32>
  %7 = lazy.stride %6 [1, 1, 2, 2] : tensor<2x3x5x7xf32> -> tensor<2x3x3x4xf32>
  %8 = lazy.shrink %in4 [[0, 2], [0, 3], [0, 5], [1, 8]] : tensor<2x3x7x8xf32> -> tensor<2x3x5x7xf32>
  %9 = lazy.stride %8 [1, 1, 2, 2] : tensor<2x3x5x7xf32> -> tensor<2x3x3x4xf32>
  %10 = lazy.cmplt %7, %9 : tensor<2x3x3x4xf32>
  %11 = lazy.cmpne %9, %9 : tensor<2x3x3x4xf32>
  %12 = lazy.or %10, %11 : tensor<2x3x3x4xi1>
  %13 = lazy.not %in5 : tensor<3x4xi1>
  %14 = lazy.reshape %13 : tensor<3x4xi1> -> tensor<1x1x3x4xi1>
  %15 = lazy.expand %14 : tensor<1x1x3x4xi1> -> tensor<2x3x3x4xi1>
  %16 = lazy.or %12, %15 : tensor<2x3x3x4xi1>
  %17 = lazy.and %5, %16 : tensor<2x3x3x4xi1>
  %18 = lazy.where %17, %9, %7 : tensor<2x3x3x4xf32>
  %19 = lazy.shrink %in4 [[0, 2], [0, 3], [1, 6], [0, 7]] : tensor<2x3x7x8xf32> -> tensor<2x3x5x7xf32>
  %20 = lazy.stride %19 [1, 1, 2, 2] : tensor<2x3x5x7xf32> -> tensor<2x3x3x4xf32>
  %21 = lazy.cmplt %18, %20 : tensor<2x3x3x4xf32>
  %22 = lazy.cmpne %20, %20 : tensor<2x3x3x4xf32>
  %23 = lazy.or %21, %22 : tensor<2x3x3x4xi1>
  %24 = lazy.or %in5, %in3 : tensor<3x4xi1>
  %25 = lazy.not %24 : tensor<3x4xi1>
  %26 = lazy.reshape %25 : tensor<3x4xi1> -> tensor<1x1x3x4xi1>
  %27 = lazy.expand %26 : tensor<1x1x3x4xi1> -> tensor<2x3x3x4xi1>
  %28 = lazy.or %23, %27 : tensor<2x3x3x4xi1>
  %29 = lazy.and %3, %28 : tensor<2x3x3x4xi1>
  %30 = lazy.where %29, %20, %18 : tensor<2x3x3x4xf32>
  %31 = lazy.shrink %in4 [[0, 2], [0, 3], [1, 6], [1, 8]] : tensor<2x3x7x8xf32> -> tensor<2x3x5x7xf32>
  %32 = lazy.stride %31 [1, 1, 2, 2] : tensor<2x3x5x7xf32> -> tensor<2x3x3x4xf32>
  %33 = lazy.cmplt %30, %32 : tensor<2x3x3x4xf32>
  %34 = lazy.cmpne %32, %32 : tensor<2x3x3x4xf32>
  %35 = lazy.or %33, %34 : tensor<2x3x3x4xi1>
  %36 = lazy.or %24, %in2 : tensor<3x4xi1>
  %37 = lazy.not %36 : tensor<3x4xi1>
  %38 = lazy.reshape %37 : tensor<3x4xi1> -> tensor<1x1x3x4xi1>
  %39 = lazy.expand %38 : tensor<1x1x3x4xi1> -> tensor<2x3x3x4xi1>
  %40 = lazy.or %35, %39 : tensor<2x3x3x4xi1>
  %41 = lazy.and %1, %40 : tensor<2x3x3x4xi1>
  %42 = lazy.where %41, %32, %30 : tensor<2x3x3x4xf32>
  %43 = lazy.reshape %42 : tensor<2x3x3x4xf32> -> tensor<2x3x12xf32>
  %44 = lazy.reshape %43 : tensor<2x3x12xf32> -> tensor<72xf32>
  %45 = lazy.gather %44[%in6] dim 0 : tensor<72xf32>, tensor<336xi32>
  %46 = lazy.const 0.0 : tensor<f32>
  %47 = lazy.reshape %46 : tensor<f32> -> tensor<1x1x1xf32>
  %48 = lazy.expand %47 : tensor<1x1x1xf32> -> tensor<2x3x56xf32>
  %49 = lazy.reshape %48 : tensor<2x3x56xf32> -> tensor<336xf32>
  %50 = lazy.where %in0, %45, %49 : tensor<336xf32>
  %51 = lazy.reshape %50 : tensor<336xf32> -> tensor<2x3x56xf32>
  %52 = lazy.reshape %51 : tensor<2x3x56xf32> -> tensor<2x3x7x8xf32>
  func.return %52 : tensor<2x3x7x8xf32>
}
