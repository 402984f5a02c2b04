//! Element-wise ops: the element types their operands allow, compare.

use super::{Operands, Tensor};
use crate::verify::messages as msg;
use crate::verify::Violation;
use sdy_syntax::Span;

pub(super) fn compare(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(2, 1) else { return Ok(()) };
    let result = &outs[0];
    if result.elem != "i1" {
        return Err(Violation::new(
            msg::compare_result_not_bool(&result.quoted()),
            Span::default(),
        ));
    }
    if ins[0].elem != ins[1].elem {
        return Err(Violation::new(msg::COMPATIBLE_ELEMENT_TYPES_OPERANDS.into(), Span::default()));
    }
    // Every tensor counts (a "scalar" here is a non-tensor value).
    let shaped: Vec<&Tensor> = ins.iter().chain(std::iter::once(result)).collect();
    if shaped.windows(2).any(|w| w[0].dims != w[1].dims) {
        return Err(Violation::new(msg::SAME_SHAPE_AND_BASE_TYPE.into(), Span::default()));
    }
    Ok(())
}

/// The element types an element-wise op's operands allow (its ODS constraint), by the
/// op's name without the dialect: `None` for the ops not checked here.
/// Whether an element type is allowed, and how the constraint reads in the message.
type ElementRule = (fn(&str) -> bool, &'static str);

fn allowed(name: &str) -> Option<ElementRule> {
    Some(match name {
        "cbrt"
        | "cosine"
        | "exponential"
        | "exponential_minus_one"
        | "log"
        | "log_plus_one"
        | "logistic"
        | "rsqrt"
        | "sine"
        | "sqrt"
        | "tan"
        | "tanh" => (
            |e| !(e.starts_with('i') || e.starts_with("si") || e.starts_with("ui")),
            msg::FLOAT_OR_COMPLEX_TENSOR,
        ),
        "negate" | "subtract" | "remainder" => (|e| e != "i1", msg::INT_FLOAT_OR_COMPLEX_TENSOR),
        "abs" => (|e| e != "i1" && !e.starts_with("ui"), msg::SIGNLESS_INT_FLOAT_OR_COMPLEX_TENSOR),
        "and" | "or" | "xor" => (
            |e| e.starts_with('i') || e.starts_with("si") || e.starts_with("ui"),
            msg::BOOL_OR_INT_TENSOR,
        ),
        _ => return None,
    })
}

/// `operand #i must be ranked tensor of ...`: the first operand whose element type the
/// op does not allow.
pub(super) fn operand_elements(op: &Operands, name: &str) -> Result<(), Violation> {
    let Some((ok, what)) = allowed(name) else { return Ok(()) };
    for (i, ty) in op.operand_types().enumerate() {
        if let Some(t) = super::tensor(ty) {
            if !ok(t.elem) {
                return Err(Violation::new(
                    msg::operand_must_be(i, what, &t.quoted()),
                    Span::default(),
                ));
            }
        }
    }
    Ok(())
}
