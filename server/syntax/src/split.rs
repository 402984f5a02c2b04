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

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        split_chunks(text).into_iter().map(|s| s.text(text)).collect()
    }

    #[test]
    fn splits_like_mlir_opt() {
        assert_eq!(pieces("a\n// -----\nb\n"), ["a\n", "\nb\n"]);
        assert_eq!(pieces("no marker"), ["no marker"]);
        assert_eq!(pieces(""), [""]);
        // Not anchored to line starts; text after the marker on its line is code.
        assert_eq!(pieces("x  // -----  y"), ["x  ", "  y"]);
        // `// ----------` leaves `-----` at the start of the next chunk.
        assert_eq!(pieces("a// ----------b"), ["a", "-----b"]);
        // Empty chunks are kept, at the start, between markers and at the end.
        assert_eq!(pieces("// -----// -----"), ["", "", ""]);
    }

    #[test]
    fn chunks_keep_file_coordinates() {
        let text = "ab// -----cd// -----";
        assert_eq!(split_chunks(text), [Span::new(0, 2), Span::new(10, 12), Span::new(20, 20)]);
    }
}
