//! The only place where LSP positions meet byte offsets.
//!
//! Inside, everything is a byte offset into the document (`u32`, like every span of the
//! syntax tree). LSP positions are `(line, character)` with `character` counted in the
//! negotiated encoding: UTF-8 code units (bytes) when the client offers it, else UTF-16
//! code units (the LSP default, VS Code's only choice).
//!
//! Lines follow the LSP specification: they end at `\n`, `\r\n` or `\r`, and at nothing
//! else. (The rope's own line index also breaks at U+2028, U+0085, ..., which editors do
//! not, so it cannot be used for line numbers.) [`LineIndex`] keeps the line starts and
//! is updated per edit; the rope answers the UTF-16 questions in `O(log n)` through its
//! char and UTF-16 metrics, so a column on a 1 MB line costs no more than on a short one.

use ropey::Rope;
use sdy_syntax::Span;
use tower_lsp::lsp_types::{Position, PositionEncodingKind, Range};

/// How `Position::character` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PositionEncoding {
    /// Bytes.
    Utf8,
    /// UTF-16 code units (LSP's default).
    #[default]
    Utf16,
}

impl PositionEncoding {
    /// The encoding to use given what the client offers (`general.positionEncodings`):
    /// UTF-8 when offered, else UTF-16 (which every client must support).
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> PositionEncoding {
        match offered {
            Some(list) if list.contains(&PositionEncodingKind::UTF8) => PositionEncoding::Utf8,
            _ => PositionEncoding::Utf16,
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }
}

/// Byte offsets of line starts, lines split as LSP splits them.
///
/// Kept in shared parts with an offset shift each (like the syntax tree's statement
/// lists): the document and its analysed revisions share one index, so an edit copies
/// the part headers and the parts it touches, not a million line starts, and moves the
/// lines after it by one number per part.
#[derive(Clone, Debug)]
pub struct LineIndex {
    parts: Vec<LinePart>,
    len: usize,
}

#[derive(Clone, Debug)]
struct LinePart {
    /// The index of its first line.
    first: usize,
    /// Added (wrapping) to the starts it stores.
    shift: u32,
    starts: std::sync::Arc<[u32]>,
}

/// Line starts per part (a rebuilt part holds up to twice as many).
const PART: usize = if cfg!(test) { 4 } else { 1024 };

impl LinePart {
    fn at(&self, k: usize) -> u32 {
        self.starts[k].wrapping_add(self.shift)
    }
}

impl PartialEq for LineIndex {
    fn eq(&self, other: &LineIndex) -> bool {
        self.starts() == other.starts()
    }
}

impl Eq for LineIndex {}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let b = text.as_bytes();
        let mut starts = vec![0];
        // memchr: a byte-at-a-time loop took 13 ms on a 10 MB file.
        for i in memchr::memchr2_iter(b'\n', b'\r', b) {
            if b[i] == b'\n' || b.get(i + 1) != Some(&b'\n') {
                starts.push(i as u32 + 1);
            }
        }
        LineIndex::from_starts(starts)
    }

    fn from_starts(starts: Vec<u32>) -> LineIndex {
        LineIndex { len: starts.len(), parts: chop(&starts, 0) }
    }

    /// Every line start (for tests).
    fn starts(&self) -> Vec<u32> {
        self.parts.iter().flat_map(|p| (0..p.starts.len()).map(|k| p.at(k))).collect()
    }

    /// The start of line `line`.
    pub fn start(&self, line: usize) -> Option<u32> {
        if line >= self.len {
            return None;
        }
        let p = &self.parts[self.part_of(line)];
        Some(p.at(line - p.first))
    }

    /// The part holding line `i` (`i < len`).
    fn part_of(&self, i: usize) -> usize {
        self.parts.partition_point(|p| p.first <= i) - 1
    }

    /// Like `slice::partition_point` over the line starts.
    fn partition_point(&self, pred: impl Fn(u32) -> bool) -> usize {
        let p = self.parts.partition_point(|p| pred(p.at(0)));
        let Some(part) = p.checked_sub(1).map(|p| &self.parts[p]) else { return 0 };
        let (mut lo, mut hi) = (1, part.starts.len());
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

    /// Builds the index from a rope (its chunks, without copying the text).
    pub fn from_rope(rope: &Rope) -> LineIndex {
        let mut starts = vec![0];
        let mut base = 0usize;
        let mut pending_cr = false;
        for chunk in rope.chunks() {
            let b = chunk.as_bytes();
            if pending_cr {
                // A `\r` ended the previous chunk: a line starts after it unless `\n` follows.
                if b.first() != Some(&b'\n') {
                    starts.push(base as u32);
                }
                pending_cr = false;
            }
            for (i, &c) in b.iter().enumerate() {
                if c == b'\n' {
                    starts.push((base + i) as u32 + 1);
                } else if c == b'\r' {
                    match b.get(i + 1) {
                        Some(b'\n') => {}
                        Some(_) => starts.push((base + i) as u32 + 1),
                        None => pending_cr = true,
                    }
                }
            }
            base += b.len();
        }
        if pending_cr {
            starts.push(base as u32);
        }
        LineIndex::from_starts(starts)
    }

    pub fn line_count(&self) -> usize {
        self.len
    }

    /// The 0-based line holding `offset`.
    pub fn line_of(&self, offset: u32) -> usize {
        self.partition_point(|s| s <= offset) - 1
    }

    /// Updates the index after `old_start..old_end` was replaced by `inserted`; `rope` is
    /// the text after the edit.
    ///
    /// Whether a position `p` starts a line depends on the bytes at `p - 1` and `p` only,
    /// so only positions `old_start..=old_start + inserted.len()` are looked at again;
    /// starts before the edit stay, starts after it move by the length change.
    pub fn apply_edit(&mut self, rope: &Rope, old_start: usize, old_end: usize, inserted: &str) {
        let a = old_start;
        let n = inserted.len();
        let delta = n as i64 - (old_end - old_start) as i64;
        let len = rope.len_bytes();
        let ins = inserted.as_bytes();
        let byte = |i: usize| -> Option<u8> {
            if i >= len {
                None
            } else if i >= a && i < a + n {
                Some(ins[i - a])
            } else {
                Some(rope.byte(i))
            }
        };
        let mut fresh = Vec::new();
        for p in a.max(1)..=(a + n).min(len) {
            let starts_line = match byte(p - 1) {
                Some(b'\n') => true,
                Some(b'\r') => byte(p) != Some(b'\n'),
                _ => false,
            };
            if starts_line {
                fresh.push(p as u32);
            }
        }
        let lo = self.partition_point(|s| (s as usize) < a).max(1);
        let hi = self.partition_point(|s| s as usize <= old_end).max(lo);
        // The parts from the one of `lo` to the one of `hi` are rebuilt (starts from
        // `hi` on moved, `lo..hi` replaced); the later ones move by their shift.
        let last = self.len - 1;
        let (p0, p1) = (self.part_of(lo.min(last)), self.part_of(hi.min(last)));
        let base = self.parts[p0].first;
        let mut starts: Vec<u32> = Vec::new();
        for p in &self.parts[p0..=p1] {
            starts.extend((0..p.starts.len()).map(|k| p.at(k)));
        }
        for s in &mut starts[hi - base..] {
            *s = (*s as i64 + delta) as u32;
        }
        let (removed, added) = (hi - lo, fresh.len());
        starts.splice(lo - base..hi - base, fresh);
        let pieces = chop(&starts, base);
        let n = pieces.len();
        self.parts.splice(p0..=p1, pieces);
        for p in &mut self.parts[p0 + n..] {
            p.first = p.first + added - removed;
            p.shift = p.shift.wrapping_add(delta as u32);
        }
        self.len = self.len + added - removed;
    }
}

/// `starts` in parts, the first holding line `first`.
fn chop(starts: &[u32], first: usize) -> Vec<LinePart> {
    if starts.is_empty() {
        return Vec::new();
    }
    if starts.len() <= 2 * PART {
        let starts = starts.into();
        return vec![LinePart { first, shift: 0, starts }];
    }
    starts
        .chunks(PART)
        .enumerate()
        .map(|(i, c)| LinePart { first: first + i * PART, shift: 0, starts: c.into() })
        .collect()
}

/// A text with its line index, in one position encoding: converts both ways.
#[derive(Clone, Copy)]
pub struct Text<'a> {
    pub rope: &'a Rope,
    pub lines: &'a LineIndex,
    pub encoding: PositionEncoding,
}

impl<'a> Text<'a> {
    pub fn new(rope: &'a Rope, lines: &'a LineIndex, encoding: PositionEncoding) -> Text<'a> {
        Text { rope, lines, encoding }
    }

    fn len(&self) -> u32 {
        self.rope.len_bytes() as u32
    }

    /// UTF-16 code units before byte `b` (rounded down to a char boundary).
    fn utf16_at(&self, b: u32) -> usize {
        self.rope.char_to_utf16_cu(self.rope.byte_to_char(b as usize))
    }

    /// Where line `line`'s content ends: before its line break.
    fn line_end(&self, line: usize) -> u32 {
        match self.lines.start(line + 1) {
            None => self.len(),
            Some(next) => {
                let crlf = next >= 2
                    && self.rope.byte(next as usize - 1) == b'\n'
                    && self.rope.byte(next as usize - 2) == b'\r';
                next - if crlf { 2 } else { 1 }
            }
        }
    }

    /// The byte offset of an LSP position. Out-of-range positions are clamped: past the
    /// end of a line to its end, past the last line to the end of the text; a position
    /// inside a character (a UTF-16 surrogate pair, a UTF-8 sequence) to its start.
    pub fn offset(&self, pos: Position) -> u32 {
        let line = pos.line as usize;
        let Some(start) = self.lines.start(line) else { return self.len() };
        let end = self.line_end(line);
        match self.encoding {
            PositionEncoding::Utf8 => {
                let b = start.saturating_add(pos.character).min(end);
                self.rope.char_to_byte(self.rope.byte_to_char(b as usize)) as u32
            }
            PositionEncoding::Utf16 => {
                let (u0, u1) = (self.utf16_at(start), self.utf16_at(end));
                let target = (u0 + pos.character as usize).min(u1);
                let c = self.rope.utf16_cu_to_char(target);
                (self.rope.char_to_byte(c) as u32).min(end)
            }
        }
    }

    /// The LSP position of a byte offset (clamped to the text).
    pub fn position(&self, offset: u32) -> Position {
        let offset = offset.min(self.len());
        let line = self.lines.line_of(offset);
        let start = self.lines.start(line).unwrap_or(0);
        let character = match self.encoding {
            PositionEncoding::Utf8 => offset - start,
            PositionEncoding::Utf16 => (self.utf16_at(offset) - self.utf16_at(start)) as u32,
        };
        Position { line: line as u32, character }
    }

    pub fn range(&self, span: Span) -> Range {
        Range { start: self.position(span.start), end: self.position(span.end) }
    }

    /// The byte range of an LSP range (start and end clamped, end not before start).
    pub fn span(&self, range: Range) -> Span {
        let start = self.offset(range.start);
        let end = self.offset(range.end).max(start);
        Span::new(start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    fn round_trip(text: &str, enc: PositionEncoding) {
        let rope = Rope::from_str(text);
        let lines = LineIndex::new(text);
        let t = Text::new(&rope, &lines, enc);
        for (b, _) in text.char_indices().chain([(text.len(), ' ')]) {
            if b > 0 && text[..b].ends_with('\r') && text[b..].starts_with('\n') {
                continue; // inside a line break: no position of its own
            }
            let p = t.position(b as u32);
            assert_eq!(t.offset(p), b as u32, "{enc:?} offset {b} -> {p:?} in {text:?}");
        }
    }

    #[test]
    fn utf16_columns_count_code_units() {
        // `é` is 2 bytes / 1 UTF-16 unit; `😀` is 4 bytes / 2 UTF-16 units.
        let text = "// é😀\n%x = \"😀\" // x\n";
        let rope = Rope::from_str(text);
        let lines = LineIndex::new(text);
        let t = Text::new(&rope, &lines, PositionEncoding::Utf16);
        assert_eq!(t.position(3), pos(0, 3)); // before é
        assert_eq!(t.position(5), pos(0, 4)); // before 😀
        assert_eq!(t.position(9), pos(0, 6)); // end of line 0
        let x = text.find("// x").unwrap() as u32;
        assert_eq!(t.position(x), pos(1, 10));
        assert_eq!(t.offset(pos(1, 10)), x);
        // Inside the surrogate pair: the start of the character.
        assert_eq!(t.offset(pos(0, 5)), 5);
        // Past the end of a line: its end; past the last line: the end of the text.
        assert_eq!(t.offset(pos(0, 99)), 9);
        assert_eq!(t.offset(pos(7, 0)), text.len() as u32);

        let t8 = Text::new(&rope, &lines, PositionEncoding::Utf8);
        assert_eq!(t8.position(x), pos(1, x - 10));
        assert_eq!(t8.offset(pos(1, x - 10)), x);
        // Inside a UTF-8 sequence: the start of the character.
        assert_eq!(t8.offset(pos(0, 6)), 5);
    }

    #[test]
    fn lsp_line_breaks_only() {
        // \r\n, \r and \n break lines; U+2028 and U+0085 do not (the rope's lines do).
        let text = "a\r\nb\rc\nd\u{2028}e\u{85}f";
        let lines = LineIndex::new(text);
        assert_eq!(lines.starts(), vec![0, 3, 5, 7]);
        let rope = Rope::from_str(text);
        assert_eq!(LineIndex::from_rope(&rope), lines);
        let t = Text::new(&rope, &lines, PositionEncoding::Utf16);
        assert_eq!(t.offset(pos(0, 5)), 1); // clamped before \r\n
        assert_eq!(t.position(text.find('f').unwrap() as u32), pos(3, 4));
    }

    #[test]
    fn round_trips() {
        for text in ["", "\n", "x", "a\r\n\r\nb", "é\r😀\n\u{2028}ö", "\r", "😀😀\n😀"] {
            round_trip(text, PositionEncoding::Utf8);
            round_trip(text, PositionEncoding::Utf16);
        }
    }

    #[test]
    fn negotiation() {
        let offer = |l: &[PositionEncodingKind]| PositionEncoding::negotiate(Some(l));
        assert_eq!(PositionEncoding::negotiate(None), PositionEncoding::Utf16);
        assert_eq!(offer(&[PositionEncodingKind::UTF16]), PositionEncoding::Utf16);
        assert_eq!(
            offer(&[PositionEncodingKind::UTF32, PositionEncodingKind::UTF8]),
            PositionEncoding::Utf8
        );
        assert_eq!(offer(&[PositionEncodingKind::UTF32]), PositionEncoding::Utf16);
    }

    #[test]
    fn from_rope_handles_chunk_boundaries() {
        // Long enough for several rope chunks, with \r\n pairs at every alignment.
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(["ab\r\n", "c\r", "\n", "é\r\n", "\r\r\n"][i % 5]);
        }
        let rope = Rope::from_str(&text);
        assert_eq!(LineIndex::from_rope(&rope), LineIndex::new(&text));
    }

    /// Random edits with line breaks of every kind and multi-byte characters: the
    /// incrementally updated index equals one built from scratch.
    #[test]
    fn incremental_updates_match_a_fresh_index() {
        let pieces = ["", "a", "\n", "\r", "\r\n", "é", "😀", "x\ry", "\n\n", "\u{2028}"];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut text = String::from("ab\r\ncd\ref\n");
        let mut rope = Rope::from_str(&text);
        let mut lines = LineIndex::new(&text);
        for _ in 0..3000 {
            let bounds: Vec<usize> =
                text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let mut a = bounds[next(bounds.len())];
            let mut b = bounds[next(bounds.len())];
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            if next(3) == 0 {
                b = a;
            }
            let ins: String = (0..next(3)).map(|_| pieces[next(pieces.len())]).collect();
            text.replace_range(a..b, &ins);
            let (ca, cb) = (rope.byte_to_char(a), rope.byte_to_char(b));
            rope.remove(ca..cb);
            rope.insert(ca, &ins);
            lines.apply_edit(&rope, a, b, &ins);
            assert_eq!(lines, LineIndex::new(&text), "after replacing {a}..{b} by {ins:?}");
            if text.len() > 400 {
                text.truncate(text.char_indices().nth(100).map_or(0, |(i, _)| i));
                rope = Rope::from_str(&text);
                lines = LineIndex::new(&text);
            }
        }
    }
}
