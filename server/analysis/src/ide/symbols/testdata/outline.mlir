#loc = loc(unknown)
module @jit_f attributes {mhlo.num_partitions = 8 : i32,
                          mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<8x16xf32> {
    %0 = sdy.named_computation<"layer">(%arg0) (%a: tensor<8x16xf32>) {
      %1 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%b: tensor<4x16xf32>) {
        sdy.return %b : tensor<4x16xf32>
      } : (tensor<8x16xf32>) -> tensor<8x16xf32>
      sdy.return %1 : tensor<8x16xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %2 = stablehlo.constant dense<[[1.0, 2.0],
                                  [3.0, 4.0]]> : tensor<2x2xf32>
    %3 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [
        {"data"}, {}]>]>} : tensor<8x16xf32>
    return %3 : tensor<8x16xf32>
  }
  func.func private @empty() {
    return
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x04000000"
    }
  }
#-}
