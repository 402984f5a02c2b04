//! Hooks into the driver: every propagation step that changed a sharding, with the op,
//! its tensors and the factor shardings before and after (what the debug options and
//! the editor API are built on).

use super::driver::Phase;
use super::graph::{Graph, OpIdx};
use super::projection::Projection;
use crate::ir::{Module, ValueId};
use crate::rules::OpShardingRule;
use crate::sharding::{Mesh, TensorSharding};

/// One propagation step through `op` (Shardy's `SourceShardingAction`); `changed`
/// says whether it changed a sharding (`anyUpdated`).
pub struct Step<'e> {
    pub graph: &'e Graph,
    pub module: &'e Module,
    /// The op propagated through (the function for its results, the edge op for
    /// data-flow edges).
    pub op: OpIdx,
    /// The values of the step's operands and results (a function result is its
    /// returned value; a data-flow edge's result holds its targets' sharding).
    pub operands: &'e [ValueId],
    pub results: &'e [ValueId],
    /// Whether the results are function results (`op` is the function).
    pub func_results: bool,
    pub before: &'e Projection,
    pub after: &'e Projection,
    pub rule: &'e OpShardingRule,
    pub mesh: &'e Mesh,
    pub changed: bool,
    pub phase: Phase,
}

/// What a tracer may rely on. The driver does not report steps that cannot change a
/// sharding and whose `before` projection either
/// - has no axes at all (such a step is not [`Tracer::wants`]ed by a tracer that only
///   looks at axes present before the step), or
/// - is converged: every factor has the same axes in all the tensors that have it
///   (the step then expands nothing, `after == before`, and no two tensors disagree).
///
/// nor repeats of an unchanged step with the same shardings. A step whose factors all
/// have direction `None` is still reported: a tracer may find conflicts there.
/// Tracers must therefore record nothing for unchanged steps of the kinds above.
pub trait Tracer {
    /// Recovers the concrete tracer after the run.
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any>;
    /// Whether a step starting from `before` may matter (when not, the driver neither
    /// copies the projection nor reports the step).
    fn wants(&self, _before: &Projection) -> bool {
        true
    }
    /// Records a step. A step that changed nothing, repeated with the same
    /// projections, must record nothing new: the driver skips such repeats.
    fn step(&mut self, s: &Step<'_>);
    /// `to` got `from`'s new sharding because they are in one sharding group.
    fn group_sync(&mut self, _g: &Graph, _from: ValueId, _to: ValueId, _s: &TensorSharding) {}
}
