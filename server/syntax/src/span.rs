//! Byte ranges.
//!
//! Inside an [`crate::tree::Op`] every span is relative to the op's own start, so an op
//! is position independent and can be shared between document versions; absolute
//! positions are recovered by adding the offsets of the enclosing ops.

/// A half-open byte range `[start, end)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }
    pub const fn empty(at: u32) -> Span {
        Span { start: at, end: at }
    }
    pub fn len(self) -> u32 {
        self.end - self.start
    }
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
    /// The same range moved right by `by` bytes.
    pub fn shift(self, by: u32) -> Span {
        Span { start: self.start + by, end: self.end + by }
    }
    /// The same range moved left by `by` bytes.
    pub fn unshift(self, by: u32) -> Span {
        Span { start: self.start - by, end: self.end - by }
    }
    /// The smallest range covering both.
    pub fn cover(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
    /// Whether `offset` lies in the range; an empty range contains its position.
    pub fn contains(self, offset: u32) -> bool {
        (self.start <= offset && offset < self.end) || (self.is_empty() && offset == self.start)
    }
    /// Whether `offset` lies in the range or right at its end (cursor positions).
    pub fn touches(self, offset: u32) -> bool {
        self.start <= offset && offset <= self.end
    }
    pub fn text(self, src: &str) -> &str {
        &src[self.start as usize..self.end as usize]
    }
}
