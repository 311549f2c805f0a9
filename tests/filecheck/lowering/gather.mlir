// RUN: mlfuse-opt %s -p convert-kernel-to-loops | filecheck %s
// RUN: mlfuse-opt %s -p cpu-optimize-plan,convert-kernel-to-loops | filecheck %s --check-prefix=VEC
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true}' | filecheck %s --check-prefix=GRID
// RUN: mlfuse-opt %s -p convert-kernel-to-loops,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm | filecheck %s --check-prefix=LLVM
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t ptx | filecheck %s --check-prefix=PTX

// kernel.gather lowers to index arithmetic and one load: the view's offset plus
// the index (index_cast, clamped to [0, size - 1] by maxsi/minsi) times the
// stride. With a vector plan, a row whose index is the same for every lane is
// one vector load (an embedding lookup); otherwise each lane loads alone. On a
// GPU grid the same code runs per thread.

// CHECK-LABEL: func.func @rows
// CHECK:         ^bb0(%{{.*}}: index, %[[BASE:.*]]: index):
// CHECK-NEXT:    %[[I:.*]] = memref.load %i[%{{.*}}] : memref<3xi64>
// CHECK-NEXT:    %[[C:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:    %[[LO:.*]] = arith.maxsi %[[C]], %{{.*}} : index
// CHECK-NEXT:    %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK-NEXT:    %[[S:.*]] = arith.muli %[[HI]], %{{.*}} : index
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %[[BASE]], %[[S]] : index
// CHECK-NEXT:    %{{.*}} = memref.load %x[%[[AT]]] : memref<40xf32>

// VEC-LABEL: func.func @rows
// VEC:         arith.minsi
// VEC:         vector.load %x[%{{.*}}] : memref<40xf32>, vector<4xf32>
// VEC-NOT:     memref.load %x
// VEC:         vector.store

// GRID-LABEL: func.func @rows
// GRID-SAME:    mlfuse.grid = 1 : i64, mlfuse.block = 12 : i64
// GRID:         %tid = "gpu.thread_id"
// GRID:         arith.index_cast
// GRID-NEXT:    arith.maxsi
// GRID-NEXT:    arith.minsi
// GRID:         memref.load %x

// PTX-LABEL: .visible .entry rows(
// PTX:         ld.global.nc.b64 [[I:%rd[0-9]+]]
// PTX-NEXT:    max.s64 [[LO:%rd[0-9]+]], [[I]], 0;
// PTX-NEXT:    min.s64 {{%rd[0-9]+}}, [[LO]], 9;
// PTX:         ld.global.nc.b32

// LLVM-LABEL: llvm.func @rows
// LLVM:         llvm.call_intrinsic "llvm.smax.i64"
// LLVM-NEXT:    llvm.call_intrinsic "llvm.smin.i64"
kernel.func @rows outs(%o: memref<12xf32>) ins(%x: memref<40xf32>, %i: memref<3xi64>) space [3, 4] {
  %0 = kernel.load %i <[3, 4] strides [1, 0] offset 0> : memref<3xi64>
  %1 = kernel.gather %x <[3, 4] strides [0, 1] offset 0>, %0 stride 4 size 10 : memref<40xf32>, i64
  kernel.store %o <[3, 4] strides [4, 1] offset 0>, %1 : memref<12xf32>
}

// an index that varies along the vector dim: lane by lane

// VEC-LABEL: func.func @along_rows
// VEC-COUNT-8: memref.load %x
// VEC:         vector.insert
// VEC:         vector.store
kernel.func @along_rows outs(%o: memref<64xf32>) ins(%x: memref<80xf32>, %i: memref<64xi32>) space [8, 8] {
  %0 = kernel.load %i <[8, 8] strides [8, 1] offset 0> : memref<64xi32>
  %1 = kernel.gather %x <[8, 8] strides [10, 0] offset 0>, %0 stride 1 size 10 : memref<80xf32>, i32
  %2 = arith.constant 2.000000e+00 : f32
  %3 = arith.mulf %1, %2 : f32
  kernel.store %o <[8, 8] strides [8, 1] offset 0>, %3 : memref<64xf32>
}
