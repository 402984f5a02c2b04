//! [`OpShardingRule`]: the semantic form of `#sdy.op_sharding_rule<...>`, with factor
//! types, conversion from the parsed attribute and Shardy's printed form.

use crate::ir::sdy as p;
use sdy_syntax::sdy::{FactorListAst, RuleAst, TensorMappingAst};
use std::fmt;

/// A factor index (`i` = 0, `j` = 1, ..., `z` = 17, `z_1` = 18, ...).
pub type Factor = usize;

/// For each dimension of a tensor, its factors, major to minor.
pub type TensorMapping = Vec<Vec<Factor>>;

/// How sharding a factor affects the computation (Shardy's `FactorType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FactorType {
    /// The default: the factor is sharded the same way in every tensor that has it.
    PassThrough,
    /// Contracted/reduced away (only in operands): sharding it needs an all-reduce.
    Reduction,
    /// Sharding it needs the tensor to be replicated (e.g. a sorted dimension).
    NeedReplication,
    /// Sharding it needs data to be permuted between devices (padded, sliced, reversed
    /// dimensions, convolution windows).
    Permutation,
}

impl FactorType {
    pub fn as_str(self) -> &'static str {
        match self {
            FactorType::PassThrough => "pass-through",
            FactorType::Reduction => "reduction",
            FactorType::NeedReplication => "need_replication",
            FactorType::Permutation => "permutation",
        }
    }
}

/// An op sharding rule: factor sizes, how each operand/result dimension is made of
/// factors, the special factor sets and whether the rule is user-defined (`custom`).
///
/// The factor sets are kept as written/created (the registry creates them in factor
/// order, which is how Shardy prints them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpShardingRule {
    pub factor_sizes: Vec<i64>,
    pub operands: Vec<TensorMapping>,
    pub results: Vec<TensorMapping>,
    pub reduction: Vec<Factor>,
    pub need_replication: Vec<Factor>,
    pub permutation: Vec<Factor>,
    pub blocked_propagation: Vec<Factor>,
    pub is_custom: bool,
}

impl OpShardingRule {
    pub fn num_factors(&self) -> usize {
        self.factor_sizes.len()
    }

    /// The type of factor `f` (pass-through when in no special set).
    pub fn factor_type(&self, f: Factor) -> FactorType {
        if self.reduction.contains(&f) {
            FactorType::Reduction
        } else if self.need_replication.contains(&f) {
            FactorType::NeedReplication
        } else if self.permutation.contains(&f) {
            FactorType::Permutation
        } else {
            FactorType::PassThrough
        }
    }

    /// Whether nothing propagates along factor `f` (`blocked_propagation`).
    pub fn is_blocked(&self, f: Factor) -> bool {
        self.blocked_propagation.contains(&f)
    }

    /// Whether factor `f` is pass-through (no special type).
    pub fn is_pass_through(&self, f: Factor) -> bool {
        self.factor_type(f) == FactorType::PassThrough
    }

    /// Operand mappings then result mappings: the tensor index space propagation uses
    /// (operand `i` is tensor `i`, result `j` is tensor `operands.len() + j`).
    pub fn tensors(&self) -> impl Iterator<Item = &TensorMapping> {
        self.operands.iter().chain(self.results.iter())
    }

    /// The factors of each tensor in dimension order (flattened).
    pub fn tensor_factors(&self, tensor: usize) -> Vec<Factor> {
        self.tensors()
            .nth(tensor)
            .map(|m| m.iter().flatten().copied().collect())
            .unwrap_or_default()
    }

    /// Whether the rule is the scalar rule (no factors at all).
    pub fn is_empty(&self) -> bool {
        self.factor_sizes.is_empty()
    }

    /// The rule of a parsed `#sdy.op_sharding_rule<...>`, when its factor indices are
    /// in range (the verifier reports the others).
    pub fn from_ast(r: &RuleAst) -> Option<OpShardingRule> {
        let n = r.factor_sizes.len();
        let index = |f: i64| -> Option<Factor> { usize::try_from(f).ok().filter(|&f| f < n) };
        let maps = |ms: &[TensorMappingAst]| -> Option<Vec<TensorMapping>> {
            ms.iter()
                .map(|m| {
                    m.dims
                        .iter()
                        .map(|d| d.factors.iter().map(|&f| index(f)).collect::<Option<Vec<_>>>())
                        .collect::<Option<TensorMapping>>()
                })
                .collect()
        };
        let list = |l: &Option<FactorListAst>| -> Option<Vec<Factor>> {
            match l {
                None => Some(Vec::new()),
                Some(l) => l.factors.iter().map(|f| index(f.0)).collect(),
            }
        };
        Some(OpShardingRule {
            factor_sizes: r.factor_sizes.iter().map(|f| f.0).collect(),
            operands: maps(&r.operands)?,
            results: maps(&r.results)?,
            reduction: list(&r.reduction)?,
            need_replication: list(&r.need_replication)?,
            permutation: list(&r.permutation)?,
            blocked_propagation: list(&r.blocked_propagation)?,
            is_custom: r.custom,
        })
    }

    /// The printer's form (what `sdy.sharding_rule` holds in the printable IR).
    pub fn to_print(&self) -> p::OpShardingRule {
        let maps = |ms: &[TensorMapping]| -> Vec<Vec<Vec<i64>>> {
            ms.iter()
                .map(|m| m.iter().map(|d| d.iter().map(|&f| f as i64).collect()).collect())
                .collect()
        };
        let list = |l: &[Factor]| -> Vec<i64> { l.iter().map(|&f| f as i64).collect() };
        p::OpShardingRule {
            operands: maps(&self.operands),
            results: maps(&self.results),
            factor_sizes: self.factor_sizes.clone(),
            reduction: list(&self.reduction),
            need_replication: list(&self.need_replication),
            permutation: list(&self.permutation),
            blocked_propagation: list(&self.blocked_propagation),
            custom: self.is_custom,
        }
    }
}

/// Shardy's printed form:
/// `#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=4, k=2} reduction={j}>`.
impl fmt::Display for OpShardingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_print(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_and_printing() {
        let r = OpShardingRule {
            factor_sizes: vec![8, 32, 16],
            operands: vec![vec![vec![0], vec![1]], vec![vec![1], vec![2]]],
            results: vec![vec![vec![0], vec![2]]],
            reduction: vec![1],
            blocked_propagation: vec![1],
            ..Default::default()
        };
        assert_eq!(
            r.to_string(),
            "#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=32, k=16} reduction={j} blocked_propagation={j}>"
        );
        assert_eq!(r.factor_type(1), FactorType::Reduction);
        assert_eq!(r.factor_type(0), FactorType::PassThrough);
        assert!(r.is_blocked(1) && !r.is_blocked(2));
        assert_eq!(r.tensor_factors(1), vec![1, 2]);
        assert_eq!(r.tensor_factors(2), vec![0, 2]);
        let scalar = OpShardingRule {
            operands: vec![vec![], vec![]],
            results: vec![vec![]],
            ..Default::default()
        };
        assert_eq!(scalar.to_string(), "#sdy.op_sharding_rule<([], [])->([])>");
    }
}
