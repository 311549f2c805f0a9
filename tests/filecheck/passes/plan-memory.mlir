// RUN: mlfuse-opt %s -p plan-memory | filecheck %s
// RUN: mlfuse-opt %s -p 'plan-memory{reuse=false}' | filecheck %s --check-prefix=NOREUSE

// plan-memory: a kernel.free after the last use of every allocated buffer that
// is not returned; an allocation takes over a dead buffer of the same type
// when that buffer's last use comes strictly before the new buffer's first
// launch; peak_bytes (live allocated bytes, arguments excluded) and reused (the
// number of allocations that took over a buffer) are recorded on the schedule.
// Kernel bodies are trivial; only their signatures matter here.

kernel.func @copy16 outs(%o: memref<16xf32>) ins(%i: memref<16xf32>) space [16] {
  %0 = kernel.load %i <[16] strides [1] offset 0> : memref<16xf32>
  kernel.store %o <[16] strides [1] offset 0>, %0 : memref<16xf32>
}
kernel.func @copy64 outs(%o: memref<64xf32>) ins(%i: memref<64xf32>) space [64] {
  %0 = kernel.load %i <[64] strides [1] offset 0> : memref<64xf32>
  kernel.store %o <[64] strides [1] offset 0>, %0 : memref<64xf32>
}
kernel.func @rowsum outs(%o: memref<16xf32>) ins(%i: memref<64xf32>) space [16, 4] {
  %0 = kernel.load %i <[16, 4] strides [4, 1] offset 0> : memref<64xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %o <[16, 4] strides [1, 0] offset 0>, %1 : memref<16xf32>
}
kernel.func @bcast outs(%o: memref<64xf32>) ins(%i: memref<16xf32>) space [16, 4] {
  %0 = kernel.load %i <[16, 4] strides [1, 0] offset 0> : memref<16xf32>
  kernel.store %o <[16, 4] strides [4, 1] offset 0>, %0 : memref<64xf32>
}
kernel.func @add16 outs(%o: memref<16xf32>) ins(%a: memref<16xf32>, %b: memref<16xf32>) space [16] {
  %0 = kernel.load %a <[16] strides [1] offset 0> : memref<16xf32>
  %1 = kernel.load %b <[16] strides [1] offset 0> : memref<16xf32>
  %2 = arith.addf %0, %1 : f32
  kernel.store %o <[16] strides [1] offset 0>, %2 : memref<16xf32>
}

// A chain a -> b -> c -> d of 16 x f32 (64 bytes each):
// * b may not take over a: the kernel writing b still reads a;
// * c takes over a (a's last read is b's launch, before c's);
// * d is returned: it gets its own buffer and is never freed;
// * the stale free in the input is dropped and frees are placed again;
// * the argument %x is never freed.
// Live bytes: a 64, b 128, (c = a), free b 64, d 128, free a 64: peak 128,
// one reuse.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%[[X:.*]]: memref<16xf32>) -> memref<16xf32> attributes {peak_bytes = 128 : i64, reused = 1 : i64}
// CHECK-NEXT:    %[[A:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @copy16 outs(%[[A]] : memref<16xf32>) ins(%[[X]] : memref<16xf32>)
// CHECK-NEXT:    %[[B:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @copy16 outs(%[[B]] : memref<16xf32>) ins(%[[A]] : memref<16xf32>)
// CHECK-NEXT:    kernel.launch @copy16 outs(%[[A]] : memref<16xf32>) ins(%[[B]] : memref<16xf32>)
// CHECK-NEXT:    kernel.free %[[B]] : memref<16xf32>
// CHECK-NEXT:    %[[D:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @copy16 outs(%[[D]] : memref<16xf32>) ins(%[[A]] : memref<16xf32>)
// CHECK-NEXT:    kernel.free %[[A]] : memref<16xf32>
// CHECK-NEXT:    func.return %[[D]] : memref<16xf32>
// CHECK-NOT:     kernel.free %[[D]]
// CHECK-NOT:     kernel.free %[[X]]
// Without reuse every allocation stays, each freed after its last use:
// a 64, b 128, free a 64, c 128, free b 64, d 128, free c 64: peak 128.
// NOREUSE-LABEL: func.func @chain
// NOREUSE-SAME:    attributes {peak_bytes = 128 : i64, reused = 0 : i64}
// NOREUSE-NEXT:    %[[A:.*]] = kernel.alloc
// NOREUSE-NEXT:    kernel.launch
// NOREUSE-NEXT:    %[[B:.*]] = kernel.alloc
// NOREUSE-NEXT:    kernel.launch @copy16 outs(%[[B]] : memref<16xf32>) ins(%[[A]] : memref<16xf32>)
// NOREUSE-NEXT:    kernel.free %[[A]]
// NOREUSE-NEXT:    %[[C:.*]] = kernel.alloc
// NOREUSE-NEXT:    kernel.launch @copy16 outs(%[[C]] : memref<16xf32>) ins(%[[B]] : memref<16xf32>)
// NOREUSE-NEXT:    kernel.free %[[B]]
// NOREUSE-NEXT:    %[[D:.*]] = kernel.alloc
// NOREUSE-NEXT:    kernel.launch @copy16 outs(%[[D]] : memref<16xf32>) ins(%[[C]] : memref<16xf32>)
// NOREUSE-NEXT:    kernel.free %[[C]]
// NOREUSE-NEXT:    func.return %[[D]]
func.func @chain(%x: memref<16xf32>) -> memref<16xf32> {
  %a = kernel.alloc : memref<16xf32>
  kernel.free %a : memref<16xf32>
  kernel.launch @copy16 outs(%a : memref<16xf32>) ins(%x : memref<16xf32>)
  %b = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%b : memref<16xf32>) ins(%a : memref<16xf32>)
  %c = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%c : memref<16xf32>) ins(%b : memref<16xf32>)
  %d = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%d : memref<16xf32>) ins(%c : memref<16xf32>)
  func.return %d : memref<16xf32>
}

// Mixed sizes (memref<64xf32> = 256 bytes, memref<16xf32> = 64 bytes):
// * c (64 x f32) takes over a (dead after rowsum): no second 256-byte alloc;
// * d (16 x f32) cannot take over b, which add16 still reads later, nor a,
//   which has another type;
// * e is returned.
// Live bytes: a 256, b 320, (c = a), d 384, free a 128, e 192, free b and d
// 64: peak 384, one reuse.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME:    attributes {peak_bytes = 384 : i64, reused = 1 : i64}
// CHECK-NEXT:    %[[A:.*]] = kernel.alloc : memref<64xf32>
// CHECK-NEXT:    kernel.launch @copy64 outs(%[[A]] : memref<64xf32>)
// CHECK-NEXT:    %[[B:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @rowsum outs(%[[B]] : memref<16xf32>) ins(%[[A]] : memref<64xf32>)
// CHECK-NEXT:    kernel.launch @bcast outs(%[[A]] : memref<64xf32>) ins(%[[B]] : memref<16xf32>)
// CHECK-NEXT:    %[[D:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @rowsum outs(%[[D]] : memref<16xf32>) ins(%[[A]] : memref<64xf32>)
// CHECK-NEXT:    kernel.free %[[A]] : memref<64xf32>
// CHECK-NEXT:    %[[E:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @add16 outs(%[[E]] : memref<16xf32>) ins(%[[B]] : memref<16xf32>, %[[D]] : memref<16xf32>)
// CHECK-DAG:     kernel.free %[[B]] : memref<16xf32>
// CHECK-DAG:     kernel.free %[[D]] : memref<16xf32>
// CHECK:         func.return %[[E]] : memref<16xf32>
// Without reuse the 256-byte c is a new buffer, allocated after a is freed:
// a 256, b 320, free a 64, c 320, d 384, free c 128, e 192: peak 384.
// NOREUSE-LABEL: func.func @mixed
// NOREUSE-SAME:    attributes {peak_bytes = 384 : i64, reused = 0 : i64}
// NOREUSE-COUNT-2: kernel.alloc : memref<64xf32>
func.func @mixed(%x: memref<64xf32>) -> memref<16xf32> {
  %a = kernel.alloc : memref<64xf32>
  kernel.launch @copy64 outs(%a : memref<64xf32>) ins(%x : memref<64xf32>)
  %b = kernel.alloc : memref<16xf32>
  kernel.launch @rowsum outs(%b : memref<16xf32>) ins(%a : memref<64xf32>)
  %c = kernel.alloc : memref<64xf32>
  kernel.launch @bcast outs(%c : memref<64xf32>) ins(%b : memref<16xf32>)
  %d = kernel.alloc : memref<16xf32>
  kernel.launch @rowsum outs(%d : memref<16xf32>) ins(%c : memref<64xf32>)
  %e = kernel.alloc : memref<16xf32>
  kernel.launch @add16 outs(%e : memref<16xf32>) ins(%b : memref<16xf32>, %d : memref<16xf32>)
  func.return %e : memref<16xf32>
}

// Two dead candidates of the right type when e is allocated: a (last read
// by y's kernel) and b (last read by z's kernel, later); the most recently
// freed, b, is taken. y and z are returned, so they never take over a buffer.
// Live bytes: a 64, b 128, y 192, free a 128, z 192, (e = b), free b 128:
// peak 192, one reuse.
// CHECK-LABEL: func.func @most_recent
// CHECK-SAME:    attributes {peak_bytes = 192 : i64, reused = 1 : i64}
// CHECK-NEXT:    %[[A:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @copy16 outs(%[[A]] : memref<16xf32>) ins(%[[X:.*]] : memref<16xf32>)
// CHECK-NEXT:    %[[B:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @copy16 outs(%[[B]] : memref<16xf32>) ins(%[[X]] : memref<16xf32>)
// CHECK-NEXT:    %[[Y:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @copy16 outs(%[[Y]] : memref<16xf32>) ins(%[[A]] : memref<16xf32>)
// CHECK-NEXT:    kernel.free %[[A]] : memref<16xf32>
// CHECK-NEXT:    %[[Z:.*]] = kernel.alloc : memref<16xf32>
// CHECK-NEXT:    kernel.launch @add16 outs(%[[Z]] : memref<16xf32>) ins(%[[B]] : memref<16xf32>, %[[Y]] : memref<16xf32>)
// CHECK-NEXT:    kernel.launch @copy16 outs(%[[B]] : memref<16xf32>) ins(%[[X]] : memref<16xf32>)
// CHECK-NEXT:    kernel.free %[[B]] : memref<16xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[Z]] :
func.func @most_recent(%x: memref<16xf32>) -> (memref<16xf32>, memref<16xf32>) {
  %a = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%a : memref<16xf32>) ins(%x : memref<16xf32>)
  %b = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%b : memref<16xf32>) ins(%x : memref<16xf32>)
  %y = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%y : memref<16xf32>) ins(%a : memref<16xf32>)
  %z = kernel.alloc : memref<16xf32>
  kernel.launch @add16 outs(%z : memref<16xf32>) ins(%b : memref<16xf32>, %y : memref<16xf32>)
  %e = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%e : memref<16xf32>) ins(%x : memref<16xf32>)
  func.return %y, %z : memref<16xf32>, memref<16xf32>
}

// Returned buffers live to the end, even when a later kernel reads them:
// nothing is freed and nothing reused (a 64, b 128: peak 128).
// CHECK-LABEL: func.func @returned
// CHECK-SAME:    attributes {peak_bytes = 128 : i64, reused = 0 : i64}
// CHECK-NOT:     kernel.free
// CHECK:         func.return
func.func @returned(%x: memref<16xf32>) -> (memref<16xf32>, memref<16xf32>) {
  %a = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%a : memref<16xf32>) ins(%x : memref<16xf32>)
  %b = kernel.alloc : memref<16xf32>
  kernel.launch @copy16 outs(%b : memref<16xf32>) ins(%a : memref<16xf32>)
  func.return %a, %b : memref<16xf32>, memref<16xf32>
}
