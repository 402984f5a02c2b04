//! `// -----` splitting with mlir-opt's semantics: a plain substring split (not anchored
//! to line starts); the marker belongs to no chunk; positions stay file coordinates.

use crate::span::Span;

pub const SPLIT_MARKER: &str = "// -----";

/// The chunks of `text`, in order.
pub fn split_chunks(text: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut start = 0usize;
    while let Some(i) = text[start..].find(SPLIT_MARKER) {
        out.push(Span::new(start as u32, (start + i) as u32));
        start += i + SPLIT_MARKER.len();
    }
    out.push(Span::new(start as u32, text.len() as u32));
    out
}
