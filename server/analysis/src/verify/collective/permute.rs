//! `sdy.collective_permute`: meshes may differ in device order only, and every
//! dimension keeps its sharded size.

use super::super::messages as msg;
use super::super::sharding::resolve_mesh;
use super::super::{Ctx, Violation};
use super::{mesh_mismatch, Collective};
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::MeshRef;
use crate::sharding::axis::total_size;

pub fn verify(cx: &Ctx, c: &Collective) -> Result<(), Violation> {
    let Some(operand) = &c.operand else { return Ok(()) };
    let Some(operand_mesh) = resolve_mesh(cx.model, operand) else { return Ok(()) };
    let mesh = &c.mesh;
    let same_axes = mesh.axes.len() == operand_mesh.axes.len()
        && mesh.axes.iter().zip(&operand_mesh.axes).all(|(a, b)| a == b);
    if !same_axes {
        return Err(mesh_mismatch(cx, c.id, msg::PERMUTE_DIFFERENT_AXES, operand_mesh, c.out.span));
    }
    let same_ref = match (&operand.mesh, &c.out.mesh) {
        (MeshRef::Symbol(a), MeshRef::Symbol(b)) => a == b,
        (MeshRef::Inline(a), MeshRef::Inline(b)) => super::super::values::same_mesh(a, b),
        _ => false,
    };
    if !same_ref && mesh.device_ids == operand_mesh.device_ids {
        return Err(mesh_mismatch(
            cx,
            c.id,
            msg::PERMUTE_SAME_DEVICE_IDS,
            operand_mesh,
            c.out.span,
        ));
    }
    for (dim, (in_dim, out_dim)) in operand.dims.iter().zip(&c.out.dims).enumerate() {
        let (in_axes, out_axes) = (&in_dim.axes, &out_dim.axes);
        if in_axes == out_axes {
            continue;
        }
        let (in_size, out_size) = (total_size(in_axes, mesh), total_size(out_axes, mesh));
        if in_size != out_size {
            return Err(Violation::of(
                C::Collective,
                msg::permute_sharded_size(dim, out_size, in_size),
                c.out.dim_spans[dim],
            ));
        }
    }
    Ok(())
}
