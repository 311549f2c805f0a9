// The view syntax `<shape strides [...] offset N [mask [[b, e], ...]] | ...>`
// of lazy.view (and of the #lazy.view attribute behind it): every view is
// canonicalized as it is parsed (View.create in mlfuse/view.py), the
// canonical form prints back unchanged, and malformed views are parse errors
// pointing at the view.
//
// RUN: mlfuse-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// CHECK-LABEL: func.func @canonical(%x: tensor<4x8xf32>)
func.func @canonical(%x: tensor<4x8xf32>) {
  // A size-1 dim gets stride 0.
  // CHECK-NEXT: %0 = lazy.view %x <[1, 8] strides [0, 1] offset 8> : tensor<4x8xf32> -> tensor<1x8xf32>
  %0 = lazy.view %x <[1, 8] strides [8, 1] offset 8> : tensor<4x8xf32> -> tensor<1x8xf32>

  // A mask range of one index folds into the offset (2 * 8); the mask stays.
  // CHECK-NEXT: %1 = lazy.view %x <[4, 8] strides [0, 1] offset 16 mask {{\[\[}}2, 3], [0, 8]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = lazy.view %x <[4, 8] strides [8, 1] offset 0 mask [[2, 3], [0, 8]]> : tensor<4x8xf32> -> tensor<4x8xf32>

  // A mask covering the whole shape is dropped ...
  // CHECK-NEXT: %2 = lazy.view %x <[4, 8] strides [8, 1] offset 0> : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = lazy.view %x <[4, 8] strides [8, 1] offset 0 mask [[0, 4], [0, 8]]> : tensor<4x8xf32> -> tensor<4x8xf32>

  // ... also once clipped to the shape; a partial mask is clipped and kept.
  // CHECK-NEXT: %3 = lazy.view %x <[4, 8] strides [8, 1] offset 0> : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %4 = lazy.view %x <[4, 8] strides [8, 1] offset 0 mask {{\[\[}}0, 4], [0, 5]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = lazy.view %x <[4, 8] strides [8, 1] offset 0 mask [[-2, 9], [0, 100]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = lazy.view %x <[4, 8] strides [8, 1] offset 0 mask [[0, 4], [-3, 5]]> : tensor<4x8xf32> -> tensor<4x8xf32>

  // An empty mask range: nothing is valid, one canonical all-invalid view.
  // CHECK-NEXT: %5 = lazy.view %x <[4, 8] strides [0, 0] offset 0 mask {{\[\[}}0, 0], [0, 0]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = lazy.view %x <[4, 8] strides [8, 1] offset 3 mask [[3, 3], [0, 8]]> : tensor<4x8xf32> -> tensor<4x8xf32>

  // Negative offsets (a pad by 1) and negative strides (a flip) parse.
  // CHECK-NEXT: %6 = lazy.view %x <[6, 10] strides [8, 1] offset -9 mask {{\[\[}}1, 5], [1, 9]]> : tensor<4x8xf32> -> tensor<6x10xf32>
  // CHECK-NEXT: %7 = lazy.view %x <[4, 8] strides [-8, -1] offset 31> : tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = lazy.view %x <[6, 10] strides [8, 1] offset -9 mask [[1, 5], [1, 9]]> : tensor<4x8xf32> -> tensor<6x10xf32>
  %7 = lazy.view %x <[4, 8] strides [-8, -1] offset 31> : tensor<4x8xf32> -> tensor<4x8xf32>

  // Each view of a stack is canonicalized; the buffer-side view comes first.
  // CHECK-NEXT: %8 = lazy.view %x <[4, 8] strides [1, 4] offset 0 | [1, 2, 16] strides [0, 16, 1] offset 0> : tensor<4x8xf32> -> tensor<1x2x16xf32>
  %8 = lazy.view %x <[4, 8] strides [1, 4] offset 0 | [1, 2, 16] strides [32, 16, 1] offset 0> : tensor<4x8xf32> -> tensor<1x2x16xf32>

  // A 0-d view reads one element.
  // CHECK-NEXT: %9 = lazy.view %x <[] strides [] offset 5> : tensor<4x8xf32> -> tensor<f32>
  %9 = lazy.view %x <[] strides [] offset 5> : tensor<4x8xf32> -> tensor<f32>

  // The generic form's #lazy.view attribute canonicalizes the same way.
  // CHECK-NEXT: %10 = lazy.view %x <[1, 8] strides [0, 1] offset 8> : tensor<4x8xf32> -> tensor<1x8xf32>
  %10 = "lazy.view"(%x) <{view = #lazy.view<[1, 8] strides [8, 1] offset 8>}> : (tensor<4x8xf32>) -> tensor<1x8xf32>

  // Canonical forms are fixed points: they print back as written.
  // CHECK-NEXT: %11 = lazy.view %x <[1, 8] strides [0, 1] offset 8> : tensor<4x8xf32> -> tensor<1x8xf32>
  // CHECK-NEXT: %12 = lazy.view %x <[4, 8] strides [0, 1] offset 16 mask {{\[\[}}2, 3], [0, 8]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %13 = lazy.view %x <[4, 8] strides [0, 0] offset 0 mask {{\[\[}}0, 0], [0, 0]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  %11 = lazy.view %x <[1, 8] strides [0, 1] offset 8> : tensor<4x8xf32> -> tensor<1x8xf32>
  %12 = lazy.view %x <[4, 8] strides [0, 1] offset 16 mask [[2, 3], [0, 8]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  %13 = lazy.view %x <[4, 8] strides [0, 0] offset 0 mask [[0, 0], [0, 0]]> : tensor<4x8xf32> -> tensor<4x8xf32>

  // CHECK-NEXT: func.return
  func.return
}

// -----

// Parse errors: each names the problem, at the view's line.

// CHECK: view-attr.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK: view has 1 strides for 2 dims
func.func @strides_count(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[4, 8] strides [8] offset 0> : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: view-attr.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK: view mask has 1 ranges for 2 dims
func.func @mask_count(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[4, 8] strides [8, 1] offset 0 mask [[0, 4]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: view-attr.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK: expected a pair [a, b], got 3 integers
func.func @mask_not_a_pair(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[4, 8] strides [8, 1] offset 0 mask [[0, 4, 1], [0, 8]]> : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: view-attr.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK: negative dimension in view shape [4, -8]
func.func @negative_dim(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[4, -8] strides [8, 1] offset 0> : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// The view above a stack reads positions 1..32 of the 32-element view below.
// CHECK: view-attr.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK: view reads positions [1, 32] of the view below of 32 elements
func.func @stacked_outside(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[4, 8] strides [1, 4] offset 0 | [2, 16] strides [16, 1] offset 1> : tensor<4x8xf32> -> tensor<2x16xf32>
  func.return
}

// -----

// The same, one level higher in a three-view stack.
// CHECK: view-attr.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK: stacked view reads positions [1, 32] of a view of 32 elements
func.func @stacked_outside_deeper(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[32] strides [1] offset 0 | [4, 8] strides [1, 4] offset 0 | [2, 16] strides [16, 1] offset 1> : tensor<4x8xf32> -> tensor<2x16xf32>
  func.return
}

// -----

// CHECK: view-attr.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK: Expected 'offset'
func.func @attr_missing_offset(%x: tensor<4x8xf32>) {
  %0 = "lazy.view"(%x) <{view = #lazy.view<[4, 8] strides [8, 1]>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}
