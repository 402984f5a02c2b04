//! Explaining meshes, mesh axes, and axes in the axis lists of ops.

use super::axis::{axis_groups, sub_axis_words};
use super::devices::{self, TABLE_MAX_DEVICES};
use crate::model::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};
use crate::model::{Model, OpId};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::AttrKind;
use std::fmt::Write;

fn title(name: Option<&str>) -> String {
    match name {
        Some(n) => format!("mesh `@{n}`"),
        None => "inline mesh".into(),
    }
}

/// A mesh: its axes, device count and device order, and a device table when small.
pub fn explain_mesh(name: Option<&str>, mesh: Option<&Mesh>) -> String {
    let mut out = String::new();
    let Some(mesh) = mesh else {
        let _ = writeln!(out, "**{}** is not defined in this module.", title(name));
        return out;
    };
    let _ = writeln!(out, "**{}** = `{mesh}`\n", title(name));
    if mesh.is_maximal() {
        let id = mesh.device_ids.first().copied().unwrap_or_default();
        let _ = writeln!(
            out,
            "A maximal mesh: no axes, one device (id {id}). A sharding on it puts the whole \
             value on device {id} (GSPMD `{{maximal device={id}}}`)."
        );
        return out;
    }
    if mesh.axes.is_empty() {
        let _ = writeln!(
            out,
            "An empty mesh: no axes. A sharding on it is fully replicated (GSPMD `{{replicated}}`)."
        );
        return out;
    }
    let strides = strides(mesh);
    let _ = writeln!(out, "| axis | size | stride |\n|---|---:|---:|");
    for (a, s) in mesh.axes.iter().zip(&strides) {
        let _ = writeln!(out, "| `\"{}\"` | {} | {s} |", a.0, a.1);
    }
    let count = devices::device_count(mesh);
    let _ = writeln!(
        out,
        "\n- {} devices; the mesh position of a device is Σ index × stride (the last axis is \
         minor-most).",
        count.map_or("?".into(), |n| n.to_string())
    );
    match mesh.explicit_device_ids() {
        None => {
            let _ = writeln!(out, "- device order: iota (the device id is the mesh position).");
        }
        Some(ids) => {
            let _ = writeln!(
                out,
                "- device order: explicit, `device_ids` gives the device id at each mesh position."
            );
            if count != Some(ids.len() as i64) {
                let _ = writeln!(
                    out,
                    "- **{} device ids for {} devices** (`sdy-lsp check` reports it).",
                    ids.len(),
                    count.map_or("?".into(), |n| n.to_string())
                );
            }
        }
    }
    if let Some(n) = count.filter(|&n| n <= TABLE_MAX_DEVICES) {
        let _ = write!(out, "\n| device |");
        for a in &mesh.axes {
            let _ = write!(out, " \"{}\" |", a.0);
        }
        let _ = write!(out, "\n|---:|");
        for _ in &mesh.axes {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
        for p in 0..n {
            let _ = write!(out, "| {} |", devices::device_id(mesh, p));
            for c in devices::coords(mesh, p) {
                let _ = write!(out, " {c} |");
            }
            out.push('\n');
        }
    }
    out
}

/// Mesh-position strides of each axis (products of the sizes of the minor axes).
fn strides(mesh: &Mesh) -> Vec<String> {
    let mut out = vec![String::new(); mesh.axes.len()];
    let mut s: Option<i64> = Some(1);
    for (i, a) in mesh.axes.iter().enumerate().rev() {
        out[i] = s.map_or("?".into(), |s| s.to_string());
        s = s.and_then(|s| s.checked_mul(a.1));
    }
    out
}

/// An axis in a mesh definition.
pub fn explain_mesh_axis(name: Option<&str>, mesh: &Mesh, index: usize) -> String {
    let mut out = String::new();
    let axis = &mesh.axes[index];
    let stride = &strides(mesh)[index];
    let _ = writeln!(
        out,
        "**axis `\"{}\"`** · size {} · {} · the {} of {} axes\n",
        axis.0,
        axis.1,
        title(name),
        super::ordinal(index + 1),
        mesh.axes.len()
    );
    let first = index == 0;
    let formula = match (first, stride.as_str()) {
        (true, "1") => "the mesh position".to_string(),
        (true, _) => format!("mesh position ÷ {stride}"),
        (false, "1") => format!("mesh position mod {}", axis.1),
        (false, _) => format!("(mesh position ÷ {stride}) mod {}", axis.1),
    };
    let _ =
        writeln!(out, "- stride {stride}: a device's index along `\"{}\"` is {formula}.", axis.0);
    let full = AxisRef::full(axis.0.as_str());
    axis_groups(mesh, &full, &mut out);
    out
}

/// The mesh of an op with axis lists: its `out_sharding` or first in/out sharding.
fn op_mesh(model: &Model, op: OpId) -> Option<(Option<String>, Mesh)> {
    let node = &model.op(op).node;
    let mut shardings: Vec<TensorSharding> = Vec::new();
    for key in ["out_sharding", "in_shardings", "out_shardings"] {
        let Some(AttrKind::Sdy(s)) =
            node.inherent_attr(key).and_then(|a| a.value.as_ref()).map(|v| &v.kind)
        else {
            continue;
        };
        match &**s {
            SdyAttr::Sharding(s) => shardings.push(TensorSharding::from_ast(s)),
            SdyAttr::PerValue(p) => {
                shardings.extend(p.shardings.iter().map(TensorSharding::from_ast))
            }
            _ => {}
        }
    }
    let s = shardings.into_iter().next()?;
    match s.mesh {
        MeshRef::Inline(m) => Some((None, m)),
        MeshRef::Symbol(name) => {
            let m = model.mesh(&name)?.mesh.clone()?.value;
            Some((Some(name), m))
        }
    }
}

pub(crate) fn op_mesh_name(model: &Model, op: OpId) -> Option<String> {
    op_mesh(model, op).and_then(|(n, _)| n)
}

/// An axis in an op's axis list (manual axes, collective axes).
pub fn explain_list_axis(
    model: &Model,
    op: OpId,
    key: &str,
    dim: Option<usize>,
    a: &AxisRef,
) -> String {
    let mut out = String::new();
    let op_name = model.op(op).name();
    let mesh = op_mesh(model, op);
    let full = mesh.as_ref().and_then(|(_, m)| m.axis(&a.name)).map(|x| x.1);
    let mesh_label = mesh.as_ref().map_or("its mesh".to_string(), |(n, _)| title(n.as_deref()));
    match full {
        Some(n) => {
            let kind = if a.sub.is_some() { "sub-axis" } else { "axis" };
            let _ = writeln!(out, "**{kind} `{}`** · {mesh_label} · axis size {n}\n", a);
            if a.sub.is_some() {
                let _ = writeln!(out, "{}\n", sub_axis_words(a, n));
            }
        }
        None => {
            let _ = writeln!(out, "**axis `{}`** · not found in {mesh_label}\n", a);
        }
    }
    let what = match (key, dim) {
        ("manual_axes", _) => "a manual axis: inside the body, values are per-device along it \
                               and the body's types are local along it"
            .to_string(),
        ("gathering_axes", Some(d)) => format!("all-gathered along dimension {d}"),
        ("slicing_axes", Some(d)) => format!("sliced along dimension {d}"),
        ("reduce_scatter_axes", Some(d)) => format!("reduce-scattered along dimension {d}"),
        ("sharded_axes", Some(d)) => {
            format!("moved from sharding dimension {d} to the unreduced axes")
        }
        ("params", Some(d)) => {
            format!("all-to-all: moved from dimension {d} to the target dimension")
        }
        ("reduction_axes", _) => "all-reduced over it".to_string(),
        ("axes", _) => "made unreduced (from replicated)".to_string(),
        (k, Some(d)) => format!("listed in `{k}` for dimension {d}"),
        (k, None) => format!("listed in `{k}`"),
    };
    let _ = writeln!(out, "In `{op_name}`: {what}.");
    if let (Some((_, m)), Some(_)) = (&mesh, full) {
        axis_groups(m, a, &mut out);
    }
    out
}
