//! Tests of the editor's propagation on small modules.

use super::*;
use expect_test::expect;

fn run(text: &str, strategy: Strategy) -> (crate::ChunkAnalysis, ChunkPropagation) {
    let chunk = crate::parse_chunks(text, false).remove(0);
    let a = crate::analyze_chunk(text, &chunk);
    let p = propagate(text, &chunk, &a.model, &a.diagnostics, strategy);
    (a, p)
}

const MLP: &str = r#"sdy.mesh @mesh = <["x"=2, "y"=4]>

func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.negate %0 : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}
"#;

#[test]
fn values_and_hints() {
    let (a, p) = run(MLP, Strategy::UserPriority);
    assert!(!p.failed, "{:?}", p.diagnostics);
    let mut out = String::new();
    for v in &p.values {
        let inferred: Vec<String> = v
            .inferred
            .iter()
            .map(|x| x.sharding.as_ref().map_or("-".into(), |s| s.to_string()))
            .collect();
        out.push_str(&format!(
            "{:?} written={} inferred={} origins={}\n",
            v.site,
            v.written.as_ref().map_or("-".into(), |s| s.to_string()),
            inferred.join("|"),
            p.origins(v).len()
        ));
    }
    for h in hints::propagated(&a.model, &p, &p.meshes) {
        let line = MLP[..h.offset as usize].matches('\n').count() + 1;
        let follows = if h.follows_operand { " (follows an operand)" } else { "" };
        out.push_str(&format!("hint line {line} {:?} {}{follows}\n", h.kind, h.label));
    }
    expect![[r#"
        Arg { func: 35, index: 0 } written=<@mesh, [{"x", ?}, {?}]> inferred=<@mesh, [{"x", ?}, {?}]> origins=1
        Arg { func: 35, index: 1 } written=<@mesh, [{}, {"y"}]> inferred=<@mesh, [{}, {"y"}]> origins=1
        Result { func: 35, index: 0 } written=- inferred=<@mesh, [{"x", ?}, {"y", ?}]> origins=2
        OpResult { op: 232, index: 0 } written=- inferred=<@mesh, [{"x", ?}, {"y", ?}]> origins=2
        OpResult { op: 364, index: 0 } written=- inferred=<@mesh, [{"x", ?}, {"y", ?}]> origins=2
        hint line 3 Shape per-device 4x16xf32
        hint line 3 Shape per-device 16x8xf32
        hint line 3 Sharding [{"x", ?}, {"y", ?}]
        hint line 3 Shape per-device 4x8xf32
        hint line 4 Sharding [{"x", ?}, {"y", ?}]
        hint line 4 Shape per-device 4x8xf32
        hint line 5 Sharding [{"x", ?}, {"y", ?}] (follows an operand)
        hint line 5 Shape per-device 4x8xf32 (follows an operand)
    "#]].assert_eq(&out);
}

#[test]
fn printed_equals_opt() {
    for s in Strategy::ALL {
        let (_, p) = run(MLP, s);
        let chunk = crate::parse_chunks(MLP, false).remove(0);
        let a = crate::analyze_chunk(MLP, &chunk);
        let mut pipeline = crate::passes::Pipeline::new();
        let spec = crate::passes::parse_pass_flag(&format!("-{}", s.flag())).unwrap();
        pipeline.add(&spec).unwrap();
        let mut session = crate::passes::Session::new(true);
        let run = pipeline.run(MLP, &chunk, &a.model, &mut session);
        assert!(!run.failed);
        assert_eq!(p.printed(), crate::print::print_module(&run.module), "{s:?}");
    }
}

#[test]
fn a_chunk_with_errors_is_not_run() {
    let (_, p) = run(
        "func.func @f(%a: tensor<2xf32>) {\n  return %b : tensor<2xf32>\n}\n",
        Strategy::Pipeline,
    );
    assert!(p.failed);
    assert_eq!(p.printed(), "");
    assert!(!p.diagnostics.is_empty());
}
