//! Element-wise ops: compare.

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
    let shaped: Vec<&Tensor> =
        ins.iter().chain(std::iter::once(result)).filter(|t| t.rank() > 0).collect();
    if shaped.windows(2).any(|w| w[0].dims != w[1].dims) {
        return Err(Violation::new(msg::SAME_SHAPE_AND_BASE_TYPE.into(), Span::default()));
    }
    Ok(())
}
