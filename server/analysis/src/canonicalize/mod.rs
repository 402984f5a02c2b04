//! `-canonicalize`: MLIR's canonicalizer with Shardy's canonicalization patterns.
//!
//! * [`driver`]: the greedy rewrite driver (worklist order, dead-op erasure, constant
//!   uniquing and hoisting, region DCE, iterations) over a mutable [`arena`] of the
//!   module.
//! * The patterns, by op family, in the order and with the priority (benefit) MLIR
//!   applies them: [`collective`] (no-op collectives, folds, all-to-all and
//!   reduce-scatter fusion), [`reshard`] (reshard of reshard, reshard CSE across
//!   reshapes and transposes), [`manual`] (unused inputs, redundant manual
//!   computations).
//! * [`effects`]: which ops are trivially dead, constants, isolated from above.

pub(crate) mod arena;
pub(crate) mod collective;
pub mod driver;
pub(crate) mod effects;
pub(crate) mod manual;
pub(crate) mod reshape_strides;
pub(crate) mod reshard;
pub(crate) mod shardings;

use crate::ir::OpKind;
use crate::ir::{Module, Op};
use crate::pass::{Pass, PassContext, PassFailed, PassOptions};
use arena::{Arena, OpRef};
use driver::{Config, Rewriter};

/// Tries the patterns of `op`, highest benefit first (DRR patterns count their matched
/// ops), then in registration order.
fn apply_patterns(rw: &mut Rewriter, op: OpRef) -> bool {
    use collective as c;
    let o = rw.ir.op(op);
    // Reshards and collectives take one tensor and give one (a module that says
    // otherwise did not verify; leave it alone).
    if o.kind != OpKind::SdyManualComputation && (o.operands.len() != 1 || o.results.len() != 1) {
        return false;
    }
    match rw.ir.name(op) {
        "sdy.reshard" => reshard::reshard_of_reshard(rw, op) || reshard::cse(rw, op),
        "sdy.all_gather" | "sdy.reduce_scatter" => c::noop(rw, op),
        "sdy.all_slice" => {
            c::all_slice_of_all_gather(rw, op)
                || c::noop(rw, op)
                || c::reduce_scatter_fusion(rw, op)
        }
        "sdy.all_reduce" => {
            c::all_reduce_of_replicated_to_unreduced(rw, op)
                || c::noop(rw, op)
                || c::all_reduce_of_sharded_to_unreduced(rw, op)
        }
        "sdy.all_to_all" => c::all_to_all_fusion(rw, op) || c::all_to_all_no_use(rw, op),
        "sdy.collective_permute" => c::collective_permute_noop(rw, op),
        "sdy.manual_computation" => manual::unused_inputs(rw, op) || manual::redundant(rw, op),
        _ => false,
    }
}

/// Only the patterns labelled `sdy-reshard` (Shardy's `kReshardLabel`): reshard of
/// reshard. The export pipeline enables just this label.
pub fn reshard_label_patterns(rw: &mut Rewriter, op: OpRef) -> bool {
    let o = rw.ir.op(op);
    o.kind == OpKind::SdyReshard
        && o.operands.len() == 1
        && o.results.len() == 1
        && reshard::reshard_of_reshard(rw, op)
}

/// Only the patterns labelled `sdy-collective` (`kCollectiveLabel`): those of the
/// collective ops.
pub fn collective_label_patterns(rw: &mut Rewriter, op: OpRef) -> bool {
    let collective = rw.ir.op(op).kind.is_collective();
    collective && apply_patterns(rw, op)
}

/// The result of canonicalizing a module.
pub struct Outcome {
    pub converged: bool,
    /// Errors patterns emitted: (origin of the op, if it came from the source; message).
    pub errors: Vec<(Option<u32>, String)>,
}

/// Canonicalizes `m` in place.
pub fn canonicalize(m: &mut Module, cfg: &Config) -> Outcome {
    rewrite_greedily(m, cfg, apply_patterns)
}

/// Runs the greedy driver with `patterns` on `m` in place (MLIR's
/// `applyPatternsGreedily`).
pub fn rewrite_greedily(m: &mut Module, cfg: &Config, patterns: driver::ApplyPatterns) -> Outcome {
    let empty =
        Module { values: Vec::new(), top: Op::pretty("builtin.module", vec![], vec![], vec![]) };
    let module = std::mem::replace(m, empty);
    let mut rw = Rewriter::new(Arena::from_module(module));
    let converged = driver::run(&mut rw, cfg, patterns);
    let errors =
        rw.errors.iter().map(|&(op, ref msg)| (rw.ir.op(op).origin, msg.clone())).collect();
    *m = rw.ir.into_module();
    Outcome { converged, errors }
}

struct CanonicalizePass {
    cfg: Config,
    test_convergence: bool,
}

/// Makes the pass from its options.
pub fn create(o: &PassOptions) -> Box<dyn Pass> {
    let cfg = Config {
        top_down: o.bool("top-down"),
        region_simplify: o.get("region-simplify") != Some("disabled"),
        max_iterations: o.int("max-iterations").unwrap_or(10),
        max_num_rewrites: o.int("max-num-rewrites").unwrap_or(-1),
    };
    Box::new(CanonicalizePass { cfg, test_convergence: o.bool("test-convergence") })
}

impl Pass for CanonicalizePass {
    fn flag(&self) -> &'static str {
        "canonicalize"
    }

    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        let outcome = canonicalize(cx.module, &self.cfg);
        for (origin, message) in outcome.errors {
            let at = origin.map_or(0, |o| {
                cx.model.ops.iter().find(|op| op.start == o).map_or(o, |op| op.loc())
            });
            cx.error(at, message, origin);
        }
        // Non-convergence is only a failure when asked for (and says nothing).
        if self.test_convergence && !outcome.converged {
            return Err(PassFailed);
        }
        Ok(())
    }
}
