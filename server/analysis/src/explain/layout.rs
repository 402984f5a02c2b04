//! Which devices hold which tile of a tensor, as a grid in the style of JAX's
//! `jax.debug.visualize_array_sharding`: one row per shard of the first sharded
//! dimension, one column per shard of the second, each tile naming its devices
//! compactly (`0–3, 8–11`), so meshes of any size fit. Ids are logical: positions in
//! the device assignment (`device_ids[p]`, or the mesh position `p` in iota order).

use super::devices::{self, device_count, device_id, shard_counts};
use super::sharding::ceil_div;
use crate::model::sharding::{Mesh, TensorSharding};
use sdy_syntax::tree::Dim;
use std::fmt::Write;

/// Meshes with more devices than this get no grid (every device is visited).
const MAX_DEVICES: i64 = 1 << 16;
/// Grids with more rows or columns than this are cut (the rest is summarised).
const MAX_ROWS: usize = 16;
const MAX_COLS: usize = 8;

/// The tiles of a tensor over at most two of its dimensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    /// The dimension along the rows and the one along the columns (`None` for a
    /// one-row view).
    pub row_dim: Option<usize>,
    pub col_dim: Option<usize>,
    /// Per row / column: the element range `[lo, hi)` it covers (`None` when the size
    /// is unknown; empty for shards that are only padding).
    pub rows: Vec<Option<(i64, i64)>>,
    pub cols: Vec<Option<(i64, i64)>>,
    /// `tiles[r][c]`: the (logical) ids of the devices holding the tile, ascending.
    pub tiles: Vec<Vec<Vec<i64>>>,
}

/// The grid of `s` on `mesh`: over the tensor's dimensions when it has one or two, else
/// over its sharded dimensions when there are at most two. `None` for a scalar, more
/// than two sharded dimensions of a higher-rank tensor, or an invalid or huge mesh.
pub fn grid(mesh: &Mesh, s: &TensorSharding, shape: Option<&[Dim]>) -> Option<Grid> {
    let count = device_count(mesh).filter(|&n| n <= MAX_DEVICES)?;
    if devices::layout_problem(mesh, s).is_some() {
        return None;
    }
    let dims: Vec<usize> = match s.dims.len() {
        0 => return None,
        1 | 2 => (0..s.dims.len()).collect(),
        _ => {
            let sharded: Vec<usize> =
                (0..s.dims.len()).filter(|&d| !s.dims[d].axes.is_empty()).collect();
            if sharded.is_empty() || sharded.len() > 2 {
                return None;
            }
            sharded
        }
    };
    let counts = shard_counts(mesh, s);
    let shards = |d: Option<usize>| d.map_or(Some(1), |d| counts.get(d).copied().flatten());
    let (row_dim, col_dim) = match dims.as_slice() {
        [one] => (None, Some(*one)),
        [r, c] => (Some(*r), Some(*c)),
        _ => return None,
    };
    let (n_rows, n_cols) = (shards(row_dim)?, shards(col_dim)?);
    n_rows.checked_mul(n_cols).filter(|&t| t <= MAX_DEVICES)?;
    let mut tiles = vec![vec![Vec::new(); n_cols as usize]; n_rows as usize];
    for p in 0..count {
        let c = devices::coords(mesh, p);
        let idx = devices::shard_index(mesh, s, &c)?;
        let at = |d: Option<usize>| d.map_or(Some(0), |d| idx.get(d).copied());
        let (r, k) = (at(row_dim)?, at(col_dim)?);
        tiles.get_mut(r as usize)?.get_mut(k as usize)?.push(device_id(mesh, p));
    }
    for row in &mut tiles {
        for t in row {
            t.sort_unstable();
        }
    }
    let ranges = |d: Option<usize>, n: i64| -> Vec<Option<(i64, i64)>> {
        let size = d.and_then(|d| match shape?.get(d)? {
            Dim::Static(n) => Some(*n),
            Dim::Dynamic => None,
        });
        (0..n)
            .map(|i| {
                let size = match d {
                    None => return Some((0, 1)),
                    Some(_) => size?,
                };
                let l = ceil_div(size, n);
                Some(((i * l).min(size), ((i + 1) * l).min(size)))
            })
            .collect()
    };
    Some(Grid {
        row_dim,
        col_dim,
        rows: ranges(row_dim, n_rows),
        cols: ranges(col_dim, n_cols),
        tiles,
    })
}

/// Device ids as ranges: `0–3, 8–11`; long lists with a common stride as
/// `0, 8, …, 56 (8 devices)`.
pub fn compact_ids(ids: &[i64]) -> String {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &id in ids {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == id => *hi = id,
            _ => runs.push((id, id)),
        }
    }
    let strided = ids.len() > 4
        && runs.len() == ids.len()
        && ids.windows(2).all(|w| w[1] - w[0] == ids[1] - ids[0]);
    if strided {
        return format!(
            "{}, {}, …, {} ({} devices)",
            ids[0],
            ids[1],
            ids[ids.len() - 1],
            ids.len()
        );
    }
    let shown: Vec<String> = runs
        .iter()
        .map(|&(lo, hi)| match hi - lo {
            0 => lo.to_string(),
            1 => format!("{lo}, {hi}"),
            _ => format!("{lo}–{hi}"),
        })
        .collect();
    if shown.len() > 6 {
        return format!("{}, … ({} devices)", shown[..4].join(", "), ids.len());
    }
    shown.join(", ")
}

/// The grid as a markdown table (rows along the first dimension, columns along the
/// second), with what the ids are.
pub(crate) fn render(g: &Grid, out: &mut String) {
    let dim = |d: Option<usize>| d.map_or(String::new(), |d| format!("dimension {d}"));
    let head = match (g.row_dim, g.col_dim) {
        (Some(_), Some(_)) => {
            format!("{} down, {} across", dim(g.row_dim), dim(g.col_dim))
        }
        _ => dim(g.col_dim),
    };
    let _ = writeln!(
        out,
        "\n**Device layout** ({head}; like `jax.debug.visualize_array_sharding`): the \
         devices holding each tile. Device ids are logical: positions in the device \
         assignment (the mesh's device order), not physical device ids.\n"
    );
    let range = |r: &Option<(i64, i64)>, i: usize| match r {
        Some((lo, hi)) if lo == hi => "pad".to_string(),
        Some((lo, hi)) => format!("{lo}:{hi}"),
        None => format!("shard {i}"),
    };
    let cols = g.cols.len().min(MAX_COLS);
    let _ = write!(out, "| |");
    for (i, c) in g.cols.iter().take(cols).enumerate() {
        let _ = write!(out, " {} |", range(c, i));
    }
    if g.cols.len() > cols {
        let _ = write!(out, " … |");
    }
    let _ = write!(out, "\n|---|");
    for _ in 0..cols + usize::from(g.cols.len() > cols) {
        let _ = write!(out, "---|");
    }
    out.push('\n');
    for (r, row) in g.tiles.iter().enumerate().take(MAX_ROWS) {
        let label = match g.row_dim {
            Some(_) => format!("**{}**", range(&g.rows[r], r)),
            None => String::new(),
        };
        let _ = write!(out, "| {label} |");
        for t in row.iter().take(cols) {
            let _ = write!(out, " {} |", compact_ids(t));
        }
        if g.cols.len() > cols {
            let _ = write!(out, " … |");
        }
        out.push('\n');
    }
    if g.tiles.len() > MAX_ROWS {
        let _ = writeln!(out, "\n… {} more rows.", g.tiles.len() - MAX_ROWS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact() {
        assert_eq!(compact_ids(&[0, 1, 2, 3, 8, 9, 10, 11]), "0–3, 8–11");
        assert_eq!(compact_ids(&[0, 1]), "0, 1");
        assert_eq!(compact_ids(&[5]), "5");
        assert_eq!(compact_ids(&[0, 8, 16, 24, 32]), "0, 8, …, 32 (5 devices)");
        assert_eq!(compact_ids(&[0, 2, 4, 6]), "0, 2, 4, 6");
        assert_eq!(
            compact_ids(&[0, 1, 3, 4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19]),
            "0, 1, 3, 4, 6, 7, 9, 10, … (14 devices)"
        );
    }
}
