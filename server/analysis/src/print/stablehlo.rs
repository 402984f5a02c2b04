//! The custom forms MLIR prints for StableHLO ops written in the generic form (the ops
//! whose form is a fixed arrangement of operands, a few inherent attributes and types,
//! plus convolution, reduce, while, rng_bit_generator and some CHLO ops; elementwise ops
//! are in `printer.rs`; other ops with regions or structured dimension numbers keep the
//! generic form). Which ops have such a form is the IR's ([`crate::ir::stablehlo`]).

use crate::ir::stablehlo::{bool_array, i64_array, padding_pairs, CONV_WINDOW};
use crate::ir::{Op, ValueId};

/// `stride = [2, 1], pad = [[0, 1], [1, 0]], reverse = [true, false]`: the window
/// attributes the convolution has.
pub fn conv_window(op: &Op) -> String {
    let mut parts = Vec::new();
    for (prop, word) in CONV_WINDOW {
        let a = op.prop(prop);
        let items: Option<Vec<String>> = match prop {
            "padding" => {
                padding_pairs(a).map(|ps| ps.iter().map(|(l, h)| format!("[{l}, {h}]")).collect())
            }
            "window_reversal" => bool_array(a).map(|bs| bs.iter().map(bool::to_string).collect()),
            _ => i64_array(a).map(|xs| xs.iter().map(i64::to_string).collect()),
        };
        if let Some(items) = items {
            parts.push(format!("{word} = [{}]", items.join(", ")));
        }
    }
    parts.join(", ")
}

/// The op a `stablehlo.reduce` applies, when its body is just that op on the block
/// arguments (in order), of the element type of the first input, whose result is
/// returned: then MLIR prints `applies NAME` instead of the body.
pub fn compact_reducer<'a>(op: &'a Op, ty: &dyn Fn(ValueId) -> String) -> Option<&'a str> {
    let block = op.regions.first()?.blocks.first()?;
    let [inner, ret] = &block.ops[..] else { return None };
    let same_type =
        inner.operands.iter().chain(&inner.results).all(|&v| ty(v) == ty(inner.results[0]));
    let first = ty(*op.operands.first()?);
    let elem = element_type(&first)?;
    let fits = inner.kind.is_compact_reducer()
        && inner.regions.is_empty()
        && inner.operands.len() == 2
        && inner.results.len() == 1
        && same_type
        && ty(inner.operands[0]) == format!("tensor<{elem}>")
        && inner.operands == block.args
        && ret.name.rsplit_once('.').is_some_and(|(_, n)| n == "return")
        && ret.operands == inner.results;
    fits.then_some(inner.name.as_str())
}

/// `f32` of `tensor<8x?xf32>` (an encoding left out).
fn element_type(ty: &str) -> Option<&str> {
    crate::types::read_tensor(ty).map(|t| t.elem())
}

/// `[1, 0]`
pub fn list(xs: &[i64]) -> String {
    let items: Vec<String> = xs.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// `[0:2, 0:8:2]`: each dimension's `start:limit`, with `:stride` when it is not 1.
pub fn slice_ranges(op: &Op) -> String {
    let get = |k: &str| i64_array(op.prop(k)).unwrap_or_default();
    let (starts, limits, strides) = (get("start_indices"), get("limit_indices"), get("strides"));
    let dims: Vec<String> = (0..starts.len())
        .map(|i| {
            let (a, b, s) = (starts[i], limits[i], strides[i]);
            if s == 1 {
                format!("{a}:{b}")
            } else {
                format!("{a}:{b}:{s}")
            }
        })
        .collect();
    format!("[{}]", dims.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_element_types() {
        assert_eq!(list(&[1, 0]), "[1, 0]");
        assert_eq!(list(&[]), "[]");
        assert_eq!(element_type("tensor<8x?xf32>"), Some("f32"));
        assert_eq!(element_type("tensor<complex<f32>>"), Some("complex<f32>"));
        assert_eq!(element_type("tensor<4xi1, #enc<[1, 2]>>"), Some("i1"));
    }
}
