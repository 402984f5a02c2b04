//! `// expected-error @+1 {{...}}` annotations for a diagnostic `sdy_opt` would print
//! (and `expected-note`s for its notes), for people writing Shardy lit tests run with
//! `-verify-diagnostics`: each goes on its own line above the line it is about, with
//! that line's indentation.

use super::Edit;
use crate::diag::{Diagnostic, Severity};
use sdy_syntax::Span;

/// The annotations for `d`, if `sdy_opt` prints it (`view`: the chunk's MLIR view).
pub(super) fn annotate(
    src: &str,
    d: &Diagnostic,
    view: &[Diagnostic],
) -> Option<(String, Vec<Edit>)> {
    if !view.iter().any(|v| v.span == d.span && v.message == d.message) {
        return None;
    }
    let kind = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => return None,
    };
    let mut lines: Vec<(u32, Vec<(&str, &str)>)> = Vec::new();
    let items = std::iter::once((d.span.start, kind, d.message.as_str()))
        .chain(d.notes.iter().map(|n| (n.span.start, "note", n.message.as_str())));
    for (at, kind, message) in items {
        // The annotation syntax cannot hold `}}` or a line break.
        if message.contains("}}") || message.contains('\n') || at as usize > src.len() {
            return None;
        }
        let start = line_start(src, at);
        match lines.iter_mut().find(|(s, _)| *s == start) {
            Some((_, group)) => group.push((kind, message)),
            None => lines.push((start, vec![(kind, message)])),
        }
    }
    let mut edits = Vec::new();
    for (start, group) in lines {
        let line = &src[start as usize..];
        let indent = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
        let mut text = String::new();
        for (i, (kind, message)) in group.iter().enumerate() {
            let n = group.len() - i;
            text.push_str(&format!("{indent}// expected-{kind} @+{n} {{{{{message}}}}}\n"));
        }
        edits.push(Edit { span: Span::empty(start), text });
    }
    edits.sort_by_key(|e| e.span.start);
    let notes = if d.notes.is_empty() { "" } else { " and `// expected-note`" };
    Some((format!("Add `// expected-{kind}`{notes} for this diagnostic"), edits))
}

fn line_start(src: &str, at: u32) -> u32 {
    src.as_bytes()[..at as usize].iter().rposition(|&b| b == b'\n').map_or(0, |i| i as u32 + 1)
}
