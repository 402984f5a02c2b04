//! Propagation in the editor, in-process: the command, inlay hints (fresh, stale, per
//! setting), their tooltips, the hover's "why", code lenses, conflict diagnostics and
//! the propagated module.
mod lsp_common;

use expect_test::expect;
use lsp_common::{capabilities, fixture, pos16, range, render_diagnostics, TestServer, URI};
use serde_json::{json, Value};

async fn start() -> TestServer {
    let mut s = TestServer::new();
    s.initialize(capabilities(&[])).await;
    s
}

async fn command(s: &mut TestServer, name: &str, strategy: &str) -> Result<Value, Value> {
    let args = json!([{"uri": URI, "strategy": strategy}]);
    s.request("workspace/executeCommand", json!({"command": name, "arguments": args})).await
}

async fn propagate(s: &mut TestServer, strategy: &str) -> Value {
    command(s, "sdy.propagate", strategy).await.expect("sdy.propagate failed")
}

async fn hints(s: &mut TestServer, text: &str) -> Value {
    let end = text.lines().count();
    let params = json!({
        "textDocument": {"uri": URI},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": end, "character": 0}}
    });
    s.request("textDocument/inlayHint", params).await.expect("inlayHint failed")
}

/// Hints as `line:col label` lines.
fn render_hints(hints: &Value) -> String {
    let mut out = String::new();
    for h in hints.as_array().expect("hints") {
        let p = &h["position"];
        out.push_str(&format!(
            "{}:{} {}\n",
            p["line"],
            p["character"],
            h["label"].as_str().unwrap()
        ));
    }
    out
}

#[tokio::test]
async fn propagate_then_hints_hover_lenses_and_diagnostics() {
    let mut s = start().await;
    let text = fixture("propagation.mlir");
    let d = s.open_and_wait(&text).await;
    assert_eq!(d["diagnostics"], json!([]));

    // Before any run: the per-device shapes of the written shardings only.
    expect![[r#"
        3:39 per-device 4x16xf32
        3:120 per-device 16x8xf32
        13:42 per-device 4x8xf32
        13:117 per-device 2x8xf32
    "#]]
    .assert_eq(&render_hints(&hints(&mut s, &text).await));

    let answer = propagate(&mut s, "pipeline").await;
    assert_eq!(answer["version"], 1);
    assert_eq!((answer["chunks"].as_u64(), answer["failed"].as_u64()), (Some(2), Some(0)));
    assert!(answer["message"]
        .as_str()
        .unwrap()
        .starts_with("sdy: propagated 2 chunks (pipeline) of version 1"));

    // The run publishes the document's diagnostics again (the conflict's communication
    // is in the hints, hover and lenses, not a diagnostic).
    let (d, _) = s.diagnostics_for(URI, 1).await;
    expect![[r#"
        13:173-13:188 info [sdy] ends up replicated: result 0 of `@conflict`: dimension 0: `{"x", "y"}` not taken: a conflict at `stablehlo.add` (line 15) on factor `i`: operand 0 has `{"x"}` on its dimension 0, operand 1 has `{"y"}` on its dimension 0; this value (result 0, dimension 0) keeps none
    "#]]
    .assert_eq(&render_diagnostics(&d));

    let fresh = hints(&mut s, &text).await;
    expect![[r#"
        3:39 per-device 4x16xf32
        3:120 per-device 16x8xf32
        3:192 [{"x"}, {"y"}]
        3:192 per-device 4x8xf32
        4:4 [{"x"}, {"y"}]
        4:131 per-device 4x8xf32
        5:4 [{"x"}, {"y"}]
        5:45 per-device 4x8xf32
        13:42 per-device 4x8xf32
        13:117 per-device 2x8xf32
        14:51 ⇄ all-slice{"y":(1)2}, collective-permute 64 B, all-gather{"y"} 192 B
    "#]]
    .assert_eq(&render_hints(&fresh));

    // The tooltip explains where the axes come from.
    let sharded = fresh
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["position"] == json!({"line": 4, "character": 4}))
        .unwrap()
        .clone();
    let resolved = s.request("inlayHint/resolve", sharded).await.expect("resolve failed");
    expect![[r#"
        **Propagated** (`pipeline`): `#sdy.sharding<@mesh, [{"x"}, {"y"}]>`

        **Why**:
        - "x" (dimension 0) ← the sharding of argument 0 of `@main` ([line 4](file:///test/a.mlir#L4)), via `stablehlo.dot_general` ([line 5](file:///test/a.mlir#L5)) (op-priority round 2, aggressive)
        - "y" (dimension 1) ← the sharding of argument 1 of `@main` ([line 4](file:///test/a.mlir#L4)), via `stablehlo.dot_general` ([line 5](file:///test/a.mlir#L5)) (op-priority round 2, aggressive)
    "#]]
    .assert_eq(resolved["tooltip"]["value"].as_str().unwrap());

    // Hover on %1: the explanation of the value, then the propagation and why.
    let (line, col) = pos16(&text, "%1 =", 0, 1);
    let h = s.hover(line, col).await.expect("hover failed");
    let md = h["contents"]["value"].as_str().unwrap();
    let why = &md[md.find("**Propagated**").expect("propagation part")..];
    expect![[r#"
        **Propagated** (`pipeline`): `#sdy.sharding<@mesh, [{"x"}, {"y"}]>`

        **Why**:
        - "x" (dimension 0) ← the sharding of argument 0 of `@main` ([line 4](file:///test/a.mlir#L4)), via `stablehlo.dot_general` ([line 5](file:///test/a.mlir#L5)) → `stablehlo.negate` ([line 6](file:///test/a.mlir#L6)) (op-priority round 2, aggressive)
        - "y" (dimension 1) ← the sharding of argument 1 of `@main` ([line 4](file:///test/a.mlir#L4)), via `stablehlo.dot_general` ([line 5](file:///test/a.mlir#L5)) → `stablehlo.negate` ([line 6](file:///test/a.mlir#L6)) (op-priority round 2, aggressive)


        **Memory**

        - 128 B per device (local shape 4x8)"#]].assert_eq(why);

    // Code lenses: one per function, and the state of each chunk.
    let lenses = s
        .request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}))
        .await
        .expect("codeLens failed");
    let mut rendered = String::new();
    for l in lenses.as_array().unwrap() {
        let title = l["command"]["title"].as_str().unwrap();
        let title = title.split(", ").take(2).collect::<Vec<_>>().join(", ");
        rendered.push_str(&format!(
            "{} {} {}\n",
            range(&l["range"]),
            l["command"]["command"],
            title
        ));
    }
    expect![[r#"
        3:0-3:0 "sdy.propagate" Propagate shardings
        3:0-3:0 "sdy.showCommunication" no communication · memory per device: arguments 768 B, results 128 B
        3:0-3:0 "sdy.showPropagatedModule" propagated (v1, pipeline
        13:0-13:0 "sdy.propagate" Propagate shardings
        13:0-13:0 "sdy.showCommunication" 2 collectives, 256 B per device · memory per device: arguments 192 B
        13:0-13:0 "sdy.showPropagatedModule" propagated (v1, pipeline
    "#]]
    .assert_eq(&rendered);

    // An edit in the first chunk: its hints are stale (marked) where the text did not
    // change; the second chunk's stay fresh.
    let (change, text) =
        lsp_common::replace(&text, "%1 = stablehlo.negate", 0, "%1 = stablehlo.abs");
    s.change(URI, 2, json!([change])).await;
    s.diagnostics_for(URI, 2).await;
    expect![[r#"
        3:39 per-device 4x16xf32
        3:120 per-device 16x8xf32
        3:192 [{"x"}, {"y"}] (stale)
        4:4 [{"x"}, {"y"}] (stale)
        5:4 [{"x"}, {"y"}] (stale)
        13:42 per-device 4x8xf32
        13:117 per-device 2x8xf32
        14:51 ⇄ all-slice{"y":(1)2}, collective-permute 64 B, all-gather{"y"} 192 B
    "#]]
    .assert_eq(&render_hints(&hints(&mut s, &text).await));
    let lenses =
        s.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}})).await.unwrap();
    assert!(lenses.to_string().contains("stale: propagated v1"), "{lenses}");

    // The next run re-propagates the edited chunk only; hints are fresh again.
    let answer = propagate(&mut s, "pipeline").await;
    assert_eq!((answer["version"].as_i64(), answer["computed"].as_u64()), (Some(2), Some(1)));
    let again = render_hints(&hints(&mut s, &text).await);
    assert!(!again.contains("(stale)"), "{again}");
    assert!(again.contains("5:4 [{\"x\"}, {\"y\"}]"), "{again}");
}

/// The cost of a run: the collectives Shardy's export inserts for the conflicting op, as
/// a hint after it, in its hover with the reason, in the function's lens, and the module
/// with explicit collectives (`sdy.showCommunication`); memory hints by setting.
#[tokio::test]
async fn communication_hints_hover_lens_and_listing() {
    let mut s = start().await;
    let text = fixture("propagation.mlir");
    s.open_and_wait(&text).await;
    propagate(&mut s, "pipeline").await;
    let only =
        |h: String, c: char| h.lines().filter(|l| l.contains(c)).collect::<Vec<_>>().join("\n");
    expect![[r#"14:51 ⇄ all-slice{"y":(1)2}, collective-permute 64 B, all-gather{"y"} 192 B"#]]
        .assert_eq(&only(render_hints(&hints(&mut s, &text).await), '⇄'));
    let set = json!({"settings": {"sdy": {"inlayHints": {"memory": true}}}});
    s.notify("workspace/didChangeConfiguration", set).await;
    expect![[r#"
        4:131 ▣ 128 B
        5:45 ▣ 128 B
        14:51 ▣ 256 B"#]]
    .assert_eq(&only(render_hints(&hints(&mut s, &text).await), '▣'));

    let (line, col) = pos16(&text, "stablehlo.add", 0, 0);
    let h = s.hover(line, col).await.expect("hover failed");
    let md = h["contents"]["value"].as_str().unwrap();
    expect![[r#"
        **Communication (Shardy's export)**

        - all-slice{"y":(1)2} of `tensor<8x8xf32>`: operand 0 of `stablehlo.add` is sharded `[{"x"}, {}]`, the op computes with `[{"y"}, {}]`; dimension 0 (factor i): {"x"} → {"y"}
        - collective-permute 64 B of `tensor<8x8xf32>`: operand 0 of `stablehlo.add` is sharded `[{"x"}, {}]`, the op computes with `[{"y"}, {}]`; dimension 0 (factor i): {"x"} → {"y"}
        - all-gather{"y"} 192 B of `tensor<8x8xf32>`: `stablehlo.add` computes result 0 sharded `[{"y"}, {}]`, its sharding is `[{}, {}]`; dimension 0 (factor i): {"y"} → {}
        - in all 256 B per device

        **Memory**

        - 256 B per device (local shape 8x8)"#]].assert_eq(&md[md.find("**Communication").expect("communication part")..]);

    let lenses =
        s.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}})).await.unwrap();
    let costs: Vec<String> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["command"]["command"] == "sdy.showCommunication")
        .map(|l| format!("{} {}", range(&l["range"]), l["command"]["title"].as_str().unwrap()))
        .collect();
    expect![[r#"
        3:0-3:0 no communication · memory per device: arguments 768 B, results 128 B, peak ≈ 1.0 KiB
        13:0-13:0 2 collectives, 256 B per device · memory per device: arguments 192 B, results 256 B, peak ≈ 512 B"#]].assert_eq(&costs.join("\n"));

    let shown = command(&mut s, "sdy.showCommunication", "pipeline").await.expect("failed");
    expect![[r#"
        // @main: no communication · memory per device: arguments 768 B, results 128 B, peak ≈ 1.0 KiB
        module {
          sdy.mesh @mesh = <["x"=2, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 4 : i64}]}}
          func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
            %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
            %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x32xf32>
            return %1 : tensor<8x32xf32>
          }
        }
        // -----
        // @conflict: 2 collectives, 256 B per device · memory per device: arguments 192 B, results 256 B, peak ≈ 512 B
        module {
          sdy.mesh @mesh = <["x"=2, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 4 : i64}]}}
          func.func @conflict(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x8xf32> {
            %0 = sdy.all_slice [{"y":(1)2}, {}] %arg0 out_sharding=<@mesh, [{"x", "y":(1)2}, {}]> : tensor<8x8xf32>
            %1 = sdy.collective_permute %0 out_sharding=<@mesh, [{"y"}, {}]> : tensor<8x8xf32>
            %2 = stablehlo.add %1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : tensor<8x8xf32>
            %3 = sdy.all_gather [{"y"}, {}] %2 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
            return %3 : tensor<8x8xf32>
          }
        }
    "#]].assert_eq(shown.as_str().unwrap());
}

#[tokio::test]
async fn show_module_is_what_opt_prints() {
    let mut s = start().await;
    let text = fixture("propagation.mlir");
    s.open_and_wait(&text).await;
    for strategy in ["pipeline", "basic", "aggressive", "op-priority", "user-priority"] {
        let shown = command(&mut s, "sdy.showPropagatedModule", strategy).await.expect("failed");
        let flag = match strategy {
            "pipeline" => "-sdy-propagation-pipeline".to_string(),
            s => format!("-sdy-{s}-propagate"),
        };
        let path = format!("{}/tests/lsp_fixtures/propagation.mlir", env!("CARGO_MANIFEST_DIR"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sdy-lsp"))
            .args(["opt", &path, "-split-input-file", &flag])
            .output()
            .unwrap();
        assert_eq!(shown.as_str().unwrap(), String::from_utf8(out.stdout).unwrap(), "{strategy}");
    }
}

#[tokio::test]
async fn settings_switch_hints_and_modes() {
    let mut s = start().await;
    let text = fixture("propagation.mlir");
    s.open_and_wait(&text).await;
    propagate(&mut s, "pipeline").await;
    let all = render_hints(&hints(&mut s, &text).await);
    assert!(all.contains("per-device") && all.contains("[{\"x\"}, {\"y\"}]"), "{all}");

    let set = |v: Value| json!({"settings": {"sdy": v}});
    s.notify(
        "workspace/didChangeConfiguration",
        set(json!({"inlayHints": {"perDeviceShapes": false}})),
    )
    .await;
    let h = render_hints(&hints(&mut s, &text).await);
    assert!(!h.contains("per-device") && h.contains("[{\"x\"}, {\"y\"}]"), "{h}");

    s.notify(
        "workspace/didChangeConfiguration",
        set(json!({"inlayHints": {"perDeviceShapes": true, "propagatedShardings": false}})),
    )
    .await;
    let h = render_hints(&hints(&mut s, &text).await);
    assert!(h.contains("per-device") && !h.contains("[{\"x\"}, {\"y\"}]"), "{h}");

    // Compact: only the hints of values not sharded like one of their operands.
    s.notify(
        "workspace/didChangeConfiguration",
        set(json!({"inlayHints": {"propagatedShardings": true, "compact": true}})),
    )
    .await;
    let h = render_hints(&hints(&mut s, &text).await);
    assert!(h.lines().count() < all.lines().count(), "compact:\n{h}\nall:\n{all}");
    assert!(h.lines().all(|l| all.lines().any(|a| a == l)), "compact:\n{h}\nall:\n{all}");
    assert!(h.contains("[{\"x\"}, {\"y\"}]"), "{h}");
    s.notify("workspace/didChangeConfiguration", set(json!({"inlayHints": {"compact": false}})))
        .await;
    assert_eq!(render_hints(&hints(&mut s, &text).await), all);

    s.notify("workspace/didChangeConfiguration", set(json!({"inlayHints": {"enable": false}})))
        .await;
    assert_eq!(hints(&mut s, &text).await, json!([]));

    s.notify("workspace/didChangeConfiguration", set(json!({"propagation": {"mode": "off"}})))
        .await;
    let answer = propagate(&mut s, "pipeline").await;
    assert!(answer["message"].as_str().unwrap().contains("propagation is off"), "{answer}");

    // onChange: an edit triggers a run (debounced), and the diagnostics come again.
    s.notify("workspace/didChangeConfiguration", set(json!({"propagation": {"mode": "onChange"}, "inlayHints": {"enable": true, "propagatedShardings": true}}))).await;
    let (change, text) = lsp_common::replace(&text, "stablehlo.negate", 0, "stablehlo.abs");
    s.change(URI, 2, json!([change])).await;
    s.diagnostics_for(URI, 2).await;
    // The run publishes the diagnostics of version 2 once more.
    s.diagnostics_for(URI, 2).await;
    let h = render_hints(&hints(&mut s, &text).await);
    assert!(!h.contains("(stale)") && h.contains("5:4 [{\"x\"}, {\"y\"}]"), "{h}");
}

#[tokio::test]
async fn bad_arguments_and_unknown_commands() {
    let mut s = start().await;
    s.open_and_wait(&fixture("propagation.mlir")).await;
    let e = command(&mut s, "sdy.propagate", "sideways").await.unwrap_err();
    assert_eq!(e["code"], -32602);
    assert!(e["message"].as_str().unwrap().contains("unknown strategy"), "{e}");
    let e = s
        .request("workspace/executeCommand", json!({"command": "sdy.nothing", "arguments": []}))
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32602);
    // A document that is not open.
    let args = json!([{"uri": "file:///nowhere.mlir"}]);
    let r = s
        .request("workspace/executeCommand", json!({"command": "sdy.propagate", "arguments": args}))
        .await
        .unwrap();
    assert!(r["message"].as_str().unwrap().contains("not open"), "{r}");
}

#[tokio::test]
async fn a_chunk_with_errors_is_reported_not_propagated() {
    let mut s = start().await;
    let text = "sdy.mesh @mesh = <[\"x\"=2]>\nfunc.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"z\"}]>}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n";
    s.open_and_wait(text).await;
    let answer = propagate(&mut s, "pipeline").await;
    assert_eq!(answer["failed"], 1, "{answer}");
    let shown = command(&mut s, "sdy.showPropagatedModule", "pipeline").await.unwrap();
    assert!(shown.as_str().unwrap().starts_with("// sdy-lsp: propagation failed:"), "{shown}");
    let lenses =
        s.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}})).await.unwrap();
    assert!(lenses.to_string().contains("propagation failed"), "{lenses}");
}

/// A written open sharding that propagation extends, and a conflict.
const EXTEND: &str = r#"sdy.mesh @mesh = <["x"=2, "y"=4]>

func.func @extend(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}]>]>} : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

func.func @conflict(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"#;

#[tokio::test]
async fn extension_hints_conflict_hover_and_the_strategy_setting() {
    let mut s = start().await;
    s.open_and_wait(EXTEND).await;
    // The command without a strategy runs the one of the settings.
    let set = json!({"settings": {"sdy": {"propagation": {"strategy": "basic"}}}});
    s.notify("workspace/didChangeConfiguration", set).await;
    let args = json!([{"uri": URI}]);
    let answer = s
        .request("workspace/executeCommand", json!({"command": "sdy.propagate", "arguments": args}))
        .await
        .unwrap();
    assert_eq!(answer["strategy"], "basic", "{answer}");
    // `→` after the written shardings propagation extended (an open dimension).
    expect![[r#"
        2:40 per-device 4x2xf32
        2:94 → [{"x", ?}, {"y", ?}]
        2:119 per-device 8x2xf32
        3:4 [{?}, {"y", ?}]
        3:51 per-device 8x2xf32
        3:51 ⇄ all-slice{"x"}, all-gather{"x"} 32 B
        4:84 → [{?}, {"y", ?}]
        4:105 per-device 8x2xf32
        5:29 ⇄ all-gather{"y"} 192 B
        8:42 per-device 4x8xf32
        8:117 per-device 2x8xf32
        9:51 ⇄ all-slice{"y":(1)2}, collective-permute 64 B, all-gather{"y"} 192 B
    "#]]
    .assert_eq(&render_hints(&hints(&mut s, EXTEND).await));
    // Each kind has its setting: extensions off leaves the others.
    let off = json!({"settings": {"sdy": {"inlayHints": {"extensions": false}}}});
    s.notify("workspace/didChangeConfiguration", off).await;
    let h = render_hints(&hints(&mut s, EXTEND).await);
    assert!(
        !h.contains('→') && h.contains("3:4 [{?}, {\"y\", ?}]") && h.contains("per-device"),
        "{h}"
    );
    // The hover on the conflicting add: the axes dropped, the sources, where to look.
    let (line, col) = pos16(EXTEND, "%0 = stablehlo.add", 1, 1);
    let h = s.hover(line, col).await.expect("hover failed");
    let md = h["contents"]["value"].as_str().unwrap();
    expect![[r#"
        **Propagated** (`basic`): no sharding

        **Conflicts**:
        - at `stablehlo.add` ([line 10](file:///test/a.mlir#L10)), as its result 0 (dimension 0): "x", "y" dropped on factor `i` (operand 0 (`%arg0`, [line 9](file:///test/a.mlir#L9)) has `{"x"}` on its dimension 0, operand 1 (`%arg1`, [line 9](file:///test/a.mlir#L9)) has `{"y"}` on its dimension 0); kept none

        **At its op**:
        - at `stablehlo.add` ([line 10](file:///test/a.mlir#L10)), as its operand 0 (dimension 0): "y" dropped on factor `i` (operand 0 (`%arg0`, [line 9](file:///test/a.mlir#L9)) has `{"x"}` on its dimension 0, operand 1 (`%arg1`, [line 9](file:///test/a.mlir#L9)) has `{"y"}` on its dimension 0); kept `{"x"}`
        - at `stablehlo.add` ([line 10](file:///test/a.mlir#L10)), as its operand 1 (dimension 0): "x" dropped on factor `i` (operand 0 (`%arg0`, [line 9](file:///test/a.mlir#L9)) has `{"x"}` on its dimension 0, operand 1 (`%arg1`, [line 9](file:///test/a.mlir#L9)) has `{"y"}` on its dimension 0); kept `{"y"}`


        **Memory**

        - 256 B per device (local shape 8x8)"#]].assert_eq(&md[md.find("**Propagated**").expect("propagation part")..]);
}

#[tokio::test]
async fn hints_for_the_visible_range_only() {
    let mut s = start().await;
    let text = fixture("propagation.mlir");
    s.open_and_wait(&text).await;
    propagate(&mut s, "pipeline").await;
    let params = json!({
        "textDocument": {"uri": URI},
        "range": {"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 0}}
    });
    let h = s.request("textDocument/inlayHint", params).await.unwrap();
    expect![[r#"
        4:4 [{"x"}, {"y"}]
        4:131 per-device 4x8xf32
    "#]]
    .assert_eq(&render_hints(&h));
}

#[tokio::test]
async fn modes_on_demand_and_on_save() {
    let mut s = start().await;
    let text = fixture("propagation.mlir");
    s.open_and_wait(&text).await;
    let sharded = |h: &str| h.lines().filter(|l| l.contains("[{")).count();
    // onDemand (the default): an edit does not run propagation.
    let (change, text) = lsp_common::replace(&text, "stablehlo.negate", 0, "stablehlo.abs");
    s.change(URI, 2, json!([change])).await;
    s.diagnostics_for(URI, 2).await;
    assert!(s.quiet_for(800).await.is_none(), "onDemand ran on an edit");
    assert_eq!(sharded(&render_hints(&hints(&mut s, &text).await)), 0);

    // onSave: a save runs it (and publishes the diagnostics again with its results).
    let set = json!({"settings": {"sdy": {"propagation": {"mode": "onSave"}}}});
    s.notify("workspace/didChangeConfiguration", set).await;
    let (change, text) = lsp_common::replace(&text, "stablehlo.abs", 0, "stablehlo.negate");
    s.change(URI, 3, json!([change])).await;
    s.diagnostics_for(URI, 3).await;
    assert!(s.quiet_for(800).await.is_none(), "onSave ran on an edit");
    s.notify("textDocument/didSave", json!({"textDocument": {"uri": URI}})).await;
    s.diagnostics_for(URI, 3).await;
    let h = render_hints(&hints(&mut s, &text).await);
    assert!(sharded(&h) > 0 && !h.contains("(stale)") && h.contains('⇄'), "{h}");
}

/// `onChange`: a burst of edits, each within the debounce of the one before, runs
/// propagation once, after the burst, on its last version. Each run that lands asks the
/// client to refresh its inlay hints: the count of those requests is the count of runs.
#[tokio::test]
async fn on_change_runs_once_after_a_burst_on_its_last_version() {
    let mut caps = capabilities(&[]);
    caps["workspace"] = json!({"inlayHint": {"refreshSupport": true}});
    let on_change = json!({"propagation": {"mode": "onChange"}});
    let mut s = TestServer::new();
    let init = json!({"capabilities": caps, "initializationOptions": on_change});
    s.request("initialize", init).await.expect("initialize failed");
    s.notify("initialized", json!({})).await;
    let original = fixture("propagation.mlir");
    s.open_and_wait(&original).await;
    // The run on open.
    s.wait_for("workspace/inlayHint/refresh").await;
    let first = render_hints(&hints(&mut s, &original).await);

    // Five edits toggling a written sharding, 20 ms apart (the debounce is 400 ms).
    let (with_y, without_y) = ("[{}, {\"y\"}]", "[{}, {}]");
    let mut text = original.clone();
    for version in 2..=6 {
        let (from, to) = if version % 2 == 0 { (with_y, without_y) } else { (without_y, with_y) };
        let (change, next) = lsp_common::replace(&text, from, 0, to);
        text = next;
        s.change(URI, version, json!([change])).await;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (_, before) = s.wait_for("workspace/inlayHint/refresh").await;
    // Every version was analysed and published before the one run; none after it.
    let published: Vec<i64> = before
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .map(|m| m["params"]["version"].as_i64().unwrap())
        .collect();
    assert_eq!(published.last(), Some(&6), "{published:?}");
    while let Some(m) = s.quiet_for(1500).await {
        assert_ne!(m["method"], "workspace/inlayHint/refresh", "a second run: {m}");
    }

    // Its results are those of the last version: what a fresh server propagates there.
    let after = render_hints(&hints(&mut s, &text).await);
    let mut fresh = start().await;
    fresh.open_and_wait(&text).await;
    propagate(&mut fresh, "pipeline").await;
    assert_eq!(after, render_hints(&hints(&mut fresh, &text).await));
    assert_ne!(after, first, "the last edit changes the propagated shardings");
    assert!(!after.contains("(stale)"), "{after}");
}

/// Waits for a `window/logMessage` containing `needle`.
async fn log_containing(s: &mut TestServer, needle: &str) -> String {
    loop {
        let (p, _) = s.wait_for("window/logMessage").await;
        let m = p["message"].as_str().unwrap_or_default().to_string();
        if m.contains(needle) {
            return m;
        }
    }
}

/// `$/cancelRequest` of `sdy.propagate` stops its run at the next pause point. The test
/// hook holds the run of a marked document at its first pause point until the run is
/// told to stop, so the cancellation deterministically arrives mid-run; if it did not
/// stop the run, the run would hold the propagation thread and the next run (of another
/// document) would never answer.
#[tokio::test]
async fn a_cancelled_run_stops_and_the_next_one_runs() {
    let mut s = start().await;
    let text = fixture("propagation.mlir");
    let marked = format!("// {}\n{text}", sdy_lsp::lsp::propagate::TEST_HOLD_MARKER);
    let other = "file:///test/b.mlir";
    s.open(URI, 1, &marked).await;
    s.diagnostics_for(URI, 1).await;
    s.open(other, 1, &text).await;
    s.diagnostics_for(other, 1).await;

    let run = |uri: &str| json!({"command": "sdy.propagate", "arguments": [{"uri": uri}]});
    let (id, answer) = s.send("workspace/executeCommand", run(URI)).await;
    log_containing(&mut s, "test: holding the propagation").await;
    s.notify("$/cancelRequest", json!({"id": id})).await;
    let answer = answer.await.expect("the answer");
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    log_containing(&mut s, "was cancelled").await;

    let next = s.request("workspace/executeCommand", run(other)).await.expect("sdy.propagate");
    assert!(next["message"].as_str().unwrap().starts_with("sdy: propagated "), "{next}");
    // The cancelled run left no result: the marked document has none.
    let h = render_hints(&hints(&mut s, &marked).await);
    assert!(!h.contains('['), "{h}");
}

/// The bandwidth setting adds estimated times to the communication hint and lens, and
/// the hover on a function's `@name` details its cost.
#[tokio::test]
async fn bandwidth_times_and_the_function_hover() {
    let mut s = start().await;
    let text = fixture("propagation.mlir");
    s.open_and_wait(&text).await;
    propagate(&mut s, "pipeline").await;
    let set = json!({"settings": {"sdy": {"cost": {"bandwidth": {"y": 2, "*": 0.5}}}}});
    s.notify("workspace/didChangeConfiguration", set).await;
    let only = |h: String| h.lines().filter(|l| l.contains('⇄')).collect::<Vec<_>>().join("\n");
    expect![[r#"14:51 ⇄ all-slice{"y":(1)2}, collective-permute 64 B ≈ 128.0 ns, all-gather{"y"} 192 B ≈ 96.0 ns"#]].assert_eq(&only(render_hints(&hints(&mut s, &text).await)));
    let lenses =
        s.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}})).await.unwrap();
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["command"]["command"] == "sdy.showCommunication")
        .map(|l| l["command"]["title"].as_str().unwrap())
        .collect();
    expect![[r#"
        no communication · memory per device: arguments 768 B, results 128 B, peak ≈ 1.0 KiB
        2 collectives, 256 B per device ≈ 224.0 ns · memory per device: arguments 192 B, results 256 B, peak ≈ 512 B"#]].assert_eq(&titles.join("\n"));

    let (line, col) = pos16(&text, "@conflict", 0, 1);
    let h = s.hover(line, col).await.expect("hover failed");
    expect![[r#"
        **Cost of `@conflict`** (per device, after Shardy's export)

        Communication: 2 collectives, 256 B ≈ 224.0 ns
        - 1 × collective-permute: 64 B ≈ 128.0 ns
        - 1 × all-gather: 192 B ≈ 96.0 ns
        - all-slices are local: no bytes moved

        Memory:
        - arguments: 192 B (`%arg0` 128 B, `%arg1` 64 B)
        - results: 256 B (result 0 256 B)
        - peak ≈ 512 B (arguments, and each value from its definition to its last use over the op order; no buffer reuse)
    "#]].assert_eq(h["contents"]["value"].as_str().unwrap());
    expect!["13:10-13:19"].assert_eq(&range(&h["range"]));
}
