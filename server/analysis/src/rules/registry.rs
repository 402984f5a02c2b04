//! THE op sharding rule registry: one match over op names, one entry per op (Shardy's
//! `createOpShardingRule`). Each entry computes the rule from the op's operand/result
//! types, its inherent attributes and a few facts about its neighbours.

use super::builder::{Builder, NULL};
use super::rule::{FactorType, OpShardingRule};
use super::stablehlo_attrs::{GatherScatterDims, InherentAttrs};
use super::{OpDesc, RuleOptions};

use FactorType::{NeedReplication as NR, PassThrough as PT, Permutation as PM, Reduction as R};

/// What the registry says about an op (an explicit `sdy.sharding_rule` is looked at
/// before, by [`super::rule_for`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Registered {
    Rule(OpShardingRule),
    /// No rule, silently: explicitly unregistered ops, data-flow ops, terminators,
    /// shapes a rule cannot describe (e.g. a reshape with no elements).
    NoRule,
    /// A `custom_call` whose target the registry does not know (Shardy warns, once).
    UnknownCustomCall(String),
    /// Any other op the registry does not know (Shardy warns, once).
    UnknownOp(String),
}

/// Element-wise ops: one pass-through factor per dimension of the first result.
const POINTWISE: &[&str] = &[
    "sdy.sharding_constraint",
    "stablehlo.abs",
    "stablehlo.add",
    "stablehlo.all_reduce",
    "stablehlo.and",
    "stablehlo.atan2",
    "stablehlo.cbrt",
    "stablehlo.ceil",
    "stablehlo.count_leading_zeros",
    "stablehlo.collective_broadcast",
    "stablehlo.collective_permute",
    "stablehlo.compare",
    "stablehlo.complex",
    "stablehlo.convert",
    "stablehlo.cosine",
    "stablehlo.cross-replica-sum",
    "stablehlo.divide",
    "stablehlo.exponential",
    "stablehlo.exponential_minus_one",
    "stablehlo.floor",
    "stablehlo.imag",
    "stablehlo.is_finite",
    "stablehlo.log_plus_one",
    "stablehlo.log",
    "stablehlo.logistic",
    "stablehlo.maximum",
    "stablehlo.minimum",
    "stablehlo.multiply",
    "stablehlo.negate",
    "stablehlo.not",
    "stablehlo.or",
    "stablehlo.popcnt",
    "stablehlo.power",
    "stablehlo.real",
    "stablehlo.reduce_precision",
    "stablehlo.remainder",
    "stablehlo.round_nearest_even",
    "stablehlo.round_nearest_afz",
    "stablehlo.rsqrt",
    "stablehlo.shift_left",
    "stablehlo.shift_right_arithmetic",
    "stablehlo.shift_right_logical",
    "stablehlo.sign",
    "stablehlo.sine",
    "stablehlo.sqrt",
    "stablehlo.subtract",
    "stablehlo.tan",
    "stablehlo.tanh",
    "stablehlo.xor",
];

/// Ops the registry gives no rule on purpose: structure, constants, tokens, and the
/// data-flow ops (propagation goes through their data-flow edges instead).
const NO_RULE: &[&str] = &[
    "builtin.module",
    "func.func",
    "func.call",
    "sdy.constant",
    "sdy.data_flow_edge",
    "sdy.func_data_flow_edge",
    "sdy.manual_computation",
    "sdy.mesh",
    "sdy.named_computation",
    "sdy.propagation_barrier",
    "sdy.sharding_group",
    "sdy.reshard",
    "stablehlo.after_all",
    "stablehlo.case",
    "stablehlo.constant",
    "stablehlo.create_token",
    "stablehlo.get_tuple_element",
    "stablehlo.infeed",
    "stablehlo.iota",
    "stablehlo.outfeed",
    "stablehlo.optimization_barrier",
    "stablehlo.partition_id",
    "stablehlo.recv",
    "stablehlo.send",
    "stablehlo.while",
];

/// Custom calls without a rule and without a warning.
const CUSTOM_CALL_NO_RULE: &[&str] = &[
    "sdy_testonly",
    "tpu_custom_call",
    "xla_python_cpu_callback",
    "xla_python_gpu_callback",
    "xla_ffi_python_cpu_callback",
    "xla_ffi_python_gpu_callback",
    "xla.debug.Log",
];

/// Custom calls with the pointwise rule.
const CUSTOM_CALL_POINTWISE: &[&str] = &[
    "annotate_device_placement",
    "Cholesky",
    "CompactWyHelper",
    "InspectSharding",
    "InvertDiagBlocksLowerTriangular",
    "InvertDiagBlocksUpperTriangular",
    "LayoutConstraint",
    "mhlo.erf",
    "MoveToDevice",
    "MoveToHost",
    "X64SplitHigh",
    "X64SplitLow",
    "xla.megascale.provide_metadata",
    // SPMD-internal collective permutes: every result sharded like the input.
    "_SPMDInternalOp_MultiPad",
    "_SPMDInternalOp_RotateRight",
    "_SPMDInternalOp_MultiRotate",
    "_SPMDInternalOp_MultiSlice",
    "_SPMDInternalOp_Wrap",
];

/// Ops with the `ConstantLike` trait (or `sdy.constant`), for dynamic_update_slice.
const CONSTANT_LIKE: &[&str] =
    &["stablehlo.constant", "sdy.constant", "arith.constant", "chlo.constant"];

/// Terminators get no rule (and no warning).
pub fn is_terminator(name: &str) -> bool {
    name.ends_with(".return")
        || name.ends_with(".yield")
        || matches!(name, "cf.br" | "cf.cond_br" | "cf.switch")
}

/// The registry: the rule Shardy creates for the op described by `d`.
/// Whether the rule of an op named `name` may depend on more than its name and types
/// (attributes, neighbouring ops): not for point-wise ops and ops without a rule.
pub fn reads_context(name: &str) -> bool {
    !(POINTWISE.contains(&name) || NO_RULE.contains(&name))
}

/// Whether the rule of an op named `name` may depend on its neighbouring ops
/// ([`super::OpFacts`]).
pub fn reads_facts(name: &str) -> bool {
    matches!(
        name,
        "stablehlo.concatenate"
            | "stablehlo.custom_call"
            | "stablehlo.dynamic_update_slice"
            | "stablehlo.scatter"
    )
}

pub fn create(d: &OpDesc, opts: &RuleOptions) -> Registered {
    let name = d.name.as_str();
    if POINTWISE.contains(&name) {
        return rule(pointwise(d));
    }
    if NO_RULE.contains(&name) {
        return Registered::NoRule;
    }
    let a = &d.attrs;
    let conservative = opts.conservative;
    let r = match name {
        // NOTE: keep the order of the cases alphabetical, like Shardy's.
        "stablehlo.all_gather" => all_gather_like(d, a.int(&["all_gather_dim"])),
        "stablehlo.all_to_all" => all_to_all(d),
        "stablehlo.bitcast_convert" => bitcast_convert(d),
        "stablehlo.batch_norm_inference" => batch_norm_inference(d),
        "stablehlo.broadcast_in_dim" => broadcast_in_dim(d),
        "stablehlo.cholesky" => cholesky(d),
        "stablehlo.clamp" => {
            // min and max may be scalars: pointwise over the operand (operand #1).
            let shape = d.operand_shape(1);
            shape.map(|s| d.builder().pointwise(s).build())
        }
        "stablehlo.concatenate" => concatenate(d, conservative),
        "stablehlo.convolution" => convolution(d, conservative),
        "stablehlo.custom_call" => return custom_call(d),
        "stablehlo.dot_general" => dot_general(d),
        "stablehlo.dot" => dot(d),
        "stablehlo.dynamic_slice" => {
            let (i, o) = (d.operand_shape(0), d.result_shape(0));
            i.zip(o).map(|(i, o)| d.builder().pointwise_with_mismatch(i, o, NR, true).build())
        }
        "stablehlo.dynamic_update_slice" => dynamic_update_slice(d),
        "stablehlo.fft" => fft(d),
        "stablehlo.gather" => gather(d),
        "stablehlo.pad" => {
            // Non-conservative: propagate through padded dimensions (needs communication).
            let (i, o) = (d.operand_shape(0), d.result_shape(0));
            i.zip(o)
                .map(|(i, o)| d.builder().pointwise_with_mismatch(i, o, PM, conservative).build())
        }
        "stablehlo.reduce" => reduce(d),
        "stablehlo.reduce_scatter" => all_gather_like(d, a.int(&["scatter_dimension"])),
        "stablehlo.reduce_window" => reduce_window(d, conservative),
        "stablehlo.reshape" => reshape(d),
        "stablehlo.reverse" => reverse(d),
        "stablehlo.rng_bit_generator" => rng_bit_generator(d),
        "stablehlo.scatter" => scatter(d),
        "stablehlo.select_and_scatter" => select_and_scatter(d, conservative),
        "stablehlo.select" => d.result_shape(0).map(|s| d.builder().pointwise(s).build()),
        "stablehlo.slice" => {
            // Static starts: a sliced dimension can stay sharded (data gets shifted).
            let (i, o) = (d.operand_shape(0), d.result_shape(0));
            i.zip(o)
                .map(|(i, o)| d.builder().pointwise_with_mismatch(i, o, PM, conservative).build())
        }
        "stablehlo.sort" => sort(d),
        "stablehlo.transpose" => transpose(d),
        "stablehlo.triangular_solve" => triangular_solve(d),
        _ if is_terminator(name) => return Registered::NoRule,
        _ => return Registered::UnknownOp(name.to_string()),
    };
    rule(r)
}

fn rule(r: Option<OpShardingRule>) -> Registered {
    r.map_or(Registered::NoRule, Registered::Rule)
}

/// Shardy's `buildPointwise`: factors = the first result's dimensions; no rule when
/// the first result is not a ranked tensor (a token).
fn pointwise(d: &OpDesc) -> Option<OpShardingRule> {
    let shape = d.result_shape(0)?;
    Some(d.builder().pointwise(shape).build())
}

fn idx(dim: i64, rank: usize) -> Option<usize> {
    usize::try_from(dim).ok().filter(|&d| d < rank)
}

/// all_gather (gather dim) and reduce_scatter (scatter dim): other dims pointwise, the
/// collective dim a need-replication factor for the operands and another for the
/// results.
fn all_gather_like(d: &OpDesc, dim: Option<i64>) -> Option<OpShardingRule> {
    let in_shape = d.operand_shape(0)?;
    let out_shape = d.result_shape(0)?;
    let dim = idx(dim?, in_shape.len().min(out_shape.len()))?;
    Some(
        d.builder()
            .pointwise_if(in_shape, |x| x != dim, |_| PT)
            .factor_all_operands(dim, in_shape[dim], NR)
            .factor_all_results(dim, out_shape[dim], NR)
            .build(),
    )
}

fn all_to_all(d: &OpDesc) -> Option<OpShardingRule> {
    let in_shape = d.operand_shape(0)?;
    let out_shape = d.result_shape(0)?;
    let rank = in_shape.len().min(out_shape.len());
    let split = idx(d.attrs.int(&["split_dimension"])?, rank)?;
    let concat = idx(d.attrs.int(&["concat_dimension"])?, rank)?;
    let mut b = d.builder();
    b.pointwise_if(in_shape, |x| x != split && x != concat, |_| PT)
        .factor_all_operands(split, in_shape[split], NR)
        .factor_all_results(split, out_shape[split], NR);
    if split != concat {
        b.factor_all_operands(concat, in_shape[concat], NR).factor_all_results(
            concat,
            out_shape[concat],
            NR,
        );
    }
    Some(b.build())
}

/// Pointwise over the lower-rank side; the extra innermost dimension of the narrower
/// element type needs replication.
fn bitcast_convert(d: &OpDesc) -> Option<OpShardingRule> {
    let i = d.operand_shape(0)?;
    let o = d.result_shape(0)?;
    let mut b = d.builder();
    b.pointwise(if i.len() < o.len() { i } else { o });
    if i.len() < o.len() {
        b.factor(&[NULL], &[o.len() as i64 - 1], *o.last()?, NR, false);
    } else if i.len() > o.len() {
        b.factor(&[i.len() as i64 - 1], &[NULL], *i.last()?, NR, false);
    }
    Some(b.build())
}

/// Operand dimensions; the feature dimension also maps dim 0 of scale, offset, mean
/// and variance.
fn batch_norm_inference(d: &OpDesc) -> Option<OpShardingRule> {
    let shape = d.operand_shape(0)?;
    let feature = d.attrs.int(&["feature_index"])?;
    let mut b = d.builder();
    for (dim, &size) in shape.iter().enumerate() {
        let mut ops = vec![if dim as i64 == feature { 0 } else { NULL }; d.operands.len()];
        ops[0] = dim as i64;
        b.pass(&ops, &[dim as i64], size);
    }
    Some(b.build())
}

fn broadcast_in_dim(d: &OpDesc) -> Option<OpShardingRule> {
    let in_shape = d.operand_shape(0)?;
    let out_shape = d.result_shape(0)?;
    let dims = d.attrs.broadcast_dims()?;
    let mut out_to_in = vec![NULL; out_shape.len()];
    for (in_dim, &out_dim) in dims.iter().enumerate() {
        if let Some(slot) = usize::try_from(out_dim).ok().and_then(|o| out_to_in.get_mut(o)) {
            *slot = in_dim as i64;
        }
    }
    let mut b = d.builder();
    for (out_dim, &out_size) in out_shape.iter().enumerate() {
        let mut in_dim = out_to_in[out_dim];
        if in_dim != NULL {
            let in_size = *in_shape.get(in_dim as usize)?;
            if in_size == 1 && out_size != 1 {
                // Expanded in place: the input dim gets a size-1 factor of its own.
                b.pass(&[in_dim], &[NULL], 1);
                in_dim = NULL;
            }
        }
        b.pass(&[in_dim], &[out_dim as i64], out_size);
    }
    Some(b.build())
}

/// Batch dims pass-through, the two matrix dims need replication.
fn cholesky(d: &OpDesc) -> Option<OpShardingRule> {
    let shape = d.operand_shape(0)?;
    let batch = shape.len() as i64 - 2;
    Some(
        d.builder()
            .pointwise_with(shape, |x| if (x as i64) < batch { PT } else { NR }, |_| false)
            .build(),
    )
}

fn concatenate(d: &OpDesc, conservative: bool) -> Option<OpShardingRule> {
    let shape = d.result_shape(0)?;
    let dim = d.attrs.dimension()?;
    let facts = &d.facts.operands;
    let is_slice =
        |i: usize| facts.get(i).is_some_and(|f| f.def_op.as_deref() == Some("stablehlo.slice"));
    // The value an operand was sliced from (the operand itself when not a slice).
    let before_slice = |i: usize| -> Option<u32> {
        let f = facts.get(i)?;
        if f.def_op.as_deref() == Some("stablehlo.slice") {
            f.def_operand0
        } else {
            f.value
        }
    };
    let n = d.operands.len();
    let concat_type = if (0..n).all(is_slice) {
        // concat(slice(l), slice(r))
        PM
    } else {
        // concat(slice(x), x, slice(x))
        let same = before_slice(0);
        if same.is_some() && (0..n).all(|i| before_slice(i) == same) && (0..n).any(is_slice) {
            PM
        } else {
            NR
        }
    };
    Some(
        d.builder()
            .pointwise_if(
                shape,
                // Conservative: no factor for the concatenated dimension.
                |x| !conservative || x as i64 != dim,
                |x| if x as i64 != dim { PT } else { concat_type },
            )
            .build(),
    )
}

fn convolution(d: &OpDesc, conservative: bool) -> Option<OpShardingRule> {
    let dn = d.attrs.conv_dims()?;
    let lhs = d.operand_shape(0)?;
    let rhs = d.operand_shape(1)?;
    let out = d.result_shape(0)?;
    let batch_groups = d.attrs.int(&["batch_group_count"]).unwrap_or(1);
    let feature_groups = d.attrs.int(&["feature_group_count"]).unwrap_or(1);
    let size = |s: &[i64], dim: i64| idx(dim, s.len()).map(|i| s[i]);
    let mut b = d.builder();
    if batch_groups > 1 {
        b.pass(&[dn.input_batch, dn.kernel_output_feature], &[dn.output_feature], batch_groups);
    }
    // Per-group batch size.
    b.pass(&[dn.input_batch, NULL], &[dn.output_batch], size(out, dn.output_batch)?);
    if !conservative {
        // An input spatial dim is sharded along the number of windows (the output dim)
        // or the window size (the kernel dim): one factor each, the larger one major.
        let n = dn.input_spatial.len().min(dn.kernel_spatial.len()).min(dn.output_spatial.len());
        for k in 0..n {
            let (lhs_dim, rhs_dim, out_dim) =
                (dn.input_spatial[k], dn.kernel_spatial[k], dn.output_spatial[k]);
            let num_windows = size(out, out_dim)?;
            let window_size = size(rhs, rhs_dim)?;
            let mut remaining = size(lhs, lhs_dim)?;
            let mut spatial = |b: &mut Builder, factor: i64, contracting: bool| {
                let factor = remaining.min(factor);
                if factor > 1 {
                    if contracting {
                        b.factor(&[lhs_dim, rhs_dim], &[NULL], factor, R, false);
                    } else {
                        b.factor(&[lhs_dim, NULL], &[out_dim], factor, PM, false);
                    }
                    remaining /= factor;
                }
            };
            if num_windows >= window_size {
                spatial(&mut b, num_windows, false);
                spatial(&mut b, window_size, true);
            } else {
                spatial(&mut b, window_size, true);
                spatial(&mut b, num_windows, false);
            }
        }
    }
    if feature_groups > 1 {
        b.pass(&[dn.input_feature, dn.kernel_output_feature], &[dn.output_feature], feature_groups);
    }
    // Per-group input features (contracted).
    b.factor(
        &[dn.input_feature, dn.kernel_input_feature],
        &[NULL],
        size(rhs, dn.kernel_input_feature)?,
        R,
        false,
    );
    // Output features.
    let groups = batch_groups.checked_mul(feature_groups).filter(|&g| g != 0)?;
    let out_features = size(out, dn.output_feature)?.checked_div(groups)?;
    if out_features > 1 {
        b.pass(&[NULL, dn.kernel_output_feature], &[dn.output_feature], out_features);
    }
    Some(b.build())
}

fn custom_call(d: &OpDesc) -> Registered {
    let Some(target) = d.attrs.call_target() else {
        return Registered::UnknownCustomCall(String::new());
    };
    if CUSTOM_CALL_NO_RULE.contains(&target) {
        return Registered::NoRule;
    }
    if CUSTOM_CALL_POINTWISE.contains(&target) {
        return rule(pointwise(d));
    }
    let r = match target {
        "Eigh" => eigh(d),
        "Qr" | "QrDecompositionBlock" => qr(d),
        "ProductOfElementaryHouseholderReflectors" => householder_product(d),
        "mhlo.topk" => {
            // Operand -> (values, indices): the top-k dim is replicated and blocked.
            let (i, o) = (d.operand_shape(0), d.result_shape(0));
            i.zip(o).map(|(i, o)| d.builder().pointwise_with_mismatch(i, o, NR, true).build())
        }
        "ApproxTopK" | "PartialReduce" => approx_top_k(d),
        "X64Combine" => {
            if d.facts.result_users.iter().any(|u| u == "stablehlo.rng_bit_generator") {
                // Feeds an RNG state (replicated ui64): replicate and do not propagate.
                d.result_shape(0).and_then(|s| {
                    let size = *s.first()?;
                    Some(d.builder().factor_all(0, size, NR, true).build())
                })
            } else {
                pointwise(d)
            }
        }
        _ => return Registered::UnknownCustomCall(target.to_string()),
    };
    rule(r)
}

/// `Eigh`: batch dims, then the two matrix dims; the eigenvalues (2nd result) have the
/// last matrix dim.
fn eigh(d: &OpDesc) -> Option<OpShardingRule> {
    let s = d.operand_shape(0)?;
    let n = s.len().checked_sub(2)?;
    let (d1, d2) = (n as i64, n as i64 + 1);
    Some(
        d.builder()
            .pointwise(&s[..n])
            .pass(&[d1], &[d1, NULL], s[n])
            .pass(&[d2], &[d2, d1], s[n + 1])
            .build(),
    )
}

/// `Qr`: batch dims, the two matrix dims (input and 1st result) and the 2nd result's
/// dim, all need replication.
fn qr(d: &OpDesc) -> Option<OpShardingRule> {
    let s = d.operand_shape(0)?;
    let rhs = d.result_shape(1)?;
    let n = s.len().checked_sub(2)?;
    let (d1, d2) = (n as i64, n as i64 + 1);
    Some(
        d.builder()
            .pointwise(&s[..n])
            .factor(&[d1], &[d1, NULL], s[n], NR, false)
            .factor(&[d2], &[d2, NULL], s[n + 1], NR, false)
            .factor(&[NULL], &[NULL, d1], *rhs.get(n)?, NR, false)
            .build(),
    )
}

fn householder_product(d: &OpDesc) -> Option<OpShardingRule> {
    let lhs = d.operand_shape(0)?;
    let taus = d.operand_shape(1)?;
    let n = lhs.len().checked_sub(2)?;
    let (d1, d2) = (n as i64, n as i64 + 1);
    Some(
        d.builder()
            .pointwise(&lhs[..n])
            .factor(&[d1, NULL], &[d1], lhs[n], NR, false)
            .factor(&[d2, NULL], &[d2], lhs[n + 1], NR, false)
            .factor(&[NULL, d1], &[NULL], *taus.get(n)?, NR, false)
            .build(),
    )
}

/// `ApproxTopK` / `PartialReduce`: (operand, iota, init value, init arg) -> (values,
/// indices); the reduced dim is an operand factor and a blocked result factor.
fn approx_top_k(d: &OpDesc) -> Option<OpShardingRule> {
    let i = d.operand_shape(0)?;
    let o = d.result_shape(0)?;
    let mut b = d.builder();
    for (dim, (&a, &c)) in i.iter().zip(o).enumerate() {
        if a == c {
            b.factor_all(dim, a, PT, false);
        } else {
            let r = dim as i64;
            b.pass(&[r, r, NULL, NULL], &[NULL, NULL], a);
            b.factor(&[NULL, NULL, NULL, NULL], &[r, r], c, NR, true);
        }
    }
    Some(b.build())
}

fn dot_general(d: &OpDesc) -> Option<OpShardingRule> {
    let dn = d.attrs.dot_dims()?;
    let lhs = d.operand_shape(0)?;
    let rhs = d.operand_shape(1)?;
    let size = |s: &[i64], dim: i64| idx(dim, s.len()).map(|i| s[i]);
    let mut b = d.builder();
    let mut out = 0i64;
    for (&l, &r) in dn.lhs_batching.iter().zip(&dn.rhs_batching) {
        b.pass(&[l, r], &[out], size(lhs, l)?);
        out += 1;
    }
    for (i, &s) in lhs.iter().enumerate() {
        let i = i as i64;
        if !dn.lhs_contracting.contains(&i) && !dn.lhs_batching.contains(&i) {
            b.pass(&[i, NULL], &[out], s);
            out += 1;
        }
    }
    for (i, &s) in rhs.iter().enumerate() {
        let i = i as i64;
        if !dn.rhs_contracting.contains(&i) && !dn.rhs_batching.contains(&i) {
            b.pass(&[NULL, i], &[out], s);
            out += 1;
        }
    }
    for (&l, &r) in dn.lhs_contracting.iter().zip(&dn.rhs_contracting) {
        b.factor(&[l, r], &[NULL], size(lhs, l)?, R, false);
    }
    Some(b.build())
}

fn dot(d: &OpDesc) -> Option<OpShardingRule> {
    let lhs = d.operand_shape(0)?;
    let rhs = d.operand_shape(1)?;
    let lhs_matrix = lhs.len() == 2;
    let rhs_matrix = rhs.len() == 2;
    let mut b = d.builder();
    if lhs_matrix {
        b.pass(&[0, NULL], &[0], lhs[0]);
    }
    if rhs_matrix {
        b.pass(&[NULL, 1], &[if lhs_matrix { 1 } else { 0 }], rhs[1]);
    }
    b.factor(&[if lhs_matrix { 1 } else { 0 }, 0], &[NULL], *rhs.first()?, R, false);
    Some(b.build())
}

/// Equal dims shared; each sliced dim: the operand/result keep a pass-through factor
/// and the update gets its own (need-replication unless every start index is a
/// constant).
fn dynamic_update_slice(d: &OpDesc) -> Option<OpShardingRule> {
    let operand = d.operand_shape(0)?;
    let update = d.operand_shape(1)?;
    let all_constant = (2..d.operands.len()).all(|i| {
        d.facts
            .operands
            .get(i)
            .and_then(|f| f.def_op.as_deref())
            .is_some_and(|n| CONSTANT_LIKE.contains(&n))
    });
    let mut b = d.builder();
    let mut dims = vec![NULL; d.operands.len()];
    for (dim, (&o, &u)) in operand.iter().zip(update).enumerate() {
        if o == u {
            b.factor_all(dim, o, PT, false);
        } else {
            dims[0] = dim as i64;
            dims[1] = NULL;
            b.pass(&dims, &[dim as i64], o);
            dims[0] = NULL;
            dims[1] = dim as i64;
            b.factor(&dims, &[NULL], u, if all_constant { PT } else { NR }, false);
        }
    }
    Some(b.build())
}

/// Leading batch dims pass-through, fft dims need replication; the last dim is also
/// blocked when truncated (RFFT / IRFFT).
fn fft(d: &OpDesc) -> Option<OpShardingRule> {
    let i = d.operand_shape(0)?;
    let o = d.result_shape(0)?;
    let len = d.attrs.fft_length()?.len();
    let rank = i.len();
    let mut b = d.builder();
    for (dim, &size) in i.iter().enumerate() {
        if dim < rank.wrapping_sub(len) {
            b.factor_all(dim, size, PT, false);
        } else if dim < rank - 1 {
            b.factor_all(dim, size, NR, false);
        } else {
            b.factor_all(dim, size, NR, i.last() != o.last());
        }
    }
    Some(b.build())
}

/// Shardy's `addGatherScatterFactors`, shared by gather and scatter. `add(input dim,
/// indices dim, slices dim, size, type, blocked)`.
#[allow(clippy::too_many_arguments)]
fn gather_scatter_factors(
    is_scatter: bool,
    scatter_reduction: bool,
    input: &[i64],
    slices: &[i64],
    indices: &[i64],
    dn: &GatherScatterDims,
    add: &mut dyn FnMut(i64, i64, i64, i64, FactorType, bool),
) -> Option<()> {
    let mut input_dim = 0i64;
    let mut batch_pos = 0i64;
    for (slices_dim, &slices_size) in slices.iter().enumerate() {
        let slices_dim = slices_dim as i64;
        if dn.offset_dims.contains(&slices_dim) {
            // The matching input dim: the next one that is neither collapsed nor batching.
            while dn.collapsed_slice_dims.contains(&input_dim)
                || dn.operand_batching_dims.contains(&input_dim)
            {
                input_dim += 1;
            }
            let input_size = *input.get(usize::try_from(input_dim).ok()?)?;
            if input_size == slices_size {
                add(input_dim, NULL, slices_dim, input_size, PT, false);
            } else if is_scatter {
                add(input_dim, NULL, NULL, input_size, NR, false);
                add(NULL, NULL, slices_dim, slices_size, NR, false);
            } else if slices_size == 1 {
                // Sharded on the operand: the result needs an all-reduce.
                add(input_dim, NULL, NULL, input_size, R, false);
                add(NULL, NULL, slices_dim, slices_size, NR, false);
            } else {
                add(input_dim, NULL, slices_dim, input_size, NR, true);
            }
            input_dim += 1;
        } else {
            // A batch dim: find it in the indices.
            let indices_dim =
                if batch_pos < dn.index_vector_dim { batch_pos } else { batch_pos + 1 };
            let explicit = dn.indices_batching_dims.iter().position(|&x| x == indices_dim);
            let input_batch_dim = match explicit {
                Some(p) => *dn.operand_batching_dims.get(p)?,
                None => NULL,
            };
            let ty = if is_scatter && explicit.is_none() {
                if scatter_reduction {
                    R
                } else {
                    NR
                }
            } else {
                PT
            };
            add(input_batch_dim, indices_dim, slices_dim, slices_size, ty, false);
            batch_pos += 1;
        }
    }
    for &collapsed in &dn.collapsed_slice_dims {
        let size = *input.get(usize::try_from(collapsed).ok()?)?;
        let ty = if is_scatter {
            PT
        } else if size == 1 {
            NR
        } else {
            R
        };
        add(collapsed, NULL, NULL, size, ty, false);
    }
    if let Some(&size) = usize::try_from(dn.index_vector_dim).ok().and_then(|i| indices.get(i)) {
        add(NULL, dn.index_vector_dim, NULL, size, NR, false);
    }
    Some(())
}

fn gather(d: &OpDesc) -> Option<OpShardingRule> {
    let dn = d.attrs.gather_dims()?;
    let input = d.operand_shape(0)?;
    let indices = d.operand_shape(1)?;
    let slices = d.result_shape(0)?;
    let mut b = d.builder();
    gather_scatter_factors(
        false,
        false,
        input,
        slices,
        indices,
        &dn,
        &mut |i, x, s, size, t, bl| {
            b.factor(&[i, x], &[s], size, t, bl);
        },
    )?;
    Some(b.build())
}

fn scatter(d: &OpDesc) -> Option<OpShardingRule> {
    let dn = d.attrs.scatter_dims()?;
    let n = d.operands.len().checked_sub(1)? / 2;
    if n == 0 {
        return None;
    }
    let input = d.operand_shape(0)?;
    let indices = d.operand_shape(n)?;
    let updates = d.operand_shape(n + 1)?;
    let reduction = d.facts.scatter_reduction;
    let mut b = d.builder();
    gather_scatter_factors(
        true,
        reduction,
        input,
        updates,
        indices,
        &dn,
        &mut |i, x, s, size, t, bl| {
            // (inputs..., indices, updates...) -> (results...)
            let mut ops = vec![i; n];
            ops.push(x);
            ops.resize(2 * n + 1, s);
            b.factor(&ops, &vec![i; n], size, t, bl);
        },
    )?;
    Some(b.build())
}

/// Kept dims pass-through (inputs and results), reduced dims reduction (inputs only);
/// init values have no factor.
fn reduce(d: &OpDesc) -> Option<OpShardingRule> {
    let n = d.operands.len() / 2;
    let shape = d.operand_shape(0)?;
    let dims = d.attrs.dimensions()?;
    let mut b = d.builder();
    let mut out = 0i64;
    let mut ops = vec![NULL; d.operands.len()];
    for (in_dim, &size) in shape.iter().enumerate() {
        ops[..n].fill(in_dim as i64);
        if dims.contains(&(in_dim as i64)) {
            b.factor(&ops, &vec![NULL; n], size, R, false);
        } else {
            b.pass(&ops, &vec![out; n], size);
            out += 1;
        }
    }
    Some(b.build())
}

/// Shardy's `isWindowPassthroughDim`: window 1, stride 1, no padding.
fn window_passthrough(
    padding: Option<&[Vec<i64>]>,
    window: &[i64],
    strides: &[i64],
    dim: usize,
) -> bool {
    if let Some(p) = padding {
        if !p.get(dim).is_some_and(|row| row.iter().take(2).all(|&x| x == 0)) {
            return false;
        }
    }
    (strides.is_empty() || strides.get(dim) == Some(&1))
        && (window.is_empty() || window.get(dim) == Some(&1))
}

fn window_attrs(a: &InherentAttrs, rank: usize) -> (Option<Vec<Vec<i64>>>, Vec<i64>, Vec<i64>) {
    (
        a.int_matrix("padding", rank),
        a.ints(&["window_dimensions"]).unwrap_or_default(),
        a.ints(&["window_strides"]).unwrap_or_default(),
    )
}

/// One factor per result dim (the number of windows), on every input and result;
/// permutation unless the window is 1 wide with stride 1 and no padding.
fn reduce_window(d: &OpDesc, conservative: bool) -> Option<OpShardingRule> {
    let shape = d.result_shape(0)?;
    let (padding, window, strides) = window_attrs(&d.attrs, shape.len());
    Some(
        d.builder()
            .pointwise_with(
                shape,
                |x| {
                    if window_passthrough(padding.as_deref(), &window, &strides, x) {
                        PT
                    } else {
                        PM
                    }
                },
                |t| conservative && t == PM,
            )
            .build(),
    )
}

fn select_and_scatter(d: &OpDesc, conservative: bool) -> Option<OpShardingRule> {
    let shape = d.result_shape(0)?;
    let source = d.operand_shape(1)?;
    let (padding, window, strides) = window_attrs(&d.attrs, shape.len());
    let mut b = d.builder();
    for (dim, &size) in shape.iter().enumerate() {
        if window_passthrough(padding.as_deref(), &window, &strides, dim) {
            b.factor_all(dim, size, PT, false);
            continue;
        }
        let x = dim as i64;
        // Replicated in the source; permuted from the operand to the result.
        b.factor(&[NULL, x, NULL], &[NULL], *source.get(dim)?, NR, conservative);
        b.factor(&[x, NULL, NULL], &[x], size, PM, conservative);
    }
    Some(b.build())
}

/// §9 of the propagation notes: factorize both shapes so each factor is shared where
/// possible.
fn reshape(d: &OpDesc) -> Option<OpShardingRule> {
    let i = d.operand_shape(0)?;
    let o = d.result_shape(0)?;
    if i.iter().chain(o).any(|&s| s < 0) {
        return None;
    }
    // No elements: no rule (nothing to propagate, and the algorithm needs sizes > 0).
    if i.contains(&0) {
        return None;
    }
    let num = |s: &[i64]| s.iter().try_fold(1i64, |acc, &x| acc.checked_mul(x));
    if num(i)? != num(o)? {
        return None;
    }
    let (in_rank, out_rank) = (i.len(), o.len());
    let (mut in_dim, mut out_dim) = (0usize, 0usize);
    let (mut prod_in, mut prod_out) = (1i64, 1i64);
    let (mut fac_in, mut fac_out) = (1i64, 1i64);
    let mut b = d.builder();
    let mut steps = 0usize;
    while in_dim < in_rank || out_dim < out_rank {
        steps += 1;
        if steps > 64 * (in_rank + out_rank + 1) {
            return None;
        }
        if in_dim < in_rank && i[in_dim] == 1 {
            b.pass(&[in_dim as i64], &[NULL], 1);
            in_dim += 1;
            continue;
        }
        if out_dim < out_rank && o[out_dim] == 1 {
            b.pass(&[NULL], &[out_dim as i64], 1);
            out_dim += 1;
            continue;
        }
        if in_dim < in_rank && prod_in == fac_in {
            prod_in = prod_in.checked_mul(i[in_dim])?;
        }
        if out_dim < out_rank && prod_out == fac_out {
            prod_out = prod_out.checked_mul(o[out_dim])?;
        }
        let mut next_in = prod_in / fac_in;
        let mut next_out = prod_out / fac_out;
        let g = gcd(next_in, next_out);
        let diverged = |next: i64, smaller: i64, larger: i64| -> i64 {
            if larger % smaller == 0 && next % (larger / smaller) == 0 {
                // A smaller factor that makes the products converge.
                larger / smaller
            } else if next > g {
                // A smaller factor that keeps the gcd for the next step.
                next / g
            } else {
                next
            }
        };
        let (id, od) = (in_dim as i64, out_dim as i64);
        if fac_in == fac_out {
            if g > 1 {
                b.pass(&[id], &[od], g);
                fac_in = fac_in.checked_mul(g)?;
                fac_out = fac_out.checked_mul(g)?;
            } else {
                if next_in <= 1 || next_out <= 1 {
                    return None;
                }
                b.pass(&[id], &[NULL], next_in);
                fac_in = fac_in.checked_mul(next_in)?;
                b.pass(&[NULL], &[od], next_out);
                fac_out = fac_out.checked_mul(next_out)?;
            }
        } else if fac_in < fac_out {
            next_in = diverged(next_in, fac_in, fac_out);
            if next_in <= 1 {
                return None;
            }
            b.pass(&[id], &[NULL], next_in);
            fac_in = fac_in.checked_mul(next_in)?;
        } else {
            next_out = diverged(next_out, fac_out, fac_in);
            if next_out <= 1 {
                return None;
            }
            b.pass(&[NULL], &[od], next_out);
            fac_out = fac_out.checked_mul(next_out)?;
        }
        if in_dim < in_rank && prod_in == fac_in {
            in_dim += 1;
        }
        if out_dim < out_rank && prod_out == fac_out {
            out_dim += 1;
        }
    }
    Some(b.build())
}

fn gcd(mut a: i64, mut b: i64) -> i64 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn reverse(d: &OpDesc) -> Option<OpShardingRule> {
    let shape = d.result_shape(0)?;
    let dims = d.attrs.dimensions()?;
    Some(
        d.builder()
            .pointwise_with(shape, |x| if dims.contains(&(x as i64)) { PM } else { PT }, |_| false)
            .build(),
    )
}

/// The initial and output states are replicated and blocked; the output dims are
/// result-only pass-through factors.
fn rng_bit_generator(d: &OpDesc) -> Option<OpShardingRule> {
    let state = d.operand_shape(0)?;
    let output = d.result_shape(1)?;
    let mut b = d.builder();
    for (dim, &size) in state.iter().enumerate() {
        let x = dim as i64;
        b.factor(&[x], &[x, NULL], size, NR, true);
    }
    for (dim, &size) in output.iter().enumerate() {
        b.pass(&[NULL], &[NULL, dim as i64], size);
    }
    Some(b.build())
}

/// The sort dim needs replication (blocked when every other dim has size 1).
fn sort(d: &OpDesc) -> Option<OpShardingRule> {
    let shape = d.operand_shape(0)?;
    let sort_dim = d.attrs.dimension().unwrap_or(-1);
    let blocked = shape.iter().enumerate().all(|(x, &s)| x as i64 == sort_dim || s == 1);
    let mut b = d.builder();
    for (dim, &size) in shape.iter().enumerate() {
        if dim as i64 == sort_dim {
            b.factor_all(dim, size, NR, blocked);
        } else {
            b.factor_all(dim, size, PT, false);
        }
    }
    Some(b.build())
}

fn transpose(d: &OpDesc) -> Option<OpShardingRule> {
    let shape = d.operand_shape(0)?;
    let perm = d.attrs.permutation()?;
    let mut b = d.builder();
    for (out_dim, &in_dim) in perm.iter().enumerate() {
        let size = *shape.get(usize::try_from(in_dim).ok()?)?;
        b.pass(&[in_dim], &[out_dim as i64], size);
    }
    Some(b.build())
}

fn triangular_solve(d: &OpDesc) -> Option<OpShardingRule> {
    let a = d.operand_shape(0)?;
    let bs = d.operand_shape(1)?;
    let n = a.len().checked_sub(2)?;
    let (d1, d2) = (n as i64, n as i64 + 1);
    let transposed = matches!(d.attrs.word(&["transpose_a"]), Some("TRANSPOSE" | "ADJOINT"));
    let at = |x: i64| a.get(x as usize).copied();
    let bt = |x: i64| bs.get(x as usize).copied();
    let mut b = d.builder();
    b.pointwise(&a[..n]);
    if d.attrs.bool(&["left_side"]).unwrap_or(false) {
        // op(a) @ result = b
        let (a_non_contracting, a_contracting) = if transposed { (d2, d1) } else { (d1, d2) };
        b.factor(&[a_non_contracting, d1], &[NULL], at(a_non_contracting)?, NR, false)
            .factor(&[NULL, d2], &[d2], bt(d2)?, NR, false)
            .factor(&[a_contracting, NULL], &[d1], at(a_contracting)?, NR, false);
    } else {
        // result @ op(a) = b
        let (a_non_contracting, a_contracting) = if transposed { (d1, d2) } else { (d2, d1) };
        b.factor(&[NULL, d1], &[d1], bt(d1)?, NR, false)
            .factor(&[a_non_contracting, d2], &[NULL], at(a_non_contracting)?, NR, false)
            .factor(&[a_contracting, NULL], &[d2], at(a_contracting)?, NR, false);
    }
    Some(b.build())
}
