//! Explaining an axis or sub-axis: what `"x":(m)k` means, its role in a sharding, and
//! the devices that differ only along it.

use super::devices::{self, axis_size};
use super::locate::Site;
use super::sharding::checked_product;
use super::site::site_label;
use super::{code_list, ordinal, MeshOf, NamedMesh};
use crate::model::sharding::{AxisRef, Mesh, TensorSharding};
use crate::model::{Model, OpId};
use std::fmt::Write;

/// What a sub-axis `"x":(m)k` means, in words.
pub fn sub_axis_words(a: &AxisRef, full: i64) -> String {
    let Some((m, k)) = a.sub else {
        return format!("`{}` is the full axis (size {full})", a);
    };
    let Some(stride) = devices::sub_axis_stride(full, m, k) else {
        return format!("`{}` does not fit axis `\"{}\"` (size {full})", a, a.name);
    };
    let mut factors = Vec::new();
    if m > 1 {
        factors.push(m.to_string());
    }
    factors.push(format!("**{k}**"));
    if stride > 1 {
        factors.push(stride.to_string());
    }
    let index = match (m, stride) {
        (1, 1) => "i".to_string(),
        (_, 1) => format!("i mod {k}"),
        (1, _) => format!("i ÷ {stride}"),
        _ => format!("(i ÷ {stride}) mod {k}"),
    };
    let which = if m == 1 {
        format!("the major-most {k}-sized slice of axis `\"{}\"` (size {full})", a.name)
    } else {
        format!("the {k}-sized slice of axis `\"{}\"` (size {full}) after the first {m}", a.name)
    };
    format!(
        "`{}`: {which}: `\"{}\"` viewed as {} (major → minor); a device with `\"{}\"`-index i \
         has index {index} along it.",
        a,
        a.name,
        factors.join(" × "),
        a.name
    )
}

/// Explains an axis ref inside a sharding: the axis, its role in the sharding.
pub fn explain_axis(
    model: &Model,
    extra: &[NamedMesh],
    op: OpId,
    site: &Site,
    s: &TensorSharding,
    a: &AxisRef,
) -> String {
    let mut out = String::new();
    let mesh_of = MeshOf::resolve_in(model, extra, s);
    let mesh = mesh_of.mesh();
    let full = mesh.and_then(|m| m.axis(&a.name)).map(|x| x.1);
    match (a.sub, full) {
        (None, Some(n)) => {
            let _ = writeln!(out, "**axis `{}`** · size {n} · {}\n", a, mesh_of.label());
        }
        (Some((_, k)), Some(n)) => {
            let _ = writeln!(
                out,
                "**sub-axis `{}`** · size {k} · of axis `\"{}\"` (size {n}) · {}\n",
                a,
                a.name,
                mesh_of.label()
            );
            let _ = writeln!(out, "{}\n", sub_axis_words(a, n));
        }
        (_, None) => {
            let _ = writeln!(out, "**axis `{}`**: not an axis of {}.\n", a, mesh_of.label());
        }
    }
    let _ = writeln!(out, "In the sharding of {}:", site_label(model, op, site));
    role(mesh, s, a, &mut out);
    if let (Some(mesh), Some(_)) = (mesh, full) {
        axis_groups(mesh, a, &mut out);
    }
    out
}

/// What an axis ref does in a sharding.
fn role(mesh: Option<&Mesh>, s: &TensorSharding, a: &AxisRef, out: &mut String) {
    let size = |x: &AxisRef| mesh.and_then(|m| axis_size(m, x));
    for (i, d) in s.dims.iter().enumerate() {
        let Some(pos) = d.axes.iter().position(|x| x == a) else { continue };
        let names: Vec<String> = d.axes.iter().map(AxisRef::to_string).collect();
        let place = match (d.axes.len(), pos) {
            (1, _) => "the only axis".to_string(),
            (n, 0) => format!("the major-most of {n} axes"),
            (n, p) if p + 1 == n => format!("the minor-most of {n} axes"),
            (n, p) => format!("the {} of {n} axes", ordinal(p + 1)),
        };
        let total = checked_product(d.axes.iter().map(size));
        let shards = total.map(|t| format!(" into {t} shards")).unwrap_or_default();
        let _ = writeln!(
            out,
            "- shards dimension {i}{shards}: {place} ({}, major → minor).",
            code_list(&names)
        );
        let minor = checked_product(d.axes[pos + 1..].iter().map(size));
        let (Some(k), Some(minor)) = (size(a), minor) else { return };
        let mut index = String::new();
        if pos > 0 {
            let _ = write!(
                index,
                "(index along the axes major to it) × {} + ",
                k.saturating_mul(minor)
            );
        }
        let _ = write!(index, "(index along `{}`)", a);
        if minor > 1 {
            let _ = write!(index, " × {minor} + (index along the axes minor to it)");
        }
        let _ = writeln!(out, "- a device holds shard {index} of dimension {i}.");
        return;
    }
    if s.replicated.iter().any(|x| x == a) {
        let _ = writeln!(
            out,
            "- explicitly replicated: every device along it holds the same data, and propagation \
             may not shard along it."
        );
        return;
    }
    if s.unreduced.iter().any(|x| x == a) {
        let _ = writeln!(
            out,
            "- unreduced (`{}`): the devices along it hold partial values; an all-reduce over it \
             gives the value.",
            s.reduction.as_str()
        );
    }
}

/// The device groups that differ only along an axis (small meshes).
pub(crate) fn axis_groups(mesh: &Mesh, a: &AxisRef, out: &mut String) {
    if let Some(groups) = devices::groups_along(mesh, a) {
        let text: Vec<String> = groups
            .iter()
            .map(|g| format!("[{}]", g.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")))
            .collect();
        let _ = writeln!(
            out,
            "- devices that differ only along `{}` (in its index order): {}",
            a,
            text.join(" ")
        );
    }
}
