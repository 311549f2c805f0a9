// RUN: mlfuse-opt %s -p gpu-map-plan | filecheck %s --check-prefix=PLAN
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true}' | filecheck %s --check-prefix=LOOPS
// RUN: mlfuse-opt %s -p 'expand-math,merge-sums,gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t ptx | filecheck %s --check-prefix=PTX

// A softmax over rows of 4096 reads each row three times (a max, a sum of
// exponentials, the quotients): 512 threads of 4 consecutive elements, twice,
// held in registers (an unroll loop where a row sum has a serial one), so
// each element is loaded once and its exponential computed once.
// PLAN:       kernel.func @softmax
// PLAN-SAME:    plan [block 0, unroll 1:2, thread 1:512, unroll 1:4]
// LOOPS:      func.func @softmax(
// LOOPS-NOT:    scf.for
// LOOPS-COUNT-8: memref.load %x
// LOOPS-NOT:    memref.load
// LOOPS:        "gpu.all_reduce"(%{{.*}}) <{op = #gpu<all_reduce_op max>, uniform}>
// LOOPS-NOT:    memref.load
// LOOPS:        "gpu.all_reduce"(%{{.*}}) <{op = #gpu<all_reduce_op add>, uniform}>
// LOOPS-NOT:    memref.load
// LOOPS-COUNT-8: memref.store
// LOOPS-NOT:    memref.load
// LOOPS:        func.return
// PTX:        .visible .entry softmax(
// PTX:        .maxntid 512
// PTX-COUNT-2: ld.global.nc.v4.b32
// PTX-NOT:    ld.global
// PTX-COUNT-2: st.global.v4.b32
// PTX-NOT:    ld.global
// PTX:        ret;
kernel.func @softmax outs(%out: memref<262144xf32>) ins(%x: memref<262144xf32>) space [64, 4096]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[64, 4096] strides [4096, 1] offset 0> : memref<262144xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  %3 = math.exp %2 : f32
  %4 = kernel.reduce add %3 [1] : f32
  %5 = arith.divf %3, %4 : f32
  kernel.store %out <[64, 4096] strides [4096, 1] offset 0>, %5 : memref<262144xf32>
}

// One reduce and a store along the row (x - max(x)) also reads the row twice.
// PLAN:       kernel.func @shift
// PLAN-SAME:    plan [block 0, unroll 1:2, thread 1:512, unroll 1:4]
kernel.func @shift outs(%out: memref<262144xf32>) ins(%x: memref<262144xf32>) space [64, 4096]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[64, 4096] strides [4096, 1] offset 0> : memref<262144xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  kernel.store %out <[64, 4096] strides [4096, 1] offset 0>, %2 : memref<262144xf32>
}

// A row sum reads its row once: the steps stay a loop (fewer registers).
// PLAN:       kernel.func @rowsum
// PLAN-SAME:    plan [block 0, serial 1:2, thread 1:512, unroll 1:4]
kernel.func @rowsum outs(%out: memref<64xf32>) ins(%x: memref<262144xf32>) space [64, 4096]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[64, 4096] strides [4096, 1] offset 0> : memref<262144xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[64, 4096] strides [1, 0] offset 0>, %1 : memref<64xf32>
}

// A row of 16384 floats is 4 steps of 1024 threads (not 8 of 512): 16 floats
// a thread, still in registers; the block reduction combines 32 warps' slots.
// PLAN:       kernel.func @long
// PLAN-SAME:    plan [block 0, unroll 1:4, thread 1:1024, unroll 1:4]
// PTX:        .visible .entry long(
// PTX:        .maxntid 1024
// PTX-COUNT-4: ld.global.nc.v4.b32
// PTX-NOT:    ld.global
// PTX-COUNT-4: st.global.v4.b32
kernel.func @long outs(%out: memref<262144xf32>) ins(%x: memref<262144xf32>) space [16, 16384]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[16, 16384] strides [16384, 1] offset 0> : memref<262144xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  kernel.store %out <[16, 16384] strides [16384, 1] offset 0>, %2 : memref<262144xf32>
}

// Rows past 16 floats a thread at 1024 threads (32768 = 16 x 512 x 4), and
// rows of float64 past 8 a thread, are read again per reduce: a serial loop.
// PLAN:       kernel.func @longer
// PLAN-SAME:    plan [block 0, serial 1:16, thread 1:512, unroll 1:4]
kernel.func @longer outs(%out: memref<262144xf32>) ins(%x: memref<262144xf32>) space [8, 32768]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[8, 32768] strides [32768, 1] offset 0> : memref<262144xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  kernel.store %out <[8, 32768] strides [32768, 1] offset 0>, %2 : memref<262144xf32>
}
// PLAN:       kernel.func @wide
// PLAN-SAME:    plan [block 0, serial 1:8, thread 1:512, unroll 1:4]
kernel.func @wide outs(%out: memref<262144xf64>) ins(%x: memref<262144xf64>) space [16, 16384]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[16, 16384] strides [16384, 1] offset 0> : memref<262144xf64>
  %1 = kernel.reduce max %0 [1] : f64
  %2 = arith.subf %0, %1 : f64
  kernel.store %out <[16, 16384] strides [16384, 1] offset 0>, %2 : memref<262144xf64>
}

// float64 rows of 8192 fit at 1024 threads: 8 doubles a thread.
// PLAN:       kernel.func @wide8k
// PLAN-SAME:    plan [block 0, unroll 1:2, thread 1:1024, unroll 1:4]
kernel.func @wide8k outs(%out: memref<262144xf64>) ins(%x: memref<262144xf64>) space [32, 8192]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[32, 8192] strides [8192, 1] offset 0> : memref<262144xf64>
  %1 = kernel.reduce max %0 [1] : f64
  %2 = arith.subf %0, %1 : f64
  kernel.store %out <[32, 8192] strides [8192, 1] offset 0>, %2 : memref<262144xf64>
}

// A row that overhangs its last step (1000 = 250 x 4) keeps its loop.
// PLAN:       kernel.func @overhang
// PLAN-SAME:    plan [block 0, serial 1:1, thread 1:256, unroll 1:4]
kernel.func @overhang outs(%out: memref<8000xf32>) ins(%x: memref<8000xf32>) space [8, 1000]
    plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[8, 1000] strides [1000, 1] offset 0> : memref<8000xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  kernel.store %out <[8, 1000] strides [1000, 1] offset 0>, %2 : memref<8000xf32>
}

// A reduce over two dims, the row's dim held in registers: its unroll loop goes
// inside the other dim's serial loop (plans order serial before register loops),
// and rows of 6 take groups of 2 threads, several rows to a block.
// PLAN:       kernel.func @two_dims
// PLAN-SAME:    plan [block 0:1, serial 2, unroll 1:3, thread 0:8, thread 1:2]
// LOOPS:      func.func @two_dims(
// LOOPS:        scf.for
// LOOPS:        "gpu.all_reduce"(%{{.*}}) <{op = #gpu<all_reduce_op max>, uniform}>
kernel.func @two_dims outs(%out: memref<240xf32>) ins(%x: memref<240xf32>) space [8, 6, 5]
    plan [parallel 0, serial 1, serial 2] {
  %0 = kernel.load %x <[8, 6, 5] strides [30, 1, 6] offset 0> : memref<240xf32>
  %1 = kernel.reduce max %0 [1, 2] : f32
  %2 = arith.subf %0, %1 : f32
  %3 = math.exp %2 : f32
  %4 = kernel.reduce add %3 [1, 2] : f32
  %5 = arith.divf %3, %4 : f32
  kernel.store %out <[8, 6, 5] strides [30, 1, 6] offset 0>, %5 : memref<240xf32>
}
