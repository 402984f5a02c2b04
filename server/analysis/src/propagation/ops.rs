//! Op properties propagation cares about: element-wise ops, side-effect-free ops (which
//! MLIR's greedy driver erases when unused), and rules of ops made by passes.

use super::graph::ValueType;
pub use crate::ir::kind::op_purity;
use crate::ir::sdy as p;
use crate::ir::OpKind;
use crate::rules::{self, OpShardingRule, TensorType};

/// `isElementwise(op)`: element-wise ops, and `bitcast_convert` between equal shapes.
pub fn is_elementwise_op(
    kind: OpKind,
    operand: Option<&ValueType>,
    result: Option<&ValueType>,
) -> bool {
    if kind == OpKind::StablehloBitcastConvert {
        return operand.is_some() && operand == result;
    }
    kind.is_elementwise()
}

/// The identity rule of a tensor of `shape` with `operands` operands and one result.
pub fn identity_rule(shape: &[i64], operands: usize) -> OpShardingRule {
    let mapping: Vec<Vec<usize>> = (0..shape.len()).map(|d| vec![d]).collect();
    OpShardingRule {
        factor_sizes: shape.to_vec(),
        operands: vec![mapping.clone(); operands],
        results: vec![mapping],
        ..Default::default()
    }
}

/// The rule held by an `sdy.sharding_rule` attribute.
pub fn rule_from_print(r: &p::OpShardingRule) -> Option<OpShardingRule> {
    let n = r.factor_sizes.len();
    let idx = |f: i64| usize::try_from(f).ok().filter(|&f| f < n);
    let maps = |ms: &[Vec<Vec<i64>>]| -> Option<Vec<Vec<Vec<usize>>>> {
        ms.iter().map(|m| m.iter().map(|d| d.iter().map(|&f| idx(f)).collect()).collect()).collect()
    };
    let list = |l: &[i64]| -> Option<Vec<usize>> { l.iter().map(|&f| idx(f)).collect() };
    Some(OpShardingRule {
        factor_sizes: r.factor_sizes.clone(),
        operands: maps(&r.operands)?,
        results: maps(&r.results)?,
        reduction: list(&r.reduction)?,
        need_replication: list(&r.need_replication)?,
        permutation: list(&r.permutation)?,
        blocked_propagation: list(&r.blocked_propagation)?,
        is_custom: r.custom,
    })
}

/// The registry's view of a type written as text.
pub fn tensor_type(ty: &str) -> TensorType {
    let Some(t) = crate::types::read_tensor(ty.trim()) else {
        return TensorType::default();
    };
    let shape = t.dims.as_ref().map(|d| d.iter().map(|d| d.unwrap_or(rules::DYNAMIC)).collect());
    TensorType { shape, elem: t.elem().to_string() }
}
