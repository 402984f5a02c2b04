//! Completion on half-typed text, in UTF-16 positions, with and without snippets.
mod lsp_common;

use expect_test::expect;
use lsp_common::{capabilities, fixture, pos16, range, replace, TestServer, URI};
use serde_json::{json, Value};

/// A client that offers snippets.
fn snippet_client() -> Value {
    let mut caps = capabilities(&[]);
    caps["textDocument"]["completion"] = json!({"completionItem": {"snippetSupport": true}});
    caps
}

/// One line per item: `label [kind] detail | range -> newText`, snippets marked `(snippet)`.
fn render(r: &Value) -> String {
    if r.is_null() {
        return "null\n".into();
    }
    let mut out = String::new();
    if r["isIncomplete"] == true {
        out.push_str("(incomplete)\n");
    }
    for i in r["items"].as_array().expect("items") {
        let kind = match i["kind"].as_u64() {
            Some(3) => "function",
            Some(5) => "field",
            Some(6) => "variable",
            Some(9) => "module",
            Some(10) => "property",
            Some(14) => "keyword",
            Some(21) => "constant",
            Some(24) => "operator",
            _ => "?",
        };
        let edit = &i["textEdit"];
        let snippet = if i["insertTextFormat"] == 2 { " (snippet)" } else { "" };
        out.push_str(&format!(
            "{} [{kind}] {} | {} -> {:?}{snippet}\n",
            i["label"].as_str().unwrap_or(""),
            i["detail"].as_str().unwrap_or("-"),
            range(&edit["range"]),
            edit["newText"].as_str().unwrap_or("")
        ));
    }
    out
}

/// Resets the document to `original` (new version), replaces the `nth` `from` by `to`
/// (another version, an incremental change), then asks for completions right after
/// `cursor_after` in the inserted text.
async fn edit_and_complete(
    s: &mut TestServer,
    original: &str,
    version: i64,
    (from, nth, to): (&str, usize, &str),
    cursor_after: &str,
) -> String {
    s.change(URI, version, json!([{"text": original}])).await;
    let (change, text) = replace(original, from, nth, to);
    s.change(URI, version + 1, json!([change])).await;
    let at = lsp_common::find(&text, to, 0) + lsp_common::find(to, cursor_after, 0);
    let (line, character) = lsp_common::position16(&text, at + cursor_after.len());
    let p =
        json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}});
    render(&s.request("textDocument/completion", p).await.expect("completion failed"))
}

#[tokio::test]
async fn completes_half_typed_text() {
    let mut s = TestServer::new();
    s.initialize(snippet_client()).await;
    let text = fixture("completion.mlir");
    s.open_and_wait(&text).await;
    let t = &text;

    // A sharding being typed on a function argument, after "é😀" on the same line: the
    // range replaces the auto-closed `""` in UTF-16 columns.
    let typed = "{jax.name = \"é😀\", sdy.sharding = #sdy.sharding<@mesh, [{\"\"";
    let got = edit_and_complete(&mut s, t, 2, ("{jax.name = \"é😀\"", 0, typed), "[{\"").await;
    expect![[r#"
        "x" [field] size 2 · @mesh | 3:96-3:98 -> "\"x\""
        "y" [field] size 4 · @mesh | 3:96-3:98 -> "\"y\""
        "z" [field] size 2 · @mesh | 3:96-3:98 -> "\"z\""
        ? [operator] open dimension | 3:96-3:98 -> "?"
    "#]]
    .assert_eq(&got);

    // The mesh name after `<@`, in an entry of in_shardings (the rest of the line
    // does not parse any more).
    let typed = "in_shardings=[<@me";
    let got = edit_and_complete(&mut s, t, 4, ("in_shardings=[", 0, typed), typed).await;
    expect![[r#"
        @mesh [module] <["x"=2, "y"=4, "z"=2]> · 16 devices | 5:49-5:52 -> "@mesh"
        @other [module] <["a"=8]> · 8 devices | 5:49-5:52 -> "@other"
    "#]]
    .assert_eq(&got);

    // SSA values inside the manual computation: its own only (isolated from above).
    let typed = "    %3 = stablehlo.add %2, %\n    sdy.return";
    let got = edit_and_complete(&mut s, t, 6, ("    sdy.return", 0, typed), "%2, %").await;
    expect![[r#"
        %2 [variable] tensor<4x8xf32> | 7:27-7:28 -> "%2"
        %l [variable] tensor<4x8xf32> | 7:27-7:28 -> "%l"
    "#]]
    .assert_eq(&got);

    // An op name in the second chunk, and that chunk's mesh in its snippet.
    let typed = "  %c = sdy.resh\n  return";
    let got = edit_and_complete(&mut s, t, 8, ("  return %b", 0, typed), "sdy.resh").await;
    expect![[r#"
        sdy.sharding_constraint [function] sdy.sharding_constraint %x <@mesh, [...]> : type | 14:7-14:15 -> "sdy.sharding_constraint ${1:%x} <@${2:m2}, [$3]> : ${4:type}" (snippet)
        sdy.reshard [function] sdy.reshard %x <@mesh, [...]> : type | 14:7-14:15 -> "sdy.reshard ${1:%x} <@${2:m2}, [$3]> : ${4:type}" (snippet)
        sdy.manual_computation [function] sdy.manual_computation(%x) in_shardings=[...] out_shardings=[...] manual_axes={...} (%arg: local type) { ... } : (type) -> type | 14:7-14:15 -> "sdy.manual_computation(${1:%x}) in_shardings=[<@${2:m2}, [$3]>] out_shardings=[<@${2:m2}, [$4]>] manual_axes={$5} (${6:%arg0}: ${7:local_type}) {\n  $0\n  sdy.return ${6:%arg0} : ${7:local_type}\n} : (${8:type}) -> ${9:type}" (snippet)
        sdy.named_computation [function] sdy.named_computation<"name">(%x) (%arg: type) { ... } : (type) -> type | 14:7-14:15 -> "sdy.named_computation<\"${1:name}\">(${2:%x}) (${3:%arg0}: ${4:type}) {\n  $0\n  sdy.return ${3:%arg0} : ${4:type}\n} : (${4:type}) -> ${4:type}" (snippet)
        sdy.all_gather [function] sdy.all_gather [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.all_gather [$1] ${2:%x} out_sharding=<@${3:m2}, [$4]> : ${5:type}" (snippet)
        sdy.all_slice [function] sdy.all_slice [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.all_slice [$1] ${2:%x} out_sharding=<@${3:m2}, [$4]> : ${5:type}" (snippet)
        sdy.all_to_all [function] sdy.all_to_all [{axes}: src->tgt, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.all_to_all [{$1}: ${2:0}->${3:1}] ${4:%x} out_sharding=<@${5:m2}, [$6]> : ${7:type}" (snippet)
        sdy.all_reduce [function] sdy.all_reduce {axes} %x out_sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.all_reduce {$1} ${2:%x} out_sharding=<@${3:m2}, [$4]> : ${5:type}" (snippet)
        sdy.reduce_scatter [function] sdy.reduce_scatter [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.reduce_scatter [$1] ${2:%x} out_sharding=<@${3:m2}, [$4]> : ${5:type}" (snippet)
        sdy.collective_permute [function] sdy.collective_permute %x out_sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.collective_permute ${1:%x} out_sharding=<@${2:m2}, [$3]> : ${4:type}" (snippet)
        sdy.sharded_to_unreduced [function] sdy.sharded_to_unreduced [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.sharded_to_unreduced [$1] ${2:%x} out_sharding=<@${3:m2}, [$4]> : ${5:type}" (snippet)
        sdy.replicated_to_unreduced [function] sdy.replicated_to_unreduced {axes} %x out_sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.replicated_to_unreduced {$1} ${2:%x} out_sharding=<@${3:m2}, [$4]> : ${5:type}" (snippet)
        sdy.propagation_barrier [function] sdy.propagation_barrier %x allowed_direction=FORWARD : type | 14:7-14:15 -> "sdy.propagation_barrier ${1:%x} allowed_direction=${2|NONE,FORWARD,BACKWARD,BOTH|} : ${3:type}" (snippet)
        sdy.data_flow_edge [function] sdy.data_flow_edge %x sharding=<@mesh, [...]> : type | 14:7-14:15 -> "sdy.data_flow_edge ${1:%x} sharding=<@${2:m2}, [$3]> : ${4:type}" (snippet)
        sdy.constant [function] sdy.constant dense<...> : type | 14:7-14:15 -> "sdy.constant dense<${1:0.0}> : ${2:tensor<f32>}" (snippet)
    "#]].assert_eq(&got);

    // Axes of the second chunk's mesh.
    let typed = "  %d = sdy.sharding_constraint %b <@m2, [{\"z\"}, {\n  return";
    let got = edit_and_complete(&mut s, t, 10, ("  return %b", 0, typed), "}, {").await;
    expect![[r#"
        "w" [field] size 2 · @m2 | 14:49-14:49 -> "\"w\""
        ? [operator] open dimension | 14:49-14:49 -> "?"
    "#]]
    .assert_eq(&got);
}

#[tokio::test]
async fn snippets_become_plain_text_without_client_support() {
    let mut s = TestServer::start().await;
    let text = fixture("completion.mlir");
    s.open_and_wait(&text).await;
    let typed = "  %c = sdy.all_gath\n  return";
    let got = edit_and_complete(&mut s, &text, 2, ("  return %b", 0, typed), "all_gath").await;
    expect![[r#"
        sdy.sharding_constraint [function] sdy.sharding_constraint %x <@mesh, [...]> : type | 14:7-14:19 -> "sdy.sharding_constraint %x <@m2, []> : type"
        sdy.reshard [function] sdy.reshard %x <@mesh, [...]> : type | 14:7-14:19 -> "sdy.reshard %x <@m2, []> : type"
        sdy.manual_computation [function] sdy.manual_computation(%x) in_shardings=[...] out_shardings=[...] manual_axes={...} (%arg: local type) { ... } : (type) -> type | 14:7-14:19 -> "sdy.manual_computation(%x) in_shardings=[<@m2, []>] out_shardings=[<@m2, []>] manual_axes={} (%arg0: local_type) {\n\n  sdy.return %arg0 : local_type\n} : (type) -> type"
        sdy.named_computation [function] sdy.named_computation<"name">(%x) (%arg: type) { ... } : (type) -> type | 14:7-14:19 -> "sdy.named_computation<\"name\">(%x) (%arg0: type) {\n\n  sdy.return %arg0 : type\n} : (type) -> type"
        sdy.all_gather [function] sdy.all_gather [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.all_gather [] %x out_sharding=<@m2, []> : type"
        sdy.all_slice [function] sdy.all_slice [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.all_slice [] %x out_sharding=<@m2, []> : type"
        sdy.all_to_all [function] sdy.all_to_all [{axes}: src->tgt, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.all_to_all [{}: 0->1] %x out_sharding=<@m2, []> : type"
        sdy.all_reduce [function] sdy.all_reduce {axes} %x out_sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.all_reduce {} %x out_sharding=<@m2, []> : type"
        sdy.reduce_scatter [function] sdy.reduce_scatter [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.reduce_scatter [] %x out_sharding=<@m2, []> : type"
        sdy.collective_permute [function] sdy.collective_permute %x out_sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.collective_permute %x out_sharding=<@m2, []> : type"
        sdy.sharded_to_unreduced [function] sdy.sharded_to_unreduced [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.sharded_to_unreduced [] %x out_sharding=<@m2, []> : type"
        sdy.replicated_to_unreduced [function] sdy.replicated_to_unreduced {axes} %x out_sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.replicated_to_unreduced {} %x out_sharding=<@m2, []> : type"
        sdy.propagation_barrier [function] sdy.propagation_barrier %x allowed_direction=FORWARD : type | 14:7-14:19 -> "sdy.propagation_barrier %x allowed_direction=NONE : type"
        sdy.data_flow_edge [function] sdy.data_flow_edge %x sharding=<@mesh, [...]> : type | 14:7-14:19 -> "sdy.data_flow_edge %x sharding=<@m2, []> : type"
        sdy.constant [function] sdy.constant dense<...> : type | 14:7-14:19 -> "sdy.constant dense<0.0> : tensor<f32>"
    "#]].assert_eq(&got);
}

#[tokio::test]
async fn nothing_to_complete() {
    let mut s = TestServer::start().await;
    let text = fixture("completion.mlir");
    s.open_and_wait(&text).await;
    // In a comment, and on a type.
    for (needle, delta) in [("é😀\" before", 2), ("tensor<8x8xf32> {", 8)] {
        let (line, character) = pos16(&text, needle, 0, delta);
        let p = json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}});
        let r = s.request("textDocument/completion", p).await.expect("completion failed");
        assert_eq!(r, Value::Null, "at {needle:?}");
    }
}
