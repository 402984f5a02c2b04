// Non-ASCII text (é, 😀) before errors and names on the same line: UTF-16 columns differ from bytes.
sdy.mesh @mesh = <["x"=2, "y"=4]>
sdy.mesh @mesh = <["x"=2]>
sdy.mesh @unused = <["z"=8]>
func.func @main(%arg0: tensor<8x8xf32> {jax.name = "é😀", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"w"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["a"=4]>
func.func @other(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32> // ünïcödé
  return %0 : tensor<4xf32>
}
