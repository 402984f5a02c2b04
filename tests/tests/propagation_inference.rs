//! The editor API of propagation (`sdy_analysis::propagation::inference`): the inferred
//! sharding of each value, where each axis comes from (source, hops, priority) and the
//! axes conflicts kept away.

use sdy_analysis::propagation::editor::Site;
use sdy_analysis::propagation::inference::{infer, InferOptions, Source, ValueReport};
use sdy_analysis::propagation::{Strategy, StrategyOption};

fn run(src: &str, opts: InferOptions) -> Vec<ValueReport> {
    let chunk = &sdy_analysis::parse_chunks(src, false)[0];
    let model = sdy_analysis::model::Model::build(chunk);
    let inf = infer(src, chunk, &model, &opts);
    assert!(inf.failure.is_none());
    inf.values
}

/// The result of the op whose line (in `src`) names `name`.
fn result_of<'a>(values: &'a [ValueReport], src: &str, name: &str) -> &'a ValueReport {
    let line = |op: u32| src[op as usize..].lines().next().unwrap_or("").contains(name);
    values
        .iter()
        .find(|v| matches!(v.site, Site::OpResult { op, .. } if line(op)))
        .unwrap_or_else(|| panic!("no {name}"))
}

fn axes(v: &ValueReport) -> String {
    v.inferred.as_ref().map(|s| s.to_string()).unwrap_or_default()
}

#[test]
fn origins_and_hops() {
    let src = r#"sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
"#;
    let values = run(src, InferOptions::default());
    let dot = result_of(&values, src, "stablehlo.dot_general");
    assert_eq!(axes(dot), r#"<@mesh, [{"a", ?}, {"b", ?}]>"#);
    let a = dot.axes.iter().find(|o| o.axis.name == "a").unwrap();
    assert_eq!(a.source, Source::FuncArg { func: "main".into(), index: 0 });
    let hops: Vec<&str> = a.hops.iter().map(|h| h.op_name.as_str()).collect();
    assert_eq!(hops, ["stablehlo.add", "stablehlo.dot_general"]);
    assert!(a.hops.iter().all(|h| h.op.is_some()));
    let b = dot.axes.iter().find(|o| o.axis.name == "b").unwrap();
    assert_eq!(b.source, Source::FuncArg { func: "main".into(), index: 1 });
    assert_eq!(b.hops.len(), 1);
    let first = b.hops.first().expect("a hop");
    assert_eq!((first.from.result, first.from.index), (false, 1));
    // The function result gets the dot's sharding from the return.
    let ret = values.iter().find(|v| matches!(v.site, Site::Result { .. })).unwrap();
    assert!(ret.written.is_none());
    assert_eq!(axes(ret), r#"<@mesh, [{"a", ?}, {"b", ?}]>"#);
}

#[test]
fn conflicts_are_reported() {
    let src = r#"sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"#;
    let opts = InferOptions {
        level: Strategy::Basic,
        strategy: StrategyOption::Basic,
        conservative: false,
    };
    let values = run(src, opts);
    let add = result_of(&values, src, "stablehlo.add");
    assert!(add.inferred.is_none(), "basic propagation gives nothing on a conflict");
    let c = &add.conflicts[0];
    assert_eq!(c.op_name, "stablehlo.add");
    let dropped: Vec<String> = c.dropped.iter().map(|a| a.to_string()).collect();
    assert_eq!(dropped, ["\"a\"", "\"b\""]);
    assert_eq!(c.sources.len(), 2);
    // Two factors competing for one axis in a dot: the aggressive strategy gives it to
    // the factor of the larger tensor and reports the other.
    let src = r#"sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<256x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x256xf32>, tensor<256x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"#;
    let values = run(src, InferOptions::default());
    let dot = result_of(&values, src, "stablehlo.dot_general");
    assert_eq!(axes(dot), r#"<@mesh, [{"a", ?}, {?}]>"#);
    assert!(dot.axes.iter().all(|o| o.source == Source::FuncArg { func: "main".into(), index: 0 }));
    let c = dot.conflicts.iter().find(|c| c.op_name == "stablehlo.dot_general").unwrap();
    assert_eq!(c.dropped.len(), 1);
    assert_eq!(c.dropped[0].name, "a");
    assert!(c.sources.iter().any(|(n, _)| !n.result && n.index == 1));
}

#[test]
fn priorities_and_constraints() {
    let src = r#"sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1, {?}]>},
                %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.sharding_constraint %arg1 <@mesh, [{?}, {"c", ?}]> : tensor<8x8xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"#;
    let values = run(src, InferOptions::default());
    let add = result_of(&values, src, "stablehlo.add");
    assert_eq!(axes(add), r#"<@mesh, [{"a", ?}, {"c", ?}]>"#);
    let a = add.axes.iter().find(|o| o.axis.name == "a").unwrap();
    assert_eq!(a.priority, 1);
    assert_eq!(a.hops.last().unwrap().phase.user_priority, 1);
    let c = add.axes.iter().find(|o| o.axis.name == "c").unwrap();
    assert!(matches!(c.source, Source::Constraint { op: Some(_) }));
    assert_eq!(c.hops.last().unwrap().phase.user_priority, 0);
}

#[test]
fn data_flow_edges_and_manual_computations() {
    let src = r#"sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<8x8xf32>) {
    %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
"#;
    let values = run(src, InferOptions::default());
    let arg = values.iter().find(|v| matches!(v.site, Site::Arg { index: 0, .. })).unwrap();
    assert_eq!(axes(arg), r#"<@mesh, [{"b", "a", ?}, {?}]>"#);
    let a = arg.axes.iter().find(|o| o.axis.name == "a").unwrap();
    assert!(matches!(a.source, Source::OpSharding { op: Some(_), index: 0 }));
    assert!(a.hops.iter().any(|h| h.op_name == "sdy.data_flow_edge"));
}
