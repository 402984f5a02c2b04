// Common hand-written sharding mistakes; `sdy-lsp check examples/mistakes.mlir`
// reports each with Shardy's own message.
sdy.mesh @mesh = <["x"=2, "y"=4]>

func.func @rank_mismatch(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8x8xf32> {
  return %a : tensor<8x8xf32>
}

func.func @unknown_axis(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

func.func @bad_priority(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}phigh, {}]>}) -> tensor<8x8xf32> {
  return %a : tensor<8x8xf32>
}
