//! Axis references as plain values and the algebra Shardy's rules need: sizes,
//! overlap, containment, prefixes and suffixes, merging, mesh order, set difference.

use crate::model::sharding::{AxisRef, Mesh};
use std::cmp::Ordering;

/// An axis reference without a position: `"x"` or `"x":(pre)size`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ax {
    pub name: String,
    pub sub: Option<(i64, i64)>,
}

impl From<&AxisRef> for Ax {
    fn from(a: &AxisRef) -> Ax {
        Ax { name: a.name.clone(), sub: a.sub }
    }
}

impl std::fmt::Display for Ax {
    /// `"x"` or `"x":(2)4`, as Shardy prints axis refs in messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.sub {
            None => write!(f, "\"{}\"", self.name),
            Some((pre, size)) => write!(f, "\"{}\":({pre}){size}", self.name),
        }
    }
}

/// The axes of a list as values.
pub fn axes_of(list: &[AxisRef]) -> Vec<Ax> {
    list.iter().map(Ax::from).collect()
}

/// `[]`, `["x"]`, `["x":(1)2, "y"]`: a list of axis refs as Shardy prints it.
pub fn list_display(list: &[Ax]) -> String {
    let items: Vec<String> = list.iter().map(Ax::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The size of a mesh axis (1 when the mesh does not have it).
pub fn axis_size(mesh: &Mesh, name: &str) -> i64 {
    mesh.axis(name).map_or(1, |a| a.size)
}

impl Ax {
    fn sub_axis(name: &str, pre: i64, size: i64) -> Ax {
        Ax { name: name.to_string(), sub: Some((pre, size)) }
    }
    pub fn pre_size(&self) -> i64 {
        self.sub.map_or(1, |(p, _)| p)
    }
    pub fn size(&self, mesh: &Mesh) -> i64 {
        self.sub.map_or_else(|| axis_size(mesh, &self.name), |(_, s)| s)
    }
    /// pre-size × size for a sub-axis, the full size for a full axis.
    pub fn next_pre_size(&self, mesh: &Mesh) -> i64 {
        self.sub.map_or_else(|| axis_size(mesh, &self.name), |(p, s)| p.saturating_mul(s))
    }

    /// Whether `other` lies within this axis (a full axis contains all its sub-axes).
    pub fn contains(&self, other: &Ax) -> bool {
        if self.name != other.name {
            return false;
        }
        match (self.sub, other.sub) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some((p, s)), Some((op, os))) => {
                p <= op && p.saturating_mul(s) >= op.saturating_mul(os)
            }
        }
    }

    pub fn overlaps(&self, other: &Ax) -> bool {
        if self.name != other.name {
            return false;
        }
        match (self.sub, other.sub) {
            (Some((p, s)), Some((op, os))) => p < op.saturating_mul(os) && op < p.saturating_mul(s),
            _ => true,
        }
    }

    /// This axis is `other`'s minor-most part (ends where `other` ends).
    pub fn suffix_of(&self, other: &Ax, mesh: &Mesh) -> bool {
        other.contains(self) && self.next_pre_size(mesh) == other.next_pre_size(mesh)
    }

    /// Whether two refs of one axis can be used together in a valid sharding.
    pub fn can_coexist(&self, other: &Ax) -> bool {
        if self.name != other.name {
            return true;
        }
        let (Some((p1, s1)), Some((p2, s2))) = (self.sub, other.sub) else { return true };
        let (min_pre, max_pre) = (p1.min(p2), p1.max(p2));
        let (n1, n2) = (p1.saturating_mul(s1), p2.saturating_mul(s2));
        let (min_next, max_next) = (n1.min(n2), n1.max(n2));
        // Invalid sub-axes (pre-size or size below 1) are reported by the sharding's
        // own checks; they never coexist with anything.
        if min_pre < 1 || min_next < 1 {
            return false;
        }
        if min_next > max_pre {
            min_next % max_pre == 0 && max_pre % min_pre == 0 && max_next % min_next == 0
        } else {
            max_pre % min_next == 0
        }
    }

    /// The part of this axis major to `other`, if any.
    pub fn prefix_without_overlap(&self, other: &Ax) -> Option<Ax> {
        if !self.can_coexist(other) {
            return None;
        }
        if !self.overlaps(other) {
            return Some(self.clone());
        }
        let (pre, other_pre) = (self.pre_size(), other.pre_size());
        if pre >= other_pre || pre < 1 {
            return None;
        }
        Some(Ax::sub_axis(&self.name, pre, other_pre / pre))
    }

    /// The part of this axis minor to `other`, if any.
    pub fn suffix_without_overlap(&self, other: &Ax, mesh: &Mesh) -> Option<Ax> {
        if !self.can_coexist(other) {
            return None;
        }
        if !self.overlaps(other) {
            return Some(self.clone());
        }
        let (next, other_next) = (self.next_pre_size(mesh), other.next_pre_size(mesh));
        if next <= other_next || other_next < 1 {
            return None;
        }
        Some(Ax::sub_axis(&self.name, other_next, next / other_next))
    }

    /// `self` directly precedes `other` as sub-axes of one axis.
    pub fn can_merge(&self, other: &Ax) -> bool {
        match (self.sub, other.sub) {
            (Some((p, s)), Some((op, _))) => self.name == other.name && p.saturating_mul(s) == op,
            _ => false,
        }
    }

    /// The merge of two mergeable sub-axes (the full axis when it covers it).
    pub fn merge(&self, other: &Ax, mesh: &Mesh) -> Ax {
        let pre = self.pre_size();
        let size = self.sub.map_or(1, |s| s.1).saturating_mul(other.sub.map_or(1, |s| s.1));
        if axis_size(mesh, &self.name) == size {
            Ax { name: self.name.clone(), sub: None }
        } else {
            Ax::sub_axis(&self.name, pre, size)
        }
    }
}

/// Shardy's order on refs of one axis name: sub-axes by (pre-size, size); the full
/// axis after sub-axes with pre-size 1 and before the others.
fn same_name_order(a: &Ax, b: &Ax) -> Ordering {
    let less = |x: &Ax, y: &Ax| match (x.sub, y.sub) {
        (None, _) => y.pre_size() > 1,
        (Some((p, _)), None) => p == 1,
        (Some(xs), Some(ys)) => xs < ys,
    };
    if less(a, b) {
        Ordering::Less
    } else if less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// `AxisRefAttr`'s own order: by name, then sub-axis.
pub fn attr_order(a: &Ax, b: &Ax) -> Ordering {
    a.name.cmp(&b.name).then_with(|| same_name_order(a, b))
}

/// The mesh order: axis declaration order, then sub-axis. An axis the mesh has sorts
/// before one it lacks; two unknown names are unordered.
pub fn mesh_order(mesh: &Mesh, a: &Ax, b: &Ax) -> Ordering {
    if a.name == b.name {
        return same_name_order(a, b);
    }
    match (mesh.axis_index(&a.name), mesh.axis_index(&b.name)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// Sorts by mesh order and merges consecutive sub-axes.
pub fn sort_and_merge(axes: &mut Vec<Ax>, mesh: &Mesh) {
    axes.sort_by(|a, b| mesh_order(mesh, a, b));
    let mut out: Vec<Ax> = Vec::with_capacity(axes.len());
    for a in axes.drain(..) {
        match out.last_mut() {
            Some(last) if last.can_merge(&a) => *last = last.merge(&a, mesh),
            _ => out.push(a),
        }
    }
    *axes = out;
}

/// Appends `axis`, merging it into the last axis when they are consecutive sub-axes.
pub fn add_or_merge(axes: &mut Vec<Ax>, axis: &Ax, mesh: &Mesh) {
    match axes.last_mut() {
        Some(last) if last.can_merge(axis) => *last = last.merge(axis, mesh),
        _ => axes.push(axis.clone()),
    }
}

/// The first axis of `ordered` (sorted by `attr_order`, no overlaps) overlapping `axis`.
fn first_overlapping<'a>(axis: &Ax, ordered: &'a [Ax]) -> Option<&'a Ax> {
    let after = ordered.partition_point(|b| attr_order(b, axis) == Ordering::Less);
    if after > 0 && axis.overlaps(&ordered[after - 1]) {
        return Some(&ordered[after - 1]);
    }
    ordered.get(after).filter(|b| axis.overlaps(b))
}

/// The axes of `a` not covered by `b`, splitting sub-axes as needed.
pub fn axis_set_diff(a: &[Ax], b: &[Ax], mesh: &Mesh) -> Vec<Ax> {
    if a.is_empty() || a == b {
        return Vec::new();
    }
    if b.is_empty() {
        return a.to_vec();
    }
    let mut set_b = b.to_vec();
    set_b.sort_by(attr_order);
    let mut out = Vec::new();
    for axis in a {
        let mut current = Some(axis.clone());
        while let Some(x) = current {
            let Some(hit) = first_overlapping(&x, &set_b) else {
                out.push(x);
                break;
            };
            if let Some(prefix) = x.prefix_without_overlap(hit) {
                out.push(prefix);
            }
            let rest = x.suffix_without_overlap(hit, mesh);
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

/// The product of the axis sizes.
pub fn sharded_size(axes: &[Ax], mesh: &Mesh) -> i64 {
    axes.iter().map(|a| a.size(mesh)).product()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sharding::MeshAxis;
    use sdy_syntax::Span;

    fn mesh(axes: &[(&str, i64)]) -> Mesh {
        Mesh {
            axes: axes
                .iter()
                .map(|(n, s)| MeshAxis { name: n.to_string(), size: *s, span: Span::default() })
                .collect(),
            device_ids: None,
            span: Span::default(),
        }
    }
    fn full(n: &str) -> Ax {
        Ax { name: n.into(), sub: None }
    }
    fn sub(n: &str, p: i64, s: i64) -> Ax {
        Ax::sub_axis(n, p, s)
    }

    #[test]
    fn prefix_and_suffix() {
        let m = mesh(&[("x", 8)]);
        assert_eq!(full("x").prefix_without_overlap(&sub("x", 4, 2)), Some(sub("x", 1, 4)));
        assert!(sub("x", 4, 2).suffix_of(&full("x"), &m));
        assert!(!sub("x", 2, 2).suffix_of(&full("x"), &m));
        assert_eq!(full("x").suffix_without_overlap(&sub("x", 1, 2), &m), Some(sub("x", 2, 4)));
    }

    #[test]
    fn merge_and_order() {
        let m = mesh(&[("x", 4), ("y", 2)]);
        let mut v = vec![full("y"), sub("x", 2, 2), sub("x", 1, 2)];
        sort_and_merge(&mut v, &m);
        assert_eq!(v, vec![full("x"), full("y")]);
        assert_eq!(list_display(&[sub("x", 1, 2), full("y")]), "[\"x\":(1)2, \"y\"]");
    }

    #[test]
    fn set_difference_splits_sub_axes() {
        let m = mesh(&[("x", 8), ("y", 2)]);
        assert_eq!(
            axis_set_diff(&[full("x")], &[sub("x", 2, 2)], &m),
            vec![sub("x", 1, 2), sub("x", 4, 2)]
        );
        assert_eq!(axis_set_diff(&[full("x"), full("y")], &[full("y")], &m), vec![full("x")]);
    }
}
