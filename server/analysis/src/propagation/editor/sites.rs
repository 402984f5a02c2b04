//! From the propagated module back to the source: which printed value is which source
//! value. Ops read from the source keep their start offset (`origin`) through every
//! pass, copies included (a function cloned for a second call, a constant split per
//! user); a function the pipeline re-creates from a call is recognised by the origins
//! of its body.

use super::{Site, ValueResult, Variant};
use crate::ir::Module;
use crate::ir::OpKind;
use crate::model::{Model, OpId};
use crate::propagation::graph::{per_value_at, sharding_of, Def, Graph, OpIdx};
use crate::sharding::TensorSharding;
use rustc_hash::FxHashMap as HashMap;

/// The shardings written in the source module (before any pass), by site.
pub fn written(m: &Module) -> HashMap<Site, TensorSharding> {
    let g = Graph::build(m);
    let mut out = HashMap::default();
    for i in 1..g.nodes.len() {
        let n = &g.nodes[i];
        let Some(o) = n.origin else { continue };
        if n.kind == OpKind::FuncFunc {
            for (index, &a) in entry_args(&g, i).iter().enumerate() {
                if let Some(s) = own_sharding(&g, m, a) {
                    out.insert(Site::Arg { func: o, index }, s);
                }
            }
            for index in 0..func_result_count(&g, m, i) {
                if let Some(s) = g.func_result_sharding(m, i, index) {
                    out.insert(Site::Result { func: o, index }, s);
                }
            }
            continue;
        }
        for (index, &r) in n.results.iter().enumerate() {
            if let Some(s) = own_sharding(&g, m, r) {
                out.insert(Site::OpResult { op: o, index }, s);
            }
        }
    }
    out
}

/// The sharding printed on a value's own definition: a function argument's attribute,
/// an op's result sharding. Unlike `Graph::sharding` (Shardy's `getSharding`), the
/// result of a data-flow op (`stablehlo.while`, `case`, a manual computation) is not
/// read through the `sdy.data_flow_edge` that holds its propagated sharding: that edge
/// is a value of its own, shown where it is written, as `opt` prints it.
fn own_sharding(g: &Graph, m: &Module, v: crate::ir::ValueId) -> Option<TensorSharding> {
    match g.def(v)? {
        Def::Arg { op, region: 0, block: 0, index } if g.nodes[op].kind == OpKind::FuncFunc => {
            sharding_of(g.op(m, op).func()?.args.get(index)?.attr("sdy.sharding"))
        }
        Def::Arg { .. } => None,
        Def::Result { op, index } => {
            let o = g.op(m, op);
            match o.name.as_str() {
                "sdy.data_flow_edge" | "sdy.sharding_constraint" | "sdy.reshard" => {
                    sharding_of(o.prop("sharding"))
                }
                _ if o.kind.is_collective() => sharding_of(o.prop("out_sharding")),
                "sdy.named_computation" | "sdy.manual_computation" => {
                    per_value_at(o.prop("out_shardings"), index)
                }
                _ => per_value_at(o.attr("sdy.sharding"), index),
            }
        }
    }
}

fn entry_args(g: &Graph, i: OpIdx) -> Vec<crate::ir::ValueId> {
    g.nodes[i].args.first().and_then(|r| r.first()).cloned().unwrap_or_default()
}

fn func_result_count(g: &Graph, m: &Module, i: OpIdx) -> usize {
    g.op(m, i).func().map_or(0, |f| f.results.len())
}

/// Per source value: what the propagated module `m` has for it, with the explanation.
pub fn results(
    model: &Model,
    m: &Module,
    g: &Graph,
    written: &HashMap<Site, TensorSharding>,
) -> Vec<ValueResult> {
    let by_start: HashMap<u32, OpId> =
        model.ops.iter().enumerate().map(|(i, o)| (o.start, i as OpId)).collect();
    // (site) -> (variants, the printed value of the first one)
    let mut found: HashMap<Site, (Vec<Variant>, crate::ir::ValueId)> = HashMap::default();
    let mut add = |site: Site, s: Option<TensorSharding>, func: &str, v| {
        let e = found.entry(site).or_insert_with(|| (Vec::new(), v));
        if !e.0.iter().any(|x| x.sharding == s) {
            e.0.push(Variant { sharding: s, func: func.to_string() });
        }
    };
    let top: Vec<OpIdx> = g.nodes[0].children.iter().flatten().flatten().copied().collect();
    for f in top {
        if g.nodes[f].kind != OpKind::FuncFunc {
            continue;
        }
        let Some(name) = g.op(m, f).func().map(|fi| fi.sym.clone()) else { continue };
        if let Some(src) = source_func(model, &by_start, g, f) {
            for (index, &a) in entry_args(g, f).iter().enumerate() {
                add(Site::Arg { func: src, index }, own_sharding(g, m, a), &name, a);
            }
            if let Some(t) = g.terminator(f, 0) {
                for (index, &v) in g.nodes[t].operands.iter().enumerate() {
                    add(
                        Site::Result { func: src, index },
                        g.func_result_sharding(m, f, index),
                        &name,
                        v,
                    );
                }
            }
        }
        let mut stack: Vec<OpIdx> =
            g.nodes[f].children.iter().flatten().flatten().copied().collect();
        while let Some(i) = stack.pop() {
            stack.extend(g.nodes[i].children.iter().flatten().flatten().copied());
            let n = &g.nodes[i];
            let Some(o) = n.origin else { continue };
            if !by_start.contains_key(&o) {
                continue;
            }
            for (index, &r) in n.results.iter().enumerate() {
                add(Site::OpResult { op: o, index }, own_sharding(g, m, r), &name, r);
            }
        }
    }
    let mut sites: Vec<Site> = found.keys().copied().chain(written.keys().copied()).collect();
    sites.sort();
    sites.dedup();
    sites
        .into_iter()
        .map(|site| {
            let (inferred, printed) = match found.remove(&site) {
                Some((v, p)) => (v, Some(p)),
                None => (Vec::new(), None),
            };
            ValueResult {
                site,
                value: model_value(model, &by_start, site),
                written: written.get(&site).cloned(),
                inferred,
                printed,
            }
        })
        .collect()
}

/// The source function a printed function stands for: its own origin, else the
/// function holding the ops of its body (a function re-created from a call). `None`
/// for a function made from a named computation of the source.
fn source_func(model: &Model, by_start: &HashMap<u32, OpId>, g: &Graph, f: OpIdx) -> Option<u32> {
    if let Some(o) = g.nodes[f].origin {
        if by_start.get(&o).is_some_and(|&id| model.op(id).name() == "func.func") {
            return Some(o);
        }
    }
    let mut stack: Vec<OpIdx> = g.nodes[f].children.iter().flatten().flatten().copied().collect();
    while let Some(i) = stack.pop() {
        if let Some(&id) = g.nodes[i].origin.and_then(|o| by_start.get(&o)) {
            let owner = model
                .ancestors(id)
                .find(|&a| matches!(model.op(a).name(), "func.func" | "sdy.named_computation"))?;
            let op = model.op(owner);
            return (op.name() == "func.func").then_some(op.start);
        }
        stack.extend(g.nodes[i].children.iter().flatten().flatten().copied());
    }
    None
}

/// The model value of a site.
fn model_value(
    model: &Model,
    by_start: &HashMap<u32, OpId>,
    site: Site,
) -> Option<crate::model::ValueId> {
    match site {
        Site::Arg { func, index } => {
            let op = model.op(*by_start.get(&func)?);
            op.region_args.first()?.get(index).copied()
        }
        Site::Result { .. } => None,
        Site::OpResult { op, index } => model.op(*by_start.get(&op)?).results.get(index).copied(),
    }
}

/// The site of a value of the model: a function argument or an op result (`None` for
/// other block arguments).
pub fn of_value(model: &crate::model::Model, v: crate::model::ValueId) -> Option<Site> {
    use crate::model::ValueDef;
    Some(match model.value(v).def {
        ValueDef::Result { op, index } => {
            Site::OpResult { op: model.op(op).start, index: index as usize }
        }
        ValueDef::BlockArg { op, region: 0, block: 0, index }
            if model.op(op).name() == "func.func" =>
        {
            Site::Arg { func: model.op(op).start, index: index as usize }
        }
        ValueDef::BlockArg { .. } => return None,
    })
}
