//! "Why does this value end up sharded like this?": the propagated sharding of a value
//! and its reasons, as markdown: per axis the user-written sharding it came from and the
//! ops it went through (with their priority round), and the axes a conflict dropped
//! (the conflicting tensors, where to look). Locations are rendered through a callback,
//! so a front end can make them links.

use super::source;
use super::why_not;
use crate::mlir_loc::SourceLoc;
use crate::model::{Model, OpId};
use crate::propagation::driver::Phase;
use crate::propagation::editor::reshards::{
    axes_text, compact, node_name, source_span, source_text,
};
use crate::propagation::editor::{ChunkPropagation, Site, ValueResult};
use crate::propagation::inference::{AxisOrigin, Clash, Conflict, Hop, Source};
use crate::propagation::origins::Node;
use crate::sharding::{AxisRef, TensorSharding};
use std::fmt::Write;

/// A location (chunk-relative offset) as `(1-based line, link target)`, or `None`.
pub type Locate<'a> = &'a dyn Fn(u32) -> Option<(u32, String)>;

/// How many hops of an origin walk are shown (the rest is summarised).
const MAX_HOPS: usize = 12;

/// The propagation section of a value's hover.
pub fn explain(
    model: &Model,
    src: &str,
    p: &ChunkPropagation,
    v: &ValueResult,
    stale: bool,
    locate: Locate<'_>,
) -> String {
    let strategy = p.strategy;
    let (origins, conflicts) = (p.origins(v), p.conflicts(v));
    let mut out = String::new();
    let head = if stale { "Propagated (stale: the text changed since)" } else { "Propagated" };
    match v.inferred.as_slice() {
        [] => {
            let _ =
                writeln!(out, "**{head}** (`{}`): not in the propagated module.", strategy.name());
        }
        [one] => {
            let _ = writeln!(
                out,
                "**{head}** (`{}`): {}",
                strategy.name(),
                sharding_text(&one.sharding)
            );
        }
        many => {
            let _ = writeln!(
                out,
                "**{head}** (`{}`): the value has {} copies that differ (one per call site of its function):",
                strategy.name(),
                many.len()
            );
            for x in many {
                let _ = writeln!(out, "- in `@{}`: {}", x.func, sharding_text(&x.sharding));
            }
        }
    }
    if let Some(w) = &v.written {
        let _ = writeln!(out, "\nWritten: `{}`", w.attr());
    }
    let inferred = v.single().or_else(|| v.inferred.first().and_then(|x| x.sharding.as_ref()));
    if let Some(s) = inferred {
        let mut lines = Vec::new();
        for (d, dim) in s.dims.iter().enumerate() {
            for a in &dim.axes {
                match origins.iter().find(|o| o.axis == *a) {
                    Some(o) => lines.push(origin_line(model, src, a, d, o, locate)),
                    None => lines.push(format!("- {a} (dimension {d}): origin not recorded")),
                }
            }
        }
        if !lines.is_empty() {
            let _ = writeln!(out, "\n**Why**:");
            for l in lines {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    let blocked = p.blocked(v);
    let conflicts: Vec<&Conflict> =
        conflicts.iter().filter(|c| !why_not::explained_by(c, &blocked)).collect();
    if !conflicts.is_empty() {
        let _ = writeln!(out, "\n**Conflicts**:");
        for c in &conflicts {
            let _ = writeln!(out, "{}", conflict_line(model, src, c, locate));
        }
    }
    let place = |o: Option<u32>| at(locate, o);
    let not: Vec<String> = why_not::why_not(model, p, v)
        .iter()
        .filter(|w| !matches!(w.cause, why_not::Cause::Conflict(_)))
        .map(|w| format!("- {}", why_not::text(w, &place)))
        .collect();
    if !not.is_empty() {
        let _ = writeln!(out, "\n**Why not sharded further**:");
        for l in not {
            let _ = writeln!(out, "{l}");
        }
    }
    // The op's other conflicts: what its other tensors lost (an operand resharded for
    // this value's sake, e.g. a weight sharded on its contracting dimension).
    if let Site::OpResult { op, index } = v.site {
        let me = Node { result: true, index };
        let others: Vec<&Conflict> =
            p.conflicts_at_op(op).into_iter().filter(|c| c.node != me).collect();
        let clashes = p.clashes_at_op(op);
        if !others.is_empty() || !clashes.is_empty() {
            let _ = writeln!(out, "\n**At its op**:");
            for c in others {
                let _ = writeln!(out, "{}", conflict_line(model, src, c, locate));
            }
            for c in clashes {
                let _ = writeln!(out, "{}", clash_line(model, op, c, locate));
            }
        }
    }
    out
}

fn sharding_text(s: &Option<TensorSharding>) -> String {
    match s {
        Some(s) => format!("`{}`", s.attr()),
        None => "no sharding".to_string(),
    }
}

/// `[line 12](target)` or `line 12`, or the op name alone.
fn at(locate: Locate<'_>, offset: Option<u32>) -> String {
    match offset.and_then(locate) {
        Some((line, target)) if !target.is_empty() => format!("[line {line}]({target})"),
        Some((line, _)) => format!("line {line}"),
        None => "made by a pass".to_string(),
    }
}

fn origin_line(
    model: &Model,
    src: &str,
    a: &AxisRef,
    dim: usize,
    o: &AxisOrigin,
    locate: Locate<'_>,
) -> String {
    let mut s = format!("- {a} (dimension {dim}) ← {}", source_text(&o.source));
    if let Some(name) = source_loc(model, src, &o.source).as_ref().and_then(source::short) {
        let _ = write!(s, " `{name}`");
    }
    if let Some(span) = source_span(model, &o.source) {
        let _ = write!(s, " ({})", at(locate, Some(span.start)));
    }
    if o.priority > 0 {
        let _ = write!(s, ", priority p{}", o.priority);
    }
    if o.hops.is_empty() {
        s.push_str(": written on the value itself");
        return s;
    }
    s.push_str(", via ");
    let shown: Vec<String> =
        o.hops.head(MAX_HOPS).into_iter().map(|h| hop_text(h, locate)).collect();
    s.push_str(&shown.join(" → "));
    if o.hops.len() > MAX_HOPS {
        let _ = write!(s, " → … ({} more)", o.hops.len() - MAX_HOPS);
    }
    if let Some(last) = o.hops.last() {
        let phase = phase_text(last.phase);
        if !phase.is_empty() {
            let _ = write!(s, " ({phase})");
        }
    }
    s
}

fn hop_text(h: &Hop, locate: Locate<'_>) -> String {
    format!("`{}` ({})", h.op_name, at(locate, h.op))
}

fn phase_text(p: Phase) -> String {
    let mut parts = Vec::new();
    if p.user_priority > 0 {
        parts.push(format!("user priority p{}", p.user_priority));
    }
    if let Some(l) = p.op_level {
        parts.push(format!("op-priority round {l}"));
    }
    if p.aggressive {
        parts.push("aggressive".to_string());
    }
    parts.join(", ")
}

/// Where the value at `node` of the op starting at `op` is defined: `(name, offset)`.
fn defined_at(model: &Model, op: Option<u32>, node: Node) -> Option<(String, u32)> {
    let op = model.ops.iter().find(|o| Some(o.start) == op)?;
    let v =
        if node.result { *op.results.get(node.index)? } else { (*op.operands.get(node.index)?)? };
    let info = model.value(v);
    Some((info.name.to_string(), info.span.start))
}

fn conflict_line(model: &Model, src: &str, c: &Conflict, locate: Locate<'_>) -> String {
    let from = op_loc(model, src, c.op).as_ref().and_then(source::short);
    let mut s = format!(
        "- at `{}`{} ({}), as its {}{}: {} dropped on factor `{}`",
        c.op_name,
        from.map_or(String::new(), |n| format!(" `{n}`")),
        at(locate, c.op),
        node_name(c.node),
        c.dim.map_or(String::new(), |d| format!(" (dimension {d})")),
        axes_text(&c.dropped),
        c.factor
    );
    let others: Vec<String> = c
        .sources
        .iter()
        .enumerate()
        .map(|(k, (n, axes))| {
            // Where to look: the definition of the disagreeing operand.
            let place = match defined_at(model, c.op, *n) {
                Some((name, at_offset)) if !n.result => {
                    format!(" (`{name}`, {})", at(locate, Some(at_offset)))
                }
                _ => String::new(),
            };
            let on = c.source_dims.get(k).copied().flatten();
            let on = on.map_or(String::new(), |d| format!(" on its dimension {d}"));
            format!("{}{place} has `{{{}}}`{on}", node_name(*n), axes_text(axes))
        })
        .collect();
    if !others.is_empty() {
        let _ = write!(s, " ({})", others.join(", "));
    }
    let kept = if c.kept.is_empty() {
        "none".to_string()
    } else {
        format!("`{{{}}}`", axes_text(&c.kept))
    };
    let _ = write!(s, "; kept {kept}");
    s
}

/// The op starting at `start` (ops are in pre-order, so sorted by start).
pub(crate) fn op_at(model: &Model, start: u32) -> Option<OpId> {
    let i = model.ops.partition_point(|o| o.start < start);
    (model.ops.get(i)?.start == start).then_some(i as OpId)
}

fn op_loc(model: &Model, src: &str, op: Option<u32>) -> Option<SourceLoc> {
    source::op_source(model, src, op_at(model, op?)?)
}

/// The `loc(...)` of where a user-written sharding is: the function argument or
/// result, else the op.
pub(crate) fn source_loc(model: &Model, src: &str, s: &Source) -> Option<SourceLoc> {
    match s {
        Source::FuncArg { func, index } => {
            let f = *model.funcs.get(func)?;
            let v = *model.op(f).region_args.first()?.get(*index)?;
            source::value_source(model, src, v)
        }
        Source::FuncResult { func, index } => {
            source::func_result_source(model, src, *model.funcs.get(func)?, *index)
        }
        Source::Constraint { op }
        | Source::ManualIn { op, .. }
        | Source::ManualOut { op, .. }
        | Source::OpSharding { op, .. } => op_loc(model, src, *op),
    }
}

/// `- "fsdp" shards factor `i` (operand 0 dimension 0, result 0 dimension 0) and factor
/// `k` (operand 1 `%w` dimension 0) ...`
fn clash_line(model: &Model, op: u32, c: &Clash, locate: Locate<'_>) -> String {
    let sides: Vec<String> = c
        .sides
        .iter()
        .map(|side| {
            let ts: Vec<String> = side
                .tensors
                .iter()
                .map(|(n, d)| {
                    let name = match defined_at(model, Some(op), *n) {
                        Some((name, o)) if !n.result => {
                            format!(" `{name}` ({})", at(locate, Some(o)))
                        }
                        _ => String::new(),
                    };
                    let dim = d.map_or(String::new(), |d| format!(" dimension {d}"));
                    format!("{}{name}{dim}", node_name(*n))
                })
                .collect();
            format!("factor `{}` ({})", side.factor, ts.join(", "))
        })
        .collect();
    format!(
        "- {} shards both {} of `{}`: one axis cannot shard two dimensions of the \
         computation, so the explicit-reshards pass reshards one side (an all-gather of \
         the other factor's tensors)",
        c.axis,
        sides.join(" and "),
        c.op_name
    )
}

/// A one-line summary for an inlay hint's tooltip title.
pub fn summary(v: &ValueResult) -> String {
    match v.single() {
        Some(s) => compact(s),
        None => "several shardings".to_string(),
    }
}
