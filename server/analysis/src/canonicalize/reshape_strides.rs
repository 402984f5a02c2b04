//! Whether two shardings of the same data across a reshape put every element on the
//! same device (Shardy's `isShardingEquivalentAcrossReshapes`): each axis of a sharding
//! has a linear stride over the row-major data; the shardings are equivalent when they
//! have the same axes with the same strides. Used by the canonicalizer (reshard
//! folding) and resolve-permutation-factors (communication-free reshapes).

use crate::sharding::axis::{mesh_axis_size, pre_size, size};
use crate::sharding::{AxisRef, Mesh, TensorSharding};

/// One axis of a sharding with the linear stride of its shards; for the non-divisible
/// comparison also the number of elements before its dimension (`prefix`) and the
/// dimension's size.
struct AxisStride {
    axis: AxisRef,
    stride: f64,
    prefix: i128,
    dim: i128,
}

fn is_near(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// Shardy's linear strides of every axis of `s` over `shape` (row-major), consecutive
/// sub-axes of one axis merged. With `non_divisible`, a dimension's shard is its exact
/// fraction and sub-axes merge when they start at the same element (or the minor one
/// spans its whole dimension). Sizes are `i128` so no input overflows.
fn axis_strides(
    s: &TensorSharding,
    shape: &[i64],
    mesh: &Mesh,
    non_divisible: bool,
) -> Option<Vec<AxisStride>> {
    if s.dims.len() != shape.len() {
        return None;
    }
    let sz = |a: &AxisRef| i128::from(size(a, mesh));
    let pre = |a: &AxisRef| i128::from(pre_size(a));
    let mut strides: Vec<AxisStride> = Vec::new();
    let mut cumulative = 1.0f64;
    for i in (0..shape.len()).rev() {
        let axes = &s.dims[i].axes;
        let total = axes.iter().try_fold(1i128, |acc, a| acc.checked_mul(sz(a)))?;
        let dim = i128::from(shape[i]);
        if total <= 0 || dim < 0 {
            return None;
        }
        let prefix_dims = shape[..i].iter().try_fold(1i128, |acc, &d| acc.checked_mul(d.into()))?;
        let shard = match non_divisible {
            true => dim as f64 / total as f64,
            false => ((dim + total - 1) / total) as f64,
        };
        let mut stride = cumulative * shard;
        let mut preceding = total;
        for a in axes.iter().rev() {
            preceding /= sz(a).max(1);
            let prefix = prefix_dims.checked_mul(preceding)?;
            strides.push(AxisStride { axis: a.clone(), stride, prefix, dim });
            stride *= sz(a) as f64;
        }
        cumulative *= dim as f64;
    }
    strides.sort_by(|a, b| a.stride.total_cmp(&b.stride));
    let mut merged: Vec<AxisStride> = Vec::new();
    for e in strides {
        if let Some(back) = merged.last_mut() {
            let (prev, cur) = (&back.axis, &e.axis);
            let adjacent = match non_divisible {
                true => {
                    back.prefix == e.prefix || (back.prefix == e.prefix * e.dim && sz(cur) == e.dim)
                }
                false => is_near(e.stride, back.stride * sz(prev) as f64),
            };
            if prev.name == cur.name && pre(cur) * sz(cur) == pre(prev) && adjacent {
                let p = pre_size(prev).min(pre_size(cur));
                let n = sz(prev) * sz(cur);
                back.axis = if p == 1 && n == i128::from(mesh_axis_size(mesh, &prev.name)) {
                    AxisRef::full(prev.name.clone())
                } else {
                    AxisRef { name: prev.name.clone(), sub: Some((p, i64::try_from(n).ok()?)) }
                };
                back.prefix = back.prefix.min(e.prefix);
                continue;
            }
        }
        merged.push(e);
    }
    Some(merged)
}

/// `isShardingEquivalentAcrossReshapes` for shardings on one mesh (the caller checks
/// the mesh names, replicated axes and layouts): `non_divisible` is Shardy's
/// `allowNonDivisible`.
pub fn equivalent_strides(
    s1: &TensorSharding,
    shape1: &[i64],
    s2: &TensorSharding,
    shape2: &[i64],
    mesh: &Mesh,
    non_divisible: bool,
) -> bool {
    let (Some(a), Some(b)) = (
        axis_strides(s1, shape1, mesh, non_divisible),
        axis_strides(s2, shape2, mesh, non_divisible),
    ) else {
        return false;
    };
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| {
            x.axis == y.axis
                && match non_divisible {
                    true => x.prefix == y.prefix,
                    false => is_near(x.stride, y.stride),
                }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::{DimSharding, MeshRef, Reduction};

    fn sharding(dims: Vec<Vec<AxisRef>>) -> TensorSharding {
        TensorSharding {
            mesh: MeshRef::Symbol("m".into()),
            dims: dims
                .into_iter()
                .map(|axes| DimSharding { axes, open: false, priority: None })
                .collect(),
            replicated: Vec::new(),
            unreduced: Vec::new(),
            reduction: Reduction::Sum,
        }
    }

    #[test]
    fn strides_merge_sub_axes() {
        let mesh = Mesh { axes: vec![("a".into(), 4), ("b".into(), 2)], device_ids: Vec::new() };
        let a = AxisRef::full("a");
        let lo = AxisRef { name: "a".into(), sub: Some((1, 2)) };
        let hi = AxisRef { name: "a".into(), sub: Some((2, 2)) };
        let same = |s1: Vec<Vec<AxisRef>>, t1: &[i64], s2: Vec<Vec<AxisRef>>, t2: &[i64], nd| {
            equivalent_strides(&sharding(s1), t1, &sharding(s2), t2, &mesh, nd)
        };
        // [{"a":(1)2}, {"a":(2)2}] over 2x4 lays out like [{"a"}] over 8.
        assert!(same(
            vec![vec![lo.clone()], vec![hi.clone()]],
            &[2, 4],
            vec![vec![a.clone()]],
            &[8],
            false
        ));
        // Swapped halves are a different layout.
        assert!(!same(
            vec![vec![hi.clone()], vec![lo.clone()]],
            &[2, 4],
            vec![vec![a.clone()]],
            &[8],
            false
        ));
        // [{"a"}, {}] over 8x4 and [{"a"}] over 32: same stride (16); [{}, {"a"}] over
        // 4x8 is not.
        assert!(same(vec![vec![a.clone()], vec![]], &[8, 4], vec![vec![a.clone()]], &[32], false));
        assert!(!same(vec![vec![], vec![a.clone()]], &[4, 8], vec![vec![a.clone()]], &[32], false));
        // Not divisible: [{"a"}, {}] over 6x2 and with a size-1 dimension inserted.
        assert!(same(
            vec![vec![a.clone()], vec![]],
            &[6, 2],
            vec![vec![a], vec![], vec![]],
            &[6, 1, 2],
            true
        ));
    }
}
