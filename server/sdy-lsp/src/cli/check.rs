//! `sdy-lsp check`: every diagnostic of the given files, compiler style (MLIR's text, byte
//! for byte) or as JSON (which adds each diagnostic's code).
//! Exit status 1 if any error (hints and information never count), else 0.

use super::report;
use sdy_analysis::diag::{LineIndex, Severity};
use std::fmt::Write;
use std::process::ExitCode;

pub fn run(args: &[String]) -> ExitCode {
    let mut json = false;
    let mut split = false;
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--format" => match it.next().map(String::as_str) {
                Some("json") => json = true,
                Some("text") => json = false,
                other => {
                    complain!("sdy-lsp check: --format takes text or json, got {other:?}");
                    return ExitCode::from(2);
                }
            },
            "--format=json" => json = true,
            "--format=text" => json = false,
            "--split-input-file" | "-split-input-file" => split = true,
            f if f.starts_with('-') && f != "-" => {
                complain!("sdy-lsp check: unknown option '{f}'");
                return ExitCode::from(2);
            }
            f => files.push(f.to_string()),
        }
    }
    if files.is_empty() {
        complain!("sdy-lsp check: no input files");
        return ExitCode::from(2);
    }
    let mut any_error = false;
    let mut text_out = String::new();
    let mut json_items = Vec::new();
    for file in &files {
        let text = match super::read_input(file) {
            Ok(t) => t,
            Err(e) => {
                complain!("sdy-lsp check: cannot read {file}: {e}");
                return ExitCode::from(2);
            }
        };
        let index = LineIndex::new(&text);
        for chunk in sdy_analysis::parse_chunks(&text, split) {
            let analysis = sdy_analysis::analyze_chunk(&text, &chunk);
            for d in &analysis.diagnostics {
                any_error |= d.severity == Severity::Error;
                if json {
                    json_items.push(json_diagnostic(file, &index, d));
                } else {
                    report::render(file, &index, d, &mut text_out);
                }
            }
        }
    }
    if json {
        text_out = format!("[{}]\n", json_items.join(",\n "));
    }
    super::out::print_then(&text_out, if any_error { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn json_diagnostic(file: &str, index: &LineIndex, d: &sdy_analysis::diag::Diagnostic) -> String {
    let pos = |off: u32| {
        let (l, c) = index.line_col(off);
        format!("{{\"line\": {l}, \"column\": {c}, \"offset\": {off}}}")
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"file\": {}, \"severity\": \"{}\", \"code\": \"{}\", \"message\": {}, \"range\": {{\"start\": {}, \"end\": {}}}, \"notes\": [",
        json_str(file),
        d.severity.as_str(),
        d.code,
        json_str(&d.message),
        pos(d.focus.start),
        pos(d.focus.end)
    );
    for (i, n) in d.notes.iter().enumerate() {
        let _ = write!(
            s,
            "{}{{\"message\": {}, \"start\": {}}}",
            if i > 0 { ", " } else { "" },
            json_str(&n.message),
            pos(n.span.start)
        );
    }
    s.push_str("]}");
    s
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
