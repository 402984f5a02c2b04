// References and rename: "é😀" in comments and strings, so UTF-16 columns differ from bytes.
#s = #sdy.sharding<@mesh, [{"x"}, {}]>
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @other = <["z"=8]>
func.func @main(%arg0: tensor<8x8xf32> {jax.name = "é😀", sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2, "y"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #s}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
    sdy.return %a : tensor<2x8xf32>
  } : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.named_computation<"inner">(%0) out_shardings=[<@mesh, [{"x", "y"}, {}]>] (%c: tensor<8x8xf32>) {
    %2 = stablehlo.add %c, %c : tensor<8x8xf32>
    sdy.return %2 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.all_gather [{"y"}, {}] %1 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %4:2 = call @helper(%3) : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %5 = stablehlo.add %4#0, %4#1 {jax.name = "é😀", sdy.sharding = #sdy.sharding_per_value<[<@other, [{"z"}, {}]>]>} : tensor<8x8xf32>
  %6 = sdy.sharding_constraint %5 <@other, [{"z"}, {}]> : tensor<8x8xf32>
  return %6 : tensor<8x8xf32>
}
func.func private @helper(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  return %x, %x : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// The same names in another chunk: another module.
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
