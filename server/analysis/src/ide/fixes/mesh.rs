//! `unknown mesh: @name`: define the mesh at the top of the module.
//!
//! Its axes are the ones the module's shardings use on `@name`, in order of first use.
//! Sizes cannot be known from the shardings, so the fix picks what makes the module
//! valid and keeps meshes consistent: the size of an axis of the same name in another
//! mesh of the module, else the smallest size its sub-axes allow (a multiple of every
//! `pre × size`, and larger than any one sub-axis), else 1. The title shows the sizes
//! so the user sees what to adjust.

use super::{Edit, Found};
use crate::diag::{Diagnostic, DiagnosticCode};
use crate::model::sharding::{AxisRef, MeshRef, TensorSharding};
use crate::model::{Model, OpId};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{Attr, AttrDict, AttrKind, Custom, NamedAttr};
use sdy_syntax::Span;

pub(super) fn fixes(model: &Model, src: &str, d: &Diagnostic) -> Option<Vec<Found>> {
    if d.code != DiagnosticCode::UnknownMesh {
        return None;
    }
    let name =
        src.get(d.focus.start as usize..d.focus.end as usize)?.strip_prefix('@')?.to_string();
    if model.mesh(&name).is_some() {
        return None;
    }
    let axes = used_axes(model, &name);
    let mut entries = Vec::new();
    for (axis, subs) in &axes {
        // Names are decoded: printed with MLIR's escapes.
        let written = AxisRef::full(axis.as_str());
        entries.push(format!("{written}={}", size_for(model, axis, subs)));
    }
    let mesh = format!("sdy.mesh @{name} = <[{}]>", entries.join(", "));
    let first = model.op(*model.top.first()?).start;
    let before = src.get(..first as usize)?;
    let indent = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let indent = if indent.trim().is_empty() { indent } else { "" };
    let edit = Edit { span: Span::empty(first), text: format!("{mesh}\n{indent}") };
    Some(vec![(format!("Define `{mesh}`"), vec![edit], false)])
}

/// The axes the module's shardings use on mesh `name`, in order of first use, with the
/// `(pre, size)` of their sub-axes.
fn used_axes(model: &Model, name: &str) -> Vec<(String, Vec<(i64, i64)>)> {
    let mut out: Vec<(String, Vec<(i64, i64)>)> = Vec::new();
    let mut add = |a: &AxisRef| {
        let i = match out.iter().position(|(n, _)| *n == a.name) {
            Some(i) => i,
            None => {
                out.push((a.name.to_string(), Vec::new()));
                out.len() - 1
            }
        };
        if let Some(sub) = a.sub {
            out[i].1.push(sub);
        }
    };
    for id in 0..model.ops.len() as OpId {
        for s in shardings_of(model, id) {
            if matches!(&s.mesh, MeshRef::Symbol(n) if n == name) {
                s.all_axes().for_each(&mut add);
            }
        }
    }
    out
}

/// The size to give a new axis (see the module comment).
fn size_for(model: &Model, axis: &str, subs: &[(i64, i64)]) -> i64 {
    if let Some(a) = model.meshes.iter().filter_map(|m| m.mesh.as_ref()).find_map(|m| m.axis(axis))
    {
        return a.1;
    }
    let mut size = 1i64;
    for &(pre, k) in subs {
        let next = pre.saturating_mul(k).max(1);
        size = lcm(size, next);
    }
    if subs.iter().any(|&(_, k)| k == size) {
        size = size.saturating_mul(2);
    }
    size
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: i64, b: i64) -> i64 {
    (a / gcd(a, b).max(1)).saturating_mul(b)
}

/// Every tensor sharding written on op `id` (its attributes, its function's arguments and
/// results, its block arguments).
pub(super) fn shardings_of(model: &Model, id: OpId) -> Vec<TensorSharding> {
    let info = model.op(id);
    let node = &info.node;
    let mut dicts: Vec<&AttrDict> = node.attrs.iter().collect();
    if let Custom::Func(f) = &node.custom {
        dicts.extend(f.args.iter().filter_map(|a| a.attrs.as_ref()));
        dicts.extend(f.results.iter().filter_map(|r| r.attrs.as_ref()));
    }
    for r in &node.regions {
        for b in &r.blocks {
            dicts.extend(b.args.iter().filter_map(|a| a.attrs.as_ref()));
        }
    }
    let named: Vec<&NamedAttr> =
        node.inherent.iter().chain(dicts.iter().flat_map(|d| &d.entries)).collect();
    let mut out = Vec::new();
    for a in named {
        if let Some(v) = &a.value {
            collect(v, &mut out);
        }
    }
    out
}

fn collect(attr: &Attr, out: &mut Vec<TensorSharding>) {
    match &attr.kind {
        AttrKind::Sdy(s) => match &**s {
            SdyAttr::Sharding(s) => out.push(TensorSharding::from_ast(s)),
            SdyAttr::PerValue(p) => out.extend(p.shardings.iter().map(TensorSharding::from_ast)),
            _ => {}
        },
        AttrKind::Array(items) => items.iter().for_each(|a| collect(a, out)),
        AttrKind::Dict(d) => {
            d.entries.iter().filter_map(|e| e.value.as_ref()).for_each(|a| collect(a, out))
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let m = Model::default();
        assert_eq!(size_for(&m, "x", &[]), 1);
        assert_eq!(size_for(&m, "x", &[(1, 2)]), 4);
        assert_eq!(size_for(&m, "x", &[(1, 2), (2, 2)]), 4);
        assert_eq!(size_for(&m, "x", &[(2, 3)]), 6);
    }
}
