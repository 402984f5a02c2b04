//! "Why is this dimension not sharded?": for a value a propagation run leaves with a
//! dimension without the axes the run gave it or a neighbour had, the causes as plain
//! data: an export pass that dropped them from a function input or output (not
//! divisible, sub-axes), a conflict at an op (which factor and dimension, with which
//! tensor), or the value's own sharding or an op keeping them away (a closed
//! dimension, explicitly replicated axes, a propagation barrier, a manual axis, a
//! dimension waiting for its user priority), or a conflict decided by an earlier
//! priority round. Also the information notes "ends up replicated: ..." on function
//! arguments and results.

use super::source;
use crate::model::Model;
use crate::propagation::editor::reshards::{axes_text, node_name};
use crate::propagation::editor::{ChunkPropagation, Site, ValueResult};
use crate::propagation::inference::{BlockCause, Blocked, Conflict};
use crate::propagation::pipeline::export::evenly_sharded;
use crate::sharding::axis;
use crate::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};
use sdy_syntax::tree::{Custom, Dim, Type};
use sdy_syntax::Span;

/// One reason a dimension of a value lacks axes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// `sdy-update-non-divisible-input-output-shardings` kept only the axes that divide
    /// the dimension of a function input or output evenly: `size` is not a multiple
    /// of `shards`, the product of the sizes of `axes`.
    NotDivisible {
        size: i64,
        axes: Vec<AxisRef>,
        shards: i64,
    },
    /// `sdy-remove-sub-axes-in-input-output-shardings` removed these sub-axes from an
    /// open dimension of the main function's input or output.
    SubAxesRemoved {
        axes: Vec<AxisRef>,
    },
    /// The propagation run gave the dimension these axes and a later pass of the
    /// pipeline's export removed them.
    Exported {
        axes: Vec<AxisRef>,
    },
    Conflict(Conflict),
    /// A conflict this value lost to axes decided in an earlier user-priority round
    /// (`Conflict::kept_priority`).
    Priority(Conflict),
    Blocked(Blocked),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhyNot {
    /// The value's dimension (`None` when the op's rule does not map it to one).
    pub dim: Option<usize>,
    pub cause: Cause,
}

/// The function (by symbol) and the argument/result a site is.
fn io_slot(model: &Model, site: Site) -> Option<(String, bool, usize, u32)> {
    let (func, result, index) = match site {
        Site::Arg { func, index } => (func, false, index),
        Site::Result { func, index } => (func, true, index),
        Site::OpResult { .. } => return None,
    };
    let op = super::why::op_at(model, func)?;
    let Custom::Func(f) = &model.op(op).node.custom else { return None };
    Some((f.sym.text.to_string(), result, index, func))
}

/// The type of a function argument or result site.
fn io_type<'m>(model: &'m Model, v: &ValueResult) -> Option<&'m Type> {
    match v.site {
        Site::Arg { .. } => model.value(v.value?).ty.as_ref(),
        Site::Result { func, index } => {
            let op = super::why::op_at(model, func)?;
            let Custom::Func(f) = &model.op(op).node.custom else { return None };
            Some(&f.results.get(index)?.ty)
        }
        Site::OpResult { .. } => None,
    }
}

fn mesh_of<'a>(p: &'a ChunkPropagation, s: &'a TensorSharding) -> Option<&'a Mesh> {
    match &s.mesh {
        MeshRef::Symbol(n) => p.meshes.get(n),
        MeshRef::Inline(m) => Some(m),
    }
}

/// Why dimensions of `v` lack axes, as far as the run recorded it.
pub fn why_not(model: &Model, p: &ChunkPropagation, v: &ValueResult) -> Vec<WhyNot> {
    let mut out = Vec::new();
    let after = v.single();
    let has = |d: Option<usize>, a: &AxisRef| {
        let dims = after.map_or(&[][..], |s| s.dims.as_slice());
        d.and_then(|d| dims.get(d)).is_some_and(|x| x.axes.iter().any(|b| axis::overlaps(a, b)))
    };
    if let (Some((func, result, index, _)), Some(after)) = (io_slot(model, v.site), after) {
        if let Some(before) = p.io_before_export(&func, result, index) {
            out.extend(export_causes(p, before, after, io_type(model, v)));
        }
    }
    let blocked: Vec<Blocked> =
        p.blocked(v).into_iter().filter(|b| b.axes.iter().any(|a| !has(b.dim, a))).collect();
    for c in p.conflicts(v) {
        if c.dropped.iter().any(|a| !has(c.dim, a)) && !explained_by(&c, &blocked) {
            let dim = c.dim;
            let cause =
                if c.kept_priority.is_some() { Cause::Priority(c) } else { Cause::Conflict(c) };
            out.push(WhyNot { dim, cause });
        }
    }
    out.extend(blocked.into_iter().map(|b| WhyNot { dim: b.dim, cause: Cause::Blocked(b) }));
    out
}

/// Whether a conflict is the value's own explicitly replicated axes, recorded more
/// precisely as blocked at the same op.
pub fn explained_by(c: &Conflict, blocked: &[Blocked]) -> bool {
    blocked
        .iter()
        .any(|b| b.op == c.op && b.node == c.node && c.dropped.iter().all(|a| b.axes.contains(a)))
}

/// The axes the export passes took from a function input or output, and why.
fn export_causes(
    p: &ChunkPropagation,
    before: &TensorSharding,
    after: &TensorSharding,
    ty: Option<&Type>,
) -> Vec<WhyNot> {
    let mut out = Vec::new();
    let shape: Option<Vec<i64>> = ty.and_then(Type::shape).and_then(|dims| {
        dims.iter()
            .map(|d| match d {
                Dim::Static(n) => Some(*n),
                Dim::Dynamic => None,
            })
            .collect()
    });
    let mesh = mesh_of(p, before);
    let even = match (&shape, mesh) {
        (Some(sh), Some(m)) if sh.len() == before.dims.len() => Some(evenly_sharded(before, sh, m)),
        _ => None,
    };
    for (d, dim) in before.dims.iter().enumerate() {
        let kept = after.dims.get(d).map_or(&[][..], |x| x.axes.as_slice());
        let lost: Vec<AxisRef> = dim.axes.iter().filter(|a| !kept.contains(a)).cloned().collect();
        if lost.is_empty() {
            continue;
        }
        let not_divisible = even.as_ref().is_some_and(|e| e.dims[d].axes != dim.axes);
        let cause = match (not_divisible, &shape, mesh) {
            (true, Some(sh), Some(m)) => Cause::NotDivisible {
                size: sh[d],
                axes: dim.axes.clone(),
                shards: axis::total_size(&dim.axes, m),
            },
            _ if lost.iter().any(|a| a.sub.is_some()) => Cause::SubAxesRemoved { axes: lost },
            _ => Cause::Exported { axes: lost },
        };
        out.push(WhyNot { dim: Some(d), cause });
    }
    out
}

fn dim_text(d: Option<usize>) -> String {
    d.map_or("a dimension".to_string(), |d| format!("dimension {d}"))
}

/// `{"x", "y"}`
fn braces(axes: &[AxisRef]) -> String {
    format!("`{{{}}}`", axes_text(axes))
}

/// The text of one cause (markdown, one line), `at` rendering an op's place.
pub fn text(w: &WhyNot, at: &dyn Fn(Option<u32>) -> String) -> String {
    let dim = dim_text(w.dim);
    match &w.cause {
        Cause::NotDivisible { size, axes, shards } => format!(
            "{dim}: {} dropped at the function boundary: not divisible: size {size} is not a \
             multiple of {shards} (the shards of {}); Shardy keeps only axes that divide \
             function inputs and outputs evenly (`sdy-update-non-divisible-input-output-shardings`): \
             the ops inside stay sharded, padded, and the value is resharded at the boundary",
            braces(axes),
            braces(axes)
        ),
        Cause::SubAxesRemoved { axes } => format!(
            "{dim}: {} dropped at the function boundary: sub-axes are removed from the open \
             dimensions of the main function's inputs and outputs \
             (`sdy-remove-sub-axes-in-input-output-shardings`)",
            braces(axes)
        ),
        Cause::Exported { axes } => {
            format!("{dim}: {} dropped by the pipeline's export passes", braces(axes))
        }
        Cause::Conflict(c) => format!(
            "{dim}: {} not taken: a conflict at `{}` ({}) on factor `{}`: {}",
            braces(&c.dropped),
            c.op_name,
            at(c.op),
            c.factor,
            conflict_sides(c)
        ),
        Cause::Priority(c) => format!(
            "{dim}: {} not taken: at `{}` ({}) on factor `{}` it kept {} from a sharding of \
             {}, propagated in an earlier round than the p{} sharding {} comes from (user \
             priorities: lower numbers first)",
            braces(&c.dropped),
            c.op_name,
            at(c.op),
            c.factor,
            braces(&c.kept),
            match c.kept_priority.unwrap_or(0) {
                0 => "priority p0 (or none written)".to_string(),
                p => format!("priority p{p}"),
            },
            c.phase.user_priority,
            braces(&c.dropped)
        ),
        Cause::Blocked(b) => {
            let why = match b.cause {
                BlockCause::Closed => "the dimension is closed in the value's sharding (no axis \
                                       may be added to it)"
                    .to_string(),
                BlockCause::Replicated => format!(
                    "{} explicitly replicated in the value's sharding (`replicated=`)",
                    if b.axes.len() == 1 { "it is" } else { "they are" }
                ),
                BlockCause::Barrier => {
                    "an `sdy.propagation_barrier` lets nothing through in this direction".into()
                }
                BlockCause::Manual { op } => format!(
                    "{} manual in the `sdy.manual_computation` ({}): its body and the free \
                     axes of its operands' and results' shardings cannot be sharded on {}",
                    if b.axes.len() == 1 { "the axis is" } else { "the axes are" },
                    at(op),
                    if b.axes.len() == 1 { "it" } else { "them" }
                ),
                BlockCause::Priority { priority, round } => format!(
                    "the dimension has user priority p{priority}: it stays closed until round \
                     p{priority}, and this came in round p{round} from a sharding of higher \
                     priority (lower number)"
                ),
            };
            format!(
                "{dim}: {} not taken from its {} at `{}` ({}, factor `{}`): {why}",
                braces(&b.axes),
                node_name(b.from),
                b.op_name,
                at(b.op),
                b.factor
            )
        }
    }
}

/// `operand 1 has {"fsdp"} on its dimension 0; this value (result 0, dimension 0) keeps {}`
pub fn conflict_sides(c: &Conflict) -> String {
    let sides: Vec<String> = c
        .sources
        .iter()
        .zip(c.source_dims.iter().chain(std::iter::repeat(&None)))
        .map(|((n, axes), d)| {
            let on = d.map_or(String::new(), |d| format!(" on its dimension {d}"));
            format!("{} has {}{on}", node_name(*n), braces(axes))
        })
        .collect();
    let kept = if c.kept.is_empty() { "none".to_string() } else { braces(&c.kept) };
    format!(
        "{}; this value ({}{}) keeps {kept}",
        sides.join(", "),
        node_name(c.node),
        c.dim.map_or(String::new(), |d| format!(", dimension {d}"))
    )
}

/// The information notes on function arguments and results that end up with no axes
/// at all although the run or a neighbour had some for them: `(span, message)`,
/// chunk-relative like the model; `line_of` gives the (document) line of an offset.
pub fn io_notes(
    model: &Model,
    src: &str,
    p: &ChunkPropagation,
    line_of: &dyn Fn(u32) -> Option<u32>,
) -> Vec<(Span, String)> {
    let mut out = Vec::new();
    for v in &p.values {
        let Some((_, result, index, func)) = io_slot(model, v.site) else { continue };
        if v.inferred.len() > 1
            || v.single().is_some_and(|s| s.dims.iter().any(|d| !d.axes.is_empty()))
        {
            continue;
        }
        // Written fully closed and empty: replicated on purpose.
        let on_purpose = v.written.as_ref().is_some_and(|w| {
            !w.dims.is_empty() && w.dims.iter().all(|d| !d.open && d.axes.is_empty())
        });
        if on_purpose {
            continue;
        }
        let causes = why_not(model, p, v);
        let Some(first) = causes.first() else { continue };
        let Some(op) = super::why::op_at(model, func) else { continue };
        let info = model.op(op);
        let Custom::Func(f) = &info.node.custom else { continue };
        let (what, span, loc) = if result {
            let Some(r) = f.results.get(index) else { continue };
            (
                format!("result {index}"),
                r.ty.span.shift(info.start),
                source::func_result_source(model, src, op, index),
            )
        } else {
            let Some(&arg) = info.region_args.first().and_then(|a| a.get(index)) else { continue };
            let val = model.value(arg);
            (format!("`{}`", val.name), val.span, source::value_source(model, src, arg))
        };
        let name =
            loc.as_ref().and_then(source::short).map_or(String::new(), |n| format!(" (`{n}`)"));
        let line = |o: Option<u32>| match o.and_then(line_of) {
            Some(l) => format!("line {l}"),
            None => "made by a pass".into(),
        };
        let mut message = format!(
            "ends up replicated: {what}{name} of `@{}`: {}",
            f.sym.text,
            text(first, &line)
        );
        if causes.len() > 1 {
            let n = causes.len() - 1;
            let more =
                if n == 1 { "1 more reason".to_string() } else { format!("{n} more reasons") };
            message.push_str(&format!(" (and {more}: see the hover)"));
        }
        out.push((span, message));
    }
    out
}
