//! A small direct-mapped cache in front of the parser's interning maps. Spellings repeat
//! (op names, tensor types), and a hit costs a few compares instead of hashing the
//! spelling and probing a hash map.

const SLOTS: usize = 64;

/// A key and its value.
type Slot<'s, V> = Option<(&'s [u8], V)>;

pub(crate) struct Recent<'s, V> {
    slots: Box<[Slot<'s, V>; SLOTS]>,
}

impl<'s, V: Clone> Recent<'s, V> {
    pub(crate) fn new() -> Self {
        Recent { slots: Box::new(std::array::from_fn(|_| None)) }
    }

    /// The value last put under `key`, if its slot still holds it.
    #[inline]
    pub(crate) fn get(&self, key: &[u8]) -> Option<V> {
        match &self.slots[slot(key)?] {
            Some((k, v)) if same(k, key) => Some(v.clone()),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn put(&mut self, key: &'s [u8], value: V) {
        if let Some(i) = slot(key) {
            self.slots[i] = Some((key, value));
        }
    }
}

/// The slot of `key`, from eight bytes of its middle, its last eight and its length; keys
/// shorter than eight bytes are not cached.
#[inline]
fn slot(key: &[u8]) -> Option<usize> {
    let n = key.len();
    let word = |i: usize| {
        key.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()).map(u64::from_le_bytes)
    };
    let h = word(n.checked_sub(8)?)? ^ word(n / 2 - 4)?.rotate_left(29) ^ n as u64;
    Some((h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SLOTS)
}

/// `a == b`, without a call to `memcmp` for the usual lengths (16 to 32 bytes: two
/// overlapping 16-byte compares).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (16..=32).contains(&n) {
        let w = |s: &[u8], i: usize| s.get(i..i + 16).and_then(|w| <[u8; 16]>::try_from(w).ok());
        return w(a, 0) == w(b, 0) && w(a, n - 16) == w(b, n - 16);
    }
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_only_the_same_spelling() {
        let keys = ["tensor<16x8x128x32xf32>", "tensor<16x8x128x33xf32>", "stablehlo.dot_general"];
        let mut r = Recent::new();
        for (i, k) in keys.iter().enumerate() {
            r.put(k.as_bytes(), i);
        }
        for (i, k) in keys.iter().enumerate() {
            // A slot may have been taken over by a later key, never answered wrongly.
            assert!(r.get(k.as_bytes()).is_none_or(|v| v == i));
        }
        assert_eq!(r.get(keys[2].as_bytes()), Some(2));
        assert_eq!(r.get(b"tensor<16x8x128x34xf32>"), None);
        assert_eq!(r.get(b"short"), None);
    }
}
