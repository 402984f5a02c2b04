// Completion fixture: "é😀" before the cursor on some lines shifts UTF-16 columns.
sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>
sdy.mesh @other = <["a"=8]>
func.func @main(%arg0: tensor<8x8xf32> {jax.name = "é😀"}, %arg1: tensor<8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%l: tensor<4x8xf32>) {
    %2 = stablehlo.negate %l : tensor<4x8xf32>
    sdy.return %2 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
// -----
sdy.mesh @m2 = <["z"=2, "w"=2]>
func.func @second(%b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %b : tensor<4x4xf32>
}
