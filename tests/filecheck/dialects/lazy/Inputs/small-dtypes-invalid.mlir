// Invalid uses of the 8/16-bit element types and the shift ops
// (tests/filecheck/dialects/lazy/small-dtypes.mlir checks the messages).

func.func @shl_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{lazy.shl needs integer elements, got f32}}
  %0 = lazy.shl %x, %x : tensor<4xf32>
  func.return
}

// -----

func.func @shr_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{lazy.shr needs integer elements, got i1}}
  %0 = lazy.shr %x, %x : tensor<4xi1>
  func.return
}

// -----

func.func @ui8_too_big() {
  // expected-error @+1 {{constant 256 does not fit in ui8}}
  %0 = lazy.const 256 : tensor<4xui8>
  func.return
}

// -----

func.func @ui8_negative() {
  // expected-error @+1 {{constant -1 does not fit in ui8}}
  %0 = lazy.const -1 : tensor<4xui8>
  func.return
}

// -----

func.func @signed_type(%x: tensor<4xsi8>) {
  // expected-error @+1 {{lazy.mul: lhs has element type si8; lazy tensors hold i1, ui8, i8, i16, i32, i64, ui16, ui32, ui64, f16, bf16, f32, f64}}
  %0 = lazy.mul %x, %x : tensor<4xsi8>
  func.return
}
