//! Axis-ref algebra over a mesh: sizes, containment, prefixes, overlaps and merging of
//! (sub-)axes (`"a"` and `"a":(pre)size`), as Shardy's `AxisRefAttr` defines them.

use crate::print::sdy::{AxisRef, Mesh};
use std::cmp::Ordering;

/// The size of axis `name` in `mesh` (1 when the mesh has no such axis).
pub fn mesh_axis_size(mesh: &Mesh, name: &str) -> i64 {
    mesh.axes.iter().find(|(n, _)| n == name).map_or(1, |a| a.1)
}

/// `"name":(pre)size`.
pub fn sub_axis(name: &str, pre: i64, size: i64) -> AxisRef {
    AxisRef { name: name.into(), sub: Some((pre, size)) }
}

pub fn size(a: &AxisRef, mesh: &Mesh) -> i64 {
    match a.sub {
        Some((_, s)) => s,
        None => mesh_axis_size(mesh, &a.name),
    }
}

pub fn pre_size(a: &AxisRef) -> i64 {
    a.sub.map_or(1, |s| s.0)
}

/// `pre * size` of a sub-axis, the full size of a full axis.
pub fn next_pre_or_full(a: &AxisRef, mesh: &Mesh) -> i64 {
    match a.sub {
        Some((p, s)) => p * s,
        None => size(a, mesh),
    }
}

pub fn total_size(axes: &[AxisRef], mesh: &Mesh) -> i64 {
    axes.iter().map(|a| size(a, mesh)).product()
}

/// Whether `a` contains `b` (same name; `a` full, or `b`'s range inside `a`'s).
pub fn contains(a: &AxisRef, b: &AxisRef) -> bool {
    if a.name != b.name {
        return false;
    }
    match (a.sub, b.sub) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some((ap, asz)), Some((bp, bsz))) => ap <= bp && ap * asz >= bp * bsz,
    }
}

/// Whether `a` is a prefix of `b` (contained in `b`, same pre-size).
pub fn prefix_of(a: &AxisRef, b: &AxisRef) -> bool {
    contains(b, a) && pre_size(a) == pre_size(b)
}

pub fn strict_prefix_of(a: &AxisRef, b: &AxisRef) -> bool {
    a != b && prefix_of(a, b)
}

pub fn overlaps(a: &AxisRef, b: &AxisRef) -> bool {
    if a.name != b.name {
        return false;
    }
    match (a.sub, b.sub) {
        (Some((ap, asz)), Some((bp, bsz))) => ap < bp * bsz && bp < ap * asz,
        _ => true,
    }
}

fn sub_axes_can_coexist(min_pre: i64, max_pre: i64, min_next: i64, max_next: i64) -> bool {
    if min_next > max_pre {
        min_next % max_pre == 0 && max_pre % min_pre == 0 && max_next % min_next == 0
    } else {
        max_pre % min_next == 0
    }
}

pub fn can_coexist(a: &AxisRef, b: &AxisRef) -> bool {
    if a.name != b.name {
        return true;
    }
    match (a.sub, b.sub) {
        (Some((ap, asz)), Some((bp, bsz))) => {
            let (an, bn) = (ap * asz, bp * bsz);
            sub_axes_can_coexist(ap.min(bp), ap.max(bp), an.min(bn), an.max(bn))
        }
        _ => true,
    }
}

/// The overlap of `a` and `b`, when they overlap and can coexist.
pub fn overlap(a: &AxisRef, b: &AxisRef) -> Option<AxisRef> {
    if a.name != b.name {
        return None;
    }
    match (a.sub, b.sub) {
        (None, _) => Some(b.clone()),
        (_, None) => Some(a.clone()),
        (Some((ap, asz)), Some((bp, bsz))) => {
            let (an, bn) = (ap * asz, bp * bsz);
            let (min_pre, max_pre) = (ap.min(bp), ap.max(bp));
            let (min_next, max_next) = (an.min(bn), an.max(bn));
            if min_next <= max_pre || !sub_axes_can_coexist(min_pre, max_pre, min_next, max_next) {
                return None;
            }
            Some(sub_axis(&a.name, max_pre, min_next / max_pre))
        }
    }
}

/// The largest prefix of `a` that does not overlap `b`.
pub fn prefix_without_overlap(a: &AxisRef, b: &AxisRef) -> Option<AxisRef> {
    if !can_coexist(a, b) {
        return None;
    }
    if !overlaps(a, b) {
        return Some(a.clone());
    }
    let (ap, bp) = (pre_size(a), pre_size(b));
    if ap >= bp {
        return None;
    }
    Some(sub_axis(&a.name, ap, bp / ap))
}

/// The largest suffix of `a` that does not overlap `b`.
pub fn suffix_without_overlap(a: &AxisRef, b: &AxisRef, mesh: &Mesh) -> Option<AxisRef> {
    if !can_coexist(a, b) {
        return None;
    }
    if !overlaps(a, b) {
        return Some(a.clone());
    }
    let (an, bn) = (next_pre_or_full(a, mesh), next_pre_or_full(b, mesh));
    if an <= bn {
        return None;
    }
    Some(sub_axis(&a.name, bn, an / bn))
}

/// The largest prefix of `a` that overlaps none of `others`.
pub fn prefix_without_overlap_all<'a>(
    a: &AxisRef,
    others: impl IntoIterator<Item = &'a AxisRef>,
) -> Option<AxisRef> {
    let mut r = a.clone();
    for o in others {
        r = prefix_without_overlap(&r, o)?;
    }
    Some(r)
}

pub fn greatest_common_prefix(a: &AxisRef, b: &AxisRef) -> Option<AxisRef> {
    if !can_coexist(a, b) {
        return None;
    }
    if prefix_of(a, b) {
        return Some(a.clone());
    }
    if prefix_of(b, a) {
        return Some(b.clone());
    }
    None
}

/// The greatest common prefix of two axis lists.
pub fn common_prefix_list(a: &[AxisRef], b: &[AxisRef]) -> Vec<AxisRef> {
    let mut out = Vec::new();
    for (x, y) in a.iter().zip(b) {
        if x == y {
            out.push(x.clone());
            continue;
        }
        if let Some(p) = greatest_common_prefix(x, y) {
            out.push(p);
        }
        break;
    }
    out
}

pub fn can_merge(a: &AxisRef, b: &AxisRef) -> bool {
    if a.name != b.name {
        return false;
    }
    match (a.sub, b.sub) {
        (Some((ap, asz)), Some((bp, _))) => ap * asz == bp,
        _ => false,
    }
}

pub fn merge(a: &AxisRef, b: &AxisRef, mesh: &Mesh) -> AxisRef {
    let (ap, asz) = a.sub.unwrap_or((1, 1));
    let bsz = b.sub.map_or(1, |s| s.1);
    let size = asz * bsz;
    if mesh_axis_size(mesh, &a.name) == size && ap == 1 {
        return AxisRef::full(a.name.clone());
    }
    sub_axis(&a.name, ap, size)
}

/// Appends `a`, merging it into the last axis when they are consecutive sub-axes.
pub fn add_axis_or_merge(v: &mut Vec<AxisRef>, a: AxisRef, mesh: &Mesh) {
    if let Some(last) = v.last_mut() {
        if can_merge(last, &a) {
            *last = merge(last, &a, mesh);
            return;
        }
    }
    v.push(a);
}

/// `AxisRefAttr::operator<`: by name, then full axis / sub-axis ranges.
pub fn axis_lt(a: &AxisRef, b: &AxisRef) -> bool {
    if a.name != b.name {
        return a.name < b.name;
    }
    match (a.sub, b.sub) {
        (None, _) => pre_size(b) > 1,
        (Some(_), None) => pre_size(a) == 1,
        (Some(x), Some(y)) => x < y,
    }
}

fn axis_index(mesh: &Mesh, name: &str) -> usize {
    mesh.axes.iter().position(|(n, _)| n == name).unwrap_or(usize::MAX)
}

/// [`axis_lt`] as a total order (`llvm::sort` over `AxisRefAttr`s).
pub fn axis_cmp(a: &AxisRef, b: &AxisRef) -> Ordering {
    if axis_lt(a, b) {
        Ordering::Less
    } else if axis_lt(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// Shardy's mesh comparator: by the axis order of the mesh, then `axis_lt`.
pub fn mesh_cmp(a: &AxisRef, b: &AxisRef, mesh: &Mesh) -> Ordering {
    if a.name == b.name {
        axis_cmp(a, b)
    } else {
        axis_index(mesh, &a.name).cmp(&axis_index(mesh, &b.name)).then_with(|| a.name.cmp(&b.name))
    }
}

/// Sorts by the mesh order and merges consecutive sub-axes.
pub fn sort_and_merge(axes: &mut Vec<AxisRef>, mesh: &Mesh) {
    if axes.is_empty() {
        return;
    }
    axes.sort_by(|a, b| mesh_cmp(a, b, mesh));
    let mut out: Vec<AxisRef> = Vec::with_capacity(axes.len());
    for a in axes.drain(..) {
        match out.last_mut() {
            Some(last) if can_merge(last, &a) => *last = merge(last, &a, mesh),
            _ => out.push(a),
        }
    }
    *axes = out;
}

/// Whether `first` is a prefix of `second` (Shardy's `isAxisListPrefixOf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefixStatus {
    Equal,
    StrictPrefix,
    NotAPrefix,
}

pub fn list_prefix_status(first: &[AxisRef], second: &[AxisRef]) -> PrefixStatus {
    if first.is_empty() && second.is_empty() {
        return PrefixStatus::Equal;
    }
    if first.is_empty() {
        return PrefixStatus::StrictPrefix;
    }
    if first.len() > second.len() {
        return PrefixStatus::NotAPrefix;
    }
    let n = first.len();
    if first[..n - 1] != second[..n - 1] {
        return PrefixStatus::NotAPrefix;
    }
    if first.len() == second.len() && first[n - 1] == second[n - 1] {
        return PrefixStatus::Equal;
    }
    if prefix_of(&first[n - 1], &second[n - 1]) {
        return PrefixStatus::StrictPrefix;
    }
    PrefixStatus::NotAPrefix
}

pub fn is_strict_prefix(first: &[AxisRef], second: &[AxisRef]) -> bool {
    list_prefix_status(first, second) == PrefixStatus::StrictPrefix
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> Mesh {
        Mesh { axes: vec![("a".into(), 8), ("b".into(), 2)], device_ids: vec![] }
    }

    #[test]
    fn algebra() {
        let m = mesh();
        let a = AxisRef::full("a");
        let a12 = sub_axis("a", 1, 2);
        let a22 = sub_axis("a", 2, 2);
        let a14 = sub_axis("a", 1, 4);
        assert!(contains(&a, &a22) && !contains(&a22, &a));
        assert!(prefix_of(&a12, &a14) && !prefix_of(&a22, &a14));
        assert!(overlaps(&a14, &a22) && !overlaps(&a12, &a22));
        assert_eq!(prefix_without_overlap(&a, &a22), Some(a12.clone()));
        assert_eq!(prefix_without_overlap(&a22, &a12), Some(a22.clone()));
        assert_eq!(prefix_without_overlap(&a12, &a), None);
        assert_eq!(merge(&a14, &sub_axis("a", 4, 2), &m), a);
        assert_eq!(merge(&a12, &a22, &m), a14);
        let mut v = vec![AxisRef::full("b"), a22.clone(), a12.clone()];
        sort_and_merge(&mut v, &m);
        assert_eq!(v, vec![a14.clone(), AxisRef::full("b")]);
        assert_eq!(
            list_prefix_status(std::slice::from_ref(&a12), std::slice::from_ref(&a14)),
            PrefixStatus::StrictPrefix
        );
        assert_eq!(list_prefix_status(&[a14], &[a12]), PrefixStatus::NotAPrefix);
    }
}
