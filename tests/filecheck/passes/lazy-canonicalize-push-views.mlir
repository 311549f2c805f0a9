// RUN: mlfuse-opt %s --split-input-file -p lazy-canonicalize,push-views | filecheck %s

// The two view passes together on raw front-end IR (movement ops as the
// front end records them): every movement chain ends as one lazy.view on a
// function argument or a constant (views on loads), and every computed value
// is produced in its own row-major layout (contiguous stores).

// (a + b).T: the transpose moves onto both loads; the add is contiguous.
// CHECK-LABEL: func.func @raw_transpose_of_add
// CHECK-NEXT:    %[[VA:.*]] = lazy.view %a <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %[[VB:.*]] = lazy.view %b <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.add %[[VA]], %[[VB]] : tensor<8x4xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<8x4xf32>
func.func @raw_transpose_of_add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = lazy.add %a, %b : tensor<4x8xf32>
  %1 = lazy.permute %0 [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return %1 : tensor<8x4xf32>
}

// -----

// x[2:10, 1:9].pad(((1,1),(2,2))).flip(0) + 1: shrink, pad and flip compose
// into one masked view of x: element (i, j) reads x[10 - i][j - 1], i.e.
// offset 159 - 16 i + j, valid for 1 <= i < 9 and 2 <= j < 10. The broadcast
// scalar folds into a constant of the full shape.
// CHECK-LABEL: func.func @raw_slice_pad_flip
// CHECK-NEXT:    %[[V:.*]] = lazy.view %x <[10, 12] strides [-16, 1] offset 159 mask [[1, 9], [2, 10]]> : tensor<16x16xf32> -> tensor<10x12xf32>
// CHECK-NEXT:    %[[C:.*]] = lazy.const 1.0 : tensor<10x12xf32>
// CHECK-NEXT:    lazy.add %[[V]], %[[C]] : tensor<10x12xf32>
// CHECK-NOT:     lazy.shrink
// CHECK-NOT:     lazy.flip
func.func @raw_slice_pad_flip(%x: tensor<16x16xf32>) -> tensor<10x12xf32> {
  %0 = lazy.shrink %x [[2, 10], [1, 9]] : tensor<16x16xf32> -> tensor<8x8xf32>
  %1 = lazy.pad %0 [[1, 1], [2, 2]] : tensor<8x8xf32> -> tensor<10x12xf32>
  %2 = lazy.flip %1 [0] : tensor<10x12xf32> -> tensor<10x12xf32>
  %c = lazy.const 1.0 : tensor<f32>
  %3 = lazy.reshape %c : tensor<f32> -> tensor<1x1xf32>
  %4 = lazy.expand %3 : tensor<1x1xf32> -> tensor<10x12xf32>
  %5 = lazy.add %2, %4 : tensor<10x12xf32>
  func.return %5 : tensor<10x12xf32>
}

// -----

// pad(exp(x)): exp(0) = 1, so the pad cannot just move onto x; the
// computation is masked: where(pad-mask, exp(padded x), 0).
// CHECK-LABEL: func.func @raw_pad_of_exp
// CHECK-NEXT:    %[[V:.*]] = lazy.view %x <[6, 6] strides [4, 1] offset -5 mask [[1, 5], [1, 5]]> : tensor<4x4xf32> -> tensor<6x6xf32>
// CHECK-NEXT:    %[[E:.*]] = lazy.exp %[[V]] : tensor<6x6xf32>
// CHECK-NEXT:    %[[T:.*]] = lazy.const true : tensor<4x4xi1>
// CHECK-NEXT:    %[[M:.*]] = lazy.view %[[T]] <[6, 6] strides [4, 1] offset -5 mask [[1, 5], [1, 5]]> : tensor<4x4xi1> -> tensor<6x6xi1>
// CHECK-NEXT:    %[[Z:.*]] = lazy.const 0.0 : tensor<6x6xf32>
// CHECK-NEXT:    %[[W:.*]] = lazy.where %[[M]], %[[E]], %[[Z]] : tensor<6x6xf32>
// CHECK-NEXT:    func.return %[[W]] : tensor<6x6xf32>
func.func @raw_pad_of_exp(%x: tensor<4x4xf32>) -> tensor<6x6xf32> {
  %0 = lazy.exp %x : tensor<4x4xf32>
  %1 = lazy.pad %0 [[1, 1], [1, 1]] : tensor<4x4xf32> -> tensor<6x6xf32>
  func.return %1 : tensor<6x6xf32>
}
