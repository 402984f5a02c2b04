//! Syntax errors of a parsed chunk as diagnostics with absolute ranges.

use crate::diag::{Diagnostic, Origin};
use sdy_syntax::tree::{ChildRef, Children, Chunk};

/// Every syntax error of the chunk, in document order.
pub fn syntax_diagnostics(chunk: &Chunk) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    collect(&chunk.top, chunk.span.start, &mut out);
    out
}

/// [`syntax_diagnostics`], given where the statements with errors of their own start
/// (absolute, sorted: see [`error_sites`]): only the statements around those are read.
pub fn syntax_diagnostics_at(chunk: &Chunk, sites: &[u32]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    collect_at(&chunk.top, chunk.span.start, sites, &mut out);
    out
}

/// Appends where the statements of `children` (at `base`) with errors of their own
/// start, at any depth, in order.
pub fn error_sites(children: &Children, base: u32, out: &mut Vec<u32>) {
    for c in children {
        let start = base + c.offset;
        if !c.op.errors.is_empty() {
            out.push(start);
        }
        for b in c.op.regions.iter().flat_map(|r| &r.blocks) {
            error_sites(&b.ops, start, out);
        }
    }
}

fn collect(children: &Children, base: u32, out: &mut Vec<Diagnostic>) {
    for c in children {
        if c.op.errors.is_empty() && c.op.regions.is_empty() {
            continue; // the common case: nothing to report, nothing nested
        }
        let start = base + c.offset;
        let mut nested = Vec::new();
        for r in &c.op.regions {
            for b in &r.blocks {
                collect(&b.ops, start, &mut nested);
            }
        }
        emit(c, start, nested, out);
    }
}

/// `collect` for the statements holding `sites` only (a statement holds the sites in
/// its text; those of nested statements are found below it).
fn collect_at(children: &Children, base: u32, sites: &[u32], out: &mut Vec<Diagnostic>) {
    let mut k = 0;
    while let Some(&site) = sites.get(k) {
        let i = children.partition_point(|c| base + c.offset <= site);
        let Some(c) = i.checked_sub(1).map(|i| children.at(i)) else {
            k += 1;
            continue;
        };
        let start = base + c.offset;
        let end = start + c.op.len.max(1);
        if site >= end {
            k += 1;
            continue;
        }
        let k_end = k + sites[k..].partition_point(|&s| s < end);
        let mut nested = Vec::new();
        for r in &c.op.regions {
            for b in &r.blocks {
                collect_at(&b.ops, start, &sites[k..k_end], &mut nested);
            }
        }
        emit(c, start, nested, out);
        k = k_end;
    }
}

/// The diagnostics of one statement: its errors and those nested in it (`nested`). A
/// failure is a first error plus its chained lines; failures of an op and of its nested
/// ops are ordered by where they start, chains kept together.
fn emit(c: ChildRef, start: u32, nested: Vec<Diagnostic>, out: &mut Vec<Diagnostic>) {
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
    for d in nested {
        match groups.last_mut() {
            Some(g) if d.origin == (Origin::Parse { first_of_failure: false }) => g.push(d),
            _ => groups.push(vec![d]),
        }
    }
    groups.sort_by_key(|g| g[0].span.start);
    out.extend(groups.into_iter().flatten());
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
