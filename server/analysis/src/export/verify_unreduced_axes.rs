//! `sdy-verify-unreduced-axes`: no op may silently turn unreduced axes into reduced
//! ones. Only `sdy.reshard` and `sdy.sharding_constraint` (the "blessed" ops, checked
//! by the verifier) may drop them; dots and ops in general may introduce `sum` axes;
//! reductions and StableHLO collectives may drop axes of their body's reduction; calls
//! and returns must carry the same axes on both sides.
//!
//! Shardy walks each function in post-order and stops at the function's first error;
//! every function is checked.

use crate::ir::OpKind;
use crate::ir::{Module, Op, Syntax, ValueId};
use crate::pass::{PassContext, PassFailed};
use crate::propagation::graph::{erase_manual_axes, manual_axes, mlir_operands, Def, Graph, OpIdx};
use crate::propagation::irutil::callee_ref;
use crate::propagation::pipeline::import::axis_set_diff;
use crate::sharding::axis::overlaps;
use crate::sharding::{AxisRef, Mesh, Reduction, TensorSharding};
use crate::verify::messages as msg;
use std::borrow::Cow;

/// A sharding read from the module (copied only where the check changes it).
type Sharding<'m> = Option<Cow<'m, TensorSharding>>;

pub fn verify_unreduced_axes(cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
    let g = Graph::build(cx.module);
    let funcs: Vec<OpIdx> =
        g.pre_order().into_iter().filter(|&i| g.node(i).kind == OpKind::FuncFunc).collect();
    let mut failed = false;
    for f in funcs {
        let order = g.post_order_from(f);
        let v = Verifier { m: cx.module, g: &g };
        if let Some((op, message)) = order.iter().find_map(|&i| v.check(i).err().map(|e| (i, e))) {
            let origin = g.node(op).origin;
            let at = origin
                .and_then(|o| cx.model.ops.iter().find(|x| x.start == o).map(|x| x.loc()))
                .unwrap_or(0);
            cx.error(at, msg::op_error(g.name(op), &message), origin);
            failed = true;
        }
    }
    if failed {
        Err(PassFailed)
    } else {
        Ok(())
    }
}

struct Verifier<'a> {
    m: &'a Module,
    g: &'a Graph,
}

type Check = Result<(), String>;

impl<'a> Verifier<'a> {
    fn check(&self, i: OpIdx) -> Check {
        let g = self.g;
        let n = g.node(i);
        match n.name.as_str() {
            // Checked by their verifier.
            "sdy.reshard" | "sdy.sharding_constraint" => Ok(()),
            "stablehlo.reduce" => {
                let ops = mlir_operands(g.op(self.m, i));
                let inputs = &ops[..ops.len() / 2];
                let body = self.body_reduction(i);
                self.transition(i, inputs, body, None)
            }
            "stablehlo.dot" | "stablehlo.dot_general" => {
                self.transition(i, &n.operands, Some(Reduction::Sum), None)
            }
            "sdy.all_reduce" | "sdy.reduce_scatter" => {
                match n.operands.first().and_then(|&v| self.sharding(v)) {
                    Some(_) => Ok(()),
                    None => Err(msg::OPERAND_MUST_BE_SHARDED.to_string()),
                }
            }
            "stablehlo.all_reduce" | "stablehlo.reduce_scatter" => self.stablehlo_collective(i),
            "func.call" => self.call(i),
            "func.return" | "sdy.return" => self.return_like(i),
            name if crate::propagation::graph::is_terminator(name) => Ok(()),
            _ => self.transition(i, &n.operands, Some(Reduction::Sum), None),
        }
    }

    /// `getShardingBypassingBarriers`.
    fn sharding(&self, mut v: ValueId) -> Sharding<'a> {
        loop {
            match self.g.def(v) {
                Some(Def::Result { op, .. }) if self.g.name(op) == "sdy.propagation_barrier" => {
                    v = *self.g.node(op).operands.first()?;
                }
                _ => return self.g.sharding_ref(self.m, v),
            }
        }
    }

    /// Whether `v` comes from a blessed op (through barriers).
    fn made_by_blessed_op(&self, mut v: ValueId) -> bool {
        loop {
            match self.g.def(v) {
                Some(Def::Result { op, .. }) => match self.g.name(op) {
                    "sdy.propagation_barrier" => match self.g.node(op).operands.first() {
                        Some(&input) => v = input,
                        None => return false,
                    },
                    "sdy.reshard" | "sdy.sharding_constraint" => return true,
                    _ => return false,
                },
                _ => return false,
            }
        }
    }

    /// The shardings of `operands` as the transition sees them: none for a value a
    /// blessed op produced.
    fn operand_shardings(&self, operands: &[ValueId]) -> Vec<Sharding<'a>> {
        operands
            .iter()
            .map(|&v| if self.made_by_blessed_op(v) { None } else { self.sharding(v) })
            .collect()
    }

    fn transition(
        &self,
        i: OpIdx,
        operands: &[ValueId],
        introduce: Option<Reduction>,
        remove: Option<Reduction>,
    ) -> Check {
        let ins = self.operand_shardings(operands);
        let outs: Vec<_> = self.g.node(i).results.iter().map(|&r| self.sharding(r)).collect();
        self.verify_transition(&ins, &outs, introduce, remove)
    }

    fn stablehlo_collective(&self, i: OpIdx) -> Check {
        let n = self.g.node(i);
        let input = n.operands.first().and_then(|&v| self.sharding(v));
        let output = n.results.first().and_then(|&v| self.sharding(v));
        if input.is_none() && output.is_none() {
            return Ok(());
        }
        let body = if n.children.is_empty() { None } else { self.body_reduction(i) };
        self.verify_transition(&[input], &[output], None, body)
    }

    /// Shardy's `getReductionType`: the one reduction (add, max, min) every returned
    /// value of the op's body comes from.
    fn body_reduction(&self, i: OpIdx) -> Option<Reduction> {
        if self.g.node(i).children.is_empty() {
            // `applies OP`: the body is that op on the block arguments.
            return applied_op(self.g.op(self.m, i)).and_then(reduction_of);
        }
        let ret = self.g.terminator(i, 0)?;
        let ret = self.g.node(ret);
        if ret.kind != OpKind::StablehloReturn || ret.operands.is_empty() {
            return None;
        }
        let mut found = None;
        for &v in &ret.operands {
            let Some(Def::Result { op, .. }) = self.g.def(v) else { return None };
            let r = reduction_of(self.g.name(op))?;
            if found.is_some_and(|f| f != r) {
                return None;
            }
            found = Some(r);
        }
        found
    }

    fn call(&self, i: OpIdx) -> Check {
        let g = self.g;
        let Some(callee) = callee_ref(g.op(self.m, i)) else { return Ok(()) };
        let Some(&f) = g.funcs.get(callee.as_ref()) else { return Ok(()) };
        let n = g.node(i);
        let args = g.node(f).args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
        for (k, &v) in n.operands.iter().enumerate() {
            if self.made_by_blessed_op(v) {
                continue;
            }
            let arg = args.get(k).and_then(|&a| self.sharding(a));
            let operand = self.sharding(v);
            verify_equal(unreduced(&operand), unreduced(&arg), &format!("at call argument {k}"))?;
        }
        for (k, &r) in n.results.iter().enumerate() {
            let declared = g.func_result_sharding_ref(self.m, f, k).map(Cow::Borrowed);
            let result = self.sharding(r);
            verify_equal(unreduced(&declared), unreduced(&result), &format!("at call result {k}"))?;
        }
        Ok(())
    }

    fn return_like(&self, i: OpIdx) -> Check {
        let g = self.g;
        let Some(parent) = g.node(i).parent else { return Ok(()) };
        let operands = &g.node(i).operands;
        if g.name(parent) == "func.func" {
            for (k, &v) in operands.iter().enumerate() {
                let declared = g.func_result_sharding_ref(self.m, parent, k).map(Cow::Borrowed);
                self.return_pair(v, declared, k)?;
            }
            return Ok(());
        }
        let results = &g.node(parent).results;
        for (k, &v) in operands.iter().enumerate().take(results.len()) {
            let mut declared = self.sharding(results[k]);
            if g.name(parent) == "sdy.manual_computation" {
                let axes = manual_axes(g.op(self.m, parent));
                declared = declared.map(|s| Cow::Owned(erase_manual_axes(&s, &axes)));
            }
            self.return_pair(v, declared, k)?;
        }
        Ok(())
    }

    fn return_pair(&self, v: ValueId, declared: Sharding<'_>, k: usize) -> Check {
        if self.made_by_blessed_op(v) || declared.is_none() {
            return Ok(());
        }
        let operand = self.sharding(v);
        verify_equal(
            unreduced(&operand),
            unreduced(&declared),
            &msg::return_value_without_blessed_op(k),
        )
    }

    /// `verifyUnreducedAxesTransition` over the shardings of an op's operands and
    /// results; skipped unless they all use one mesh.
    fn verify_transition(
        &self,
        ins: &[Sharding<'_>],
        outs: &[Sharding<'_>],
        introduce: Option<Reduction>,
        remove: Option<Reduction>,
    ) -> Check {
        let mut mesh: Option<&Mesh> = None;
        for s in ins.iter().chain(outs).flatten() {
            if let Some(cur) = self.g.mesh_ref(&s.mesh) {
                match mesh {
                    None => mesh = Some(cur),
                    Some(prev) if prev != cur => return Ok(()),
                    Some(_) => {}
                }
            }
        }
        let mesh = mesh.cloned().unwrap_or_default();
        let flat = |v: &[Sharding<'_>]| -> Vec<AxisRef> {
            v.iter().flatten().flat_map(|s| s.unreduced.iter().cloned()).collect()
        };
        let (in_axes, out_axes) = (flat(ins), flat(outs));
        let introduced = axis_set_diff(&out_axes, &in_axes, &mesh);
        let removed = axis_set_diff(&in_axes, &out_axes, &mesh);
        // The first sharding touching `diff` whose reduction is not `expected`.
        let wrong = |v: &[Sharding<'_>], diff: &[AxisRef], expected: Reduction| {
            v.iter().flatten().find_map(|s| {
                let touches = s.unreduced.iter().any(|a| diff.iter().any(|d| overlaps(a, d)));
                (touches && s.reduction != expected).then_some(s.reduction)
            })
        };
        if let Some(first) = introduced.first() {
            let Some(expected) = introduce else {
                return Err(msg::cannot_add_unreduced_axis(&first.name));
            };
            if let Some(r) = wrong(outs, &introduced, expected) {
                return Err(msg::cannot_introduce_reduction(r.as_str(), expected.as_str()));
            }
        }
        if let Some(first) = removed.first() {
            let Some(expected) = remove else {
                return Err(msg::dropped_unreduced_axis(&first.name));
            };
            if let Some(r) = wrong(ins, &removed, expected) {
                return Err(msg::cannot_reduce_reduction(r.as_str(), expected.as_str()));
            }
        }
        for out in outs.iter().flatten() {
            for a in &out.unreduced {
                for input in ins.iter().flatten() {
                    let kept = input.unreduced.iter().any(|b| overlaps(b, a));
                    if kept && input.reduction != out.reduction {
                        return Err(msg::cannot_change_kept_reduction(
                            input.reduction.as_str(),
                            out.reduction.as_str(),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

fn reduction_of(name: &str) -> Option<Reduction> {
    match name {
        "stablehlo.add" => Some(Reduction::Sum),
        "stablehlo.maximum" => Some(Reduction::Max),
        "stablehlo.minimum" => Some(Reduction::Min),
        _ => None,
    }
}

/// The op of a `stablehlo.reduce` written in its compact form (`applies OP`).
fn applied_op(op: &Op) -> Option<&str> {
    let Syntax::Custom(t) = &op.syntax else { return None };
    let texts: Vec<&str> = t.texts().collect();
    let k = texts.iter().position(|&s| s == "applies")?;
    texts.get(k + 1).copied()
}

fn unreduced<'s>(s: &'s Sharding<'_>) -> &'s [AxisRef] {
    s.as_ref().map_or(&[], |s| &s.unreduced)
}

/// Shardy's `verifyEqual`: the same axes as sets; the message names the axes only one
/// side has.
fn verify_equal(source: &[AxisRef], target: &[AxisRef], place: &str) -> Check {
    let (mut a, mut b) = (source.to_vec(), target.to_vec());
    for v in [&mut a, &mut b] {
        v.sort_by(|x, y| (x.name.as_str(), x.sub).cmp(&(y.name.as_str(), y.sub)));
        v.dedup();
    }
    if a == b {
        return Ok(());
    }
    let mut names: Vec<&str> = source
        .iter()
        .filter(|x| !target.contains(x))
        .chain(target.iter().filter(|x| !source.contains(x)))
        .map(|x| x.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    Err(msg::unreduced_axes_mismatch(&names.join(", "), place))
}
