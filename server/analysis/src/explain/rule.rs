//! The sharding rule of an op, explained: Shardy's `#sdy.op_sharding_rule` text and a
//! factor table saying, per factor, its size, which dimension of each operand and result
//! it is (part of), and what sharding it costs.

use crate::ir::sdy::factor_symbol;
use crate::model::{Model, OpId};
use crate::rules::{self, FactorType, OpShardingRule, RuleLookup, RuleOptions};
use std::fmt::Write as _;

/// The rule section of an op's hover; `None` for ops that are not sharded by rules
/// (functions, returns, calls, the module, sdy ops without a rule).
pub fn explain_op_rule(model: &Model, src: &str, op: OpId) -> Option<String> {
    let name = model.op(op).name();
    if matches!(name, "func.func" | "func.return" | "func.call" | "builtin.module" | "sdy.mesh") {
        return None;
    }
    let lookup = rules::rule_for(model, op, src, &RuleOptions::default());
    let mut out = String::new();
    match &lookup {
        RuleLookup::Existing(r) => {
            let _ = writeln!(out, "**Sharding rule** (the op's own `sdy.sharding_rule`):\n");
            table(&mut out, r);
        }
        RuleLookup::Created(r) => {
            let _ = writeln!(out, "**Sharding rule** (Shardy's registry):\n");
            table(&mut out, r);
        }
        RuleLookup::NoRule if name.starts_with("sdy.") => return None,
        RuleLookup::NoRule => {
            let _ = writeln!(
                out,
                "**No sharding rule**: propagation does not pass shardings through this op."
            );
        }
        RuleLookup::Unknown(u) => {
            let _ = writeln!(
                out,
                "**No sharding rule**: Shardy's registry does not know this op, so \
                 propagation does not pass shardings through it (Shardy warns: {}).",
                u.message()
            );
        }
    }
    Some(out)
}

fn table(out: &mut String, r: &OpShardingRule) {
    let _ = writeln!(out, "`{r}`\n");
    if r.is_empty() {
        let _ = writeln!(out, "No factors: every operand and result is a scalar.");
        return;
    }
    // Columns for the shaped tensors only; scalars (reduce init values, indices of a
    // dynamic slice) have no factor.
    let names: Vec<String> = (0..r.operands.len())
        .map(|i| format!("operand {i}"))
        .chain((0..r.results.len()).map(|i| format!("result {i}")))
        .collect();
    let shaped: Vec<usize> =
        r.tensors().enumerate().filter(|(_, m)| !m.is_empty()).map(|(i, _)| i).collect();
    let _ = write!(out, "| factor | size |");
    for &t in &shaped {
        let _ = write!(out, " {} |", names[t]);
    }
    let _ = writeln!(out, " kind |");
    let _ = writeln!(out, "|---|---:|{}---|", "---|".repeat(shaped.len()));
    let tensors: Vec<_> = r.tensors().collect();
    for f in 0..r.num_factors() {
        let _ = write!(out, "| `{}` | {} |", factor_symbol(f as i64), r.factor_sizes[f]);
        for &t in &shaped {
            let _ = write!(out, " {} |", place(tensors[t], f));
        }
        let _ = writeln!(out, " {} |", kind(r, f));
    }
    out.push('\n');
    legend(out, r);
    let scalars: Vec<&str> =
        (0..names.len()).filter(|t| !shaped.contains(t)).map(|t| names[t].as_str()).collect();
    if !scalars.is_empty() {
        let what = if scalars.len() == 1 { "a scalar" } else { "scalars" };
        let _ = writeln!(out, "\nNo factor in {} ({what}).", scalars.join(", "));
    }
}

/// Where factor `f` is in a tensor: `dim 1`, or `dim 1 (major)` when the dimension is
/// made of several factors (a reshape's split or merged dimension).
fn place(mapping: &[Vec<usize>], f: usize) -> String {
    for (d, factors) in mapping.iter().enumerate() {
        let Some(k) = factors.iter().position(|&x| x == f) else { continue };
        return match (factors.len(), k) {
            (1, _) => format!("dim {d}"),
            (2, 0) => format!("dim {d} (major)"),
            (2, _) => format!("dim {d} (minor)"),
            (n, k) => format!("dim {d} (part {} of {n}, major first)", k + 1),
        };
    }
    String::new()
}

/// The factor's kind, short (the table's column).
fn kind(r: &OpShardingRule, f: usize) -> String {
    let kind = match r.factor_type(f) {
        FactorType::PassThrough => "pass-through",
        FactorType::Reduction => "reduction",
        FactorType::NeedReplication => "need replication",
        FactorType::Permutation => "permutation",
    };
    if r.is_blocked(f) {
        format!("{kind}, blocked")
    } else {
        kind.to_string()
    }
}

/// What each kind in the rule means for sharding, with its factors.
fn legend(out: &mut String, r: &OpShardingRule) {
    let factors = |pred: &dyn Fn(usize) -> bool| -> String {
        let fs: Vec<String> = (0..r.num_factors())
            .filter(|&f| pred(f))
            .map(|f| format!("`{}`", factor_symbol(f as i64)))
            .collect();
        fs.join(", ")
    };
    let kinds = [
        (
            FactorType::PassThrough,
            "pass-through",
            "sharded alike in every tensor that has it: no communication",
        ),
        (
            FactorType::Reduction,
            "reduction",
            "only in operands: sharding it leaves each device a partial result that an \
             all-reduce completes",
        ),
        (
            FactorType::NeedReplication,
            "need replication",
            "if sharded, it is all-gathered before the op",
        ),
        (
            FactorType::Permutation,
            "permutation",
            "data moves between shards along it, so keeping it sharded needs communication",
        ),
    ];
    for (t, name, meaning) in kinds {
        let fs = factors(&|f| r.factor_type(f) == t);
        if !fs.is_empty() {
            let _ = writeln!(out, "- *{name}* ({fs}): {meaning}.");
        }
    }
    let blocked = factors(&|f| r.is_blocked(f));
    if !blocked.is_empty() {
        let _ =
            writeln!(out, "- *blocked* ({blocked}): propagation does not pass shardings along it.");
    }
}
