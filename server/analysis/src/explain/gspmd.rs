//! The GSPMD `HloSharding` a sharding exports to, as XLA prints it.
//!
//! Follows Shardy's export to `HloSharding` (XLA's `convertToHloSharding`): mesh axes
//! are split into the sub-axes the sharding uses, the tile assignment is the mesh
//! (in device order) transposed to put the sharded axes first (in dimension order,
//! major to minor), then the unreduced and the remaining (replicated) axes; then XLA's
//! normalisation: iota tile assignments are canonicalised (size-1 dims dropped,
//! adjacent dims merged), a replicated-only sharding is `{replicated}`, one replicated
//! subgroup is `last_tile_dim_replicate` and, with an explicit device order, each
//! replicated group is sorted.

use super::devices::{self, axis_range};
use crate::model::sharding::{AxisRef, Mesh, TensorSharding};

/// Explicit device orders longer than this are not spelled out.
const MAX_LISTED_DEVICES: i64 = 256;

/// The `HloSharding` string of `s` on `mesh`, or why there is none.
pub fn hlo_sharding(mesh: &Mesh, s: &TensorSharding) -> Result<String, String> {
    if mesh.axes.is_empty() {
        return Ok(match mesh.explicit_device_ids() {
            Some([id, ..]) => format!("{{maximal device={id}}}"),
            _ => "{replicated}".to_string(),
        });
    }
    if let Some(problem) = devices::layout_problem(mesh, s) {
        return Err(problem);
    }
    let count = devices::device_count(mesh).ok_or("the mesh is too large")?;
    if count == 1 {
        return Err("a mesh of one device".into());
    }
    let refs = ordered_axis_refs(mesh, s);
    let key = |name: &str, sub: Option<(i64, i64)>| {
        let full = mesh.axis(name).map_or(1, |a| a.1);
        let (lo, hi) = match sub {
            None => (1, full),
            Some((m, k)) => (m, m * k),
        };
        refs.iter().position(|r| r.name == name && r.lo == lo && r.hi == hi)
    };
    // Positions in the transposed mesh: sharded axes, then unreduced, then the rest.
    let mut perm: Vec<usize> = Vec::with_capacity(refs.len());
    let mut tile_dims: Vec<i64> = Vec::with_capacity(s.dims.len() + 2);
    for d in &s.dims {
        let mut n = 1i64;
        for a in &d.axes {
            let i = key(&a.name, a.sub).ok_or("axis not in the mesh")?;
            perm.push(i);
            n = n.checked_mul(refs[i].size()).ok_or("overflow")?;
        }
        tile_dims.push(n);
    }
    let data: i64 = tile_dims.iter().product();
    let mut unreduced = 1i64;
    for a in &s.unreduced {
        let i = key(&a.name, a.sub).ok_or("axis not in the mesh")?;
        perm.push(i);
        unreduced *= refs[i].size();
    }
    let mut replicated = 1i64;
    for (i, r) in refs.iter().enumerate() {
        if !perm.contains(&i) {
            perm.push(i);
            replicated *= r.size();
        }
    }
    let mut types = Vec::new();
    if unreduced > 1 {
        tile_dims.push(unreduced);
        types.push("unreduced");
    }
    if replicated > 1 {
        tile_dims.push(replicated);
        types.push("replicated");
    }
    if data == 1 && types.len() == 1 {
        return Ok(format!("{{{}}}", types[0]));
    }
    let reshape: Vec<i64> = refs.iter().map(AxisPart::size).collect();
    if reshape.iter().try_fold(1i64, |acc, &n| acc.checked_mul(n)) != Some(count) {
        return Err("the sub-axes do not split the mesh consistently".into());
    }
    let devices = match mesh.explicit_device_ids() {
        None => iota_string(&tile_dims, &reshape, &perm),
        Some(ids) => {
            if ids.len() as i64 != count {
                return Err("the device ids do not match the mesh size".into());
            }
            if count > MAX_LISTED_DEVICES {
                return Err(format!("an explicit order of {count} devices"));
            }
            let mut list = transposed(ids, &reshape, &perm);
            if types.last() == Some(&"replicated") {
                for group in list.chunks_mut(replicated as usize) {
                    group.sort_unstable();
                }
            }
            format!("devices=[{}]{}", join(&tile_dims), join(&list))
        }
    };
    let suffix = match types.as_slice() {
        [] => String::new(),
        ["replicated"] => " last_tile_dim_replicate".into(),
        t => format!(" last_tile_dims={{{}}}", t.join(", ")),
    };
    Ok(format!("{{{devices}{suffix}}}"))
}

/// A full axis or sub-axis `[lo, hi)` of the mesh axis `name`.
#[derive(Debug)]
pub(crate) struct AxisPart {
    pub name: String,
    pub lo: i64,
    pub hi: i64,
}

impl AxisPart {
    pub fn size(&self) -> i64 {
        self.hi / self.lo
    }
}

/// The mesh axes in mesh order, each split at the bounds of the sub-axes the
/// dimensions and unreduced axes use (Shardy's `getOrderedAxisRefs`).
fn ordered_axis_refs(mesh: &Mesh, s: &TensorSharding) -> Vec<AxisPart> {
    split_axes(mesh, || s.dims.iter().flat_map(|d| &d.axes).chain(&s.unreduced))
}

/// The mesh axes in mesh order, each split at the bounds of the sub-axes in `used`.
pub(crate) fn split_axes<'a, I: Iterator<Item = &'a AxisRef>>(
    mesh: &Mesh,
    used: impl Fn() -> I,
) -> Vec<AxisPart> {
    let mut out = Vec::new();
    for axis in &mesh.axes {
        let mut bounds = vec![1, axis.1];
        for a in used().filter(|a| a.name == axis.0 && a.sub.is_some()) {
            let (lo, hi) = axis_range(a, axis.1);
            bounds.push(lo);
            bounds.push(hi);
        }
        if bounds.len() == 2 {
            // No sub-axis of it is used: the full axis (also when its size is 1).
            out.push(AxisPart { name: axis.0.clone(), lo: 1, hi: axis.1 });
            continue;
        }
        bounds.sort_unstable();
        bounds.dedup();
        for w in bounds.windows(2) {
            out.push(AxisPart { name: axis.0.clone(), lo: w[0], hi: w[1] });
        }
    }
    out
}

fn join(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// XLA's printed iota tile assignment: `devices=[dims]<=[reshape]T(perm)`.
fn iota_string(dims: &[i64], reshape: &[i64], perm: &[usize]) -> String {
    let total: i64 = reshape.iter().product();
    let (reshape, perm) = canonicalize(reshape.to_vec(), perm.to_vec());
    let trivial = perm.iter().enumerate().all(|(i, &p)| i == p);
    if trivial {
        return format!("devices=[{}]<=[{total}]", join(dims));
    }
    let perm: Vec<String> = perm.iter().map(usize::to_string).collect();
    format!("devices=[{}]<=[{}]T({})", join(dims), join(&reshape), perm.join(","))
}

/// XLA's canonical iota dims: drop dims of size 1 and merge dims that stay adjacent
/// and in order after the transpose, until nothing changes.
fn canonicalize(mut dims: Vec<i64>, mut perm: Vec<usize>) -> (Vec<i64>, Vec<usize>) {
    if dims.len() <= 1 {
        return (dims, perm);
    }
    loop {
        let mut old_to_new = vec![None; dims.len()];
        let mut n = 0;
        for (i, &d) in dims.iter().enumerate() {
            if d != 1 {
                old_to_new[i] = Some(n);
                n += 1;
            }
        }
        if n != dims.len() {
            dims.retain(|&d| d != 1);
            perm = perm.iter().filter_map(|&p| old_to_new[p]).collect();
        }
        let mut changed = false;
        let mut base = 0;
        for i in 1..dims.len() {
            let (base_dim, dim) = (perm[base], perm[i]);
            if base_dim + (i - base) == dim {
                dims[base_dim] *= dims[dim];
                dims[dim] = 1;
                changed = true;
            } else {
                base = i;
            }
        }
        if !changed {
            return (dims, perm);
        }
    }
}

/// The device ids (given in mesh order, shaped `reshape`) in transposed order.
fn transposed(ids: &[i64], reshape: &[i64], perm: &[usize]) -> Vec<i64> {
    let shape: Vec<i64> = perm.iter().map(|&p| reshape[p]).collect();
    let mut strides = vec![1i64; reshape.len()];
    for i in (0..reshape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * reshape[i + 1];
    }
    let mut out = Vec::with_capacity(ids.len());
    let mut index = vec![0i64; shape.len()];
    for _ in 0..ids.len() {
        let src: i64 = index.iter().zip(perm).map(|(&x, &p)| x * strides[p]).sum();
        out.push(ids[src as usize]);
        for i in (0..shape.len()).rev() {
            index[i] += 1;
            if index[i] < shape[i] {
                break;
            }
            index[i] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_iota() {
        assert_eq!(canonicalize(vec![2, 2, 2], vec![0, 2, 1]), (vec![2, 2, 2], vec![0, 2, 1]));
        assert_eq!(canonicalize(vec![2, 2, 2], vec![1, 2, 0]), (vec![2, 4], vec![1, 0]));
        assert_eq!(canonicalize(vec![4, 1], vec![1, 0]), (vec![4], vec![0]));
        assert_eq!(
            iota_string(&[2, 2, 2], &[2, 2, 2], &[1, 0, 2]),
            "devices=[2,2,2]<=[2,2,2]T(1,0,2)"
        );
        assert_eq!(iota_string(&[4, 2], &[2, 2, 2], &[0, 1, 2]), "devices=[4,2]<=[8]");
    }

    #[test]
    fn transpose_explicit_ids() {
        assert_eq!(transposed(&[0, 1, 2, 3, 4, 5], &[2, 3], &[1, 0]), vec![0, 3, 1, 4, 2, 5]);
    }
}
