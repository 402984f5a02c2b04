//! The eight collectives (§8): the interface checks every collective shares (op
//! verification, C1–C4), then each op's own rules (symbol-use time).

mod all_to_all;
mod per_dim;
mod permute;
mod reduce;

use super::attrs::inherent_sharding;
use super::messages as msg;
use super::sharding::{resolve_mesh, verify_sharding, TypeArg};
use super::values::{same_mesh, value_loc, value_sharding};
use super::{Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{DimSharding, Mesh, SpannedSharding, TensorSharding};
use crate::model::OpId;
use sdy_syntax::Span;

/// What every collective rule looks at.
struct Collective {
    id: OpId,
    /// The result sharding (`out_sharding`).
    out: SpannedSharding,
    /// The operand's sharding, if it has one.
    operand: Option<TensorSharding>,
    /// The mesh of `out`.
    mesh: Mesh,
}

impl Collective {
    fn load(cx: &Ctx, id: OpId) -> Option<Collective> {
        let out = inherent_sharding(cx.model, id, "out_sharding")?;
        let mesh = resolve_mesh(cx.model, &out)?.clone();
        let operand = cx
            .model
            .op(id)
            .operands
            .first()
            .copied()
            .flatten()
            .and_then(|v| value_sharding(cx.model, v));
        Some(Collective { id, out, operand, mesh })
    }

    /// The operand sharding, or a fully replicated one on the result's mesh.
    fn operand_or_replicated(&self) -> TensorSharding {
        self.operand.clone().unwrap_or_else(|| {
            let mut s = self.out.value.clone();
            for d in &mut s.dims {
                *d = DimSharding { axes: Vec::new(), open: true, priority: None };
            }
            s.replicated.clear();
            s.unreduced.clear();
            s
        })
    }
}

/// C1–C4: the operand has a sharding (unless the op allows none), `out_sharding` fits
/// the result, both are on one mesh and have one rank.
pub fn verify_interface(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let op = cx.model.op(id);
    let name = op.name();
    let input = op.operands.first().copied().flatten();
    let operand = input.and_then(|v| value_sharding(cx.model, v));
    let allows_missing = matches!(name, "sdy.all_slice" | "sdy.all_reduce" | "sdy.reduce_scatter");
    if operand.is_none() && !allows_missing {
        let focus = op.node.operands.first().map_or(op.name_span(), |o| o.span.shift(op.start));
        return Err(Violation::of(
            C::Collective,
            msg::COLLECTIVE_WITHOUT_SHARDING.to_string(),
            focus,
        ));
    }
    let Some(out) = inherent_sharding(cx.model, id, "out_sharding") else { return Ok(()) };
    verify_sharding(cx.model, &out, TypeArg::from(cx.model.result_type(id, 0)), id)?;
    if let Some(operand) = &operand {
        if name != "sdy.collective_permute" {
            if let (Some(result_mesh), Some(operand_mesh)) =
                (resolve_mesh(cx.model, &out), resolve_mesh(cx.model, operand))
            {
                if !same_mesh(result_mesh, operand_mesh) {
                    return Err(mesh_mismatch(
                        cx,
                        id,
                        msg::RESULT_MESH_MISMATCH,
                        operand_mesh,
                        out.span,
                    ));
                }
            }
        }
        if out.dims.len() != operand.dims.len() {
            return Err(Violation::of(
                C::Collective,
                msg::result_operand_rank(out.dims.len(), operand.dims.len()),
                out.dims_span,
            ));
        }
    }
    Ok(())
}

/// A mesh mismatch error, with a note at the operand naming its mesh.
fn mesh_mismatch(cx: &Ctx, id: OpId, message: &str, operand_mesh: &Mesh, focus: Span) -> Violation {
    let v = Violation::of(C::Collective, message.to_string(), focus);
    match cx.model.op(id).operands.first().copied().flatten() {
        Some(input) => v.with_note(
            Span::empty(value_loc(cx.model, input)),
            msg::operand_mesh_note(&operand_mesh.to_string()),
        ),
        None => v,
    }
}

/// Each collective's own rules.
pub fn verify_symbol_uses(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let Some(c) = Collective::load(cx, id) else { return Ok(()) };
    match cx.model.op(id).name() {
        "sdy.all_gather" => per_dim::all_gather(cx, &c),
        "sdy.all_slice" => per_dim::all_slice(cx, &c),
        "sdy.reduce_scatter" => per_dim::reduce_scatter(cx, &c),
        "sdy.sharded_to_unreduced" => per_dim::sharded_to_unreduced(cx, &c),
        "sdy.all_to_all" => all_to_all::verify(cx, &c),
        "sdy.collective_permute" => permute::verify(cx, &c),
        "sdy.all_reduce" => reduce::all_reduce(cx, &c),
        "sdy.replicated_to_unreduced" => reduce::replicated_to_unreduced(cx, &c),
        _ => Ok(()),
    }
}
