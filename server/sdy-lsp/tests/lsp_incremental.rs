//! 10,000 random incremental edits driven through the server (in process, seeded):
//! after them (and at checkpoints on the way) the server's text equals a reference rope,
//! and its diagnostics equal those of a fresh analysis of that text (the same text
//! opened as another document).
//!
//! Edits insert and delete characters, whitespace, tokens and lines, rename values,
//! change meshes, break the syntax and restore it later, with non-ASCII text around
//! (UTF-16 positions), in a plain and a `// -----` split document; some `didChange`s
//! carry several changes.
//!
//! `SDY_LSP_EDITS=<n>` changes the number of edits per document (default 5,000).

mod lsp_common;

use lsp_common::rng::Rng;
use lsp_common::{position16, TestServer};
use ropey::Rope;
use serde_json::{json, Value};

const PLAIN: &str = r#"// Ünïcödé comment: 日本語 🎉
sdy.mesh @mesh = <["x"=2, "y"=4]>
sdy.mesh @other = <["a"=8]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"y"}p1]>}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32> loc("é")
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg2: tensor<4x8xf32>) {
    %3 = stablehlo.multiply %arg2, %arg2 : tensor<4x8xf32>
    %4 = sdy.all_reduce {"y"} %3 out_sharding=<@mesh, [{}, {}]> : tensor<4x8xf32>
    sdy.return %4 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = sdy.reshard %2 <@mesh, [{"y"}, {"x"}]> : tensor<8x8xf32>
  %6:2 = stablehlo.while(%iterArg = %5, %iterArg_0 = %c) : tensor<8x8xf32>, tensor<i64>
   cond {
    %7 = stablehlo.compare  LT, %iterArg_0, %c : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %7 : tensor<i1>
  } do {
    %8 = stablehlo.custom_call @foo(%iterArg) {has_side_effect = true} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    stablehlo.return %8, %iterArg_0 : tensor<8x8xf32>, tensor<i64>
  }
  %c = stablehlo.constant dense<1> : tensor<i64>
  return %1 : tensor<8x8xf32>
}
func.func @helper(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@other, [{"a"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"#;

const SPLIT: &str = r#"sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.reshard %arg0 <@mesh, [{"a":(1)2}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
// -----
sdy.mesh @m = <["x"=4]>
func.func @g(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32> // ß
  %1 = sdy.sharding_constraint %0 <@m, [{"y"}]> : tensor<8xf32>
  return %1 : tensor<8xf32>
}
// -----
func.func @h(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}
"#;

const SNIPPETS: &[&str] = &[
    " ",
    "\n",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    ",",
    "=",
    ":",
    "\"",
    "%",
    "@",
    "x",
    "0",
    "%0",
    "%c",
    "%arg0",
    "@mesh",
    "@m",
    "?",
    "\"x\"",
    "tensor<8xf32>",
    "stablehlo.add",
    "return",
    "// -----\n",
    "é",
    "日本",
    "🎉",
    "%9 = stablehlo.negate %0 : tensor<8x8xf32>\n",
    "sdy.mesh @n = <[\"z\"=2]>\n",
    "{\"y\"}",
];

/// A random edit of `text`: a byte range on char boundaries and its replacement.
fn random_edit(rng: &mut Rng, text: &str) -> (std::ops::Range<usize>, String) {
    let len = text.len();
    let floor = |mut p: usize| {
        while !text.is_char_boundary(p) {
            p -= 1;
        }
        p
    };
    let at = floor(rng.below(len + 1));
    let token_end = |from: usize, sigil: char| -> Option<(usize, usize)> {
        let s = from + text[from..].find(sigil)?;
        let n = text[s + 1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(len - s - 1);
        Some((s, s + 1 + n))
    };
    match rng.below(8) {
        0 | 1 => (at..at, SNIPPETS[rng.below(SNIPPETS.len())].to_string()),
        2 => (at..floor((at + 1 + rng.below(6)).min(len)), String::new()),
        3 => (at..at, [" ", "\n", "\t"][rng.below(3)].to_string()),
        4 => {
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[at..].find('\n').map_or(len, |i| at + i + 1);
            if rng.below(2) == 0 {
                (start..end, String::new())
            } else {
                (start..start, text[start..end].to_string())
            }
        }
        5 => match token_end(at, '%') {
            Some((s, e)) => (s..e, ["%0", "%1", "%c", "%arg0", "%new"][rng.below(5)].to_string()),
            None => (at..at, " ".into()),
        },
        6 => match token_end(at, '@') {
            Some((s, e)) => (s..e, ["@mesh", "@m", "@other", "@gone"][rng.below(4)].to_string()),
            None => (at..at, "\n".into()),
        },
        _ => match text[at..].find(|c: char| c.is_ascii_digit()) {
            Some(i) => (at + i..at + i + 1, rng.below(10).to_string()),
            None => (at..at, "1".into()),
        },
    }
}

/// The LSP change for `range` of `text` replaced by `insert`.
fn change(text: &str, range: &std::ops::Range<usize>, insert: &str) -> Value {
    let (sl, sc) = position16(text, range.start);
    let (el, ec) = position16(text, range.end);
    json!({
        "range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
        "text": insert,
    })
}

/// The diagnostics of a `publishDiagnostics`, with the document's URI left out.
fn comparable(params: &Value, uri: &str) -> String {
    params["diagnostics"].to_string().replace(uri, "<uri>")
}

/// What a fresh server-side analysis of `text` publishes, through another document.
async fn fresh_diagnostics(s: &mut TestServer, text: &str, n: usize) -> String {
    let uri = format!("file:///test/fresh{n}.mlir");
    s.open(&uri, 1, text).await;
    let (p, _) = s.diagnostics_for(&uri, 1).await;
    s.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}})).await;
    comparable(&p, &uri)
}

async fn drive(s: &mut TestServer, name: &str, initial: &str, seed: u64, edits: usize) {
    let uri = format!("file:///test/{name}.mlir");
    let mut rng = Rng(seed);
    let mut reference = Rope::from_str(initial);
    s.open(&uri, 1, initial).await;
    let mut version = 1i64;
    let mut undo: Option<(std::ops::Range<usize>, String)> = None;
    let mut done = 0;
    let mut checks = 0;
    while done < edits {
        // One didChange: one to three changes, each against the text after the previous.
        let mut changes = Vec::new();
        for _ in 0..1 + rng.below(3) * (rng.below(4) == 0) as usize {
            let text = reference.to_string();
            let (range, insert) = match undo.take() {
                Some((r, s))
                    if r.end <= text.len()
                        && text.is_char_boundary(r.start)
                        && text.is_char_boundary(r.end) =>
                {
                    (r, s)
                }
                _ => random_edit(&mut rng, &text),
            };
            if undo.is_none() && rng.below(8) == 0 {
                // Break and restore: undo this change with the next one.
                undo = Some((
                    range.start..range.start + insert.len(),
                    text[range.clone()].to_string(),
                ));
            }
            changes.push(change(&text, &range, &insert));
            let start = reference.byte_to_char(range.start);
            let end = reference.byte_to_char(range.end);
            reference.remove(start..end);
            reference.insert(start, &insert);
            done += 1;
        }
        version += 1;
        s.change(&uri, version, Value::Array(changes)).await;
        let checkpoint = version % 100 == 0 || done >= edits;
        if !checkpoint && rng.below(3) == 0 {
            // Let this version be analysed on its own (others coalesce while typing).
            s.diagnostics_for(&uri, version).await;
        }
        if checkpoint {
            let text = reference.to_string();
            let server_text = s.request("sdy/testText", json!({"uri": uri})).await.expect("text");
            assert_eq!(
                server_text.as_str(),
                Some(text.as_str()),
                "{name}: text after {done} edits"
            );
            let (p, _) = s.diagnostics_for(&uri, version).await;
            let fresh = fresh_diagnostics(s, &text, checks).await;
            assert_eq!(
                comparable(&p, &uri),
                fresh,
                "{name}: diagnostics after {done} edits (version {version}) differ from a fresh analysis of:\n{text}"
            );
            checks += 1;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_random_edits_keep_text_and_diagnostics_exact() {
    let per_doc: usize =
        std::env::var("SDY_LSP_EDITS").ok().and_then(|v| v.parse().ok()).unwrap_or(5_000);
    let mut s = TestServer::start().await;
    drive(&mut s, "plain", PLAIN, 0x5EED_0001, per_doc).await;
    drive(&mut s, "split", SPLIT, 0x5EED_0002, per_doc).await;
    // The edits took the incremental path (the fresh analyses of the checks do not
    // count: they are opens).
    let [incremental, fresh] = sdy_lsp::lsp::scheduler::UPDATES
        .each_ref()
        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed));
    eprintln!("updates: {incremental} incremental, {fresh} afresh");
    assert!(incremental > 4 * fresh, "{incremental} incremental updates, {fresh} afresh");
}
