//! Builders of the StableHLO ops the export passes create (constants, the device id,
//! comparisons, arithmetic), each a new op with a fresh result in the printable IR.

use crate::ir::{Attr, Module, Op, ValueId};
use crate::types::element_type;
use rustc_hash::FxHashSet as HashSet;

/// `name(operands) : result_ty` in its custom form, with the new result.
pub fn op(m: &mut Module, name: &str, operands: Vec<ValueId>, result_ty: &str) -> (Op, ValueId) {
    let r = m.new_value(Some(result_ty.to_string()));
    (Op::pretty(name, operands, vec![r], Vec::new()), r)
}

/// `stablehlo.constant dense<value> : ty`.
pub fn constant(m: &mut Module, value: &str, ty: &str) -> (Op, ValueId) {
    let (mut c, r) = op(m, "stablehlo.constant", Vec::new(), ty);
    c.set_prop("value", Attr::Raw(format!("dense<{value}> : {ty}")));
    (c, r)
}

/// A scalar `i64` constant.
pub fn const_i64(m: &mut Module, value: i64) -> (Op, ValueId) {
    constant(m, &value.to_string(), "tensor<i64>")
}

/// The zero of a tensor type as MLIR prints a splat (`0.000000e+00`, `0`, `false`).
pub fn zero_of(ty: &str) -> String {
    let elem = element_type(ty);
    if elem == "i1" {
        "false".to_string()
    } else if elem.starts_with("complex<") {
        "(0.000000e+00,0.000000e+00)".to_string()
    } else if elem.starts_with('f') || elem.starts_with("bf") || elem.starts_with("tf") {
        "0.000000e+00".to_string()
    } else {
        "0".to_string()
    }
}

/// Shardy's `getDeviceId`: the replica id when there are several replicas, else the
/// partition id, as a scalar `i64`.
pub fn device_id(m: &mut Module, replica_count: i64, out: &mut Vec<Op>) -> ValueId {
    let name = if replica_count > 1 { "stablehlo.replica_id" } else { "stablehlo.partition_id" };
    let (id, v) = op(m, name, Vec::new(), "tensor<ui32>");
    out.push(id);
    let (cv, r) = op(m, "stablehlo.convert", vec![v], "tensor<i64>");
    out.push(cv);
    r
}

/// `stablehlo.compare DIR, a, b` of two values of type `operand_ty`.
pub fn compare(
    m: &mut Module,
    dir: &str,
    a: ValueId,
    b: ValueId,
    operand_ty: &str,
) -> (Op, ValueId) {
    let shape = operand_ty.strip_prefix("tensor<").and_then(|t| t.strip_suffix('>')).unwrap_or("");
    let elem = element_type(operand_ty);
    let result_ty = format!("tensor<{}i1>", &shape[..shape.len().saturating_sub(elem.len())]);
    let (mut c, r) = op(m, "stablehlo.compare", vec![a, b], &result_ty);
    c.set_prop(
        "comparison_direction",
        Attr::Raw(format!("#stablehlo<comparison_direction {dir}>")),
    );
    (c, r)
}

/// Replaces the op whose first result is `first` by `ops`.
pub fn splice_op(m: &mut Module, first: Option<ValueId>, ops: Vec<Op>) {
    let Some(first) = first else { return };
    let mut ops = Some(ops);
    m.top.walk_mut(&mut |op| {
        for r in &mut op.regions {
            for b in &mut r.blocks {
                if let Some(k) = b.ops.iter().position(|o| o.results.first() == Some(&first)) {
                    if let Some(new) = ops.take() {
                        b.ops.splice(k..=k, new);
                    }
                }
            }
        }
    });
}

/// Removes the ops defining any of `values`.
pub fn remove_defining(m: &mut Module, values: &HashSet<ValueId>) {
    if values.is_empty() {
        return;
    }
    m.top.walk_mut(&mut |op| {
        for r in &mut op.regions {
            for b in &mut r.blocks {
                b.ops.retain(|o| !o.results.first().is_some_and(|v| values.contains(v)));
            }
        }
    });
}
