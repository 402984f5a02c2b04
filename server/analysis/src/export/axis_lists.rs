//! Per-dimension axis lists of Shardy's export passes (`export/utils.cc`): aligning
//! sub-axes of two shardings so that overlapping sub-axes become equal.

use crate::sharding::axis::{
    axis_cmp, axis_lt, can_coexist, contains, overlap, overlaps, prefix_without_overlap,
    suffix_without_overlap,
};
use crate::sharding::{AxisRef, Mesh};

/// Every axis of `per_dim`, sorted by [`axis_cmp`].
pub fn ordered_axes(per_dim: &[Vec<AxisRef>]) -> Vec<AxisRef> {
    let mut all: Vec<AxisRef> = per_dim.iter().flatten().cloned().collect();
    all.sort_by(axis_cmp);
    all
}

/// The first axis of `ordered` (sorted, pairwise non-overlapping) that overlaps `a`:
/// it is the one just before or at `a`'s lower bound.
fn first_overlapping(a: &AxisRef, ordered: &[AxisRef]) -> Option<usize> {
    let after = ordered.partition_point(|o| axis_lt(o, a));
    if after > 0 && overlaps(a, &ordered[after - 1]) {
        return Some(after - 1);
    }
    (after < ordered.len() && overlaps(a, &ordered[after])).then_some(after)
}

/// Splits every axis of `axes` that partly overlaps axes of `ordered_other` into the
/// prefix outside, the overlap and the suffix outside, so that afterwards two
/// overlapping axes of the lists are equal (`alignSubAxesByDecomposition`).
pub fn align_sub_axes(axes: &mut Vec<AxisRef>, ordered_other: &[AxisRef], mesh: &Mesh) {
    let mut i = 0;
    while i < axes.len() {
        let mut axis = axes[i].clone();
        let mut over = first_overlapping(&axis, ordered_other);
        let mut advanced = false;
        while let Some(j) = over {
            let o = &ordered_other[j];
            if !(can_coexist(o, &axis) && !contains(o, &axis) && overlaps(o, &axis)) {
                break;
            }
            axes.remove(i);
            if let Some(p) = prefix_without_overlap(&axis, o) {
                axes.insert(i, p);
                i += 1;
            }
            let Some(common) = overlap(&axis, o) else { break };
            axes.insert(i, common);
            i += 1;
            match suffix_without_overlap(&axis, o, mesh) {
                Some(s) => {
                    // The suffix is the next axis to align, against the next axes.
                    axes.insert(i, s.clone());
                    axis = s;
                    over = (j + 1 < ordered_other.len()).then_some(j + 1);
                }
                None => {
                    advanced = true;
                    break;
                }
            }
        }
        if !advanced {
            i += 1;
        }
    }
}

/// [`align_sub_axes`] on every dimension.
pub fn align_sub_axes_per_dim(
    per_dim: &mut [Vec<AxisRef>],
    ordered_other: &[AxisRef],
    mesh: &Mesh,
) {
    if ordered_other.is_empty() {
        return;
    }
    for axes in per_dim {
        align_sub_axes(axes, ordered_other, mesh);
    }
}

/// Aligns the sub-axes of two per-dimension lists against each other.
pub fn align_both(a: &mut [Vec<AxisRef>], b: &mut [Vec<AxisRef>], mesh: &Mesh) {
    let (oa, ob) = (ordered_axes(a), ordered_axes(b));
    align_sub_axes_per_dim(a, &ob, mesh);
    align_sub_axes_per_dim(b, &oa, mesh);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::axis::sub_axis;

    #[test]
    fn splits_partial_overlaps() {
        let mesh = Mesh { axes: vec![("x".into(), 8), ("y".into(), 2)], device_ids: vec![] };
        let mut a = vec![vec![AxisRef::full("x")], vec![AxisRef::full("y")]];
        let mut b = vec![vec![sub_axis("x", 2, 2)], vec![]];
        align_both(&mut a, &mut b, &mesh);
        let text: Vec<String> = a[0].iter().map(|x| x.to_string()).collect();
        assert_eq!(text, ["\"x\":(1)2", "\"x\":(2)2", "\"x\":(4)2"]);
        assert_eq!(b[0], vec![sub_axis("x", 2, 2)]);
    }
}
