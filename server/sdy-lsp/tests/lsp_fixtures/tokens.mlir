// Semantic tokens fixture: "é😀" in comments and strings shifts UTF-16 columns.
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x8xf32> {jax.name = "é😀", sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p1, {"y":(1)2}]>}) -> tensor<8x8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {?}], replicated={"x"}> : tensor<8x8xf32> // ünï 😀
  %1:2 = call @helper(%0) : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>)
  return %1#0 : tensor<8x8xf32>
}
func.func private @helper(%a: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %c = stablehlo.constant dense<0.0> : tensor<8xf32>
  return %a, %c : tensor<8x8xf32>, tensor<8xf32>
}
// -----
sdy.mesh @m2 = <["z"=2]>
func.func @second(%b: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m2, [{"z"}]>}) -> tensor<4xf32> {
  %r = sdy.all_gather [{"z"}] %b out_sharding=<@m2, [{}]> : tensor<4xf32>
  return %r : tensor<4xf32> // é
}
