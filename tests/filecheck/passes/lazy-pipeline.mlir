// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory | filecheck %s
// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory | filecheck %s --check-prefix=BUG

// The whole lazy pipeline on front-end programs (as mlfuse.lazy_ir prints
// them): softmax and layernorm are one kernel each, mlp2 and attention two.
// Every program ends as kernel.funcs followed by a schedule of the same name.
// RUN 2 (prefix BUG) pins two regressions, see the end of the file.

// softmax: one kernel, front-end origins kept through every rewrite; one
// 32-float output buffer (128 bytes) is the peak.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    outs(%[[OUT:.*]]: memref<32xf32>) ins(%[[X:.*]]: memref<32xf32>) space [4, 8]
// CHECK-SAME:    attributes {origin = ["softmax"], ops = ["reduce", "sub", "exp", "reduce", "div"], reasons = ["output"]}
// CHECK-NEXT:    %[[L:.*]] = kernel.load %[[X]] <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
// CHECK-NEXT:    %[[M:.*]] = kernel.reduce max %[[L]] [1] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.subf %[[L]], %[[M]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT:    %[[Z:.*]] = kernel.reduce add %[[E]] [1] : f32
// CHECK-NEXT:    %[[D:.*]] = arith.divf %[[E]], %[[Z]] : f32
// CHECK-NEXT:    kernel.store %[[OUT]] <[4, 8] strides [8, 1] offset 0>, %[[D]] : memref<32xf32>
// CHECK-NOT:   kernel.func
// CHECK:       func.func @softmax(%[[XB:.*]]: memref<32xf32>) -> memref<32xf32> attributes {peak_bytes = 128 : i64, reused = 0 : i64}
// CHECK-NEXT:    %[[B:.*]] = kernel.alloc : memref<32xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[B]] : memref<32xf32>) ins(%[[XB]] : memref<32xf32>)
// CHECK-NEXT:    func.return %[[B]] : memref<32xf32>
// CHECK-NOT:     lazy.
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.reduce max %x [1] : tensor<4x8xf32> -> tensor<4x1xf32> loc("softmax")
  %1 = lazy.expand %0 : tensor<4x1xf32> -> tensor<4x8xf32> loc("softmax")
  %2 = lazy.sub %x, %1 : tensor<4x8xf32> loc("softmax")
  %3 = lazy.exp %2 : tensor<4x8xf32> loc("softmax")
  %4 = lazy.reduce add %3 [1] : tensor<4x8xf32> -> tensor<4x1xf32> loc("softmax")
  %5 = lazy.expand %4 : tensor<4x1xf32> -> tensor<4x8xf32> loc("softmax")
  %6 = lazy.div %3, %5 : tensor<4x8xf32> loc("softmax")
  func.return %6 : tensor<4x8xf32>
}

// -----

// layernorm: one kernel; x is loaded once and feeds both reduces (mean,
// centered variance); w and b are loaded broadcast over the rows.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    outs(%[[OUT:.*]]: memref<32xf32>) ins(%[[X:.*]]: memref<32xf32>, %[[W:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>) space [4, 8]
// CHECK-SAME:    reasons = ["output"]
// CHECK-NEXT:    %[[L:.*]] = kernel.load %[[X]] <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
// CHECK-NEXT:    %[[SUM:.*]] = kernel.reduce add %[[L]] [1] : f32
// CHECK:         %[[C:.*]] = arith.subf %[[L]], %{{.*}} : f32
// CHECK-NEXT:    %[[SQ:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-NEXT:    %{{.*}} = kernel.reduce add %[[SQ]] [1] : f32
// CHECK:         math.sqrt
// CHECK:         kernel.load %[[W]] <[4, 8] strides [0, 1] offset 0> : memref<8xf32>
// CHECK:         kernel.load %[[B]] <[4, 8] strides [0, 1] offset 0> : memref<8xf32>
// CHECK:         kernel.store %[[OUT]] <[4, 8] strides [8, 1] offset 0>
// CHECK-NOT:   kernel.func
// CHECK:       func.func @layernorm
// CHECK-SAME:    attributes {peak_bytes = 128 : i64, reused = 0 : i64}
// CHECK-NEXT:    %[[O:.*]] = kernel.alloc : memref<32xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[O]] : memref<32xf32>) ins(%{{.*}} : memref<32xf32>, %{{.*}} : memref<8xf32>, %{{.*}} : memref<8xf32>)
// CHECK-NEXT:    func.return %[[O]]
func.func @layernorm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.const 0.125 : tensor<f32>
  %2 = lazy.reshape %1 : tensor<f32> -> tensor<1x1xf32>
  %3 = lazy.expand %2 : tensor<1x1xf32> -> tensor<4x1xf32>
  %4 = lazy.mul %0, %3 : tensor<4x1xf32>
  %5 = lazy.expand %4 : tensor<4x1xf32> -> tensor<4x8xf32>
  %6 = lazy.sub %x, %5 : tensor<4x8xf32>
  %7 = lazy.mul %6, %6 : tensor<4x8xf32>
  %8 = lazy.reduce add %7 [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %9 = lazy.mul %8, %3 : tensor<4x1xf32>
  %10 = lazy.const 1.0e-05 : tensor<4x1xf32>
  %11 = lazy.add %9, %10 : tensor<4x1xf32>
  %12 = lazy.sqrt %11 : tensor<4x1xf32>
  %13 = lazy.expand %12 : tensor<4x1xf32> -> tensor<4x8xf32>
  %14 = lazy.div %6, %13 : tensor<4x8xf32>
  %15 = lazy.reshape %w : tensor<8xf32> -> tensor<1x8xf32>
  %16 = lazy.expand %15 : tensor<1x8xf32> -> tensor<4x8xf32>
  %17 = lazy.mul %14, %16 : tensor<4x8xf32>
  %18 = lazy.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %19 = lazy.expand %18 : tensor<1x8xf32> -> tensor<4x8xf32>
  %20 = lazy.add %17, %19 : tensor<4x8xf32>
  func.return %20 : tensor<4x8xf32>
}

// -----

// mlp2: the first layer (matmul + bias + relu) is kernel 0, stored because
// the second matmul broadcasts it; the second layer is kernel 1. The hidden
// buffer (64 floats) is freed after its reader; peak = 256 + 64 bytes.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    outs(%{{.*}}: memref<64xf32>) ins(%{{.*}}: memref<32xf32>, %{{.*}}: memref<128xf32>, %{{.*}}: memref<16xf32>) space [4, 16, 8]
// CHECK-SAME:    ops = ["mul", "reduce", "add", "max"], reasons = ["expand of reduce"]
// CHECK:         kernel.reduce add %{{.*}} [2] : f32
// CHECK:         arith.maximumf
// CHECK:         kernel.store %{{.*}} <[4, 16, 8] strides [16, 1, 0] offset 0>
// CHECK:       kernel.func @k1
// CHECK-SAME:    outs(%{{.*}}: memref<16xf32>) ins(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<4xf32>) space [4, 4, 16]
// CHECK-SAME:    ops = ["mul", "reduce", "add"], reasons = ["output"]
// CHECK:         kernel.load %{{.*}} <[4, 4, 16] strides [16, 0, 1] offset 0> : memref<64xf32>
// CHECK:         kernel.reduce add %{{.*}} [2] : f32
// CHECK-NOT:   kernel.func
// CHECK:       func.func @mlp2(%[[X:.*]]: memref<32xf32>, %[[W1:.*]]: memref<128xf32>, %[[B1:.*]]: memref<16xf32>, %[[W2:.*]]: memref<64xf32>, %[[B2:.*]]: memref<4xf32>)
// CHECK-SAME:    attributes {not_fused = ["k0 (mul, reduce, add, max) -> k1 (mul, reduce, add): expand of reduce (k1 reads k0's reduction broadcast along a loop of its own; one kernel would redo the reduction for every copy)"], peak_bytes = 320 : i64, reused = 0 : i64}
// CHECK-NEXT:    %[[H:.*]] = kernel.alloc : memref<64xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[H]] : memref<64xf32>) ins(%[[X]] : memref<32xf32>, %[[W1]] : memref<128xf32>, %[[B1]] : memref<16xf32>)
// CHECK-NEXT:    %[[Y:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @k1 outs(%[[Y]] : memref<16xf32>) ins(%[[H]] : memref<64xf32>, %[[W2]] : memref<64xf32>, %[[B2]] : memref<4xf32>)
// CHECK-NEXT:    kernel.free %[[H]] : memref<64xf32>
// CHECK-NEXT:    func.return %[[Y]] : memref<16xf32>
func.func @mlp2(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>, %w2: tensor<16x4xf32>, %b2: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = lazy.reshape %x : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %1 = lazy.expand %0 : tensor<4x1x8xf32> -> tensor<4x16x8xf32>
  %2 = lazy.permute %w1 [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %3 = lazy.reshape %2 : tensor<16x8xf32> -> tensor<1x16x8xf32>
  %4 = lazy.expand %3 : tensor<1x16x8xf32> -> tensor<4x16x8xf32>
  %5 = lazy.mul %1, %4 : tensor<4x16x8xf32>
  %6 = lazy.reduce add %5 [2] : tensor<4x16x8xf32> -> tensor<4x16x1xf32>
  %7 = lazy.reshape %6 : tensor<4x16x1xf32> -> tensor<4x16xf32>
  %8 = lazy.reshape %b1 : tensor<16xf32> -> tensor<1x16xf32>
  %9 = lazy.expand %8 : tensor<1x16xf32> -> tensor<4x16xf32>
  %10 = lazy.add %7, %9 : tensor<4x16xf32>
  %11 = lazy.const 0.0 : tensor<4x16xf32>
  %12 = lazy.max %10, %11 : tensor<4x16xf32>
  %13 = lazy.reshape %12 : tensor<4x16xf32> -> tensor<4x1x16xf32>
  %14 = lazy.expand %13 : tensor<4x1x16xf32> -> tensor<4x4x16xf32>
  %15 = lazy.permute %w2 [1, 0] : tensor<16x4xf32> -> tensor<4x16xf32>
  %16 = lazy.reshape %15 : tensor<4x16xf32> -> tensor<1x4x16xf32>
  %17 = lazy.expand %16 : tensor<1x4x16xf32> -> tensor<4x4x16xf32>
  %18 = lazy.mul %14, %17 : tensor<4x4x16xf32>
  %19 = lazy.reduce add %18 [2] : tensor<4x4x16xf32> -> tensor<4x4x1xf32>
  %20 = lazy.reshape %19 : tensor<4x4x1xf32> -> tensor<4x4xf32>
  %21 = lazy.reshape %b2 : tensor<4xf32> -> tensor<1x4xf32>
  %22 = lazy.expand %21 : tensor<1x4xf32> -> tensor<4x4xf32>
  %23 = lazy.add %20, %22 : tensor<4x4xf32>
  func.return %23 : tensor<4x4xf32>
}

// -----

// attention = softmax(q @ k^T / 4, -1) @ v on (2, 4, 3): kernel 0 stores the
// scores (32 floats); kernel 1 does the scaling, the softmax (two reduces)
// and the second matmul (a third reduce) in one pass. Peak = 128 + 96 bytes.
// CHECK-LABEL: kernel.func @k0
// CHECK-SAME:    outs(%{{.*}}: memref<32xf32>) ins(%{{.*}}: memref<24xf32>, %{{.*}}: memref<24xf32>) space [2, 4, 4, 3]
// CHECK-SAME:    ops = ["mul", "reduce"], reasons = ["reduce of reduce"]
// CHECK:         kernel.load %{{.*}} <[2, 4, 4, 3] strides [12, 3, 0, 1] offset 0> : memref<24xf32>
// CHECK-NEXT:    kernel.load %{{.*}} <[2, 4, 4, 3] strides [12, 0, 3, 1] offset 0> : memref<24xf32>
// CHECK:         kernel.store %{{.*}} <[2, 4, 4, 3] strides [16, 4, 1, 0] offset 0>
// CHECK:       kernel.func @k1
// CHECK-SAME:    outs(%{{.*}}: memref<24xf32>) ins(%{{.*}}: memref<32xf32>, %{{.*}}: memref<24xf32>) space [2, 4, 3, 4]
// CHECK-SAME:    ops = ["div", "reduce", "sub", "exp", "reduce", "div", "mul", "reduce"], reasons = ["output"]
// CHECK:         kernel.reduce max %{{.*}} [3] : f32
// CHECK:         kernel.reduce add %{{.*}} [3] : f32
// CHECK:         kernel.reduce add %{{.*}} [3] : f32
// CHECK:         kernel.store %{{.*}} <[2, 4, 3, 4] strides [12, 3, 1, 0] offset 0>
// CHECK-NOT:   kernel.func
// CHECK:       func.func @attention(%[[Q:.*]]: memref<24xf32>, %[[K:.*]]: memref<24xf32>, %[[V:.*]]: memref<24xf32>)
// CHECK-SAME:    attributes {not_fused = ["k0 (mul, reduce) -> k1 (div, reduce, sub, exp, reduce, div, mul, reduce): reduce of reduce (k1 needs k0's reduction in more than one place of its loops; one kernel would compute it more than once)"], peak_bytes = 224 : i64, reused = 0 : i64}
// CHECK-NEXT:    %[[S:.*]] = kernel.alloc : memref<32xf32>
// CHECK-NEXT:    kernel.launch @k0 outs(%[[S]] : memref<32xf32>) ins(%[[Q]] : memref<24xf32>, %[[K]] : memref<24xf32>)
// CHECK-NEXT:    %[[O:.*]] = kernel.alloc : memref<24xf32>
// CHECK-NEXT:    kernel.launch @k1 outs(%[[O]] : memref<24xf32>) ins(%[[S]] : memref<32xf32>, %[[V]] : memref<24xf32>)
// CHECK-NEXT:    kernel.free %[[S]] : memref<32xf32>
// CHECK-NEXT:    func.return %[[O]] : memref<24xf32>
func.func @attention(%q: tensor<2x4x3xf32>, %k: tensor<2x4x3xf32>, %v: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %0 = lazy.reshape %q : tensor<2x4x3xf32> -> tensor<2x4x1x3xf32>
  %1 = lazy.expand %0 : tensor<2x4x1x3xf32> -> tensor<2x4x4x3xf32>
  %2 = lazy.permute %k [0, 2, 1] : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
  %3 = lazy.permute %2 [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %4 = lazy.reshape %3 : tensor<2x4x3xf32> -> tensor<2x1x4x3xf32>
  %5 = lazy.expand %4 : tensor<2x1x4x3xf32> -> tensor<2x4x4x3xf32>
  %6 = lazy.mul %1, %5 : tensor<2x4x4x3xf32>
  %7 = lazy.reduce add %6 [3] : tensor<2x4x4x3xf32> -> tensor<2x4x4x1xf32>
  %8 = lazy.reshape %7 : tensor<2x4x4x1xf32> -> tensor<2x4x4xf32>
  %9 = lazy.const 4.0 : tensor<f32>
  %10 = lazy.reshape %9 : tensor<f32> -> tensor<1x1x1xf32>
  %11 = lazy.expand %10 : tensor<1x1x1xf32> -> tensor<2x4x4xf32>
  %12 = lazy.div %8, %11 : tensor<2x4x4xf32>
  %13 = lazy.reduce max %12 [2] : tensor<2x4x4xf32> -> tensor<2x4x1xf32>
  %14 = lazy.expand %13 : tensor<2x4x1xf32> -> tensor<2x4x4xf32>
  %15 = lazy.sub %12, %14 : tensor<2x4x4xf32>
  %16 = lazy.exp %15 : tensor<2x4x4xf32>
  %17 = lazy.reduce add %16 [2] : tensor<2x4x4xf32> -> tensor<2x4x1xf32>
  %18 = lazy.expand %17 : tensor<2x4x1xf32> -> tensor<2x4x4xf32>
  %19 = lazy.div %16, %18 : tensor<2x4x4xf32>
  %20 = lazy.reshape %19 : tensor<2x4x4xf32> -> tensor<2x4x1x4xf32>
  %21 = lazy.expand %20 : tensor<2x4x1x4xf32> -> tensor<2x4x3x4xf32>
  %22 = lazy.permute %v [0, 2, 1] : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
  %23 = lazy.reshape %22 : tensor<2x3x4xf32> -> tensor<2x1x3x4xf32>
  %24 = lazy.expand %23 : tensor<2x1x3x4xf32> -> tensor<2x4x3x4xf32>
  %25 = lazy.mul %21, %24 : tensor<2x4x3x4xf32>
  %26 = lazy.reduce add %25 [3] : tensor<2x4x3x4xf32> -> tensor<2x4x3x1xf32>
  %27 = lazy.reshape %26 : tensor<2x4x3x1xf32> -> tensor<2x4x3xf32>
  func.return %27 : tensor<2x4x3xf32>
}

// -----

// REGRESSION (RUN 2): (x @ w).T. The transpose of the matmul's reduce cannot be
// pushed into it (no size-1 dim left to host the reduced axis), so the
// output is a view of the reduce; outline-kernels must store it through the
// output's own index map, strides [4, 1, 0] (it once used the reduce's,
// [1, 4, 0], writing out[j, i]).
// The kernel returns x @ w, untransposed.
// BUG:       kernel.func @k0 outs(%{{.*}}: memref<16xf32>) ins(%{{.*}}: memref<32xf32>, %{{.*}}: memref<32xf32>) space [4, 4, 8]
// BUG:         kernel.load %{{.*}} <[4, 4, 8] strides [0, 8, 1] offset 0> : memref<32xf32>
// BUG-NEXT:    kernel.load %{{.*}} <[4, 4, 8] strides [1, 0, 4] offset 0> : memref<32xf32>
// BUG:         kernel.store %{{.*}} <[4, 4, 8] strides [4, 1, 0] offset 0>
// BUG:       func.func @matmul_transposed
func.func @matmul_transposed(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = lazy.reshape %x : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %1 = lazy.expand %0 : tensor<4x1x8xf32> -> tensor<4x4x8xf32>
  %2 = lazy.permute %w [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %3 = lazy.reshape %2 : tensor<4x8xf32> -> tensor<1x4x8xf32>
  %4 = lazy.expand %3 : tensor<1x4x8xf32> -> tensor<4x4x8xf32>
  %5 = lazy.mul %1, %4 : tensor<4x4x8xf32>
  %6 = lazy.reduce add %5 [2] : tensor<4x4x8xf32> -> tensor<4x4x1xf32>
  %7 = lazy.reshape %6 : tensor<4x4x1xf32> -> tensor<4x4xf32>
  %8 = lazy.permute %7 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %8 : tensor<4x4xf32>
}

// -----

// REGRESSION (RUN 2): s = x.sum(1, keepdim=True); outputs s + 1 and x - s. One
// kernel computes both; each output goes to its own buffer (they were once
// stored into each other's, failing the kernel.store verifier).
// BUG:       kernel.func @k0
// BUG-SAME:    space [4, 8]
// BUG:         %[[R:.*]] = kernel.reduce add %{{.*}} [1] : f32
// BUG-DAG:     kernel.store %{{.*}} <[4, 8] strides [1, 0] offset 0>, %{{.*}} : memref<4xf32>
// BUG-DAG:     kernel.store %{{.*}} <[4, 8] strides [8, 1] offset 0>, %{{.*}} : memref<32xf32>
// BUG:       func.func @shared_reduce_two_shapes
func.func @shared_reduce_two_shapes(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = lazy.const 1.0 : tensor<4x1xf32>
  %2 = lazy.add %0, %1 : tensor<4x1xf32>
  %3 = lazy.expand %0 : tensor<4x1xf32> -> tensor<4x8xf32>
  %4 = lazy.sub %x, %3 : tensor<4x8xf32>
  func.return %2, %4 : tensor<4x1xf32>, tensor<4x8xf32>
}
