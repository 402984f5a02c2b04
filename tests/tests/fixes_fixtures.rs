//! Quick fixes on data-driven fixtures: every `tests/fixtures/ide/fixes/NAME.mlir` is
//! split at `// -----`; each chunk is analysed as a file of its own and every fix of
//! every diagnostic is applied. `NAME.md` shows the diagnostics, their fixes and what
//! each changes. Each quick fix must make its diagnostic go away without a new error
//! (the fixed text is analysed again), and each `expected-*` annotation must point at
//! the line of what it annotates. `UPDATE_EXPECT=1 cargo test -p sdy-tests --test
//! fixes_fixtures` rewrites the expectations.

use sdy_analysis::diag::{Diagnostic, LineIndex, Severity};
use sdy_analysis::ide::fixes::{self, Fix, FixKind};
use sdy_syntax::Span;
use sdy_tests::{fixtures, mlir_files};

fn analyse(text: &str) -> sdy_analysis::ChunkAnalysis {
    let chunk = &sdy_analysis::parse_chunks(text, false)[0];
    sdy_analysis::analyze_chunk(text, chunk)
}

fn errors(diags: &[Diagnostic]) -> Vec<String> {
    let mut out: Vec<String> =
        diags.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.clone()).collect();
    out.sort();
    out
}

/// The lines that differ between `a` and `b` (common prefix and suffix left out).
fn diff(a: &str, b: &str) -> String {
    let (x, y): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let pre = x.iter().zip(&y).take_while(|(p, q)| p == q).count();
    let suf = x[pre..].iter().rev().zip(y[pre..].iter().rev()).take_while(|(p, q)| p == q).count();
    let mut out = String::new();
    for l in &x[pre..x.len() - suf] {
        out.push_str(&format!("    -{l}\n"));
    }
    for l in &y[pre..y.len() - suf] {
        out.push_str(&format!("    +{l}\n"));
    }
    out
}

/// Asserts what a fix must do; `text` is the chunk, `fixed` the text after the fix.
fn check_fix(text: &str, d: &Diagnostic, before: &[Diagnostic], fix: &Fix, fixed: &str) {
    let after = analyse(fixed);
    match fix.kind {
        FixKind::QuickFix => {
            let count = |ds: &[Diagnostic]| ds.iter().filter(|x| x.message == d.message).count();
            assert!(
                count(&after.diagnostics) < count(before),
                "{:?} did not fix {:?}:\n{fixed}",
                fix.title,
                d.message
            );
            let (was, now) = (errors(before), errors(&after.diagnostics));
            for e in &now {
                let n = |v: &[String]| v.iter().filter(|x| *x == e).count();
                assert!(n(&now) <= n(&was), "{:?} introduced {e:?}:\n{fixed}", fix.title);
            }
        }
        FixKind::Annotation => {
            // Each annotation names a line holding the diagnostic (or a note) with the
            // same text as before the fix.
            let old = LineIndex::new(text);
            let lines: Vec<&str> = fixed.lines().collect();
            let places: Vec<u32> =
                std::iter::once(d.span.start).chain(d.notes.iter().map(|n| n.span.start)).collect();
            for (i, l) in lines.iter().enumerate() {
                let Some(at) = l.find("// expected-") else { continue };
                if !fix.edits.iter().any(|e| e.text.contains(&l[at..])) {
                    continue;
                }
                let plus = l.split("@+").nth(1).and_then(|r| r.split(' ').next()).unwrap();
                let target = lines[i + plus.parse::<usize>().unwrap()];
                assert!(
                    places.iter().any(|&p| {
                        let line = old.line_col(p).0 as usize - 1;
                        text.lines().nth(line) == Some(target)
                    }),
                    "{l} points at {target:?}"
                );
            }
        }
    }
}

fn render(src: &str) -> String {
    let mut out = String::new();
    let index = LineIndex::new(src);
    for chunk in sdy_analysis::parse_chunks(src, true) {
        let text = chunk.span.text(src);
        let first_line = index.line_col(chunk.span.start).0;
        let a = analyse(text);
        let all = fixes::fixes(&a.model, text, &a.diagnostics, Span::new(0, text.len() as u32));
        let local = LineIndex::new(text);
        out.push_str(&format!("## chunk at line {first_line}\n\n"));
        for (i, d) in a.diagnostics.iter().enumerate() {
            let (l, c) = local.line_col(d.focus.start);
            out.push_str(&format!(
                "- {}:{c} `{}` {}: {}\n",
                l + first_line - 1,
                d.focus.text(text),
                d.severity.as_str(),
                d.message
            ));
            for f in all.iter().filter(|f| f.diagnostic == i) {
                let fixed = fixes::apply(text, &f.edits);
                check_fix(text, d, &a.diagnostics, f, &fixed);
                let kind = match f.kind {
                    FixKind::QuickFix => "quick fix",
                    FixKind::Annotation => "annotation",
                };
                let pref = if f.preferred { ", preferred" } else { "" };
                out.push_str(&format!("  - {kind}{pref}: {}\n", f.title));
                out.push_str(&diff(text, &fixed));
            }
        }
        out.push('\n');
    }
    out
}

#[test]
fn fixes_fixtures() {
    for input in mlir_files(&fixtures("ide/fixes")) {
        let text = std::fs::read_to_string(&input).unwrap();
        expect_test::expect_file![input.with_extension("md")].assert_eq(&render(&text));
    }
}

/// Asking for fixes at every offset of the fixtures never panics and every edit lies in
/// the text.
#[test]
fn fixes_at_every_offset() {
    for path in mlir_files(&fixtures("ide/fixes")) {
        let src = std::fs::read_to_string(&path).unwrap();
        let a = analyse(&src);
        for offset in 0..=src.len() as u32 {
            for f in fixes::fixes(&a.model, &src, &a.diagnostics, Span::empty(offset)) {
                assert!(f.edits.iter().all(|e| e.span.end as usize <= src.len()));
            }
        }
    }
}
