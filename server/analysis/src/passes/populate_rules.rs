//! `-sdy-populate-op-sharding-rules[="conservative-propagation=true"]`: sets
//! `sdy.sharding_rule` on every op (in every function) the registry has a rule for;
//! an op's own rule is kept. Like Shardy's pass, it runs on each `func.func` and
//! visits its ops in post-order (nested ops first); the registry's "unknown" warnings
//! are emitted once per process (one for custom calls, one for other ops).

use super::{Pass, PassContext, PassFailed, PassOptions};
use crate::ir::OpKind;
use crate::ir::{Attr, Op};
use crate::model::{Model, OpId};
use crate::rules::{self, RuleLookup, RuleOptions, Unknown};
use crate::verify::messages as msg;
use crate::verify::values::{has_static_shape, type_string};
use std::collections::HashMap;

pub struct PopulateOpShardingRules {
    opts: RuleOptions,
}

pub fn create(options: &PassOptions) -> Box<dyn Pass> {
    Box::new(PopulateOpShardingRules {
        opts: RuleOptions { conservative: options.bool("conservative-propagation") },
    })
}

/// Once-flags of the two registry warnings (Shardy keeps one per call site).
const ONCE_CUSTOM_CALL: &str = "sharding-rule-registry/unknown-custom-call";
const ONCE_OP: &str = "sharding-rule-registry/unknown-op";

/// The origins of the ops in `op` and nested in it, in post-order.
fn post_order(op: &Op, out: &mut Vec<u32>) {
    for r in &op.regions {
        for b in &r.blocks {
            for c in &b.ops {
                post_order(c, out);
            }
        }
    }
    if let Some(o) = op.origin {
        out.push(o);
    }
}

impl Pass for PopulateOpShardingRules {
    fn flag(&self) -> &'static str {
        "sdy-populate-op-sharding-rules"
    }

    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        let by_start: HashMap<u32, OpId> =
            cx.model.ops.iter().enumerate().map(|(i, o)| (o.start, i as OpId)).collect();
        let mut order = Vec::new();
        for op in cx.module.body().iter().filter(|op| op.kind == OpKind::FuncFunc) {
            post_order(op, &mut order);
        }
        let mut created: HashMap<u32, rules::OpShardingRule> = HashMap::new();
        let mut warnings: Vec<(u32, u32, String)> = Vec::new();
        let mut errors: Vec<(u32, String)> = Vec::new();
        for origin in order {
            let Some(&id) = by_start.get(&origin) else { continue };
            match rules::rule_for(cx.model, id, cx.src, &self.opts) {
                RuleLookup::Created(r) => {
                    if let Some(e) = static_shape_error(cx.model, id) {
                        errors.push((cx.model.op(id).loc(), e));
                    }
                    created.insert(origin, r);
                }
                RuleLookup::Unknown(u) => {
                    let key = match u {
                        Unknown::CustomCall(_) => ONCE_CUSTOM_CALL,
                        Unknown::Op(_) => ONCE_OP,
                    };
                    if cx.session.first_time(key) {
                        warnings.push((cx.model.op(id).loc(), origin, u.message()));
                    }
                }
                RuleLookup::Existing(_) | RuleLookup::NoRule => {}
            }
        }
        if !created.is_empty() {
            cx.module.top.walk_mut(&mut |op| {
                if let Some(r) = op.origin.and_then(|o| created.remove(&o)) {
                    op.set_attr("sdy.sharding_rule", Attr::Rule(r.to_print()));
                }
            });
        }
        // Nested ops come first in post-order, so when a warning is emitted every op
        // inside the unknown op already has its rule: the note shows the final state.
        for (at, origin, message) in warnings {
            cx.warn(at, message, Some(origin));
        }
        // MLIR verifies the module after the pass: the rule verifier rejects a rule on
        // a value that is not a statically shaped tensor.
        for (at, message) in &errors {
            cx.error(*at, message.clone(), None);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(PassFailed)
        }
    }
}

/// The sharding rule verifier's error for op `id` once it has a rule: the first operand
/// or result that is not a statically shaped ranked tensor.
fn static_shape_error(model: &Model, id: OpId) -> Option<String> {
    let (operands, results) = rules::value_types(model, id);
    for (kind, types) in [("operand", &operands), ("result", &results)] {
        for (i, ty) in types.iter().enumerate() {
            let Some(ty) = ty else { continue };
            if matches!(&*ty.kind, sdy_syntax::tree::TypeKind::Alias(_)) || has_static_shape(ty) {
                continue;
            }
            return Some(format!(
                "'{}' op {}{}",
                model.op(id).name(),
                msg::value_prefix(kind, i, types.len()),
                msg::rule_needs_static_tensor(&type_string(ty))
            ));
        }
    }
    None
}
