//! Syntax errors of a parsed chunk as diagnostics with absolute ranges.

use crate::diag::{Diagnostic, Origin};
use sdy_syntax::tree::{Child, Chunk};

/// Every syntax error of the chunk, in document order.
pub fn syntax_diagnostics(chunk: &Chunk) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    collect(&chunk.top, chunk.span.start, &mut out);
    out
}

fn collect(children: &[Child], base: u32, out: &mut Vec<Diagnostic>) {
    for c in children {
        if c.op.errors.is_empty() && c.op.regions.is_empty() {
            continue; // the common case: nothing to report, nothing nested
        }
        let start = base + c.offset;
        // A failure is a first error plus its chained lines; failures of an op and of
        // its nested ops are ordered by where they start, chains kept together.
        let mut groups: Vec<Vec<Diagnostic>> = Vec::new();
        for e in &c.op.errors {
            let d = Diagnostic::error(
                e.span.shift(start),
                e.message.clone(),
                Origin::Parse { first_of_failure: !e.chained },
            );
            match groups.last_mut() {
                Some(g) if e.chained => g.push(d),
                _ => groups.push(vec![d]),
            }
        }
        let mut nested = Vec::new();
        for r in &c.op.regions {
            for b in &r.blocks {
                collect(&b.ops, start, &mut nested);
            }
        }
        for d in nested {
            match groups.last_mut() {
                Some(g) if d.origin == (Origin::Parse { first_of_failure: false }) => g.push(d),
                _ => groups.push(vec![d]),
            }
        }
        groups.sort_by_key(|g| g[0].span.start);
        out.extend(groups.into_iter().flatten());
    }
}

/// The errors MLIR's parser would print for the chunk: it stops at the first failure,
/// whose error lines are the first error and the chained ones that follow it.
pub fn first_parse_failure(diags: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for d in diags {
        match d.origin {
            Origin::Parse { first_of_failure } => {
                if first_of_failure && !out.is_empty() {
                    break;
                }
                out.push(d.clone());
            }
            _ => continue,
        }
    }
    out
}
