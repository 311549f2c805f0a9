// RUN: mlfuse-opt %s -p 'cpu-optimize-plan{vector-bytes=32 registers=16}' | filecheck %s --check-prefix=CPU
// RUN: mlfuse-opt %s -p gpu-map-plan,'convert-kernel-to-loops{grid=true}' | filecheck %s --check-prefix=GPU

// Plans for kernels with a scan. Plan rewrites never vectorize, unroll or
// parallelize the scanned dim (it keeps its one serial loop, which carries the
// running value); on a GPU grid the scan runs inside each thread.

// The CPU keeps a row scan scalar (its rows are the only
// contiguous dim) and vectorizes a column scan across columns; the GPU maps
// the other dim onto threads

// CPU-LABEL: kernel.func @row_default
// CPU-SAME:    plan [parallel 0, serial 1] {
// CPU-LABEL: kernel.func @column_default
// CPU-SAME:    plan [parallel 1:4, serial 0, vector 1:8] {

// GPU-LABEL: func.func @row_default
// GPU-SAME:    mlfuse.grid = 1 : i64, mlfuse.block = 16 : i64
// GPU:           %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// GPU-NEXT:      %{{.*}} = scf.for %{{.*}} iter_args(%{{.*}}) -> (f32) {
// GPU:             arith.addf
// GPU:             memref.store
// GPU:             scf.yield
kernel.func @row_default outs(%o: memref<512xf32>) ins(%x: memref<512xf32>) space [16, 32] {
  %0 = kernel.load %x <[16, 32] strides [32, 1] offset 0> : memref<512xf32>
  %1 = kernel.scan add %0 dim 1 : f32
  kernel.store %o <[16, 32] strides [32, 1] offset 0>, %1 : memref<512xf32>
}
kernel.func @column_default outs(%o: memref<512xf32>) ins(%x: memref<512xf32>) space [16, 32] {
  %0 = kernel.load %x <[16, 32] strides [32, 1] offset 0> : memref<512xf32>
  %1 = kernel.scan add %0 dim 0 : f32
  kernel.store %o <[16, 32] strides [32, 1] offset 0>, %1 : memref<512xf32>
}
