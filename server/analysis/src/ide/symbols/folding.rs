//! Folding ranges of one chunk: regions (`{ ... }` of functions, computations, loops and
//! an explicit `module`), attribute dictionaries and arrays written over several lines
//! (shardings included), and the `{-# ... #-}` resource section.
//!
//! A fold is the byte range whose lines collapse onto its first line. When the closing
//! bracket starts its line, that line stays visible (the fold ends on the line before),
//! as editors fold brackets themselves.

use crate::model::Model;
use sdy_syntax::tree::{Attr, AttrDict, AttrKind, Children, Custom, NamedAttr, Op, StmtKind};
use sdy_syntax::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FoldKind {
    Region,
    Attribute,
    Resource,
}

/// Fold the lines from the one holding `start` to the one holding `end` (inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fold {
    pub start: u32,
    pub end: u32,
    pub kind: FoldKind,
}

/// The folds of a chunk (`top` its top level, `src` its text), sorted, each spanning
/// at least two lines.
pub fn folding_ranges(model: &Model, top: &Children, src: &str) -> Vec<Fold> {
    let lines = Lines::new(src);
    let mut out = Vec::new();
    let mut add = |span: Span, kind: FoldKind| {
        if let Some(f) = lines.fold(span, kind) {
            out.push(f);
        }
    };
    for c in top {
        match c.op.kind {
            StmtKind::Resource => add(c.span(), FoldKind::Resource),
            // An explicit module (not in the model): its region and its attributes.
            StmtKind::Op if c.op.full_name() == "builtin.module" => {
                for r in &c.op.regions {
                    add(r.span.shift(c.offset), FoldKind::Region);
                }
                if let Custom::Module(h) = &c.op.custom {
                    if let Some(d) = &h.attrs {
                        dict(d, c.offset, &lines, &mut add);
                    }
                }
            }
            _ => {}
        }
    }
    for info in &model.ops {
        let node: &Op = &info.node;
        for r in &node.regions {
            add(r.span.shift(info.start), FoldKind::Region);
        }
        // Attributes rarely span lines: skip ops written on one line.
        if lines.same_line(info.start, info.start + node.len) {
            continue;
        }
        attrs(node, info.start, &lines, &mut add);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The multi-line attribute dictionaries and arrays of an op itself.
fn attrs(node: &Op, base: u32, lines: &Lines, add: &mut dyn FnMut(Span, FoldKind)) {
    for a in &node.inherent {
        named(a, base, lines, add);
    }
    if let Some(d) = &node.attrs {
        dict(d, base, lines, add);
    }
    if let Custom::Func(f) = &node.custom {
        let arg_dicts = f.args.iter().filter_map(|a| a.attrs.as_ref());
        let res_dicts = f.results.iter().filter_map(|r| r.attrs.as_ref());
        for d in arg_dicts.chain(res_dicts).chain(f.fn_attrs.as_ref()) {
            dict(d, base, lines, add);
        }
    }
}

fn dict(d: &AttrDict, base: u32, lines: &Lines, add: &mut dyn FnMut(Span, FoldKind)) {
    let span = d.span.shift(base);
    if lines.same_line(span.start, span.end) {
        return;
    }
    add(span, FoldKind::Attribute);
    for a in &d.entries {
        named(a, base, lines, add);
    }
}

fn named(a: &NamedAttr, base: u32, lines: &Lines, add: &mut dyn FnMut(Span, FoldKind)) {
    if let Some(v) = &a.value {
        attr(v, base, lines, add);
    }
}

fn attr(a: &Attr, base: u32, lines: &Lines, add: &mut dyn FnMut(Span, FoldKind)) {
    let span = a.span.shift(base);
    if lines.same_line(span.start, span.end) {
        return;
    }
    match &a.kind {
        AttrKind::Array(items) => {
            add(span, FoldKind::Attribute);
            items.iter().for_each(|i| attr(i, base, lines, add));
        }
        AttrKind::Dict(d) => dict(d, base, lines, add),
        // Shardings and the other sdy attributes, `dense<...>` blobs, ...
        AttrKind::Sdy(_) | AttrKind::Elements { .. } | AttrKind::Opaque => {
            add(span, FoldKind::Attribute)
        }
        _ => {}
    }
}

/// Line starts of the chunk's text.
struct Lines<'a> {
    src: &'a str,
    starts: Vec<u32>,
}

impl<'a> Lines<'a> {
    fn new(src: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', src.as_bytes()).map(|i| i as u32 + 1));
        Lines { src, starts }
    }

    fn line(&self, offset: u32) -> usize {
        self.starts.partition_point(|&s| s <= offset) - 1
    }

    /// Whether the range `start..end` (its last byte `end - 1`) is on one line. Most
    /// ranges are short or break early: looking for a line break beats two searches.
    fn same_line(&self, start: u32, end: u32) -> bool {
        let bytes = self.src.as_bytes();
        let last = (end as usize).saturating_sub(1).min(bytes.len());
        memchr::memchr(b'\n', bytes.get(start as usize..last).unwrap_or(&[])).is_none()
    }

    /// The fold of `span` (whose last byte closes it), keeping a closing bracket that
    /// starts its line visible; `None` if it leaves fewer than two lines.
    fn fold(&self, span: Span, kind: FoldKind) -> Option<Fold> {
        if span.end <= span.start + 1 {
            return None;
        }
        let (first, mut last) = (self.line(span.start), self.line(span.end - 1));
        let line_start = *self.starts.get(last)? as usize;
        let before_close = self.src.get(line_start..span.end as usize - 1)?;
        // `}` or `#-}` at the start of its line.
        let closing = before_close.trim_start();
        if (closing.is_empty() || closing == "#-") && last > first {
            last -= 1;
        }
        if last <= first {
            return None;
        }
        let end_of_last = self.starts.get(last + 1).map_or(self.src.len() as u32, |&s| s - 1);
        Some(Fold { start: span.start, end: end_of_last.max(span.start), kind })
    }
}
