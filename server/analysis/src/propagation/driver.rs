//! The propagation driver shared by every strategy (Shardy's `BasicPropagationPassImpl`):
//! a worklist over the module's ops (MLIR's greedy rewrite driver: pre-order, LIFO,
//! unused side-effect-free ops erased), propagating through each op's sharding rule,
//! propagation barriers, data-flow edges and function data-flow edges, keeping sharding
//! groups in sync, and the main function's results.

use super::control::{Control, Flow, RunToEnd};
use super::factor::{propagate_aggressive, propagate_basic, Direction, FactorPropagation};
use super::graph::*;
use super::ops::{identity_rule, is_elementwise_op, op_purity, rule_from_print, tensor_type};
use super::projection::Projection;
use super::trace::{Step, Tracer};
use crate::ir::{Attr, Module, Op, OpKind, ValueId};
use crate::model::{Model, OpId};
use crate::print::printer::print_op_at;
use crate::rules::memo::Verdict;
use crate::rules::{self, OpDesc, OpShardingRule, RuleOptions, Unknown};
use crate::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// Once-flags of the registry's warnings (shared with `-sdy-populate-op-sharding-rules`).
pub const ONCE_CUSTOM_CALL: &str = "sharding-rule-registry/unknown-custom-call";
pub const ONCE_OP: &str = "sharding-rule-registry/unknown-op";

/// How the direction of each (op, factor) is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirFn {
    /// Both directions (`propagateAny`).
    Any,
    /// The union of the op-priority heuristics `0..=p`.
    OpPriority(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DirMode {
    Fn(DirFn),
    Fixed(Direction),
}

/// Where a tensor of a propagation step keeps its sharding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Value(ValueId),
    /// Result `i` of a function (its result attribute).
    FuncResult(OpIdx, usize),
    /// The targets of data-flow edge op (their sharding, seen from the sources).
    EdgeTarget(OpIdx),
}

/// A warning a pass emits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Emitted only the first time in a process (MLIR's `call_once`).
    pub once_key: Option<&'static str>,
    /// Absolute offset of the op's location.
    pub at: u32,
    /// The origin of the op (for the note that prints it).
    pub origin: Option<u32>,
    pub message: String,
    /// The op as printed when the warning was raised (MLIR's note shows it then, not
    /// as the pass leaves it).
    pub op_text: Option<String>,
}

/// An error that makes the pass fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub at: u32,
    pub origin: Option<u32>,
    pub message: String,
}

pub struct Driver<'a> {
    pub m: &'a mut Module,
    /// The pipeline's shared index ([`Graph::shared`]): equal to a fresh build.
    pub g: Rc<Graph>,
    pub model: &'a Model,
    pub src: &'a str,
    by_origin: FxHashMap<u32, OpId>,
    /// `getOrCreateShardingRule` results: rules by op (`None` before the first
    /// lookup), shared (not copied) by every visit.
    pub rules: Vec<Option<Option<Arc<OpShardingRule>>>>,
    /// Ops whose rule was created (attached) during this pass.
    pub created: FxHashSet<OpIdx>,
    /// The registry's rules by op description (hash of name and types): ops alike
    /// share one rule.
    shared: FxHashMap<u64, Vec<(OpDesc, Arc<OpShardingRule>)>>,
    /// Keeps the registry's verdicts on the model's ops for the run.
    _rules_memo: rules::memo::Scope<'a>,
    /// By op: what its last visit that changed nothing read.
    quiet: Vec<Option<Quiet>>,
    /// The same for the steps between a function's returned values and its results.
    quiet_results: FxHashMap<(OpIdx, usize), Quiet>,
    /// By op: how many times a sharding stored on it was written (see [`Stamp`]).
    versions: Vec<u32>,
    pub conservative: bool,
    pub group_of: FxHashMap<ValueId, i64>,
    pub groups: BTreeMap<i64, Vec<ValueId>>,
    /// By op: its [`kind`] flags (from its name, types and target, fixed per index).
    kinds: Vec<u8>,
    worklist: Vec<OpIdx>,
    in_list: Vec<bool>,
    current: Option<OpIdx>,
    pub warnings: Vec<Warning>,
    pub tracer: Option<Box<dyn Tracer>>,
    /// The propagation phase now running (reported to the tracer).
    pub phase: Phase,
    /// Asked between the ops of the worklist whether to go on.
    pub control: &'a dyn Control,
    /// The control said stop: the run is abandoned, the module half propagated.
    pub stopped: bool,
}

/// What a visit of an op that wrote nothing read: the factor strategy, the directions
/// and the shardings (as stamps). A visit reading the same (same op, so same rule and
/// mesh) would compute the same nothing, so it is skipped.
struct Quiet {
    strategy: FactorPropagation,
    dirs: SmallVec<[Direction; 8]>,
    stamps: SmallVec<[Stamp; 4]>,
    /// Every factor had the same axes in all its tensors: no strategy and no direction
    /// can change anything, and a tracer has nothing to record (see `Tracer`).
    converged: bool,
}

/// Where a slot's sharding is stored (the op holding it) and how many times it was
/// written there: equal stamps, equal shardings.
type Stamp = (Option<OpIdx>, u32);

impl Quiet {
    fn matches(&self, strategy: FactorPropagation, dirs: &[Direction], stamps: &[Stamp]) -> bool {
        self.stamps[..] == *stamps
            && (self.converged || (self.strategy == strategy && self.dirs[..] == *dirs))
    }
}

/// Which step a [`Quiet`] is remembered for.
#[derive(Clone, Copy)]
enum Memo {
    Op(OpIdx),
    FuncResult(OpIdx, usize),
}

/// Where in the strategy hierarchy the driver is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phase {
    /// The user priority being propagated (0 for the first round).
    pub user_priority: i64,
    /// The op-priority level (`None` outside op-priority propagation).
    pub op_level: Option<usize>,
    /// Whether this run uses the aggressive factor strategy.
    pub aggressive: bool,
}

impl<'a> Driver<'a> {
    pub fn new(
        m: &'a mut Module,
        model: &'a Model,
        src: &'a str,
        conservative: bool,
    ) -> Driver<'a> {
        let g = Graph::shared(m);
        let by_origin = model.ops.iter().enumerate().map(|(i, o)| (o.start, i as OpId)).collect();
        let mut d = Driver {
            m,
            g,
            model,
            src,
            by_origin,
            rules: Vec::new(),
            created: FxHashSet::default(),
            shared: FxHashMap::default(),
            _rules_memo: rules::memo::scope(model, src),
            quiet: Vec::new(),
            quiet_results: Default::default(),
            versions: Vec::new(),
            conservative,
            group_of: FxHashMap::default(),
            groups: BTreeMap::new(),
            kinds: Vec::new(),
            worklist: Vec::new(),
            in_list: Vec::new(),
            current: None,
            warnings: Vec::new(),
            tracer: None,
            phase: Phase::default(),
            control: &RunToEnd,
            stopped: false,
        };
        d.build_groups();
        d.kinds = d.compute_kinds();
        d
    }

    /// Rebuilds the index after the module's structure changed.
    pub fn rebuild(&mut self) {
        self.g = Graph::shared(self.m);
        self.rules.clear();
        self.forget_quiet();
        self.created.clear();
        self.kinds = self.compute_kinds();
        self.build_groups();
    }

    /// The absolute location of op `i` (its name) and its origin.
    pub fn loc(&self, i: OpIdx) -> (u32, Option<u32>) {
        let mut j = i;
        loop {
            if let Some(o) = self.g.nodes[j].origin {
                let at = self.by_origin.get(&o).map_or(o, |&id| self.model.op(id).loc());
                return (at, if j == i { Some(o) } else { None });
            }
            match self.g.nodes[j].parent {
                Some(p) => j = p,
                None => return (0, None),
            }
        }
    }

    // ----- shape check -----

    /// Shardy's `allValidShapes`: every op result must be a static ranked tensor (or a
    /// non-shaped type) and not a tuple.
    pub fn check_shapes(&self) -> Result<(), Failure> {
        for i in self.g.pre_order() {
            for &r in &self.g.nodes[i].results {
                let ty = self.m.ty(r).unwrap_or("");
                let msg = match ValueType::parse(ty) {
                    ValueType::Ranked(d) if d.iter().any(Option::is_none) => format!(
                        "Shardy propagation only supports ranked tensors with a static shape. type: {ty}"
                    ),
                    ValueType::Other(t) if t.starts_with("tensor<*") => format!(
                        "Shardy propagation only supports ranked tensors with a static shape. type: {ty}"
                    ),
                    ValueType::Tuple(_) => {
                        format!("Shardy propagation doesn't support tuples: {ty}")
                    }
                    _ => continue,
                };
                let (at, origin) = self.loc(i);
                return Err(Failure { at, origin, message: msg });
            }
        }
        Ok(())
    }

    // ----- rules -----

    fn op_desc_from_ir(&self, i: OpIdx) -> OpDesc {
        let n = &self.g.nodes[i];
        let ty = |v: ValueId| tensor_type(self.m.ty(v).unwrap_or(""));
        OpDesc {
            name: n.name.to_string(),
            operands: n.operands.iter().map(|&v| ty(v)).collect(),
            results: n.results.iter().map(|&v| ty(v)).collect(),
            ..Default::default()
        }
    }

    /// The rule of op `i` (`getOrCreateShardingRule`): its `sdy.sharding_rule`, else the
    /// registry's (remembered as attached).
    pub fn rule(&mut self, i: OpIdx) -> Option<Arc<OpShardingRule>> {
        if let Some(Some(r)) = self.rules.get(i) {
            return r.clone();
        }
        let op = self.g.op(self.m, i);
        let r = if let Some(Attr::Rule(pr)) = op.attr("sdy.sharding_rule") {
            rule_from_print(pr).map(Arc::new)
        } else {
            match self.g.nodes[i].origin.and_then(|o| self.by_origin.get(&o)) {
                Some(&id) if self.model.op(id).name() == self.g.nodes[i].name => {
                    let opts = RuleOptions { conservative: self.conservative };
                    let verdict = rules::memo::registry(self.model, id, self.src, &opts);
                    self.take_verdict(i, verdict)
                }
                _ => {
                    let desc = self.op_desc_from_ir(i);
                    self.registry_rule(i, desc)
                }
            }
        };
        if self.rules.len() <= i {
            self.rules.resize(self.g.nodes.len().max(i + 1), None);
        }
        self.rules[i] = Some(r.clone());
        r
    }

    /// The registry's rule of op `i` described by `desc`, shared with the ops alike.
    fn registry_rule(&mut self, i: OpIdx, desc: OpDesc) -> Option<Arc<OpShardingRule>> {
        let key = desc.shape_key();
        if let Some((_, r)) = self.shared.get(&key).and_then(|b| b.iter().find(|(d, _)| *d == desc))
        {
            self.created.insert(i);
            return Some(r.clone());
        }
        let opts = RuleOptions { conservative: self.conservative };
        let verdict = Verdict::of(rules::create_rule(&desc, &opts));
        if let Verdict::Rule(r) = &verdict {
            self.shared.entry(key).or_default().push((desc, r.clone()));
        }
        self.take_verdict(i, verdict)
    }

    /// The rule of op `i` from the registry's verdict; an unknown op is warned about.
    fn take_verdict(&mut self, i: OpIdx, verdict: Verdict) -> Option<Arc<OpShardingRule>> {
        match verdict {
            Verdict::Rule(r) => {
                self.created.insert(i);
                Some(r)
            }
            Verdict::Unknown(u) => {
                let key = match u {
                    Unknown::CustomCall(_) => ONCE_CUSTOM_CALL,
                    Unknown::Op(_) => ONCE_OP,
                };
                let (at, origin) = self.loc(i);
                // Only the first warning of a kind is ever shown.
                let first = !self.warnings.iter().any(|w| w.once_key == Some(key));
                let op_text = origin.filter(|_| first).and_then(|o| print_op_at(self.m, o));
                self.warnings.push(Warning {
                    once_key: Some(key),
                    at,
                    origin,
                    message: u.message(),
                    op_text,
                });
                None
            }
            Verdict::NoRule => None,
        }
    }

    /// Writes the attached rules (`keep`), or removes every non-custom rule.
    pub fn finish_rules(&mut self, keep: bool) {
        if keep {
            let mut created: Vec<OpIdx> = self.created.iter().copied().collect();
            created.sort_unstable();
            for i in created {
                if self.g.erased[i] {
                    continue;
                }
                if let Some(Some(Some(r))) = self.rules.get(i) {
                    let pr = r.to_print();
                    self.g.op_mut(self.m, i).set_attr("sdy.sharding_rule", Attr::Rule(pr));
                }
            }
        } else {
            self.m.top.walk_mut(&mut |op: &mut Op| {
                if let Some(Attr::Rule(r)) = op.attr("sdy.sharding_rule") {
                    if !r.custom {
                        op.remove_attr("sdy.sharding_rule");
                    }
                }
            });
        }
    }

    /// Removes the ops erased as dead from the module (call last: paths change).
    pub fn remove_erased(&mut self) {
        let paths: Vec<Path> = (0..self.g.nodes.len())
            .filter(|&i| {
                self.g.erased[i] && self.g.nodes[i].parent.is_some_and(|p| !self.g.erased[p])
            })
            .map(|i| self.g.nodes[i].path.clone())
            .collect();
        remove_ops(self.m, paths);
    }

    // ----- sharding groups -----

    fn build_groups(&mut self) {
        self.group_of.clear();
        self.groups.clear();
        for i in self.g.pre_order() {
            if self.g.nodes[i].kind != OpKind::SdyShardingGroup {
                continue;
            }
            let id = match self.g.op(self.m, i).prop("group_id") {
                Some(Attr::Int { value, .. }) => *value as i64,
                _ => continue,
            };
            let Some(&input) = self.g.nodes[i].operands.first() else { continue };
            self.group_of.entry(input).or_insert(id);
            self.groups.entry(id).or_default().push(input);
        }
    }

    pub fn group_members(&self, v: ValueId) -> Vec<ValueId> {
        match self.group_of.get(&v) {
            Some(id) => self.groups.get(id).cloned().unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// `syncGroupMemberShardings`: gives every member of a group the common sharding,
    /// or inserts open sharding constraints after every member of a conflicting group.
    pub fn sync_groups(&mut self) {
        let groups: Vec<(i64, Vec<ValueId>)> =
            self.groups.iter().map(|(k, v)| (*k, v.clone())).collect();
        let mut inserted = false;
        for (id, members) in groups {
            let (sharding, conflict) = self.common_group_sharding(&members);
            let Some(sharding) = sharding else { continue };
            if !conflict {
                for &v in &members {
                    self.g.set_sharding(self.m, v, sharding.clone());
                }
                continue;
            }
            if let Some(first_owner) = self.g.owner(members[0]) {
                // Shardy warns at the op's location, without a note showing it.
                let (at, _) = self.loc(first_owner);
                self.warnings.push(Warning {
                    once_key: None,
                    at,
                    origin: None,
                    op_text: None,
                    message: format!(
                        "The initial operand shardings on the sharding groups of groupID: {id} do not match. Inserting an open sharding constraint to all constrained values. This can be caused when shardings from different values are grouped (e.g. from jax.shard_alike) but have separate inconsistent sharding constraints on them."
                    ),
                });
            }
            let open = open_sharding(&sharding.mesh, sharding.dims.len());
            for &v in &members {
                self.insert_constraint_after(v, open.clone());
                inserted = true;
            }
        }
        if inserted {
            self.rebuild();
        } else {
            self.forget_quiet();
        }
    }

    fn common_group_sharding(&self, members: &[ValueId]) -> (Option<TensorSharding>, bool) {
        if members.len() == 1 {
            return (self.g.sharding(self.m, members[0]), false);
        }
        let mut common: Option<TensorSharding> = None;
        for &v in members {
            let Some(s) = self.g.sharding(self.m, v) else { continue };
            if fully_replicated_and_open(&s) {
                continue;
            }
            match &common {
                None => common = Some(s),
                Some(c) if *c != s => return (common, true),
                Some(_) => {}
            }
        }
        (common, false)
    }

    /// Inserts `sdy.sharding_constraint v sharding` right after `v`'s definition and
    /// routes every other use of `v` through it. Rebuilds the index.
    pub fn insert_constraint_after(&mut self, v: ValueId, sharding: TensorSharding) -> ValueId {
        let ty = self.m.ty(v).map(str::to_string);
        let nv = self.m.new_value(ty);
        self.m.top.replace_uses(v, nv);
        let mut op = Op::pretty("sdy.sharding_constraint", vec![v], vec![nv], Vec::new());
        op.set_prop("sharding", Attr::Sharding(sharding));
        let (path, index) = match self.g.def(v) {
            Some(Def::Result { op: d, .. }) => {
                let p = &self.g.nodes[d].path;
                let (last, parent) = p.split_last().expect("non-root");
                let mut parent = Path::from(parent);
                parent.push((last.0, last.1, 0));
                (parent, last.2 + 1)
            }
            Some(Def::Arg { op: o, region, block, .. }) => {
                let mut p = self.g.nodes[o].path.clone();
                p.push((region, block, 0));
                (p, 0)
            }
            None => return nv,
        };
        let (last, parent) = path.split_last().expect("non-root");
        let owner = op_at_path_mut(self.m, parent);
        owner.regions[last.0].blocks[last.1].ops.insert(index, op);
        self.g = Graph::shared(self.m);
        self.rules.clear();
        self.forget_quiet();
        self.created.clear();
        self.kinds = self.compute_kinds();
        nv
    }

    // ----- worklist -----

    /// Adds `op` and its ancestors below the module (MLIR's `addToWorklist`).
    fn push(&mut self, op: OpIdx) {
        if Some(op) == self.current {
            return;
        }
        let mut o = op;
        loop {
            let parent = self.g.nodes[o].parent;
            if parent.is_none() {
                break;
            }
            if !self.in_list[o] && !self.g.erased[o] {
                self.in_list[o] = true;
                self.worklist.push(o);
            }
            match parent {
                Some(p) if self.g.nodes[p].parent.is_some() => o = p,
                _ => break,
            }
        }
    }

    fn would_be_dead(&self, i: OpIdx) -> bool {
        let kind = self.g.nodes[i].kind;
        let purity = if kind == OpKind::StablehloCustomCall {
            op_purity(self.g.op(self.m, i))
        } else {
            kind.purity()
        };
        match purity {
            None => false,
            Some(false) => true,
            Some(true) => self.g.nodes[i]
                .children
                .iter()
                .flatten()
                .flatten()
                .all(|&c| self.g.erased[c] || self.would_be_dead(c)),
        }
    }

    fn is_trivially_dead(&self, i: OpIdx) -> bool {
        let n = &self.g.nodes[i];
        if is_terminator(&n.name) || n.kind == OpKind::FuncFunc || n.kind == OpKind::SdyMesh {
            return false;
        }
        n.results.iter().all(|&r| self.g.live_uses(r).next().is_none()) && self.would_be_dead(i)
    }

    fn erase(&mut self, i: OpIdx) {
        // Nested ops first (post-order), like MLIR's `eraseOp`: the defining op of an
        // operand left with at most one other user is revisited.
        let mut order = Vec::new();
        fn post(g: &Graph, i: OpIdx, out: &mut Vec<OpIdx>) {
            for r in &g.nodes[i].children {
                for b in r {
                    for &c in b {
                        post(g, c, out);
                    }
                }
            }
            out.push(i);
        }
        post(&self.g, i, &mut order);
        let mut revisit = Vec::new();
        for x in order {
            if self.g.erased[x] {
                continue;
            }
            for &v in &self.g.nodes[x].operands {
                let Some(Def::Result { op: d, .. }) = self.g.def(v) else { continue };
                let others: FxHashSet<OpIdx> =
                    self.g.live_uses(v).map(|(u, _)| u).filter(|&u| u != x).collect();
                if others.len() <= 1 {
                    revisit.push(d);
                }
            }
            // Copied on the first erasure only (the index is shared with the pipeline).
            Rc::make_mut(&mut self.g).erased[x] = true;
        }
        for d in revisit {
            if !self.g.erased[d] {
                self.push(d);
            }
        }
    }

    /// One run of the driver with factor strategy `strategy` (Shardy's
    /// `BasicPropagationPassImpl::propagate`).
    pub fn propagate(&mut self, strategy: FactorPropagation, dir: DirFn) {
        if self.stopped {
            return;
        }
        self.phase.aggressive = strategy == FactorPropagation::Aggressive;
        self.phase.op_level = match dir {
            DirFn::OpPriority(p) => Some(p),
            DirFn::Any => None,
        };
        let main = self.g.main_func(self.m);
        if let Some(f) = main {
            self.propagate_func_results(f, strategy);
        }
        let order = self.g.pre_order();
        self.in_list = vec![false; self.g.nodes.len()];
        self.worklist.clear();
        for &i in order.iter().rev() {
            self.in_list[i] = true;
            self.worklist.push(i);
        }
        while let Some(op) = self.worklist.pop() {
            if self.control.pause() == Flow::Stop {
                self.stopped = true;
                self.worklist.clear();
                return;
            }
            self.in_list[op] = false;
            if self.g.erased[op] {
                continue;
            }
            if self.is_trivially_dead(op) {
                self.erase(op);
                continue;
            }
            self.current = Some(op);
            self.visit(op, strategy, dir);
            self.current = None;
        }
        if let Some(f) = main {
            self.propagate_func_results(f, strategy);
        }
    }

    fn visit(&mut self, op: OpIdx, strategy: FactorPropagation, dir: DirFn) {
        // The kind of op, without copying its name on every visit.
        let name = match self.g.nodes[op].name.as_str() {
            n @ ("sdy.propagation_barrier" | "sdy.data_flow_edge" | "sdy.func_data_flow_edge") => n,
            _ => "",
        };
        match name {
            "sdy.propagation_barrier" => {
                let n = &self.g.nodes[op];
                let (Some(&input), Some(&result)) = (n.operands.first(), n.results.first()) else {
                    return;
                };
                let Some(shape) = self.g.ty(self.m, result).static_shape() else { return };
                let allowed = match self.g.op(self.m, op).prop("allowed_direction") {
                    Some(a) => {
                        let t = crate::ir::attr::attr_to_string(a);
                        let w = t.rsplit([' ', '<']).next().unwrap_or("").trim_end_matches('>');
                        Direction::parse(w).unwrap_or(Direction::None)
                    }
                    None => Direction::None,
                };
                self.propagate_tensors(
                    op,
                    &[Slot::Value(input)],
                    &[Slot::Value(result)],
                    &identity_rule(&shape, 1),
                    DirMode::Fixed(allowed),
                    strategy,
                    self.conservative,
                    true,
                );
            }
            "sdy.data_flow_edge" => {
                let n = &self.g.nodes[op];
                let (Some(&input), Some(&result)) = (n.operands.first(), n.results.first()) else {
                    return;
                };
                let Some(shape) = self.g.ty(self.m, result).static_shape() else { return };
                let sources: Vec<Slot> =
                    self.g.edge_sources(input).into_iter().map(Slot::Value).collect();
                self.propagate_tensors(
                    op,
                    &sources,
                    &[Slot::EdgeTarget(op)],
                    &identity_rule(&shape, sources.len()),
                    DirMode::Fn(dir),
                    strategy,
                    false,
                    true,
                );
            }
            "sdy.func_data_flow_edge" => {
                let n = &self.g.nodes[op];
                let (Some(&input), Some(&result)) = (n.operands.first(), n.results.first()) else {
                    return;
                };
                let Some(shape) = self.g.ty(self.m, result).static_shape() else { return };
                let mut sources = Vec::new();
                match self.g.def(input) {
                    Some(Def::Arg { op: f, index, .. })
                        if self.g.nodes[f].kind == OpKind::FuncFunc =>
                    {
                        let sym = self.g.op(self.m, f).func().map(|fi| fi.sym.clone());
                        let calls =
                            sym.and_then(|s| self.g.callers.get(&s).cloned()).unwrap_or_default();
                        for c in calls {
                            if self.g.erased[c] {
                                continue;
                            }
                            if let Some(&v) = self.g.nodes[c].operands.get(index) {
                                sources.push(Slot::Value(v));
                            }
                        }
                        if sources.is_empty() {
                            return;
                        }
                    }
                    Some(Def::Result { op: call, index })
                        if self.g.nodes[call].kind == OpKind::FuncCall =>
                    {
                        let callee = super::irutil::callee(self.g.op(self.m, call));
                        let Some(f) = callee.and_then(|c| self.g.funcs.get(&c).copied()) else {
                            return;
                        };
                        if let Some(t) = self.g.terminator(f, 0) {
                            if self.g.nodes[t].kind == OpKind::FuncReturn {
                                if let Some(&v) = self.g.nodes[t].operands.get(index) {
                                    sources.push(Slot::Value(v));
                                }
                            }
                        }
                    }
                    _ => return,
                }
                self.propagate_tensors(
                    op,
                    &sources,
                    &[Slot::Value(result)],
                    &identity_rule(&shape, sources.len()),
                    DirMode::Fn(dir),
                    strategy,
                    false,
                    true,
                );
            }
            _ => {
                let Some(rule) = self.rule(op) else { return };
                let n = &self.g.nodes[op];
                if rule.operands.len() != n.operands.len() || rule.results.len() != n.results.len()
                {
                    return;
                }
                let operands: SmallVec<[Slot; 4]> =
                    n.operands.iter().map(|&v| Slot::Value(v)).collect();
                let results: SmallVec<[Slot; 4]> =
                    n.results.iter().map(|&v| Slot::Value(v)).collect();
                self.propagate_tensors(
                    op,
                    &operands,
                    &results,
                    &rule,
                    DirMode::Fn(dir),
                    strategy,
                    self.conservative,
                    true,
                );
            }
        }
    }

    /// `propagateFuncResults`: between each returned value and the function's result
    /// attribute, identity rule, both directions, no worklist notifications.
    pub fn propagate_func_results(&mut self, func: OpIdx, strategy: FactorPropagation) {
        let Some(t) = self.g.terminator(func, 0) else { return };
        let operands = self.g.nodes[t].operands.clone();
        for (i, v) in operands.into_iter().enumerate() {
            let Some(shape) = self.g.ty(self.m, v).static_shape() else { continue };
            self.propagate_tensors(
                func,
                &[Slot::Value(v)],
                &[Slot::FuncResult(func, i)],
                &identity_rule(&shape, 1),
                DirMode::Fixed(Direction::Both),
                strategy,
                false,
                false,
            );
        }
    }

    fn set_slot(&mut self, s: Slot, sharding: TensorSharding) {
        self.bump(self.storage(s));
        match s {
            Slot::Value(v) => self.g.set_sharding(self.m, v, sharding),
            Slot::FuncResult(f, i) => self.g.set_func_result_sharding(self.m, f, i, sharding),
            Slot::EdgeTarget(e) => {
                if let Some(t) = self.g.transform_target_sharding(self.m, e, Some(sharding), false)
                {
                    self.g.op_mut(self.m, e).set_prop("sharding", Attr::Sharding(t));
                }
            }
        }
    }

    /// The value whose sharding a slot updates (for notifications and groups).
    fn slot_value(&self, s: Slot) -> Option<ValueId> {
        match s {
            Slot::Value(v) => self.g.shardable_value(v),
            Slot::FuncResult(..) => None,
            Slot::EdgeTarget(e) => self.g.nodes[e].results.first().copied(),
        }
    }

    /// Forgets every [`Quiet`] (the shardings were written behind the driver's back, or
    /// the index changed).
    pub fn forget_quiet(&mut self) {
        self.quiet.clear();
        self.quiet_results.clear();
        self.versions.clear();
    }

    /// The op that stores the sharding of a slot ([`Driver::slot_ref`] reads it there).
    fn storage(&self, s: Slot) -> Option<OpIdx> {
        match s {
            Slot::Value(v) => self.g.shardable_value(v).and_then(|sv| self.g.owner(sv)),
            Slot::FuncResult(f, _) => Some(f),
            Slot::EdgeTarget(e) => Some(e),
        }
    }

    fn stamp(&self, s: Slot) -> Stamp {
        let version = |o: OpIdx| self.versions.get(o).copied().unwrap_or(0);
        let k = self.storage(s);
        let mut n = k.map_or(0, version);
        // A manual computation's edge targets are read through its own shardings.
        if let Slot::EdgeTarget(e) = s {
            if let Some(owner) = self.g.nodes[e].operands.first().and_then(|&v| self.g.owner(v)) {
                n = n.wrapping_add(version(owner));
            }
        }
        (k, n)
    }

    /// Records a write of a sharding stored on op `k`.
    fn bump(&mut self, k: Option<OpIdx>) {
        let Some(o) = k else { return };
        if self.versions.len() <= o {
            self.versions.resize(self.g.nodes.len().max(o + 1), 0);
        }
        self.versions[o] = self.versions[o].wrapping_add(1);
    }

    /// The common mesh of the shardings (`getCommonMeshName`).
    pub fn common_mesh(&self, shardings: &[&Option<TensorSharding>]) -> Option<(MeshRef, Mesh)> {
        let mut chosen: Option<(MeshRef, Mesh)> = None;
        for s in shardings.iter().filter_map(|s| s.as_ref()) {
            let Some(other) = self.g.mesh(&s.mesh) else { continue };
            match &chosen {
                None => chosen = Some((s.mesh.clone(), other)),
                Some((_, cur)) if mesh_is_empty(cur) => chosen = Some((s.mesh.clone(), other)),
                Some((_, cur)) => {
                    if mesh_is_empty(&other) {
                        continue;
                    }
                    if other != *cur {
                        return None;
                    }
                }
            }
        }
        chosen
    }

    /// The sharding in a slot, borrowed from the module where it is stored as is.
    fn slot_ref(&self, s: Slot) -> Option<Cow<'_, TensorSharding>> {
        match s {
            Slot::Value(v) => self.g.sharding_ref(self.m, v),
            Slot::FuncResult(f, i) => {
                self.g.func_result_sharding_ref(self.m, f, i).map(Cow::Borrowed)
            }
            Slot::EdgeTarget(e) => {
                let own = sharding_of_ref(self.g.op(self.m, e).prop("sharding"))?;
                let input = *self.g.nodes[e].operands.first()?;
                let owner = self.g.owner(input)?;
                if self.g.op(self.m, owner).kind != OpKind::SdyManualComputation {
                    return Some(Cow::Borrowed(own));
                }
                self.g.transform_target_sharding(self.m, e, Some(own.clone()), true).map(Cow::Owned)
            }
        }
    }

    /// [`Driver::common_mesh`] without copies.
    fn common_mesh_ref<'s>(
        &'s self,
        shardings: &[Option<&'s TensorSharding>],
    ) -> Option<(&'s MeshRef, &'s Mesh)> {
        let mut chosen: Option<(&MeshRef, &Mesh)> = None;
        for s in shardings.iter().flatten() {
            let Some(other) = self.g.mesh_ref(&s.mesh) else { continue };
            match chosen {
                None => chosen = Some((&s.mesh, other)),
                Some((_, cur)) if mesh_is_empty(cur) => chosen = Some((&s.mesh, other)),
                Some((_, cur)) => {
                    if mesh_is_empty(other) {
                        continue;
                    }
                    if other != cur {
                        return None;
                    }
                }
            }
        }
        chosen
    }

    /// Propagates through one op (or edge): reads the shardings of the slots (borrowed),
    /// runs the factor strategy and computes the new shardings, then writes those that
    /// changed.
    #[allow(clippy::too_many_arguments)]
    fn propagate_tensors(
        &mut self,
        op: OpIdx,
        operands: &[Slot],
        results: &[Slot],
        rule: &OpShardingRule,
        dir: DirMode,
        strategy: FactorPropagation,
        conservative: bool,
        notify: bool,
    ) -> bool {
        let n_o = operands.len();
        let slot = |i: usize| if i < n_o { operands[i] } else { results[i - n_o] };
        let (writes, trace, quiet) = 'read: {
            // The part of the direction that does not depend on the factor, once per visit.
            let op_dir = match dir {
                DirMode::Fn(df) => self.op_direction(op, df),
                DirMode::Fixed(d) => d,
            };
            let dirs: SmallVec<[Direction; 8]> = (0..rule.factor_sizes.len())
                .map(|f| {
                    if rule.is_blocked(f) {
                        Direction::None
                    } else {
                        match dir {
                            DirMode::Fixed(d) => d,
                            DirMode::Fn(df) => self.factor_direction(op, f, df, op_dir),
                        }
                    }
                })
                .collect();
            // Without a factor that may move, the step changes nothing: skip it before
            // reading any sharding (a tracer still sees it).
            if self.tracer.is_none() && dirs.iter().all(|&d| d == Direction::None) {
                return false;
            }
            // Calls that notify are the visits of op `op` (one call each, with its own
            // rule); the others are a function's result steps. A skipped step would trace
            // what the earlier one traced with the same projections, which tracers record
            // once (`Tracer::step`), so skipping is invisible to them.
            let memo = match (notify, results) {
                (true, _) => Some(Memo::Op(op)),
                (false, &[Slot::FuncResult(f, i)]) => Some(Memo::FuncResult(f, i)),
                _ => None,
            };
            let stamps: SmallVec<[Stamp; 4]> = match memo {
                Some(_) => operands.iter().chain(results).map(|&s| self.stamp(s)).collect(),
                None => SmallVec::new(),
            };
            let last = match memo {
                Some(Memo::Op(o)) => self.quiet.get(o).and_then(Option::as_ref),
                Some(Memo::FuncResult(f, i)) => self.quiet_results.get(&(f, i)),
                None => None,
            };
            if last.is_some_and(|q| q.matches(strategy, &dirs, &stamps)) {
                return false;
            }
            let quiet =
                |dirs, converged| memo.map(|k| (k, Quiet { strategy, dirs, stamps, converged }));
            let sh: SmallVec<[Option<Cow<'_, TensorSharding>>; 4]> =
                operands.iter().chain(results).map(|&s| self.slot_ref(s)).collect();
            let all: SmallVec<[Option<&TensorSharding>; 4]> =
                sh.iter().map(|s| s.as_deref()).collect();
            // Without any axis there is nothing to propagate (nor to trace: see `Tracer`).
            if all.iter().flatten().all(|s| s.dims.iter().all(|d| d.axes.is_empty())) {
                break 'read (Vec::new(), None, quiet(dirs, false));
            }
            let Some((mesh_ref, mesh)) = self.common_mesh_ref(&all) else {
                break 'read (Vec::new(), None, quiet(dirs, false));
            };
            if mesh.axes.is_empty() && mesh.device_ids.len() == 1 {
                break 'read (Vec::new(), None, quiet(dirs, false));
            }
            // Converged without projecting: the common case of a neighbour's change that
            // left this op's tensors in agreement (nothing to trace either: see `Tracer`).
            if dims_agree(rule, &all) {
                break 'read (Vec::new(), None, quiet(dirs, true));
            }
            let mut proj = Projection::build_refs(&all[..n_o], &all[n_o..], rule, mesh, false);
            let converged = converged(&proj, rule.factor_sizes.len());
            let before = match self.tracer.as_deref() {
                Some(t) if t.wants(&proj) => Some(proj.clone()),
                _ => None,
            };
            let dir_of = |f: usize| dirs[f];
            let up = match strategy {
                FactorPropagation::Basic => {
                    propagate_basic(&mut proj, &dir_of, &rule.factor_sizes, mesh, conservative)
                }
                FactorPropagation::Aggressive => propagate_aggressive(
                    &mut proj,
                    &dir_of,
                    &rule.factor_sizes,
                    mesh,
                    conservative,
                    self.is_elementwise(op),
                ),
            };
            // The new shardings of the tensors that changed, compared with the ones read.
            let mut writes: Vec<(usize, TensorSharding)> = Vec::new();
            for (i, &changed) in up.operands.iter().chain(&up.results).enumerate() {
                if !changed {
                    continue;
                }
                let (tfs, mapping) = if i < n_o {
                    (&proj.operands[i], &rule.operands[i])
                } else {
                    (&proj.results[i - n_o], &rule.results[i - n_o])
                };
                let new = tfs.to_sharding(mapping, &rule.factor_sizes, mesh_ref, mesh);
                let old = all[i];
                if (old.is_none() && empty_axes(&new)) || old == Some(&new) {
                    continue;
                }
                writes.push((i, new));
            }
            // The mesh is looked up again for the tracer after the writes.
            let trace = before.map(|b| (b, proj, mesh_ref.clone()));
            let quiet = if writes.is_empty() { quiet(dirs, converged) } else { None };
            (writes, trace, quiet)
        };
        match quiet {
            Some((Memo::Op(o), q)) => {
                if self.quiet.len() <= o {
                    self.quiet.resize_with(self.g.nodes.len().max(o + 1), || None);
                }
                self.quiet[o] = Some(q);
            }
            Some((Memo::FuncResult(f, i), q)) => {
                self.quiet_results.insert((f, i), q);
            }
            None => {}
        }
        let mut any = false;
        for (i, new) in writes {
            any |= self.write_tensor(slot(i), new, notify);
        }
        if let Some((before, after, mesh_ref)) = trace {
            let Some(mesh) = self.g.mesh_ref(&mesh_ref) else { return any };
            let vals = |slots: &[Slot], d: &Driver<'_>| -> Vec<ValueId> {
                slots
                    .iter()
                    .map(|&s| match s {
                        Slot::Value(v) => v,
                        Slot::EdgeTarget(e) => d.g.nodes[e].results[0],
                        Slot::FuncResult(..) => match operands.first() {
                            Some(Slot::Value(v)) => *v,
                            _ => 0,
                        },
                    })
                    .collect()
            };
            let ov = vals(operands, self);
            let rv = vals(results, self);
            let func_results = results.iter().any(|s| matches!(s, Slot::FuncResult(..)));
            if let Some(t) = self.tracer.as_deref_mut() {
                t.step(&Step {
                    graph: &self.g,
                    module: &*self.m,
                    op,
                    operands: &ov,
                    results: &rv,
                    func_results,
                    before: &before,
                    after: &after,
                    rule,
                    mesh,
                    changed: any,
                    phase: self.phase,
                });
            }
        }
        any
    }

    /// Writes the new sharding of a slot (one that differs from the old) and notifies
    /// the users and the sharding group; returns whether it changed.
    fn write_tensor(&mut self, slot: Slot, new: TensorSharding, notify: bool) -> bool {
        if matches!(slot, Slot::FuncResult(..)) {
            self.set_slot(slot, new);
            return true;
        }
        self.set_slot(slot, new.clone());
        if let Slot::Value(v) = slot {
            // A value with no place for a sharding (an argument of an op that is not a
            // function or a data-flow op) did not change; saying it did would revisit
            // its users forever.
            if self.g.sharding_ref(self.m, v).as_deref() != Some(&new) {
                return false;
            }
        }
        let Some(v) = self.slot_value(slot) else { return true };
        if notify {
            self.notify_sharding_modified(v);
        }
        for member in self.group_members(v) {
            if member == v {
                continue;
            }
            self.bump(self.storage(Slot::Value(member)));
            self.g.set_sharding(self.m, member, new.clone());
            if let Some(t) = self.tracer.as_deref_mut() {
                t.group_sync(&self.g, v, member, &new);
            }
            if notify {
                if let Some(mv) = self.g.shardable_value(member) {
                    self.notify_sharding_modified(mv);
                } else {
                    self.notify_sharding_modified(member);
                }
            }
        }
        true
    }

    /// Queues the users of `v`. Through `func.call`s it follows values into callees and
    /// out of their returns into every call site; a value already seen is skipped,
    /// because two call sites of one function can lead back to each other.
    fn notify_users_modified(&mut self, v: ValueId) {
        self.notify_users_once(v, &mut FxHashSet::default());
    }

    fn notify_users_once(&mut self, v: ValueId, seen: &mut FxHashSet<ValueId>) {
        if !seen.insert(v) {
            return;
        }
        // MLIR's use lists put the newest use first.
        let uses: Vec<(OpIdx, usize)> = self.g.live_uses(v).collect();
        for (user, i) in uses.into_iter().rev() {
            if let Some(e) = self.g.edge_of_source(user, i) {
                self.push(e);
                continue;
            }
            let name = self.g.nodes[user].name.as_str();
            let (is_return, is_call) = (name == "func.return", name == "func.call");
            if is_terminator(name) {
                let Some(parent) = self.g.nodes[user].parent else { continue };
                if is_return {
                    let sym = self.g.op(self.m, parent).func().map(|f| f.sym.clone());
                    let calls: Vec<OpIdx> = sym
                        .and_then(|s| self.g.callers.get(&s).cloned())
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|&c| !self.g.erased[c])
                        .collect();
                    if calls.is_empty() {
                        self.push(parent);
                    } else {
                        for c in calls {
                            if let Some(&r) = self.g.nodes[c].results.get(i) {
                                self.notify_users_once(r, seen);
                            }
                        }
                    }
                } else {
                    self.push(parent);
                }
                continue;
            }
            if is_call {
                let callee = super::irutil::callee(self.g.op(self.m, user));
                if let Some(f) = callee.and_then(|c| self.g.funcs.get(&c).copied()) {
                    let arg = self.g.nodes[f]
                        .args
                        .first()
                        .and_then(|r| r.first())
                        .and_then(|b| b.get(i))
                        .copied();
                    if let Some(a) = arg {
                        self.notify_users_once(a, seen);
                    }
                }
                continue;
            }
            self.push(user);
        }
    }

    fn notify_sharding_modified(&mut self, v: ValueId) {
        if let Some(Def::Result { op: d, .. }) = self.g.def(v) {
            if self.g.nodes[d].kind == OpKind::SdyDataFlowEdge {
                if let Some(&input) = self.g.nodes[d].operands.first() {
                    for t in self.g.non_owner_targets(input) {
                        self.notify_users_modified(t);
                    }
                }
            }
        }
        if let Some(o) = self.g.owner(v) {
            self.push(o);
        }
        self.notify_users_modified(v);
    }

    // ----- directions -----

    fn dir_by_uses(&self, op: OpIdx, multi: bool) -> Direction {
        if multi {
            return Direction::Both;
        }
        let any_multi = self.g.nodes[op].operands.iter().any(|&v| {
            // The type is parsed only for values without exactly one use.
            let mut uses = self.g.live_uses(v);
            let one = uses.next().is_some() && uses.next().is_none();
            !one && !matches!(self.g.ty(self.m, v), ValueType::Ranked(ref d) if d.is_empty())
        });
        if any_multi {
            Direction::None
        } else {
            Direction::Both
        }
    }

    fn compute_kinds(&self) -> Vec<u8> {
        (0..self.g.nodes.len()).map(|i| self.kind_of(i)).collect()
    }

    /// The [`kind`] flags of op `op`.
    fn kind_of(&self, op: OpIdx) -> u8 {
        let n = &self.g.nodes[op];
        let name = n.name.as_str();
        // Only `bitcast_convert` looks at the types: parse them for it alone.
        let elementwise = if n.kind == OpKind::StablehloBitcastConvert {
            let o = n.operands.first().map(|&v| self.g.ty(self.m, v));
            let r = n.results.first().map(|&v| self.g.ty(self.m, v));
            is_elementwise_op(n.kind, o.as_ref(), r.as_ref())
        } else {
            is_elementwise_op(n.kind, None, None)
        };
        let offload = name == "stablehlo.custom_call"
            && (matches!(
                str_attr(self.g.op(self.m, op).prop("call_target_name")).as_deref(),
                Some("MoveToDevice" | "MoveToHost")
            ) || self.is_offload_custom_call(op));
        let by_uses = elementwise
            || offload
            || matches!(
                name,
                "stablehlo.reshape"
                    | "stablehlo.transpose"
                    | "sdy.data_flow_edge"
                    | "sdy.func_data_flow_edge"
            );
        let mut k = 0;
        if elementwise {
            k |= kind::ELEMENTWISE;
        }
        if by_uses {
            k |= kind::BY_USES;
        } else if matches!(name, "stablehlo.dynamic_slice" | "stablehlo.dynamic_update_slice") {
            k |= kind::FORWARD_BY_USES;
        }
        if name == "stablehlo.broadcast_in_dim" {
            k |= kind::BROADCAST;
        }
        k
    }

    fn kind(&self, op: OpIdx) -> u8 {
        self.kinds.get(op).copied().unwrap_or_else(|| self.kind_of(op))
    }

    fn is_elementwise(&self, op: OpIdx) -> bool {
        self.kind(op) & kind::ELEMENTWISE != 0
    }

    fn heuristic(&self, level: usize, op: OpIdx, f: usize) -> Direction {
        let k = self.kind(op);
        let broadcast = k & kind::BROADCAST != 0;
        match level {
            0 | 1 => {
                let multi = level == 1;
                if k & kind::BY_USES != 0 {
                    return self.dir_by_uses(op, multi);
                }
                if k & kind::FORWARD_BY_USES != 0 {
                    return self.dir_by_uses(op, multi).intersect(Direction::Forward);
                }
                Direction::None
            }
            2 => {
                if let Some(Some(Some(r))) = self.rules.get(op) {
                    if !r.is_pass_through(f) {
                        return Direction::None;
                    }
                }
                if broadcast {
                    Direction::Backward
                } else {
                    Direction::Both
                }
            }
            3 => {
                if broadcast {
                    Direction::Backward
                } else {
                    Direction::Both
                }
            }
            _ => Direction::Both,
        }
    }

    fn is_offload_custom_call(&self, op: OpIdx) -> bool {
        let target = match self.g.nodes[op].origin.and_then(|o| self.by_origin.get(&o)) {
            Some(&id) => {
                let info = self.model.op(id);
                let text = self
                    .src
                    .get(info.start as usize..(info.start + info.node.len) as usize)
                    .unwrap_or("");
                rules::InherentAttrs::of_op(&info.node, text).call_target().map(str::to_string)
            }
            None => None,
        };
        matches!(target.as_deref(), Some("MoveToDevice" | "MoveToHost"))
    }

    pub fn direction(&self, op: OpIdx, f: usize, dir: DirFn) -> Direction {
        self.factor_direction(op, f, dir, self.op_direction(op, dir))
    }

    /// The union of the heuristics of `dir` that do not depend on the factor (every
    /// level but 2). Level 0 is left out above level 0: level 1 gives the same
    /// direction or a larger one for every op.
    fn op_direction(&self, op: OpIdx, dir: DirFn) -> Direction {
        match dir {
            DirFn::Any => Direction::Both,
            DirFn::OpPriority(p) => {
                let mut d = Direction::None;
                for level in 0..=p.min(4) {
                    if level == 2 || (level == 0 && p >= 1) {
                        continue;
                    }
                    d = d.union(self.heuristic(level, op, 0));
                    if d == Direction::Both {
                        break;
                    }
                }
                d
            }
        }
    }

    /// [`Driver::direction`] from the op's part `op_dir` ([`Driver::op_direction`]).
    fn factor_direction(&self, op: OpIdx, f: usize, dir: DirFn, op_dir: Direction) -> Direction {
        match dir {
            DirFn::Any => Direction::Both,
            DirFn::OpPriority(p) => {
                let mut d = op_dir;
                if p >= 2 && d != Direction::Both {
                    d = d.union(self.heuristic(2, op, f));
                }
                d.intersect(Direction::Both)
            }
        }
    }
}

/// Whether every factor has the same axes in all the tensors that have it: then the
/// compatible axes of each factor are its axes, which no tensor can grow by.
fn converged(p: &Projection, factors: usize) -> bool {
    (0..factors).all(|f| {
        let mut axes = p.tensors().filter_map(|t| t.factor(f)).map(|fs| &fs.axes);
        match axes.next() {
            Some(first) => axes.all(|a| a == first),
            None => true,
        }
    })
}

/// Whether every factor lies in the same dimension (same factors, same axes) of all the
/// tensors that have it: their projections then give each factor the same axes in all
/// of them (see [`converged`]).
fn dims_agree(rule: &OpShardingRule, all: &[Option<&TensorSharding>]) -> bool {
    if all.len() != rule.operands.len() + rule.results.len() {
        return false;
    }
    // By factor: the factors and axes of the first dimension that has it.
    type Dim<'a> = (&'a [usize], &'a [AxisRef]);
    let mut first: SmallVec<[Option<Dim<'_>>; 8]> =
        SmallVec::from_elem(None, rule.factor_sizes.len());
    for (mapping, s) in rule.operands.iter().chain(&rule.results).zip(all) {
        for (d, dim) in mapping.iter().enumerate() {
            let axes: &[AxisRef] = s.and_then(|s| s.dims.get(d)).map_or(&[], |d| &d.axes);
            for &f in dim {
                match first.get_mut(f) {
                    Some(Some((l, a))) => {
                        if *l != dim.as_slice() || *a != axes {
                            return false;
                        }
                    }
                    Some(slot) => *slot = Some((dim.as_slice(), axes)),
                    None => return false,
                }
            }
        }
    }
    true
}

/// Flags of an op for the op-priority heuristics (levels 0 and 1 follow the uses of
/// element-wise, offload, reshape, transpose and data-flow edge ops, forward only for
/// dynamic slices; broadcasts propagate backward).
mod kind {
    pub const ELEMENTWISE: u8 = 1;
    pub const BY_USES: u8 = 2;
    pub const FORWARD_BY_USES: u8 = 4;
    pub const BROADCAST: u8 = 8;
}

pub fn mesh_is_empty(m: &Mesh) -> bool {
    m.axes.is_empty() && m.device_ids.is_empty()
}
