// SYNTAX TEST "source.mlir" "sdy dialect"
sdy.mesh @mesh = <["x"=4, "y"=2]>
// <-------- variable.other.enummember.sdy.mlir
//       ^^^^^ entity.name.namespace.mesh.mlir - entity.name.function.mlir
//               ^^^^^^^^^^^^^^^^ meta.mesh.mlir
//                 ^^^ variable.parameter.axis.mlir
//                 ^ punctuation.definition.string.begin.mlir
//                     ^ meta.mesh.mlir constant.numeric.mlir
//                        ^^^ variable.parameter.axis.mlir
sdy.mesh @"quoted mesh" = <["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>
//       ^^^^^^^^^^^^^^ entity.name.namespace.mesh.mlir
//                                         ^^^^^^^^^^ meta.mesh.mlir keyword.other.sdy.device_ids.mlir
//                                                     ^ meta.mesh.mlir constant.numeric.mlir
sdy.mesh @maximal = <[], device_ids=[3]>
//       ^^^^^^^^ entity.name.namespace.mesh.mlir
//                       ^^^^^^^^^^ keyword.other.sdy.device_ids.mlir
func.func @f(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2, ?}p0, {"y"} p12], replicated={"x":(1)2}, unreduced=max{"z"}>}) -> tensor<8x16xf32> {
//                                    ^^^^^^^^^^^^ variable.other.sdy.mlir
//                                                   ^^^^^^^^^^^^^ meta.sharding.mlir constant.language.sdy.sharding.mlir
//                                                                 ^^^^^ meta.sharding.mlir entity.name.namespace.mesh.mlir
//                                                                          ^^^ meta.sharding.mlir meta.dimension-sharding.mlir variable.parameter.axis.mlir
//                                                                             ^^^^^ meta.sharding.mlir meta.dimension-sharding.mlir meta.subaxis.mlir
//                                                                             ^ punctuation.separator.subaxis.mlir
//                                                                              ^ punctuation.section.subaxis.begin.mlir
//                                                                               ^ constant.numeric.subaxis.pre-size.mlir
//                                                                                ^ punctuation.section.subaxis.end.mlir
//                                                                                 ^ constant.numeric.subaxis.size.mlir
//                                                                                    ^ meta.dimension-sharding.mlir constant.language.open-dimension.mlir
//                                                                                      ^^ meta.dimension-sharding.mlir constant.numeric.priority.mlir
//                                                                                                ^^^ constant.numeric.priority.mlir
//                                                                                                      ^^^^^^^^^^ meta.sharding.mlir keyword.other.sdy.replicated.mlir
//                                                                                                                 ^^^^^^^^^^ meta.sharding.mlir meta.axis-list.mlir
//                                                                                                                  ^^^ variable.parameter.axis.mlir - meta.dimension-sharding.mlir
//                                                                                                                      ^^^ meta.subaxis.mlir
//                                                                                                                             ^^^^^^^^^ meta.sharding.mlir keyword.other.sdy.unreduced.mlir
//                                                                                                                                       ^^^ meta.sharding.mlir constant.language.sdy.reduction.mlir
//                                                                                                                                           ^^^ meta.sharding.mlir meta.axis-list.mlir variable.parameter.axis.mlir
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{?}, {}]> : tensor<8x16xf32>
//     ^^^^^^^^^^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
//                                   ^^^^^^^^^^^^^^^^^^ meta.sharding.mlir
//                                    ^^^^^ entity.name.namespace.mesh.mlir
//                                             ^ constant.language.open-dimension.mlir
  %1 = sdy.reshard %0 <mesh<["a"=2]>, [{"a"}, {}], unreduced={"a"}> : tensor<8x16xf32>
//     ^^^^^^^^^^^ variable.other.enummember.sdy.mlir
//                     ^^^^ meta.sharding.mlir meta.mesh.mlir keyword.other.sdy.mesh.mlir
//                           ^^^ meta.mesh.mlir variable.parameter.axis.mlir
//                                      ^^^ meta.dimension-sharding.mlir variable.parameter.axis.mlir
//                                                 ^^^^^^^^^ keyword.other.sdy.unreduced.mlir
//                                                            ^^^ meta.axis-list.mlir variable.parameter.axis.mlir
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<2x16xf32>) {
//     ^^^^^^^^^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
//                                ^^^^^^^^^^^^ keyword.other.sdy.in_shardings.mlir
//                                               ^^^^^ meta.sharding.mlir entity.name.namespace.mesh.mlir
//                                                                    ^^^^^^^^^^^^^ keyword.other.sdy.out_shardings.mlir
//                                                                                             ^^^ meta.sharding.mlir meta.dimension-sharding.mlir variable.parameter.axis.mlir
//                                                                                                         ^^^^^^^^^^^ keyword.other.sdy.manual_axes.mlir
//                                                                                                                      ^^^ meta.axis-list.mlir variable.parameter.axis.mlir - meta.sharding.mlir
    sdy.return %a : tensor<2x16xf32>
//  ^^^^^^^^^^ variable.other.enummember.sdy.mlir
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = sdy.all_gather [{}, {"y"}] %2 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x16xf32>
//     ^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
//                          ^^^ meta.axis-list.mlir variable.parameter.axis.mlir
//                                   ^^^^^^^^^^^^ keyword.other.sdy.out_sharding.mlir
//                                                 ^^^^^ meta.sharding.mlir entity.name.namespace.mesh.mlir
  %4 = sdy.all_reduce max {"x", "y":(1)2} %3 out_sharding=<@mesh, [{}, {}]> : tensor<8x16xf32>
//     ^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
//                    ^^^ constant.language.sdy.reduction.mlir
//                         ^^^ meta.axis-list.mlir variable.parameter.axis.mlir
//                                 ^^^^^ meta.axis-list.mlir meta.subaxis.mlir
  %5 = sdy.all_to_all [{"x"}: 0->1] %4 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x16xf32>
//     ^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
//                      ^^^ meta.axis-list.mlir variable.parameter.axis.mlir
//                            ^ constant.numeric.mlir - meta.subaxis.mlir
//                             ^^ punctuation.other.mlir
  %6 = sdy.reduce_scatter [{}, {"y"}] %5 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x16xf32>
//     ^^^^^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
  %7 = sdy.collective_permute %6 out_sharding=<@mesh, [{"y"}, {"x"}]> : tensor<8x16xf32>
//     ^^^^^^^^^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
  %8 = stablehlo.add %7, %7 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16} reduction={k}, custom>} : tensor<8x16xf32>
//     ^^^^^^^^^^^^^ variable.other.enummember.mlir
//                           ^^^^^^^^^^^^ variable.other.sdy.mlir
//                                          ^^^^^^^^^^^^^^^^^^^^^^^ constant.language.sdy.sharding_per_value.mlir
//                                                                    ^^^^^ meta.sharding.mlir entity.name.namespace.mesh.mlir
//                                                                                 ^^^ meta.sharding.mlir meta.dimension-sharding.mlir variable.parameter.axis.mlir
//                                                                                           ^^^^^^^^^^^^^^^^^ variable.other.sdy.mlir
//                                                                                                               ^^^^^^^^^^^^^^^^^^^^^ meta.op-sharding-rule.mlir constant.language.sdy.op_sharding_rule.mlir
//                                                                                                                                       ^ meta.op-sharding-rule.mlir variable.parameter.factor.mlir
//                                                                                                                                                  ^ meta.op-sharding-rule.mlir variable.parameter.factor.mlir
//                                                                                                                                                     ^^ meta.op-sharding-rule.mlir punctuation.other.mlir
//                                                                                                                                                                   ^ meta.op-sharding-rule.mlir constant.numeric.mlir
//                                                                                                                                                                            ^^^^^^^^^ keyword.other.sdy.rule.mlir
//                                                                                                                                                                                           ^^^^^^ keyword.other.sdy.rule.mlir
  %9 = sdy.data_flow_edge %8 sharding=<@mesh, [{}, {}]> : tensor<8x16xf32>
//                           ^^^^^^^^ keyword.other.sdy.sharding.mlir
//                                     ^^^^^ entity.name.namespace.mesh.mlir
  %10 = stablehlo.custom_call @xla(%9) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22x\22}, {}]>"}} : (tensor<8x16xf32>) -> tensor<8x16xf32>
//                            ^^^^ entity.name.function.mlir
//                                                                  ^^^^^^^^^^^^^^^^ variable.other.mlir
//                                                                                      ^^^^^^^^^^^^^^^^^^^^^^^ string.quoted.double.mlir - meta.sharding.mlir
//                                                                                                             ^^^ string.quoted.double.mlir constant.character.escape.mlir
//                                                                                                                ^ string.quoted.double.mlir - variable.parameter.axis.mlir
//                                                                                                                 ^^^ string.quoted.double.mlir constant.character.escape.mlir
  %11 = "sdy.sharding_constraint"(%10) <{sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
//      ^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
//                                       ^^^^^^^^ variable.other.mlir
//                                                  ^^^^^^^^^^^^^ constant.language.sdy.sharding.mlir
//                                                                         ^^^ variable.parameter.axis.mlir
  %12 = stablehlo.custom_call @g(%11) {mesh_attr = #sdy.mesh<["a"=2]>, name = "x", tag = p0} : (tensor<8x16xf32>) -> tensor<8x16xf32>
//                                                 ^^^^^^^^^ meta.mesh.mlir constant.language.sdy.mesh.mlir
//                                                            ^^^ meta.mesh.mlir variable.parameter.axis.mlir
//                                                                            ^^^ string.quoted.double.mlir - variable.parameter.axis.mlir
//                                                                                       ^^ keyword.other.mlir - constant.numeric.priority.mlir
  %13 = sdy.named_computation<"body">(%12) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] (%b: tensor<8x16xf32>) {
//      ^^^^^^^^^^^^^^^^^^^^^ variable.other.enummember.sdy.mlir
//                            ^^^^^^ string.quoted.double.mlir
//                                         ^^^^^^^^^^^^ keyword.other.sdy.in_shardings.mlir
    sdy.return %b : tensor<8x16xf32>
//  ^^^^^^^^^^ variable.other.enummember.sdy.mlir
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %13 : tensor<8x16xf32>
// <~~------ variable.other.enummember.mlir
}
