//! The sdy attributes beyond shardings (sharding rules, all-to-all parameters, axis
//! lists) as values, and the list forms ops print; shardings themselves are
//! [`crate::sharding`]'s.

use crate::sharding::{axis_list, AxisRef, TensorSharding};
use sdy_syntax::sdy::{AllToAllParamAst, FactorListAst, RuleAst, TensorMappingAst};
use std::fmt::{self, Write};

/// The op-syntax list `[<...>, <...>]` (`in_shardings=`); `#sdy.sharding_per_value<...>`
/// wraps it.
pub struct PerValueList<'a>(pub &'a [TensorSharding]);

impl fmt::Display for PerValueList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{s}")?;
        }
        f.write_char(']')
    }
}

/// `#sdy.op_sharding_rule<([i, j], [j])->([i]) {i=8, j=4} reduction={j}, custom>`
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpShardingRule {
    /// Per operand, per dimension: the factor indices.
    pub operands: Vec<Vec<Vec<i64>>>,
    pub results: Vec<Vec<Vec<i64>>>,
    pub factor_sizes: Vec<i64>,
    pub reduction: Vec<i64>,
    pub need_replication: Vec<i64>,
    pub permutation: Vec<i64>,
    pub blocked_propagation: Vec<i64>,
    pub custom: bool,
}

/// The symbol of factor `i`: `i`..`z`, then `z_1`, `z_2`, ...
pub fn factor_symbol(i: i64) -> String {
    if (0..18).contains(&i) {
        ((b'i' + i as u8) as char).to_string()
    } else {
        format!("z_{}", i - 17)
    }
}

impl fmt::Display for OpShardingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn mappings(f: &mut fmt::Formatter<'_>, ms: &[Vec<Vec<i64>>]) -> fmt::Result {
            f.write_char('(')?;
            for (i, m) in ms.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_char('[')?;
                for (j, d) in m.iter().enumerate() {
                    if j > 0 {
                        f.write_str(", ")?;
                    }
                    for &factor in d {
                        f.write_str(&factor_symbol(factor))?;
                    }
                }
                f.write_char(']')?;
            }
            f.write_char(')')
        }
        fn list(f: &mut fmt::Formatter<'_>, kw: &str, fs: &[i64]) -> fmt::Result {
            if fs.is_empty() {
                return Ok(());
            }
            write!(f, " {kw}={{")?;
            for (i, &x) in fs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(&factor_symbol(x))?;
            }
            f.write_char('}')
        }
        f.write_str("#sdy.op_sharding_rule<")?;
        mappings(f, &self.operands)?;
        f.write_str("->")?;
        mappings(f, &self.results)?;
        if !self.factor_sizes.is_empty() {
            f.write_str(" {")?;
            for (i, s) in self.factor_sizes.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}={s}", factor_symbol(i as i64))?;
            }
            f.write_char('}')?;
        }
        list(f, "reduction", &self.reduction)?;
        list(f, "need_replication", &self.need_replication)?;
        list(f, "permutation", &self.permutation)?;
        list(f, "blocked_propagation", &self.blocked_propagation)?;
        if self.custom {
            f.write_str(", custom")?;
        }
        f.write_char('>')
    }
}

/// `[{"x"}: 0->2, {"y"}: 1->3]` element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllToAllParam {
    pub axes: Vec<AxisRef>,
    pub src_dim: i64,
    pub tgt_dim: i64,
}

/// Writes `{"a", "b"}`.
pub struct AxisListDisplay<'a>(pub &'a [AxisRef]);

impl fmt::Display for AxisListDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        axis_list(f, self.0)
    }
}

/// Writes `[{}, {"x"}]`.
pub struct AxisListsDisplay<'a>(pub &'a [Vec<AxisRef>]);

impl fmt::Display for AxisListsDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        for (i, l) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            axis_list(f, l)?;
        }
        f.write_char(']')
    }
}

/// Writes `[{"x"}: 0->2, {"y"}: 1->3]`.
pub struct AllToAllDisplay<'a>(pub &'a [AllToAllParam]);

impl fmt::Display for AllToAllDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            axis_list(f, &p.axes)?;
            write!(f, ": {}->{}", p.src_dim, p.tgt_dim)?;
        }
        f.write_char(']')
    }
}

pub fn rule(r: &RuleAst) -> OpShardingRule {
    let maps = |ms: &[TensorMappingAst]| -> Vec<Vec<Vec<i64>>> {
        ms.iter().map(|m| m.dims.iter().map(|d| d.factors.clone()).collect()).collect()
    };
    let list = |l: &Option<FactorListAst>| -> Vec<i64> {
        l.as_ref().map(|l| l.factors.iter().map(|f| f.0).collect()).unwrap_or_default()
    };
    OpShardingRule {
        operands: maps(&r.operands),
        results: maps(&r.results),
        factor_sizes: r.factor_sizes.iter().map(|f| f.0).collect(),
        reduction: list(&r.reduction),
        need_replication: list(&r.need_replication),
        permutation: list(&r.permutation),
        blocked_propagation: list(&r.blocked_propagation),
        custom: r.custom,
    }
}

pub fn all_to_all(ps: &[AllToAllParamAst]) -> Vec<AllToAllParam> {
    ps.iter()
        .map(|p| AllToAllParam {
            axes: AxisRef::list_from_ast(&p.axes.axes),
            src_dim: p.src_dim.0,
            tgt_dim: p.tgt_dim.0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_printing() {
        let r = OpShardingRule {
            operands: vec![vec![vec![0], vec![1]], vec![vec![1]]],
            results: vec![vec![vec![0, 19]]],
            factor_sizes: vec![8, 4],
            reduction: vec![1],
            custom: true,
            ..Default::default()
        };
        assert_eq!(
            r.to_string(),
            "#sdy.op_sharding_rule<([i, j], [j])->([iz_2]) {i=8, j=4} reduction={j}, custom>"
        );
    }
}
