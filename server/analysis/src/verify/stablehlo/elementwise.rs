//! Element-wise ops: the element types their operands allow, compare, bitcast_convert.

use super::{plain, Operands, Tensor};
use crate::verify::messages as msg;
use crate::verify::Violation;
use sdy_syntax::tree::TypeKind;
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
    let shaped: [&Tensor; 3] = [&ins[0], &ins[1], result];
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
        "atan2"
        | "cbrt"
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
        | "tanh" => (|e| !super::is_int(e), msg::FLOAT_OR_COMPLEX_TENSOR),
        "real" | "imag" => (|e| !super::is_int(e), msg::FLOAT_OR_COMPLEX_NOT_QUANTIZED_TENSOR),
        "ceil" | "floor" | "round_nearest_afz" | "round_nearest_even" | "is_finite" => {
            (super::is_float, msg::FLOAT_TENSOR)
        }
        "negate" | "subtract" | "remainder" | "divide" | "power" => {
            (|e| e != "i1", msg::INT_FLOAT_OR_COMPLEX_TENSOR)
        }
        "abs" | "sign" => {
            (|e| e != "i1" && !e.starts_with("ui"), msg::SIGNLESS_INT_FLOAT_OR_COMPLEX_TENSOR)
        }
        "and" | "or" | "xor" | "not" => (super::is_int, msg::BOOL_OR_INT_TENSOR),
        "count_leading_zeros"
        | "popcnt"
        | "shift_left"
        | "shift_right_arithmetic"
        | "shift_right_logical" => (|e| super::is_int(e) && e != "i1", msg::INT_TENSOR),
        _ => return None,
    })
}

/// `operand #i must be ranked tensor of ...`: the first operand whose element type the
/// op does not allow.
pub(super) fn operand_elements(op: &Operands, name: &str) -> Result<(), Violation> {
    let Some((ok, what)) = allowed(name) else { return Ok(()) };
    for (i, ty) in op.operand_types().enumerate() {
        // The element type first: the shape is read only for a mistake.
        if matches!(&*ty.kind, TypeKind::Tensor { elem, .. } if ok(elem)) {
            continue;
        }
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

/// bitcast_convert: real stays real, and the shapes agree but for one innermost
/// dimension on the side of the narrower element type, which makes up the wider one.
pub(super) fn bitcast_convert(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(1, 1) else { return Ok(()) };
    let (operand, result) = (&ins[0], &outs[0]);
    let complex = |e: &str| e.starts_with("complex<");
    if complex(operand.elem) != complex(result.elem) {
        return Err(plain(msg::bitcast_real_complex(&operand.quoted(), &result.quoted())));
    }
    let (Some(from), Some(to)) = (bit_width(operand.elem), bit_width(result.elem)) else {
        return Ok(());
    };
    let (narrow, wide) = if from < to { (operand, result) } else { (result, operand) };
    let mut prefix = &narrow.dims[..];
    if from != to {
        if narrow.rank() != wide.rank() + 1 {
            return Err(plain(msg::bitcast_rank(narrow.rank(), wide.rank())));
        }
        let (last, rest) = narrow.dims.split_last().expect("rank >= 1");
        let (small, big) = (from.min(to), from.max(to));
        if last * small != big {
            let (a, b) = (operand.quoted(), result.quoted());
            return Err(plain(msg::bitcast_widths(&a, &b, small, *last, big)));
        }
        prefix = rest;
    }
    if prefix.iter().zip(&wide.dims).any(|(a, b)| a != b) {
        return Err(plain(msg::bitcast_shapes(&operand.quoted(), &result.quoted())));
    }
    Ok(())
}

/// The bits of an element type (a complex number: both parts); `None` where unknown.
fn bit_width(elem: &str) -> Option<i64> {
    if let Some(part) = elem.strip_prefix("complex<").and_then(|e| e.strip_suffix('>')) {
        return bit_width(part).map(|w| 2 * w);
    }
    let int_or_float = elem
        .strip_prefix("ui")
        .or_else(|| elem.strip_prefix("si"))
        .or_else(|| elem.strip_prefix('i'))
        .or_else(|| elem.strip_prefix('f'))
        .and_then(|digits| digits.parse::<i64>().ok());
    int_or_float.or(match elem {
        "bf16" => Some(16),
        "tf32" => Some(19),
        _ if elem.starts_with("f4E") => Some(4),
        _ if elem.starts_with("f6E") => Some(6),
        _ if elem.starts_with("f8E") => Some(8),
        _ => None,
    })
}
