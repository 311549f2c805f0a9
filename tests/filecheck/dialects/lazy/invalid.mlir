// Negative tests for the lazy dialect's verifiers (and, for the custom
// syntax, its parser): each case must fail with exactly this message.
// --parsing-diagnostics lets the cases whose custom syntax already rejects
// the input report and go on, like the verifier cases.
//
// RUN: mlfuse-opt %s --verify-diagnostics --parsing-diagnostics --split-input-file | filecheck %s

// binary ops need one operand type

// CHECK: Operation does not verify: lazy.add: operand types differ: tensor<4xf32> vs tensor<8xf32>
func.func @binary_shapes(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  %0 = "lazy.add"(%x, %y) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.mul: operand types differ: tensor<4xf32> vs tensor<4xi32>
func.func @binary_elements(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  %0 = "lazy.mul"(%x, %y) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return
}

// -----

// the custom syntax has one type for both operands: a mismatch is a parse error

// CHECK: invalid.mlir:[[# @LINE + 4]]:{{[0-9]+}}
// CHECK-NEXT: %0 = lazy.sub %x, %y : tensor<4xf32>
// CHECK: operand is used with type tensor<4xf32>, but has been previously used or defined with type tensor<8xf32>
func.func @binary_custom(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  %0 = lazy.sub %x, %y : tensor<4xf32>
  func.return
}

// -----

// a comparison gives bools

// CHECK: Operation does not verify: lazy.cmplt: result type must be tensor<4xi1>, got tensor<4xf32>
func.func @compare_result(%x: tensor<4xf32>) {
  %0 = "lazy.cmplt"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.max: result type must be tensor<4xf32>, got tensor<2x2xf32>
func.func @binary_result(%x: tensor<4xf32>) {
  %0 = "lazy.max"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// element-type classes: float-only, integer-only, bool/int-only ops

// CHECK: Operation does not verify: lazy.exp needs float elements, got i32
func.func @exp_int(%x: tensor<4xi32>) {
  %0 = lazy.exp %x : tensor<4xi32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.pow needs float elements, got i32
func.func @pow_int(%x: tensor<4xi32>) {
  %0 = lazy.pow %x, %x : tensor<4xi32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.idiv needs integer elements, got f32
func.func @idiv_float(%x: tensor<4xf32>) {
  %0 = lazy.idiv %x, %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.not needs bool/int elements, got f32
func.func @not_float(%x: tensor<4xf32>) {
  %0 = lazy.not %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.neg needs numeric elements, got i1
func.func @neg_bool(%x: tensor<4xi1>) {
  %0 = lazy.neg %x : tensor<4xi1>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.sqrt: result type tensor<4xf64> differs from operand type tensor<4xf32>
func.func @unary_result(%x: tensor<4xf32>) {
  %0 = "lazy.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  func.return
}

// -----

// shapes are static

// CHECK: Operation does not verify: lazy.neg: operand must have a static shape, got tensor<?xf32>
func.func @dynamic(%x: tensor<?xf32>) {
  %0 = lazy.neg %x : tensor<?xf32>
  func.return
}

// -----

// where: the condition is a bool tensor of the values' shape

// CHECK: Operation does not verify: lazy.where: condition must be tensor<4xi1>, got tensor<4xi32>
func.func @where_condition(%c: tensor<4xi32>, %x: tensor<4xf32>) {
  %0 = "lazy.where"(%c, %x, %x) : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.where: condition must be tensor<4xi1>, got tensor<2xi1>
func.func @where_condition_shape(%c: tensor<2xi1>, %x: tensor<4xf32>) {
  %0 = "lazy.where"(%c, %x, %x) : (tensor<2xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.where: value types differ: tensor<4xf32>, tensor<4xf64> -> tensor<4xf32>
func.func @where_values(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf64>) {
  %0 = "lazy.where"(%c, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.mulacc needs float elements, got i32
func.func @mulacc_int(%x: tensor<4xi32>) {
  %0 = lazy.mulacc %x, %x, %x : tensor<4xi32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.mulacc: all operands and the result must have one type
func.func @mulacc_types(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  %0 = "lazy.mulacc"(%x, %x, %y) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// cast keeps the shape; bitcast keeps the bit width and never involves bools

// CHECK: Operation does not verify: lazy.cast: shape changes from tensor<4xi32> to tensor<8xf32>
func.func @cast_shape(%x: tensor<4xi32>) {
  %0 = lazy.cast %x : tensor<4xi32> to tensor<8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.bitcast: cannot reinterpret f32 as i16 (widths differ)
func.func @bitcast_width(%x: tensor<4xf32>) {
  %0 = lazy.bitcast %x : tensor<4xf32> to tensor<4xi16>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.bitcast: cannot reinterpret i8 as i1
func.func @bitcast_bool(%x: tensor<4xi8>) {
  %0 = lazy.bitcast %x : tensor<4xi8> to tensor<4xi1>
  func.return
}

// -----

// reduce: known kind, axes in range, sorted and unique, no bools, size-1 dims kept

// CHECK: Operation does not verify: lazy.reduce: cannot reduce bool elements (cast first)
func.func @reduce_bool(%x: tensor<4xi1>) {
  %0 = lazy.reduce add %x [0] : tensor<4xi1> -> tensor<1xi1>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.reduce: axis 2 out of range for rank 2 operand
func.func @reduce_axis_range(%x: tensor<4x8xf32>) {
  %0 = lazy.reduce add %x [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.reduce: axis -1 out of range for rank 2 operand
func.func @reduce_axis_negative(%x: tensor<4x8xf32>) {
  %0 = lazy.reduce max %x [-1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.reduce: axes [1, 0] must be sorted and unique
func.func @reduce_unsorted(%x: tensor<4x8xf32>) {
  %0 = lazy.reduce add %x [1, 0] : tensor<4x8xf32> -> tensor<1x1xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.reduce: axes [1, 1] must be sorted and unique
func.func @reduce_duplicate(%x: tensor<4x8xf32>) {
  %0 = lazy.reduce add %x [1, 1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.reduce: result type must be tensor<4x1xf32>, got tensor<4xf32>
func.func @reduce_dropped_dim(%x: tensor<4x8xf32>) {
  %0 = lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.reduce: result type must be tensor<1x8xf32>, got tensor<1x8xf64>
func.func @reduce_result_element(%x: tensor<4x8xf32>) {
  %0 = lazy.reduce mul %x [0] : tensor<4x8xf32> -> tensor<1x8xf64>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.reduce: unknown kind 'min' (expected one of add, max, mul)
func.func @reduce_kind(%x: tensor<4x8xf32>) {
  %0 = lazy.reduce min %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// movement ops: the result shape follows from the operand and the arguments

// CHECK: Operation does not verify: lazy.reshape: cannot reshape (4, 8) (32 elements) to (5, 6)
func.func @reshape_count(%x: tensor<4x8xf32>) {
  %0 = lazy.reshape %x : tensor<4x8xf32> -> tensor<5x6xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.reshape: element type changes from f32 to f16
func.func @reshape_element(%x: tensor<4x8xf32>) {
  %0 = lazy.reshape %x : tensor<4x8xf32> -> tensor<32xf16>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.permute: permute order (0, 0) is not a permutation of 2 dims
func.func @permute_repeat(%x: tensor<4x8xf32>) {
  %0 = lazy.permute %x [0, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.permute: permute order (1, 0) is not a permutation of 3 dims
func.func @permute_short(%x: tensor<2x3x4xf32>) {
  %0 = lazy.permute %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.permute: result shape must be [8, 4], got [4, 8]
func.func @permute_result(%x: tensor<4x8xf32>) {
  %0 = lazy.permute %x [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.expand: expand of (2, 8) to (4, 8): only size-1 dims can expand
func.func @expand_non1(%x: tensor<2x8xf32>) {
  %0 = lazy.expand %x : tensor<2x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.expand: expand to (2, 4, 8) must keep rank 2
func.func @expand_rank(%x: tensor<1x8xf32>) {
  %0 = lazy.expand %x : tensor<1x8xf32> -> tensor<2x4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.shrink: shrink range (2, 9) out of bounds for dim of size 8
func.func @shrink_out_of_bounds(%x: tensor<4x8xf32>) {
  %0 = lazy.shrink %x [[0, 4], [2, 9]] : tensor<4x8xf32> -> tensor<4x7xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.shrink: shrink range (3, 1) out of bounds for dim of size 4
func.func @shrink_reversed(%x: tensor<4xf32>) {
  %0 = lazy.shrink %x [[3, 1]] : tensor<4xf32> -> tensor<0xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.shrink: shrink needs 2 (begin, end) pairs, got 1
func.func @shrink_count(%x: tensor<4x8xf32>) {
  %0 = lazy.shrink %x [[0, 2]] : tensor<4x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.pad: pad amounts must be non-negative, got ((-1, 0),)
func.func @pad_negative(%x: tensor<4xf32>) {
  %0 = lazy.pad %x [[-1, 0]] : tensor<4xf32> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.pad: result shape must be [7], got [6]
func.func @pad_result(%x: tensor<4xf32>) {
  %0 = lazy.pad %x [[1, 2]] : tensor<4xf32> -> tensor<6xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.pad: pad value must have the element type
func.func @pad_value_type(%x: tensor<4xf32>) {
  %0 = "lazy.pad"(%x) <{padding = array<i64: 1, 0>, value = 1 : i32}> : (tensor<4xf32>) -> tensor<5xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.stride: stride steps must be positive, got (1, 0)
func.func @stride_zero(%x: tensor<4x8xf32>) {
  %0 = lazy.stride %x [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.stride: stride steps must be positive, got (-1,)
func.func @stride_negative(%x: tensor<4xf32>) {
  %0 = lazy.stride %x [-1] : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.flip: flip axis 2 out of range for 2 dims
func.func @flip_axis(%x: tensor<4x8xf32>) {
  %0 = lazy.flip %x [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// a view may only read positions of its operand

// CHECK: Operation does not verify: lazy.view: view reads positions [1, 32] of a tensor of 32 elements
func.func @view_past_end(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[4, 8] strides [8, 1] offset 1> : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.view: view reads positions [-1, 30] of a tensor of 32 elements
func.func @view_before_start(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[4, 8] strides [-8, -1] offset 30> : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// the mask guards a pad: only the unmasked box must be inside

// CHECK: Operation does not verify: lazy.view: view reads positions [-1, 3] of a tensor of 4 elements
func.func @view_mask_outside(%x: tensor<4xf32>) {
  %0 = lazy.view %x <[6] strides [1] offset -1 mask [[0, 5]]> : tensor<4xf32> -> tensor<6xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.view: result shape must be [8, 4], got [4, 8]
func.func @view_result(%x: tensor<4x8xf32>) {
  %0 = lazy.view %x <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// meta ops

// CHECK: Operation does not verify: lazy.copy: unknown device 'tpu' (known: cpu, cuda, cuda_sim, cuda_emu)
func.func @copy_device(%x: tensor<4xf32>) {
  %0 = lazy.copy %x to "tpu" : tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.copy: result type must equal the operand type
func.func @copy_type(%x: tensor<4xf32>) {
  %0 = "lazy.copy"(%x) <{device = "cpu"}> : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.contiguous: result type must equal the operand type
func.func @contiguous_type(%x: tensor<4xf32>) {
  %0 = "lazy.contiguous"(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.assign: value type tensor<4xf16> differs from target type tensor<4xf32>
func.func @assign_type(%b: tensor<4xf32>, %v: tensor<4xf16>) {
  %0 = "lazy.assign"(%b, %v) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// const: the value has the element type (generic form: verifier; custom form: parser)

// CHECK: Operation does not verify: lazy.const: value 1 : i32 does not have the element type f32
func.func @const_type() {
  %0 = "lazy.const"() <{value = 1 : i32}> : () -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.const: value "one" does not have the element type f32
func.func @const_not_a_number() {
  %0 = "lazy.const"() <{value = "one"}> : () -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: lazy.const: result must have a static shape, got tensor<?xf32>
func.func @const_dynamic() {
  %0 = "lazy.const"() <{value = 1.0 : f32}> : () -> tensor<?xf32>
  func.return
}

// -----

// CHECK: constant 1.5 is not an integer of type i32
func.func @const_fraction_for_int() {
  %0 = lazy.const 1.5 : tensor<4xi32>
  func.return
}

// -----

// CHECK: constant 300 does not fit in i8
func.func @const_too_big() {
  %0 = lazy.const 300 : tensor<4xi8>
  func.return
}

// -----

// CHECK: constant -inf is not an integer of type i32
func.func @const_inf_for_int() {
  %0 = lazy.const -inf : tensor<4xi32>
  func.return
}

// -----

// Regressions: each case below was once accepted or ended in a Python
// traceback instead of a diagnostic.

// lazy.assign does not check its result type.
// CHECK: Operation does not verify: lazy.assign: {{.*}}tensor<8xf32>
func.func @assign_result(%b: tensor<4xf32>, %v: tensor<4xf32>) {
  %0 = "lazy.assign"(%b, %v) : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  func.return
}

// -----

// A fractional pad value for an integer tensor is truncated to 1 (lazy.const
// rejects the same literal).
// CHECK: constant 1.5 is not an integer of type i8
func.func @pad_fraction_for_int(%x: tensor<4xi8>) {
  %0 = lazy.pad %x [[1, 0]] value 1.5 : tensor<4xi8> -> tensor<5xi8>
  func.return
}

// -----

// lazy.const's parse errors point at the op after it, not at the constant.
// CHECK: invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK-NEXT: %0 = lazy.const 2.5 : tensor<4xi16>
func.func @const_error_location() {
  %0 = lazy.const 2.5 : tensor<4xi16>
  func.return
}

// -----

// bitcast of an index tensor: AssertionError in _bitwidth.
// CHECK: Operation does not verify: lazy.bitcast: {{.*}}index
func.func @bitcast_index(%x: tensor<4xindex>) {
  %0 = lazy.bitcast %x : tensor<4xindex> to tensor<4xi64>
  func.return
}

// -----

// a non-numeric pad value: AttributeError ('StringAttr' has no 'type').
// CHECK: Operation does not verify: lazy.pad: pad value must have the element type
func.func @pad_value_string(%x: tensor<4xf32>) {
  %0 = "lazy.pad"(%x) <{padding = array<i64: 1, 0>, value = "x"}> : (tensor<4xf32>) -> tensor<5xf32>
  func.return
}

// -----

// an odd number of shrink bounds: IndexError in array_pairs.
// CHECK: Operation does not verify: lazy.shrink: {{.*}}
func.func @shrink_odd_bounds(%x: tensor<4xf32>) {
  %0 = "lazy.shrink"(%x) <{bounds = array<i64: 0, 4, 2>}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// a pad value that does not fit: ValueError escapes the parser (no location;
// it ends the run even with --parsing-diagnostics).
// CHECK: invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}
// CHECK: constant 300 does not fit in i8
func.func @pad_value_too_big(%x: tensor<4xi8>) {
  %0 = lazy.pad %x [[1, 0]] value 300 : tensor<4xi8> -> tensor<5xi8>
  func.return
}

// -----

// an infinite pad value for an integer tensor: OverflowError in scalar_attr.
// CHECK: constant inf is not an integer of type i32
func.func @pad_inf_for_int(%x: tensor<4xi32>) {
  %0 = lazy.pad %x [[1, 0]] value inf : tensor<4xi32> -> tensor<5xi32>
  func.return
}
