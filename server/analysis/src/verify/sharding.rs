//! The tensor-sharding rules (S1–S20 of the verifier notes), in Shardy's order: the first
//! failing rule is the one reported.

use super::messages as msg;
use super::values::type_string;
use super::Violation;
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{AxisRef, Mesh, MeshRef, Spanned, SpannedSharding};
use crate::model::{Model, OpId};
use crate::sharding::axis::{self, mesh_cmp, MeshAxes};
use sdy_syntax::tree::{Type, TypeKind};
use sdy_syntax::Span;
use std::cmp::Ordering;

/// The type a sharding is checked against.
#[derive(Clone, Copy, Debug)]
pub enum TypeArg<'a> {
    /// No value (the single sharding of a zero-result op): only rank 0 is valid.
    Absent,
    /// A value whose type we do not know: type-dependent rules are skipped.
    Unknown,
    Of(&'a Type),
}

/// Resolves the mesh of a sharding: inline, or a `sdy.mesh` of the module.
pub fn resolve_mesh<'m>(
    model: &'m Model,
    s: &'m crate::sharding::TensorSharding,
) -> Option<&'m Mesh> {
    match &s.mesh {
        MeshRef::Inline(m) => Some(m),
        MeshRef::Symbol(name) => model.mesh(name).and_then(|m| m.mesh.as_deref()),
    }
}

/// Whether the sharding has dimensions, replicated or unreduced axes.
fn has_rank_or_axes(s: &crate::sharding::TensorSharding) -> bool {
    !s.dims.is_empty() || !s.replicated.is_empty() || !s.unreduced.is_empty()
}

/// Verifies `s` against the value type on behalf of op `owner` (whose enclosing manual
/// computations bind axes).
pub fn verify_sharding(
    model: &Model,
    s: &SpannedSharding,
    ty: TypeArg,
    owner: OpId,
) -> Result<(), Violation> {
    // S1: the mesh.
    let mesh = match &s.mesh {
        MeshRef::Inline(m) => m,
        MeshRef::Symbol(name) => match model.mesh(name).and_then(|m| m.mesh.as_deref()) {
            Some(m) => m,
            None => {
                return Err(Violation::of(C::UnknownMesh, msg::unknown_mesh(name), s.mesh_span))
            }
        },
    };
    // S2: maximal meshes (and shardings checked without a value).
    if mesh.is_maximal() || matches!(ty, TypeArg::Absent) {
        if has_rank_or_axes(s) {
            return Err(Violation::of(C::Sharding, msg::MAXIMAL_SHARDING.to_string(), s.span));
        }
        return Ok(());
    }
    if let TypeArg::Of(ty) = ty {
        verify_against_type(s, ty)?;
    }
    verify_axes(s, mesh)?;
    verify_bound_manual_axes(model, s, owner)
}

/// S3–S6: the sharding fits the value's type.
fn verify_against_type(s: &SpannedSharding, ty: &Type) -> Result<(), Violation> {
    // S3: tuples of one element stand for that element.
    let elem = match &*ty.kind {
        TypeKind::Tuple(elems) if elems.len() == 1 => &elems[0],
        TypeKind::Tuple(_) => {
            return Err(Violation::of(
                C::Sharding,
                msg::tuple_of_size_one(&type_string(ty)),
                s.span,
            ))
        }
        _ => ty,
    };
    match &*elem.kind {
        // S5: ranked.
        TypeKind::Tensor { shape: None, .. } => {
            Err(Violation::of(C::Sharding, msg::only_ranked(&type_string(ty)), s.span))
        }
        // S6: rank.
        TypeKind::Tensor { shape: Some(shape), .. } if s.dims.len() != shape.len() => Err(
            Violation::of(C::Sharding, msg::rank_mismatch(s.dims.len(), shape.len()), s.dims_span),
        ),
        TypeKind::Tensor { .. } => Ok(()),
        TypeKind::Other(t) if t.starts_with("vector<") || t.starts_with("memref<") => Ok(()),
        // S4: tokens and other non-shaped types.
        _ if has_rank_or_axes(s) => {
            Err(Violation::of(C::Sharding, msg::non_shaped(&type_string(ty), &s.attr()), s.span))
        }
        _ => Ok(()),
    }
}

/// S7–S19 on the axes of a sharding.
pub fn verify_axes(s: &SpannedSharding, mesh: &Mesh) -> Result<(), Violation> {
    let mut seen: Vec<(&AxisRef, Span)> = Vec::new();
    for (d, dim) in s.dims.iter().enumerate() {
        if let Some(p) = dim.priority {
            if p < 0 {
                return Err(Violation::of(C::Sharding, msg::negative_priority(d), s.dim_spans[d]));
            }
            if !dim.open && dim.axes.is_empty() {
                return Err(Violation::of(
                    C::EmptyClosedWithPriority,
                    msg::empty_closed_with_priority(d),
                    s.dim_spans[d],
                ));
            }
        }
        verify_axis_list(&dim.axes, s.dim_axis_spans(d), mesh, &mut seen)?;
    }
    verify_sorted_axis_list(&s.replicated, s.replicated_spans(), mesh, &mut seen, "replicated")?;
    verify_sorted_axis_list(&s.unreduced, s.unreduced_spans(), mesh, &mut seen, "unreduced")?;
    verify_sub_axes(&seen, mesh)
}

/// S12/S13: a list sorted w.r.t. the mesh, then S9–S11 on it (`kind` names the list
/// in the message: replicated, unreduced, reduction, r2u).
pub fn verify_sorted_axis_list<'a>(
    list: &'a [AxisRef],
    spans: &[Span],
    mesh: &Mesh,
    seen: &mut Vec<(&'a AxisRef, Span)>,
    kind: &str,
) -> Result<(), Violation> {
    if !is_sorted_wrt_mesh(list, mesh) {
        let span = spans.first().copied().unwrap_or_default();
        let span = spans.last().map_or(span, |&l| span.cover(l));
        return Err(Violation::of(C::UnsortedAxes, msg::axes_not_ordered(kind), span));
    }
    verify_axis_list(list, spans, mesh, seen)
}

/// S9–S11 on one list: known names, no duplicates (across everything in `seen`), no
/// mergeable neighbours. `spans`: where each ref of `list` is written.
pub fn verify_axis_list<'a>(
    list: &'a [AxisRef],
    spans: &[Span],
    mesh: &Mesh,
    seen: &mut Vec<(&'a AxisRef, Span)>,
) -> Result<(), Violation> {
    let mut prev: Option<(&AxisRef, Span)> = None;
    for (a, &span) in list.iter().zip(spans) {
        if mesh.axis(&a.name).is_none() {
            return Err(Violation::of(C::Sharding, msg::unknown_axis(&a.name), span));
        }
        if seen.iter().any(|(b, _)| *b == a) {
            return Err(Violation::of(
                C::DuplicateAxis,
                msg::duplicate_axis_ref(&a.to_string()),
                span,
            ));
        }
        seen.push((a, span));
        if let Some((p, p_span)) = prev {
            // Only sub-axes merge.
            if p.sub.is_some() && a.sub.is_some() && axis::can_merge(p, a) {
                return Err(Violation::of(
                    C::MergeableSubAxes,
                    msg::mergeable_sub_axes(&p.to_string(), &a.to_string()),
                    p_span.cover(span),
                ));
            }
        }
        prev = Some((a, span));
    }
    Ok(())
}

/// Whether a list is sorted w.r.t. the mesh (Shardy's mesh comparator: an axis known to
/// the mesh sorts before an unknown one; two unknown names are unordered, the first is
/// reported next).
pub fn is_sorted_wrt_mesh(list: &[AxisRef], mesh: &Mesh) -> bool {
    let unknown = |a: &AxisRef| mesh.axis_position(&a.name).is_none();
    list.windows(2).all(|w| {
        let (next, prev) = (&w[1], &w[0]);
        (next.name != prev.name && unknown(next) && unknown(prev))
            || mesh_cmp(next, prev, mesh) != Ordering::Less
    })
}

/// S14–S19: sub-axis validity, per axis name (in order of first appearance), each
/// name's sub-axes in mesh order.
fn verify_sub_axes(axes: &[(&AxisRef, Span)], mesh: &Mesh) -> Result<(), Violation> {
    let mut names: Vec<&str> = Vec::new();
    for (a, _) in axes.iter().filter(|a| a.0.sub.is_some()) {
        if !names.contains(&a.name.as_str()) {
            names.push(&a.name);
        }
    }
    for name in names {
        let Some(full) = mesh.axis(name).map(|a| a.1) else { continue };
        if let Some((_, f)) = axes.iter().find(|(a, _)| a.name == name && a.sub.is_none()) {
            return Err(Violation::of(C::Sharding, msg::sub_and_full_axis(name), *f));
        }
        let mut subs: Vec<(i64, i64, Spanned<&AxisRef>)> = axes
            .iter()
            .filter(|(a, _)| a.name == name)
            .filter_map(|&(a, span)| a.sub.map(|(p, s)| (p, s, Spanned { value: a, span })))
            .collect();
        subs.sort_by_key(|&(p, s, _)| (p, s));
        let mut prev: Option<(i64, &Spanned<&AxisRef>)> = None;
        for (pre, size, a) in &subs {
            let (pre, size) = (*pre, *size);
            if pre < 1 {
                return Err(Violation::of(
                    C::Sharding,
                    msg::sub_axis_pre_size(&a.to_string()),
                    a.span,
                ));
            }
            if size <= 1 {
                return Err(Violation::of(C::Sharding, msg::sub_axis_size(&a.to_string()), a.span));
            }
            let next = pre.saturating_mul(size);
            if full % next != 0 {
                return Err(Violation::of(
                    C::Sharding,
                    msg::sub_axis_next_pre_size(next, full, &a.to_string()),
                    a.span,
                ));
            }
            if size == full {
                return Err(Violation::of(
                    C::Sharding,
                    msg::sub_axis_full_size(&a.to_string()),
                    a.span,
                ));
            }
            if let Some((prev_next, p)) = prev {
                if prev_next > pre {
                    return Err(Violation::of(
                        C::Sharding,
                        msg::overlapping_sub_axes(&p.to_string(), &a.to_string()),
                        p.span.cover(a.span),
                    ));
                }
            }
            prev = Some((next, a));
        }
    }
    Ok(())
}

/// The manual axes bound by the manual computations enclosing `owner`, each with the
/// outermost computation binding it (`None` if some are unreadable).
pub fn bound_manual_axes(model: &Model, owner: OpId) -> Option<Vec<(String, OpId)>> {
    let mut bound: Vec<(String, OpId)> = Vec::new();
    for parent in model.ancestors(owner) {
        let p = model.op(parent);
        if p.name() != "sdy.manual_computation" {
            continue;
        }
        for axis in super::attrs::manual_axes(p)? {
            match bound.iter_mut().find(|(a, _)| *a == axis) {
                Some(entry) => entry.1 = parent,
                None => bound.push((axis, parent)),
            }
        }
    }
    Some(bound)
}

/// The error for an axis already manual in a parent manual computation.
pub fn bound_axis_violation(model: &Model, axis: &str, focus: Span, parent: OpId) -> Violation {
    Violation::of(C::Sharding, msg::bound_manual_axis(axis), focus)
        .with_note(Span::empty(model.op(parent).loc()), msg::PARENT_BOUNDING_AXIS)
}

/// S20: no axis may be manual in an enclosing `sdy.manual_computation`.
fn verify_bound_manual_axes(
    model: &Model,
    s: &SpannedSharding,
    owner: OpId,
) -> Result<(), Violation> {
    let Some(bound) = bound_manual_axes(model, owner) else { return Ok(()) };
    for (a, span) in s.axes_with_spans() {
        if let Some((_, parent)) = bound.iter().find(|(m, _)| *m == a.name) {
            return Err(bound_axis_violation(model, &a.name, span, *parent));
        }
    }
    Ok(())
}
