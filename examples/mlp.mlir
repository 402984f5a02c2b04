// A two-layer MLP step sharded over a 2x4 mesh: data parallel on "batch",
// tensor parallel on "model". Try: sdy-lsp check examples/mlp.mlir
sdy.mesh @mesh = <["batch"=2, "model"=4]>

func.func @mlp(%x: tensor<16x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>},
               %w1: tensor<512x2048xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
               %w2: tensor<2048x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>})
    -> (tensor<16x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}) {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<16x512xf32>, tensor<512x2048xf32>) -> tensor<16x2048xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<16x2048xf32>
  %relu = stablehlo.maximum %h, %zero : tensor<16x2048xf32>
  %hc = sdy.sharding_constraint %relu <@mesh, [{"batch", ?}, {"model"}]> : tensor<16x2048xf32>
  %y = stablehlo.dot_general %hc, %w2, contracting_dims = [1] x [0] : (tensor<16x2048xf32>, tensor<2048x512xf32>) -> tensor<16x512xf32>
  %s = sdy.manual_computation(%y) in_shardings=[<@mesh, [{"batch"}, {}]>] out_shardings=[<@mesh, [{"batch"}, {}]>] manual_axes={"batch"} (%local: tensor<8x512xf32>) {
    %sq = stablehlo.multiply %local, %local : tensor<8x512xf32>
    sdy.return %sq : tensor<8x512xf32>
  } : (tensor<16x512xf32>) -> tensor<16x512xf32>
  return %s : tensor<16x512xf32>
}
