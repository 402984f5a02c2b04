//! The SSA names in scope while the model is built (and while an edit is patched in).

use super::ValueId;
use rustc_hash::FxHashMap;

/// A stack of per-region scopes searched innermost first, kept as one table plus an undo
/// log (entering a region notes the log's length; each new binding logs what it
/// shadowed; leaving the region restores that). Names are the tree's own strings, never
/// copied. `%N` names (most of them: MLIR numbers values) index an array, which is also
/// cache friendly as values are used soon after their definition; other names go through
/// a hash map.
#[derive(Default)]
pub(super) struct Names<'a> {
    numbered: Vec<ValueId>,
    hashed: FxHashMap<Key<'a>, ValueId>,
    undo: Vec<(Key<'a>, Option<ValueId>)>,
    /// `%N` names hashed too: for a patch, which binds few names, some with big numbers
    /// (an array up to them would be written at every edit).
    hash_numbers: bool,
}

/// Not a value in `Names::numbered`.
const UNBOUND: ValueId = ValueId::MAX;
/// `%N` names above this are hashed (no huge arrays for odd names).
const MAX_NUMBERED: u32 = 1 << 22;

impl<'a> Names<'a> {
    /// A table that hashes every name (see `hash_numbers`).
    pub(super) fn sparse() -> Names<'a> {
        Names { hash_numbers: true, ..Names::default() }
    }

    pub(super) fn get(&self, name: &str) -> Option<ValueId> {
        match key(name) {
            Key::Number(n) if !self.hash_numbers => {
                self.numbered.get(n as usize).copied().filter(|&v| v != UNBOUND)
            }
            k => self.hashed.get(&k).copied(),
        }
    }

    /// Binds `name` to `v`; the value it shadows, if any.
    pub(super) fn bind(&mut self, name: &'a str, v: ValueId) -> Option<ValueId> {
        let k = key(name);
        let shadowed = self.set(k, Some(v));
        self.undo.push((k, shadowed));
        shadowed
    }

    /// Binds or unbinds `k`; what it was bound to.
    fn set(&mut self, k: Key<'a>, v: Option<ValueId>) -> Option<ValueId> {
        match (k, v) {
            (Key::Number(n), _) if !self.hash_numbers => {
                let n = n as usize;
                if n >= self.numbered.len() {
                    self.numbered.resize((n + 1).max(2 * self.numbered.len()), UNBOUND);
                }
                let old = std::mem::replace(&mut self.numbered[n], v.unwrap_or(UNBOUND));
                (old != UNBOUND).then_some(old)
            }
            (k, Some(v)) => self.hashed.insert(k, v),
            (k, None) => self.hashed.remove(&k),
        }
    }

    /// Room for `n` bindings.
    pub(super) fn reserve(&mut self, n: usize) {
        self.undo.reserve(n);
    }

    /// A mark to leave a region with.
    pub(super) fn mark(&self) -> usize {
        self.undo.len()
    }

    /// Leaves the scopes entered since `mark`.
    pub(super) fn unbind_to(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let Some((k, shadowed)) = self.undo.pop() else { break };
            self.set(k, shadowed);
        }
    }
}

/// A name as a key: `%N` (decimal, no leading zero) as its number; other names of up
/// to 7 bytes (`%arg12`, `%cst_1`) packed with their length into an integer, so that
/// hashing and comparing them is one machine word; longer names as strings.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key<'a> {
    Number(u32),
    Short(u64),
    Long(&'a str),
}

fn key(name: &str) -> Key<'_> {
    let b = name.as_bytes();
    if let [b'%', digits @ ..] = b {
        if !digits.is_empty()
            && digits.len() <= 7
            && (digits[0] != b'0' || digits.len() == 1)
            && digits.iter().all(u8::is_ascii_digit)
        {
            let n = digits.iter().fold(0u32, |n, d| n * 10 + (d - b'0') as u32);
            if n < MAX_NUMBERED {
                return Key::Number(n);
            }
        }
    }
    if b.len() <= 7 {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        w[7] = b.len() as u8;
        Key::Short(u64::from_le_bytes(w))
    } else {
        Key::Long(name)
    }
}
