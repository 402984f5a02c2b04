// Navigation fixture: "é😀" in comments and strings, so UTF-16 columns differ from bytes.
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x8xf32> {jax.name = "é😀", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0:2 = call @helper(%arg0) : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>)
  %1 = stablehlo.add %0#0, %arg0 : tensor<8x8xf32> // ünï
  return %1 : tensor<8x8xf32>
}
func.func private @helper(%a: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %c = stablehlo.constant dense<0.0> : tensor<8xf32>
  return %a, %c : tensor<8x8xf32>, tensor<8xf32>
}

// -----

sdy.mesh @m2 = <["z"=2]>
func.func @second(%b: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m2, [{"z"}]>}) -> tensor<4xf32> {
  return %b : tensor<4xf32> // 😀 @nowhere
}
