// RUN: mlfuse-opt %s --split-input-file -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory,legalize-float-types,expand-math,merge-sums,gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t ptx | filecheck %s

// float16 and bfloat16 kernels on the CUDA target, to PTX: 16-bit loads and
// stores; f16 through cvt (NVPTX may fuse an f32 op rounded to f16 into the
// f16 instruction itself: the same result), the row sum a block reduction
// of f32 partial sums (shuffles of 32-bit words), rounded once; bf16 widened
// and rounded with integer shifts, no bf16 instruction needed.

// CHECK-LABEL: .visible .entry k0(
// CHECK:         ld.global.nc.b16
// CHECK:         ld.global.nc.b16
// CHECK:         cvt.f32.f16
// CHECK:         shfl.sync.bfly.b32
// CHECK:         cvt.rn.f16.f32 [[S:%rs[0-9]+]], {{%r[0-9]+}};
// CHECK:         st.global.b16 [{{%rd[0-9]+}}], [[S]];
func.func @main(%a: tensor<4x8xf16>, %b: tensor<4x8xf16>) -> tensor<4x1xf16> {
  %s = lazy.add %a, %b : tensor<4x8xf16>
  %e = lazy.exp %s : tensor<4x8xf16>
  %r = lazy.reduce add %e [1] : tensor<4x8xf16> -> tensor<4x1xf16>
  func.return %r : tensor<4x1xf16>
}

// -----

// CHECK-LABEL: .visible .entry k0(
// CHECK-NOT:     bf16
// CHECK:         ld.global.nc.b16 [[X:%r[0-9]+]]
// CHECK-NEXT:    shl.b32 {{%r[0-9]+}}, [[X]], 16;
// CHECK:         shr.u32 {{%r[0-9]+}}, {{%r[0-9]+}}, 16;
// CHECK:         st.global.b16
// CHECK-NOT:     bf16
func.func @main(%a: tensor<64xbf16>, %b: tensor<64xbf16>) -> tensor<64xbf16> {
  %s = lazy.mul %a, %b : tensor<64xbf16>
  func.return %s : tensor<64xbf16>
}
