// Round-trip strings; "é😀" before them on the same lines so UTF-16 columns differ.
module @jit_f attributes {mhlo.frontend_attributes = {a = "é😀", xla.sdy.meshes = "{mesh = #sdy.mesh<[\22x\22=2, \22y\22=4]>}"}} {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.frontend_attributes = {a = "é😀", xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22x\22}, {\22z\22}]>"}, mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> (tensor<8x16xf32> {jax.result_info = "é😀", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}) {
    %0 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%arg0) {mhlo.frontend_attributes = {a = "é😀", xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{}, {\22y\22}]>]>"}} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}
