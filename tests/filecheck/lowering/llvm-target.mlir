// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p convert-kernel-to-loops,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm,cpu-entry-points -t llvm | filecheck %s --enable-var-scope

// The `-t llvm` target: LLVM IR text of the module's llvm.func ops (through
// xDSL's llvmlite translation). The triple is the host's: checked to be
// there, not for its value.

// An elementwise kernel as the front end outlines it, with its schedule:
// only the kernel is translated, with the host's triple and data layout. Its
// body is internal and noinline, with noalias pointer arguments then the i64
// chunk bounds, and `getelementptr inbounds float` addressing (no
// ptrtoint/inttoptr). The entry point @k0 takes the array of buffer pointers
// and the bounds, loads the three pointers and calls the body.

// CHECK:       ; ModuleID = ""
// CHECK-NEXT:  target triple = "{{.+}}"
// CHECK-NEXT:  target datalayout = "{{.+}}"
// CHECK-NOT:   main
// CHECK-LABEL: define internal void @"k0.body"(
// CHECK-SAME:    ptr noalias [[OUT:%"[^"]+"]], ptr noalias [[A:%"[^"]+"]], ptr noalias [[B:%"[^"]+"]], i64 [[LO:%"[^"]+"]], i64 [[HI:%"[^"]+"]]) noinline
// CHECK-NOT:     {{ptrtoint|inttoptr}}
// CHECK:         [[P:%"[^"]+"]] = phi i64 {{\[}}[[LO]], {{.*}}]
// CHECK-NEXT:    [[MORE:%"[^"]+"]] = icmp slt i64 [[P]], [[HI]]
// CHECK-NOT:     {{ptrtoint|inttoptr}}
// CHECK:         [[OFF:%"[^"]+"]] = add i64
// CHECK-NEXT:    [[PA:%"[^"]+"]] = getelementptr inbounds float, ptr [[A]], i64 [[OFF]]
// CHECK-NEXT:    [[VA:%"[^"]+"]] = load float, ptr [[PA]]
// CHECK:         [[PB:%"[^"]+"]] = getelementptr inbounds float, ptr [[B]], i64
// CHECK-NEXT:    [[VB:%"[^"]+"]] = load float, ptr [[PB]]
// CHECK-NEXT:    [[S:%"[^"]+"]] = fadd float [[VA]], [[VB]]
// CHECK:         [[PO:%"[^"]+"]] = getelementptr inbounds float, ptr [[OUT]], i64
// CHECK-NEXT:    store float [[S]], ptr [[PO]]
// CHECK-NOT:     {{ptrtoint|inttoptr}}
// CHECK:         ret void
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  define void @"k0"(ptr [[BUFS:%"[^"]+"]], i64 [[ELO:%"[^"]+"]], i64 [[EHI:%"[^"]+"]])
// CHECK:         [[S0:%"[^"]+"]] = getelementptr inbounds ptr, ptr [[BUFS]], i32 0
// CHECK-NEXT:    [[P0:%"[^"]+"]] = load ptr, ptr [[S0]]
// CHECK-NEXT:    [[S1:%"[^"]+"]] = getelementptr inbounds ptr, ptr [[BUFS]], i32 1
// CHECK-NEXT:    [[P1:%"[^"]+"]] = load ptr, ptr [[S1]]
// CHECK-NEXT:    [[S2:%"[^"]+"]] = getelementptr inbounds ptr, ptr [[BUFS]], i32 2
// CHECK-NEXT:    [[P2:%"[^"]+"]] = load ptr, ptr [[S2]]
// CHECK-NEXT:    call ccc void @"k0.body"(ptr [[P0]], ptr [[P1]], ptr [[P2]], i64 [[ELO]], i64 [[EHI]])
// CHECK-NEXT:    ret void
// CHECK-NEXT:  }
// CHECK-NOT:   main

kernel.func @k0 outs(%0: memref<32xf32>) ins(%1: memref<32xf32>, %2: memref<32xf32>) space [4, 8] attributes {origin = ["add"], ops = ["add"], reasons = ["output"]} {
  %3 = kernel.load %1 <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %4 = kernel.load %2 <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %5 = arith.addf %3, %4 : f32
  kernel.store %0 <[4, 8] strides [8, 1] offset 0>, %5 : memref<32xf32>
}
func.func @main(%in0: memref<32xf32>, %in1: memref<32xf32>) -> memref<32xf32> attributes {peak_bytes = 128 : i64, reused = 0 : i64} {
  %0 = kernel.alloc : memref<32xf32>
  kernel.launch @k0 outs(%0 : memref<32xf32>) ins(%in0 : memref<32xf32>, %in1 : memref<32xf32>)
  func.return %0 : memref<32xf32>
}

// -----

// Two kernels in one module; intrinsics are declared once; the reduction
// starts from -inf / 0.0 and keeps its fast-math flag.

// CHECK:       target triple = "{{.+}}"
// CHECK-LABEL: define internal void @"rowmax.body"(
// CHECK-SAME:    ptr noalias {{%"[^"]+"}}, ptr noalias [[X:%"[^"]+"]], i64 {{%"[^"]+"}}, i64 {{%"[^"]+"}})
// CHECK:         [[ACC:%"[^"]+"]] = phi float [0xfff0000000000000, {{.*}}], {{\[}}[[NEW:%"[^"]+"]], {{.*}}]
// CHECK:         [[PX:%"[^"]+"]] = getelementptr inbounds float, ptr [[X]], i64
// CHECK-NEXT:    [[V:%"[^"]+"]] = load float, ptr [[PX]]
// CHECK-NEXT:    [[NEW]] = call float @"llvm.maximum.f32"(float [[ACC]], float [[V]])
// CHECK-LABEL: define void @"rowmax"(ptr
// CHECK-LABEL: define internal void @"rowsum.body"(
// CHECK-SAME:    ptr noalias {{%"[^"]+"}}, ptr noalias [[X:%"[^"]+"]], i64 {{%"[^"]+"}}, i64 {{%"[^"]+"}})
// CHECK:         [[ACC:%"[^"]+"]] = phi double [{{ *}}0x0, {{.*}}], {{\[}}[[NEW:%"[^"]+"]], {{.*}}]
// CHECK:         [[PX:%"[^"]+"]] = getelementptr inbounds double, ptr [[X]], i64
// CHECK-NEXT:    [[V:%"[^"]+"]] = load double, ptr [[PX]]
// CHECK-NEXT:    [[NEW]] = fadd {{(reassoc contract|contract reassoc)}} double [[ACC]], [[V]]
// CHECK-LABEL: define void @"rowsum"(ptr
// CHECK:       declare float @"llvm.maximum.f32"(float {{%"[^"]+"}}, float {{%"[^"]+"}})
// CHECK-NOT:   declare

kernel.func @rowmax outs(%out: memref<4xf32>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.reduce max %0 [1] : f32
  kernel.store %out <[4, 8] strides [1, 0] offset 0>, %1 : memref<4xf32>
}
kernel.func @rowsum outs(%out: memref<4xf64>) ins(%x: memref<32xf64>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf64>
  %1 = kernel.reduce add %0 [1] : f64
  kernel.store %out <[4, 8] strides [1, 0] offset 0>, %1 : memref<4xf64>
}

// -----

// Saturating float -> int, bool -> float as a select, bool stores as i1. The
// stores of a loop nest follow all of its values (a kernel that also reads a
// buffer it writes reads it first).

// CHECK-LABEL: define internal void @"casts.body"(
// CHECK-SAME:    ptr noalias [[O1:%"[^"]+"]], ptr noalias [[O2:%"[^"]+"]], ptr noalias [[O3:%"[^"]+"]], ptr noalias [[X:%"[^"]+"]], i64 {{%"[^"]+"}}, i64 {{%"[^"]+"}})
// CHECK:         [[V:%"[^"]+"]] = load float, ptr
// CHECK-NEXT:    [[LT:%"[^"]+"]] = fcmp olt float [[V]], [[V]]
// CHECK-NEXT:    [[F:%"[^"]+"]] = select i1 [[LT]], float 0x3ff0000000000000, float 0x0
// CHECK-NEXT:    [[I:%"[^"]+"]] = call i32 @"llvm.fptosi.sat.i32.f32"(float [[V]])
// CHECK:         store float [[F]], ptr
// CHECK:         store i32 [[I]], ptr
// CHECK:         [[PB:%"[^"]+"]] = getelementptr inbounds i1, ptr [[O3]], i64
// CHECK-NEXT:    store i1 [[LT]], ptr [[PB]]
// CHECK:       declare i32 @"llvm.fptosi.sat.i32.f32"(float {{%"[^"]+"}})

kernel.func @casts outs(%o1: memref<32xf32>, %o2: memref<32xi32>, %o3: memref<32xi1>) ins(%x: memref<32xf32>) space [4, 8] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = arith.cmpf olt, %0, %0 : f32
  %2 = arith.uitofp %1 : i1 to f32
  kernel.store %o1 <[4, 8] strides [8, 1] offset 0>, %2 : memref<32xf32>
  %3 = arith.fptosi %0 : f32 to i32
  kernel.store %o2 <[4, 8] strides [8, 1] offset 0>, %3 : memref<32xi32>
  kernel.store %o3 <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xi1>
}

// -----

// Nothing lowered to llvm.func: a diagnostic (via --verify-diagnostics).

// CHECK: no llvm.func to translate; lower the kernels first (e.g. -p 'legalize-float-types,expand-math,merge-sums,cpu-optimize-plan,convert-kernel-to-loops,expand-large-sincos,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm,cpu-entry-points')

func.func @nothing_lowered(%in0: memref<4xf32>) -> memref<4xf32> {
  func.return %in0 : memref<4xf32>
}
