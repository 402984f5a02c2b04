//! `sdy.named_computation`: result types inferred from its `sdy.return` (op
//! verification); block arguments and in/out shardings (symbol-use time).

use super::attrs::{inherent_per_value, operand_types, result_types, verify_per_value};
use super::generic::{differ, inferred_types_violation};
use super::messages as msg;
use super::values::type_string;
use super::{Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::OpId;
use sdy_syntax::tree::Type;
use sdy_syntax::Span;

/// The `sdy.return` ending the op's body.
pub fn return_op(cx: &Ctx, id: OpId) -> Option<OpId> {
    let region = cx.regions(id).into_iter().next()?;
    let ret = *region.last()?;
    (cx.model.op(ret).name() == "sdy.return").then_some(ret)
}

/// The types `sdy.return` gives back (none without it), when all known.
pub fn returned_types<'m>(cx: &Ctx<'m>, id: OpId) -> Option<Vec<&'m Type>> {
    let Some(ret) = return_op(cx, id) else { return Some(Vec::new()) };
    (0..cx.model.op(ret).operands.len()).map(|i| cx.model.operand_type(ret, i)).collect()
}

/// The results are typed like the values `sdy.return` gives back.
pub fn verify_inferred_types(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let Some(inferred) = returned_types(cx, id) else { return Ok(()) };
    let actual: Option<Vec<&Type>> =
        (0..cx.model.op(id).results.len()).map(|i| cx.model.result_type(id, i)).collect();
    let Some(actual) = actual else { return Ok(()) };
    if inferred.len() != actual.len() || inferred.iter().zip(&actual).any(|(a, b)| differ(a, b)) {
        return Err(inferred_types_violation(&inferred, &actual));
    }
    Ok(())
}

pub fn verify_symbol_uses(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let op = cx.model.op(id);
    let args = op.region_args.first().cloned().unwrap_or_default();
    if args.len() != op.operands.len() {
        let span = op.node.regions.first().map_or(Span::default(), |r| r.span.shift(op.start));
        return Err(Violation::of(
            C::NamedComputation,
            msg::block_args_count(args.len(), op.operands.len()),
            span,
        )
        .plain());
    }
    for (i, &arg) in args.iter().enumerate() {
        let (Some(inner), Some(outer)) =
            (cx.model.value(arg).ty.as_ref(), cx.model.operand_type(id, i))
        else {
            continue;
        };
        if differ(inner, outer) {
            let m = msg::block_arg_type(i, &type_string(inner), &type_string(outer));
            return Err(Violation::of(C::NamedComputation, m, cx.model.value(arg).span).plain());
        }
    }
    if let Some(s) = inherent_per_value(cx.model, id, "in_shardings") {
        verify_per_value(cx, &s, &operand_types(cx.model, id), id, "in_shardings")?;
    }
    if let Some(s) = inherent_per_value(cx.model, id, "out_shardings") {
        verify_per_value(cx, &s, &result_types(cx.model, id), id, "out_shardings")?;
    }
    Ok(())
}
