// RUN: mlfuse-opt %s --split-input-file -p convert-kernel-to-loops | filecheck %s --enable-var-scope

// Register loops (plan loops of kind unroll and vector) are not loops in the
// code: each value is computed once per point of the unroll loops it varies
// along, as a vector when it varies along the vector loop. The function records
// how many register points each iteration does (the runtime's work estimate).

// A register-blocked matrix product: 3 x 2 accumulators of 16 lanes carried
// by the k loop; per k, 3 scalars of A (broadcast) and 2 vectors of B, 6
// products that may contract with the sums into FMAs, and 6 vector stores.
// CHECK-LABEL: func.func @mm(
// CHECK-SAME:    mlfuse.register_points = 96 : i64
// CHECK:         scf.parallel
// CHECK:           [[ZERO:%[0-9]+]] = vector.broadcast {{%.*}} : f32 to vector<16xf32>
// CHECK-NEXT:      {{%.*}}, {{%.*}}, {{%.*}}, {{%.*}}, {{%.*}}, {{%.*}} = scf.for {{%.*}} = {{.*}} iter_args([[A0:%[0-9]+]] = [[ZERO]], [[A1:%[0-9]+]] = [[ZERO]], {{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-3:     memref.load %in0
// CHECK:             [[B0:%[0-9]+]] = vector.load %in1[{{%.*}}] : memref<4096xf32>, vector<16xf32>
// CHECK:             [[B1:%[0-9]+]] = vector.load %in1[{{%.*}}] : memref<4096xf32>, vector<16xf32>
// CHECK-NEXT:        [[S0:%[0-9]+]] = vector.broadcast {{%.*}} : f32 to vector<16xf32>
// CHECK-NEXT:        [[P0:%[0-9]+]] = arith.mulf [[S0]], [[B0]] fastmath<contract> : vector<16xf32>
// CHECK-COUNT-5:     arith.mulf {{.*}} fastmath<contract> : vector<16xf32>
// CHECK-NEXT:        [[N0:%[0-9]+]] = arith.addf [[A0]], [[P0]] fastmath<reassoc,contract> : vector<16xf32>
// CHECK-COUNT-5:     arith.addf {{.*}} fastmath<reassoc,contract> : vector<16xf32>
// CHECK-NEXT:        scf.yield [[N0]],
// CHECK-NEXT:      }
// CHECK-COUNT-6:   vector.store {{%.*}}, %out0[{{%.*}}] : memref<6144xf32>, vector<16xf32>
// CHECK-NOT:       vector.store
// CHECK:           scf.reduce
kernel.func @mm outs(%out0: memref<6144xf32>) ins(%in0: memref<3072xf32>, %in1: memref<4096xf32>) space [96, 64, 32] plan [parallel 0:32, parallel 1:2, serial 2, unroll 1:2, unroll 0:3, vector 1:16] {
  %0 = kernel.load %in0 <[96, 64, 32] strides [32, 0, 1] offset 0> : memref<3072xf32>
  %1 = kernel.load %in1 <[96, 64, 32] strides [0, 1, 64] offset 0> : memref<4096xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  kernel.store %out0 <[96, 64, 32] strides [64, 1, 0] offset 0>, %3 : memref<6144xf32>
}

// -----

// A row max over 32 = 4 steps x 2 unrolled x 4 lanes: two vector
// accumulators from -inf, combined after the loop, then the lanes halved by
// shuffles down to one, extracted and stored.
// CHECK-LABEL: func.func @rowmax(
// CHECK:         [[NINF:%[0-9]+]] = arith.constant 0xff800000 : f32
// CHECK:         [[INIT:%[0-9]+]] = vector.broadcast [[NINF]] : f32 to vector<4xf32>
// CHECK-NEXT:    [[R0:%[0-9]+]], [[R1:%[0-9]+]] = scf.for [[K:%[0-9]+]] = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[M0:%[0-9]+]] = [[INIT]], [[M1:%[0-9]+]] = [[INIT]])
// CHECK:           [[X0:%[0-9]+]] = vector.load %x[{{%.*}}] : memref<64xf32>, vector<4xf32>
// CHECK:           [[X1:%[0-9]+]] = vector.load %x[{{%.*}}] : memref<64xf32>, vector<4xf32>
// CHECK-NEXT:      [[N0:%[0-9]+]] = arith.maximumf [[M0]], [[X0]] fastmath<reassoc> : vector<4xf32>
// CHECK-NEXT:      [[N1:%[0-9]+]] = arith.maximumf [[M1]], [[X1]] fastmath<reassoc> : vector<4xf32>
// CHECK-NEXT:      scf.yield [[N0]], [[N1]]
// CHECK:         [[BOTH:%[0-9]+]] = arith.maximumf [[R0]], [[R1]] fastmath<reassoc> : vector<4xf32>
// CHECK-NEXT:    [[HI:%[0-9]+]] = vector.shuffle [[BOTH]], [[BOTH]] [2, 3] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    [[LO:%[0-9]+]] = vector.shuffle [[BOTH]], [[BOTH]] [0, 1] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    [[HALF:%[0-9]+]] = arith.maximumf [[LO]], [[HI]] fastmath<reassoc> : vector<2xf32>
// CHECK:         [[ONE:%[0-9]+]] = arith.maximumf {{%.*}}, {{%.*}} fastmath<reassoc> : vector<1xf32>
// CHECK-NEXT:    [[M:%[0-9]+]] = vector.extract [[ONE]][0] : f32 from vector<1xf32>
// CHECK-NEXT:    memref.store [[M]], %out[{{%.*}}] : memref<2xf32>
kernel.func @rowmax outs(%out: memref<2xf32>) ins(%x: memref<64xf32>) space [2, 32] plan [parallel 0, serial 1:4, unroll 1:2, vector 1:4] {
  %0 = kernel.load %x <[2, 32] strides [32, 1] offset 0> : memref<64xf32>
  %1 = kernel.reduce max %0 [1] : f32
  kernel.store %out <[2, 32] strides [1, 0] offset 0>, %1 : memref<2xf32>
}

// -----

// Views that are not consecutive along the vector dim go lane by lane: a
// transposed read gathers 4 scalars into a vector, a transposed write
// extracts them again.
// CHECK-LABEL: func.func @transpose(
// CHECK-COUNT-4: memref.load %x
// CHECK:         [[V0:%[0-9]+]] = vector.broadcast {{%.*}} : f32 to vector<4xf32>
// CHECK-NEXT:    [[V1:%[0-9]+]] = vector.insert {{%.*}}, [[V0]] [1] : f32 into vector<4xf32>
// CHECK-NEXT:    [[V2:%[0-9]+]] = vector.insert {{%.*}}, [[V1]] [2] : f32 into vector<4xf32>
// CHECK-NEXT:    [[V3:%[0-9]+]] = vector.insert {{%.*}}, [[V2]] [3] : f32 into vector<4xf32>
// CHECK-NEXT:    [[E0:%[0-9]+]] = vector.extract [[V3]][0] : f32 from vector<4xf32>
// CHECK:         memref.store [[E0]], %out
// CHECK:         vector.extract [[V3]][3] : f32 from vector<4xf32>
// CHECK-NOT:     vector.load
kernel.func @transpose outs(%out: memref<16xf32>) ins(%x: memref<16xf32>) space [4, 4] plan [parallel 0, vector 1:4] {
  %0 = kernel.load %x <[4, 4] strides [1, 4] offset 0> : memref<16xf32>
  kernel.store %out <[4, 4] strides [1, 4] offset 0>, %0 : memref<16xf32>
}

// -----

// A view masked along another dim reads whole vectors: the row's validity
// guards the offset and selects zeros.
// CHECK-LABEL: func.func @padded(
// CHECK:         [[OK:%[0-9]+]] = arith.andi {{%.*}}, {{%.*}} : i1
// CHECK:         [[SAFE:%[0-9]+]] = arith.select [[OK]], {{%.*}}, {{%.*}} : index
// CHECK-NEXT:    [[V:%[0-9]+]] = vector.load %x{{\[}}[[SAFE]]] : memref<16xf32>, vector<4xf32>
// CHECK-NEXT:    [[Z:%[0-9]+]] = vector.broadcast {{%.*}} : f32 to vector<4xf32>
// CHECK-NEXT:    [[R:%[0-9]+]] = arith.select [[OK]], [[V]], [[Z]] : vector<4xf32>
// CHECK:         vector.store [[R]], %out[{{%.*}}] : memref<24xf32>, vector<4xf32>
kernel.func @padded outs(%out: memref<24xf32>) ins(%x: memref<16xf32>) space [6, 4] plan [parallel 0, vector 1:4] {
  %0 = kernel.load %x <[6, 4] strides [4, 1] offset -4 mask [[1, 5], [0, 4]]> : memref<16xf32>
  kernel.store %out <[6, 4] strides [4, 1] offset 0>, %0 : memref<24xf32>
}

// -----

// A view padded along the vector dim: a masked load whose lanes are those
// whose index lies in the valid range [1, 7) (lanes below 7 and not below 1),
// and in a valid row.
// CHECK-LABEL: func.func @halo(
// CHECK:         [[ROW:%[0-9]+]] = arith.andi {{%.*}}, {{%.*}} : i1
// CHECK:         [[N1:%[0-9]+]] = arith.subi {{%[0-9]+}}, [[AT:%[0-9]+]] : index
// CHECK-NEXT:    [[LO:%[0-9]+]] = vector.create_mask [[N1]] : vector<4xi1>
// CHECK-NEXT:    [[ALL:%[0-9]+]] = vector.broadcast {{%.*}} : i1 to vector<4xi1>
// CHECK-NEXT:    [[N7:%[0-9]+]] = arith.subi {{%.*}}, [[AT]] : index
// CHECK-NEXT:    [[HI:%[0-9]+]] = vector.create_mask [[N7]] : vector<4xi1>
// CHECK-NEXT:    [[NOTLO:%[0-9]+]] = arith.xori [[LO]], [[ALL]] : vector<4xi1>
// CHECK-NEXT:    [[IN:%[0-9]+]] = arith.andi [[HI]], [[NOTLO]] : vector<4xi1>
// CHECK-NEXT:    [[ROWS:%[0-9]+]] = vector.broadcast [[ROW]] : i1 to vector<4xi1>
// CHECK-NEXT:    [[M:%[0-9]+]] = arith.andi [[IN]], [[ROWS]] : vector<4xi1>
// CHECK-NEXT:    [[Z:%[0-9]+]] = vector.broadcast {{%.*}} : f32 to vector<4xf32>
// CHECK-NEXT:    [[V:%[0-9]+]] = vector.maskedload %x[{{%.*}}], [[M]], [[Z]] : memref<36xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// CHECK:         vector.store [[V]], %out
kernel.func @halo outs(%out: memref<64xf32>) ins(%x: memref<36xf32>) space [8, 8] plan [parallel 0, parallel 1:2, vector 1:4] {
  %0 = kernel.load %x <[8, 8] strides [6, 1] offset -7 mask [[1, 7], [1, 7]]> : memref<36xf32>
  kernel.store %out <[8, 8] strides [8, 1] offset 0>, %0 : memref<64xf32>
}

// -----

// A transposed view under a W x W tile (an unroll loop of W steps along the
// dim it reads contiguously): W row loads, then log2 W rounds of W two-input
// shuffles (here W = 4: 4 loads, 8 shuffles), no lane-by-lane access.
// CHECK-LABEL: func.func @tile(
// CHECK-COUNT-4: vector.load %x
// CHECK:         [[A:%[0-9]+]] = vector.shuffle [[R0:%[0-9]+]], [[R2:%[0-9]+]] [0, 1, 4, 5] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    [[C:%[0-9]+]] = vector.shuffle [[R0]], [[R2]] [2, 3, 6, 7] : vector<4xf32>, vector<4xf32>
// CHECK-COUNT-2: vector.shuffle
// CHECK:         vector.shuffle [[A]], {{%[0-9]+}} [0, 4, 2, 6] : vector<4xf32>, vector<4xf32>
// CHECK-COUNT-3: vector.shuffle
// CHECK-NOT:     vector.shuffle
// CHECK-NOT:     memref.load
// CHECK-COUNT-4: vector.store
kernel.func @tile outs(%out: memref<64xf32>) ins(%x: memref<64xf32>) space [8, 8] plan [parallel 0:2, parallel 1:2, unroll 0:4, vector 1:4] {
  %0 = kernel.load %x <[8, 8] strides [1, 8] offset 0> : memref<64xf32>
  kernel.store %out <[8, 8] strides [8, 1] offset 0>, %0 : memref<64xf32>
}

// -----

// A sum reduce of a sum of products (merged sums): the products may contract
// and the adds reassociate, so LLVM folds them into FMAs on the accumulator.
// CHECK-LABEL: func.func @taps(
// CHECK:         [[P0:%[0-9]+]] = arith.mulf {{%.*}}, {{%.*}} fastmath<contract> : f32
// CHECK-NEXT:    [[P1:%[0-9]+]] = arith.mulf {{%.*}}, {{%.*}} fastmath<contract> : f32
// CHECK-NEXT:    [[S:%[0-9]+]] = arith.addf [[P0]], [[P1]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:    arith.addf {{%.*}}, [[S]] fastmath<reassoc,contract> : f32
kernel.func @taps outs(%o: memref<4xf32>) ins(%x: memref<32xf32>, %w: memref<8xf32>) space [4, 8] plan [parallel 0, serial 1] {
  %0 = kernel.load %x <[4, 8] strides [8, 1] offset 0> : memref<32xf32>
  %1 = kernel.load %w <[4, 8] strides [0, 1] offset 0> : memref<8xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = arith.mulf %0, %0 : f32
  %4 = arith.addf %2, %3 : f32
  %5 = kernel.reduce add %4 [1] : f32
  kernel.store %o <[4, 8] strides [1, 0] offset 0>, %5 : memref<4xf32>
}

// -----

// A sum over a dim its input does not vary along (a broadcast value), with the
// dim vectorized and unrolled: the value still counts once per lane and point
// (two vector accumulators of splats, combined, then the lanes), not once per
// trip of the loop.
// CHECK-LABEL: func.func @broadcast_sum(
// CHECK:         [[R0:%[0-9]+]], [[R1:%[0-9]+]] = scf.for {{%.*}} = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[A0:%[0-9]+]] = {{%.*}}, [[A1:%[0-9]+]] = {{%.*}}) -> (vector<4xf32>, vector<4xf32>)
// CHECK:           [[S:%[0-9]+]] = vector.broadcast {{%.*}} : f32 to vector<4xf32>
// CHECK-NEXT:      [[N0:%[0-9]+]] = arith.addf [[A0]], [[S]] fastmath<reassoc,contract> : vector<4xf32>
// CHECK-NEXT:      [[N1:%[0-9]+]] = arith.addf [[A1]], [[S]] fastmath<reassoc,contract> : vector<4xf32>
// CHECK-NEXT:      scf.yield [[N0]], [[N1]]
// CHECK:         arith.addf [[R0]], [[R1]] fastmath<reassoc,contract> : vector<4xf32>
// CHECK:         vector.shuffle
kernel.func @broadcast_sum outs(%out: memref<2xf32>) ins(%x: memref<2xf32>) space [2, 32] plan [parallel 0, serial 1:4, unroll 1:2, vector 1:4] {
  %0 = kernel.load %x <[2, 32] strides [1, 0] offset 0> : memref<2xf32>
  %1 = kernel.reduce add %0 [1] : f32
  kernel.store %out <[2, 32] strides [1, 0] offset 0>, %1 : memref<2xf32>
}
