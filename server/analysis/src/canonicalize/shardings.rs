//! Shardy's sharding queries over the rewriting arena: the meshes of the module,
//! `getSharding(Value)` and `TensorShardingAttr::isEquivalent`.

use super::arena::{Arena, Def, OpRef};
use crate::ir::manual_axes;
use crate::ir::OpKind;
use crate::ir::{Attr, ValueId};
use crate::sharding::make::erase_manual_axes;
use crate::sharding::{Mesh, MeshRef, TensorSharding};
use std::collections::HashMap;

/// The `sdy.mesh` symbols of the module.
pub fn meshes(ir: &Arena) -> HashMap<String, Mesh> {
    let mut out = HashMap::new();
    let Some(b) = ir.entry_block(ir.top, 0) else { return out };
    for o in ir.block_ops(b) {
        let op = ir.op(o);
        if op.kind != OpKind::SdyMesh {
            continue;
        }
        if let (Some(Attr::Str(name)), Some(Attr::Mesh(m))) = (op.prop("sym_name"), op.prop("mesh"))
        {
            out.entry(String::from_utf8_lossy(name).into_owned()).or_insert_with(|| m.clone());
        }
    }
    out
}

pub fn resolve<'a>(meshes: &'a HashMap<String, Mesh>, r: &'a MeshRef) -> Option<&'a Mesh> {
    match r {
        MeshRef::Symbol(s) => meshes.get(s),
        MeshRef::Inline(m) => Some(m),
    }
}

fn single(a: Option<&Attr>) -> Option<TensorSharding> {
    match a {
        Some(Attr::Sharding(s)) => Some(s.clone()),
        _ => None,
    }
}

fn nth(a: Option<&Attr>, i: usize) -> Option<TensorSharding> {
    match a {
        Some(Attr::PerValue(v)) => v.get(i).cloned(),
        _ => None,
    }
}

/// `getSharding(value)`: where Shardy keeps the sharding of `v`.
pub fn sharding(ir: &Arena, v: ValueId) -> Option<TensorSharding> {
    match ir.def(v)? {
        Def::Arg(b, index) => {
            let owner = ir.blocks[b].parent;
            let op = ir.op(owner);
            match op.name.as_str() {
                "func.func" => single(op.func()?.args.get(index)?.attr("sdy.sharding")),
                "sdy.named_computation" => nth(op.prop("in_shardings"), index),
                "sdy.manual_computation" => {
                    let s = nth(op.prop("in_shardings"), index)?;
                    let manual: Vec<String> = manual_axes(op);
                    Some(erase_manual_axes(&s, &manual))
                }
                // `stablehlo.while` block arguments: the edge owner is the result.
                "stablehlo.while" => result_sharding(ir, owner, index),
                _ => None,
            }
        }
        Def::Result(o, index) => result_sharding(ir, o, index),
    }
}

fn result_sharding(ir: &Arena, o: OpRef, index: usize) -> Option<TensorSharding> {
    let op = ir.op(o);
    let name = op.name.as_str();
    let v = *op.results.get(index)?;
    if op.kind.is_data_flow_op() {
        // A data-flow edge on the result holds its sharding (`DataFlowEdgeOp::lookup`).
        let users = ir.users(v);
        if let [u] = users.as_slice() {
            if ir.name(*u) == "sdy.data_flow_edge" {
                return single(ir.op(*u).prop("sharding"));
            }
        }
    }
    match name {
        "sdy.data_flow_edge" | "sdy.sharding_constraint" | "sdy.reshard" => {
            single(op.prop("sharding"))
        }
        _ if op.kind.is_collective() => single(op.prop("out_sharding")),
        "sdy.named_computation" | "sdy.manual_computation" => nth(op.prop("out_shardings"), index),
        _ => nth(op.attr("sdy.sharding"), index),
    }
}

/// `TensorShardingAttr::isEquivalent` (unreduced axes compared): same mesh, unreduced
/// axes and per-dimension axes, ignoring open/closed, priorities and replicated axes;
/// a missing sharding is fully replicated.
pub fn equivalent(a: Option<&TensorSharding>, b: Option<&TensorSharding>) -> bool {
    fn replicated(s: Option<&TensorSharding>) -> bool {
        s.is_none_or(|s| s.unreduced.is_empty() && s.dims.iter().all(|d| d.axes.is_empty()))
    }
    if replicated(a) {
        return replicated(b);
    }
    let (Some(a), Some(b)) = (a, b) else { return false };
    a.mesh == b.mesh
        && a.unreduced == b.unreduced
        && a.dims.len() == b.dims.len()
        && a.dims.iter().zip(&b.dims).all(|(x, y)| x.axes == y.axes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::{AxisRef, DimSharding, Reduction};

    fn s(mesh: &str, dims: &[&[&str]], open: bool) -> TensorSharding {
        TensorSharding {
            mesh: MeshRef::Symbol(mesh.into()),
            dims: dims
                .iter()
                .map(|d| DimSharding {
                    axes: d.iter().map(|a| AxisRef::full(*a)).collect(),
                    open,
                    priority: None,
                })
                .collect(),
            replicated: Vec::new(),
            unreduced: Vec::new(),
            reduction: Reduction::Sum,
        }
    }

    #[test]
    fn equivalence() {
        let a = s("m", &[&["x"], &[]], false);
        assert!(equivalent(Some(&a), Some(&s("m", &[&["x"], &[]], true))));
        assert!(!equivalent(Some(&a), Some(&s("n", &[&["x"], &[]], false))));
        assert!(!equivalent(Some(&a), None));
        // Fully replicated shardings are equivalent whatever their mesh.
        let r = s("m", &[&[], &[]], false);
        assert!(equivalent(Some(&r), Some(&s("n", &[&[]], true))));
        assert!(equivalent(None, Some(&r)));
        let mut u = r.clone();
        u.unreduced.push(AxisRef::full("x"));
        assert!(!equivalent(Some(&u), Some(&r)));
    }
}
