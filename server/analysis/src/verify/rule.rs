//! `sdy.sharding_rule` (R0–R13): mappings match the op's operands and results, every
//! factor is used, and the special factor sets are well formed.

use super::attrs::sdy;
use super::messages as msg;
use super::values::type_string;
use super::{Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::OpId;
use sdy_syntax::sdy::{FactorListAst, RuleAst, SdyAttr, TensorMappingAst};
use sdy_syntax::tree::{NamedAttr, Type, TypeKind};
use sdy_syntax::Span;

/// Index of the factor `z`; later factors are `z_1`, `z_2`, ...
const START_AT_Z: i64 = 17;

/// A factor's symbol: `i`..`z`, then `z_1`, `z_2`, ...
pub fn factor_symbol(index: i64) -> String {
    if index <= START_AT_Z {
        char::from(b'i' + index as u8).to_string()
    } else {
        format!("z_{}", index - START_AT_Z)
    }
}

pub fn verify(cx: &Ctx, id: OpId, attr: &NamedAttr) -> Result<(), Violation> {
    let op = cx.model.op(id);
    let focus = attr.span.shift(op.start);
    let Some(SdyAttr::Rule(rule)) = sdy(attr.value.as_ref()) else {
        return Err(Violation::of(C::ShardingRule, msg::EXPECTED_SHARDING_RULE.to_string(), focus));
    };
    // In MLIR's operand order, which the rule's mappings follow (the custom form of
    // `stablehlo.reduce` writes its operands interleaved).
    let operand_types: Vec<Option<&Type>> = crate::rules::mlir_operand_order(&op.node)
        .into_iter()
        .map(|i| cx.model.operand_type(id, i))
        .collect();
    let result_types: Vec<Option<&Type>> =
        (0..op.results.len()).map(|i| cx.model.result_type(id, i)).collect();
    let base = op.start;
    let mut in_operands = vec![false; rule.factor_sizes.len()];
    verify_mappings(rule, &operand_types, &rule.operands, &mut in_operands, "operand", base)?;
    let mut in_results = vec![false; rule.factor_sizes.len()];
    verify_mappings(rule, &result_types, &rule.results, &mut in_results, "result", base)?;
    if let Some(i) = (0..rule.factor_sizes.len()).find(|&i| !in_operands[i] && !in_results[i]) {
        let (size, span) = rule.factor_sizes[i];
        return Err(Violation::of(
            C::ShardingRule,
            msg::unused_factor(&factor_symbol(i as i64), size),
            span.shift(base),
        ));
    }
    let count = rule.factor_sizes.len();
    let special = [&rule.reduction, &rule.need_replication, &rule.permutation];
    for list in special.iter().copied().flatten() {
        sorted_unique_in_bound(list, count, base)?;
    }
    let all: Vec<i64> =
        special.iter().copied().flatten().flat_map(|l| l.factors.iter().map(|f| f.0)).collect();
    let mut unique = all.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != all.len() {
        return Err(Violation::of(
            C::ShardingRule,
            msg::SPECIAL_FACTOR_IN_TWO_SETS.to_string(),
            focus,
        ));
    }
    if let Some(list) = &rule.blocked_propagation {
        sorted_unique_in_bound(list, count, base)?;
    }
    for &(f, span) in rule.reduction.iter().flat_map(|l| &l.factors) {
        if usize::try_from(f).is_ok_and(|f| in_results.get(f).copied().unwrap_or(false)) {
            return Err(Violation::of(
                C::ShardingRule,
                msg::REDUCTION_FACTOR_IN_RESULTS.to_string(),
                span.shift(base),
            ));
        }
    }
    Ok(())
}

/// R1–R8 for the operands or the results (`kind`).
fn verify_mappings(
    rule: &RuleAst,
    types: &[Option<&Type>],
    mappings: &[TensorMappingAst],
    seen: &mut [bool],
    kind: &str,
    base: u32,
) -> Result<(), Violation> {
    let whole =
        mappings.iter().map(|m| m.span).reduce(Span::cover).unwrap_or(rule.span).shift(base);
    if types.len() != mappings.len() {
        return Err(Violation::of(
            C::ShardingRule,
            msg::mappings_count(kind, types.len(), mappings.len()),
            whole,
        ));
    }
    if mappings.is_empty() {
        return Err(Violation::of(C::ShardingRule, msg::no_mappings(kind), whole));
    }
    for (i, (ty, mapping)) in types.iter().zip(mappings).enumerate() {
        let prefix = msg::value_prefix(kind, i, types.len());
        let fail = |m: String, span: Span| {
            Err(Violation::of(C::ShardingRule, m, span.shift(base)).prefixed(&prefix))
        };
        if let Some(ty) = ty {
            match &*ty.kind {
                TypeKind::Tensor { shape: Some(dims), .. }
                    if super::values::has_static_shape(ty) =>
                {
                    if mapping.dims.len() != dims.len() {
                        return fail(
                            msg::mapping_rank(mapping.dims.len(), dims.len()),
                            mapping.span,
                        );
                    }
                }
                TypeKind::Alias(_) => {}
                _ => return fail(msg::rule_needs_static_tensor(&type_string(ty)), mapping.span),
            }
        }
        let mut value_seen = vec![false; seen.len()];
        for dim in &mapping.dims {
            if dim.factors.is_empty() {
                return fail(msg::EMPTY_DIM_MAPPING.to_string(), dim.span);
            }
            for &f in &dim.factors {
                let Some(index) = usize::try_from(f).ok().filter(|&f| f < seen.len()) else {
                    return fail(msg::factor_index_out_of_range(f, seen.len()), dim.span);
                };
                if value_seen[index] {
                    return fail(msg::REUSED_FACTOR.to_string(), dim.span);
                }
                if rule.factor_sizes[index].0 == 1 && dim.factors.len() > 1 {
                    return fail(msg::SIZE_ONE_FACTOR.to_string(), dim.span);
                }
                value_seen[index] = true;
                seen[index] = true;
            }
        }
    }
    Ok(())
}

/// R10/R12: a special factor list is sorted, unique and in range.
fn sorted_unique_in_bound(list: &FactorListAst, count: usize, base: u32) -> Result<(), Violation> {
    let span = list.span.shift(base);
    let factors: Vec<i64> = list.factors.iter().map(|f| f.0).collect();
    let (Some(&first), Some(&last)) = (factors.first(), factors.last()) else { return Ok(()) };
    if factors.windows(2).any(|w| w[0] > w[1]) {
        return Err(Violation::of(
            C::ShardingRule,
            msg::SPECIAL_FACTORS_NOT_SORTED.to_string(),
            span,
        ));
    }
    if factors.windows(2).any(|w| w[0] == w[1]) {
        return Err(Violation::of(
            C::ShardingRule,
            msg::SPECIAL_FACTORS_NOT_UNIQUE.to_string(),
            span,
        ));
    }
    if first < 0 {
        return Err(Violation::of(C::ShardingRule, msg::SPECIAL_FACTOR_NEGATIVE.to_string(), span));
    }
    if last >= count as i64 {
        return Err(Violation::of(
            C::ShardingRule,
            msg::special_factor_too_large(count, last),
            span,
        ));
    }
    Ok(())
}
