//! Collectives with per-dimension axis lists: `all_gather`, `all_slice`,
//! `reduce_scatter`, `sharded_to_unreduced`. Applying the lists to the operand
//! sharding must give the result sharding.

use super::super::attrs::{axis_lists_per_dim, reduction_op};
use super::super::messages as msg;
use super::super::sharding::verify_axis_list;
use super::super::unreduced::verify_transition;
use super::super::{Ctx, Violation};
use super::Collective;
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{split, AxisRef, Mesh, Spanned};
use crate::sharding::axis::{
    add_axis_or_merge, list_display, prefix_without_overlap, sort_and_merge, suffix_of,
};
use sdy_syntax::sdy::Reduction;

/// Removes `gathering` from the minor end of `axes` (`kind` names the axes in errors).
pub fn gather_along_dim(
    axes: &[AxisRef],
    gathering: &[Spanned<AxisRef>],
    dim: usize,
    mesh: &Mesh,
    kind: &str,
) -> Result<Vec<AxisRef>, Violation> {
    let mut expected = axes.to_vec();
    for g in gathering.iter().rev() {
        let ga = &g.value;
        match expected.last() {
            Some(last) if suffix_of(ga, last, mesh) => {
                let last = expected.pop().expect("checked");
                if let Some(prefix) = prefix_without_overlap(&last, ga) {
                    expected.push(prefix);
                }
            }
            _ => {
                return Err(Violation::of(
                    C::Collective,
                    msg::cannot_apply_axis(kind, &ga.to_string(), dim),
                    g.span,
                ))
            }
        }
    }
    Ok(expected)
}

/// Appends `slicing` to `axes`, merging consecutive sub-axes.
pub fn slice_along_dim(
    axes: &[AxisRef],
    slicing: &[Spanned<AxisRef>],
    mesh: &Mesh,
) -> Vec<AxisRef> {
    let mut expected = axes.to_vec();
    for s in slicing {
        add_axis_or_merge(&mut expected, s.value.clone(), mesh);
    }
    expected
}

/// The result dimension `dim` must have exactly the `expected` axes.
pub fn expect_dim(c: &Collective, dim: usize, expected: &[AxisRef]) -> Result<(), Violation> {
    if c.out.dims[dim].axes != expected {
        return Err(Violation::of(
            C::Collective,
            msg::result_dim_mismatch(&list_display(expected), dim),
            c.out.dim_spans[dim],
        ));
    }
    Ok(())
}

/// Shardy's `verifyCollectiveWithAxesPerDim`: valid lists, one per result dimension,
/// and `apply` of each list to the operand dimension gives the result dimension.
fn verify_per_dim(
    cx: &Ctx,
    c: &Collective,
    key: &str,
    apply: impl Fn(&[AxisRef], &[Spanned<AxisRef>], usize) -> Result<Vec<AxisRef>, Violation>,
) -> Result<(), Violation> {
    let Some(lists) = axis_lists_per_dim(cx.model, c.id, key) else { return Ok(()) };
    let split: Vec<_> = lists.iter().map(|l| split(l)).collect();
    let mut seen = Vec::new();
    for (list, spans) in &split {
        verify_axis_list(list, spans, &c.mesh, &mut seen)?;
    }
    if c.out.dims.len() != lists.len() {
        let m = msg::result_collective_rank(c.out.dims.len(), lists.len());
        return Err(Violation::of(C::Collective, m, c.out.dims_span));
    }
    let operand = c.operand_or_replicated();
    for (dim, (operand_dim, list)) in operand.dims.iter().zip(&lists).enumerate() {
        let expected = apply(&operand_dim.axes, list, dim)?;
        expect_dim(c, dim, &expected)?;
    }
    Ok(())
}

pub fn all_gather(cx: &Ctx, c: &Collective) -> Result<(), Violation> {
    verify_per_dim(cx, c, "gathering_axes", |axes, list, dim| {
        gather_along_dim(axes, list, dim, &c.mesh, "gathering")
    })
}

pub fn all_slice(cx: &Ctx, c: &Collective) -> Result<(), Violation> {
    verify_per_dim(cx, c, "slicing_axes", |axes, list, _| Ok(slice_along_dim(axes, list, &c.mesh)))
}

pub fn reduce_scatter(cx: &Ctx, c: &Collective) -> Result<(), Violation> {
    let operand = c.operand_or_replicated();
    verify_transition(cx, Some(&operand), &c.out, None, Some(reduction_op(cx.model.op(c.id))))?;
    verify_per_dim(cx, c, "reduce_scatter_axes", |axes, list, _| {
        Ok(slice_along_dim(axes, list, &c.mesh))
    })
}

pub fn sharded_to_unreduced(cx: &Ctx, c: &Collective) -> Result<(), Violation> {
    if c.out.reduction != Reduction::Sum {
        return Err(Violation::of(
            C::Collective,
            msg::OUT_REDUCTION_MUST_BE_SUM.to_string(),
            c.out.span,
        ));
    }
    verify_per_dim(cx, c, "axes", |axes, list, dim| {
        gather_along_dim(axes, list, dim, &c.mesh, "shard-to-unreduce")
    })?;
    let Some(lists) = axis_lists_per_dim(cx.model, c.id, "axes") else { return Ok(()) };
    let mut expected = c.operand.as_ref().map(|s| s.unreduced.clone()).unwrap_or_default();
    expected.extend(lists.iter().flatten().map(|a| a.value.clone()));
    sort_and_merge(&mut expected, &c.mesh);
    if expected != c.out.unreduced {
        return Err(Violation::of(
            C::Collective,
            msg::SHARDED_TO_UNREDUCED_AXES.to_string(),
            c.out.span,
        ));
    }
    Ok(())
}
