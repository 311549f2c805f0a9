// RUN: mlfuse-opt %s -p gpu-map-plan | filecheck %s --check-prefix=PLAN
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true}' | filecheck %s --check-prefix=LOOPS
// RUN: mlfuse-opt %s -p 'gpu-map-plan,convert-kernel-to-loops{grid=true},convert-gpu-to-nvvm,convert-scf-to-cf,convert-loops-to-llvm' -t ptx | filecheck %s --check-prefix=PTX

// x.T + y: x is read consecutively along dim 0, the stores (and y) along dim
// 1. A block takes a 32 x 32 tile (8 x 32 threads, 4 rows each); a one-step
// stage loop copies x's tile to shared memory, consecutive threads reading
// consecutive groups of 4 elements of x (one 16-byte load each, stored down a
// column of the tile, whose rows of 33 spread a warp's stores over the 32
// banks), and the threads then read it across, so that
// both global reads and the stores are coalesced. y, read along the stores'
// dim already, is read directly.
// PLAN:       kernel.func @transpose_add
// PLAN-SAME:    plan [block 0:4, block 1:2, stage 0:1, unroll 0:4, thread 0:8, thread 1:32]

// LOOPS:      func.func @transpose_add(
// LOOPS:        %[[T:.*]] = memref.alloca() {alignment = 16 : i64} : memref<1056xf32, 3 : i64>
// LOOPS-NOT:    memref.alloca
// LOOPS:        scf.for
// LOOPS:          vector.load %x[%{{.*}}] {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// LOOPS-COUNT-4:  memref.store %{{.*}}, %[[T]]
// LOOPS-NEXT:     "gpu.barrier"() : () -> ()
// LOOPS-COUNT-4:  memref.load %[[T]]
// LOOPS-COUNT-4:  memref.load %y
// LOOPS-COUNT-4:  memref.store %{{.*}}, %out
// A one-step stage loop needs no barrier at its end.
// LOOPS-NEXT:   }

// PTX:        .shared .align 16 .b8 transpose_add__tile0[4224];
// PTX:        ld.global.nc.v4.b32
// PTX-COUNT-4: st.shared.b32
// PTX:        bar.sync 0;
// PTX-COUNT-4: ld.shared.b32
// PTX-COUNT-4: ld.global.nc.b32
// PTX-COUNT-4: st.global.b32
// PTX-NOT:    bar.sync
kernel.func @transpose_add outs(%out: memref<8192xf32>) ins(%x: memref<8192xf32>, %y: memref<8192xf32>) space [128, 64]
    plan [parallel 0, parallel 1] {
  %0 = kernel.load %x <[128, 64] strides [1, 128] offset 0> : memref<8192xf32>
  %1 = kernel.load %y <[128, 64] strides [64, 1] offset 0> : memref<8192xf32>
  %2 = arith.addf %0, %1 : f32
  kernel.store %out <[128, 64] strides [64, 1] offset 0>, %2 : memref<8192xf32>
}
