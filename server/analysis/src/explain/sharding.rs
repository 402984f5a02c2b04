//! Explaining a tensor sharding: its mesh, each dimension, replication, unreduced axes,
//! shapes, padding, the device table and the JAX / GSPMD equivalents.

use super::axis::sub_axis_words;
use super::devices::{self, axis_range, axis_size};
use super::locate::Site;
use super::site::{manual_axes, site_type};
use super::tables::{device_table, dim_table};
use super::ShardingFacts;
use super::{
    code_list, gspmd, jax, layout, shard_range, type_string, with_dims, MeshOf, NamedMesh,
};
use crate::model::sharding::{AxisRef, Mesh, TensorSharding};
use crate::model::{Model, OpId};
use sdy_syntax::sdy::Reduction;
use sdy_syntax::tree::{Dim, Type, TypeKind};
use std::fmt::Write;

/// (Written once in `crate::shape`; `explain::tables` reads it from here.)
pub(crate) use crate::shape::ceil_div;

/// The structured facts about a sharding at `site` of `op` (`extra`: meshes known
/// besides the model's).
pub fn facts(
    model: &Model,
    extra: &[NamedMesh],
    op: OpId,
    site: &Site,
    s: &TensorSharding,
) -> ShardingFacts {
    let ty = site_type(model, op, site);
    facts_in(model, extra, s, ty)
}

pub(crate) fn facts_for(model: &Model, s: &TensorSharding, ty: Option<Type>) -> ShardingFacts {
    facts_in(model, &[], s, ty)
}

fn facts_in(
    model: &Model,
    extra: &[NamedMesh],
    s: &TensorSharding,
    ty: Option<Type>,
) -> ShardingFacts {
    let mesh = MeshOf::resolve_in(model, extra, s);
    let (local_shape, partition_spec, hlo_sharding) = match mesh.mesh() {
        Some(m) => {
            (ty.as_ref().and_then(|t| local_shape(m, s, t)), pspec(m, s), gspmd::hlo_sharding(m, s))
        }
        None => {
            let why = format!("{} is not defined", mesh.label());
            (None, Err(why.clone()), Err(why))
        }
    };
    ShardingFacts { sharding: s.clone(), value_type: ty, local_shape, partition_spec, hlo_sharding }
}

fn pspec(mesh: &Mesh, s: &TensorSharding) -> Result<String, String> {
    if mesh.is_maximal() {
        return Err("a maximal sharding puts the whole value on one device: no `PartitionSpec` \
                    (a `SingleDeviceSharding` in JAX)"
            .into());
    }
    jax::partition_spec(s).map(|p| p.text)
}

/// The per-device shape of a value of type `ty` ([`crate::sharding::local_shape`] with
/// dynamic dimensions kept).
pub fn local_shape(mesh: &Mesh, s: &TensorSharding, ty: &Type) -> Option<Vec<Dim>> {
    let dims = ty.shape()?;
    if dims.len() != s.dims.len() {
        return None;
    }
    if mesh.axes.is_empty() {
        return Some(dims.to_vec());
    }
    let local = |d: &Dim, ds: &crate::sharding::DimSharding| match d {
        Dim::Static(n) => ds.local_size(*n, mesh).map(Dim::Static),
        Dim::Dynamic => ds.shard_count(mesh).map(|_| Dim::Dynamic),
    };
    dims.iter().zip(&s.dims).map(|(d, ds)| local(d, ds)).collect()
}

/// The full explanation of a sharding.
pub fn explain(
    model: &Model,
    extra: &[NamedMesh],
    op: OpId,
    site: &Site,
    f: &ShardingFacts,
) -> String {
    let s = &f.sharding;
    let mut out = String::new();
    let ty = f.value_type.as_ref();
    let _ = write!(out, "**sharding** of {}", super::site::site_label(model, op, site));
    if let Some(t) = ty {
        let _ = write!(out, " · `{}`", type_string(t));
    }
    let _ = writeln!(out, "\n\n```mlir\n{}\n```\n", s.attr());
    let mesh_of = MeshOf::resolve_in(model, extra, s);
    let _ = writeln!(out, "{}\n", mesh_line(&mesh_of));
    let Some(mesh) = mesh_of.mesh() else {
        dims_without_mesh(s, &mut out);
        return out;
    };
    if mesh.is_maximal() || mesh.axes.is_empty() {
        if let Ok(h) = &f.hlo_sharding {
            let _ = writeln!(out, "GSPMD: `{h}`");
        }
        return out;
    }
    if let Some(problem) = devices::layout_problem(mesh, s) {
        let _ = writeln!(
            out,
            "**Not valid on this mesh**: {problem} (`sdy-lsp check` reports the details).\n"
        );
        dims_without_mesh(s, &mut out);
        return out;
    }
    let mut tables = true;
    let shape = match ty.map(|t| &*t.kind) {
        Some(TypeKind::Token) => {
            let _ = writeln!(
                out,
                "`!stablehlo.token` is not a tensor: there is no data to split; the sharding \
                 only says which devices the token is on.\n"
            );
            tables = false;
            None
        }
        Some(TypeKind::Tensor { shape: Some(dims), .. }) if dims.len() != s.dims.len() => {
            let n = s.dims.len();
            let _ = writeln!(
                out,
                "**Rank mismatch**: the sharding has {n} dimension sharding{} but the type has \
                 rank {} (`sdy-lsp check` reports it).\n",
                if n == 1 { "" } else { "s" },
                dims.len()
            );
            tables = false;
            None
        }
        Some(TypeKind::Tensor { shape: Some(dims), .. }) => Some(dims.as_slice()),
        _ => None,
    };
    if tables {
        dim_table(mesh, s, shape, &mut out);
    }
    bullets(mesh, s, shape, f, &mut out);
    if let Some(ty) = ty {
        manual_note(model, op, site, mesh, s, ty, &mut out);
    }
    conversions(f, mesh, s, &mut out);
    if tables {
        let sharded = s.dims.iter().any(|d| !d.axes.is_empty());
        if let Some(g) = layout::grid(mesh, s, shape).filter(|_| sharded) {
            layout::render(&g, &mut out);
        }
        device_table(mesh, s, shape, &mut out);
    }
    out
}

/// `` mesh `@mesh`: `"x"=2`, `"y"=4` · 8 devices · iota device order ``
pub(crate) fn mesh_line(m: &MeshOf) -> String {
    let label = m.label();
    let Some(mesh) = m.mesh() else {
        return format!("{label} is not defined in this module.");
    };
    if mesh.is_maximal() {
        let id = mesh.device_ids.first().copied().unwrap_or_default();
        return format!(
            "{label} is maximal (`{mesh}`): the whole value lives on device {id} only."
        );
    }
    if mesh.axes.is_empty() {
        return format!("{label} is empty (`{mesh}`): no axes, the value is fully replicated.");
    }
    let axes: Vec<String> = mesh.axes.iter().map(|a| format!("\"{}\"={}", a.0, a.1)).collect();
    let count = devices::device_count(mesh).map_or("?".into(), |n| n.to_string());
    let order = match mesh.explicit_device_ids() {
        None => "iota device order".to_string(),
        Some(ids) => format!("device order `{}`", list_ids(ids)),
    };
    format!("{label}: {} · {count} devices · {order}", code_list(&axes))
}

fn list_ids(ids: &[i64]) -> String {
    let shown: Vec<String> = ids.iter().take(32).map(i64::to_string).collect();
    let more = if ids.len() > 32 { ", ..." } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

/// Per-dimension axes when the mesh is unknown or the layout is invalid.
fn dims_without_mesh(s: &TensorSharding, out: &mut String) {
    for (i, d) in s.dims.iter().enumerate() {
        let axes: Vec<String> = d.axes.iter().map(AxisRef::to_string).collect();
        let _ = writeln!(out, "- dim {i}: {} ({})", code_list(&axes), open_word(!d.open));
    }
}

pub(crate) fn open_word(closed: bool) -> &'static str {
    if closed {
        "closed"
    } else {
        "open"
    }
}

fn bullets(
    mesh: &Mesh,
    s: &TensorSharding,
    shape: Option<&[Dim]>,
    f: &ShardingFacts,
    out: &mut String,
) {
    // Sub-axes, in order of appearance.
    let mut seen: Vec<&AxisRef> = Vec::new();
    for a in s.all_axes().filter(|a| a.sub.is_some()) {
        if !seen.contains(&a) {
            seen.push(a);
        }
    }
    for a in seen {
        if let Some(full) = mesh.axis(&a.name).map(|x| x.1) {
            let _ = writeln!(out, "- {}", sub_axis_words(a, full));
        }
    }
    if s.dims.iter().any(|d| d.open) {
        let _ = writeln!(
            out,
            "- open dimensions (`?`) may be sharded further by propagation; closed ones are final."
        );
    }
    if s.dims.iter().any(|d| d.priority.is_some()) {
        let _ = writeln!(
            out,
            "- priorities: lower numbers propagate first (`p0` is the highest); a dimension \
             without one counts as `p0`."
        );
    }
    let explicit: Vec<String> = s.replicated.iter().map(AxisRef::to_string).collect();
    if !explicit.is_empty() {
        let _ = writeln!(
            out,
            "- replicated explicitly on {}: propagation may not shard along {}.",
            code_list(&explicit),
            if explicit.len() == 1 { "it" } else { "them" }
        );
    }
    let implicit: Vec<String> =
        implicit_replicated(mesh, s).iter().map(AxisRef::to_string).collect();
    if implicit.is_empty() {
        let _ = writeln!(out, "- replicated implicitly on: nothing (every mesh axis is used).");
    } else {
        let _ = writeln!(
            out,
            "- replicated implicitly on {} (not used by this sharding).",
            code_list(&implicit)
        );
    }
    if !s.unreduced.is_empty() {
        let axes: Vec<String> = s.unreduced.iter().map(AxisRef::to_string).collect();
        let op = s.reduction.as_str();
        let what = match s.reduction {
            Reduction::Sum => "partial sum",
            Reduction::Max => "partial maximum",
            Reduction::Min => "partial minimum",
        };
        let _ = writeln!(
            out,
            "- unreduced on {} (`{op}`): each device holds a {what}; an all-reduce (`{op}`) \
             over these axes gives the value.",
            code_list(&axes)
        );
    }
    if let (Some(dims), Some(local), Some(ty)) = (shape, &f.local_shape, &f.value_type) {
        if let Some(local) = with_dims(ty, local) {
            let _ = writeln!(
                out,
                "- per-device shape: `{local}` (global `{}`).",
                super::with_dims(ty, dims).unwrap_or_default()
            );
        }
        let counts = devices::shard_counts(mesh, s);
        for (i, d) in dims.iter().enumerate() {
            if let (Dim::Static(n), Some(Some(c))) = (d, counts.get(i)) {
                if *n > 0 && *c > 1 && n % c != 0 {
                    let _ = writeln!(out, "- {}", padding_note(i, *n, *c));
                }
            }
        }
    }
}

/// The mesh axes (or parts of axes) the sharding uses nowhere.
pub fn implicit_replicated(mesh: &Mesh, s: &TensorSharding) -> Vec<AxisRef> {
    let mut out = Vec::new();
    for axis in &mesh.axes {
        let used: Vec<(i64, i64)> =
            s.all_axes().filter(|a| a.name == axis.0).map(|a| axis_range(a, axis.1)).collect();
        out.extend(devices::unused_parts(&axis.0, axis.1, &used));
    }
    out.retain(|a| axis_size(mesh, a).is_some_and(|n| n > 1));
    out
}

/// Words for a dimension of size `n` split into `c` shards that do not divide it.
fn padding_note(dim: usize, n: i64, c: i64) -> String {
    let l = ceil_div(n, c);
    let full = n / l.max(1);
    let rem = n - full * l;
    let padded = l * c;
    let mut parts = Vec::new();
    if full > 0 {
        parts.push(format!("{} full", shard_range(0, full - 1)));
    }
    let mut next = full;
    if rem > 0 {
        parts.push(format!("shard {next} holds {rem}"));
        next += 1;
    }
    if next < c {
        parts.push(format!("{} only padding", shard_range(next, c - 1)));
    }
    format!(
        "dim {dim}: {n} is not divisible by {c} shards, so each device holds {l} and the \
         dimension is padded to {padded} ({} padding): {}.",
        padded - n,
        parts.join(", ")
    )
}

/// For the in/out shardings of a manual computation: the body's local view.
fn manual_note(
    model: &Model,
    op: OpId,
    site: &Site,
    mesh: &Mesh,
    s: &TensorSharding,
    ty: &Type,
    out: &mut String,
) {
    if model.op(op).name() != "sdy.manual_computation" {
        return;
    }
    let Site::Inherent { key, index: Some(_) } = site else { return };
    let manual = manual_axes(model, op);
    if manual.is_empty() {
        return;
    }
    let Some(dims) = ty.shape() else { return };
    let mut local = Vec::new();
    for (d, dim) in s.dims.iter().zip(dims) {
        let n = checked_product(
            d.axes
                .iter()
                .take_while(|a| manual.iter().any(|m| *m == a.name))
                .map(|a| axis_size(mesh, a)),
        )
        .unwrap_or(1);
        local.push(match dim {
            Dim::Static(x) => Dim::Static(ceil_div(*x, n.max(1))),
            Dim::Dynamic => Dim::Dynamic,
        });
    }
    let side = if key == "in_shardings" {
        "the body's block argument"
    } else {
        "the value the body returns"
    };
    if let Some(t) = with_dims(ty, &local) {
        let _ = writeln!(
            out,
            "- manual axes {}: {side} is local along {}: `{t}`.",
            code_list(&manual.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>()),
            if manual.len() == 1 { "it" } else { "them" }
        );
    }
}

fn conversions(f: &ShardingFacts, mesh: &Mesh, s: &TensorSharding, out: &mut String) {
    out.push('\n');
    let no_spec = match (&f.partition_spec, jax::partition_spec(s)) {
        (Ok(p), Ok(spec)) => {
            let _ = writeln!(out, "JAX: `{p}`");
            for c in spec.caveats {
                let _ = writeln!(out, "- {c}");
            }
            None
        }
        (Err(why), _) => Some(why.clone()),
        (_, Err(why)) => Some(why),
    };
    if let Some(why) = no_spec {
        match jax::split_partition_spec(mesh, s) {
            Some(split) => {
                let _ = writeln!(
                    out,
                    "JAX: on a mesh with the sub-axes split into axes of their own, \
                     `{}`: `{}` (the same devices hold the same shards).",
                    split.mesh, split.spec.text
                );
                for c in split.spec.caveats {
                    let _ = writeln!(out, "- {c}");
                }
            }
            None => {
                let _ = writeln!(out, "JAX: no `PartitionSpec`: {why}.");
            }
        }
    }
    out.push('\n');
    match &f.hlo_sharding {
        Ok(h) => {
            let _ = writeln!(out, "GSPMD: `{h}`");
        }
        Err(why) => {
            let _ = writeln!(out, "GSPMD: not shown ({why}).");
        }
    }
}

/// A short summary of a sharding (for value hovers): the sharding, per-device shape,
/// JAX and GSPMD forms.
pub(crate) fn summary(
    model: &Model,
    s: &TensorSharding,
    ty: Option<&Type>,
    manual: &[String],
    out: &mut String,
) {
    let f = facts_for(model, s, ty.cloned());
    let _ = writeln!(out, "```mlir\n{}\n```\n", s.attr());
    let mesh_of = MeshOf::resolve(model, s);
    let _ = writeln!(out, "- {}", mesh_line(&mesh_of));
    if let Some(mesh) = mesh_of.mesh() {
        if !mesh.axes.is_empty() && devices::layout_problem(mesh, s).is_none() {
            let counts: Vec<String> = devices::shard_counts(mesh, s)
                .iter()
                .map(|c| c.map_or("?".into(), |c| c.to_string()))
                .collect();
            if !counts.is_empty() {
                let _ = writeln!(out, "- shards per dimension: {}", counts.join(" × "));
            }
        }
    }
    if let (Some(local), Some(ty)) = (&f.local_shape, ty) {
        if let Some(t) = with_dims(ty, local) {
            let _ = writeln!(out, "- per-device shape: `{t}`");
        }
    }
    if !manual.is_empty() {
        let axes: Vec<String> = manual.iter().map(|m| format!("\"{m}\"")).collect();
        let _ = writeln!(
            out,
            "- manual along {}: the value is already per-device along {} (not shown in the \
             sharding above).",
            code_list(&axes),
            if axes.len() == 1 { "it" } else { "them" }
        );
        return;
    }
    if let Ok(p) = &f.partition_spec {
        let _ = writeln!(out, "- JAX: `{p}`");
    }
    if let Ok(h) = &f.hlo_sharding {
        let _ = writeln!(out, "- GSPMD: `{h}`");
    }
}

/// The product of sizes; `None` if one is unknown or it overflows.
pub(crate) fn checked_product(sizes: impl Iterator<Item = Option<i64>>) -> Option<i64> {
    sizes.into_iter().try_fold(1i64, |acc, x| acc.checked_mul(x?))
}
