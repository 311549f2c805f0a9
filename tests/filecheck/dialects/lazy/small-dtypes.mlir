// The 8/16-bit element types in the lazy dialect (f16, bf16, ui8, i8, i16)
// and the shift ops: custom syntax round-trips, constants hold values of
// their type (16-bit floats rounded to nearest even, ui8 in 0..255), and the
// verifiers name the op and the type they refuse.
//
// RUN: mlfuse-opt %s --split-input-file | filecheck %s
// RUN: mlfuse-opt %s --split-input-file --print-op-generic | mlfuse-opt --split-input-file | filecheck %s
// RUN: mlfuse-opt %S/Inputs/small-dtypes-invalid.mlir --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s --check-prefix=INVALID

// CHECK-LABEL: func.func @types
// CHECK:         %0 = lazy.const 0.0999755859375 : tensor<4xf16>
// CHECK-NEXT:    %1 = lazy.const 0.10009765625 : tensor<4xbf16>
// CHECK-NEXT:    %2 = lazy.const 255 : tensor<4xui8>
// CHECK-NEXT:    %3 = lazy.const -128 : tensor<4xi8>
// CHECK-NEXT:    %4 = lazy.add %h, %0 : tensor<4xf16>
// CHECK-NEXT:    %5 = lazy.exp %b : tensor<4xbf16>
// CHECK-NEXT:    %6 = lazy.shl %u, %2 : tensor<4xui8>
// CHECK-NEXT:    %7 = lazy.shr %i, %3 : tensor<4xi8>
// CHECK-NEXT:    %8 = lazy.cast %u : tensor<4xui8> to tensor<4xf16>
// CHECK-NEXT:    %9 = lazy.bitcast %b : tensor<4xbf16> to tensor<4xi16>
// CHECK-NEXT:    %10 = lazy.reduce max %u [0] : tensor<4xui8> -> tensor<1xui8>
func.func @types(%h: tensor<4xf16>, %b: tensor<4xbf16>, %u: tensor<4xui8>, %i: tensor<4xi8>) {
  %0 = lazy.const 0.1 : tensor<4xf16>
  %1 = lazy.const 0.1 : tensor<4xbf16>
  %2 = lazy.const 255 : tensor<4xui8>
  %3 = lazy.const -128 : tensor<4xi8>
  %4 = lazy.add %h, %0 : tensor<4xf16>
  %5 = lazy.exp %b : tensor<4xbf16>
  %6 = lazy.shl %u, %2 : tensor<4xui8>
  %7 = lazy.shr %i, %3 : tensor<4xi8>
  %8 = lazy.cast %u : tensor<4xui8> to tensor<4xf16>
  %9 = lazy.bitcast %b : tensor<4xbf16> to tensor<4xi16>
  %10 = lazy.reduce max %u [0] : tensor<4xui8> -> tensor<1xui8>
  func.return
}

// INVALID: lazy.shl needs integer elements, got f32
// INVALID: lazy.shr needs integer elements, got i1
// INVALID: constant 256 does not fit in ui8
// INVALID: constant -1 does not fit in ui8
// INVALID: lazy.mul: lhs has element type si8; lazy tensors hold i1, ui8, i8, i16, i32, i64, ui16, ui32, ui64, f16, bf16, f32, f64
