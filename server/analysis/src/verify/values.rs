//! Facts about values the rules need: printed types, type equality, shapes, where a
//! value is located, and the sharding a value carries (Shardy's `getSharding`).

use super::attrs;
use crate::model::sharding::{Mesh, TensorSharding};
use crate::model::{Model, OpId, ValueDef, ValueId};
use crate::sharding::make::erase_manual_axes;
use sdy_syntax::tree::{Dim, Type, TypeKind};

/// A type as MLIR prints it: `tensor<8x?xf32>`, `tensor<*xf32>`, `!stablehlo.token`.
pub fn type_string(ty: &Type) -> String {
    match &*ty.kind {
        TypeKind::Tensor { shape, elem, encoding } => {
            let mut s = String::from("tensor<");
            match shape {
                None => s.push_str("*x"),
                Some(dims) => {
                    for d in dims {
                        match d {
                            Dim::Static(n) => s.push_str(&n.to_string()),
                            Dim::Dynamic => s.push('?'),
                        }
                        s.push('x');
                    }
                }
            }
            s.push_str(elem);
            if let Some(e) = encoding {
                s.push_str(", ");
                s.push_str(e);
            }
            s.push('>');
            s
        }
        TypeKind::Token => "!stablehlo.token".to_string(),
        TypeKind::Tuple(elems) => {
            let items: Vec<String> = elems.iter().map(type_string).collect();
            format!("tuple<{}>", items.join(", "))
        }
        TypeKind::Alias(name) => format!("!{}", name.trim_start_matches('!')),
        TypeKind::Other(text) => text.to_string(),
    }
}

/// `'t1', 't2'`: a type list as MLIR diagnostics print it.
pub fn quoted_types<'a>(types: impl IntoIterator<Item = &'a Type>) -> String {
    types.into_iter().map(|t| format!("'{}'", type_string(t))).collect::<Vec<_>>().join(", ")
}

/// A ranked tensor type as MLIR prints it, from dimensions and element type.
pub fn ranked_tensor_string(dims: &[Dim], elem: &str) -> String {
    let mut s = String::from("tensor<");
    for d in dims {
        match d {
            Dim::Static(n) => s.push_str(&n.to_string()),
            Dim::Dynamic => s.push('?'),
        }
        s.push('x');
    }
    s.push_str(elem);
    s.push('>');
    s
}

/// Structural type equality (positions ignored).
pub fn same_type(a: &Type, b: &Type) -> bool {
    match (&*a.kind, &*b.kind) {
        (TypeKind::Tuple(x), TypeKind::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_type(p, q))
        }
        (x, y) => x == y,
    }
}

/// A ranked tensor whose dimensions are all static.
pub fn has_static_shape(ty: &Type) -> bool {
    matches!(&*ty.kind, TypeKind::Tensor { shape: Some(dims), .. }
        if dims.iter().all(|d| matches!(d, Dim::Static(_))))
}

/// MLIR's `ShapedType`: tensors (ranked or not), vectors, memrefs.
pub fn is_shaped(ty: &Type) -> bool {
    match &*ty.kind {
        TypeKind::Tensor { .. } => true,
        TypeKind::Other(t) => t.starts_with("vector<") || t.starts_with("memref<"),
        _ => false,
    }
}

/// Where MLIR locates a value: its defining op, or the block argument's name.
pub fn value_loc(model: &Model, v: ValueId) -> u32 {
    let info = model.value(v);
    match info.def {
        ValueDef::Result { op, .. } => model.op(op).loc(),
        ValueDef::BlockArg { .. } => info.span.start,
    }
}

/// Mesh equality as MLIR compares `MeshAttr`s: axes (names and sizes) and device ids.
pub fn same_mesh(a: &Mesh, b: &Mesh) -> bool {
    a.device_ids == b.device_ids && a.axes.len() == b.axes.len() && a.axes == b.axes
}

/// The op defining `v`, or owning the block `v` is an argument of.
pub fn owning_op(model: &Model, v: ValueId) -> OpId {
    match model.value(v).def {
        ValueDef::Result { op, .. } | ValueDef::BlockArg { op, .. } => op,
    }
}

/// Ops whose values are linked by data-flow edges (Shardy's `ShardableDataFlowOpInterface`).
fn is_data_flow_op(name: &str) -> bool {
    matches!(
        name,
        "sdy.manual_computation"
            | "sdy.named_computation"
            | "stablehlo.while"
            | "stablehlo.case"
            | "stablehlo.optimization_barrier"
    )
}

pub fn is_collective(name: &str) -> bool {
    matches!(
        name,
        "sdy.all_gather"
            | "sdy.all_slice"
            | "sdy.all_to_all"
            | "sdy.collective_permute"
            | "sdy.all_reduce"
            | "sdy.reduce_scatter"
            | "sdy.sharded_to_unreduced"
            | "sdy.replicated_to_unreduced"
    )
}

/// The value of a data-flow op holding the sharding of `v` (its edge owner).
fn edge_owner(model: &Model, v: ValueId) -> Option<ValueId> {
    let op = owning_op(model, v);
    let info = model.op(op);
    match (info.name(), &model.value(v).def) {
        ("sdy.manual_computation" | "sdy.named_computation", _) => Some(v),
        (_, ValueDef::Result { .. }) => Some(v),
        ("stablehlo.while", ValueDef::BlockArg { index, .. }) => {
            info.results.get(*index as usize).copied()
        }
        _ => None,
    }
}

/// The sharding of `v` as Shardy's `getSharding` finds it: on a data-flow edge using
/// it, the function argument attribute, the op that produces it, or the data-flow op
/// owning it.
pub fn value_sharding(model: &Model, v: ValueId) -> Option<TensorSharding> {
    let owner_op = owning_op(model, v);
    let mut value = v;
    if is_data_flow_op(model.op(owner_op).name()) {
        let owner = edge_owner(model, v)?;
        let uses = &model.value(owner).uses;
        if uses.len() == 1 && model.op(uses[0].op).name() == "sdy.data_flow_edge" {
            return attrs::inherent_sharding(model, uses[0].op, "sharding").map(|s| s.value);
        }
        value = owner;
    } else if let ValueDef::BlockArg { .. } = model.value(v).def {
        if model.op(owner_op).name() != "func.func" {
            return None;
        }
    }
    let op = owning_op(model, value);
    let info = model.op(op);
    let name = info.name();
    match model.value(value).def {
        ValueDef::BlockArg { index, .. } => match name {
            "func.func" => attrs::func_arg_sharding(model, op, index as usize).map(|s| s.value),
            "sdy.manual_computation" => {
                let s = attrs::inherent_per_value(model, op, "in_shardings")?;
                let manual = attrs::manual_axes(info).unwrap_or_default();
                s.get(index as usize).map(|s| erase_manual_axes(s, &manual))
            }
            "sdy.named_computation" => attrs::inherent_per_value(model, op, "in_shardings")?
                .into_iter()
                .nth(index as usize)
                .map(|s| s.value),
            _ => None,
        },
        ValueDef::Result { index, .. } => {
            let key = match name {
                "sdy.data_flow_edge" | "sdy.sharding_constraint" | "sdy.reshard" => {
                    return attrs::inherent_sharding(model, op, "sharding").map(|s| s.value)
                }
                n if is_collective(n) => {
                    return attrs::inherent_sharding(model, op, "out_sharding").map(|s| s.value)
                }
                "sdy.manual_computation" | "sdy.named_computation" => "out_shardings",
                _ => {
                    let list = attrs::result_shardings(model, op)?;
                    return list.into_iter().nth(index as usize).map(|s| s.value);
                }
            };
            attrs::inherent_per_value(model, op, key)?
                .into_iter()
                .nth(index as usize)
                .map(|s| s.value)
        }
    }
}

/// The sharding of `v` looking through `sdy.propagation_barrier` ops.
pub fn sharding_through_barriers(model: &Model, mut v: ValueId) -> Option<TensorSharding> {
    // At most one step per op: a barrier of its own result (a forward reference, which
    // MLIR rejects) cannot loop.
    for _ in 0..model.ops.len() {
        let ValueDef::Result { op, .. } = model.value(v).def else { break };
        let info = model.op(op);
        if info.name() != "sdy.propagation_barrier" {
            break;
        }
        match info.operands.first().copied().flatten() {
            Some(input) => v = input,
            None => break,
        }
    }
    value_sharding(model, v)
}
