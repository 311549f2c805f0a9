// softmax over the last axis, as the front end records it (mlfuse.lazy_ir(x.softmax(-1))).
//   mlfuse-opt examples/softmax.mlir \
//     -p 'lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory'
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %m = lazy.reduce max %x [1] : tensor<64x64xf32> -> tensor<64x1xf32>
  %mb = lazy.expand %m : tensor<64x1xf32> -> tensor<64x64xf32>
  %d = lazy.sub %x, %mb : tensor<64x64xf32>
  %e = lazy.exp %d : tensor<64x64xf32>
  %s = lazy.reduce add %e [1] : tensor<64x64xf32> -> tensor<64x1xf32>
  %sb = lazy.expand %s : tensor<64x1xf32> -> tensor<64x64xf32>
  %o = lazy.div %e, %sb : tensor<64x64xf32>
  func.return %o : tensor<64x64xf32>
}
