//! Where offsets of the text a run saw are in the chunk's current text.

/// Maps offsets of the text a run saw to the current text of the chunk: offsets
/// before the first difference stay, offsets after the last one move with it, offsets
/// in the changed part have no counterpart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetMap {
    prefix: u32,
    old_tail: u32,
    delta: i64,
}

impl OffsetMap {
    pub fn new(old: &str, new: &str) -> OffsetMap {
        let (a, b) = (old.as_bytes(), new.as_bytes());
        let prefix = common_prefix(a, b);
        let max_suffix = a.len().min(b.len()) - prefix;
        let suffix = common_suffix(&a[prefix..], &b[prefix..]).min(max_suffix);
        OffsetMap {
            prefix: prefix as u32,
            old_tail: (a.len() - suffix) as u32,
            delta: b.len() as i64 - a.len() as i64,
        }
    }

    /// The old offsets that map into `lo..=hi` of the new text: at most two ranges
    /// (before the change, after it), so that a sorted list can be cut by binary search.
    pub fn preimage(&self, lo: u32, hi: u32) -> [(u32, u32); 2] {
        let before = (lo, hi.min(self.prefix));
        let shift = |o: u32| u32::try_from((o as i64 - self.delta).max(0)).unwrap_or(u32::MAX);
        // Offsets up to the prefix map as they are (even where the tail starts there).
        let after = (shift(lo).max(self.old_tail).max(self.prefix.saturating_add(1)), shift(hi));
        [before, after]
    }

    pub fn identity() -> OffsetMap {
        OffsetMap { prefix: u32::MAX, old_tail: u32::MAX, delta: 0 }
    }

    pub fn map(&self, offset: u32) -> Option<u32> {
        if offset <= self.prefix {
            Some(offset)
        } else if offset >= self.old_tail {
            u32::try_from(offset as i64 + self.delta).ok()
        } else {
            None
        }
    }
}

/// Bytes compared at once (slice equality is a `memcmp`), before the byte-wise step.
const BLOCK: usize = 4096;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut k = 0;
    while k + BLOCK <= n && a[n - k - BLOCK..n - k] == b[n - k - BLOCK..n - k] {
        k += BLOCK;
    }
    k + a[..n - k].iter().rev().zip(b[..n - k].iter().rev()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_map() {
        let m = OffsetMap::new("abc XYZ def", "abc Q def");
        assert_eq!(m.map(2), Some(2));
        assert_eq!(m.map(4), Some(4));
        assert_eq!(m.map(5), None);
        assert_eq!(m.map(7), Some(5));
        assert_eq!(m.map(11), Some(9));
        let same = OffsetMap::new("abc", "abc");
        assert_eq!(same.map(3), Some(3));
        // Repeated characters: the prefix and the suffix do not overlap.
        let m = OffsetMap::new("aaaa", "aaaaaa");
        assert_eq!(m.map(4), Some(4));
        assert_eq!(m.map(0), Some(0));
        // Longer than a block, the change in the middle.
        let old = format!("{}XYZ{}", "a".repeat(5000), "b".repeat(9000));
        let new = format!("{}Q{}", "a".repeat(5000), "b".repeat(9000));
        let m = OffsetMap::new(&old, &new);
        assert_eq!((m.prefix, m.old_tail, m.delta), (5000, 5003, -2));
        assert_eq!(m.map(6000), Some(5998));
    }

    #[test]
    fn preimage_is_what_maps_into_the_range() {
        let cases = [
            (
                format!("{}XYZ{}", "a".repeat(50), "b".repeat(90)),
                format!("{}Q{}", "a".repeat(50), "b".repeat(90)),
            ),
            ("a".repeat(50), "a".repeat(53)),
            ("a".repeat(53), "a".repeat(50)),
            ("xy".repeat(40), "xy".repeat(41)),
        ];
        for (old, new) in cases {
            check_preimage(&old, &new);
        }
    }

    fn check_preimage(old: &str, new: &str) {
        let m = OffsetMap::new(old, new);
        for (lo, hi) in [(0, 10), (40, 60), (49, 52), (51, 51), (60, 140), (0, 200)] {
            let want: Vec<u32> = (0..=old.len() as u32)
                .filter(|&o| m.map(o).is_some_and(|n| (lo..=hi).contains(&n)))
                .collect();
            let got: Vec<u32> = m
                .preimage(lo, hi)
                .iter()
                .flat_map(|&(a, b)| (a..=b.min(old.len() as u32)).collect::<Vec<_>>())
                .collect();
            assert_eq!(got, want, "{lo}..={hi}");
        }
    }
}
