//! Op properties propagation cares about: element-wise ops, side-effect-free ops (which
//! MLIR's greedy driver erases when unused), and rules of ops made by passes.

use super::graph::ValueType;
use crate::ir::sdy as p;
use crate::rules::{self, OpShardingRule, TensorType};

const UNARY_BINARY: &[&str] = &[
    "abs",
    "add",
    "and",
    "atan2",
    "cbrt",
    "ceil",
    "complex",
    "convert",
    "cosine",
    "count_leading_zeros",
    "divide",
    "exponential",
    "exponential_minus_one",
    "floor",
    "imag",
    "is_finite",
    "log",
    "log_plus_one",
    "logistic",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "remainder",
    "round_nearest_afz",
    "round_nearest_even",
    "rsqrt",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sine",
    "sqrt",
    "subtract",
    "tan",
    "tanh",
    "xor",
    "uniform_quantize",
    "uniform_dequantize",
    "compare",
    "reduce_precision",
    // BroadcastingElementwise
    "select",
    "clamp",
];

/// Shardy's `isElementwise` (without the bitcast_convert shape check, see
/// [`is_elementwise_op`]).
pub fn is_elementwise_name(name: &str) -> bool {
    if let Some(n) = name.strip_prefix("stablehlo.") {
        return UNARY_BINARY.contains(&n);
    }
    matches!(name, "sdy.propagation_barrier" | "sdy.sharding_constraint" | "sdy.reshard")
}

/// `isElementwise(op)`: element-wise ops, and `bitcast_convert` between equal shapes.
pub fn is_elementwise_op(
    name: &str,
    operand: Option<&ValueType>,
    result: Option<&ValueType>,
) -> bool {
    if name == "stablehlo.bitcast_convert" {
        return operand.is_some() && operand == result;
    }
    is_elementwise_name(name)
}

const PURE_STABLEHLO: &[&str] = &[
    "constant",
    "iota",
    "create_token",
    "replica_id",
    "partition_id",
    "after_all",
    "get_tuple_element",
    "tuple",
    "slice",
    "dynamic_slice",
    "dynamic_update_slice",
    "batch_norm_grad",
    "batch_norm_inference",
    "batch_norm_training",
    "bitcast_convert",
    "broadcast",
    "broadcast_in_dim",
    "cholesky",
    "concatenate",
    "cross-replica-sum",
    "convolution",
    "dot",
    "dot_general",
    "einsum",
    "unary_einsum",
    "fft",
    "gather",
    "get_dimension_size",
    "reshape",
    "set_dimension_size",
    "reverse",
    "pad",
    "transpose",
    "triangular_solve",
    "torch_index_select",
    "optimization_barrier",
    "real_dynamic_slice",
    "dynamic_pad",
    "dynamic_iota",
    "dynamic_broadcast_in_dim",
    "dynamic_conv",
    "rng_bit_generator",
    "dynamic_reshape",
    "dynamic_gather",
    "return",
];

const RECURSIVE_STABLEHLO: &[&str] = &[
    "if",
    "case",
    "while",
    "reduce",
    "map",
    "scatter",
    "select_and_scatter",
    "sort",
    "reduce_window",
];

/// Whether the op has no memory effects by itself; `Some(true)` when its effects are
/// those of its nested ops (recursive), `None` when it has effects.
pub fn purity(name: &str) -> Option<bool> {
    if let Some(n) = name.strip_prefix("stablehlo.") {
        if UNARY_BINARY.contains(&n) || PURE_STABLEHLO.contains(&n) {
            return Some(false);
        }
        if RECURSIVE_STABLEHLO.contains(&n) {
            return Some(true);
        }
        return None;
    }
    match name {
        "sdy.reshard"
        | "sdy.propagation_barrier"
        | "sdy.constant"
        | "sdy.return"
        | "func.return" => Some(false),
        "sdy.manual_computation" | "sdy.named_computation" => Some(true),
        _ => None,
    }
}

/// [`purity`] of this op: a `stablehlo.custom_call` is effect-free unless it says
/// `has_side_effect = true` (its effects depend on the attribute, not the name).
pub fn op_purity(op: &crate::ir::Op) -> Option<bool> {
    use crate::ir::Attr;
    if op.name != "stablehlo.custom_call" {
        return purity(&op.name);
    }
    match op.prop("has_side_effect").or_else(|| op.attr("has_side_effect")) {
        Some(Attr::Bool(true)) | Some(Attr::Unit) => None,
        Some(Attr::Int { value, .. }) if *value != 0 => None,
        _ => Some(false),
    }
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
