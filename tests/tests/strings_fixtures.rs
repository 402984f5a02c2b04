//! sdy and GSPMD text inside string attributes, on data-driven fixtures: every
//! `tests/fixtures/ide/strings/NAME.mlir` marks cursor positions with `$0`; the markers
//! are stripped and the text analysed (split at `// -----` when it has such lines).
//! `NAME.md` holds the in-string diagnostics (with the source text each one covers),
//! then per cursor the hover and the definition. `UPDATE_EXPECT=1 cargo test -p
//! sdy-tests --test strings_fixtures` rewrites the expectations.

use sdy_analysis::diag::LineIndex;
use sdy_analysis::ide::strings::{self, Scope};
use sdy_analysis::model::Model;
use sdy_tests::{fixtures, mlir_files, strip_markers};

/// `line:col-line:col` (1-based, byte columns) and the covered text.
fn place(index: &LineIndex, src: &str, s: sdy_syntax::Span) -> String {
    let (l0, c0) = index.line_col(s.start);
    let (l1, c1) = index.line_col(s.end);
    format!("{l0}:{c0}-{l1}:{c1} `{}`", s.text(src))
}

/// The innermost op at `offset` (what the editor's position index answers).
fn op_at(model: &Model, offset: u32) -> Option<u32> {
    sdy_analysis::query::innermost_op(model, offset, false)
}

fn render(text: &str) -> String {
    let (src, cursors) = strip_markers(text);
    let split = src.contains("\n// -----");
    let chunks = sdy_analysis::parse_chunks(&src, split);
    let index = LineIndex::new(&src);
    let mut out = String::from("## diagnostics\n\n");
    for chunk in &chunks {
        let analysis = sdy_analysis::analyze_chunk(&src, chunk);
        let model = &analysis.model;
        for d in strings::diagnostics(model, &src, chunk) {
            out.push_str(&format!(
                "- {} {}: {}\n",
                place(&index, &src, d.focus),
                d.severity.as_str(),
                d.message
            ));
            // Every in-string diagnostic is also one of the chunk's diagnostics.
            assert!(analysis.diagnostics.contains(&d), "not in analyze_chunk: {d:?}");
        }
    }
    for (n, &offset) in cursors.iter().enumerate() {
        let Some(chunk) = chunks.iter().find(|c| c.span.start <= offset && offset <= c.span.end)
        else {
            continue;
        };
        let model = Model::build(chunk);
        let scope = Scope::new(&model, &src, chunk.span.start, &chunk.top);
        let op = op_at(&model, offset);
        let (line, col) = index.line_col(offset);
        out.push_str(&format!("\n## {}: {line}:{col}\n\n", n + 1));
        match strings::hover(&scope, op, offset) {
            Some(h) => {
                out.push_str(&format!("hover on {}\n\n", place(&index, &src, h.range)));
                out.push_str(h.markdown.trim_end());
                out.push('\n');
            }
            None => out.push_str("no hover\n"),
        }
        match strings::definition(&scope, op, offset) {
            Some(s) => out.push_str(&format!("\ndefinition: {}\n", place(&index, &src, s))),
            None => out.push_str("\ndefinition: none\n"),
        }
    }
    out
}

#[test]
fn strings_fixtures() {
    for input in mlir_files(&fixtures("ide/strings")) {
        let text = std::fs::read_to_string(&input).unwrap();
        expect_test::expect_file![input.with_extension("md")].assert_eq(&render(&text));
    }
}

/// Hovering and jumping from every byte of every fixture never panics, and answers lie
/// in the text.
#[test]
fn every_offset() {
    for path in mlir_files(&fixtures("ide/strings")) {
        let (src, _) = strip_markers(&std::fs::read_to_string(&path).unwrap());
        let chunk = &sdy_analysis::parse_chunks(&src, false)[0];
        let model = Model::build(chunk);
        let scope = Scope::new(&model, &src, 0, &chunk.top);
        for offset in 0..=src.len() as u32 {
            let op = op_at(&model, offset);
            if let Some(h) = strings::hover(&scope, op, offset) {
                assert!(
                    h.range.end as usize <= src.len() && h.range.touches(offset),
                    "{}: hover at {offset} on {:?}",
                    path.display(),
                    h.range
                );
            }
            if let Some(s) = strings::definition(&scope, op, offset) {
                assert!(s.end as usize <= src.len());
            }
        }
    }
}

/// Random edits of the string and fix fixtures (escapes, brackets, quotes, non-ASCII)
/// never make the analysis, the string features or the quick fixes panic, and every
/// fix applies inside the text.
#[test]
fn mutations_never_panic() {
    const ALPHABET: &[&str] = &[
        "\\",
        "\\22",
        "\\\\\\22",
        "\"",
        "{",
        "}",
        "<",
        ">",
        "[",
        "]",
        "(",
        ")",
        ",",
        ":",
        "=",
        "?",
        "@",
        "#",
        "0",
        "1",
        "2",
        "8",
        "x",
        "p1",
        " ",
        "é",
        "😀",
        "mesh",
        "devices=",
        "<=[4]",
        "T(1,0)",
        "last_tile_dim_replicate",
        "#sdy.sharding<",
        "\n",
    ];
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    let dirs = [fixtures("ide/strings"), fixtures("ide/strings").join("../fixes")];
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "mlir") {
                continue;
            }
            let (original, _) = strip_markers(&std::fs::read_to_string(&path).unwrap());
            for _ in 0..150 {
                let mut text = original.clone();
                for _ in 0..1 + next(4) {
                    let mut at = next(text.len() + 1);
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    if next(2) == 0 {
                        text.insert_str(at, ALPHABET[next(ALPHABET.len())]);
                    } else {
                        let mut end = (at + 1 + next(6)).min(text.len());
                        while !text.is_char_boundary(end) {
                            end -= 1;
                        }
                        text.replace_range(at..end, "");
                    }
                }
                exercise(&text);
            }
        }
    }
}

fn exercise(text: &str) {
    let chunk = &sdy_analysis::parse_chunks(text, false)[0];
    let a = sdy_analysis::analyze_chunk(text, chunk);
    let scope = Scope::new(&a.model, text, 0, &chunk.top);
    for e in strings::sites::all(&a.model, text, scope.module) {
        for offset in [e.literal.start, e.literal.start + 2, e.literal.end - 2] {
            let op = op_at(&a.model, offset);
            let _ = strings::hover(&scope, op, offset);
            let _ = strings::definition(&scope, op, offset);
        }
    }
    let all = sdy_syntax::Span::new(0, text.len() as u32);
    for f in sdy_analysis::ide::fixes::fixes(&a.model, text, &a.diagnostics, all) {
        assert!(f.edits.iter().all(|e| e.span.end as usize <= text.len()));
        let _ = sdy_analysis::ide::fixes::apply(text, &f.edits);
    }
}
