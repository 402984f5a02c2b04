//! `textDocument/codeAction`: quick fixes tied to their diagnostics, applied through
//! the client's edits (UTF-16 ranges after non-ASCII text), checked by re-analysis;
//! `expected-*` annotations checked by `sdy-lsp opt -verify-diagnostics`.
mod lsp_common;

use expect_test::expect;
use lsp_common::{fixture, range, TestServer, URI};
use serde_json::{json, Value};

/// The byte offset of a UTF-16 position.
fn offset16(text: &str, pos: &Value) -> usize {
    let line = pos["line"].as_u64().unwrap() as usize;
    let character = pos["character"].as_u64().unwrap() as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= character || c == '\n' {
            return start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// `text` with the workspace edits of `actions` for [`URI`] applied.
fn apply(text: &str, actions: &[&Value]) -> String {
    let mut edits: Vec<(usize, usize, String)> = actions
        .iter()
        .flat_map(|a| a["edit"]["changes"][URI].as_array().unwrap().clone())
        .map(|e| {
            let (s, t) = (offset16(text, &e["range"]["start"]), offset16(text, &e["range"]["end"]));
            (s, t, e["newText"].as_str().unwrap().to_string())
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (s, t, new) in edits {
        out.replace_range(s..t, &new);
    }
    out
}

async fn actions_for(s: &mut TestServer, d: &Value, only: Option<&[&str]>) -> Vec<Value> {
    let mut context = json!({"diagnostics": [d]});
    if let Some(only) = only {
        context["only"] = json!(only);
    }
    let params = json!({"textDocument": {"uri": URI}, "range": d["range"], "context": context});
    let r = s.request("textDocument/codeAction", params).await.expect("codeAction failed");
    r.as_array().cloned().unwrap_or_default()
}

fn errors(d: &Value) -> Vec<String> {
    let mut v: Vec<String> = d["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["severity"] == 1)
        .map(|x| x["message"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn quick_fixes_fix_their_diagnostic() {
    let mut s = TestServer::start().await;
    let text = fixture("fixes.mlir");
    let published = s.open_and_wait(&text).await;
    let before = errors(&published);
    let mut out = String::new();
    let mut version = 1;
    for d in published["diagnostics"].as_array().unwrap() {
        out.push_str(&format!("{} {}\n", range(&d["range"]), d["message"].as_str().unwrap()));
        for a in actions_for(&mut s, d, None).await {
            // Each action carries the diagnostic the client sent.
            assert_eq!(a["diagnostics"], json!([d]));
            let edits: Vec<String> = a["edit"]["changes"][URI]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| format!("{} {:?}", range(&e["range"]), e["newText"].as_str().unwrap()))
                .collect();
            out.push_str(&format!(
                "  {} {}{}: {}\n",
                a["kind"].as_str().unwrap(),
                a["title"].as_str().unwrap(),
                if a["isPreferred"] == true { " (preferred)" } else { "" },
                edits.join("; ")
            ));
            if a["kind"] != "quickfix" {
                continue;
            }
            // Applied, the diagnostic goes away and no new error comes.
            let fixed = apply(&text, &[&a]);
            version += 1;
            s.change(URI, version, json!([{"text": fixed}])).await;
            let (after, _) = s.diagnostics_for(URI, version).await;
            let now = errors(&after);
            let msg = d["message"].as_str().unwrap();
            let count = |v: &[String]| v.iter().filter(|m| *m == msg).count();
            assert!(count(&now) < count(&before), "{} left {msg}", a["title"]);
            assert!(now.iter().all(|m| before.contains(m)), "{}: new errors {now:?}", a["title"]);
            // Back to the original text for the next diagnostic's actions.
            version += 1;
            s.change(URI, version, json!([{"text": text}])).await;
            s.diagnostics_for(URI, version).await;
        }
    }
    expect![[r#"
        2:114-2:122 'func.func' op arg 0 - replicated axes are not ordered w.r.t. mesh
          quickfix Sort replicated axes in mesh order: {"x", "z"} (preferred): 2:114-2:122 "\"x\", \"z\""
          source Add `// expected-error` for this diagnostic: 2:0-2:0 "// expected-error @+1 {{'func.func' op arg 0 - replicated axes are not ordered w.r.t. mesh}}\n"
        5:95-5:113 'func.func' op arg 0 - two consecutive sub-axes can be merged: "z":(1)2, "z":(2)2
          quickfix Merge into "z" (preferred): 5:95-5:113 "\"z\""
          source Add `// expected-error` for this diagnostic: 5:0-5:0 "// expected-error @+1 {{'func.func' op arg 0 - two consecutive sub-axes can be merged: \"z\":(1)2, \"z\":(2)2}}\n"
        8:85-8:88 'func.func' op arg 0 - duplicate axis ref: "x"
          quickfix Remove the duplicate "x" from dimension 0 (preferred): 8:83-8:88 ""
          source Add `// expected-error` for this diagnostic: 8:0-8:0 "// expected-error @+1 {{'func.func' op arg 0 - duplicate axis ref: \"x\"}}\n"
        11:70-11:75 'func.func' op arg 0 - unknown mesh: @nope
          quickfix Define `sdy.mesh @nope = <["x"=2]>`: 1:0-1:0 "sdy.mesh @nope = <[\"x\"=2]>\n"
          source Add `// expected-error` for this diagnostic: 11:0-11:0 "// expected-error @+1 {{'func.func' op arg 0 - unknown mesh: @nope}}\n"
        14:84-14:88 'func.func' op arg 0 - dim 1 is empty and closed but has a priority
          quickfix Open dimension 1: {?}p1: 14:85-14:85 "?"
          quickfix Remove the priority of dimension 1: 14:86-14:88 ""
          source Add `// expected-error` for this diagnostic: 14:0-14:0 "// expected-error @+1 {{'func.func' op arg 0 - dim 1 is empty and closed but has a priority}}\n"
    "#]].assert_eq(&out);
}

#[tokio::test]
async fn only_filters_kinds() {
    let mut s = TestServer::start().await;
    let published = s.open_and_wait(&fixture("fixes.mlir")).await;
    let d = &published["diagnostics"][0];
    let quick = actions_for(&mut s, d, Some(&["quickfix"])).await;
    assert!(!quick.is_empty() && quick.iter().all(|a| a["kind"] == "quickfix"));
    let source = actions_for(&mut s, d, Some(&["source"])).await;
    assert!(!source.is_empty() && source.iter().all(|a| a["kind"] == "source"));
    assert!(actions_for(&mut s, d, Some(&["refactor"])).await.is_empty());
}

/// Every `expected-*` annotation applied: `sdy-lsp opt -verify-diagnostics` passes.
#[tokio::test]
async fn annotations_satisfy_verify_diagnostics() {
    let mut s = TestServer::start().await;
    let text = fixture("fixes.mlir");
    let published = s.open_and_wait(&text).await;
    let mut chosen = Vec::new();
    for d in published["diagnostics"].as_array().unwrap() {
        chosen.extend(actions_for(&mut s, d, Some(&["source"])).await);
    }
    assert!(chosen.len() >= 4, "{chosen:?}");
    let annotated = apply(&text, &chosen.iter().collect::<Vec<_>>());
    let dir = std::env::temp_dir().join(format!("sdy-lsp-annotations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("annotated.mlir");
    std::fs::write(&file, &annotated).unwrap();
    let run = |path: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_sdy-lsp"))
            .args(["opt", path.to_str().unwrap(), "-verify-diagnostics"])
            .output()
            .unwrap()
    };
    let ok = run(&file);
    assert!(ok.status.success(), "{annotated}\n{}", String::from_utf8_lossy(&ok.stderr));
    // Without the annotations the same check fails (the test can fail).
    std::fs::write(&file, &text).unwrap();
    assert!(!run(&file).status.success());
    let _ = std::fs::remove_dir_all(&dir);
}
