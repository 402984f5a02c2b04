//! Mesh geometry: where a device sits in a mesh, its index along an axis or sub-axis,
//! and which shard of a tensor it holds. All arithmetic is checked: invalid or huge
//! meshes give `None`, never a panic.

use crate::model::sharding::{AxisRef, Mesh, TensorSharding};
use crate::sharding::axis::MeshAxes;

/// Meshes with at most this many devices get per-device tables.
pub const TABLE_MAX_DEVICES: i64 = 16;

/// The number of devices of a mesh with axes (`None` on overflow or a size below 1).
pub fn device_count(mesh: &Mesh) -> Option<i64> {
    mesh.device_count()
}

/// The size of an axis ref: the full axis size, or `k` of `"x":(m)k`.
pub fn axis_size(mesh: &Mesh, a: &AxisRef) -> Option<i64> {
    let full = mesh.axis(&a.name)?.1;
    Some(a.sub.map_or(full, |(_, k)| k))
}

/// The range `[pre, pre * size)` an axis ref covers within its full axis.
pub fn axis_range(a: &AxisRef, full: i64) -> (i64, i64) {
    match a.sub {
        None => (1, full),
        Some((m, k)) => (m, m.saturating_mul(k)),
    }
}

/// Why the sharding's axes cannot be laid out on the mesh, if they cannot: unknown
/// axes, sub-axes that do not fit their axis, overlapping axis refs.
pub fn layout_problem(mesh: &Mesh, s: &TensorSharding) -> Option<String> {
    if mesh.axes.iter().any(|a| a.1 < 1) {
        return Some("the mesh has an axis of size below 1".into());
    }
    if device_count(mesh).is_none() {
        return Some("the mesh is too large".into());
    }
    let all: Vec<&AxisRef> = s.all_axes().collect();
    for a in &all {
        let Some(axis) = mesh.axis(&a.name) else {
            return Some(format!("unknown axis {}", a));
        };
        if let Some((m, k)) = a.sub {
            let fits = m >= 1
                && k > 1
                && m.checked_mul(k).is_some_and(|mk| mk <= axis.1 && axis.1 % mk == 0);
            if !fits {
                return Some(format!(
                    "sub-axis {} does not fit axis \"{}\" of size {}",
                    a, a.name, axis.1
                ));
            }
        }
    }
    // The sub-axes of one axis must nest: each bound divides the next (`"x":(1)2` and
    // `"x":(3)2` of an axis of size 12 cannot both be cut out of it).
    for axis in &mesh.axes {
        let mut bounds = vec![1, axis.1];
        for a in all.iter().filter(|a| a.name == axis.0) {
            let (lo, hi) = axis_range(a, axis.1);
            bounds.extend([lo, hi]);
        }
        bounds.sort_unstable();
        bounds.dedup();
        if bounds.windows(2).any(|w| w[1] % w[0] != 0) {
            return Some(format!("the sub-axes of \"{}\" do not split it consistently", axis.0));
        }
    }
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            if a.name != b.name {
                continue;
            }
            let full = mesh.axis(&a.name).map_or(1, |x| x.1);
            let (a0, a1) = axis_range(a, full);
            let (b0, b1) = axis_range(b, full);
            if a0 < b1 && b0 < a1 {
                return Some(format!("{} and {} overlap", a, b));
            }
        }
    }
    None
}

/// Mesh coordinates of the device at (row-major) mesh position `p`.
pub fn coords(mesh: &Mesh, mut p: i64) -> Vec<i64> {
    let mut out = vec![0; mesh.axes.len()];
    for (i, a) in mesh.axes.iter().enumerate().rev() {
        let size = a.1.max(1);
        out[i] = p % size;
        p /= size;
    }
    out
}

/// The device id at mesh position `p`: `device_ids[p]`, or `p` in iota order.
pub fn device_id(mesh: &Mesh, p: i64) -> i64 {
    match mesh.explicit_device_ids() {
        Some(ids) => usize::try_from(p).ok().and_then(|i| ids.get(i)).copied().unwrap_or(p),
        None => p,
    }
}

/// For `"x":(m)k` of an axis of size `n`: the stride of the sub-axis within the axis,
/// `n / (m * k)` (the product of the sizes minor to it).
pub fn sub_axis_stride(full: i64, m: i64, k: i64) -> Option<i64> {
    let mk = m.checked_mul(k).filter(|&mk| mk >= 1 && full % mk == 0)?;
    Some(full / mk)
}

/// The index of a device (by its mesh coordinates) along an axis ref: its coordinate
/// on the full axis, or `(coordinate / (n / (m * k))) % k` for `"x":(m)k` (the axis
/// of size `n` viewed as `m × k × n/(m·k)`, major to minor).
pub fn index_along(mesh: &Mesh, coords: &[i64], a: &AxisRef) -> Option<i64> {
    let i = mesh.axis_position(&a.name)?;
    let c = *coords.get(i)?;
    Some(match a.sub {
        None => c,
        Some((m, k)) => (c / sub_axis_stride(mesh.axes[i].1, m, k)?) % k,
    })
}

/// The mixed-radix index of a device along a list of axis refs (major to minor), and
/// the product of their sizes.
pub fn index_along_all(mesh: &Mesh, coords: &[i64], axes: &[AxisRef]) -> Option<(i64, i64)> {
    axes.iter().try_fold((0i64, 1i64), |(idx, n), a| {
        let size = axis_size(mesh, a)?;
        Some((idx.checked_mul(size)? + index_along(mesh, coords, a)?, n.checked_mul(size)?))
    })
}

/// For each dimension: the index of the shard the device holds.
pub fn shard_index(mesh: &Mesh, s: &TensorSharding, coords: &[i64]) -> Option<Vec<i64>> {
    s.dims.iter().map(|d| index_along_all(mesh, coords, &d.axes).map(|(i, _)| i)).collect()
}

/// The number of shards of each dimension.
pub fn shard_counts(mesh: &Mesh, s: &TensorSharding) -> Vec<Option<i64>> {
    s.dims
        .iter()
        .map(|d| d.axes.iter().try_fold(1i64, |acc, a| acc.checked_mul(axis_size(mesh, a)?)))
        .collect()
}

/// The part of a full axis of size `full` not covered by `used` ranges, as sub-axes
/// (or the full axis when nothing of it is used).
pub fn unused_parts(name: &str, full: i64, used: &[(i64, i64)]) -> Vec<AxisRef> {
    let mut bounds = vec![1, full];
    for &(a, b) in used {
        bounds.push(a);
        bounds.push(b);
    }
    bounds.sort_unstable();
    bounds.dedup();
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        if lo < 1 || hi % lo != 0 || used.iter().any(|&(a, b)| a <= lo && hi <= b) {
            continue;
        }
        let sub = if lo == 1 && hi == full { None } else { Some((lo, hi / lo)) };
        out.push(AxisRef { name: name.into(), sub });
    }
    out
}

/// Groups of device ids that differ only along `axis` (each group in axis order), for
/// small meshes.
pub fn groups_along(mesh: &Mesh, axis: &AxisRef) -> Option<Vec<Vec<i64>>> {
    let n = device_count(mesh)?;
    if n > TABLE_MAX_DEVICES {
        return None;
    }
    let size = axis_size(mesh, axis)?;
    // (coordinates without the axis part, [(index along the axis, device id)])
    type Group = (Vec<i64>, Vec<(i64, i64)>);
    let mut groups: Vec<Group> = Vec::new();
    for p in 0..n {
        let c = coords(mesh, p);
        let idx = index_along(mesh, &c, axis)?;
        // The key: the coordinates with the axis part removed.
        let mut key = c.clone();
        let ai = mesh.axis_position(&axis.name)?;
        if let Some((m, k)) = axis.sub {
            key[ai] = c[ai] - idx * sub_axis_stride(mesh.axes[ai].1, m, k)?;
        } else {
            key[ai] = 0;
        }
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push((idx, device_id(mesh, p))),
            None => groups.push((key, vec![(idx, device_id(mesh, p))])),
        }
    }
    Some(
        groups
            .into_iter()
            .filter(|(_, m)| m.len() as i64 == size)
            .map(|(_, mut m)| {
                m.sort_unstable();
                m.into_iter().map(|(_, d)| d).collect()
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(axes: &[(&str, i64)], ids: Option<Vec<i64>>) -> Mesh {
        Mesh {
            axes: axes.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            device_ids: ids.unwrap_or_default(),
        }
    }
    fn sub(name: &str, m: i64, k: i64) -> AxisRef {
        AxisRef { name: name.into(), sub: Some((m, k)) }
    }

    #[test]
    fn coordinates_and_sub_axes() {
        let m = mesh(&[("x", 8), ("y", 2)], None);
        assert_eq!(coords(&m, 13), vec![6, 1]);
        // "x"=8 as 2 × 2 × 2: x-index 6 = 0b110, 5 = 0b101.
        assert_eq!(index_along(&m, &[6, 1], &sub("x", 1, 2)), Some(1));
        assert_eq!(index_along(&m, &[6, 1], &sub("x", 2, 2)), Some(1));
        assert_eq!(index_along(&m, &[6, 1], &sub("x", 4, 2)), Some(0));
        assert_eq!(index_along(&m, &[5, 1], &sub("x", 2, 2)), Some(0));
        assert_eq!(index_along(&m, &[5, 1], &sub("x", 2, 4)), Some(1));
        let parts = unused_parts("x", 8, &[(2, 4)]);
        let shown: Vec<String> = parts.iter().map(AxisRef::to_string).collect();
        assert_eq!(shown, ["\"x\":(1)2", "\"x\":(4)2"]);
        assert_eq!(unused_parts("y", 2, &[]).len(), 1);
        assert!(unused_parts("y", 2, &[(1, 2)]).is_empty());
    }

    #[test]
    fn groups() {
        let m = mesh(&[("x", 2), ("y", 2)], Some(vec![3, 2, 1, 0]));
        let x = AxisRef { name: "x".into(), sub: None };
        assert_eq!(groups_along(&m, &x), Some(vec![vec![3, 1], vec![2, 0]]));
        let m = mesh(&[("x", 4)], None);
        assert_eq!(groups_along(&m, &sub("x", 2, 2)), Some(vec![vec![0, 1], vec![2, 3]]));
        assert_eq!(groups_along(&m, &sub("x", 1, 2)), Some(vec![vec![0, 2], vec![1, 3]]));
    }

    #[test]
    fn huge_meshes_do_not_overflow() {
        let m = mesh(&[("x", i64::MAX), ("y", 4)], None);
        assert_eq!(device_count(&m), None);
    }
}
