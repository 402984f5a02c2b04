//! The op sharding rule registry on data-driven fixtures: every
//! `tests/fixtures/rules/NAME.mlir` (split on `// -----`) lists, for each op inside a
//! function, the rule `rules::rule_for` gives it (the conservative rule too when it
//! differs), compared with `NAME.rules`; `UPDATE_EXPECT=1 cargo test -p sdy-tests
//! --test rules_fixtures` rewrites them. The fixtures were checked against real Shardy
//! (`../shared/oracle/oracle_opt.py FILE -sdy-populate-op-sharding-rules`).
//!
//! Also: the `-sdy-populate-op-sharding-rules` pass through the pass framework
//! (printed module, once-per-process warnings, the post-pass shape error).

use expect_test::{expect, expect_file};
use sdy_analysis::diag::LineIndex;
use sdy_analysis::passes::{parse_pass_flag, Pipeline, Session};
use sdy_analysis::rules::{self, RuleLookup, RuleOptions};
use sdy_tests::{fixtures, mlir_files};

fn lookup_text(l: &RuleLookup) -> String {
    match l {
        RuleLookup::Existing(r) => format!("existing {r}"),
        RuleLookup::Created(r) => r.to_string(),
        RuleLookup::NoRule => "no rule".to_string(),
        RuleLookup::Unknown(u) => format!("unknown: {}", u.message()),
    }
}

/// `LINE:COL name: rule` for every op nested in a function (terminators left out).
fn render(text: &str) -> String {
    let index = LineIndex::new(text);
    let mut out = String::new();
    let split = text.contains("// -----");
    for (n, chunk) in sdy_analysis::parse_chunks(text, split).iter().enumerate() {
        if n > 0 {
            out.push_str("// -----\n");
        }
        let model = sdy_analysis::model::Model::build(chunk);
        let mut ids: Vec<u32> = (0..model.ops.len() as u32).collect();
        ids.sort_by_key(|&id| model.op(id).start);
        for id in ids {
            let op = model.op(id);
            let in_func = model.ancestors(id).any(|a| model.op(a).name() == "func.func");
            if !in_func || rules::registry::is_terminator(op.name()) {
                continue;
            }
            let (l, c) = index.line_col(op.loc());
            let normal = rules::rule_for(&model, id, text, &RuleOptions { conservative: false });
            let conservative =
                rules::rule_for(&model, id, text, &RuleOptions { conservative: true });
            out.push_str(&format!("{l}:{c} {}: {}\n", op.name(), lookup_text(&normal)));
            if conservative != normal {
                out.push_str(&format!("    conservative: {}\n", lookup_text(&conservative)));
            }
        }
    }
    out
}

#[test]
fn rules_fixtures() {
    let inputs = mlir_files(&fixtures("rules"));
    assert!(inputs.len() >= 8, "fixtures missing in {}", fixtures("rules").display());
    for input in inputs {
        let text = std::fs::read_to_string(&input).unwrap();
        expect_file![input.with_extension("rules")].assert_eq(&render(&text));
    }
}

/// Runs `flags` on every chunk of `text` like `sdy-lsp opt` does: the printed modules
/// and the pass diagnostics (`LINE:COL severity: message`, notes indented).
fn run_passes(text: &str, flags: &[&str], print_ops: bool) -> String {
    let mut pipeline = Pipeline::new();
    for f in flags {
        pipeline.add(&parse_pass_flag(f).unwrap()).unwrap();
    }
    let index = LineIndex::new(text);
    let mut session = Session::new(print_ops);
    let mut out = String::new();
    for chunk in sdy_analysis::parse_chunks(text, true) {
        let model = sdy_analysis::model::Model::build(&chunk);
        let run = pipeline.run(text, &chunk, &model, &mut session);
        for d in &run.diagnostics {
            let (l, c) = index.line_col(d.span.start);
            out.push_str(&format!("{l}:{c} {}: {}\n", d.severity.as_str(), d.message));
            for n in &d.notes {
                out.push_str(&format!("    note: {}\n", n.message.replace('\n', "\n    ")));
            }
        }
        if run.failed {
            out.push_str("(failed)\n");
        } else {
            out.push_str(&sdy_analysis::print::print_module(&run.module));
        }
    }
    out
}

#[test]
fn populate_pass_prints_rules_and_warns_once() {
    let src = r#"func.func @f(%arg0: tensor<8x4xf32>, %arg1: tensor<4x2xf32>) -> tensor<8x2xf32> {
  %0 = stablehlo.custom_call @my_target(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %2 = stablehlo.custom_call @other_target(%1) : (tensor<8x2xf32>) -> tensor<8x2xf32>
  return %2 : tensor<8x2xf32>
}
// -----
func.func @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @third_target(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "stablehlo.batch_norm_grad"(%0, %0, %0, %0, %0) {epsilon = 1.0e-03 : f32, feature_index = 0 : i64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %1 : tensor<8xf32>
}
"#;
    expect![[r#"
        2:8 warning: custom call @my_target is unknown to SDY sharding rule registry
        module {
          func.func @f(%arg0: tensor<8x4xf32>, %arg1: tensor<4x2xf32>) -> tensor<8x2xf32> {
            %0 = stablehlo.custom_call @my_target(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
            %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] {sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=2, k=4} reduction={k}>} : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
            %2 = stablehlo.custom_call @other_target(%1) : (tensor<8x2xf32>) -> tensor<8x2xf32>
            return %2 : tensor<8x2xf32>
          }
        }
        10:8 warning: op 'stablehlo.batch_norm_grad' is unknown to SDY sharding rule registry
        module {
          func.func @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {
            %0 = stablehlo.custom_call @third_target(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
            %grad_operand = "stablehlo.batch_norm_grad"(%0, %0, %0, %0, %0) <{epsilon = 1.000000e-03 : f32, feature_index = 0 : i64}> : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
            return %grad_operand : tensor<8xf32>
          }
        }
    "#]]
        .assert_eq(&run_passes(src, &["-sdy-populate-op-sharding-rules"], false));
    // With ops printed on diagnostics (no -verify-diagnostics), the warning has a note.
    let with_note = run_passes(src, &["-sdy-populate-op-sharding-rules"], true);
    assert!(with_note.contains(
        "    note: %0 = stablehlo.custom_call @my_target(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    ));
}

#[test]
fn populate_pass_conservative_and_shape_error() {
    let src = r#"func.func @f(%arg0: tensor<4x6xf32>, %arg1: tensor<4x2xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<4x6xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
// -----
func.func @g(%arg0: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %0 = stablehlo.abs %arg0 : tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}
"#;
    expect![[r#"
        module {
          func.func @f(%arg0: tensor<4x6xf32>, %arg1: tensor<4x2xf32>) -> tensor<4x8xf32> {
            %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, k])->([i, l]) {i=4, j=1, k=1, l=1}>} : (tensor<4x6xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
            return %0 : tensor<4x8xf32>
          }
        }
        7:8 error: 'stablehlo.abs' op operand - expected a ranked tensor with a static shape. type: 'tensor<?x2xf32>'
        (failed)
    "#]]
    .assert_eq(&run_passes(
        src,
        &["-sdy-populate-op-sharding-rules=\"conservative-propagation=true\""],
        false,
    ));
}
