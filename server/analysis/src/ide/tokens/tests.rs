//! Semantic tokens tests: tokens rendered as `line:col len type[.modifiers] text`.
use super::*;
use crate::parse_chunks;
use expect_test::expect;

/// Tokens as `line:col len type[.modifiers] text` lines (0-based, bytes).
fn render(src: &str, toks: &[SemToken]) -> String {
    let mut out = String::new();
    for t in toks {
        let before = &src[..t.span.start as usize];
        let line = before.matches('\n').count();
        let col = t.span.start as usize - before.rfind('\n').map_or(0, |i| i + 1);
        let mut name = t.ty.name().to_string();
        for (bit, m) in MODIFIERS.iter().enumerate() {
            if t.mods & (1 << bit) != 0 {
                name.push('.');
                name.push_str(m);
            }
        }
        let text = t.span.text(src);
        out.push_str(&format!("{line}:{col} {} {name} {text}\n", t.span.len()));
    }
    out
}

fn all(src: &str) -> Vec<SemToken> {
    let chunk = &parse_chunks(src, false)[0];
    let model = Model::build(chunk);
    semantic_tokens(&model, src, Span::new(0, src.len() as u32))
}

fn check_sorted_disjoint_single_line(src: &str, toks: &[SemToken]) {
    for w in toks.windows(2) {
        assert!(w[0].span.end <= w[1].span.start, "{:?} overlaps {:?}", w[0], w[1]);
    }
    for t in toks {
        assert!(!t.span.is_empty());
        assert!(!t.span.text(src).contains('\n'), "multi-line token {t:?}");
    }
}

const SRC: &str = r#"#alias = #sdy.sharding<@mesh, [{"x"}]>
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p1, {"y":(1)2}], replicated={"y":(2)2}>}) -> (tensor<8x8xf32>, i32) {
  %0:2 = call @helper(%arg0) : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>)
  %1 = sdy.sharding_constraint %0#0 <@mesh, [{}, {?}]> : tensor<8x8xf32> // note é
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %3 = stablehlo.add %a, %a {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j],[i, j])->([i, j]) {i=4, j=8}>} : tensor<4x8xf32>
    sdy.return %3 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = stablehlo.constant {attr = 3 : i32} dense<1> : tensor<i32>
  %4 = sdy.propagation_barrier %2 allowed_direction=FORWARD : tensor<8x8xf32>
  return %4, %c : tensor<8x8xf32>, i32
}
"#;

/// Shardings and meshes the parser could not read still show their axes, mesh and
/// priorities; dictionary strings stay strings.
#[test]
fn half_typed_text() {
    let src = r#"sdy.mesh @mesh = <["x"=2, "y"=
func.func @f(%a: tensor<8xf32> {jax.name = "n", sdy.sharding = #sdy.sharding<@mesh, [{"x", "y":(1)}p0, {
"#;
    let toks = all(src);
    check_sorted_disjoint_single_line(src, &toks);
    expect![[r#"
            0:0 8 keyword sdy.mesh
            0:9 5 namespace.declaration @mesh
            0:19 3 property.declaration "x"
            0:23 1 number 2
            0:26 3 property.declaration "y"
            1:0 9 keyword func.func
            1:10 2 function.declaration @f
            1:13 2 variable %a
            1:17 13 type tensor<8xf32>
            1:32 8 decorator jax.name
            1:43 3 string "n"
            1:48 12 decorator sdy.sharding
            1:63 13 decorator #sdy.sharding
            1:77 5 namespace @mesh
            1:86 3 property "x"
            1:91 3 property.subAxis "y"
            1:96 1 number 1
            1:99 2 modifier p0
        "#]]
    .assert_eq(&render(src, &toks));
}

/// Ranges give exactly the whole chunk's tokens that intersect them, on text cut
/// anywhere (half-typed statements) and on a real module when the corpus is there.
#[test]
fn ranges_are_the_whole_restricted() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/tfm_1k.mlir");
    let mut texts: Vec<String> = std::fs::read_to_string(corpus).into_iter().collect();
    for cut in (0..SRC.len()).step_by(7).filter(|&c| SRC.is_char_boundary(c)) {
        texts.push(format!("{}{}", &SRC[..cut], &SRC[cut..].replacen(['{', '>', '"'], "", 1)));
    }
    for src in &texts {
        let chunk = &parse_chunks(src, false)[0];
        let model = Model::build(chunk);
        let whole = semantic_tokens(&model, src, Span::new(0, src.len() as u32));
        check_sorted_disjoint_single_line(src, &whole);
        let len = src.len() as u32;
        let step = (len / 40).max(1);
        for start in (0..len).step_by(step as usize) {
            for width in [1, 40, 300, 5000] {
                let r = Span::new(start, (start + width).min(len));
                let want: Vec<SemToken> =
                    whole.iter().copied().filter(|t| intersects(t.span, r)).collect();
                assert_eq!(semantic_tokens(&model, src, r), want, "range {r:?}");
            }
        }
    }
}

#[test]
fn tokens_of_a_module() {
    let toks = all(SRC);
    check_sorted_disjoint_single_line(SRC, &toks);
    expect![[r#"
            0:0 6 decorator.declaration #alias
            0:9 13 decorator #sdy.sharding
            0:23 5 namespace @mesh
            0:32 3 property "x"
            1:0 8 keyword sdy.mesh
            1:9 5 namespace.declaration @mesh
            1:19 3 property.declaration "x"
            1:23 1 number 2
            1:26 3 property.declaration "y"
            1:30 1 number 4
            2:0 9 keyword func.func
            2:10 5 function.declaration @main
            2:16 5 parameter.declaration %arg0
            2:23 15 type tensor<8x8xf32>
            2:40 12 decorator sdy.sharding
            2:55 13 decorator #sdy.sharding
            2:69 5 namespace @mesh
            2:78 3 property "x"
            2:83 1 operator ?
            2:85 2 modifier p1
            2:90 3 property.subAxis "y"
            2:95 1 number 1
            2:97 1 number 2
            2:102 10 keyword replicated
            2:114 3 property.subAxis "y"
            2:119 1 number 2
            2:121 1 number 2
            2:131 15 type tensor<8x8xf32>
            2:148 3 type i32
            3:2 2 variable.declaration %0
            3:5 1 number 2
            3:9 4 keyword call
            3:14 7 function @helper
            3:22 5 parameter %arg0
            3:32 15 type tensor<8x8xf32>
            3:53 15 type tensor<8x8xf32>
            3:70 13 type tensor<8xf32>
            4:2 2 variable.declaration %1
            4:7 23 keyword sdy.sharding_constraint
            4:31 4 variable %0#0
            4:37 5 namespace @mesh
            4:50 1 operator ?
            4:57 15 type tensor<8x8xf32>
            4:73 10 comment // note é
            5:2 2 variable.declaration %2
            5:7 22 keyword sdy.manual_computation
            5:30 2 variable %1
            5:34 12 keyword in_shardings
            5:49 5 namespace @mesh
            5:58 3 property "x"
            5:70 13 keyword out_shardings
            5:86 5 namespace @mesh
            5:95 3 property "x"
            5:107 11 keyword manual_axes
            5:120 3 property "x"
            5:126 2 parameter.declaration %a
            5:130 15 type tensor<4x8xf32>
            6:4 2 variable.declaration %3
            6:9 13 keyword stablehlo.add
            6:23 2 parameter %a
            6:27 2 parameter %a
            6:31 17 decorator sdy.sharding_rule
            6:51 21 decorator #sdy.op_sharding_rule
            6:75 1 typeParameter i
            6:78 1 typeParameter j
            6:82 1 typeParameter i
            6:85 1 typeParameter j
            6:92 1 typeParameter i
            6:95 1 typeParameter j
            6:100 1 typeParameter i
            6:102 1 number 4
            6:105 1 typeParameter j
            6:107 1 number 8
            6:114 15 type tensor<4x8xf32>
            7:4 10 keyword sdy.return
            7:15 2 variable %3
            7:20 15 type tensor<4x8xf32>
            8:7 15 type tensor<8x8xf32>
            8:27 15 type tensor<8x8xf32>
            9:2 2 variable.declaration %c
            9:7 18 keyword stablehlo.constant
            9:27 4 decorator attr
            9:34 1 number 3
            9:38 3 type i32
            9:43 5 keyword dense
            9:49 1 number 1
            9:54 11 type tensor<i32>
            10:2 2 variable.declaration %4
            10:7 23 keyword sdy.propagation_barrier
            10:31 2 variable %2
            10:34 17 keyword allowed_direction
            10:52 7 enumMember FORWARD
            10:62 15 type tensor<8x8xf32>
            11:2 6 keyword return
            11:9 2 variable %4
            11:13 2 variable %c
            11:18 15 type tensor<8x8xf32>
            11:35 3 type i32
        "#]]
    .assert_eq(&render(SRC, &toks));
}
