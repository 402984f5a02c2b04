//! Memory per device: every value's local shape × element size (padding included: a
//! dimension of size `d` over `n` devices holds `ceil(d / n)` per device), and per
//! function the argument and result bytes and an estimated peak.
//!
//! The peak walks the function's ops in order (nested ops in pre-order): arguments are
//! live throughout (the caller holds them), a value from its definition to its last
//! use, a returned value to the end; the peak is the largest sum at any op. No buffer
//! reuse, aliasing or fusion is modelled, so it is an upper estimate of what a
//! compiler's schedule keeps.

use super::{FunctionMemory, ValueMemory};
use crate::ir::{Module, ValueId};
use crate::propagation::editor::reshards::{elem_bytes, local_shape, tensor_shape};
use crate::propagation::editor::ValueResult;
use crate::propagation::graph::{sharding_of_ref, Graph};
use crate::sharding::TensorSharding;
use rustc_hash::FxHashMap as HashMap;

/// The per-device shape and bytes of a tensor of type `ty` sharded by `s` (replicated
/// when `None`).
pub fn local(ty: &str, s: Option<&TensorSharding>, g: &Graph) -> Option<(Vec<i64>, i64)> {
    let (dims, elem) = tensor_shape(ty)?;
    let shape = match s.and_then(|s| Some((s, g.mesh_ref(&s.mesh)?))) {
        Some((s, mesh)) => local_shape(&dims, s, mesh).unwrap_or(dims),
        None => dims,
    };
    let n = shape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d.max(0)))?;
    Some((shape, n.checked_mul(elem_bytes(elem)?)?))
}

fn value_bytes(m: &Module, g: &Graph, v: ValueId) -> i64 {
    let s = g.sharding_ref(m, v);
    m.ty(v).and_then(|ty| local(ty, s.as_deref(), g)).map_or(0, |x| x.1)
}

/// Per function of `m` (in order): its name, the source start, its memory.
pub fn functions(m: &Module) -> Vec<(String, Option<u32>, FunctionMemory)> {
    functions_in(m, &Graph::build(m))
}

/// [`functions`] with `g`, the index of `m`.
pub fn functions_in(m: &Module, g: &Graph) -> Vec<(String, Option<u32>, FunctionMemory)> {
    let order = g.pre_order();
    let mut out = Vec::new();
    let mut k = 0;
    while k < order.len() {
        let f = order[k];
        k += 1;
        let Some(fi) = g.op(m, f).func() else { continue };
        // The function's ops: the ones after it in pre-order, up to the next top-level op.
        let first = k;
        while k < order.len() && g.node(order[k]).parent != Some(0) {
            k += 1;
        }
        let ops = &order[first..k];
        let slot = |s: &crate::ir::FuncSlot| {
            local(&s.ty, sharding_of_ref(s.attr("sdy.sharding")), g).map_or(0, |x| x.1)
        };
        let arguments: i64 = fi.args.iter().map(slot).sum();
        let per_result: Vec<i64> = fi.results.iter().map(slot).collect();
        let results = per_result.iter().sum();
        let peak = arguments + peak_of(m, g, ops);
        let memory = FunctionMemory { arguments, results, per_result, peak };
        out.push((fi.sym.clone(), g.node(f).origin, memory));
    }
    out
}

/// The largest sum of live op results over `ops` (in order).
fn peak_of(m: &Module, g: &Graph, ops: &[usize]) -> i64 {
    let pos: HashMap<usize, usize> = ops.iter().enumerate().map(|(p, &i)| (i, p)).collect();
    let end = ops.len();
    // +bytes where a value starts, -bytes after its last use.
    let mut delta = vec![0i64; end + 2];
    for (p, &i) in ops.iter().enumerate() {
        for &v in g.node(i).results.iter() {
            let b = value_bytes(m, g, v);
            if b == 0 {
                continue;
            }
            let last = g
                .uses(v)
                .iter()
                .map(|(u, _)| match pos.get(u) {
                    // Returned from the function: live to the end.
                    Some(_) if is_return(g, *u) => end,
                    Some(&q) => q,
                    None => end,
                })
                .max()
                .unwrap_or(p)
                .max(p);
            delta[p] += b;
            delta[last + 1] -= b;
        }
    }
    let mut live = 0i64;
    let mut peak = 0i64;
    for d in delta {
        live += d;
        peak = peak.max(live);
    }
    peak
}

fn is_return(g: &Graph, i: usize) -> bool {
    matches!(g.name(i), "func.return" | "return")
}

/// Bytes per device of the source values of a propagation, from `m` (the propagated
/// module the values' printed ids refer to).
pub fn values(m: &Module, values: &[ValueResult]) -> Vec<ValueMemory> {
    values_in(m, &Graph::build(m), values)
}

/// [`values`] with `g`, the index of `m`.
pub fn values_in(m: &Module, g: &Graph, values: &[ValueResult]) -> Vec<ValueMemory> {
    let mut out: Vec<ValueMemory> = values
        .iter()
        .filter_map(|v| {
            let p = v.printed?;
            let s = g.sharding_ref(m, p);
            let (local_shape, bytes) = local(m.ty(p)?, s.as_deref(), g)?;
            Some(ValueMemory { site: v.site, local_shape, bytes })
        })
        .collect();
    out.sort_by_key(|v| v.site);
    out
}
