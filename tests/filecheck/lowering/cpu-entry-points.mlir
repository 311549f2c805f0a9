// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p cpu-entry-points | filecheck %s --enable-var-scope
// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p cpu-entry-points,cpu-entry-points | filecheck %s --enable-var-scope
// RUN: mlfuse-opt %s --split-input-file --verify-diagnostics -p cpu-entry-points -t llvm | filecheck %s --check-prefix=IR

// cpu-entry-points: every lowered kernel @k(ptr noalias..., i64 lo, i64 hi)
// becomes @k.body (internal, noinline, still noalias), and a new entry point
// @k(ptr %buffers, i64 %lo, i64 %hi) loads buffer i from %buffers[i] and calls
// it. The entry point takes over the kernel's attributes and records
// mlfuse.num_buffers. Running the pass twice changes nothing (second RUN).

// CHECK-LABEL: llvm.func internal @k.body(%out: !llvm.ptr {llvm.noalias}, %x: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {no_inline} {
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }
// CHECK-NEXT:  llvm.func @k(%buffers: !llvm.ptr, [[LO:%.*]]: i64, [[HI:%.*]]: i64) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64, mlfuse.work = 32 : i64, mlfuse.num_buffers = 2 : i64} {
// CHECK-NEXT:    [[S0:%.*]] = llvm.getelementptr inbounds %buffers[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    [[B0:%.*]] = llvm.load [[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    [[S1:%.*]] = llvm.getelementptr inbounds %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    [[B1:%.*]] = llvm.load [[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @k.body([[B0]], [[B1]], [[LO]], [[HI]]) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }

// The LLVM IR (prefix IR): the body is internal and noinline and keeps noalias; the entry
// point is external and reads pointer-sized slots.

// IR-LABEL: define internal void @"k.body"(ptr noalias {{%"[^"]+"}}, ptr noalias {{%"[^"]+"}}, i64 {{%"[^"]+"}}, i64 {{%"[^"]+"}}) noinline
// IR-LABEL: define void @"k"(
// IR-SAME:    ptr [[BUFS:%"[^"]+"]], i64 {{%"[^"]+"}}, i64 {{%"[^"]+"}})
// IR:         getelementptr inbounds ptr, ptr [[BUFS]], i32 0
// IR:         getelementptr inbounds ptr, ptr [[BUFS]], i32 1
// IR:         call ccc void @"k.body"(

llvm.func @k(%out: !llvm.ptr {llvm.noalias}, %x: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {mlfuse.kernel, mlfuse.parallel_extent = 4 : i64, mlfuse.work = 32 : i64} {
  llvm.return
}

// -----

// Several kernels each get their entry point; functions that are not
// kernels (helpers, the schedule) are left alone.

// CHECK-LABEL: llvm.func internal @a.body(
// CHECK:       llvm.func @a(%buffers: !llvm.ptr, {{%.*}}: i64, {{%.*}}: i64) attributes {mlfuse.kernel, mlfuse.num_buffers = 1 : i64} {
// CHECK:       llvm.func @helper(%p: !llvm.ptr, {{%.*}}: i64, {{%.*}}: i64) {
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.func internal @b.body(
// CHECK:       llvm.func @b({{%buffers[_0-9]*}}: !llvm.ptr, {{%.*}}: i64, {{%.*}}: i64) attributes {mlfuse.kernel, mlfuse.num_buffers = 3 : i64} {
// CHECK-COUNT-3: llvm.load
// CHECK-NEXT:    llvm.call @b.body(
// CHECK:       func.func @main
// CHECK-NOT:   .body.body

// IR-LABEL: define internal void @"a.body"
// IR-LABEL: define void @"a"(ptr
// IR-LABEL: define void @"helper"(ptr
// IR-LABEL: define internal void @"b.body"
// IR-LABEL: define void @"b"(ptr

llvm.func @a(%o: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {mlfuse.kernel} {
  llvm.return
}
llvm.func @helper(%p: !llvm.ptr, %lo: i64, %hi: i64) {
  llvm.return
}
llvm.func @b(%o: !llvm.ptr {llvm.noalias}, %x: !llvm.ptr {llvm.noalias}, %y: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {mlfuse.kernel} {
  llvm.return
}
func.func @main(%in0: memref<4xf32>) -> memref<4xf32> {
  func.return %in0 : memref<4xf32>
}

// -----

// Negative cases (printed by --verify-diagnostics, one per split).

// CHECK: cpu-entry-points: kernel @no_bounds must take buffer pointers, then i64 lo and hi (run convert-parallel-to-cpu and convert-loops-to-llvm first)

llvm.func @no_bounds(%o: !llvm.ptr {llvm.noalias}) attributes {mlfuse.kernel} {
  llvm.return
}

// -----

// CHECK: cpu-entry-points: kernel @scalar_arg must take buffer pointers, then i64 lo and hi (run convert-parallel-to-cpu and convert-loops-to-llvm first)

llvm.func @scalar_arg(%o: !llvm.ptr {llvm.noalias}, %s: f32, %lo: i64, %hi: i64) attributes {mlfuse.kernel} {
  llvm.return
}

// -----

// CHECK: cpu-entry-points: kernel @not_lowered is not in the llvm dialect yet (run convert-loops-to-llvm first)

func.func @not_lowered(%o: memref<4xf32>, %lo: index, %hi: index) attributes {mlfuse.kernel} {
  func.return
}

// -----

// CHECK: cpu-entry-points: @taken.body already exists

llvm.func @taken(%o: !llvm.ptr {llvm.noalias}, %lo: i64, %hi: i64) attributes {mlfuse.kernel} {
  llvm.return
}
llvm.func @taken.body() {
  llvm.return
}
