//! The editor's view of propagation: for each value, the sharding it ends up with,
//! where each of its axes comes from (the user-written sharding, the ops it went
//! through and in which priority round) and the axes a conflict kept away from it
//! (with the conflicting tensors). The debug attributes of Shardy (`origins`) answer
//! the same questions in Shardy's format; this is the structured form.
//!
//! ```text
//! let inf = infer(src, &chunk, &model, &InferOptions::default());
//! for v in &inf.values { v.site, v.inferred, v.axes[i].source, v.axes[i].hops, v.conflicts }
//! ```

use super::control::{Control, RunToEnd};
use super::driver::{Failure, Phase, Warning};
use super::editor::Site;
use super::graph::*;
pub use super::hops::{Hop, Hops};
use super::origins::{source_map, Node};
use super::projection::Projection;
use super::trace::{Step, Tracer};
use super::{constraints, edges, run_strategy_traced, Options, Strategy, StrategyOption};
use crate::ir::sdy::factor_symbol;
use crate::ir::OpKind;
use crate::ir::{Module, ValueId};
use crate::model::Model;
use crate::sharding::axis::{self, list_prefix_status, PrefixStatus};
use crate::sharding::{AxisRef, TensorSharding};
use rustc_hash::FxHashMap as HashMap;
use sdy_syntax::tree::Chunk;
use smallvec::SmallVec;

/// A user-written sharding an axis comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Argument `index` of function `func`.
    FuncArg { func: String, index: usize },
    /// Result `index` of function `func` (its result attribute).
    FuncResult { func: String, index: usize },
    /// An `sdy.sharding_constraint` (by the absolute start of the op, when read from
    /// the source).
    Constraint { op: Option<u32> },
    /// In-sharding `index` of an `sdy.manual_computation`.
    ManualIn { op: Option<u32>, index: usize },
    /// Out-sharding `index` of an `sdy.manual_computation`.
    ManualOut { op: Option<u32>, index: usize },
    /// The `sdy.sharding` written on result `index` of an op.
    OpSharding { op: Option<u32>, index: usize },
}

/// Where one axis of an inferred sharding comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisOrigin {
    pub axis: AxisRef,
    pub source: Source,
    /// The user priority of the source dimension (0 when unwritten).
    pub priority: i64,
    /// The ops it went through, in order (empty for the written sharding itself),
    /// shared with the walks it extends.
    pub hops: Hops,
}

/// Axes kept away from a value by a conflict at `op`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub op: Option<u32>,
    pub op_name: String,
    /// The value's position among the op's operands/results.
    pub node: Node,
    /// The axes another tensor had on this factor that this value did not get.
    pub dropped: Vec<AxisRef>,
    /// What this value has on the factor after the step.
    pub kept: Vec<AxisRef>,
    /// The tensors that disagree: (position, their axes on the factor).
    pub sources: Vec<(Node, Vec<AxisRef>)>,
    pub phase: Phase,
    /// The factor of the op's sharding rule they disagree on (`i`, `j`, ...), and the
    /// dimension of this value and of each source it stands for (`None`: the tensor
    /// does not have the factor in one dimension, e.g. it is reshaped).
    pub factor: String,
    pub dim: Option<usize>,
    pub source_dims: Vec<Option<usize>>,
    /// The user priority of the sharding the kept axes came from, when it is lower
    /// than the round this conflict happened in: they were decided in an earlier
    /// round, before the dropped axes' sharding was applied.
    pub kept_priority: Option<i64>,
}

/// Why a tensor did not take axes another tensor of the op had on a factor, when it
/// is not a conflict: the tensor's own sharding, or the op, keeps them away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    pub op: Option<u32>,
    pub op_name: String,
    /// The value's position among the op's operands/results, and its dimension.
    pub node: Node,
    pub dim: Option<usize>,
    pub factor: String,
    /// The axes it did not take, and the tensor that had them.
    pub axes: Vec<AxisRef>,
    pub from: Node,
    pub cause: BlockCause,
    pub phase: Phase,
}

/// One mesh axis on two factors of an op's tensors (after its latest step): no
/// tensor can keep both, so the explicit-reshards pass reshards one side (FSDP: a
/// weight sharded on its contracting dimension, the activation on its batch dimension
/// over the same axis: the weight is all-gathered).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clash {
    pub op_name: String,
    pub axis: AxisRef,
    /// Per factor: the tensors with the axis on it.
    pub sides: Vec<ClashSide>,
}

/// One factor of a [`Clash`]: its symbol and the tensors (with their dimension) that
/// have the axis on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClashSide {
    pub factor: String,
    pub tensors: Vec<(Node, Option<usize>)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockCause {
    /// The dimension is closed (`{}` or `{"x"}` without `?`): no axis may be added.
    Closed,
    /// The axis is in the tensor's `replicated={...}`.
    Replicated,
    /// An `sdy.propagation_barrier` lets nothing through in this direction.
    Barrier,
    /// The axes are manual in the `sdy.manual_computation` starting at `op` that the
    /// value is an operand, result or block argument of: its free axes cannot hold them.
    Manual { op: Option<u32> },
    /// The dimension was written with user priority `priority`: it stays closed and
    /// empty until that round, and this step ran in round `round` (user-priority
    /// propagation).
    Priority { priority: i64, round: i64 },
}

/// Everything known about one value (of the source: ops a pass made are not reported).
#[derive(Clone, Debug, PartialEq)]
pub struct ValueReport {
    pub site: Site,
    pub value: ValueId,
    /// The sharding written in the source.
    pub written: Option<TensorSharding>,
    /// The sharding after propagation.
    pub inferred: Option<TensorSharding>,
    /// One entry per axis of `inferred`'s dimension shardings that has a known origin.
    pub axes: Vec<AxisOrigin>,
    pub conflicts: Vec<Conflict>,
}

/// The result of [`infer`].
pub struct Inference {
    /// The module after propagation.
    pub module: Module,
    pub values: Vec<ValueReport>,
    pub warnings: Vec<Warning>,
    pub failure: Option<Failure>,
}

/// Which propagation to explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InferOptions {
    pub level: Strategy,
    pub strategy: StrategyOption,
    pub conservative: bool,
}

impl Default for InferOptions {
    fn default() -> Self {
        InferOptions {
            level: Strategy::UserPriority,
            strategy: StrategyOption::Aggressive,
            conservative: false,
        }
    }
}

/// The tracer behind [`infer`].
#[derive(Default)]
pub struct Explainer {
    origins: HashMap<ValueId, Vec<AxisOrigin>>,
    conflicts: HashMap<ValueId, Vec<Conflict>>,
    blocked: HashMap<ValueId, Vec<Blocked>>,
    /// Per op (by start): the clashes after its latest step.
    clashes: HashMap<u32, Vec<Clash>>,
    /// The dimensions written with a user priority above 0, per value: (dimension,
    /// priority).
    held: HashMap<ValueId, SmallVec<[(usize, i64); 2]>>,
}

fn add_origin(map: &mut HashMap<ValueId, Vec<AxisOrigin>>, v: ValueId, o: AxisOrigin) {
    let list = map.entry(v).or_default();
    if !list.iter().any(|x| x.axis == o.axis) {
        list.push(o);
    }
}

impl Explainer {
    fn seed(&mut self, g: &Graph, v: ValueId, s: Option<&TensorSharding>, source: Source) {
        let Some(s) = s else { return };
        let key = g.shardable_value(v).unwrap_or(v);
        for (k, d) in s.dims.iter().enumerate() {
            if let Some(p) = d.priority.filter(|&p| p > 0) {
                self.held.entry(key).or_default().push((k, p));
            }
            for a in &d.axes {
                add_origin(
                    &mut self.origins,
                    key,
                    AxisOrigin {
                        axis: a.clone(),
                        source: source.clone(),
                        priority: d.priority.unwrap_or(0),
                        hops: Hops::default(),
                    },
                );
            }
        }
    }

    /// Records the user-written shardings of the module (before propagation).
    pub fn prepare(&mut self, m: &Module) {
        let g = Graph::build(m);
        for i in g.pre_order() {
            let n = &g.nodes[i];
            let op = g.op(m, i);
            match n.name.as_str() {
                "func.func" => {
                    let Some(f) = op.func() else { continue };
                    let args = n.args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
                    for (k, &a) in args.iter().enumerate() {
                        let s = g.sharding(m, a);
                        self.seed(
                            &g,
                            a,
                            s.as_ref(),
                            Source::FuncArg { func: f.sym.clone(), index: k },
                        );
                    }
                    if let Some(t) = g.terminator(i, 0) {
                        for (k, &v) in g.nodes[t].operands.iter().enumerate() {
                            let s = g.func_result_sharding(m, i, k);
                            self.seed(
                                &g,
                                v,
                                s.as_ref(),
                                Source::FuncResult { func: f.sym.clone(), index: k },
                            );
                        }
                    }
                }
                "sdy.sharding_constraint" => {
                    let s = sharding_of(op.prop("sharding"));
                    self.seed(&g, n.results[0], s.as_ref(), Source::Constraint { op: n.origin });
                    let input = n.operands[0];
                    let is = g.sharding(m, input);
                    if is.is_some() && is == s {
                        self.seed(&g, input, is.as_ref(), Source::Constraint { op: n.origin });
                    }
                }
                "sdy.manual_computation" => {
                    let ins = per_value(op.prop("in_shardings")).unwrap_or_default();
                    let outs = per_value(op.prop("out_shardings")).unwrap_or_default();
                    let args = n.args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
                    for (k, s) in ins.iter().enumerate() {
                        if let Some(&a) = args.get(k) {
                            let local = g.sharding(m, a);
                            self.seed(
                                &g,
                                a,
                                local.as_ref(),
                                Source::ManualIn { op: n.origin, index: k },
                            );
                        }
                        if let Some(&o) = n.operands.get(k) {
                            if g.sharding(m, o).as_ref() == Some(s) {
                                self.seed(
                                    &g,
                                    o,
                                    Some(s),
                                    Source::ManualIn { op: n.origin, index: k },
                                );
                            }
                        }
                    }
                    for (k, _) in outs.iter().enumerate() {
                        if let Some(&r) = n.results.get(k) {
                            let s = g.sharding(m, r);
                            self.seed(
                                &g,
                                r,
                                s.as_ref(),
                                Source::ManualOut { op: n.origin, index: k },
                            );
                        }
                    }
                }
                "sdy.data_flow_edge" => {
                    let input = n.operands[0];
                    let owner_op = g.owner(input).map(|o| g.nodes[o].origin).unwrap_or(None);
                    let index = match g.def(input) {
                        Some(Def::Result { index, .. }) | Some(Def::Arg { index, .. }) => index,
                        None => 0,
                    };
                    let s = sharding_of(op.prop("sharding"));
                    self.seed(
                        &g,
                        n.results[0],
                        s.as_ref(),
                        Source::OpSharding { op: owner_op, index },
                    );
                }
                _ => {
                    if let Some(list) = per_value(op.attr("sdy.sharding")) {
                        for (k, s) in list.iter().enumerate() {
                            if let Some(&r) = n.results.get(k) {
                                self.seed(
                                    &g,
                                    r,
                                    Some(s),
                                    Source::OpSharding { op: n.origin, index: k },
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    fn lookup(&self, g: &Graph, v: ValueId, a: &AxisRef) -> Option<AxisOrigin> {
        let key = g.shardable_value(v).unwrap_or(v);
        let list = self.origins.get(&key)?;
        if let Some(o) = list.iter().find(|o| o.axis == *a) {
            return Some(o.clone());
        }
        list.iter().find(|o| axis::contains(&o.axis, a) || axis::contains(a, &o.axis)).cloned()
    }

    /// The origins recorded for `v` (keyed by its shardable value).
    pub fn origins_of(&self, g: &Graph, v: ValueId) -> Vec<AxisOrigin> {
        let key = g.shardable_value(v).unwrap_or(v);
        self.origins.get(&key).cloned().unwrap_or_default()
    }

    /// The origins recorded under `key` exactly.
    pub fn origins_at(&self, key: ValueId) -> &[AxisOrigin] {
        self.origins.get(&key).map_or(&[], Vec::as_slice)
    }

    /// The conflicts recorded under `key` exactly.
    pub fn conflicts_at(&self, key: ValueId) -> &[Conflict] {
        self.conflicts.get(&key).map_or(&[], Vec::as_slice)
    }

    /// The blocked axes recorded under `key` exactly.
    pub fn blocked_at(&self, key: ValueId) -> &[Blocked] {
        self.blocked.get(&key).map_or(&[], Vec::as_slice)
    }

    /// The clashes of the op starting at `op` after its latest step.
    pub fn clashes_at_op(&self, op: u32) -> &[Clash] {
        self.clashes.get(&op).map_or(&[], Vec::as_slice)
    }

    /// Every conflict recorded at the op starting at `op`, on any of its tensors.
    pub fn conflicts_at_op(&self, op: u32) -> Vec<&Conflict> {
        let mut out: Vec<&Conflict> =
            self.conflicts.values().flatten().filter(|c| c.op == Some(op)).collect();
        out.sort_by_key(|c| (c.node, c.factor.clone()));
        out
    }
}

/// What the editor keeps of an explained propagation run: the explainer (keyed by the
/// values of the module during the run) and the data-flow edges as they were then
/// (edge input -> edge result), since later passes remove them while a value's origins
/// may be recorded on its edge.
#[derive(Default)]
pub struct Explained {
    pub explainer: Explainer,
    pub edges: HashMap<ValueId, ValueId>,
    /// The shardings of the functions' arguments and results before the pipeline's
    /// last export passes (`sdy-update-non-divisible-input-output-shardings`,
    /// `sdy-remove-sub-axes-in-input-output-shardings`), which may drop axes from them.
    pub io_before_export: Vec<IoSharding>,
}

/// A function argument's or result's sharding at one point of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoSharding {
    pub func: String,
    pub result: bool,
    pub index: usize,
    pub sharding: TensorSharding,
}

/// The shardings written on the functions' arguments and results of `m`.
pub fn io_shardings(m: &Module) -> Vec<IoSharding> {
    // The index the next export pass uses too (built once while the structure stays).
    let g = Graph::shared(m);
    let mut out = Vec::new();
    for &f in g.funcs.values() {
        let Some(fi) = g.op(m, f).func() else { continue };
        let slots = fi.args.iter().map(|s| (false, s)).enumerate();
        let results = fi.results.iter().map(|s| (true, s)).enumerate();
        for (index, (result, slot)) in slots.chain(results) {
            if let Some(sharding) = sharding_of(slot.attr("sdy.sharding")) {
                out.push(IoSharding { func: fi.sym.clone(), result, index, sharding });
            }
        }
    }
    out
}

impl Explained {
    /// The origins of `v`'s axes (on the value or on its data-flow edge).
    pub fn origins(&self, v: ValueId) -> Vec<AxisOrigin> {
        let mut out: Vec<AxisOrigin> = Vec::new();
        for k in [Some(v), self.edges.get(&v).copied()].into_iter().flatten() {
            for o in self.explainer.origins_at(k) {
                if !out.iter().any(|x| x.axis == o.axis) {
                    out.push(o.clone());
                }
            }
        }
        out
    }

    /// The conflicts that kept axes away from `v` (or its data-flow edge).
    pub fn conflicts(&self, v: ValueId) -> Vec<Conflict> {
        let mut out: Vec<Conflict> = Vec::new();
        for k in [Some(v), self.edges.get(&v).copied()].into_iter().flatten() {
            out.extend(self.explainer.conflicts_at(k).iter().cloned());
        }
        out
    }

    /// The axes `v`'s own sharding or an op kept away from it (or its data-flow edge).
    pub fn blocked(&self, v: ValueId) -> Vec<Blocked> {
        let mut out: Vec<Blocked> = Vec::new();
        for k in [Some(v), self.edges.get(&v).copied()].into_iter().flatten() {
            out.extend(self.explainer.blocked_at(k).iter().cloned());
        }
        out
    }
}

/// Runs one strategy pass with the explainer, seeded with the module's shardings as
/// they are before it.
pub fn explain_strategy(
    m: &mut Module,
    model: &Model,
    src: &str,
    opts: &Options,
    control: &dyn Control,
) -> (super::Outcome, Explained) {
    let mut ex = Explainer::default();
    ex.prepare(m);
    let (out, tracer) = run_strategy_traced(m, model, src, opts, Some(Box::new(ex)), control);
    let explainer = tracer
        .and_then(|t| t.as_any().downcast::<Explainer>().ok())
        .map(|b| *b)
        .unwrap_or_default();
    (out, Explained { explainer, edges: edge_map(m), io_before_export: Vec::new() })
}

/// The data-flow edges of `m`: edge input -> edge result.
pub fn edge_map(m: &Module) -> HashMap<ValueId, ValueId> {
    let g = Graph::build(m);
    let mut edge_of: HashMap<ValueId, ValueId> = HashMap::default();
    for i in g.pre_order() {
        if g.nodes[i].kind == OpKind::SdyDataFlowEdge {
            if let (Some(&input), Some(&result)) =
                (g.nodes[i].operands.first(), g.nodes[i].results.first())
            {
                edge_of.insert(input, result);
            }
        }
    }
    edge_of
}

impl Tracer for Explainer {
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }

    /// Origins and conflicts are both about axes the tensors had before the step.
    fn wants(&self, before: &Projection) -> bool {
        (0..before.num_tensors())
            .any(|t| before.tensor(t).factors.iter().flatten().any(|f| !f.axes.is_empty()))
    }

    fn step(&mut self, s: &Step<'_>) {
        let g = s.graph;
        let op = &g.nodes[s.op];
        let value_of = |n: Node| {
            if n.result { s.results.get(n.index) } else { s.operands.get(n.index) }.copied()
        };
        if s.changed {
            let (o_map, r_map) = source_map(s.before, s.after, s.rule, s.mesh, 0);
            for (result, maps) in [(false, &o_map), (true, &r_map)] {
                for (i, map) in maps.iter().enumerate() {
                    let Some(target) = value_of(Node { result, index: i }) else { continue };
                    for (a, edge) in map {
                        let Some(src) = value_of(edge.source) else { continue };
                        let Some(mut o) = self.lookup(g, src, a) else { continue };
                        o.axis = a.clone();
                        o.hops = o.hops.then(Hop {
                            op: op.origin,
                            op_name: op.name.to_string(),
                            from: edge.source,
                            to: edge.target,
                            phase: s.phase,
                        });
                        let key = g.shardable_value(target).unwrap_or(target);
                        add_origin(&mut self.origins, key, o);
                    }
                }
            }
        }
        // Conflicts: two tensors sharding a factor with axes neither of which is a
        // prefix of the other; every tensor of the factor missing some of them.
        let n_ops = s.before.operands.len();
        let node_of = |t: usize| {
            if t < n_ops {
                Node { result: false, index: t }
            } else {
                Node { result: true, index: t - n_ops }
            }
        };
        if let Some(start) = op.origin {
            let clashes = clashes(s, &node_of);
            if clashes.is_empty() {
                self.clashes.remove(&start);
            } else {
                self.clashes.insert(start, clashes);
            }
        }
        for f in 0..s.rule.factor_sizes.len() {
            let had: SmallVec<[(usize, &[AxisRef]); 8]> = (0..s.before.num_tensors())
                .filter_map(|t| s.before.tensor(t).factor(f).map(|x| (t, x.axes.as_slice())))
                .filter(|(_, a)| !a.is_empty())
                .collect();
            // No tensor has axes on the factor: nothing to conflict or to drop.
            if had.is_empty() {
                continue;
            }
            let mut conflicting: SmallVec<[usize; 8]> = SmallVec::new();
            for (i, (ti, ai)) in had.iter().enumerate() {
                for (tj, aj) in had.iter().skip(i + 1) {
                    if ai != aj
                        && list_prefix_status(ai, aj) == PrefixStatus::NotAPrefix
                        && list_prefix_status(aj, ai) == PrefixStatus::NotAPrefix
                    {
                        for t in [*ti, *tj] {
                            if !conflicting.contains(&t) {
                                conflicting.push(t);
                            }
                        }
                    }
                }
            }
            if conflicting.is_empty() {
                self.factor_conflicts(s, f, &node_of, &value_of);
                self.blocked_axes(s, f, &had, &node_of, &value_of);
                continue;
            }
            let sources: Vec<(Node, Vec<AxisRef>)> = had
                .iter()
                .filter(|(t, _)| conflicting.contains(t))
                .map(|(t, a)| (node_of(*t), a.to_vec()))
                .collect();
            for t in 0..s.after.num_tensors() {
                let Some(fs) = s.after.tensor(t).factor(f) else { continue };
                let mut dropped: Vec<AxisRef> = Vec::new();
                for (_, axes) in &sources {
                    for a in axes {
                        if !fs.axes.iter().any(|x| axis::overlaps(x, a)) && !dropped.contains(a) {
                            dropped.push(a.clone());
                        }
                    }
                }
                if dropped.is_empty() {
                    continue;
                }
                let node = node_of(t);
                let Some(v) = value_of(node) else { continue };
                let key = g.shardable_value(v).unwrap_or(v);
                let c = Conflict {
                    op: op.origin,
                    op_name: op.name.to_string(),
                    node,
                    dropped,
                    kept: fs.axes.clone(),
                    source_dims: sources.iter().map(|(n, _)| dim_of(s, *n, f)).collect(),
                    sources: sources.clone(),
                    phase: s.phase,
                    factor: factor_symbol(f as i64),
                    dim: dim_of(s, node, f),
                    kept_priority: self.kept_priority(s, v, &fs.axes),
                };
                let list = self.conflicts.entry(key).or_default();
                if !list.iter().any(|x| {
                    x.op == c.op
                        && x.node == c.node
                        && x.dropped == c.dropped
                        && x.op_name == c.op_name
                }) {
                    list.push(c);
                }
            }
        }
    }

    fn group_sync(&mut self, g: &Graph, from: ValueId, to: ValueId, _s: &TensorSharding) {
        self.group_sync_impl(g, from, to);
    }
}

impl Explainer {
    /// Axes of factor `f` a tensor could have taken (they are compatible across the
    /// op) but that another factor of the tensor, or its replicated/unreduced axes,
    /// already use.
    fn factor_conflicts(
        &mut self,
        s: &Step<'_>,
        f: usize,
        node_of: &dyn Fn(usize) -> Node,
        value_of: &dyn Fn(Node) -> Option<ValueId>,
    ) {
        // The candidates are never longer than the longest axes of the factor before the
        // step, and only axes past a tensor's own can be dropped: without an open tensor
        // shorter than that there is nothing to find.
        let longest = (0..s.before.num_tensors())
            .filter_map(|t| s.before.tensor(t).factor(f))
            .map(|x| x.axes.len())
            .max()
            .unwrap_or(0);
        let shorter = (0..s.after.num_tensors())
            .filter_map(|t| s.after.tensor(t).factor(f))
            .any(|x| !x.closed && x.axes.len() < longest);
        if !shorter {
            return;
        }
        let g = s.graph;
        let op = &g.nodes[s.op];
        let cands =
            super::factor::compatible_major_axes(s.before, f, super::factor::Direction::Both);
        if cands.is_empty() {
            return;
        }
        for t in 0..s.after.num_tensors() {
            let tf = s.after.tensor(t);
            let Some(fs) = tf.factor(f) else { continue };
            if !crate::sharding::axis::is_strict_prefix(&fs.axes, &cands) || fs.closed {
                continue;
            }
            let mut dropped = Vec::new();
            for d in cands.iter().skip(fs.axes.len()) {
                let used_elsewhere = tf
                    .factors
                    .iter()
                    .enumerate()
                    .filter(|(h, _)| *h != f)
                    .filter_map(|(_, x)| x.as_ref())
                    .any(|x| x.axes.iter().chain(&x.overflow).any(|a| axis::overlaps(a, d)))
                    || tf.replicated.iter().chain(&tf.unreduced).any(|a| axis::overlaps(a, d));
                if used_elsewhere {
                    dropped.push(d.clone());
                }
            }
            if dropped.is_empty() {
                continue;
            }
            let sources: Vec<(Node, Vec<AxisRef>)> = (0..s.before.num_tensors())
                .filter_map(|u| s.before.tensor(u).factor(f).map(|x| (u, x.axes.clone())))
                .filter(|(_, a)| dropped.iter().any(|d| a.contains(d)))
                .map(|(u, a)| (node_of(u), a))
                .collect();
            let node = node_of(t);
            let Some(v) = value_of(node) else { continue };
            let key = g.shardable_value(v).unwrap_or(v);
            let c = Conflict {
                op: op.origin,
                op_name: op.name.to_string(),
                node,
                dropped,
                kept: fs.axes.clone(),
                source_dims: sources.iter().map(|(n, _)| dim_of(s, *n, f)).collect(),
                sources,
                phase: s.phase,
                factor: factor_symbol(f as i64),
                dim: dim_of(s, node, f),
                kept_priority: self.kept_priority(s, v, &fs.axes),
            };
            let list = self.conflicts.entry(key).or_default();
            if !list.iter().any(|x| {
                x.op == c.op && x.node == c.node && x.dropped == c.dropped && x.op_name == c.op_name
            }) {
                list.push(c);
            }
        }
    }

    /// Tensors of factor `f` left without axes another tensor had on it (`had`: the
    /// tensors with axes before the step), because their dimension is closed, the axes
    /// are explicitly replicated in them, or the op is a propagation barrier.
    fn blocked_axes(
        &mut self,
        s: &Step<'_>,
        f: usize,
        had: &[(usize, &[AxisRef])],
        node_of: &dyn Fn(usize) -> Node,
        value_of: &dyn Fn(Node) -> Option<ValueId>,
    ) {
        let g = s.graph;
        let op = &g.nodes[s.op];
        let barrier = op.kind == OpKind::SdyPropagationBarrier;
        let Some(&(from_t, axes)) = had.iter().max_by_key(|(_, a)| a.len()) else { return };
        for t in 0..s.after.num_tensors() {
            let tf = s.after.tensor(t);
            let Some(fs) = tf.factor(f) else { continue };
            if t == from_t || !fs.axes.is_empty() {
                continue;
            }
            let replicated: Vec<AxisRef> = axes
                .iter()
                .filter(|a| tf.replicated.iter().any(|r| axis::overlaps(r, a)))
                .cloned()
                .collect();
            // An open dimension without these axes replicated takes them, unless it is
            // held for its user priority (the common case costs nothing more).
            let open = !barrier && replicated.is_empty() && !fs.closed;
            if open && self.held.is_empty() {
                continue;
            }
            let node = node_of(t);
            let Some(v) = value_of(node) else { continue };
            let key = g.shardable_value(v).unwrap_or(v);
            let dim = dim_of(s, node, f);
            let round = s.phase.user_priority;
            let held = self
                .held
                .get(&key)
                .and_then(|h| h.iter().find(|(d, p)| Some(*d) == dim && *p > round).map(|x| x.1));
            if open && held.is_none() {
                continue;
            }
            // Manual axes show as replicated (or closed) in the computation's view.
            let (manual_op, manual) = manual_axes_around(s, v);
            let manual: Vec<AxisRef> =
                axes.iter().filter(|a| manual.iter().any(|m| **m == *a.name)).cloned().collect();
            let (cause, blocked) = if barrier {
                (BlockCause::Barrier, axes.to_vec())
            } else if !manual.is_empty() {
                (BlockCause::Manual { op: manual_op }, manual)
            } else if let Some(priority) = held {
                (BlockCause::Priority { priority, round }, axes.to_vec())
            } else if !replicated.is_empty() {
                (BlockCause::Replicated, replicated)
            } else if fs.closed {
                (BlockCause::Closed, axes.to_vec())
            } else {
                continue;
            };
            let b = Blocked {
                op: op.origin,
                op_name: op.name.to_string(),
                node,
                dim,
                factor: factor_symbol(f as i64),
                axes: blocked,
                from: node_of(from_t),
                cause,
                phase: s.phase,
            };
            let list = self.blocked.entry(key).or_default();
            if !list.iter().any(|x| x.op == b.op && x.node == b.node && x.axes == b.axes) {
                list.push(b);
            }
        }
    }

    /// The user priority the kept axes of `v` came from, when lower than the step's
    /// round (see [`Conflict::kept_priority`]).
    fn kept_priority(&self, s: &Step<'_>, v: ValueId, kept: &[AxisRef]) -> Option<i64> {
        let round = s.phase.user_priority;
        if round == 0 {
            return None;
        }
        kept.iter()
            .filter_map(|a| self.lookup(s.graph, v, a))
            .map(|o| o.priority)
            .filter(|&p| p < round)
            .min()
    }

    fn group_sync_impl(&mut self, g: &Graph, from: ValueId, to: ValueId) {
        let key = g.shardable_value(to).unwrap_or(to);
        for o in self.origins_of(g, from) {
            add_origin(&mut self.origins, key, o);
        }
    }
}

/// The `sdy.manual_computation` (its start) that `v` is an operand, result or block
/// argument of (through its data-flow edge), and its manual axes.
fn manual_axes_around(s: &Step<'_>, v: ValueId) -> (Option<u32>, Vec<String>) {
    let g = s.graph;
    let mut v = v;
    for _ in 0..2 {
        let owner = match g.def(v) {
            Some(Def::Result { op, .. }) | Some(Def::Arg { op, .. }) => op,
            None => break,
        };
        match g.nodes[owner].name.as_str() {
            "sdy.manual_computation" => {
                return (g.nodes[owner].origin, manual_axes(g.op(s.module, owner)));
            }
            "sdy.data_flow_edge" => match g.nodes[owner].operands.first() {
                Some(&input) => v = input,
                None => break,
            },
            _ => break,
        }
    }
    (None, Vec::new())
}

/// The axes two factors of the step's op both have (in any of its tensors, after the
/// step).
fn clashes(s: &Step<'_>, node_of: &dyn Fn(usize) -> Node) -> Vec<Clash> {
    let n = s.rule.factor_sizes.len();
    // Most steps have axes on one factor at most: nothing to allocate for them.
    let sharded = (0..n)
        .filter(|&f| {
            (0..s.after.num_tensors())
                .any(|t| s.after.tensor(t).factor(f).is_some_and(|x| !x.axes.is_empty()))
        })
        .count();
    if sharded < 2 {
        return Vec::new();
    }
    let mut per: Vec<Vec<(&AxisRef, Node)>> = vec![Vec::new(); n];
    for t in 0..s.after.num_tensors() {
        for (f, fs) in s.after.tensor(t).factors.iter().enumerate().take(n) {
            for a in fs.iter().flat_map(|x| &x.axes) {
                per[f].push((a, node_of(t)));
            }
        }
    }
    let mut out: Vec<Clash> = Vec::new();
    let op_name = s.graph.nodes[s.op].name.to_string();
    for f in 0..n {
        for h in f + 1..n {
            for &(a, _) in &per[f] {
                if out.iter().any(|c| c.axis == *a)
                    || !per[h].iter().any(|(b, _)| axis::overlaps(a, b))
                {
                    continue;
                }
                let side = |k: usize| -> ClashSide {
                    let mut nodes: Vec<(Node, Option<usize>)> = per[k]
                        .iter()
                        .filter(|(b, _)| axis::overlaps(a, b))
                        .map(|&(_, node)| (node, dim_of(s, node, k)))
                        .collect();
                    nodes.dedup();
                    ClashSide { factor: factor_symbol(k as i64), tensors: nodes }
                };
                out.push(Clash {
                    op_name: op_name.clone(),
                    axis: a.clone(),
                    sides: vec![side(f), side(h)],
                });
            }
        }
    }
    out
}

/// The dimension of the tensor at `n` that factor `f` of the step's rule stands for.
fn dim_of(s: &Step<'_>, n: Node, f: usize) -> Option<usize> {
    let mapping = if n.result { s.rule.results.get(n.index) } else { s.rule.operands.get(n.index) };
    mapping?.iter().position(|factors| factors.contains(&f))
}

/// Runs propagation on a chunk the way `-sdy-add-data-flow-edges
/// -sdy-apply-sharding-constraints -sdy-<level>-propagate -sdy-sink-data-flow-edges`
/// does, and explains the result.
pub fn infer(src: &str, chunk: &Chunk, model: &Model, opts: &InferOptions) -> Inference {
    let mut m = crate::ir::build_module(src, chunk);
    let written = written_shardings(&m);
    edges::add_data_flow_edges(&mut m);
    constraints::apply_sharding_constraints(&mut m);
    let mut ex = Explainer::default();
    ex.prepare(&m);
    let mut o = Options::new(opts.level);
    o.strategy = opts.strategy;
    o.conservative = opts.conservative;
    let (out, tracer) = run_strategy_traced(&mut m, model, src, &o, Some(Box::new(ex)), &RunToEnd);
    let ex = tracer
        .and_then(|t| t.as_any().downcast::<Explainer>().ok())
        .map(|b| *b)
        .unwrap_or_default();
    // Edge results hand their origins to their owners before the edges go away.
    let edge_of = edge_map(&m);
    edges::sink_data_flow_edges(&mut m, false, false);
    let values = reports(&m, &ex, &edge_of, &written);
    Inference { module: m, values, warnings: out.warnings, failure: out.failure }
}

/// The shardings written in the source, per site.
fn written_shardings(m: &Module) -> Vec<(Site, ValueId, Option<TensorSharding>)> {
    sites(m)
}

fn sites(m: &Module) -> Vec<(Site, ValueId, Option<TensorSharding>)> {
    let g = Graph::build(m);
    let mut out = Vec::new();
    for i in g.pre_order() {
        let n = &g.nodes[i];
        let Some(at) = n.origin else { continue };
        if n.kind == OpKind::FuncFunc {
            let args = n.args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
            for (k, &a) in args.iter().enumerate() {
                out.push((Site::Arg { func: at, index: k }, a, g.sharding(m, a)));
            }
            if let Some(t) = g.terminator(i, 0) {
                for (k, &v) in g.nodes[t].operands.iter().enumerate() {
                    out.push((
                        Site::Result { func: at, index: k },
                        v,
                        g.func_result_sharding(m, i, k),
                    ));
                }
            }
            continue;
        }
        for (k, &r) in n.results.iter().enumerate() {
            out.push((Site::OpResult { op: at, index: k }, r, g.sharding(m, r)));
        }
    }
    out
}

fn reports(
    m: &Module,
    ex: &Explainer,
    edge_of: &HashMap<ValueId, ValueId>,
    written: &[(Site, ValueId, Option<TensorSharding>)],
) -> Vec<ValueReport> {
    let mut out = Vec::new();
    for (site, v, inferred) in sites(m) {
        let before = written.iter().find(|(s, _, _)| *s == site).and_then(|x| x.2.clone());
        // Origins recorded on the value, or on its data-flow edge.
        let keys: Vec<ValueId> =
            [Some(v), edge_of.get(&v).copied()].into_iter().flatten().collect();
        let mut known: Vec<AxisOrigin> = Vec::new();
        let mut conflicts: Vec<Conflict> = Vec::new();
        for k in &keys {
            if let Some(l) = ex.origins.get(k) {
                for o in l {
                    if !known.iter().any(|x| x.axis == o.axis) {
                        known.push(o.clone());
                    }
                }
            }
            if let Some(c) = ex.conflicts.get(k) {
                conflicts.extend(c.iter().cloned());
            }
        }
        if inferred.is_none() && before.is_none() && conflicts.is_empty() {
            continue;
        }
        let mut axes = Vec::new();
        if let Some(s) = &inferred {
            for d in &s.dims {
                for a in &d.axes {
                    let o = known.iter().find(|o| o.axis == *a).or_else(|| {
                        known
                            .iter()
                            .find(|o| axis::contains(&o.axis, a) || axis::contains(a, &o.axis))
                    });
                    if let Some(o) = o {
                        let mut o = o.clone();
                        o.axis = a.clone();
                        axes.push(o);
                    }
                }
            }
        }
        out.push(ValueReport { site, value: v, written: before, inferred, axes, conflicts });
    }
    out
}
