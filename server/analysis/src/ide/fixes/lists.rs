//! Fixes inside an axis list: sorting it in mesh order, merging consecutive sub-axes,
//! removing a duplicated axis.

use super::{Edit, Found};
use crate::diag::{Diagnostic, DiagnosticCode};
use crate::explain::locate::{locate, Target};
use crate::model::sharding::{values, AxisRef, Mesh, Spanned, SpannedSharding};
use crate::model::{Model, OpId};
use crate::sharding::axis::{self, sort_and_merge};

use crate::verify::sharding::resolve_mesh;
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::AttrKind;
use sdy_syntax::Span;

/// Which list of a sharding (or op) an axis sits in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Where {
    Dim(usize),
    Replicated,
    Unreduced,
    /// An op's own axis list, by attribute name (`reduction_axes`, `manual_axes`, ...).
    Op(String),
}

/// An axis list around an offset: its axes (absolute spans), the mesh they belong to,
/// and where the list is.
pub(super) struct List {
    pub axes: Vec<Spanned<AxisRef>>,
    pub mesh: Option<Mesh>,
    pub place: Where,
}

impl List {
    /// The index of the axis whose span starts at `offset`.
    fn index_at(&self, offset: u32) -> Option<usize> {
        self.axes.iter().position(|a| a.span.start == offset)
    }
}

/// The axis list holding the axis that starts at `offset`.
pub(super) fn list_at(model: &Model, offset: u32) -> Option<List> {
    match locate(model, offset)? {
        Target::ShardingAxis { sharding, axis, .. } => {
            let mesh = resolve_mesh(model, &sharding).cloned();
            let s = &sharding;
            let lists =
                (0..s.dims.len()).map(|i| (&s.dims[i].axes, s.dim_axis_spans(i), Where::Dim(i)));
            let lists = lists
                .chain([(&s.replicated, s.replicated_spans(), Where::Replicated)])
                .chain([(&s.unreduced, s.unreduced_spans(), Where::Unreduced)]);
            let (list, spans, place) =
                lists.into_iter().find(|(_, spans, _)| spans.contains(&axis.span))?;
            let axes = list.iter().zip(spans).map(|(a, &span)| Spanned { value: a.clone(), span });
            let axes = axes.collect();
            Some(List { axes, mesh, place })
        }
        Target::ListAxis { op, key, axis, .. } => {
            let axes = op_list(model, op, &key, axis.span)?;
            Some(List { axes, mesh: op_mesh(model, op), place: Where::Op(key) })
        }
        _ => None,
    }
}

/// The list of op attribute `key` holding an axis at `span`.
fn op_list(model: &Model, op: OpId, key: &str, span: Span) -> Option<Vec<Spanned<AxisRef>>> {
    let info = model.op(op);
    let attr = info.node.inherent_attr(key).or_else(|| info.node.attr(key))?;
    let AttrKind::Sdy(s) = &attr.value.as_ref()?.kind else { return None };
    let lists: Vec<&[sdy_syntax::sdy::AxisRefAst]> = match &**s {
        SdyAttr::AxisList(a) | SdyAttr::ManualAxes(a) => vec![a],
        SdyAttr::AxisListPerDim(l) => l.iter().map(|l| l.axes.as_slice()).collect(),
        SdyAttr::AllToAllParams(p) => p.iter().map(|p| p.axes.axes.as_slice()).collect(),
        _ => return None,
    };
    lists
        .into_iter()
        .map(|l| Spanned::list(l, info.start))
        .find(|l| l.iter().any(|a| a.span == span))
}

/// The mesh an op's axis lists refer to: a collective's `out_sharding`, else the first
/// resolvable mesh of its in/out shardings.
fn op_mesh(model: &Model, op: OpId) -> Option<Mesh> {
    let info = model.op(op);
    for key in ["out_sharding", "in_shardings", "out_shardings"] {
        let Some(v) = info.node.inherent_attr(key).and_then(|a| a.value.as_ref()) else { continue };
        let AttrKind::Sdy(s) = &v.kind else { continue };
        let shardings = match &**s {
            SdyAttr::Sharding(s) => vec![SpannedSharding::from_ast(s, info.start)],
            SdyAttr::PerValue(p) => SpannedSharding::per_value(p, info.start),
            _ => continue,
        };
        if let Some(m) = shardings.iter().find_map(|s| resolve_mesh(model, s)) {
            return Some(m.clone());
        }
    }
    None
}

pub(super) fn fixes(model: &Model, src: &str, d: &Diagnostic) -> Option<Vec<Found>> {
    let list = list_at(model, d.focus.start)?;
    sort(&list, d).or_else(|| merge(&list, d)).or_else(|| duplicate(&list, src, d)).map(|f| vec![f])
}

fn list_name(place: &Where) -> &str {
    match place {
        Where::Replicated => "replicated",
        Where::Unreduced => "unreduced",
        Where::Op(key) => key.strip_suffix("_axes").unwrap_or(key),
        Where::Dim(_) => "dimension",
    }
}

/// `<kind> axes are not ordered w.r.t. mesh` (and our hint on unsorted manual axes):
/// the list sorted in mesh order, consecutive sub-axes merged.
fn sort(list: &List, d: &Diagnostic) -> Option<Found> {
    let mesh = list.mesh.as_ref()?;
    let (first, last) = (list.axes.first()?, list.axes.last()?);
    if d.focus != first.span.cover(last.span) {
        return None;
    }
    let mut sorted = values(&list.axes);
    sort_and_merge(&mut sorted, mesh);
    let text = join(&sorted);
    if !matches!(d.code, DiagnosticCode::UnsortedAxes | DiagnosticCode::UnsortedManualAxes) {
        return None;
    }
    let merged = if sorted.len() < list.axes.len() { " and merge sub-axes" } else { "" };
    let title = format!("Sort {} axes in mesh order{merged}: {{{text}}}", list_name(&list.place));
    Some((title, vec![Edit { span: d.focus, text }], true))
}

fn join(axes: &[crate::sharding::AxisRef]) -> String {
    axes.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// `two consecutive sub-axes can be merged`: the run of mergeable sub-axes from the
/// first one, merged.
fn merge(list: &List, d: &Diagnostic) -> Option<Found> {
    let mesh = list.mesh.as_ref()?;
    let i = list.index_at(d.focus.start)?;
    let a = list.axes.get(i)?;
    if d.code != DiagnosticCode::MergeableSubAxes || list.axes.get(i + 1).is_none() {
        return None;
    }
    let mut merged = a.value.clone();
    let mut j = i + 1;
    while let Some(next) = list.axes.get(j) {
        if !axis::can_merge(&merged, next) {
            break;
        }
        merged = axis::merge(&merged, next, mesh);
        j += 1;
    }
    let span = a.span.cover(list.axes[j - 1].span);
    let text = merged.to_string();
    Some((format!("Merge into {text}"), vec![Edit { span, text }], true))
}

/// `duplicate axis ref`: the repeated reference (the one reported) removed.
fn duplicate(list: &List, src: &str, d: &Diagnostic) -> Option<Found> {
    let i = list.index_at(d.focus.start)?;
    let axis = &list.axes[i];
    if d.focus != axis.span || d.code != DiagnosticCode::DuplicateAxis {
        return None;
    }
    // Obvious when the first use is in the same list; else either use could go.
    let same_list = list.axes[..i].iter().any(|b| b.value == axis.value);
    let edit = removal(list, i, src)?;
    let title = match &list.place {
        Where::Dim(n) => format!("Remove the duplicate {} from dimension {n}", **axis),
        place => {
            format!("Remove the duplicate {} from the {} axes", **axis, list_name(place))
        }
    };
    Some((title, vec![edit], same_list))
}

/// The edit removing axis `i` from its list, with its separator; a replicated or
/// unreduced list left empty goes entirely.
fn removal(list: &List, i: usize, src: &str) -> Option<Edit> {
    let axes = &list.axes;
    let a = axes[i].span;
    if axes.len() > 1 {
        let span = match axes.get(i + 1) {
            Some(next) => Span::new(a.start, next.span.start),
            None => Span::new(axes[i - 1].span.end, a.end),
        };
        return Some(Edit { span, text: String::new() });
    }
    match list.place {
        // `{"x", ?}` → `{?}`.
        Where::Dim(_) => {
            let rest = src.get(a.end as usize..)?;
            let after = rest.trim_start();
            let end = if after.starts_with(',') {
                let skipped = rest.len() - after.len() + 1;
                let tail = &rest[skipped..];
                a.end + (skipped + tail.len() - tail.trim_start().len()) as u32
            } else {
                a.end
            };
            Some(Edit { span: Span::new(a.start, end), text: String::new() })
        }
        // `, replicated={"x"}` → nothing.
        Where::Replicated | Where::Unreduced => {
            let keyword = list_name(&list.place);
            let before = src.get(..a.start as usize)?;
            let kw = before.rfind(keyword)?;
            let comma = before[..kw].trim_end();
            let start = if comma.ends_with(',') { comma.len() - 1 } else { kw };
            let close = src.get(a.end as usize..)?.find('}')? + a.end as usize + 1;
            Some(Edit { span: Span::new(start as u32, close as u32), text: String::new() })
        }
        Where::Op(_) => Some(Edit { span: a, text: String::new() }),
    }
}
