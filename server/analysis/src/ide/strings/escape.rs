//! The text of a string literal as Shardy's round-trip import reads it, with an exact
//! map back to the source.
//!
//! Two layers of escapes: MLIR's string literal (`\22` is `"`, `\\`, `\n`, `\t`, `\XX`
//! any hex byte), then Shardy's `cunescape` over the result before the attribute is
//! parsed (`\"`, `\\`, `\n`, `\t`; any other backslash stays). So `\22` (3 source bytes)
//! and `\\\22` (5 source bytes) both read as one `"`.

use sdy_syntax::Span;

/// Decoded text and, for each of its bytes, where it starts in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unescaped {
    pub text: String,
    /// `starts[i]`: source offset of text byte `i`; `starts[text.len()]`: the end of the
    /// raw text. Strictly increasing: every text byte comes from at least one source byte.
    starts: Vec<u32>,
}

impl Unescaped {
    /// Decodes `raw` (the text between the quotes) found at source offset `at`; `None`
    /// if the bytes are not UTF-8 once decoded.
    pub fn decode(raw: &str, at: u32) -> Option<Unescaped> {
        let (bytes, starts) = mlir_layer(raw.as_bytes(), at);
        let (bytes, starts) = cunescape_layer(&bytes, &starts);
        let text = String::from_utf8(bytes).ok()?;
        Some(Unescaped { text, starts })
    }

    /// The source offset of text offset `i` (the raw end for `i == len`).
    pub fn source_offset(&self, i: u32) -> u32 {
        let last = self.starts.len() - 1;
        self.starts[(i as usize).min(last)]
    }

    /// The source range of a text range, widened to whole characters.
    pub fn source_span(&self, s: Span) -> Span {
        let (mut start, mut end) = (s.start as usize, s.end.max(s.start) as usize);
        end = end.min(self.text.len());
        start = start.min(end);
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        Span::new(self.source_offset(start as u32), self.source_offset(end as u32))
    }

    /// The text offset whose source bytes contain `offset` (the text end for the raw end);
    /// `None` outside the raw text.
    pub fn text_offset(&self, offset: u32) -> Option<u32> {
        let first = *self.starts.first()?;
        let end = *self.starts.last()?;
        if offset < first || offset > end {
            return None;
        }
        Some((self.starts.partition_point(|&s| s <= offset) - 1) as u32)
    }
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// MLIR's string literal escapes.
fn mlir_layer(raw: &[u8], at: u32) -> (Vec<u8>, Vec<u32>) {
    let mut out = Vec::with_capacity(raw.len());
    let mut starts = Vec::with_capacity(raw.len() + 1);
    let mut i = 0;
    while i < raw.len() {
        starts.push(at + i as u32);
        if raw[i] == b'\\' && i + 1 < raw.len() {
            let next = raw[i + 1];
            let pair = raw.get(i + 2).and_then(|&lo| Some(hex(next)? * 16 + hex(lo)?));
            let decoded = match next {
                b'\\' | b'"' => Some((next, 2)),
                b'n' => Some((b'\n', 2)),
                b't' => Some((b'\t', 2)),
                _ => pair.map(|b| (b, 3)),
            };
            if let Some((b, len)) = decoded {
                out.push(b);
                i += len;
                continue;
            }
        }
        out.push(raw[i]);
        i += 1;
    }
    starts.push(at + raw.len() as u32);
    (out, starts)
}

/// Shardy's `cunescape`, carrying the source offsets along.
fn cunescape_layer(bytes: &[u8], starts: &[u32]) -> (Vec<u8>, Vec<u32>) {
    let mut out = Vec::with_capacity(bytes.len());
    let mut out_starts = Vec::with_capacity(starts.len());
    let mut i = 0;
    while i < bytes.len() {
        out_starts.push(starts[i]);
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            let decoded = match bytes[i + 1] {
                b'n' => Some(b'\n'),
                b't' => Some(b'\t'),
                b'\\' => Some(b'\\'),
                b'"' => Some(b'"'),
                _ => None,
            };
            if let Some(b) = decoded {
                out.push(b);
                i += 2;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out_starts.push(starts[bytes.len()]);
    (out, out_starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_and_two_layers() {
        // `{\22x\22}` at offset 10: each `\22` is one `"`.
        let u = Unescaped::decode(r#"{\22x\22}"#, 10).unwrap();
        assert_eq!(u.text, r#"{"x"}"#);
        assert_eq!(u.source_span(Span::new(1, 4)), Span::new(11, 18)); // `\22x\22`
        assert_eq!(u.source_span(Span::new(2, 3)), Span::new(14, 15)); // `x`
                                                                       // The lit tests' `\\\22`: MLIR gives `\"`, cunescape gives `"`.
        let u = Unescaped::decode(r#"{\\\22a\\\22}"#, 0).unwrap();
        assert_eq!(u.text, r#"{"a"}"#);
        assert_eq!(u.source_span(Span::new(1, 2)), Span::new(1, 6));
        assert_eq!(u.source_span(Span::new(2, 3)), Span::new(6, 7));
        assert_eq!(u.source_offset(5), 13);
    }

    #[test]
    fn offsets_back_to_text() {
        let u = Unescaped::decode(r#"a\22é"#, 4).unwrap();
        assert_eq!(u.text, "a\"é");
        // `\`, `2`, `2` all map to the quote.
        assert_eq!(u.text_offset(5), Some(1));
        assert_eq!(u.text_offset(7), Some(1));
        assert_eq!(u.text_offset(8), Some(2));
        assert_eq!(u.text_offset(9), Some(3)); // inside `é`
        assert_eq!(u.text_offset(10), Some(4)); // the end
        assert_eq!(u.text_offset(3), None);
        assert_eq!(u.text_offset(11), None);
    }

    #[test]
    fn odd_escapes_stay() {
        let u = Unescaped::decode(r#"\q\"\\n\"#, 0).unwrap();
        // MLIR: `\q` kept, `\"` → `"`, `\\` → `\`, `n`, a lone trailing `\` kept; then
        // cunescape: `\n` (from `\\n`) → newline.
        assert_eq!(u.text, "\\q\"\n\\");
        assert!(Unescaped::decode(r#"\ff"#, 0).is_none()); // not UTF-8
    }
}
