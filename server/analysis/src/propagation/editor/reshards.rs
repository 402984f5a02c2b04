//! Helpers to size and name tensors of a propagated module: types to shapes, local
//! (per-device) shapes and bytes, shardings and user-written sources in words. (The
//! reshard estimate that lived here is replaced by what Shardy's export path inserts:
//! [`crate::cost`].)

use crate::model::Model;
use crate::propagation::inference::Source;
use crate::propagation::origins::Node;
use crate::sharding::{AxisRef, Mesh, TensorSharding};
use sdy_syntax::tree::Custom;
use sdy_syntax::Span;

/// `operand 0` / `result 1`.
pub fn node_name(n: Node) -> String {
    format!("{} {}", if n.result { "result" } else { "operand" }, n.index)
}

/// `"x", "y"`
pub fn axes_text(axes: &[AxisRef]) -> String {
    axes.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
}

/// The sharding without its mesh: `[{"x"}, {?}]`, then `replicated=`/`unreduced=`.
pub fn compact(s: &TensorSharding) -> String {
    crate::sharding::WithoutMesh(s).to_string()
}

/// A user-written sharding, in words.
pub fn source_text(s: &Source) -> String {
    match s {
        Source::FuncArg { func, index } => format!("the sharding of argument {index} of `@{func}`"),
        Source::FuncResult { func, index } => {
            format!("the sharding of result {index} of `@{func}`")
        }
        Source::Constraint { .. } => "an `sdy.sharding_constraint`".to_string(),
        Source::ManualIn { index, .. } => {
            format!("in-sharding {index} of an `sdy.manual_computation`")
        }
        Source::ManualOut { index, .. } => {
            format!("out-sharding {index} of an `sdy.manual_computation`")
        }
        Source::OpSharding { index, .. } => format!("the `sdy.sharding` of an op (result {index})"),
    }
}

/// Where a user-written sharding is (chunk-relative): the attribute of a function
/// argument or result, else the op.
pub fn source_span(model: &Model, s: &Source) -> Option<Span> {
    let func_slot = |func: &str, index: usize, arg: bool| -> Option<Span> {
        let op = model.op(*model.funcs.get(func)?);
        let Custom::Func(f) = &op.node.custom else { return None };
        let (attrs, ty) = if arg {
            let a = f.args.get(index)?;
            (a.attrs.as_ref(), a.ty.span)
        } else {
            let r = f.results.get(index)?;
            (r.attrs.as_ref(), r.ty.span)
        };
        let span = attrs.and_then(|d| d.get("sdy.sharding")).map_or(ty, |a| a.span);
        Some(span.shift(op.start))
    };
    let op_span = |o: Option<u32>| -> Option<Span> {
        let o = o?;
        let id = model.ops.iter().position(|x| x.start == o)?;
        Some(model.ops[id].name_span())
    };
    match s {
        Source::FuncArg { func, index } => func_slot(func, *index, true),
        Source::FuncResult { func, index } => func_slot(func, *index, false),
        Source::Constraint { op }
        | Source::ManualIn { op, .. }
        | Source::ManualOut { op, .. }
        | Source::OpSharding { op, .. } => op_span(*op),
    }
}

pub use crate::sharding::local_shape;

/// The size of an axis or sub-axis of `mesh`.
pub fn axis_size(a: &AxisRef, mesh: &Mesh) -> Option<i64> {
    match a.sub {
        Some((_, size)) => Some(size),
        None => mesh.axes.iter().find(|(n, _)| *n == a.name).map(|x| x.1),
    }
}

/// `tensor<8x16xf32>` -> ([8, 16], "f32"); static shapes only.
pub fn tensor_shape(ty: &str) -> Option<(Vec<i64>, &str)> {
    let t = crate::types::read_tensor(ty.trim())?;
    Some((t.static_dims()?, t.elem()))
}

/// The storage size of an element type.
pub fn elem_bytes(elem: &str) -> Option<i64> {
    if let Some(inner) = elem.strip_prefix("complex<").and_then(|e| e.strip_suffix('>')) {
        return elem_bytes(inner).map(|b| 2 * b);
    }
    if elem == "index" {
        return Some(8);
    }
    if elem.starts_with("f8") || elem.starts_with("f4") || elem.starts_with("f6") {
        return Some(1);
    }
    let bits: i64 = match elem {
        "bf16" | "f16" => 16,
        "tf32" | "f32" => 32,
        "f64" => 64,
        _ => elem.trim_start_matches(['s', 'u']).strip_prefix('i')?.parse().ok()?,
    };
    Some((bits + 7) / 8)
}

/// `1.5 KiB`, `300 B`.
pub fn human_bytes(b: i64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
