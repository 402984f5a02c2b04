// SYNTAX TEST "source.mlir" "general MLIR"
// a plain comment: CHECK-LABEL: func @main
// <------------------ comment.line.double-slash.mlir - meta.separator.split.mlir
#loc1 = loc("params['w']":12:3)
// <----- constant.language.mlir
//      ^^^ meta.location.mlir keyword.other.location.mlir
//          ^ meta.location.mlir string.quoted.double.mlir punctuation.definition.string.begin.mlir
//                        ^^ meta.location.mlir constant.numeric.mlir
//                           ^ meta.location.mlir constant.numeric.mlir
#loc2 = loc(callsite("f"(#loc1) at fused[#loc1, "g"]))
// <----- constant.language.mlir
//          ^^^^^^^^ meta.location.mlir keyword.other.mlir
//                       ^^^^^ meta.location.mlir constant.language.mlir
//                              ^^ meta.location.mlir keyword.other.mlir
//                                                  ^^ meta.location.mlir
#map = affine_map<(d0, d1) -> (d1, d0)>
// <---- constant.language.mlir
//     ^^^^^^^^^^ constant.language.mlir
//                         ^^ punctuation.other.mlir
!tok = !stablehlo.token
// <---- entity.name.type.mlir
//     ^^^^^^^^^^^^^^^^ entity.name.type.mlir
module @jit_f attributes {llvm.emit_c_interface, mhlo.num_partitions = 8 : i32, "quoted.key" = unit} {
// <------ variable.other.enummember.mlir
//     ^^^^^^ entity.name.function.mlir
//            ^^^^^^^^^^ keyword.other.mlir
//                                               ^^^^^^^^^^^^^^^^^^^ variable.other.mlir
//                                                                     ^ constant.numeric.mlir
//                                                                         ^^^ entity.name.type.mlir
//                        ^^^^^^^^^^^^^^^^^^^^^ variable.other.mlir
//                                                                              ^^^^^^^^^^^^ variable.other.mlir
//                                                                                             ^^^^ constant.language.mlir
  func.func public @main(%arg0: tensor<8x?xf32>, %arg1: memref<4x?x!quant.uniform<i8:f32, 0.5>>, %arg2: vector<[4]x4xi1>) -> (tensor<*xbf16>, index) {
// <~~--------- variable.other.enummember.mlir
//          ^^^^^^ keyword.other.mlir
//                 ^^^^^ entity.name.function.mlir
//                       ^^^^^ variable.other.mlir
//                              ^^^^^^ entity.name.type.mlir
//                                     ^ constant.numeric.mlir
//                                       ^ - constant.language.open-dimension.mlir
//                                         ^^^ entity.name.type.mlir
//                                                      ^^^^^^ entity.name.type.mlir
//                                                                 ^^^^^^^^^^^^^^ entity.name.type.mlir
//                                                                                ^^ entity.name.type.mlir
//                                                                                        ^^^ constant.numeric.mlir
//                                                                                                      ^^^^^^ entity.name.type.mlir
//                                                             ^ constant.numeric.mlir
//                                                                                                                   ^^ entity.name.type.mlir
//                                                                                                                        ^^ punctuation.other.mlir
//                                                                                                                                     ^^^^ entity.name.type.mlir
//                                                                                                                                            ^^^^^ entity.name.type.mlir
    %cst = stablehlo.constant dense<[0x7FC00000, -1.5e-3, 42]> : tensor<3xf32>
//  ^^^^ variable.other.mlir
//         ^^^^^^^^^^^^^^^^^^ variable.other.enummember.mlir
//                            ^^^^^ constant.language.mlir
//                                   ^^^^^^^^^^ constant.numeric.mlir
//                                               ^^^^^^^ constant.numeric.mlir
//                                                        ^^ constant.numeric.mlir
    %blob = stablehlo.constant dense<"0xDEADBEEF"> : tensor<1xi32>
//                                   ^^^^^^^^^^^^ string.quoted.double.mlir
    %0:2 = "stablehlo.case"(%idx) ({
//  ^^ variable.other.mlir
//     ^ constant.numeric.mlir
//         ^^^^^^^^^^^^^^^^ variable.other.enummember.mlir
//                          ^^^^ variable.other.mlir
    ^bb0(%x: i32):
//  ^^^^ keyword.control.mlir
//       ^^ variable.other.mlir
      "stablehlo.return"(%x, %0#1) : (i32, i32) -> ()
//    ^^^^^^^^^^^^^^^^^^ variable.other.enummember.mlir
//                           ^^^^ variable.other.mlir
    }) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)
    %1 = stablehlo.custom_call @"quoted sym"(%arg0) {backend_config = "a\22b\n\\", has_side_effect = true} : (tensor<8x?xf32>) -> tensor<8xi32> loc(#loc1)
//       ^^^^^^^^^^^^^^^^^^^^^ variable.other.enummember.mlir
//                             ^^^^^^^^^^^^^ entity.name.function.mlir
//                                                   ^^^^^^^^^^^^^^ variable.other.mlir
//                                                                    ^ string.quoted.double.mlir punctuation.definition.string.begin.mlir
//                                                                      ^^^ string.quoted.double.mlir constant.character.escape.mlir
//                                                                         ^ string.quoted.double.mlir - constant.character.escape.mlir
//                                                                          ^^ string.quoted.double.mlir constant.character.escape.mlir
//                                                                            ^^ string.quoted.double.mlir constant.character.escape.mlir
//                                                                                                   ^^^^ constant.language.mlir
//                                                                                                                                              ^^^^^^^^^^ meta.location.mlir
    %2 = stablehlo.compare  GT, %1, %1,  SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
//                          ^^ keyword.other.mlir
//                                       ^^^^^^ keyword.other.mlir
    return %1, %2 : tensor<8xi32>, tensor<8xi1>
//  ^^^^^^ variable.other.enummember.mlir
  } loc(#loc2)
//  ^^^ meta.location.mlir keyword.other.location.mlir
}
// -----
// <-------- meta.separator.split.mlir comment.line.double-slash.mlir
  // -----  
// <~~-------- meta.separator.split.mlir
// ----- is only a marker on its own line
// <-------- comment.line.double-slash.mlir - meta.separator.split.mlir
func.func private @decl(i64) -> !stablehlo.token
// <--------- variable.other.enummember.mlir
//                      ^^^ entity.name.type.mlir

{-#
// <--- meta.resource.mlir punctuation.section.resource.begin.mlir
  dialect_resources: {
// <~~----------------- meta.resource.mlir variable.other.mlir
    builtin: {
//  ^^^^^^^ meta.resource.mlir variable.other.mlir
      blob1: "0x08000000DEADBEEF"
//    ^^^^^ meta.resource.mlir variable.other.mlir
//           ^^^^^^^^^^^^^^^^^^^^ meta.resource.mlir string.quoted.double.mlir
    }
  }
#-}
// <--- meta.resource.mlir punctuation.section.resource.end.mlir
