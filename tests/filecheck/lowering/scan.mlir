// RUN: mlfuse-opt %s -p convert-kernel-to-loops | filecheck %s --check-prefix=LOOPS

// kernel.scan lowered: the serial loop over the scanned dim carries the
// running value (after any reduce accumulators of that loop) and yields it at
// every step, so the value is there for the step's consumers. Other dims stay
// parallel, and may be vector lanes and register blocks (one running value
// per register point). (tests/filecheck/targets/scan-plans.mlir: the plans
// the CPU and the GPU choose for scans.)

// LOOPS-LABEL: func.func @rows
// LOOPS:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// LOOPS:         "scf.parallel"
// LOOPS:           %{{.*}} = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// LOOPS:             %[[X:.*]] = memref.load %x[%{{.*}}] : memref<32xf32>
// LOOPS-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// LOOPS:             memref.store %[[S]], %o[%{{.*}}] : memref<32xf32>
// LOOPS-NEXT:        scf.yield %[[S]] : f32
kernel.func @rows outs(%o: memref<32xf32>) ins(%x: memref<32xf32>) space [4, 8] plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.scan add %0 dim 1 : f32
  kernel.store %o <[4, 8] strides [8, 1] offset 0>, %1 : memref<32xf32>
}

// LOOPS-LABEL: func.func @columns
// LOOPS:         %[[NEG:.*]] = arith.constant 0xff800000 : f32
// LOOPS:         %[[INIT:.*]] = vector.broadcast %[[NEG]] : f32 to vector<4xf32>
// LOOPS-NEXT:    %{{.*}}, %{{.*}} = scf.for %{{.*}} iter_args(%[[A:.*]] = %[[INIT]], %[[B:.*]] = %[[INIT]]) -> (vector<4xf32>, vector<4xf32>) {
// LOOPS:           %[[X0:.*]] = vector.load %x[%{{.*}}] : memref<128xf32>, vector<4xf32>
// LOOPS:           %[[X1:.*]] = vector.load %x[%{{.*}}] : memref<128xf32>, vector<4xf32>
// LOOPS-NEXT:      %[[M0:.*]] = arith.maximumf %[[A]], %[[X0]] : vector<4xf32>
// LOOPS-NEXT:      %[[M1:.*]] = arith.maximumf %[[B]], %[[X1]] : vector<4xf32>
// LOOPS:           scf.yield %[[M0]], %[[M1]] : vector<4xf32>, vector<4xf32>
kernel.func @columns outs(%o: memref<128xf32>) ins(%x: memref<128xf32>) space [16, 8] plan [serial 0, unroll 1:2, vector 1:4] {
  %0 = kernel.load %x <[16, 8] strides [8, 1] offset 0> : memref<128xf32>
  %1 = kernel.scan max %0 dim 0 : f32
  kernel.store %o <[16, 8] strides [8, 1] offset 0>, %1 : memref<128xf32>
}

// one loop carries a sum and a running minimum: the sum's accumulator first

// LOOPS-LABEL: func.func @sum_of_scan
// LOOPS-DAG:     %[[MAX:.*]] = arith.constant 2147483647 : i32
// LOOPS-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// LOOPS:         %[[SUM:.*]], %{{.*}} = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]], %[[CUR:.*]] = %[[MAX]]) -> (i32, i32) {
// LOOPS:           %[[X:.*]] = memref.load %x
// LOOPS-NEXT:      %[[M:.*]] = arith.minsi %[[CUR]], %[[X]] : i32
// LOOPS-NEXT:      %[[S:.*]] = arith.addi %[[ACC]], %[[M]] : i32
// LOOPS-NEXT:      scf.yield %[[S]], %[[M]] : i32, i32
// LOOPS:         memref.store %[[SUM]], %o
kernel.func @sum_of_scan outs(%o: memref<4xi32>) ins(%x: memref<32xi32>) space [4, 8] plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xi32>
  %1 = kernel.scan min %0 dim 1 : i32
  %2 = kernel.reduce add %1 [1] : i32
  kernel.store %o <[4, 8] strides [1, 0] offset 0>, %2 : memref<4xi32>
}
