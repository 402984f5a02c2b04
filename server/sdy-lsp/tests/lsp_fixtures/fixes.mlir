// Quick fixes: one mistake per function; "é😀" before them so UTF-16 columns differ.
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=4]>
func.func @unsorted(%arg0: tensor<8xf32> {jax.name = "é😀", sdy.sharding = #sdy.sharding<@mesh, [{}], replicated={"z", "x"}>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func @merge(%arg0: tensor<8xf32> {jax.name = "é😀", sdy.sharding = #sdy.sharding<@mesh, [{"z":(1)2, "z":(2)2}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func @dup(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", "x"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func @missing(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nope, [{"x"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func @prio(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}p1]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
