//! Where inferred shardings come from (Shardy's `source_sharding.cc`): the
//! `debug-sharding-origins` attributes (`sdy.sharding_origins = {a = "input: 0"}`) and
//! the `debug-propagation-edge-sharding` attributes
//! (`sdy.propagation_edges = #sdy.propagation_edges<[{step-0 = [...]}]>`).

use super::graph::*;
use super::projection::{Projection, TensorFactorShardings};
use super::trace::{Step, Tracer};
use crate::ir::attr::NamedAttr;
use crate::ir::OpKind;
use crate::ir::{Attr, Module, ValueId};
use crate::rules::{OpShardingRule, TensorMapping};
use crate::sharding::axis::{self, list_prefix_status, PrefixStatus};
use crate::sharding::{AxisRef, Mesh, TensorSharding};

/// Where a user sharding came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginKind {
    /// A function argument.
    Input,
    /// An `sdy.sharding_constraint`.
    Constraint,
    /// A function result.
    Output,
    /// A manual computation's in-sharding.
    McInput,
    /// A manual computation's out-sharding.
    McOutput,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub kind: OriginKind,
    pub index: usize,
    /// The number of the constraint / manual computation.
    pub source_id: usize,
}

impl Origin {
    /// `input: 0`, `constraint_1`, `mc_0_output: 1`.
    pub fn name(&self) -> String {
        match self.kind {
            OriginKind::Input => format!("input: {}", self.index),
            OriginKind::Output => format!("output: {}", self.index),
            OriginKind::Constraint => format!("constraint_{}", self.source_id),
            OriginKind::McInput => format!("mc_{}_input: {}", self.source_id, self.index),
            OriginKind::McOutput => format!("mc_{}_output: {}", self.source_id, self.index),
        }
    }
}

/// One end of an edge: operand or result `index` of the op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Node {
    pub result: bool,
    pub index: usize,
}

impl Node {
    pub fn name(&self) -> String {
        format!("{}-{}", if self.result { "result" } else { "operand" }, self.index)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub source: Node,
    pub target: Node,
    pub step: i64,
}

/// An ordered map (insertion order), like the DenseMaps iterated by Shardy in the
/// simple cases the tests cover.
pub type AxisMap<T> = Vec<(AxisRef, T)>;

fn try_emplace<T>(m: &mut AxisMap<T>, a: AxisRef, v: T) {
    if !m.iter().any(|(k, _)| *k == a) {
        m.push((a, v));
    }
}

/// An op identity that survives structural edits: its first result, else its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpKey {
    Result(ValueId),
    Path(super::graph::Path),
}

impl OpKey {
    pub fn of(g: &Graph, op: OpIdx) -> OpKey {
        match g.nodes[op].results.first() {
            Some(&r) => OpKey::Result(r),
            None => OpKey::Path(g.nodes[op].path.clone()),
        }
    }
    pub fn resolve(&self, g: &Graph) -> Option<OpIdx> {
        match self {
            OpKey::Result(v) => match g.def(*v)? {
                Def::Result { op, .. } => Some(op),
                _ => None,
            },
            OpKey::Path(p) => (0..g.nodes.len()).find(|&i| g.nodes[i].path == *p),
        }
    }
}

fn func_name(m: &Module, g: &Graph, f: OpIdx) -> String {
    g.op(m, f).func().map(|fi| fi.sym.clone()).unwrap_or_default()
}

/// The debug mappings of one pass.
#[derive(Default)]
pub struct Debug {
    pub origins_on: bool,
    pub edges_on: bool,
    pub step: i64,
    /// Per (shardable) value: axis -> origin.
    pub origins: Vec<(ValueId, AxisMap<Origin>)>,
    /// Per op (by key): axis -> edges.
    pub op_edges: Vec<(OpKey, AxisMap<Vec<Edge>>)>,
    /// Per function (by symbol): per result: axis -> edges.
    pub func_edges: Vec<(String, Vec<AxisMap<Vec<Edge>>>)>,
}

fn origins_of(d: &mut Debug, v: ValueId) -> &mut AxisMap<Origin> {
    if let Some(i) = d.origins.iter().position(|(k, _)| *k == v) {
        return &mut d.origins[i].1;
    }
    d.origins.push((v, Vec::new()));
    &mut d.origins.last_mut().expect("pushed").1
}

impl Debug {
    pub fn new(origins: bool, edges: bool) -> Debug {
        Debug { origins_on: origins, edges_on: edges, ..Default::default() }
    }
    pub fn enabled(&self) -> bool {
        self.origins_on || self.edges_on
    }

    fn save_origins(
        &mut self,
        g: &Graph,
        s: Option<&TensorSharding>,
        kind: OriginKind,
        v: ValueId,
        index: usize,
        source_id: usize,
    ) {
        let Some(s) = s else { return };
        // Like Shardy, a value gets an entry only once it has an axis: a sharding
        // without axes leaves no (empty) `sdy.sharding_origins` behind.
        if s.dims.iter().all(|d| d.axes.is_empty()) {
            return;
        }
        let key = g.shardable_value(v).unwrap_or(v);
        let map = origins_of(self, key);
        for d in &s.dims {
            for a in &d.axes {
                try_emplace(map, a.clone(), Origin { kind, index, source_id });
            }
        }
    }

    /// `prepareHandler`: the first step number and the initial origins.
    pub fn prepare(&mut self, m: &mut Module) {
        self.step = max_step(m) + 1;
        if self.edges_on {
            let g = Graph::build(m);
            for i in g.pre_order() {
                if g.nodes[i].kind == OpKind::FuncFunc && g.nodes[i].parent == Some(0) {
                    let n = g.op(m, i).func().map_or(0, |f| f.results.len());
                    self.func_edges.push((func_name(m, &g, i), vec![Vec::new(); n]));
                }
            }
        }
        if !self.origins_on {
            return;
        }
        let g = Graph::build(m);
        let order = super::edges::post_order(&g);
        let mut id = 0;
        for &i in &order {
            if g.nodes[i].kind != OpKind::SdyShardingConstraint {
                continue;
            }
            let s = sharding_of(g.op(m, i).prop("sharding"));
            let r = g.nodes[i].results[0];
            self.save_origins(&g, s.as_ref(), OriginKind::Constraint, r, 0, id);
            let name = Origin { kind: OriginKind::Constraint, index: 0, source_id: id }.name();
            g.op_mut(m, i).set_attr("sdy.sharding_origin_name", Attr::Str(name.into_bytes()));
            let operand = g.nodes[i].operands[0];
            let os = g.sharding(m, operand);
            self.save_origins(&g, os.as_ref(), OriginKind::Constraint, operand, 0, id);
            id += 1;
        }
        let mut id = 0;
        for &i in &order {
            if g.nodes[i].kind != OpKind::SdyManualComputation {
                continue;
            }
            let op = g.op(m, i);
            let ins = per_value(op.prop("in_shardings")).unwrap_or_default();
            let outs = per_value(op.prop("out_shardings")).unwrap_or_default();
            let args = g.nodes[i].args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
            for (k, s) in ins.iter().enumerate() {
                let Some(&a) = args.get(k) else { continue };
                if let Some(e) = g.edge_user(a) {
                    let er = g.nodes[e].results[0];
                    self.save_origins(&g, Some(s), OriginKind::McInput, er, k, id);
                    if let Some(&src) = g.edge_sources(a).first() {
                        let ss = g.sharding(m, src);
                        self.save_origins(&g, ss.as_ref(), OriginKind::McInput, src, k, id);
                    }
                }
            }
            for (k, s) in outs.iter().enumerate() {
                let Some(&r) = g.nodes[i].results.get(k) else { continue };
                if let Some(e) = g.edge_user(r) {
                    let er = g.nodes[e].results[0];
                    self.save_origins(&g, Some(s), OriginKind::McOutput, er, k, id);
                }
            }
            g.op_mut(m, i)
                .set_attr("sdy.sharding_origin_name", Attr::Str(format!("mc_{id}").into_bytes()));
            id += 1;
        }
        let funcs: Vec<OpIdx> = g.nodes[0]
            .children
            .first()
            .and_then(|r| r.first())
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|&i| g.nodes[i].kind == OpKind::FuncFunc)
            .collect();
        for f in funcs {
            let args = g.nodes[f].args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
            for (k, &a) in args.iter().enumerate() {
                let s = g.sharding(m, a);
                self.save_origins(&g, s.as_ref(), OriginKind::Input, a, k, 0);
            }
            if let Some(t) = g.terminator(f, 0) {
                for (k, &v) in g.nodes[t].operands.iter().enumerate() {
                    let s = g.func_result_sharding(m, f, k);
                    self.save_origins(&g, s.as_ref(), OriginKind::Output, v, k, 0);
                }
            }
        }
    }

    fn lookup_origin(&self, g: &Graph, v: ValueId, a: &AxisRef) -> Option<Origin> {
        let key = g.shardable_value(v).unwrap_or(v);
        let map = &self.origins.iter().find(|(k, _)| *k == key)?.1;
        if let Some((_, o)) = map.iter().find(|(k, _)| k == a) {
            return Some(*o);
        }
        map.iter().find(|(k, _)| axis::contains(k, a) || axis::contains(a, k)).map(|(_, o)| *o)
    }

    /// Records one step (`SourceShardingHandler::operator()`).
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        m: &Module,
        g: &Graph,
        op: OpIdx,
        operands: &[ValueId],
        results: &[ValueId],
        func_results: bool,
        before: &Projection,
        after: &Projection,
        rule: &OpShardingRule,
        mesh: &Mesh,
    ) {
        let (o_map, r_map) = source_map(before, after, rule, mesh, self.step);
        self.step += 1;
        for (kind, maps, vals) in [(false, &o_map, operands), (true, &r_map, results)] {
            for (i, map) in maps.iter().enumerate() {
                for (a, edge) in map {
                    if self.edges_on {
                        if func_results {
                            let fname = func_name(m, g, op);
                            if let Some((_, per)) =
                                self.func_edges.iter_mut().find(|(f, _)| *f == fname)
                            {
                                if let Some(slot) = per.get_mut(i) {
                                    push_edge(slot, a.clone(), *edge);
                                }
                            }
                        } else {
                            let key = OpKey::of(g, op);
                            let entry = match self.op_edges.iter().position(|(o, _)| *o == key) {
                                Some(p) => &mut self.op_edges[p].1,
                                None => {
                                    self.op_edges.push((key, Vec::new()));
                                    &mut self.op_edges.last_mut().expect("pushed").1
                                }
                            };
                            push_edge(entry, a.clone(), *edge);
                        }
                    }
                    if self.origins_on {
                        let src = if edge.source.result {
                            results.get(edge.source.index)
                        } else {
                            operands.get(edge.source.index)
                        };
                        let origin = src.and_then(|&s| self.lookup_origin(g, s, a));
                        if let (Some(o), Some(&v)) = (origin, vals.get(i)) {
                            let key = g.shardable_value(v).unwrap_or(v);
                            try_emplace(origins_of(self, key), a.clone(), o);
                        }
                    }
                    let _ = kind;
                }
            }
        }
    }

    /// `saveOnModule`.
    pub fn save(&self, m: &mut Module) {
        let g = Graph::build(m);
        if self.origins_on {
            for (v, map) in &self.origins {
                let dict = Attr::Dict(
                    map.iter()
                        .map(|(a, o)| {
                            NamedAttr::new(
                                a.to_string().replace('"', ""),
                                Attr::Str(o.name().into_bytes()),
                            )
                        })
                        .collect(),
                );
                let Some(owner) = g.owner(*v) else { continue };
                let func = {
                    let mut f = owner;
                    while g.nodes[f].kind != OpKind::FuncFunc {
                        match g.nodes[f].parent {
                            Some(p) => f = p,
                            None => break,
                        }
                    }
                    f
                };
                if let Some(t) = g.terminator(func, 0) {
                    if let Some(k) = g.nodes[t].operands.iter().position(|x| x == v) {
                        if let Some(slot) =
                            g.op_mut(m, func).func_mut().and_then(|fi| fi.results.get_mut(k))
                        {
                            slot.set_attr("sdy.sharding_origins", dict.clone());
                        }
                    }
                }
                match (g.nodes[owner].name.as_str(), g.def(*v)) {
                    ("func.func", Some(Def::Arg { index, .. })) => {
                        if let Some(slot) =
                            g.op_mut(m, owner).func_mut().and_then(|fi| fi.args.get_mut(index))
                        {
                            slot.set_attr("sdy.sharding_origins", dict);
                        }
                    }
                    ("sdy.sharding_constraint" | "sdy.data_flow_edge", _) => {
                        g.op_mut(m, owner).set_attr("sdy.sharding_origins", dict);
                    }
                    (_, Some(Def::Result { index, .. })) => {
                        let nres = g.nodes[owner].results.len();
                        let op = g.op_mut(m, owner);
                        let mut list = match op.attr("sdy.sharding_origins") {
                            Some(Attr::Array(l)) => l.clone(),
                            _ => vec![Attr::Dict(Vec::new()); nres],
                        };
                        if index < list.len() {
                            list[index] = dict;
                        }
                        op.set_attr("sdy.sharding_origins", Attr::Array(list));
                    }
                    _ => {}
                }
            }
            override_origins_to_self(m);
        }
        if self.edges_on {
            for (key, map) in &self.op_edges {
                let Some(op) = key.resolve(&g) else { continue };
                if g.nodes[op].kind == OpKind::FuncFunc {
                    continue;
                }
                if let Some(text) = propagation_edges_text(map) {
                    g.op_mut(m, op).set_attr("sdy.propagation_edges", Attr::Raw(text));
                }
            }
            for (fname, per) in &self.func_edges {
                let Some(&f) = g.funcs.get(fname) else { continue };
                for (k, map) in per.iter().enumerate() {
                    if let Some(text) = propagation_edges_text(map) {
                        if let Some(slot) =
                            g.op_mut(m, f).func_mut().and_then(|fi| fi.results.get_mut(k))
                        {
                            slot.set_attr("sdy.propagation_edges", Attr::Raw(text));
                        }
                    }
                }
            }
        }
    }
}

impl Tracer for Debug {
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
    fn step(&mut self, s: &Step<'_>) {
        if !s.changed {
            return;
        }
        self.record(
            s.module,
            s.graph,
            s.op,
            s.operands,
            s.results,
            s.func_results,
            s.before,
            s.after,
            s.rule,
            s.mesh,
        );
    }
}

fn push_edge(map: &mut AxisMap<Vec<Edge>>, a: AxisRef, e: Edge) {
    match map.iter_mut().find(|(k, _)| *k == a) {
        Some((_, v)) => v.push(e),
        None => map.push((a, vec![e])),
    }
}

/// The largest step of any `sdy.propagation_edges` in the module (-1 if none).
fn max_step(m: &Module) -> i64 {
    let mut max = -1i64;
    let mut scan = |a: &Attr| {
        let mut texts = Vec::new();
        match a {
            Attr::Raw(t) => texts.push(t.clone()),
            Attr::Array(l) => l.iter().for_each(|x| {
                if let Attr::Raw(t) = x {
                    texts.push(t.clone())
                }
            }),
            _ => {}
        }
        for t in texts {
            for part in t.split("{step-").skip(1) {
                let n: String = part.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(n) = n.parse::<i64>() {
                    max = max.max(n);
                }
            }
        }
    };
    m.top.walk(&mut |op| {
        for a in &op.attrs {
            if a.name == "sdy.propagation_edges" {
                scan(&a.value);
            }
        }
        if let Some(f) = op.func() {
            for s in f.results.iter().chain(&f.args) {
                if let Some(a) = s.attr("sdy.propagation_edges") {
                    scan(a);
                }
            }
        }
    });
    max
}

/// `createPropagationEdges`: `#sdy.propagation_edges<[{step-N = [{"a" = operand-0 -> [result-0]}]}]>`.
fn propagation_edges_text(map: &AxisMap<Vec<Edge>>) -> Option<String> {
    // axis -> source -> target -> edge with the minimum step.
    type Targets = Vec<(Node, Edge)>;
    let mut min: Vec<(AxisRef, Vec<(Node, Targets)>)> = Vec::new();
    for (a, edges) in map {
        let per_axis = match min.iter().position(|(k, _)| k == a) {
            Some(p) => &mut min[p].1,
            None => {
                min.push((a.clone(), Vec::new()));
                &mut min.last_mut().expect("pushed").1
            }
        };
        for e in edges {
            let per_source = match per_axis.iter().position(|(s, _)| *s == e.source) {
                Some(p) => &mut per_axis[p].1,
                None => {
                    per_axis.push((e.source, Vec::new()));
                    &mut per_axis.last_mut().expect("pushed").1
                }
            };
            match per_source.iter_mut().find(|(t, _)| *t == e.target) {
                Some((_, old)) => {
                    if e.step < old.step {
                        *old = *e;
                    }
                }
                None => per_source.push((e.target, *e)),
            }
        }
    }
    // step -> [(axis, source, targets)]
    type Entry = (AxisRef, Node, Vec<Node>);
    let mut steps: Vec<(i64, Vec<Entry>)> = Vec::new();
    for (a, sources) in &min {
        for (src, targets) in sources {
            for (t, e) in targets {
                let per_step = match steps.iter().position(|(s, _)| *s == e.step) {
                    Some(p) => &mut steps[p].1,
                    None => {
                        steps.push((e.step, Vec::new()));
                        &mut steps.last_mut().expect("pushed").1
                    }
                };
                match per_step.iter_mut().find(|(x, s, _)| x == a && s == src) {
                    Some((_, _, ts)) => {
                        if !ts.contains(t) {
                            ts.push(*t);
                        }
                    }
                    None => per_step.push((a.clone(), *src, vec![*t])),
                }
            }
        }
    }
    if steps.is_empty() {
        return None;
    }
    steps.sort_by_key(|(s, _)| *s);
    let mut out = String::from("#sdy.propagation_edges<[");
    for (i, (step, entries)) in steps.iter_mut().enumerate() {
        entries.sort_by(|x, y| x.0.name.cmp(&y.0.name));
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&format!("{{step-{step} = ["));
        for (j, (a, src, targets)) in entries.iter_mut().enumerate() {
            targets.sort();
            if j > 0 {
                out.push_str(", ");
            }
            let ts: Vec<String> = targets.iter().map(Node::name).collect();
            out.push_str(&format!("{{{a} = {} -> [{}]}}", src.name(), ts.join(", ")));
        }
        out.push_str("]}");
    }
    out.push_str("]>");
    Some(out)
}

/// `createSourceMap`: for each operand and result, the axes the step introduced and
/// the edge (source tensor -> this tensor) each came through.
pub fn source_map(
    before: &Projection,
    after: &Projection,
    rule: &OpShardingRule,
    mesh: &Mesh,
    step: i64,
) -> (Vec<AxisMap<Edge>>, Vec<AxisMap<Edge>>) {
    let mut ops: Vec<AxisMap<Edge>> = vec![Vec::new(); before.operands.len()];
    let mut res: Vec<AxisMap<Edge>> = vec![Vec::new(); before.results.len()];
    let visit = |old: &TensorFactorShardings,
                 new: &TensorFactorShardings,
                 target: Node,
                 mapping: &TensorMapping,
                 map: &mut AxisMap<Edge>| {
        for dim in mapping {
            let mut previous: Option<AxisRef> = None;
            for &f in dim {
                let (Some(of), Some(nf)) = (old.factor(f), new.factor(f)) else { continue };
                if of.axes == nf.axes {
                    continue;
                }
                let Some(last_raw) = nf.axes.last().cloned() else { continue };
                let mut last = last_raw.clone();
                if let Some(p) = &previous {
                    if axis::can_merge(p, &last) {
                        map.retain(|(k, _)| k != p);
                        last = axis::merge(p, &last, mesh);
                    }
                }
                previous = Some(last_raw);
                let mut introduced = nf.axes.clone();
                if let Some(l) = introduced.last_mut() {
                    *l = last;
                }
                let find = |ts: &[TensorFactorShardings]| {
                    ts.iter().position(|t| {
                        t.factor(f).is_some_and(|x| {
                            list_prefix_status(&nf.axes, &x.axes) != PrefixStatus::NotAPrefix
                        })
                    })
                };
                let source = match find(&before.operands) {
                    Some(k) => Some(Node { result: false, index: k }),
                    None => find(&before.results).map(|k| Node { result: true, index: k }),
                };
                if let Some(source) = source {
                    let edge = Edge { source, target, step };
                    let n_old = of.axes.len();
                    if n_old > 0
                        && introduced.len() >= n_old
                        && of.axes[n_old - 1] != introduced[n_old - 1]
                    {
                        try_emplace(map, introduced[n_old - 1].clone(), edge);
                    }
                    for a in introduced.iter().skip(n_old) {
                        try_emplace(map, a.clone(), edge);
                    }
                }
            }
        }
    };
    for (i, m) in ops.iter_mut().enumerate() {
        visit(
            &before.operands[i],
            &after.operands[i],
            Node { result: false, index: i },
            &rule.operands[i],
            m,
        );
    }
    for (i, m) in res.iter_mut().enumerate() {
        visit(
            &before.results[i],
            &after.results[i],
            Node { result: true, index: i },
            &rule.results[i],
            m,
        );
    }
    (ops, res)
}

fn self_dict(a: &Attr, name: &str) -> Option<Attr> {
    let Attr::Dict(d) = a else { return None };
    let mut changed = false;
    let out: Vec<NamedAttr> = d
        .iter()
        .map(|e| match &e.value {
            Attr::Str(s) if s == name.as_bytes() => {
                changed = true;
                NamedAttr::new(e.name.clone(), Attr::Str(b"self".to_vec()))
            }
            _ => e.clone(),
        })
        .collect();
    let _ = changed;
    Some(Attr::Dict(out))
}

/// `overrideOriginsToSelf`.
fn override_origins_to_self(m: &mut Module) {
    let g = Graph::build(m);
    for i in g.pre_order() {
        let name = g.nodes[i].name.clone();
        match name.as_str() {
            "sdy.sharding_constraint" => {
                let op = g.op_mut(m, i);
                let Some(Attr::Str(on)) = op.attr("sdy.sharding_origin_name").cloned() else {
                    continue;
                };
                let on = String::from_utf8_lossy(&on).into_owned();
                if let Some(d) = op.attr("sdy.sharding_origins").and_then(|a| self_dict(a, &on)) {
                    op.set_attr("sdy.sharding_origins", d);
                }
            }
            "func.func" if g.nodes[i].parent == Some(0) => {
                let op = g.op_mut(m, i);
                if let Some(fi) = op.func_mut() {
                    for (k, slot) in fi.args.iter_mut().enumerate() {
                        let n = Origin { kind: OriginKind::Input, index: k, source_id: 0 }.name();
                        if let Some(d) =
                            slot.attr("sdy.sharding_origins").and_then(|a| self_dict(a, &n))
                        {
                            slot.set_attr("sdy.sharding_origins", d);
                        }
                    }
                    for (k, slot) in fi.results.iter_mut().enumerate() {
                        let n = Origin { kind: OriginKind::Output, index: k, source_id: 0 }.name();
                        if let Some(d) =
                            slot.attr("sdy.sharding_origins").and_then(|a| self_dict(a, &n))
                        {
                            slot.set_attr("sdy.sharding_origins", d);
                        }
                    }
                }
            }
            "sdy.manual_computation" => {
                let Some(Attr::Str(on)) = g.op(m, i).attr("sdy.sharding_origin_name").cloned()
                else {
                    continue;
                };
                let on = String::from_utf8_lossy(&on).into_owned();
                let args =
                    g.nodes[i].args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
                for (k, &a) in args.iter().enumerate() {
                    if let Some(e) = g.edge_user(a) {
                        let op = g.op_mut(m, e);
                        if let Some(d) = op
                            .attr("sdy.sharding_origins")
                            .and_then(|x| self_dict(x, &format!("{on}_input: {k}")))
                        {
                            op.set_attr("sdy.sharding_origins", d);
                        }
                    }
                }
                for (k, &r) in g.nodes[i].results.clone().iter().enumerate() {
                    if let Some(e) = g.edge_user(r) {
                        let op = g.op_mut(m, e);
                        if let Some(d) = op
                            .attr("sdy.sharding_origins")
                            .and_then(|x| self_dict(x, &format!("{on}_output: {k}")))
                        {
                            op.set_attr("sdy.sharding_origins", d);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Moves the debug dictionaries of a data-flow op's edges onto the op
/// (`saveDebugInfoDictsFromDataFlowEdges`).
pub fn sink_debug_info(
    m: &mut Module,
    g: &Graph,
    op: OpIdx,
    owners: &[ValueId],
    block_args: bool,
    origins: bool,
    edges: bool,
) {
    let mut origin_dicts = Vec::new();
    let mut edge_attrs = Vec::new();
    for &o in owners {
        let Some(e) = g.edge_user(o) else { continue };
        let eop = g.op(m, e);
        if origins {
            if let Some(d @ Attr::Dict(_)) = eop.attr("sdy.sharding_origins") {
                origin_dicts.push(d.clone());
            }
        }
        if edges {
            if let Some(a @ Attr::Raw(_)) = eop.attr("sdy.propagation_edges") {
                edge_attrs.push(a.clone());
            }
        }
    }
    let target = g.op_mut(m, op);
    if origins {
        let key = if block_args {
            "sdy.block_arg_sharding_origins"
        } else {
            "sdy.result_sharding_origins"
        };
        target.set_attr(key, Attr::Array(origin_dicts));
    }
    if edges {
        let key = if block_args {
            "sdy.block_arg_propagation_edges"
        } else {
            "sdy.result_propagation_edges"
        };
        target.set_attr(key, Attr::Array(edge_attrs));
    }
}
