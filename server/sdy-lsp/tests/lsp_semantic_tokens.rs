//! Semantic tokens: full, range and delta, in UTF-16 and UTF-8 positions.
mod lsp_common;

use expect_test::expect;
use lsp_common::{capabilities, fixture, replace, TestServer, URI};
use serde_json::{json, Value};

/// A decoded token: absolute line and column (in the negotiated units), length, type
/// and modifier names.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tok {
    line: u32,
    col: u32,
    len: u32,
    ty: String,
}

/// The legend's names, from the `initialize` result.
struct Legend {
    types: Vec<String>,
    mods: Vec<String>,
}

impl Legend {
    fn of(init: &Value) -> Legend {
        let l = &init["capabilities"]["semanticTokensProvider"]["legend"];
        let names = |v: &Value| -> Vec<String> {
            v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
        };
        Legend { types: names(&l["tokenTypes"]), mods: names(&l["tokenModifiers"]) }
    }

    /// The flat `data` array as absolute tokens.
    fn decode(&self, data: &[u64]) -> Vec<Tok> {
        assert_eq!(data.len() % 5, 0);
        let (mut line, mut col) = (0u32, 0u32);
        data.chunks(5)
            .map(|d| {
                let (dl, ds) = (d[0] as u32, d[1] as u32);
                line += dl;
                col = if dl == 0 { col + ds } else { ds };
                let mut ty = self.types[d[3] as usize].clone();
                for (bit, m) in self.mods.iter().enumerate() {
                    if d[4] & (1 << bit) != 0 {
                        ty.push('.');
                        ty.push_str(m);
                    }
                }
                Tok { line, col, len: d[2] as u32, ty }
            })
            .collect()
    }
}

fn data(result: &Value) -> Vec<u64> {
    result["data"].as_array().expect("data").iter().map(|v| v.as_u64().unwrap()).collect()
}

/// The text a token covers, its columns counted in UTF-16 or UTF-8 units.
fn token_text(text: &str, t: &Tok, utf8: bool) -> String {
    let line = text.split('\n').nth(t.line as usize).unwrap_or("");
    let mut out = String::new();
    let mut unit = 0u32;
    for c in line.chars() {
        let w = if utf8 { c.len_utf8() } else { c.len_utf16() } as u32;
        if unit >= t.col && unit < t.col + t.len {
            out.push(c);
        }
        unit += w;
    }
    out
}

/// `line:col len type text` per token.
fn render(text: &str, toks: &[Tok], utf8: bool) -> String {
    let mut out = String::new();
    for t in toks {
        let s = token_text(text, t, utf8);
        out.push_str(&format!("{}:{} {} {} {s}\n", t.line, t.col, t.len, t.ty));
    }
    out
}

async fn start(encodings: &[&str]) -> (TestServer, Legend) {
    let mut s = TestServer::new();
    let init = s.initialize(capabilities(encodings)).await;
    (s, Legend::of(&init))
}

async fn full(s: &mut TestServer) -> Value {
    let p = json!({"textDocument": {"uri": URI}});
    s.request("textDocument/semanticTokens/full", p).await.expect("full failed")
}

async fn range(s: &mut TestServer, l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    let r = json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}});
    let p = json!({"textDocument": {"uri": URI}, "range": r});
    s.request("textDocument/semanticTokens/range", p).await.expect("range failed")
}

async fn delta(s: &mut TestServer, previous: &Value) -> Value {
    let p = json!({"textDocument": {"uri": URI}, "previousResultId": previous});
    s.request("textDocument/semanticTokens/full/delta", p).await.expect("delta failed")
}

#[tokio::test]
async fn legend_and_capability() {
    let (_, legend) = start(&[]).await;
    expect![[r#"
        namespace type typeParameter parameter variable property enumMember function keyword modifier comment string number operator decorator
        declaration subAxis"#]]
    .assert_eq(&format!("{}\n{}", legend.types.join(" "), legend.mods.join(" ")));
}

#[tokio::test]
async fn full_tokens_utf16() {
    let (mut s, legend) = start(&[]).await;
    let text = fixture("tokens.mlir");
    s.open_and_wait(&text).await;
    let r = full(&mut s).await;
    assert!(r["resultId"].is_string(), "{r}");
    let toks = legend.decode(&data(&r));
    // Columns after "é😀" count UTF-16 units (😀 is two); the `// -----` marker between
    // the chunks is a comment; the second chunk's tokens are in file coordinates.
    expect![[r#"
        0:0 80 comment // Semantic tokens fixture: "é😀" in comments and strings shifts UTF-16 columns.
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
        2:40 8 decorator jax.name
        2:51 5 string "é😀"
        2:58 12 decorator sdy.sharding
        2:73 13 decorator #sdy.sharding
        2:87 5 namespace @mesh
        2:96 3 property "x"
        2:101 1 operator ?
        2:103 2 modifier p1
        2:108 3 property.subAxis "y"
        2:113 1 number 1
        2:115 1 number 2
        2:125 15 type tensor<8x8xf32>
        3:2 2 variable.declaration %0
        3:7 23 keyword sdy.sharding_constraint
        3:31 5 parameter %arg0
        3:38 5 namespace @mesh
        3:51 1 operator ?
        3:56 10 keyword replicated
        3:68 3 property "x"
        3:76 15 type tensor<8x8xf32>
        3:92 9 comment // ünï 😀
        4:2 2 variable.declaration %1
        4:5 1 number 2
        4:9 4 keyword call
        4:14 7 function @helper
        4:22 2 variable %0
        4:29 15 type tensor<8x8xf32>
        4:50 15 type tensor<8x8xf32>
        4:67 13 type tensor<8xf32>
        5:2 6 keyword return
        5:9 4 variable %1#0
        5:16 15 type tensor<8x8xf32>
        7:0 9 keyword func.func
        7:10 7 keyword private
        7:18 7 function.declaration @helper
        7:26 2 parameter.declaration %a
        7:30 15 type tensor<8x8xf32>
        7:51 15 type tensor<8x8xf32>
        7:68 13 type tensor<8xf32>
        8:2 2 variable.declaration %c
        8:7 18 keyword stablehlo.constant
        8:26 5 keyword dense
        8:32 3 number 0.0
        8:39 13 type tensor<8xf32>
        9:2 6 keyword return
        9:9 2 parameter %a
        9:13 2 variable %c
        9:18 15 type tensor<8x8xf32>
        9:35 13 type tensor<8xf32>
        11:0 8 comment // -----
        12:0 8 keyword sdy.mesh
        12:9 3 namespace.declaration @m2
        12:17 3 property.declaration "z"
        12:21 1 number 2
        13:0 9 keyword func.func
        13:10 7 function.declaration @second
        13:18 2 parameter.declaration %b
        13:22 13 type tensor<4xf32>
        13:37 12 decorator sdy.sharding
        13:52 13 decorator #sdy.sharding
        13:66 3 namespace @m2
        13:73 3 property "z"
        13:85 13 type tensor<4xf32>
        14:2 2 variable.declaration %r
        14:7 14 keyword sdy.all_gather
        14:24 3 property "z"
        14:30 2 parameter %b
        14:33 12 keyword out_sharding
        14:47 3 namespace @m2
        14:60 13 type tensor<4xf32>
        15:2 6 keyword return
        15:9 2 variable %r
        15:14 13 type tensor<4xf32>
        15:28 4 comment // é
    "#]]
    .assert_eq(&render(&text, &toks, false));
}

#[tokio::test]
async fn utf8_columns_cover_the_same_text() {
    let text = fixture("tokens.mlir");
    let mut rendered = Vec::new();
    for (enc, utf8) in [(&[][..], false), (&["utf-8"][..], true)] {
        let (mut s, legend) = start(enc).await;
        s.open_and_wait(&text).await;
        let toks = legend.decode(&data(&full(&mut s).await));
        let texts: Vec<String> = toks
            .iter()
            .map(|t| format!("{} {} {}", t.line, t.ty, token_text(&text, t, utf8)))
            .collect();
        rendered.push((texts, toks));
    }
    assert_eq!(rendered[0].0, rendered[1].0);
    // The columns do differ after non-ASCII text.
    assert_ne!(rendered[0].1, rendered[1].1);
}

/// A range request gives exactly the full result's tokens that intersect the range.
#[tokio::test]
async fn ranges_are_the_full_result_restricted() {
    let (mut s, legend) = start(&[]).await;
    let text = fixture("tokens.mlir");
    s.open_and_wait(&text).await;
    let all = legend.decode(&data(&full(&mut s).await));
    let ranges = [(0, 0, 100, 0), (2, 0, 4, 0), (3, 40, 3, 60), (9, 5, 13, 10), (11, 0, 12, 0)];
    for (l0, c0, l1, c1) in ranges {
        let got = legend.decode(&data(&range(&mut s, l0, c0, l1, c1).await));
        let want: Vec<Tok> = all
            .iter()
            .filter(|t| (t.line, t.col + t.len) > (l0, c0) && (t.line, t.col) < (l1, c1))
            .cloned()
            .collect();
        assert!(!want.is_empty());
        assert_eq!(got, want, "range {l0}:{c0}-{l1}:{c1}");
    }
}

/// Applies the edits of a delta to the previous data.
fn apply(old: &[u64], delta: &Value) -> Vec<u64> {
    let mut edits: Vec<&Value> = delta["edits"].as_array().expect("edits").iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e["start"].as_u64().unwrap()));
    let mut out = old.to_vec();
    for e in edits {
        let start = e["start"].as_u64().unwrap() as usize;
        let count = e["deleteCount"].as_u64().unwrap() as usize;
        let new: Vec<u64> = e["data"]
            .as_array()
            .map(|d| d.iter().map(|v| v.as_u64().unwrap()).collect())
            .unwrap_or_default();
        out.splice(start..start + count, new);
    }
    out
}

/// After each edit, the delta applied to the previous data equals a fresh full result.
#[tokio::test]
async fn deltas_apply_to_the_previous_result() {
    let (mut s, _) = start(&[]).await;
    let mut text = fixture("tokens.mlir");
    s.open_and_wait(&text).await;
    let first = full(&mut s).await;
    let mut previous = (first["resultId"].clone(), data(&first));
    let edits: &[(&str, &str)] = &[
        ("%1:2 = call", "%9:2 = call"),             // one token changes
        ("\"x\", ?}p1", "\"x\", \"y\", ?}p0"),      // tokens added mid-line
        ("// ünï 😀", "// ünï 😀 @mesh"),           // a comment grows
        ("return %1#0", "return %1#0, %1#0"),       // an error: still tokens
        ("sdy.mesh @m2", "// -----\nsdy.mesh @m3"), // a new chunk
        ("  %c = stablehlo.constant dense<0.0> : tensor<8xf32>\n", ""), // a line goes
    ];
    let mut sizes = Vec::new();
    for (version, (from, to)) in edits.iter().enumerate() {
        let version = version as i64 + 2;
        let (change, new_text) = replace(&text, from, 0, to);
        text = new_text;
        s.change(URI, version, json!([change])).await;
        s.diagnostics_for(URI, version).await;
        let d = delta(&mut s, &previous.0).await;
        assert!(d.get("edits").is_some(), "expected a delta: {d}");
        let applied = apply(&previous.1, &d);
        let fresh = full(&mut s).await;
        assert_eq!(applied, data(&fresh), "after replacing {from:?} by {to:?}");
        let sent: usize = d["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["data"].as_array().map_or(0, Vec::len))
            .sum();
        sizes.push(format!("{sent}/{}", applied.len()));
        previous = (fresh["resultId"].clone(), data(&fresh));
    }
    // Deltas send a fraction of the data (integers sent / integers in the result).
    expect!["0/425 5/430 5/430 5/435 5/440 0/415"].assert_eq(&sizes.join(" "));
    // No change: no edit.
    let d = delta(&mut s, &previous.0).await;
    assert_eq!(d["edits"], json!([]));
}

#[tokio::test]
async fn unknown_previous_result_gets_full_tokens() {
    let (mut s, _) = start(&[]).await;
    s.open_and_wait(&fixture("tokens.mlir")).await;
    let r = full(&mut s).await;
    let d = delta(&mut s, &json!("no-such-id")).await;
    assert!(d.get("edits").is_none(), "{d}");
    assert_eq!(data(&d), data(&r));
    assert_ne!(d["resultId"], r["resultId"]);
}

#[tokio::test]
async fn closed_and_unknown_documents() {
    let (mut s, _) = start(&[]).await;
    assert_eq!(full(&mut s).await, Value::Null);
    s.open_and_wait("").await;
    assert_eq!(data(&full(&mut s).await), Vec::<u64>::new());
}
