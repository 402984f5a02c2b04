//! `sdy.manual_computation`: manual axes not already manual in a parent (op
//! verification); in/out shardings, body types and manual axes (symbol-use time).

use super::attrs::{
    inherent_per_value, manual_axis_refs, operand_types, result_types, verify_per_value,
};
use super::edges::common_mesh;
use super::messages as msg;
use super::named_computation::return_op;
use super::sharding::{bound_axis_violation, bound_manual_axes, resolve_mesh, TypeArg};
use super::values::{ranked_tensor_string, type_string};
use super::{Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{AxisRef, SpannedSharding};
use crate::model::OpId;
use crate::sharding::axis;
use sdy_syntax::tree::{Dim, Type, TypeKind};

/// A manual axis may not be manual in an enclosing manual computation already.
pub fn verify_nested_manual_axes(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let (Some(bound), Some(axes)) =
        (bound_manual_axes(cx.model, id), manual_axis_refs(cx.model.op(id)))
    else {
        return Ok(());
    };
    for axis in axes {
        if let Some((_, parent)) = bound.iter().find(|(a, _)| *a == axis.name) {
            return Err(bound_axis_violation(cx.model, &axis.name, axis.span, *parent));
        }
    }
    Ok(())
}

/// One side of the op: its operands (or results), the body's view of them, and their
/// shardings.
struct Side<'a> {
    kind: &'static str,
    global: Vec<TypeArg<'a>>,
    /// The body's types, each with the offset its span is relative to.
    local: Vec<Option<(&'a Type, u32)>>,
    shardings: Vec<SpannedSharding>,
}

pub fn verify_symbol_uses(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let op = cx.model.op(id);
    let Some(axes) = manual_axis_refs(op) else { return Ok(()) };
    let manual: Vec<String> = axes.iter().map(|a| a.name.to_string()).collect();
    let in_shardings = inherent_per_value(cx.model, id, "in_shardings").unwrap_or_default();
    let out_shardings = inherent_per_value(cx.model, id, "out_shardings").unwrap_or_default();
    let args = op.region_args.first().cloned().unwrap_or_default();
    let operands = Side {
        kind: "operand",
        global: operand_types(cx.model, id),
        local: args.iter().map(|&a| cx.model.value(a).ty.as_ref().map(|t| (t, op.start))).collect(),
        shardings: in_shardings,
    };
    let local_results = match return_op(cx, id) {
        Some(ret) => {
            let base = cx.model.op(ret).start;
            (0..cx.model.op(ret).operands.len())
                .map(|i| cx.model.operand_type(ret, i).map(|t| (t, base)))
                .collect()
        }
        None => Vec::new(),
    };
    let results = Side {
        kind: "result",
        global: result_types(cx.model, id),
        local: local_results,
        shardings: out_shardings,
    };
    verify_side(cx, id, &operands, &manual)?;
    verify_side(cx, id, &results, &manual)?;
    if operands.shardings.is_empty() && results.shardings.is_empty() {
        return Ok(());
    }
    let all: Vec<SpannedSharding> =
        operands.shardings.iter().chain(&results.shardings).cloned().collect();
    let mesh = common_mesh(cx, &all);
    if mesh.is_none() && !axes.is_empty() {
        let focus = axes[0].span.cover(axes[axes.len() - 1].span);
        return Err(Violation::of(
            C::ManualComputation,
            msg::MANUAL_COMMON_MESH.to_string(),
            focus,
        ));
    }
    if let Some(mesh) = mesh {
        if let Some(a) = axes.iter().find(|a| mesh.axis(&a.name).is_none()) {
            return Err(Violation::of(
                C::ManualComputation,
                msg::unknown_manual_axis(&a.name),
                a.span,
            ));
        }
    }
    Ok(())
}

/// MC1–MC5 on one side.
fn verify_side(cx: &Ctx, id: OpId, side: &Side, manual: &[String]) -> Result<(), Violation> {
    if side.global.is_empty() && side.local.is_empty() && side.shardings.is_empty() {
        return Ok(());
    }
    verify_per_value(cx, &side.shardings, &side.global, id, side.kind)?;
    if side.global.len() != side.local.len() {
        let m = msg::region_values_count(side.kind, side.global.len(), side.local.len());
        return Err(Violation::of(C::ManualComputation, m, cx.model.op(id).name_span()));
    }
    let is_manual = |a: &AxisRef| manual.iter().any(|m| *m == a.name);
    for (i, s) in side.shardings.iter().enumerate() {
        for (d, dim) in s.dims.iter().enumerate() {
            let axes = &dim.axes;
            let Some(first_free) = axes.iter().position(|a| !is_manual(a)) else { continue };
            if let Some(k) = (first_free..axes.len()).find(|&k| is_manual(&axes[k])) {
                let m = msg::manual_axis_after_free(
                    side.kind,
                    i,
                    d,
                    &axes[k].to_string(),
                    &axes[k - 1].to_string(),
                );
                return Err(Violation::of(C::ManualComputation, m, s.dim_axis_spans(d)[k]));
            }
        }
        let (TypeArg::Of(global), Some((local, base))) = (side.global[i], side.local[i]) else {
            continue;
        };
        let TypeKind::Tensor { shape: Some(shape), elem, .. } = &*global.kind else { continue };
        let Some(mesh) = resolve_mesh(cx.model, s) else { continue };
        let mut local_dims = Vec::with_capacity(shape.len());
        for (d, (size, dim)) in shape.iter().zip(&s.dims).enumerate() {
            match size {
                Dim::Dynamic => local_dims.push(Dim::Dynamic),
                Dim::Static(n) => {
                    let manual_size: i64 = dim
                        .axes
                        .iter()
                        .filter(|a| is_manual(a))
                        .map(|a| axis::size(a, mesh))
                        .product();
                    if manual_size == 0 || n % manual_size != 0 {
                        return Err(Violation::of(
                            C::ManualComputation,
                            msg::manual_axes_not_dividing(side.kind, *n, manual_size),
                            s.dim_spans[d],
                        ));
                    }
                    local_dims.push(Dim::Static(n / manual_size));
                }
            }
        }
        let matches = match &*local.kind {
            TypeKind::Tensor { shape: Some(l), elem: le, encoding: None } => {
                **l == *local_dims && le == elem
            }
            TypeKind::Tensor { .. } => false,
            _ => continue,
        };
        if !matches {
            let expected = ranked_tensor_string(&local_dims, elem);
            let m = msg::local_shape_mismatch(side.kind, i, &expected, &type_string(local));
            return Err(Violation::of(C::ManualComputation, m, local.span.shift(base)));
        }
    }
    Ok(())
}
