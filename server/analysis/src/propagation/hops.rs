//! The walk of an axis from its user-written sharding to a value: the ops it went
//! through. Walks are shared, not copied: the value after an op has its operand's walk
//! plus one hop, so a walk is a persistent list (newest hop first) whose links the
//! walks of earlier values share. A chain of N ops stores N hops, not N²/2, and a step
//! costs the same at the end of a long chain as at its start.

use super::driver::Phase;
use super::origins::Node;
use std::sync::Arc;

/// One step an axis took: through `op`, from one of its operands/results to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The op's absolute start (`None` for ops made by a pass, e.g. data-flow edges).
    pub op: Option<u32>,
    pub op_name: String,
    pub from: Node,
    pub to: Node,
    pub phase: Phase,
}

/// The hops of a walk, in order; cloning shares them.
#[derive(Clone, Default)]
pub struct Hops(Option<Arc<Link>>);

struct Link {
    hop: Hop,
    /// The walk before `hop`.
    prev: Hops,
    len: usize,
}

impl Hops {
    /// This walk followed by `hop` (sharing this walk's hops).
    pub fn then(&self, hop: Hop) -> Hops {
        Hops(Some(Arc::new(Link { hop, prev: self.clone(), len: self.len() + 1 })))
    }

    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |l| l.len)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The latest hop.
    pub fn last(&self) -> Option<&Hop> {
        self.0.as_ref().map(|l| &l.hop)
    }

    /// The first hop (a walk along the list).
    pub fn first(&self) -> Option<&Hop> {
        self.rev().last()
    }

    /// The hops from the latest to the first, without allocating.
    pub fn rev(&self) -> impl Iterator<Item = &Hop> {
        let mut at = self.0.as_deref();
        std::iter::from_fn(move || {
            let l = at?;
            at = l.prev.0.as_deref();
            Some(&l.hop)
        })
    }

    /// The first `n` hops, in order (without collecting the others).
    pub fn head(&self, n: usize) -> Vec<&Hop> {
        let mut v: Vec<&Hop> = self.rev().skip(self.len().saturating_sub(n)).collect();
        v.reverse();
        v
    }

    /// The hops in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Hop> + ExactSizeIterator {
        let mut v: Vec<&Hop> = self.rev().collect();
        v.reverse();
        v.into_iter()
    }

    /// Whether two walks share their storage (the same list, not merely equal hops).
    pub fn shares(&self, other: &Hops) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// Whether `earlier`'s hops are this walk's first hops, by storage: the walk was
    /// made from `earlier` by [`Hops::then`] (what keeps long chains linear).
    pub fn extends(&self, earlier: &Hops) -> bool {
        let mut at = self.clone();
        while at.len() > earlier.len() {
            at = at.0.as_ref().map(|l| l.prev.clone()).unwrap_or_default();
        }
        at.shares(earlier)
    }
}

impl PartialEq for Hops {
    fn eq(&self, other: &Hops) -> bool {
        self.shares(other) || (self.len() == other.len() && self.rev().eq(other.rev()))
    }
}

impl Eq for Hops {}

impl std::fmt::Debug for Hops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Drop for Hops {
    /// Unlinks iteratively: dropping the last reference to a walk of a long chain must
    /// not recurse once per hop (the stack would overflow).
    fn drop(&mut self) {
        let mut next = self.0.take();
        while let Some(link) = next {
            next = Arc::into_inner(link).and_then(|mut l| l.prev.0.take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(i: u32) -> Hop {
        let n = Node { result: false, index: 0 };
        Hop {
            op: Some(i),
            op_name: "stablehlo.add".into(),
            from: n,
            to: n,
            phase: Phase::default(),
        }
    }

    #[test]
    fn a_walk_extended_shares_its_hops() {
        let a = Hops::default().then(hop(1)).then(hop(2));
        let b = a.then(hop(3));
        assert_eq!((a.len(), b.len()), (2, 3));
        assert!(b.extends(&a) && !a.extends(&b));
        assert_eq!(b.iter().map(|h| h.op.unwrap()).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(b.first().and_then(|h| h.op), Some(1));
        assert_eq!(b.head(2).iter().map(|h| h.op.unwrap()).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(b.head(9).len(), 3);
        assert_eq!(b.last().and_then(|h| h.op), Some(3));
        // Equal hops made separately are equal, without sharing.
        let c = Hops::default().then(hop(1)).then(hop(2));
        assert!(c == a && !c.shares(&a) && !b.extends(&c));
        assert_eq!(format!("{:?}", Hops::default()), "[]");
    }

    #[test]
    fn a_long_walk_drops_without_recursion() {
        let mut w = Hops::default();
        for i in 0..1_000_000 {
            w = w.then(hop(i));
        }
        assert_eq!(w.len(), 1_000_000);
        drop(w);
    }
}
