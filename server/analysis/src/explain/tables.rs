//! The markdown tables of a sharding: one row per dimension, one row per device.

use super::code_list;
use super::devices::{self, TABLE_MAX_DEVICES};
use super::sharding::{ceil_div, open_word};
use crate::model::sharding::{AxisRef, Mesh, TensorSharding};
use sdy_syntax::tree::Dim;
use std::fmt::Write;

/// | dim | size | axes | shards | per device | open/closed | priority |
pub(crate) fn dim_table(mesh: &Mesh, s: &TensorSharding, shape: Option<&[Dim]>, out: &mut String) {
    if s.dims.is_empty() {
        let _ = writeln!(out, "Rank 0 (a scalar): every device holds the whole value.\n");
        return;
    }
    let counts = devices::shard_counts(mesh, s);
    let _ = writeln!(
        out,
        "| dim | size | sharded on (major → minor) | shards | per device | open/closed | priority |\n\
         |---:|---:|---|---:|---:|---|---|"
    );
    for (i, d) in s.dims.iter().enumerate() {
        let axes: Vec<String> = d.axes.iter().map(AxisRef::to_string).collect();
        let count = counts[i].unwrap_or(1);
        let (size, local) = match shape.and_then(|sh| sh.get(i)) {
            Some(Dim::Static(n)) => {
                let l = ceil_div(*n, count);
                let pad = if *n > 0 && count > 0 && n % count != 0 { " (padded)" } else { "" };
                (n.to_string(), format!("{l}{pad}"))
            }
            Some(Dim::Dynamic) => ("?".into(), "?".into()),
            None => ("".into(), "".into()),
        };
        let priority = d.priority.map_or("—".into(), |p| format!("p{p}"));
        let _ = writeln!(
            out,
            "| {i} | {size} | {} | {count} | {local} | {} | {priority} |",
            code_list(&axes),
            open_word(!d.open)
        );
    }
    out.push('\n');
}

/// Which device holds which shard, for small meshes.
pub(crate) fn device_table(
    mesh: &Mesh,
    s: &TensorSharding,
    shape: Option<&[Dim]>,
    out: &mut String,
) {
    let Some(count) = devices::device_count(mesh) else { return };
    let sharded = s.dims.iter().any(|d| !d.axes.is_empty()) || !s.unreduced.is_empty();
    if count > TABLE_MAX_DEVICES || !sharded {
        return;
    }
    let _ = write!(out, "\n| device |");
    for a in &mesh.axes {
        let _ = write!(out, " \"{}\" |", a.0);
    }
    let _ = write!(out, " shard |");
    if shape.is_some() {
        let _ = write!(out, " elements |");
    }
    if !s.unreduced.is_empty() {
        let _ = write!(out, " partial |");
    }
    let _ = write!(out, "\n|---:|");
    for _ in &mesh.axes {
        let _ = write!(out, "---:|");
    }
    let _ = write!(out, "---|");
    if shape.is_some() {
        let _ = write!(out, "---|");
    }
    if !s.unreduced.is_empty() {
        let _ = write!(out, "---:|");
    }
    out.push('\n');
    let counts = devices::shard_counts(mesh, s);
    for p in 0..count {
        let c = devices::coords(mesh, p);
        let Some(idx) = devices::shard_index(mesh, s, &c) else { return };
        let _ = write!(out, "| {} |", devices::device_id(mesh, p));
        for x in &c {
            let _ = write!(out, " {x} |");
        }
        let idx_text: Vec<String> = idx.iter().map(i64::to_string).collect();
        if idx.is_empty() {
            let _ = write!(out, " — |");
        } else {
            let _ = write!(out, " ({}) |", idx_text.join(", "));
        }
        if shape.is_some_and(|d| d.is_empty()) {
            let _ = write!(out, " all |");
        } else if let Some(dims) = shape {
            let ranges: Vec<String> = dims
                .iter()
                .zip(&idx)
                .zip(&counts)
                .map(|((d, &i), n)| match d {
                    Dim::Static(size) => {
                        let l = ceil_div(*size, n.unwrap_or(1).max(1));
                        let lo = (i * l).min(*size);
                        let hi = ((i + 1) * l).min(*size);
                        if lo == hi {
                            "pad".to_string()
                        } else {
                            format!("{lo}:{hi}")
                        }
                    }
                    Dim::Dynamic => "?".to_string(),
                })
                .collect();
            let _ = write!(out, " [{}] |", ranges.join(", "));
        }
        if !s.unreduced.is_empty() {
            let (u, n) = devices::index_along_all(mesh, &c, &s.unreduced).unwrap_or((0, 1));
            let _ = write!(out, " {u} of {n} |");
        }
        out.push('\n');
    }
}
