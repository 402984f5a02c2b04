//! `sdy.data_flow_edge`, `sdy.func_data_flow_edge` (symbol-use time) and
//! `sdy.propagation_barrier` (op verification).

use super::attrs::inherent_sharding;
use super::messages as msg;
use super::sharding::{verify_sharding, TypeArg};
use super::values::{has_static_shape, type_string};
use super::{Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::{OpId, ValueDef};
use sdy_syntax::tree::AttrKind;
use sdy_syntax::Span;

/// The barrier must block some direction.
pub fn verify_barrier_direction(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let op = cx.model.op(id);
    let Some(attr) = op.node.inherent_attr("allowed_direction") else { return Ok(()) };
    match attr.value.as_ref().map(|v| &v.kind) {
        // `BOTH`, or its enum value in the generic form (`3 : i32`).
        Some(AttrKind::Keyword(k)) if k == "BOTH" => Err(Violation::of(
            C::DataFlow,
            msg::BARRIER_BOTH.to_string(),
            attr.span.shift(op.start),
        )),
        Some(AttrKind::Int { value: 3, .. }) => Err(Violation::of(
            C::DataFlow,
            msg::BARRIER_BOTH.to_string(),
            attr.span.shift(op.start),
        )),
        _ => Ok(()),
    }
}

/// The op's single operand value and the span where it is used.
fn input(cx: &Ctx, id: OpId) -> Option<(u32, Span)> {
    let op = cx.model.op(id);
    let v = op.operands.first().copied().flatten()?;
    Some((v, op.node.operands[0].span.shift(op.start)))
}

/// The result type must be static; `message` words the error.
fn static_result(cx: &Ctx, id: OpId, message: fn(&str) -> String) -> Result<(), Violation> {
    match cx.model.result_type(id, 0) {
        Some(ty) if !has_static_shape(ty) => Err(Violation::of(
            C::DataFlow,
            message(&type_string(ty)),
            ty.span.shift(cx.model.op(id).start),
        )),
        _ => Ok(()),
    }
}

pub fn verify_data_flow_edge(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    static_result(cx, id, msg::data_flow_edge_static_shape)?;
    let Some((v, use_span)) = input(cx, id) else { return Ok(()) };
    if cx.model.value(v).uses.len() != 1 {
        return Err(Violation::of(
            C::DataFlow,
            msg::DATA_FLOW_EDGE_SINGLE_USER.to_string(),
            use_span,
        ));
    }
    if let ValueDef::Result { op: def, .. } = cx.model.value(v).def {
        let name = cx.model.op(def).name();
        if name.starts_with("sdy.")
            && !matches!(name, "sdy.manual_computation" | "sdy.named_computation")
        {
            return Err(Violation::of(
                C::DataFlow,
                msg::DATA_FLOW_EDGE_SDY_INPUT.to_string(),
                use_span,
            )
            .with_note(Span::empty(cx.model.op(def).loc()), msg::DATA_FLOW_EDGE_SDY_INPUT_NOTE));
        }
    }
    match inherent_sharding(cx.model, id, "sharding") {
        Some(s) => verify_sharding(cx.model, &s, TypeArg::from(cx.model.result_type(id, 0)), id),
        None => Ok(()),
    }
}

pub fn verify_func_data_flow_edge(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    static_result(cx, id, msg::func_data_flow_edge_static_shape)?;
    let Some((v, use_span)) = input(cx, id) else { return Ok(()) };
    if cx.model.value(v).uses.len() != 1 {
        return Err(Violation::of(
            C::DataFlow,
            msg::FUNC_DATA_FLOW_EDGE_SINGLE_USER.to_string(),
            use_span,
        ));
    }
    let (owner, expected, message) = match cx.model.value(v).def {
        ValueDef::BlockArg { op, .. } => (op, "func.func", msg::FUNC_DATA_FLOW_EDGE_FUNC_ARG),
        ValueDef::Result { op, .. } => (op, "func.call", msg::FUNC_DATA_FLOW_EDGE_CALL_RESULT),
    };
    if cx.model.op(owner).name() != expected {
        return Err(Violation::of(C::DataFlow, message.to_string(), use_span));
    }
    Ok(())
}
