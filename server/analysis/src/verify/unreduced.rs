//! The unreduced-axes transition rule (§6) of `sharding_constraint`, `reshard`,
//! `all_reduce` and `reduce_scatter`: which unreduced axes an op may introduce or
//! remove, and with which reduction.

use super::messages as msg;
use super::sharding::resolve_mesh;
use super::values::same_mesh;
use super::{Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{SpannedSharding, TensorSharding};
use crate::sharding::axis::{overlaps, set_difference};
use crate::sharding::AxisRef as Ax;
use sdy_syntax::sdy::Reduction;

/// Verifies the transition from `operand` to `result`. `introduce`: the reduction new
/// unreduced axes must use (`None`: none may appear); `remove`: the reduction removed
/// axes must have (`None`: none may disappear).
pub fn verify_transition(
    cx: &Ctx,
    operand: Option<&TensorSharding>,
    result: &SpannedSharding,
    introduce: Option<Reduction>,
    remove: Option<Reduction>,
) -> Result<(), Violation> {
    // Skipped unless the shardings agree on one mesh.
    let mut mesh = None;
    for s in operand.into_iter().chain(std::iter::once(&result.value)) {
        if let Some(m) = resolve_mesh(cx.model, s) {
            match mesh {
                None => mesh = Some(m),
                Some(prev) if !same_mesh(prev, m) => return Ok(()),
                Some(_) => {}
            }
        }
    }
    let Some(mesh) = mesh else { return Ok(()) };
    let in_axes: &[Ax] = operand.map_or(&[], |s| &s.unreduced);
    let out_axes = &result.unreduced;
    let introduced = set_difference(out_axes, in_axes, mesh);
    let removed = set_difference(in_axes, out_axes, mesh);
    let touches = |s: &TensorSharding, diff: &[Ax]| {
        s.unreduced.iter().any(|a| diff.iter().any(|d| overlaps(a, d)))
    };
    let focus = result.span;
    if let Some(first) = introduced.first() {
        let Some(expected) = introduce else {
            return Err(Violation::of(
                C::UnreducedTransition,
                msg::cannot_add_unreduced_axis(&first.name),
                focus,
            ));
        };
        if touches(result, &introduced) && result.reduction != expected {
            let m = msg::cannot_introduce_reduction(result.reduction.as_str(), expected.as_str());
            return Err(Violation::of(C::UnreducedTransition, m, focus));
        }
    }
    if let Some(first) = removed.first() {
        let Some(expected) = remove else {
            return Err(Violation::of(
                C::UnreducedTransition,
                msg::dropped_unreduced_axis(&first.name),
                focus,
            ));
        };
        if let Some(s) = operand.filter(|s| touches(s, &removed) && s.reduction != expected) {
            let m = msg::cannot_reduce_reduction(s.reduction.as_str(), expected.as_str());
            return Err(Violation::of(C::UnreducedTransition, m, focus));
        }
    }
    if let Some(s) = operand {
        let kept = out_axes.iter().any(|r| s.unreduced.iter().any(|o| overlaps(o, r)));
        if kept && s.reduction != result.reduction {
            let m =
                msg::cannot_change_kept_reduction(s.reduction.as_str(), result.reduction.as_str());
            return Err(Violation::of(C::UnreducedTransition, m, focus));
        }
    }
    Ok(())
}
