//! User-priority propagation (Shardy's `UserPriorityPropagationPassImpl`): dimension
//! shardings with priority `pN > 0` start closed and empty (their axes replicated) and
//! are restored one priority at a time, each followed by a full op-priority run.

use super::driver::Driver;
use super::graph::{per_value, Def, OpIdx};
use crate::ir::{Attr, ValueId};
use crate::sharding::axis;
use crate::sharding::{DimSharding, TensorSharding};

/// Where a sharding that had priorities lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ref {
    Value(ValueId),
    FuncResult(OpIdx, usize),
}

/// Every sharding in the module with where it lives, in Shardy's walk order
/// (`walkShardings`): `(reference, sharding, setter)`.
#[derive(Clone, Debug)]
enum Site {
    Ref(Ref),
    /// `in_shardings[i]` / `out_shardings[i]` of op, or entry `i` of its `sdy.sharding`.
    Prop(OpIdx, &'static str, usize),
    Attr(OpIdx, usize),
}

/// Initializes the shardings for priority 0 and returns the references per priority
/// (sorted by priority).
pub fn initialize(d: &mut Driver<'_>) -> Vec<(i64, Vec<(Ref, TensorSharding)>)> {
    let mut per_priority: Vec<(i64, Vec<(Ref, TensorSharding)>)> = Vec::new();
    let sites = collect_sites(d);
    for (site, value, sharding) in sites {
        let skip = value.is_some_and(|v| d.g.edge_of_target(v).is_some());
        if skip {
            continue;
        }
        let mut priorities: Vec<i64> = Vec::new();
        for dim in &sharding.dims {
            let p = dim.priority.unwrap_or(0);
            if p > 0 && !priorities.contains(&p) {
                priorities.push(p);
            }
        }
        let reference = match &site {
            Site::Ref(r) => Some(*r),
            _ => value.map(Ref::Value),
        };
        if let Some(r) = reference {
            for p in priorities {
                match per_priority.iter_mut().find(|(q, _)| *q == p) {
                    Some((_, v)) => v.push((r, sharding.clone())),
                    None => per_priority.push((p, vec![(r, sharding.clone())])),
                }
            }
        }
        let init = initialized(d, &sharding);
        if init != sharding {
            set_site(d, &site, init);
        }
    }
    per_priority.sort_by_key(|(p, _)| *p);
    d.forget_quiet();
    per_priority
}

fn initialized(d: &Driver<'_>, s: &TensorSharding) -> TensorSharding {
    let mut out = s.clone();
    for dim in &mut out.dims {
        if dim.priority.unwrap_or(0) == 0 {
            dim.priority = None;
        } else {
            out.replicated.extend(dim.axes.iter().cloned());
            *dim = DimSharding { axes: vec![], open: false, priority: None };
        }
    }
    if let Some(mesh) = d.g.mesh(&s.mesh) {
        out.replicated.sort_by(|a, b| axis::mesh_cmp(a, b, &mesh));
    }
    out
}

/// Restores the dimensions of priority `p`.
pub fn update_for_priority(d: &mut Driver<'_>, refs: &[(Ref, TensorSharding)], p: i64) {
    for (r, original) in refs {
        let cur = match r {
            Ref::Value(v) => d.g.sharding(d.m, *v),
            Ref::FuncResult(f, i) => d.g.func_result_sharding(d.m, *f, *i),
        };
        let Some(cur) = cur else { continue };
        let mut new = cur.clone();
        let mut seen = Vec::new();
        for (nd, od) in new.dims.iter_mut().zip(&original.dims) {
            if od.priority.unwrap_or(0) == p {
                *nd = DimSharding { axes: od.axes.clone(), open: od.open, priority: None };
                seen.extend(od.axes.iter().cloned());
            }
        }
        new.replicated.retain(|a| !seen.contains(a));
        if new == cur {
            continue;
        }
        match r {
            Ref::Value(v) => d.g.set_sharding(d.m, *v, new),
            Ref::FuncResult(f, i) => d.g.set_func_result_sharding(d.m, *f, *i, new),
        }
    }
    d.forget_quiet();
}

fn collect_sites(d: &Driver<'_>) -> Vec<(Site, Option<ValueId>, TensorSharding)> {
    let mut out = Vec::new();
    for i in d.g.pre_order() {
        let n = &d.g.nodes[i];
        let op = d.g.op(d.m, i);
        match n.name.as_str() {
            "func.func" => {
                let Some(f) = op.func() else { continue };
                let args = n.args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
                for (k, a) in f.args.iter().enumerate() {
                    if let Some(Attr::Sharding(s)) = a.attr("sdy.sharding") {
                        if let Some(&v) = args.get(k) {
                            out.push((Site::Ref(Ref::Value(v)), Some(v), s.clone()));
                        }
                    }
                }
                for (k, r) in f.results.iter().enumerate() {
                    if let Some(Attr::Sharding(s)) = r.attr("sdy.sharding") {
                        out.push((Site::Ref(Ref::FuncResult(i, k)), None, s.clone()));
                    }
                }
            }
            "sdy.manual_computation" | "sdy.named_computation" => {
                let args = n.args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
                if let Some(list) = per_value(op.prop("in_shardings")) {
                    for (k, s) in list.into_iter().enumerate() {
                        out.push((Site::Prop(i, "in_shardings", k), args.get(k).copied(), s));
                    }
                }
                if let Some(list) = per_value(op.prop("out_shardings")) {
                    for (k, s) in list.into_iter().enumerate() {
                        out.push((Site::Prop(i, "out_shardings", k), n.results.get(k).copied(), s));
                    }
                }
            }
            _ if n.kind.is_data_flow_op() || n.results.len() != 1 => {
                if let Some(list) = per_value(op.attr("sdy.sharding")) {
                    for (k, s) in list.into_iter().enumerate() {
                        out.push((Site::Attr(i, k), n.results.get(k).copied(), s));
                    }
                }
            }
            _ => {
                let v = n.results[0];
                if let Some(s) = d.g.sharding(d.m, v) {
                    // Only the op's own sharding (the value may resolve to a data-flow edge).
                    if matches!(d.g.def(d.g.shardable_value(v).unwrap_or(v)), Some(Def::Result { op, .. }) if op == i)
                    {
                        out.push((Site::Ref(Ref::Value(v)), Some(v), s));
                    }
                }
            }
        }
    }
    out
}

fn set_site(d: &mut Driver<'_>, site: &Site, s: TensorSharding) {
    match site {
        Site::Ref(Ref::Value(v)) => d.g.set_sharding(d.m, *v, s),
        Site::Ref(Ref::FuncResult(f, i)) => d.g.set_func_result_sharding(d.m, *f, *i, s),
        Site::Prop(op, key, k) => {
            let o = d.g.op_mut(d.m, *op);
            if let Some(mut list) = per_value(o.prop(key)) {
                if *k < list.len() {
                    list[*k] = s;
                    o.set_prop(key, Attr::PerValue(list));
                }
            }
        }
        Site::Attr(op, k) => {
            let o = d.g.op_mut(d.m, *op);
            if let Some(mut list) = per_value(o.attr("sdy.sharding")) {
                if *k < list.len() {
                    list[*k] = s;
                    o.set_attr("sdy.sharding", Attr::PerValue(list));
                }
            }
        }
    }
}
