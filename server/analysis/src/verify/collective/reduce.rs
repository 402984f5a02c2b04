//! `sdy.all_reduce` and `sdy.replicated_to_unreduced`: reduction axes that are sorted,
//! valid and not sharding the operand, and the unreduced axes they add or remove.

use super::super::attrs::{axis_list, reduction_op};
use super::super::messages as msg;
use super::super::sharding::verify_sorted_axis_list;
use super::super::unreduced::verify_transition;
use super::super::{Ctx, Violation};
use super::Collective;
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{split, AxisRef, DimSharding, MeshRef, TensorSharding};
use crate::sharding::axis::{overlaps, sort_and_merge};
use sdy_syntax::sdy::Reduction;

/// Same mesh reference (same symbol, or equal inline meshes).
fn same_mesh_ref(a: &TensorSharding, b: &TensorSharding) -> bool {
    match (&a.mesh, &b.mesh) {
        (MeshRef::Symbol(x), MeshRef::Symbol(y)) => x == y,
        (MeshRef::Inline(x), MeshRef::Inline(y)) => super::super::values::same_mesh(x, y),
        _ => false,
    }
}

/// Shardy's `isEquivalent` ignoring unreduced axes: both fully replicated, or same
/// mesh and the same axes in every dimension.
fn equivalent_ignoring_unreduced(a: &TensorSharding, b: &TensorSharding) -> bool {
    let replicated = |s: &TensorSharding| s.dims.iter().all(|d| d.axes.is_empty());
    if replicated(a) {
        return replicated(b);
    }
    same_mesh_ref(a, b)
        && a.dims.len() == b.dims.len()
        && a.dims.iter().zip(&b.dims).all(|(x, y)| x.axes == y.axes)
}

pub fn all_reduce(cx: &Ctx, c: &Collective) -> Result<(), Violation> {
    let operand = c.operand_or_replicated();
    if !equivalent_ignoring_unreduced(&operand, &c.out) {
        return Err(Violation::of(
            C::Collective,
            msg::SHARDINGS_NOT_EQUIVALENT.to_string(),
            c.out.span,
        ));
    }
    let Some(reduction) = axis_list(cx.model, c.id, "reduction_axes") else { return Ok(()) };
    let (values, spans) = split(&reduction);
    verify_sorted_axis_list(&values, &spans, &c.mesh, &mut Vec::new(), "reduction")?;
    for r in &reduction {
        let ra = &r.value;
        let overlaps = |list: &[AxisRef]| list.iter().any(|a| overlaps(a, ra));
        if operand.dims.iter().any(|d| overlaps(&d.axes)) || overlaps(&operand.replicated) {
            return Err(Violation::of(
                C::Collective,
                msg::reduction_axis_overlaps_operand(&ra.to_string()),
                r.span,
            ));
        }
        if overlaps(&c.out.unreduced) {
            return Err(Violation::of(
                C::Collective,
                msg::reduction_axis_overlaps_result_unreduced(&ra.to_string()),
                r.span,
            ));
        }
    }
    verify_transition(cx, Some(&operand), &c.out, None, Some(reduction_op(cx.model.op(c.id))))
}

/// Dimension shardings equal as attributes: axes, open/closed and priority.
fn same_dims(a: &[DimSharding], b: &[DimSharding]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.axes == y.axes && x.open == y.open && x.priority == y.priority)
}

pub fn replicated_to_unreduced(cx: &Ctx, c: &Collective) -> Result<(), Violation> {
    let Some(operand) = &c.operand else { return Ok(()) };
    if c.out.reduction != Reduction::Sum {
        return Err(Violation::of(
            C::Collective,
            msg::OUT_REDUCTION_MUST_BE_SUM.to_string(),
            c.out.span,
        ));
    }
    if !same_dims(&operand.dims, &c.out.dims) {
        return Err(Violation::of(
            C::Collective,
            msg::SAME_DIMENSION_SHARDINGS.to_string(),
            c.out.dims_span,
        ));
    }
    let op = cx.model.op(c.id);
    let Some(axes) = axis_list(cx.model, c.id, "axes") else { return Ok(()) };
    if axes.is_empty() {
        let span = op.node.inherent_attr("axes").map_or(op.name_span(), |a| a.span.shift(op.start));
        return Err(Violation::of(C::Collective, msg::EMPTY_R2U_AXES.to_string(), span));
    }
    let (values, spans) = split(&axes);
    verify_sorted_axis_list(&values, &spans, &c.mesh, &mut Vec::new(), "r2u")?;
    for r in &axes {
        let ra = &r.value;
        let overlaps = |list: &[AxisRef]| list.iter().any(|a| overlaps(a, ra));
        if operand.dims.iter().any(|d| overlaps(&d.axes)) {
            return Err(Violation::of(
                C::Collective,
                msg::r2u_axis_overlaps_dims(&ra.to_string()),
                r.span,
            ));
        }
        if overlaps(&operand.unreduced) {
            return Err(Violation::of(
                C::Collective,
                msg::r2u_axis_overlaps_unreduced(&ra.to_string()),
                r.span,
            ));
        }
    }
    let mut expected = operand.unreduced.clone();
    expected.extend(values);
    sort_and_merge(&mut expected, &c.mesh);
    if expected != c.out.unreduced {
        return Err(Violation::of(
            C::Collective,
            msg::REPLICATED_TO_UNREDUCED_AXES.to_string(),
            c.out.span,
        ));
    }
    Ok(())
}
