//! Explaining a GSPMD sharding string: the tile assignment in words, the per-device
//! shape, the equivalent sdy sharding when the mesh is obvious (the only mesh of the
//! module with that many devices), and for up to 16 devices which device holds which
//! tile.

use super::gspmd::{self, Devices, Hlo, Meaning, Subgroup, Tiled};
use super::sites::{Embedded, Place};
use super::{read_shardings, sdy_text, Hover, Scope, StringMesh};
use crate::explain::devices::TABLE_MAX_DEVICES;
use crate::explain::locate::Site;
use crate::explain::site::{site_label, site_type};
use crate::model::sharding::{AxisRef, DimSharding, Mesh, MeshRef, TensorSharding};
use crate::shape::ceil_div;
use sdy_syntax::sdy::Reduction;
use sdy_syntax::tree::{Dim, Type, TypeKind};
use std::fmt::Write;

/// Candidate sdy shardings tried when looking for an equivalent.
const SEARCH_BUDGET: usize = 20_000;

pub fn hover(scope: &Scope, e: &Embedded, at: u32) -> Option<Hover> {
    let (hlo, span) = gspmd::parse(&e.text.text).ok()?;
    let (h, hspan, index) = match &hlo {
        Hlo::Tuple(items) => match items.iter().position(|(_, s)| s.touches(at)) {
            Some(i) => (&items[i].0, items[i].1, i),
            None => (&hlo, span, 0),
        },
        _ => (&hlo, span, 0),
    };
    let site = match e.place {
        Place::FuncArg { func, index } => Some((func, Site::FuncArg(index))),
        Place::FuncResult { func, index } => Some((func, Site::FuncResult(index))),
        Place::Op(op) => Some((op, Site::Result(index as u32))),
        Place::Module => None,
    };
    let label = site.as_ref().map(|(op, s)| site_label(scope.model, *op, s));
    let ty = site.as_ref().and_then(|(op, s)| site_type(scope.model, *op, s));
    let text = hspan.text(&e.text.text);
    let mut out = String::new();
    let _ = write!(out, "**GSPMD sharding**");
    if let Some(label) = &label {
        let _ = write!(out, " of {label}");
    }
    if let Some(t) = &ty {
        let _ = write!(out, " · `{}`", type_text(t));
    }
    let _ = writeln!(out, "\n\n`{text}`\n");
    describe(h, ty.as_ref(), &mut out);
    if let Hlo::Tiled(t) = h {
        equivalents(scope, e, t, &mut out);
        if let (Some(ids), Some(shape)) = (t.expand(), ty.as_ref().and_then(Type::shape)) {
            device_table(t, &ids, shape, &mut out);
        }
    }
    Some(Hover { range: e.text.source_span(hspan), markdown: out })
}

fn type_text(t: &Type) -> String {
    match &*t.kind {
        TypeKind::Tensor { shape: Some(dims), elem, .. } => {
            format!("tensor<{}{elem}>", dims_text(dims))
        }
        _ => "value".into(),
    }
}

fn dims_text(dims: &[Dim]) -> String {
    dims.iter()
        .map(|d| match d {
            Dim::Static(n) => format!("{n}x"),
            Dim::Dynamic => "?x".into(),
        })
        .collect()
}

fn join(v: &[i64], sep: &str) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(sep)
}

fn describe(h: &Hlo, ty: Option<&Type>, out: &mut String) {
    match h {
        Hlo::Replicated => {
            let _ = writeln!(out, "Replicated: every device holds the whole value.");
        }
        Hlo::Manual => {
            let _ = writeln!(
                out,
                "Manual: the value is already per-device (the body of a `shard_map`); the \
                 partitioner leaves it alone."
            );
        }
        Hlo::Unknown => {
            let _ = writeln!(out, "Unknown: the partitioner decides.");
        }
        Hlo::Maximal(d) => {
            let _ = writeln!(out, "Maximal: the whole value lives on device {d} only.");
        }
        Hlo::Tuple(items) => {
            let _ = writeln!(
                out,
                "A tuple of {} shardings, one per value (hover over one for details).",
                items.len()
            );
        }
        Hlo::Tiled(t) => describe_tiled(t, ty, out),
    }
}

fn describe_tiled(t: &Tiled, ty: Option<&Type>, out: &mut String) {
    let data = t.data_dims();
    let split: Vec<String> = data
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 1)
        .map(|(d, n)| format!("dimension {d} into {n}"))
        .collect();
    let count = t.tile_count().unwrap_or(0);
    let tiles = if split.is_empty() { "no dimension split".to_string() } else { split.join(", ") };
    let _ = writeln!(
        out,
        "- tile assignment `[{}]` over {count} devices: {tiles}.",
        join(&t.dims, ", ")
    );
    let groups = &t.dims[data.len()..];
    for (kind, n) in t.subgroups.iter().zip(groups) {
        let what = match kind {
            Subgroup::Replicated => "replicated: each tile is held by",
            Subgroup::Manual => "manual: each tile is split by hand (in a `shard_map`) over",
            Subgroup::Unreduced => "unreduced: each tile is a partial sum over",
        };
        let _ = writeln!(out, "- a trailing subgroup of {n}, {what} {n} devices.");
    }
    let order = match &t.devices {
        Devices::List(ids) if ids.len() <= 32 => format!("listed: {}", join(ids, ", ")),
        Devices::List(ids) => format!("listed ({} ids)", ids.len()),
        Devices::Iota { reshape, perm: None } => {
            format!("`<=[{}]`: devices 0 to {} in order", join(reshape, ","), count - 1)
        }
        Devices::Iota { reshape, perm: Some(p) } => {
            let p: Vec<String> = p.iter().map(usize::to_string).collect();
            format!(
                "`<=[{}]T({})`: the ids 0 to {} laid out as `[{}]`, transposed by `({})`, read \
                 row by row",
                join(reshape, ","),
                p.join(","),
                count - 1,
                join(reshape, ", "),
                p.join(", ")
            )
        }
    };
    let _ = writeln!(out, "- device order {order}.");
    let Some(shape) = ty.and_then(Type::shape).filter(|s| s.len() == data.len()) else { return };
    let local: Vec<Dim> = shape
        .iter()
        .zip(data)
        .map(|(d, &t)| match d {
            Dim::Static(n) => Dim::Static(ceil_div(*n, t)),
            Dim::Dynamic => Dim::Dynamic,
        })
        .collect();
    let elem = match ty.map(|t| &*t.kind) {
        Some(TypeKind::Tensor { elem, .. }) => elem.to_string(),
        _ => return,
    };
    let _ = writeln!(
        out,
        "- per-device shape: `tensor<{}{elem}>` (global `tensor<{}{elem}>`).",
        dims_text(&local),
        dims_text(shape)
    );
    for (d, (dim, &t)) in shape.iter().zip(data).enumerate() {
        if let Dim::Static(n) = dim {
            if t > 1 && n % t != 0 {
                let padded = ceil_div(*n, t) * t;
                let _ = writeln!(
                    out,
                    "- dim {d}: {n} is not divisible by {t} tiles: padded to {padded} ({} \
                     padding).",
                    padded - n
                );
            }
        }
    }
}

/// The sdy sharding beside this string, or one found on the obvious mesh.
fn equivalents(scope: &Scope, e: &Embedded, t: &Tiled, out: &mut String) {
    let Some(target) = gspmd::meaning(&Hlo::Tiled(t.clone())) else { return };
    if let Some(s) = sharding_beside(scope, e) {
        let _ = writeln!(out, "\nBeside it, `xla.sdy.sharding`: `{s}`.");
        return;
    }
    let Some((name, mesh)) = obvious_mesh(scope, t.tile_count().unwrap_or(0)) else { return };
    if let Some(s) = equivalent(&name, &mesh, &target, t.data_dims()) {
        let _ = writeln!(out, "\nsdy equivalent on `@{name}`: `{}`", s.attr());
    }
}

fn op_of(place: Place) -> Option<crate::model::OpId> {
    match place {
        Place::FuncArg { func, .. } | Place::FuncResult { func, .. } => Some(func),
        Place::Op(op) => Some(op),
        Place::Module => None,
    }
}

/// The `xla.sdy.sharding` string on the same value, as written.
fn sharding_beside(scope: &Scope, e: &Embedded) -> Option<String> {
    let mut strings = Vec::new();
    let keep = |kind, place, _| kind == super::Kind::Sharding && place == e.place;
    super::sites::in_op(scope.model, op_of(e.place)?, &keep, &mut strings);
    let s = strings.first()?;
    let read = sdy_text::read(&s.text.text);
    if !read.errors.is_empty() {
        return None;
    }
    let (_, shardings) = read_shardings(&read, s)?;
    let texts: Vec<String> = shardings.iter().map(|s| s.attr()).collect();
    Some(texts.join("`, `"))
}

/// The only mesh of the module (an `sdy.mesh` or one of `xla.sdy.meshes`) with
/// `devices` devices.
fn obvious_mesh(scope: &Scope, devices: i64) -> Option<(String, Mesh)> {
    let mut found: Vec<(String, Mesh)> = Vec::new();
    let from_ops =
        scope.model.meshes.iter().filter_map(|m| Some((m.name.clone(), m.mesh.clone()?.value)));
    let from_strings =
        scope.meshes().into_iter().map(|StringMesh { name, mesh, .. }| (name, mesh.value));
    for (name, mesh) in from_ops.chain(from_strings) {
        if !mesh.axes.is_empty()
            && mesh.device_count() == Some(devices)
            && !found.iter().any(|(n, _)| *n == name)
        {
            found.push((name, mesh));
        }
    }
    match found.len() {
        1 => found.pop(),
        _ => None,
    }
}

/// A sharding on `mesh` (full axes, closed dimensions) with the same layout as
/// `target`, trying axis assignments whose sizes give the tile counts.
fn equivalent(name: &str, mesh: &Mesh, target: &Meaning, data: &[i64]) -> Option<TensorSharding> {
    let axes: Vec<usize> = (0..mesh.axes.len()).filter(|&i| mesh.axes[i].1 > 1).collect();
    if axes.len() > 8 || data.len() > 16 {
        return None;
    }
    let mut budget = SEARCH_BUDGET;
    let mut dims: Vec<Vec<usize>> = vec![Vec::new(); data.len()];
    assign(name, mesh, target, data, &axes, 0, &mut dims, &mut budget)
}

/// Places axis `axes[k..]` in dimensions (or nowhere) so that each dimension's product
/// reaches its tile count, then tries the orders within dimensions.
#[allow(clippy::too_many_arguments)]
fn assign(
    name: &str,
    mesh: &Mesh,
    target: &Meaning,
    data: &[i64],
    axes: &[usize],
    k: usize,
    dims: &mut Vec<Vec<usize>>,
    budget: &mut usize,
) -> Option<TensorSharding> {
    let product = |d: &[usize]| d.iter().map(|&i| mesh.axes[i].1).product::<i64>();
    if k == axes.len() {
        if dims.iter().zip(data).any(|(d, &n)| product(d) != n) {
            return None;
        }
        return orders(name, mesh, target, dims, 0, budget);
    }
    for d in 0..=dims.len() {
        if *budget == 0 {
            return None;
        }
        if d < dims.len() {
            let size = mesh.axes[axes[k]].1;
            if data[d] % (product(&dims[d]) * size) != 0 {
                continue;
            }
            dims[d].push(axes[k]);
            let found = assign(name, mesh, target, data, axes, k + 1, dims, budget);
            dims[d].pop();
            if found.is_some() {
                return found;
            }
        } else if let Some(s) = assign(name, mesh, target, data, axes, k + 1, dims, budget) {
            return Some(s);
        }
    }
    None
}

/// Tries every order of the axes within each dimension from `d` on (mesh order first).
fn orders(
    name: &str,
    mesh: &Mesh,
    target: &Meaning,
    dims: &mut Vec<Vec<usize>>,
    d: usize,
    budget: &mut usize,
) -> Option<TensorSharding> {
    if d == dims.len() {
        *budget = budget.saturating_sub(1);
        let s = sharding(name, mesh, dims);
        let hlo = crate::explain::gspmd::hlo_sharding(mesh, &s).ok()?;
        let (h, _) = gspmd::parse(&hlo).ok()?;
        return (gspmd::meaning(&h).as_ref() == Some(target)).then_some(s);
    }
    let n = dims[d].len();
    let original = dims[d].clone();
    for perm in permutations(n) {
        if *budget == 0 {
            break;
        }
        dims[d] = perm.iter().map(|&i| original[i]).collect();
        if let Some(s) = orders(name, mesh, target, dims, d + 1, budget) {
            dims[d] = original;
            return Some(s);
        }
    }
    dims[d] = original;
    None
}

/// The permutations of `0..n`, the identity first.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for at in (0..=rest.len()).rev() {
            let mut p = rest.clone();
            p.insert(at, n - 1);
            out.push(p);
        }
    }
    out
}

fn sharding(name: &str, mesh: &Mesh, dims: &[Vec<usize>]) -> TensorSharding {
    TensorSharding {
        mesh: MeshRef::Symbol(name.to_string()),
        dims: dims
            .iter()
            .map(|d| DimSharding {
                axes: d.iter().map(|&i| AxisRef::full(mesh.axes[i].0.as_str())).collect(),
                open: false,
                priority: None,
            })
            .collect(),
        replicated: Vec::new(),
        unreduced: Vec::new(),
        reduction: Reduction::Sum,
    }
}

/// Which device holds which tile (meshes of up to 16 devices).
fn device_table(t: &Tiled, ids: &[i64], shape: &[Dim], out: &mut String) {
    let data = t.data_dims();
    if ids.len() as i64 > TABLE_MAX_DEVICES || shape.len() != data.len() {
        return;
    }
    let per_tile: i64 = t.dims[data.len()..].iter().product();
    let mut rows: Vec<(i64, Vec<i64>)> = ids
        .iter()
        .enumerate()
        .map(|(pos, &id)| (id, gspmd::unflatten(pos as i64 / per_tile.max(1), data)))
        .collect();
    rows.sort();
    let _ = writeln!(out, "\n| device | tile | elements |\n|---:|---|---|");
    for (id, tile) in rows {
        let ranges: Vec<String> = tile
            .iter()
            .zip(shape.iter().zip(data))
            .map(|(&c, (dim, &n))| match dim {
                Dim::Static(size) => {
                    let l = ceil_div(*size, n);
                    let lo = (c * l).min(*size);
                    let hi = ((c + 1) * l).min(*size);
                    format!("{lo}:{hi}")
                }
                Dim::Dynamic => "?".into(),
            })
            .collect();
        let _ = writeln!(out, "| {id} | ({}) | [{}] |", join(&tile, ", "), ranges.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_identity_first() {
        assert_eq!(permutations(0), vec![Vec::<usize>::new()]);
        let p = permutations(3);
        assert_eq!(p.len(), 6);
        assert_eq!(p[0], vec![0, 1, 2]);
    }
}
