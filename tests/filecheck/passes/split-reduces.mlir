// RUN: mlfuse-opt %s -p split-reduces --split-input-file | filecheck %s
// RUN: mlfuse-opt %s -p 'split-reduces{outputs=1024 min-length=32768}' --split-input-file | filecheck %s --check-prefix=WIDE
// RUN: mlfuse-opt %s -p 'split-reduces{column-outputs=65536 column-min-length=1024 column-min-part=64}' --split-input-file | filecheck %s --check-prefix=COLUMNS
// RUN: mlfuse-opt %s -p 'split-reduces{remainder=false}' --split-input-file | filecheck %s --check-prefix=NOPAD
// RUN: mlfuse-opt %s -p 'split-reduces,lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels' --split-input-file | filecheck %s --check-prefix=KERNELS

// split-reduces: a reduce with few results (< outputs, 256 by default), each
// from many elements (>= min-length, 65536), reduces parts of its outermost
// axis first (about `outputs` partial results, materialized), then the parts.

// A full sum of 2^20 elements: 256 parts of 4096, then the 256 partial sums.
// CHECK-LABEL: func.func @full_sum
// CHECK-NEXT:    %[[P:.*]] = lazy.reshape %x : tensor<1048576xf32> -> tensor<256x4096xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.reduce add %[[P]] [1] {realize = "split reduce"} : tensor<256x4096xf32> -> tensor<256x1xf32>
// CHECK-NEXT:    %[[T:.*]] = lazy.reduce add %[[S]] [0] : tensor<256x1xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[R:.*]] = lazy.reshape %[[T]] : tensor<1x1xf32> -> tensor<1xf32>
// CHECK-NEXT:    func.return %[[R]]
// With outputs=1024 it would take 1024 parts, but parts keep 4096 elements:
// WIDE-LABEL:  func.func @full_sum
// WIDE-NEXT:     lazy.reshape %x : tensor<1048576xf32> -> tensor<256x4096xf32>
// Two kernels: the partial sums in parallel, then their sum.
// KERNELS-LABEL: kernel.func @k0
// KERNELS-SAME:    space [256, 4096] plan [parallel 0, serial 1]
// KERNELS-SAME:    reasons = ["split reduce"]
// KERNELS-LABEL: kernel.func @k1
// KERNELS-SAME:    space [256] plan [serial 0]
func.func @full_sum(%x: tensor<1048576xf32>) -> tensor<1xf32> {
  %0 = lazy.reduce add %x [0] : tensor<1048576xf32> -> tensor<1xf32>
  func.return %0 : tensor<1xf32>
}

// -----

// Over two axes the outer one is split (each part a contiguous block of rows);
// it has 64 rows, so 64 parts.
// CHECK-LABEL: func.func @max_over_two_axes
// CHECK-NEXT:    %[[P:.*]] = lazy.reshape %x : tensor<64x65536xf32> -> tensor<64x1x65536xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.reduce max %[[P]] [1, 2] {realize = "split reduce"} : tensor<64x1x65536xf32> -> tensor<64x1x1xf32>
// CHECK-NEXT:    %[[T:.*]] = lazy.reduce max %[[S]] [0] : tensor<64x1x1xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    lazy.reshape %[[T]] : tensor<1x1x1xf32> -> tensor<1x1xf32>
func.func @max_over_two_axes(%x: tensor<64x65536xf32>) -> tensor<1x1xf32> {
  %0 = lazy.reduce max %x [0, 1] : tensor<64x65536xf32> -> tensor<1x1xf32>
  func.return %0 : tensor<1x1xf32>
}

// -----

// A column sum with 4 results: 64 parts of 4096 rows each, 256 partial results.
// CHECK-LABEL: func.func @column_sum
// CHECK-NEXT:    %[[P:.*]] = lazy.reshape %x : tensor<262144x4xi32> -> tensor<64x4096x4xi32>
// CHECK-NEXT:    %[[S:.*]] = lazy.reduce add %[[P]] [1] {realize = "split reduce"} : tensor<64x4096x4xi32> -> tensor<64x1x4xi32>
// CHECK-NEXT:    %[[T:.*]] = lazy.reduce add %[[S]] [0] : tensor<64x1x4xi32> -> tensor<1x1x4xi32>
// CHECK-NEXT:    lazy.reshape %[[T]] : tensor<1x1x4xi32> -> tensor<1x4xi32>
func.func @column_sum(%x: tensor<262144x4xi32>) -> tensor<1x4xi32> {
  %0 = lazy.reduce add %x [0] : tensor<262144x4xi32> -> tensor<1x4xi32>
  func.return %0 : tensor<1x4xi32>
}

// -----

// Left alone: short rows (4096 < 65536) and enough results (512 >= 256).
// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT:    lazy.reduce add %x [1] : tensor<1024x4096xf32> -> tensor<1024x1xf32>
// CHECK-NEXT:    lazy.reduce add %y [1] : tensor<512x65536xf32> -> tensor<512x1xf32>
// CHECK-NEXT:    func.return
// But with outputs=1024, the 512 rows of 65536 are split in two.
// WIDE-LABEL:  func.func @left_alone
// WIDE-NEXT:     lazy.reduce add %x [1] : tensor<1024x4096xf32> -> tensor<1024x1xf32>
// WIDE-NEXT:     lazy.reshape %y : tensor<512x65536xf32> -> tensor<512x2x32768xf32>
func.func @left_alone(%x: tensor<1024x4096xf32>, %y: tensor<512x65536xf32>) -> (tensor<1024x1xf32>, tensor<512x1xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<1024x4096xf32> -> tensor<1024x1xf32>
  %1 = lazy.reduce add %y [1] : tensor<512x65536xf32> -> tensor<512x1xf32>
  func.return %0, %1 : tensor<1024x1xf32>, tensor<512x1xf32>
}

// -----

// A prime length (65537) has no divisor to split it by: it is cut into 16
// parts of 4096 (parts keep min-part = 4096 elements) and a remainder of one
// element, reduced on its own and combined with the parts' result (+ for a
// sum, max for a maximum). With remainder=false it is left alone (NOPAD).
// CHECK-LABEL: func.func @prime_length
// CHECK-NEXT:    %[[H:.*]] = lazy.shrink %x {{\[\[}}0, 65536]] : tensor<65537xf32> -> tensor<65536xf32>
// CHECK-NEXT:    %[[R:.*]] = lazy.shrink %x {{\[\[}}65536, 65537]] : tensor<65537xf32> -> tensor<1xf32>
// CHECK-NEXT:    %[[RS:.*]] = lazy.reduce add %[[R]] [0] : tensor<1xf32> -> tensor<1xf32>
// CHECK-NEXT:    %[[P:.*]] = lazy.reshape %[[H]] : tensor<65536xf32> -> tensor<16x4096xf32>
// CHECK-NEXT:    %[[S:.*]] = lazy.reduce add %[[P]] [1] {realize = "split reduce"} : tensor<16x4096xf32> -> tensor<16x1xf32>
// CHECK-NEXT:    %[[T:.*]] = lazy.reduce add %[[S]] [0] : tensor<16x1xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = lazy.reshape %[[T]] : tensor<1x1xf32> -> tensor<1xf32>
// CHECK-NEXT:    %{{.*}} = lazy.add %[[B]], %[[RS]] : tensor<1xf32>
// CHECK:         lazy.reduce max %{{.*}} [1] {realize = "split reduce"} : tensor<16x4096xf32> -> tensor<16x1xf32>
// CHECK:         lazy.max %{{.*}}, %{{.*}} : tensor<1xf32>
// CHECK:         lazy.reduce max %{{.*}} [1] {realize = "split reduce"} : tensor<16x4096xi32> -> tensor<16x1xi32>
// CHECK:         lazy.max %{{.*}}, %{{.*}} : tensor<1xi32>
// NOPAD-LABEL:  func.func @prime_length
// NOPAD-NEXT:     lazy.reduce add %x [0] : tensor<65537xf32> -> tensor<1xf32>
// NOPAD-NEXT:     lazy.reduce max %x [0] : tensor<65537xf32> -> tensor<1xf32>
// NOPAD-NEXT:     lazy.reduce max %i [0] : tensor<65537xi32> -> tensor<1xi32>
func.func @prime_length(%x: tensor<65537xf32>, %i: tensor<65537xi32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xi32>) {
  %0 = lazy.reduce add %x [0] : tensor<65537xf32> -> tensor<1xf32>
  %1 = lazy.reduce max %x [0] : tensor<65537xf32> -> tensor<1xf32>
  %2 = lazy.reduce max %i [0] : tensor<65537xi32> -> tensor<1xi32>
  func.return %0, %1, %2 : tensor<1xf32>, tensor<1xf32>, tensor<1xi32>
}

// -----

// A column sum keeps the input's last dim: its own limits apply (a GPU gives
// each result one thread). 4096 results of 4096 rows: left alone by default,
// with column-outputs=65536 split into 16 parts of 256 rows (65536 results).
// CHECK-LABEL: func.func @columns
// CHECK-NEXT:    lazy.reduce add %x [0] : tensor<4096x4096xf32> -> tensor<1x4096xf32>
// COLUMNS-LABEL: func.func @columns
// COLUMNS-NEXT:    %[[P:.*]] = lazy.reshape %x : tensor<4096x4096xf32> -> tensor<16x256x4096xf32>
// COLUMNS-NEXT:    %[[S:.*]] = lazy.reduce add %[[P]] [1] {realize = "split reduce"} : tensor<16x256x4096xf32> -> tensor<16x1x4096xf32>
// COLUMNS-NEXT:    %[[T:.*]] = lazy.reduce add %[[S]] [0] : tensor<16x1x4096xf32> -> tensor<1x1x4096xf32>
// COLUMNS-NEXT:    lazy.reshape %[[T]] : tensor<1x1x4096xf32> -> tensor<1x4096xf32>
// Rows keep the row limits: the row sums of 4096 x 4096 are not split.
// COLUMNS-NEXT:    lazy.reduce add %x [1] : tensor<4096x4096xf32> -> tensor<4096x1xf32>
func.func @columns(%x: tensor<4096x4096xf32>) -> (tensor<1x4096xf32>, tensor<4096x1xf32>) {
  %0 = lazy.reduce add %x [0] : tensor<4096x4096xf32> -> tensor<1x4096xf32>
  %1 = lazy.reduce add %x [1] : tensor<4096x4096xf32> -> tensor<4096x1xf32>
  func.return %0, %1 : tensor<1x4096xf32>, tensor<4096x1xf32>
}
