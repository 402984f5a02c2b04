//! Go to definition, find references, prepareRename and rename, in UTF-16 and UTF-8
//! positions, on a split file whose lines carry non-ASCII text before the names.
mod lsp_common;

use expect_test::expect;
use lsp_common::{capabilities, fixture, pos16, pos8, range, TestServer, URI};
use serde_json::{json, Value};

/// A client that supports prepareRename and hierarchical symbols.
fn client(encodings: &[&str]) -> Value {
    let mut caps = capabilities(encodings);
    caps["textDocument"]["rename"] = json!({"prepareSupport": true});
    caps["textDocument"]["documentSymbol"] = json!({"hierarchicalDocumentSymbolSupport": true});
    caps
}

async fn server(encodings: &[&str], text: &str) -> TestServer {
    let mut s = TestServer::new();
    s.initialize(client(encodings)).await;
    let d = s.open_and_wait(text).await;
    assert_eq!(d["diagnostics"], json!([]), "the fixture has diagnostics: {d}");
    s
}

fn at(line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}})
}

/// The byte offset of an LSP position (`utf8`: columns in bytes, else UTF-16 units).
fn offset(text: &str, p: &Value, utf8: bool) -> usize {
    let line = p["line"].as_u64().unwrap() as usize;
    let col = p["character"].as_u64().unwrap() as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    if utf8 {
        return start + col;
    }
    let mut units = 0;
    for (i, ch) in text[start..].char_indices() {
        if units >= col {
            return start + i;
        }
        units += ch.len_utf16();
    }
    text.len()
}

/// A range and the text it covers.
fn show(text: &str, r: &Value, utf8: bool) -> String {
    let (a, b) = (offset(text, &r["start"], utf8), offset(text, &r["end"], utf8));
    format!("{} {}", range(r), &text[a..b])
}

/// (needle, occurrence, bytes into it).
const PROBES: &[(&str, usize, usize)] = &[
    ("\"x\":(1)2", 0, 1),              // axis x of @mesh, after "é😀" on the line
    ("manual_axes={\"x\"", 0, 14),     // a manual axis
    ("[{\"y\"}, {}] %1", 0, 3),        // an all_gather axis
    ("@other, [{\"z\"}, {}]>]", 0, 2), // mesh in a per-value sharding after "é😀"
    ("%4#1", 0, 1),                    // one value of a group
    ("%a:", 0, 1),                     // a manual computation's argument
    ("@helper(", 0, 2),                // a function
    ("@mesh, [{\"x\"}]", 0, 1),        // the mesh of the second chunk
];

async fn probe_references(s: &mut TestServer, text: &str, utf8: bool) -> String {
    let mut out = String::new();
    for &(needle, nth, delta) in PROBES {
        let (line, col) =
            if utf8 { pos8(text, needle, nth, delta) } else { pos16(text, needle, nth, delta) };
        let mut params = at(line, col);
        params["context"] = json!({"includeDeclaration": true});
        let all = s.request("textDocument/references", params.clone()).await.unwrap();
        params["context"] = json!({"includeDeclaration": false});
        let uses = s.request("textDocument/references", params).await.unwrap();
        let def = s.request("textDocument/definition", at(line, col)).await.unwrap();
        let defs: Vec<String> = match &def {
            Value::Array(a) => a.iter().map(|l| show(text, &l["range"], utf8)).collect(),
            Value::Null => vec![],
            l => vec![show(text, &l["range"], utf8)],
        };
        let all = all.as_array().unwrap();
        let uses = uses.as_array().unwrap();
        out.push_str(&format!(
            "== {needle} @{line}:{col}: {} references, {} without the declaration; definition {}\n",
            all.len(),
            uses.len(),
            defs.join(", ")
        ));
        for l in all {
            assert_eq!(l["uri"], URI);
            let is_use = uses.contains(l);
            out.push_str(&format!(
                "  {}{}\n",
                show(text, &l["range"], utf8),
                if is_use { "" } else { "  (declaration)" }
            ));
        }
    }
    out
}

#[tokio::test]
async fn references_and_definitions_utf16() {
    let text = fixture("refs.mlir");
    let mut s = server(&[], &text).await;
    expect![[r#"
        == "x":(1)2 @4:97: 9 references, 8 without the declaration; definition 2:19-2:22 "x"
          1:28-1:31 "x"
          2:19-2:22 "x"  (declaration)
          4:96-4:99 "x"
          4:222-4:225 "x"
          5:68-5:71 "x"
          5:127-5:130 "x"
          5:152-5:155 "x"
          8:67-8:70 "x"
          12:60-12:63 "x"
        == manual_axes={"x" @5:153: 9 references, 8 without the declaration; definition 2:19-2:22 "x"
          1:28-1:31 "x"
          2:19-2:22 "x"  (declaration)
          4:96-4:99 "x"
          4:222-4:225 "x"
          5:68-5:71 "x"
          5:127-5:130 "x"
          5:152-5:155 "x"
          8:67-8:70 "x"
          12:60-12:63 "x"
        == [{"y"}, {}] %1 @12:25: 6 references, 5 without the declaration; definition 2:26-2:29 "y"
          2:26-2:29 "y"  (declaration)
          4:106-4:109 "y"
          5:94-5:97 "y"
          5:157-5:160 "y"
          8:72-8:75 "y"
          12:24-12:27 "y"
        == @other, [{"z"}, {}]>] @14:94: 3 references, 2 without the declaration; definition 3:9-3:15 @other
          3:9-3:15 @other  (declaration)
          14:92-14:98 @other
          15:35-15:41 @other
        == %4#1 @14:28: 2 references, 1 without the declaration; definition 13:2-13:4 %4
          13:2-13:4 %4  (declaration)
          14:27-14:31 %4#1
        == %a: @5:164: 2 references, 1 without the declaration; definition 5:30-5:35 %arg0
          5:163-5:165 %a  (declaration)
          6:15-6:17 %a
        == @helper( @13:16: 2 references, 1 without the declaration; definition 18:18-18:25 @helper
          13:14-13:21 @helper
          18:18-18:25 @helper  (declaration)
        == @mesh, [{"x"}] @26:68: 2 references, 1 without the declaration; definition 25:9-25:14 @mesh
          25:9-25:14 @mesh  (declaration)
          26:67-26:72 @mesh
    "#]].assert_eq(&probe_references(&mut s, &text, false).await);
}

/// UTF-8 positions give the same answers (the texts shown are the same).
#[tokio::test]
async fn references_utf8_match_utf16() {
    let text = fixture("refs.mlir");
    let mut s8 = server(&["utf-8"], &text).await;
    let mut s16 = server(&[], &text).await;
    let utf8 = probe_references(&mut s8, &text, true).await;
    let utf16 = probe_references(&mut s16, &text, false).await;
    assert_ne!(utf8, utf16, "the fixture should have non-ASCII text before names");
    assert_eq!(without_positions(&utf8), without_positions(&utf16));
}

/// The text without `l:c-l:c` ranges and `@l:c:` positions.
fn without_positions(s: &str) -> String {
    let is_pos = |w: &str| {
        let w = w.trim_start_matches('@').trim_end_matches([':', ',']);
        !w.is_empty()
            && w.contains(':')
            && w.chars().all(|c| c.is_ascii_digit() || c == ':' || c == '-')
    };
    s.lines()
        .map(|l| l.split(' ').filter(|w| !is_pos(w)).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Applies a WorkspaceEdit's edits for [`URI`] to `text`.
fn apply(text: &str, edit: &Value, utf8: bool) -> String {
    let mut edits: Vec<(usize, usize, String)> = edit["changes"][URI]
        .as_array()
        .expect("edits for the document")
        .iter()
        .map(|e| {
            let (a, b) =
                (offset(text, &e["range"]["start"], utf8), offset(text, &e["range"]["end"], utf8));
            (a, b, e["newText"].as_str().unwrap().to_string())
        })
        .collect();
    edits.sort();
    let mut out = text.to_string();
    for (a, b, t) in edits.into_iter().rev() {
        out.replace_range(a..b, &t);
    }
    out
}

/// prepareRename, rename, then the renamed text re-analysed: still no diagnostics, and
/// as many references to the new name as there were to the old one.
async fn rename_probe(
    text: &str,
    (needle, nth, delta): (&str, usize, usize),
    new_name: &str,
    utf8: bool,
) -> String {
    let mut s = server(if utf8 { &["utf-8"] } else { &[] }, text).await;
    let (line, col) =
        if utf8 { pos8(text, needle, nth, delta) } else { pos16(text, needle, nth, delta) };
    let prepared = match s.request("textDocument/prepareRename", at(line, col)).await {
        Ok(p) if p.is_null() => "null".to_string(),
        Ok(p) => format!("{} placeholder {}", show(text, &p["range"], utf8), p["placeholder"]),
        Err(e) => {
            return format!("{needle} -> {new_name}: prepareRename refused: {}\n", e["message"])
        }
    };
    let mut params = at(line, col);
    params["newName"] = json!(new_name);
    let edit = match s.request("textDocument/rename", params).await {
        Ok(e) => e,
        Err(e) => {
            return format!(
                "{needle} -> {new_name}: prepared {prepared}; refused: {}\n",
                e["message"]
            )
        }
    };
    if edit.is_null() {
        return format!("{needle} -> {new_name}: prepared {prepared}; rename null\n");
    }
    let renamed = apply(text, &edit, utf8);
    let mut refs = at(line, col);
    refs["context"] = json!({"includeDeclaration": true});
    let before = s.request("textDocument/references", refs.clone()).await.unwrap();

    let mut after = server(if utf8 { &["utf-8"] } else { &[] }, &renamed).await;
    let after_refs = after.request("textDocument/references", refs).await.unwrap();
    let n = before.as_array().unwrap().len();
    assert_eq!(after_refs.as_array().unwrap().len(), n, "{needle} -> {new_name}:\n{renamed}");
    let changed: Vec<String> = text
        .lines()
        .zip(renamed.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| i.to_string())
        .collect();
    format!(
        "{needle} -> {new_name}: prepared {prepared}; {} edits on lines {}; {n} references after\n",
        edit["changes"][URI].as_array().unwrap().len(),
        changed.join(",")
    )
}

#[tokio::test]
async fn renames_keep_the_file_valid() {
    let text = fixture("refs.mlir");
    let mut out = String::new();
    for (probe, new) in [
        (("\"x\":(1)2", 0, 1), "data"),
        (("[{\"y\"}, {}] %1", 0, 3), "model"),
        (("@mesh =", 0, 2), "grid"),
        (("@other, [{\"z\"}, {}]>]", 0, 2), "@o2"),
        (("%4#1", 0, 1), "%pair"),
        (("%a:", 0, 1), "lhs"),
        (("@helper(", 0, 2), "callee"),
        (("@mesh, [{\"x\"}]", 0, 1), "m2"),
    ] {
        out.push_str(&rename_probe(&text, probe, new, false).await);
    }
    expect![[r#"
        "x":(1)2 -> data: prepared 4:97-4:98 x placeholder "x"; 9 edits on lines 1,2,4,5,8,12; 9 references after
        [{"y"}, {}] %1 -> model: prepared 12:25-12:26 y placeholder "y"; 6 edits on lines 2,4,5,8,12; 6 references after
        @mesh = -> grid: prepared 2:10-2:14 mesh placeholder "mesh"; 9 edits on lines 1,2,4,5,8,12; 9 references after
        @other, [{"z"}, {}]>] -> @o2: prepared 14:93-14:98 other placeholder "other"; 3 edits on lines 3,14,15; 3 references after
        %4#1 -> %pair: prepared 14:27-14:29 %4 placeholder "%4"; 3 edits on lines 13,14; 2 references after
        %a: -> lhs: prepared 5:163-5:165 %a placeholder "%a"; 2 edits on lines 5,6; 2 references after
        @helper( -> callee: prepared 13:15-13:21 helper placeholder "helper"; 2 edits on lines 13,18; 2 references after
        @mesh, [{"x"}] -> m2: prepared 26:68-26:72 mesh placeholder "mesh"; 2 edits on lines 25,26; 2 references after
    "#]].assert_eq(&out);
}

#[tokio::test]
async fn renames_in_utf8_positions() {
    let text = fixture("refs.mlir");
    let a = rename_probe(&text, ("\"x\":(1)2", 0, 1), "data", true).await;
    let b = rename_probe(&text, ("\"x\":(1)2", 0, 1), "data", false).await;
    // Same edits and lines; only the prepared range's columns differ.
    assert_eq!(a.split(';').skip(1).collect::<Vec<_>>(), b.split(';').skip(1).collect::<Vec<_>>());
    assert_ne!(a, b);
}

#[tokio::test]
async fn renames_refused_with_a_reason() {
    let text = fixture("refs.mlir");
    let mut out = String::new();
    for (probe, new) in [
        (("\"x\":(1)2", 0, 1), "y"),
        (("@mesh =", 0, 2), "other"),
        (("%4#1", 0, 1), "%3"),
        (("%c, %c", 0, 1), "%0"),
        (("%a:", 0, 1), "not a name"),
        (("stablehlo.add %c", 0, 3), "x"),
    ] {
        out.push_str(&rename_probe(&text, probe, new, false).await);
    }
    expect![[r#"
        "x":(1)2 -> y: prepared 4:97-4:98 x placeholder "x"; refused: "the mesh already has an axis \"y\""
        @mesh = -> other: prepared 2:10-2:14 mesh placeholder "mesh"; refused: "`@other` is already defined in this module"
        %4#1 -> %3: prepared 14:27-14:29 %4 placeholder "%4"; refused: "`%3` already names a value in scope here"
        %c, %c -> %0: prepared 9:23-9:25 %c placeholder "%c"; refused: "`%0` already names a value in scope here"
        %a: -> not a name: prepared 5:163-5:165 %a placeholder "%a"; refused: "`not a name` is not an SSA value name (`%` then digits, or a letter or one of `$._-` followed by letters, digits and `$._-`)"
        stablehlo.add %c -> x: prepared null; rename null
    "#]].assert_eq(&out);
}

/// Without `prepareSupport` the server must not offer prepareRename.
#[tokio::test]
async fn rename_capabilities_follow_the_client() {
    let mut s = TestServer::new();
    let r = s.initialize(capabilities(&[])).await;
    assert_eq!(r["capabilities"]["renameProvider"], json!(true));
    assert_eq!(r["capabilities"]["referencesProvider"], json!(true));
    let mut s = TestServer::new();
    let r = s.initialize(client(&[])).await;
    assert_eq!(r["capabilities"]["renameProvider"], json!({"prepareProvider": true}));
}
