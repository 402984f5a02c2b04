//! The statements of a block (or a chunk's top level): a list in shared parts.
//!
//! A real export has blocks of hundreds of thousands of statements. An edit inside one
//! of them copies the op that holds the block (the tree is shared between versions), so
//! a flat list would be copied whole (an atomic increment per statement) and every
//! later statement's offset rewritten. Here the list is a sequence of parts of up to
//! [`PART`] statements, each shared (`Arc`) and with a shift added to the offsets it
//! stores: a copy of the list copies only the part headers, an edit rebuilds the parts
//! it touches, and moving the statements after it changes one number per part.

use crate::span::Span;
use crate::tree::{Child, Op};
use std::ops::Range;
use std::sync::Arc;

/// Statements per part (a rebuilt part holds up to twice as many).
const PART: usize = 128;

/// A list of [`Child`]ren in shared parts (see the module doc). Reads give
/// [`ChildRef`]s, whose offsets are the stored ones plus their part's shift.
#[derive(Clone, Default)]
pub struct Children {
    parts: Vec<Part>,
    len: usize,
}

#[derive(Clone)]
struct Part {
    /// Index of the part's first statement in the list.
    first: usize,
    /// Added (wrapping) to the offsets stored in `kids`.
    shift: u32,
    kids: Arc<[Child]>,
}

/// A statement of a [`Children`] list: its offset and its op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChildRef<'a> {
    pub offset: u32,
    pub op: &'a Arc<Op>,
}

impl ChildRef<'_> {
    pub fn span(&self) -> Span {
        Span::new(self.offset, self.offset + self.op.len)
    }

    /// An owned copy (shares the op).
    pub fn to_child(&self) -> Child {
        Child { offset: self.offset, op: self.op.clone() }
    }
}

impl Part {
    fn at(&self, k: usize) -> ChildRef<'_> {
        let c = &self.kids[k];
        ChildRef { offset: c.offset.wrapping_add(self.shift), op: &c.op }
    }

    /// The part's statements, its shift applied, for changing them.
    fn kids_mut(&mut self) -> &mut [Child] {
        if self.shift != 0 || Arc::get_mut(&mut self.kids).is_none() {
            let shift = std::mem::take(&mut self.shift);
            self.kids = self
                .kids
                .iter()
                .map(|c| Child { offset: c.offset.wrapping_add(shift), op: c.op.clone() })
                .collect();
        }
        Arc::get_mut(&mut self.kids).expect("a part just copied is not shared")
    }
}

impl Children {
    pub const fn new() -> Children {
        Children { parts: Vec::new(), len: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The part holding statement `i` (`i < len`).
    fn part_of(&self, i: usize) -> usize {
        self.parts.partition_point(|p| p.first <= i) - 1
    }

    pub fn get(&self, i: usize) -> Option<ChildRef<'_>> {
        if i >= self.len {
            return None;
        }
        let p = &self.parts[self.part_of(i)];
        Some(p.at(i - p.first))
    }

    /// Statement `i`.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    pub fn at(&self, i: usize) -> ChildRef<'_> {
        self.get(i).unwrap_or_else(|| panic!("statement {i} of {}", self.len))
    }

    pub fn first(&self) -> Option<ChildRef<'_>> {
        self.get(0)
    }

    pub fn last(&self) -> Option<ChildRef<'_>> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            parts: &self.parts,
            front: [].iter(),
            front_shift: 0,
            back: [].iter(),
            back_shift: 0,
            left: self.len,
        }
    }

    /// The statements in `range`.
    pub fn range(&self, range: Range<usize>) -> impl DoubleEndedIterator<Item = ChildRef<'_>> {
        range.map(|i| self.at(i))
    }

    /// Like `slice::partition_point`: the first index whose statement fails `pred`
    /// (which must hold for a prefix of the list).
    pub fn partition_point(&self, mut pred: impl FnMut(ChildRef<'_>) -> bool) -> usize {
        // The last part whose first statement passes, then within it.
        let p = self.parts.partition_point(|p| pred(p.at(0)));
        let Some(part) = p.checked_sub(1).map(|p| &self.parts[p]) else { return 0 };
        let mut lo = 1;
        let mut hi = part.kids.len();
        while lo < hi {
            let mid = (lo + hi) / 2;
            if pred(part.at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        part.first + lo
    }

    /// Statement `i`, for changing it (copies its part when shared).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Child> {
        if i >= self.len {
            return None;
        }
        let p = self.part_of(i);
        let part = &mut self.parts[p];
        let k = i - part.first;
        Some(&mut part.kids_mut()[k])
    }

    /// Adds `delta` (wrapping: two's complement subtracts) to the offsets of the
    /// statements from `i` on: one number per part, except in the part holding `i`.
    pub fn shift_from(&mut self, i: usize, delta: u32) {
        if i >= self.len || delta == 0 {
            return;
        }
        let p = self.part_of(i);
        let part = &mut self.parts[p];
        if i == part.first {
            part.shift = part.shift.wrapping_add(delta);
        } else {
            let k = i - part.first;
            for c in &mut part.kids_mut()[k..] {
                c.offset = c.offset.wrapping_add(delta);
            }
        }
        for part in &mut self.parts[p + 1..] {
            part.shift = part.shift.wrapping_add(delta);
        }
    }

    /// Replaces the statements in `range` with `new`; only the parts that held them are
    /// rebuilt.
    pub fn splice(&mut self, range: Range<usize>, new: impl IntoIterator<Item = Child>) {
        assert!(range.start <= range.end && range.end <= self.len, "splice out of bounds");
        let new: Vec<Child> = new.into_iter().collect();
        if self.parts.is_empty() {
            *self = Children::from(new);
            return;
        }
        let p0 = self.part_of(range.start.min(self.len - 1));
        let p1 = if range.is_empty() { p0 } else { self.part_of(range.end - 1) };
        let base = self.parts[p0].first;
        let end = self.parts.get(p1 + 1).map_or(self.len, |p| p.first);
        let mut kids: Vec<Child> = Vec::with_capacity(end - base - range.len() + new.len());
        for p in &self.parts[p0..=p1] {
            kids.extend((0..p.kids.len()).map(|k| p.at(k).to_child()));
        }
        let (removed, added) = (range.len(), new.len());
        kids.splice(range.start - base..range.end - base, new);
        let pieces = chop(kids, base);
        let n_pieces = pieces.len();
        self.parts.splice(p0..=p1, pieces);
        for part in &mut self.parts[p0 + n_pieces..] {
            part.first = part.first - removed + added;
        }
        self.len = self.len - removed + added;
    }

    /// An owned copy of the statements (shares the ops).
    pub fn to_vec(&self) -> Vec<Child> {
        self.iter().map(|c| c.to_child()).collect()
    }

    /// How many statements at the start of two lists are the same (same op, same
    /// offset), and how many at the end (same op, offset moved by `delta`), not
    /// overlapping. Parts shared by both lists at the same place are passed over whole.
    pub fn common_ends(&self, other: &Children, delta: i64) -> (usize, usize) {
        let n = self.len.min(other.len);
        let delta = delta as u32;
        // The parts are looked up by cursors that only move one way (a lookup per step
        // would be a binary search over thousands of parts, per part passed over).
        let (pa, pb) = (&self.parts, &other.parts);
        let (mut ia, mut ib) = (0, 0);
        let mut prefix = 0;
        while prefix < n {
            while pa.get(ia).is_some_and(|p| p.first < prefix) {
                ia += 1;
            }
            while pb.get(ib).is_some_and(|p| p.first < prefix) {
                ib += 1;
            }
            if let (Some(a), Some(b)) = (starting(pa, ia, prefix), starting(pb, ib, prefix)) {
                let k = a.kids.len();
                if Arc::ptr_eq(&a.kids, &b.kids) && a.shift == b.shift && prefix + k <= n {
                    prefix += k;
                    continue;
                }
            }
            let (a, b) = (self.at(prefix), other.at(prefix));
            if a.offset == b.offset && Arc::ptr_eq(a.op, b.op) {
                prefix += 1;
            } else {
                break;
            }
        }
        // From the end: the last part starting before the end of what is left.
        let (mut ja, mut jb) = (pa.len(), pb.len());
        let mut suffix = 0;
        while suffix < n - prefix {
            let (ea, eb) = (self.len - suffix, other.len - suffix);
            while ja > 0 && pa[ja - 1].first >= ea {
                ja -= 1;
            }
            while jb > 0 && pb[jb - 1].first >= eb {
                jb -= 1;
            }
            if let (Some(a), Some(b)) = (ending(pa, ja, ea), ending(pb, jb, eb)) {
                let k = a.kids.len();
                if Arc::ptr_eq(&a.kids, &b.kids)
                    && b.shift == a.shift.wrapping_add(delta)
                    && suffix + k <= n - prefix
                {
                    suffix += k;
                    continue;
                }
            }
            let (a, b) = (self.at(ea - 1), other.at(eb - 1));
            if b.offset == a.offset.wrapping_add(delta) && Arc::ptr_eq(a.op, b.op) {
                suffix += 1;
            } else {
                break;
            }
        }
        (prefix, suffix)
    }
}

/// `parts[i]` if it starts at index `first`.
fn starting(parts: &[Part], i: usize, first: usize) -> Option<&Part> {
    parts.get(i).filter(|p| p.first == first)
}

/// `parts[j - 1]` if it ends at index `end` (exclusive).
fn ending(parts: &[Part], j: usize, end: usize) -> Option<&Part> {
    j.checked_sub(1).map(|j| &parts[j]).filter(|p| p.first + p.kids.len() == end)
}

/// `kids` in parts, the first at index `first`.
fn chop(kids: Vec<Child>, first: usize) -> Vec<Part> {
    if kids.is_empty() {
        return Vec::new();
    }
    if kids.len() <= 2 * PART {
        return vec![Part { first, shift: 0, kids: kids.into() }];
    }
    kids.chunks(PART)
        .enumerate()
        .map(|(i, c)| Part { first: first + i * PART, shift: 0, kids: c.into() })
        .collect()
}

impl From<Vec<Child>> for Children {
    fn from(kids: Vec<Child>) -> Children {
        let len = kids.len();
        Children { parts: chop(kids, 0), len }
    }
}

impl FromIterator<Child> for Children {
    fn from_iter<I: IntoIterator<Item = Child>>(iter: I) -> Children {
        Children::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl PartialEq for Children {
    fn eq(&self, other: &Children) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for Children {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a Children {
    type Item = ChildRef<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The statements of a [`Children`] list in order.
#[derive(Clone)]
pub struct Iter<'a> {
    /// The parts not started from either end.
    parts: &'a [Part],
    front: std::slice::Iter<'a, Child>,
    front_shift: u32,
    back: std::slice::Iter<'a, Child>,
    back_shift: u32,
    left: usize,
}

fn child_ref(c: &Child, shift: u32) -> ChildRef<'_> {
    ChildRef { offset: c.offset.wrapping_add(shift), op: &c.op }
}

impl<'a> Iterator for Iter<'a> {
    type Item = ChildRef<'a>;

    fn next(&mut self) -> Option<ChildRef<'a>> {
        loop {
            if let Some(c) = self.front.next() {
                self.left -= 1;
                return Some(child_ref(c, self.front_shift));
            }
            match self.parts.split_first() {
                Some((p, rest)) => {
                    self.front = p.kids.iter();
                    self.front_shift = p.shift;
                    self.parts = rest;
                }
                None => {
                    let c = self.back.next()?;
                    self.left -= 1;
                    return Some(child_ref(c, self.back_shift));
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(c) = self.back.next_back() {
                self.left -= 1;
                return Some(child_ref(c, self.back_shift));
            }
            match self.parts.split_last() {
                Some((p, rest)) => {
                    self.back = p.kids.iter();
                    self.back_shift = p.shift;
                    self.parts = rest;
                }
                None => {
                    let c = self.front.next_back()?;
                    self.left -= 1;
                    return Some(child_ref(c, self.front_shift));
                }
            }
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(n: usize) -> Vec<Child> {
        (0..n)
            .map(|i| {
                let mut op = Op::empty(crate::tree::StmtKind::Op);
                op.len = 1;
                Child { offset: 2 * i as u32, op: Arc::new(op) }
            })
            .collect()
    }

    fn offsets(c: &Children) -> Vec<u32> {
        c.iter().map(|c| c.offset).collect()
    }

    #[test]
    fn splice_shift_and_ends_agree_with_a_vec() {
        let mut seed = 7u64;
        let mut rnd = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for n in [0, 1, 5, 128, 300, 1000] {
            let mut v = list(n);
            let mut c = Children::from(v.clone());
            for _ in 0..60 {
                let old = c.clone();
                let a = rnd(v.len() + 1);
                let b = a + rnd(v.len() - a + 1).min(3);
                let new = list(rnd(4));
                v.splice(a..b, new.clone());
                c.splice(a..b, new);
                let at = rnd(v.len() + 1);
                let d = rnd(5) as u32;
                for x in &mut v[at..] {
                    x.offset = x.offset.wrapping_add(d);
                }
                c.shift_from(at, d);
                assert_eq!(offsets(&c), v.iter().map(|x| x.offset).collect::<Vec<_>>());
                assert_eq!(c.len(), v.len());
                assert!(c.iter().rev().map(|x| x.offset).eq(v.iter().rev().map(|x| x.offset)));
                let k = rnd(v.len() + 1);
                let prefix: Vec<*const Op> = v[..k].iter().map(|x| Arc::as_ptr(&x.op)).collect();
                assert_eq!(c.partition_point(|x| prefix.contains(&Arc::as_ptr(x.op))), k);
                // The ends against a plain scan.
                let (p, s) = old.common_ends(&c, d as i64);
                let m = old.len().min(c.len());
                let same = |i: usize| {
                    old.at(i).offset == c.at(i).offset && Arc::ptr_eq(old.at(i).op, c.at(i).op)
                };
                let p2 = (0..m).take_while(|&i| same(i)).count();
                let same_end = |j: usize| {
                    let (x, y) = (old.at(old.len() - 1 - j), c.at(c.len() - 1 - j));
                    y.offset == x.offset.wrapping_add(d) && Arc::ptr_eq(x.op, y.op)
                };
                let s2 = (0..m - p2).take_while(|&j| same_end(j)).count();
                assert_eq!((p, s), (p2, s2));
            }
        }
    }
}
