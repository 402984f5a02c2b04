//! The axis-ref algebra of Shardy's `AxisRefAttr` over a mesh: sizes, containment,
//! prefixes and suffixes, overlaps, merging, the two orders, set difference. One copy
//! for the verifier (which meets invalid refs: sizes below 1, products past `i64`) and
//! for the passes (which see verified ones): products saturate and sizes below 1
//! answer "no" instead of dividing by them, which changes nothing for valid refs.

use super::{AxisRef, Mesh};
use std::cmp::Ordering;

/// What the algebra needs of a mesh: axis sizes and the declaration order.
pub trait MeshAxes {
    /// The size of axis `name` (1 when the mesh has no such axis).
    fn axis_size(&self, name: &str) -> i64;
    /// Where axis `name` is declared, if the mesh has it.
    fn axis_position(&self, name: &str) -> Option<usize>;
}

impl MeshAxes for Mesh {
    fn axis_size(&self, name: &str) -> i64 {
        self.axes.iter().find(|(n, _)| n == name).map_or(1, |a| a.1)
    }
    fn axis_position(&self, name: &str) -> Option<usize> {
        self.axes.iter().position(|(n, _)| n == name)
    }
}

/// The size of axis `name` in `mesh` (1 when the mesh has no such axis).
pub fn mesh_axis_size(mesh: &impl MeshAxes, name: &str) -> i64 {
    mesh.axis_size(name)
}

/// `"name":(pre)size`.
pub fn sub_axis(name: &str, pre: i64, size: i64) -> AxisRef {
    AxisRef { name: name.into(), sub: Some((pre, size)) }
}

pub fn size(a: &AxisRef, mesh: &impl MeshAxes) -> i64 {
    match a.sub {
        Some((_, s)) => s,
        None => mesh.axis_size(&a.name),
    }
}

pub fn pre_size(a: &AxisRef) -> i64 {
    a.sub.map_or(1, |s| s.0)
}

/// `pre * size` of a sub-axis, the full size of a full axis.
pub fn next_pre_or_full(a: &AxisRef, mesh: &impl MeshAxes) -> i64 {
    match a.sub {
        Some((p, s)) => p.saturating_mul(s),
        None => size(a, mesh),
    }
}

/// The product of the sizes.
pub fn total_size(axes: &[AxisRef], mesh: &impl MeshAxes) -> i64 {
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
        (Some((ap, asz)), Some((bp, bsz))) => {
            ap <= bp && ap.saturating_mul(asz) >= bp.saturating_mul(bsz)
        }
    }
}

/// Whether `a` is a prefix of `b` (contained in `b`, same pre-size).
pub fn prefix_of(a: &AxisRef, b: &AxisRef) -> bool {
    contains(b, a) && pre_size(a) == pre_size(b)
}

pub fn strict_prefix_of(a: &AxisRef, b: &AxisRef) -> bool {
    a != b && prefix_of(a, b)
}

/// Whether `a` is `b`'s minor-most part (contained in `b`, ending where `b` ends).
pub fn suffix_of(a: &AxisRef, b: &AxisRef, mesh: &impl MeshAxes) -> bool {
    contains(b, a) && next_pre_or_full(a, mesh) == next_pre_or_full(b, mesh)
}

pub fn overlaps(a: &AxisRef, b: &AxisRef) -> bool {
    if a.name != b.name {
        return false;
    }
    match (a.sub, b.sub) {
        (Some((ap, asz)), Some((bp, bsz))) => {
            ap < bp.saturating_mul(bsz) && bp < ap.saturating_mul(asz)
        }
        _ => true,
    }
}

/// Whether two sub-axis ranges of one axis can be used together in a valid sharding.
/// Ranges with a pre-size or size below 1 (reported by the sharding's own checks)
/// coexist with nothing.
fn sub_axes_can_coexist(min_pre: i64, max_pre: i64, min_next: i64, max_next: i64) -> bool {
    if min_pre < 1 || min_next < 1 {
        return false;
    }
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
            let (an, bn) = (ap.saturating_mul(asz), bp.saturating_mul(bsz));
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
            let (an, bn) = (ap.saturating_mul(asz), bp.saturating_mul(bsz));
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
    if ap >= bp || ap < 1 {
        return None;
    }
    Some(sub_axis(&a.name, ap, bp / ap))
}

/// The largest suffix of `a` that does not overlap `b`.
pub fn suffix_without_overlap(a: &AxisRef, b: &AxisRef, mesh: &impl MeshAxes) -> Option<AxisRef> {
    if !can_coexist(a, b) {
        return None;
    }
    if !overlaps(a, b) {
        return Some(a.clone());
    }
    let (an, bn) = (next_pre_or_full(a, mesh), next_pre_or_full(b, mesh));
    if an <= bn || bn < 1 {
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

/// `a` directly precedes `b` as sub-axes of one axis.
pub fn can_merge(a: &AxisRef, b: &AxisRef) -> bool {
    if a.name != b.name {
        return false;
    }
    match (a.sub, b.sub) {
        (Some((ap, asz)), Some((bp, _))) => ap.saturating_mul(asz) == bp,
        _ => false,
    }
}

/// The merge of two mergeable sub-axes: the full axis when it covers it.
pub fn merge(a: &AxisRef, b: &AxisRef, mesh: &impl MeshAxes) -> AxisRef {
    let (ap, asz) = a.sub.unwrap_or((1, 1));
    let size = asz.saturating_mul(b.sub.map_or(1, |s| s.1));
    if mesh.axis_size(&a.name) == size {
        return AxisRef::full(a.name.clone());
    }
    sub_axis(&a.name, ap, size)
}

/// Appends `a`, merging it into the last axis when they are consecutive sub-axes.
pub fn add_axis_or_merge(v: &mut Vec<AxisRef>, a: AxisRef, mesh: &impl MeshAxes) {
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

/// Shardy's mesh comparator: by the axis order of the mesh (an axis it lacks after
/// those it has), then [`axis_lt`].
pub fn mesh_cmp(a: &AxisRef, b: &AxisRef, mesh: &impl MeshAxes) -> Ordering {
    if a.name == b.name {
        return axis_cmp(a, b);
    }
    let position = |n: &str| mesh.axis_position(n).unwrap_or(usize::MAX);
    position(&a.name).cmp(&position(&b.name)).then_with(|| a.name.cmp(&b.name))
}

/// Sorts by the mesh order and merges consecutive sub-axes.
pub fn sort_and_merge(axes: &mut Vec<AxisRef>, mesh: &impl MeshAxes) {
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

/// The first axis of `ordered` (sorted by [`axis_cmp`], no overlaps) overlapping `axis`.
fn first_overlapping<'a>(axis: &AxisRef, ordered: &'a [AxisRef]) -> Option<&'a AxisRef> {
    let after = ordered.partition_point(|b| axis_cmp(b, axis) == Ordering::Less);
    if after > 0 && overlaps(axis, &ordered[after - 1]) {
        return Some(&ordered[after - 1]);
    }
    ordered.get(after).filter(|b| overlaps(axis, b))
}

/// The axes of `a` not covered by `b`, splitting sub-axes as needed.
pub fn set_difference(a: &[AxisRef], b: &[AxisRef], mesh: &impl MeshAxes) -> Vec<AxisRef> {
    if a.is_empty() || a == b {
        return Vec::new();
    }
    if b.is_empty() {
        return a.to_vec();
    }
    let mut set_b = b.to_vec();
    set_b.sort_by(axis_cmp);
    let mut out = Vec::new();
    for axis in a {
        let mut current = Some(axis.clone());
        while let Some(x) = current {
            let Some(hit) = first_overlapping(&x, &set_b) else {
                out.push(x);
                break;
            };
            if let Some(prefix) = prefix_without_overlap(&x, hit) {
                out.push(prefix);
            }
            let rest = suffix_without_overlap(&x, hit, mesh);
            // A sub-axis outside its axis (an invalid sharding, reported on its own)
            // would never shrink.
            if rest.as_ref() == Some(&x) {
                out.push(x);
                break;
            }
            current = rest;
        }
    }
    out
}

/// `[]`, `["x"]`, `["x":(1)2, "y"]`: a list of axis refs as Shardy's messages print it.
pub fn list_display(list: &[AxisRef]) -> String {
    let items: Vec<String> = list.iter().map(AxisRef::to_string).collect();
    format!("[{}]", items.join(", "))
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

    fn mesh(axes: &[(&str, i64)]) -> Mesh {
        Mesh { axes: axes.iter().map(|(n, s)| (n.to_string(), *s)).collect(), device_ids: vec![] }
    }
    fn full(n: &str) -> AxisRef {
        AxisRef::full(n)
    }

    #[test]
    fn containment_prefixes_and_overlaps() {
        let m = mesh(&[("a", 8), ("b", 2)]);
        let (a, a12, a22, a14) =
            (full("a"), sub_axis("a", 1, 2), sub_axis("a", 2, 2), sub_axis("a", 1, 4));
        assert!(contains(&a, &a22) && !contains(&a22, &a));
        assert!(prefix_of(&a12, &a14) && !prefix_of(&a22, &a14));
        assert!(overlaps(&a14, &a22) && !overlaps(&a12, &a22));
        assert!(suffix_of(&sub_axis("a", 4, 2), &a, &m) && !suffix_of(&a22, &a, &m));
        assert_eq!(prefix_without_overlap(&a, &a22), Some(a12.clone()));
        assert_eq!(prefix_without_overlap(&a22, &a12), Some(a22.clone()));
        assert_eq!(prefix_without_overlap(&a12, &a), None);
        assert_eq!(suffix_without_overlap(&a, &a12, &m), Some(sub_axis("a", 2, 4)));
        assert_eq!(
            list_prefix_status(std::slice::from_ref(&a12), std::slice::from_ref(&a14)),
            PrefixStatus::StrictPrefix
        );
        assert_eq!(list_prefix_status(&[a14], &[a12]), PrefixStatus::NotAPrefix);
    }

    #[test]
    fn merging_and_mesh_order() {
        let m = mesh(&[("a", 8), ("b", 2)]);
        let (a12, a22, a14) = (sub_axis("a", 1, 2), sub_axis("a", 2, 2), sub_axis("a", 1, 4));
        assert_eq!(merge(&a14, &sub_axis("a", 4, 2), &m), full("a"));
        assert_eq!(merge(&a12, &a22, &m), a14);
        let mut v = vec![full("b"), a22, a12];
        sort_and_merge(&mut v, &m);
        assert_eq!(v, vec![a14, full("b")]);
        assert_eq!(list_display(&[sub_axis("a", 1, 2), full("b")]), "[\"a\":(1)2, \"b\"]");
    }

    #[test]
    fn set_difference_splits_sub_axes() {
        let m = mesh(&[("x", 8), ("y", 2)]);
        assert_eq!(
            set_difference(&[full("x")], &[sub_axis("x", 2, 2)], &m),
            vec![sub_axis("x", 1, 2), sub_axis("x", 4, 2)]
        );
        assert_eq!(set_difference(&[full("x"), full("y")], &[full("y")], &m), vec![full("x")]);
    }

    /// Invalid refs (the verifier meets them) answer without overflow or division by 0.
    #[test]
    fn invalid_refs_do_not_panic() {
        let m = mesh(&[("x", 4)]);
        let huge = sub_axis("x", i64::MAX, 4);
        let zero = sub_axis("x", 0, 2);
        assert!(!can_coexist(&huge, &zero));
        assert_eq!(prefix_without_overlap(&zero, &full("x")), None);
        assert_eq!(next_pre_or_full(&huge, &m), i64::MAX);
    }
}
