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

/// A function of `n` chained `stablehlo.add`s from a sharded argument.
fn chain(n: usize) -> String {
    let mut s = String::from("sdy.mesh @mesh = <[\"x\"=2]>\n\nfunc.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<8xf32> {\n");
    for i in 0..n {
        let prev = if i == 0 { "%arg0".to_string() } else { format!("%{}", i - 1) };
        s.push_str(&format!("  %{i} = stablehlo.add {prev}, {prev} : tensor<8xf32>\n"));
    }
    s.push_str(&format!("  return %{} : tensor<8xf32>\n}}\n", n - 1));
    s
}

#[test]
fn the_walks_of_a_chain_share_their_hops() {
    // Each op's walk is its operand's plus one hop, in the same storage: the run keeps
    // one hop per op, not one per op and predecessor (which was quadratic).
    let n = 300;
    let text = chain(n);
    let (a, p) = run(&text, Strategy::Pipeline);
    assert!(!p.failed, "{:?}", p.diagnostics);
    let walks: Vec<_> = p
        .values
        .iter()
        .filter(|v| matches!(v.site, Site::OpResult { .. }))
        .map(|v| p.origins(v).into_iter().find(|o| o.axis.name == "x").expect("x").hops)
        .collect();
    assert_eq!(walks.len(), n);
    for (i, w) in walks.iter().enumerate() {
        assert_eq!(w.len(), i + 1);
        if i > 0 {
            assert!(w.extends(&walks[i - 1]), "the walk of op {i} copies its operand's");
        }
    }
    // The hover shows the first hops and counts the rest.
    let last = p.values.iter().rfind(|v| matches!(v.site, Site::OpResult { .. })).unwrap();
    let why = crate::explain::why::explain(&a.model, &text, &p, last, false, &|_| None);
    assert!(why.contains(&format!("({} more)", n - 12)), "{why}");
}

#[test]
fn a_stopped_run_stops_at_once() {
    let text = chain(50);
    let chunk = crate::parse_chunks(&text, false).remove(0);
    let a = crate::analyze_chunk(&text, &chunk);
    // Count the pause points of a whole run, then stop runs at each of the first ones:
    // after the stop, no pause point is reached again, and there is no result.
    let calls = std::cell::Cell::new(0usize);
    let count = || {
        calls.set(calls.get() + 1);
        Flow::Go
    };
    for s in Strategy::ALL {
        calls.set(0);
        let full = propagate_with(&text, &chunk, &a.model, &a.diagnostics, s, &count);
        assert!(full.is_ok_and(|p| !p.failed));
        let total = calls.get();
        assert!(total > 50, "{s:?}: {total} pause points");
        for stop_at in [1, 2, total / 2, total] {
            calls.set(0);
            let stop = || {
                calls.set(calls.get() + 1);
                if calls.get() >= stop_at {
                    Flow::Stop
                } else {
                    Flow::Go
                }
            };
            let r = propagate_with(&text, &chunk, &a.model, &a.diagnostics, s, &stop);
            assert!(r.is_err(), "{s:?}: stopped at {stop_at} but finished");
            assert_eq!(calls.get(), stop_at, "{s:?}: went on after the stop at {stop_at}");
        }
    }
}
