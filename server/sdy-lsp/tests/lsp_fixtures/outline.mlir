// Outline and folding: two chunks, "é😀" in strings before names.
module @jit_f attributes {mhlo.frontend_attributes = {note = "é😀"},
                          mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {jax.name = "é😀", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<8x16xf32> {
    %0 = sdy.named_computation<"blöck😀">(%arg0) (%a: tensor<8x16xf32>) {
      %1 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%b: tensor<4x16xf32>) {
        sdy.return %b : tensor<4x16xf32>
      } : (tensor<8x16xf32>) -> tensor<8x16xf32>
      sdy.return %1 : tensor<8x16xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %2 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [
        {"data"}, {}]>]>} : tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }
}

// -----

sdy.mesh @m = <["x"=2]>
func.func @f(%x: tensor<2xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}]>}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x04000000"
    }
  }
#-}
