//! The tensor-sharding rules (S1–S20 of the verifier notes), in Shardy's order: the first
//! failing rule is the one reported.

use super::messages as msg;
use crate::model::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};
use crate::model::{Model, OpId};
use sdy_syntax::tree::{Type, TypeKind};
use sdy_syntax::Span;

/// A rule violation: the message (without prefixes), the precise offending range, and
/// an optional note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub message: String,
    pub focus: Span,
    pub note: Option<(Span, String)>,
}

impl Violation {
    fn new(message: String, focus: Span) -> Violation {
        Violation { message, focus, note: None }
    }
}

/// Resolves the mesh of a sharding: inline, or a `sdy.mesh` of the module.
pub fn resolve_mesh<'m>(model: &'m Model, s: &'m TensorSharding) -> Option<&'m Mesh> {
    match &s.mesh {
        MeshRef::Inline(m) => Some(m),
        MeshRef::Symbol { name, .. } => model.mesh(name).and_then(|m| m.mesh.as_ref()),
    }
}

/// Verifies `s` against the value type `ty` (absent for zero-result ops) on behalf of op
/// `owner` (whose enclosing manual computations bind axes).
pub fn verify_sharding(
    model: &Model,
    s: &TensorSharding,
    ty: Option<&Type>,
    owner: OpId,
    src: &str,
) -> Result<(), Violation> {
    // S1: the mesh.
    let mesh = match &s.mesh {
        MeshRef::Inline(m) => m,
        MeshRef::Symbol { name, span } => {
            match model.mesh(name).and_then(|m| m.mesh.as_ref()) {
                Some(m) => m,
                None => return Err(Violation::new(msg::unknown_mesh(name), *span)),
            }
        }
    };
    // S2: maximal meshes (and shardings checked without a type).
    if mesh.is_maximal() || ty.is_none() {
        if !s.dims.is_empty() || !s.replicated.is_empty() || !s.unreduced.is_empty() {
            return Err(Violation::new(msg::MAXIMAL_SHARDING.to_string(), s.span));
        }
        return Ok(());
    }
    let ty = ty.expect("checked above");
    // S3: tuples of one element stand for that element.
    let ty = match &*ty.kind {
        TypeKind::Tuple(elems) if elems.len() == 1 => &elems[0],
        TypeKind::Tuple(_) => {
            return Err(Violation::new(msg::tuple_of_size_one(type_text(ty, src)), s.span))
        }
        _ => ty,
    };
    match &*ty.kind {
        TypeKind::Tensor { shape: None, .. } => {
            return Err(Violation::new(msg::only_ranked(type_text(ty, src)), s.span));
        }
        TypeKind::Tensor { shape: Some(shape), .. } => {
            // S6: rank.
            if s.dims.len() != shape.len() {
                return Err(Violation::new(msg::rank_mismatch(s.dims.len(), shape.len()), s.span));
            }
        }
        _ => {
            // S4: tokens and other non-shaped types.
            if !s.dims.is_empty() || !s.replicated.is_empty() || !s.unreduced.is_empty() {
                return Err(Violation::new(
                    msg::non_shaped(type_text(ty, src), &s.to_string()),
                    s.span,
                ));
            }
        }
    }
    verify_axes(s, mesh)?;
    verify_bound_manual_axes(model, s, owner)
}

/// The text of a type as MLIR prints it (we print what was written, whitespace removed
/// around commas as MLIR does).
pub fn type_text<'s>(ty: &Type, src: &'s str) -> &'s str {
    let _ = ty;
    src.get(ty.span.start as usize..ty.span.end as usize).unwrap_or("")
}

/// S7–S19 on the axes of a sharding.
pub fn verify_axes(s: &TensorSharding, mesh: &Mesh) -> Result<(), Violation> {
    let mut seen: Vec<&AxisRef> = Vec::new();
    for (d, dim) in s.dims.iter().enumerate() {
        if let Some(p) = dim.priority {
            if p < 0 {
                return Err(Violation::new(msg::negative_priority(d), dim.span));
            }
            if dim.closed && dim.axes.is_empty() {
                return Err(Violation::new(msg::empty_closed_with_priority(d), dim.span));
            }
        }
        verify_axis_list(&dim.axes, mesh, &mut seen)?;
    }
    for (list, unordered) in [
        (&s.replicated, msg::REPLICATED_NOT_ORDERED),
        (&s.unreduced, msg::UNREDUCED_NOT_ORDERED),
    ] {
        if !is_sorted_wrt_mesh(list, mesh) {
            let span = list.first().map(|a| a.span).unwrap_or(s.span);
            let span = list.last().map_or(span, |l| span.cover(l.span));
            return Err(Violation::new(unordered.to_string(), span));
        }
        verify_axis_list(list, mesh, &mut seen)?;
    }
    verify_sub_axes(s.all_axes(), mesh)
}

/// S9–S11 on one list: known names, no duplicates (across the whole sharding), no
/// mergeable neighbours.
pub fn verify_axis_list<'a>(
    list: &'a [AxisRef],
    mesh: &Mesh,
    seen: &mut Vec<&'a AxisRef>,
) -> Result<(), Violation> {
    let mut prev: Option<&AxisRef> = None;
    for a in list {
        if mesh.axis(&a.name).is_none() {
            return Err(Violation::new(msg::unknown_axis(&a.name), a.span));
        }
        if seen.iter().any(|b| b.same(a)) {
            return Err(Violation::new(msg::duplicate_axis_ref(&a.display()), a.span));
        }
        seen.push(a);
        if let Some(p) = prev {
            if can_merge(p, a) {
                return Err(Violation::new(
                    msg::mergeable_sub_axes(&p.display(), &a.display()),
                    p.span.cover(a.span),
                ));
            }
        }
        prev = Some(a);
    }
    Ok(())
}

/// `x` directly precedes `y` as sub-axes of one axis.
pub fn can_merge(x: &AxisRef, y: &AxisRef) -> bool {
    match (x.sub, y.sub) {
        (Some((xp, xs)), Some((yp, _))) => x.name == y.name && xp * xs == yp,
        _ => false,
    }
}

/// The mesh order key: axis index, then sub-axis (pre-size, size); a full axis sorts
/// after the pre-size-1 sub-axes and before the others.
fn order_key(a: &AxisRef, mesh: &Mesh) -> Option<(usize, i64, i64)> {
    let idx = mesh.axis_index(&a.name)?;
    let full = mesh.axes[idx].size;
    Some(match a.sub {
        Some((pre, size)) => (idx, pre, size),
        None => (idx, 1, full),
    })
}

/// Whether a list is sorted w.r.t. the mesh (lists naming unknown axes count as sorted:
/// the unknown name is reported instead).
pub fn is_sorted_wrt_mesh(list: &[AxisRef], mesh: &Mesh) -> bool {
    let keys: Option<Vec<_>> = list.iter().map(|a| order_key(a, mesh)).collect();
    match keys {
        Some(keys) => keys.windows(2).all(|w| w[0] <= w[1]),
        None => true,
    }
}

/// S14–S19: sub-axis validity, per axis name in order of first appearance.
fn verify_sub_axes<'a>(
    axes: impl Iterator<Item = &'a AxisRef>,
    mesh: &Mesh,
) -> Result<(), Violation> {
    let axes: Vec<&AxisRef> = axes.collect();
    let mut names: Vec<&str> = Vec::new();
    for a in &axes {
        if !names.contains(&a.name.as_str()) {
            names.push(&a.name);
        }
    }
    for name in names {
        let Some(full) = mesh.axis(name).map(|a| a.size) else { continue };
        let refs: Vec<&&AxisRef> = axes.iter().filter(|a| a.name == name).collect();
        let mut subs: Vec<(i64, i64, &AxisRef)> =
            refs.iter().filter_map(|a| a.sub.map(|(p, s)| (p, s, **a))).collect();
        if subs.is_empty() {
            continue;
        }
        if let Some(f) = refs.iter().find(|a| a.sub.is_none()) {
            return Err(Violation::new(msg::sub_and_full_axis(name), f.span));
        }
        for &(pre, size, a) in &subs {
            if pre < 1 {
                return Err(Violation::new(msg::sub_axis_pre_size(&a.display()), a.span));
            }
            if size <= 1 {
                return Err(Violation::new(msg::sub_axis_size(&a.display()), a.span));
            }
            let next = pre * size;
            if full % next != 0 {
                return Err(Violation::new(
                    msg::sub_axis_next_pre_size(next, full, &a.display()),
                    a.span,
                ));
            }
            if size == full {
                return Err(Violation::new(msg::sub_axis_full_size(&a.display()), a.span));
            }
        }
        subs.sort_by_key(|&(p, s, _)| (p, s));
        for w in subs.windows(2) {
            let (p1, s1, a) = w[0];
            let (p2, _, b) = w[1];
            if p2 < p1 * s1 {
                return Err(Violation::new(
                    msg::overlapping_sub_axes(&a.display(), &b.display()),
                    a.span.cover(b.span),
                ));
            }
        }
    }
    Ok(())
}

/// S20: no axis may be manual in an enclosing `sdy.manual_computation`.
fn verify_bound_manual_axes(model: &Model, s: &TensorSharding, owner: OpId) -> Result<(), Violation> {
    for parent in model.ancestors(owner) {
        let p = model.op(parent);
        if p.name() != "sdy.manual_computation" {
            continue;
        }
        let manual = super::manual_axes(p);
        if let Some(a) = s.all_axes().find(|a| manual.iter().any(|m| *m == a.name)) {
            let mut v = Violation::new(msg::bound_manual_axis(&a.name), a.span);
            v.note = Some((Span::empty(p.start), msg::PARENT_BOUNDING_AXIS.to_string()));
            return Err(v);
        }
    }
    Ok(())
}
