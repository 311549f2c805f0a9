// Negative tests for the kernel dialect's verifiers: each case must fail
// with exactly this message.
//
// RUN: mlfuse-opt %s --verify-diagnostics --split-input-file | filecheck %s

// load: the view's shape is the kernel's space, and it reads inside the buffer

// CHECK: Operation does not verify: kernel.load: view shape [64] differs from the kernel space [8, 8]
kernel.func @load_shape outs(%o: memref<64xf32>) ins(%x: memref<64xf32>) space [8, 8] {
  %0 = kernel.load %x <[64] strides [1] offset 0> : memref<64xf32>
  kernel.store %o <[8, 8] strides [8, 1] offset 0>, %0 : memref<64xf32>
}

// -----

// CHECK: Operation does not verify: kernel.load: view reaches offsets [0, 35] outside the buffer of 32 elements
kernel.func @load_past_end outs(%o: memref<64xf32>) ins(%x: memref<32xf32>) space [8, 8] {
  %0 = kernel.load %x <[8, 8] strides [4, 1] offset 0> : memref<32xf32>
  kernel.store %o <[8, 8] strides [8, 1] offset 0>, %0 : memref<64xf32>
}

// -----

// CHECK: Operation does not verify: kernel.load: view reaches offsets [-1, 62] outside the buffer of 64 elements
kernel.func @load_before_start outs(%o: memref<64xf32>) ins(%x: memref<64xf32>) space [8, 8] {
  %0 = kernel.load %x <[8, 8] strides [8, 1] offset -1> : memref<64xf32>
  kernel.store %o <[8, 8] strides [8, 1] offset 0>, %0 : memref<64xf32>
}

// -----

// CHECK: Operation does not verify: kernel.load: result type f64 differs from the buffer's element type f32
kernel.func @load_result outs(%o: memref<64xf32>) ins(%x: memref<64xf32>) space [64] {
  %0 = "kernel.load"(%x) <{view = #lazy.view<[64] strides [1] offset 0>}> : (memref<64xf32>) -> f64
}

// -----

// CHECK: Operation does not verify: kernel.load must be directly inside a kernel.func
func.func @load_outside_kernel(%b: memref<4xi32>) {
  %0 = kernel.load %b <[4] strides [1] offset 0> : memref<4xi32>
  func.return
}

// -----

// valid: the view's shape is the kernel's space

// CHECK: Operation does not verify: kernel.valid: view shape [32] differs from the kernel space [64]
kernel.func @valid_shape outs(%o: memref<64xi1>) ins() space [64] {
  %0 = kernel.valid <[32] strides [1] offset 0 mask [[0, 16]]>
  kernel.store %o <[64] strides [1] offset 0>, %0 : memref<64xi1>
}

// -----

// store: the value has the buffer's element type; one unmasked view inside the buffer

// CHECK: Operation does not verify: kernel.store: value type i32 differs from the buffer's element type f32
kernel.func @store_value outs(%o: memref<64xf32>) ins(%x: memref<64xi32>) space [64] {
  %0 = kernel.load %x <[64] strides [1] offset 0> : memref<64xi32>
  "kernel.store"(%o, %0) <{view = #lazy.view<[64] strides [1] offset 0>}> : (memref<64xf32>, i32) -> ()
}

// -----

// CHECK: Operation does not verify: kernel.store: a store view must be a single unmasked view
kernel.func @store_masked outs(%o: memref<64xf32>) ins(%x: memref<64xf32>) space [64] {
  %0 = kernel.load %x <[64] strides [1] offset 0> : memref<64xf32>
  kernel.store %o <[64] strides [1] offset 0 mask [[0, 32]]>, %0 : memref<64xf32>
}

// -----

// CHECK: Operation does not verify: kernel.store: a store view must be a single unmasked view
kernel.func @store_stacked outs(%o: memref<64xf32>) ins(%x: memref<64xf32>) space [4, 16] {
  %0 = kernel.load %x <[4, 16] strides [16, 1] offset 0> : memref<64xf32>
  kernel.store %o <[16, 4] strides [1, 16] offset 0 | [4, 16] strides [16, 1] offset 0>, %0 : memref<64xf32>
}

// -----

// CHECK: Operation does not verify: kernel.store: view reaches offsets [0, 63] outside the buffer of 32 elements
kernel.func @store_past_end outs(%o: memref<32xf32>) ins(%x: memref<64xf32>) space [64] {
  %0 = kernel.load %x <[64] strides [1] offset 0> : memref<64xf32>
  kernel.store %o <[64] strides [1] offset 0>, %0 : memref<32xf32>
}

// -----

// CHECK: Operation does not verify: kernel.store: view shape [8, 8] differs from the kernel space [64]
kernel.func @store_shape outs(%o: memref<64xf32>) ins(%x: memref<64xf32>) space [64] {
  %0 = kernel.load %x <[64] strides [1] offset 0> : memref<64xf32>
  kernel.store %o <[8, 8] strides [8, 1] offset 0>, %0 : memref<64xf32>
}

// -----

// reduce: a known kind over axes of the space, on a scalar

// CHECK: Operation does not verify: kernel.reduce: axis 2 out of range for a rank-2 space
kernel.func @reduce_axis outs(%o: memref<8xf32>) ins(%x: memref<64xf32>) space [8, 8] {
  %0 = kernel.load %x <[8, 8] strides [8, 1] offset 0> : memref<64xf32>
  %1 = kernel.reduce add %0 [2] : f32
  kernel.store %o <[8, 8] strides [1, 0] offset 0>, %1 : memref<8xf32>
}

// -----

// CHECK: Operation does not verify: kernel.reduce: axis -1 out of range for a rank-2 space
kernel.func @reduce_axis_negative outs(%o: memref<8xf32>) ins(%x: memref<64xf32>) space [8, 8] {
  %0 = kernel.load %x <[8, 8] strides [8, 1] offset 0> : memref<64xf32>
  %1 = kernel.reduce max %0 [-1] : f32
  kernel.store %o <[8, 8] strides [1, 0] offset 0>, %1 : memref<8xf32>
}

// -----

// CHECK: Operation does not verify: kernel.reduce: unknown kind 'min'
kernel.func @reduce_kind outs(%o: memref<8xf32>) ins(%x: memref<64xf32>) space [8, 8] {
  %0 = kernel.load %x <[8, 8] strides [8, 1] offset 0> : memref<64xf32>
  %1 = kernel.reduce min %0 [1] : f32
  kernel.store %o <[8, 8] strides [1, 0] offset 0>, %1 : memref<8xf32>
}

// -----

// CHECK: Operation does not verify: kernel.reduce: result type must equal the input type
kernel.func @reduce_type outs(%o: memref<8xf32>) ins(%x: memref<64xf32>) space [8, 8] {
  %0 = kernel.load %x <[8, 8] strides [8, 1] offset 0> : memref<64xf32>
  %1 = "kernel.reduce"(%0) <{kind = "add", axes = array<i64: 1>}> : (f32) -> f64
}

// -----

// CHECK: Operation does not verify: kernel.reduce: cannot reduce memref<4xf32>
kernel.func @reduce_memref outs(%o: memref<4xf32>) ins() space [4] {
  %0 = kernel.reduce add %o [0] : memref<4xf32>
}

// -----

// CHECK: Operation does not verify: kernel.reduce must be directly inside a kernel.func
func.func @reduce_outside_kernel(%a: f32) -> f32 {
  %0 = kernel.reduce add %a [0] : f32
  func.return %0 : f32
}

// -----

// a kernel body holds kernel loads/stores/reduces and arith/math scalar ops only

// CHECK: Operation does not verify: kernel.func: 'lazy.const' is not allowed in a kernel body (only kernel loads, stores, reduces, scans, sincos_large and arith/math scalar ops)
kernel.func @lazy_in_body outs(%o: memref<4xf32>) ins() space [4] {
  %0 = lazy.const 1.0 : tensor<4xf32>
}

// -----

// CHECK: Operation does not verify: kernel.func: 'func.call' is not allowed in a kernel body
func.func private @helper() -> f32
kernel.func @call_in_body outs(%o: memref<4xf32>) ins() space [4] {
  %0 = func.call @helper() : () -> f32
  kernel.store %o <[4] strides [1] offset 0>, %0 : memref<4xf32>
}

// -----

// CHECK: Operation does not verify: kernel.func: 'kernel.alloc' is not allowed in a kernel body
kernel.func @alloc_in_body outs(%o: memref<4xf32>) ins() space [4] {
  %0 = kernel.alloc : memref<4xf32>
}

// -----

// CHECK: Operation does not verify: kernel.func: 'arith.select' must produce scalars
kernel.func @memref_value outs(%o: memref<4xf32>) ins(%x: memref<4xf32>) space [4] {
  %c = arith.constant true
  %0 = arith.select %c, %o, %x : memref<4xf32>
}

// -----

// kernel arguments are static 1-D memrefs matching the signature

// CHECK: Operation does not verify: kernel.func: every argument must be a static 1-D memref, got memref<2x2xf32>
kernel.func @arg_2d outs(%o: memref<2x2xf32>) ins() space [2, 2] {
}

// -----

// CHECK: Operation does not verify: kernel.func: every argument must be a static 1-D memref, got memref<?xf32>
kernel.func @arg_dynamic outs() ins(%x: memref<?xf32>) space [4] {
}

// -----

// CHECK: Operation does not verify: kernel.func: every argument must be a static 1-D memref, got tensor<4xf32>
kernel.func @arg_tensor outs(%o: tensor<4xf32>) ins() space [4] {
}

// -----

// CHECK: Operation does not verify: kernel.func: block arguments differ from the signature
"kernel.func"() <{sym_name = "signature", function_type = (memref<4xf32>) -> (), num_outputs = #builtin.int<1>, space = array<i64: 4>}> ({
^bb0(%o: memref<8xf32>):
}) : () -> ()

// -----

// CHECK: Operation does not verify: kernel.func: bad number of outputs
"kernel.func"() <{sym_name = "outputs", function_type = (memref<4xf32>) -> (), num_outputs = #builtin.int<2>, space = array<i64: 4>}> ({
^bb0(%o: memref<4xf32>):
}) : () -> ()

// -----

// CHECK: Operation does not verify: kernel.func: negative extent in space [-4]
kernel.func @negative_space outs(%o: memref<4xf32>) ins() space [-4] {
}

// -----

// the schedule: launches name a kernel and pass its buffers; allocs are 1-D

// CHECK: Operation does not verify: kernel.launch: no function named @nowhere
func.func @launch_unknown(%b: memref<4xf32>) {
  kernel.launch @nowhere outs(%b : memref<4xf32>) ins()
  func.return
}

// -----

// CHECK: Operation does not verify: kernel.launch: argument types ['memref<4xf32>', 'memref<8xf32>'] differ from @k's ['memref<4xf32>', 'memref<4xf32>']
kernel.func @k outs(%o: memref<4xf32>) ins(%x: memref<4xf32>) space [4] {
  %0 = kernel.load %x <[4] strides [1] offset 0> : memref<4xf32>
  kernel.store %o <[4] strides [1] offset 0>, %0 : memref<4xf32>
}
func.func @launch_types(%a: memref<4xf32>, %b: memref<8xf32>) {
  kernel.launch @k outs(%a : memref<4xf32>) ins(%b : memref<8xf32>)
  func.return
}

// -----

// CHECK: Operation does not verify: kernel.launch: @k has 1 outputs, the launch passes 2
kernel.func @k outs(%o: memref<4xf32>) ins(%x: memref<4xf32>) space [4] {
  %0 = kernel.load %x <[4] strides [1] offset 0> : memref<4xf32>
  kernel.store %o <[4] strides [1] offset 0>, %0 : memref<4xf32>
}
func.func @launch_outputs(%a: memref<4xf32>, %b: memref<4xf32>) {
  kernel.launch @k outs(%a : memref<4xf32>, %b : memref<4xf32>) ins()
  func.return
}

// -----

// CHECK: Operation does not verify: kernel.launch: argument types ['memref<4xf32>'] differ from @k's ['memref<4xf32>', 'memref<4xf32>']
kernel.func @k outs(%o: memref<4xf32>) ins(%x: memref<4xf32>) space [4] {
  %0 = kernel.load %x <[4] strides [1] offset 0> : memref<4xf32>
  kernel.store %o <[4] strides [1] offset 0>, %0 : memref<4xf32>
}
func.func @launch_count(%a: memref<4xf32>) {
  kernel.launch @k outs(%a : memref<4xf32>) ins()
  func.return
}

// -----

// after lowering, the callee is a func.func whose leading arguments are the buffers

// CHECK: Operation does not verify: kernel.launch: argument types differ from @lowered's
func.func @lowered(%o: memref<4xf32>, %x: memref<4xf32>, %n: index) {
  func.return
}
func.func @launch_lowered(%a: memref<4xf32>, %b: memref<8xf32>) {
  kernel.launch @lowered outs(%a : memref<4xf32>) ins(%b : memref<8xf32>)
  func.return
}

// -----

// CHECK: Operation does not verify: kernel.alloc: result must be a static 1-D memref, got memref<2x2xf32>
func.func @alloc_2d() {
  %0 = kernel.alloc : memref<2x2xf32>
  func.return
}

// -----

// Regressions: cases the verifier once accepted.

// kernel.free has no verifier: unlike kernel.alloc it takes any memref.
// CHECK: Operation does not verify: kernel.free: {{.*}}1-D memref{{.*}}memref<2x2xf32>
func.func @free_2d(%b: memref<2x2xf32>) {
  kernel.free %b : memref<2x2xf32>
  func.return
}

// -----

// A kernel returns nothing, but the verifier accepts results in its
// function_type; the custom syntax cannot print them (they are dropped).
// CHECK: Operation does not verify: kernel.func: {{.*}}result
"kernel.func"() <{sym_name = "results", function_type = (memref<4xf32>) -> f32, num_outputs = #builtin.int<1>, space = array<i64: 4>}> ({
^bb0(%o: memref<4xf32>):
  %0 = arith.constant 1.0 : f32
  kernel.store %o <[4] strides [1] offset 0>, %0 : memref<4xf32>
}) : () -> ()

// -----

// Values are defined before their use (a kernel body is one block in order).
// CHECK: Operation does not verify: kernel.func @use_before_def: 'math.exp' uses a value defined later in the kernel (operands must be defined before their use)
kernel.func @use_before_def outs(%o: memref<4xf32>) ins(%x: memref<4xf32>) space [4] {
  %1 = math.exp %0 : f32
  %0 = kernel.load %x <[4] strides [1] offset 0> : memref<4xf32>
  kernel.store %o <[4] strides [1] offset 0>, %1 : memref<4xf32>
}

// -----

// Plans: every space dim has exactly one loop, parallel loops come first,
// and no reduce runs over a parallel dim.
// CHECK: Operation does not verify: kernel.func @plan_missing: bad plan [parallel 0]: dims [1] of the space have no loop
kernel.func @plan_missing outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 0] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %0 : memref<32xf32>
}

// -----

// CHECK: Operation does not verify: kernel.func @plan_twice: bad plan [parallel 0, serial 0]: dim 0 has several loops: each needs a size ('kind 0:size')
kernel.func @plan_twice outs(%o: memref<4xf32>) ins(%x: memref<4xf32>) space [4] plan [parallel 0, serial 0] {
  %0 = kernel.load %x <[4] strides [1] offset 0> : memref<4xf32>
  kernel.store %o <[4] strides [1] offset 0>, %0 : memref<4xf32>
}

// -----

// CHECK: Operation does not verify: kernel.func @plan_range: bad plan [parallel 2]: dim 2 is out of range for a rank-1 space
kernel.func @plan_range outs(%o: memref<4xf32>) ins(%x: memref<4xf32>) space [4] plan [parallel 2] {
  %0 = kernel.load %x <[4] strides [1] offset 0> : memref<4xf32>
  kernel.store %o <[4] strides [1] offset 0>, %0 : memref<4xf32>
}

// -----

// CHECK: Operation does not verify: kernel.func @plan_order: bad plan [serial 1, parallel 0]: loops must be block/parallel, then serial, then unroll/vector (register), then thread loops
kernel.func @plan_order outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [serial 1, parallel 0] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %0 : memref<32xf32>
}

// -----

// CHECK: Operation does not verify: kernel.func @plan_race: bad plan [parallel 0, parallel 1]: dim 1 is parallel but a reduce runs over it (its partial results would race)
kernel.func @plan_race outs(%o: memref<4xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 0, parallel 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %o <[4, 8] strides [1, 0] offset 0>, %1 : memref<4xf32>
}

// -----

// kernel.constant: one element of the value's type
// CHECK: Operation does not verify: kernel.constant: result must hold one element, got memref<4xf32>
func.func @constant_size() {
  %0 = "kernel.constant"() <{value = 1.0 : f32}> : () -> memref<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: kernel.constant: value 1 : i32 does not have the element type f32
func.func @constant_type() {
  %0 = "kernel.constant"() <{value = 1 : i32}> : () -> memref<1xf32>
  func.return
}

// -----

// window: inside its source, of the same element type

// CHECK: Operation does not verify: kernel.window: elements [100, 132) are not inside the source's 128
func.func @window_past_end(%x: memref<128xf32>) {
  %0 = kernel.window %x [100] : memref<128xf32> -> memref<32xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: kernel.window: element type i32 differs from the source's f32
func.func @window_type(%x: memref<128xf32>) {
  %0 = "kernel.window"(%x) <{offset = 0 : i64}> : (memref<128xf32>) -> memref<32xi32>
  func.return
}

// -----

// sincos_large: sin or cos of f64 (or vectors of it)

// CHECK: Operation does not verify: kernel.sincos_large: kind must be "sin" or "cos", not 'tan'
func.func @sincos_large_kind(%x: f64) {
  %0 = "kernel.sincos_large"(%x) <{kind = "tan"}> : (f64) -> f64
  func.return
}

// -----

// CHECK: Operation does not verify: operand 'x' at position 0 does not verify:
func.func @sincos_large_f32(%x: f32) {
  %0 = "kernel.sincos_large"(%x) <{kind = "sin"}> : (f32) -> f32
  func.return
}
