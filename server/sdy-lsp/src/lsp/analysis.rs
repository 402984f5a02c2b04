//! Analysis results as the server keeps them: one [`ChunkResult`] per `// -----` chunk,
//! in chunk-relative coordinates, reused while the chunk's top-level ops are unchanged.
//!
//! A chunk is analysed as its own module, as if it were a file of its own (offsets from
//! its start, its own text as the source). The result therefore does not depend on where
//! the chunk sits in the file: an edit in another chunk, or one that moves this chunk,
//! keeps it. Whether a chunk changed is decided by its top-level ops: the syntax layer
//! shares unchanged ops between document versions through `Arc`, so the same pointers at
//! the same relative offsets mean the same text was parsed.
//!
//! A chunk that changed is analysed from the result of its previous version when there
//! is one ([`ChunkResult::update`]): its text is patched where the trees differ and the
//! analysis updated incrementally (`sdy_analysis::ChunkAnalysis::update`), equal to a
//! fresh analysis.

use super::documents::EditLog;
use super::position::{LineIndex, PositionEncoding, Text};
use ropey::Rope;
use sdy_analysis::ide::hover::Snapshot;
use sdy_analysis::ide::strings::{sites, Scope};
use sdy_analysis::incremental::{Garbage, UpdateStats};
use sdy_analysis::query;
use sdy_analysis::ChunkAnalysis;
use sdy_syntax::tree::{ChildRef, Children, Chunk, Op};
use sdy_syntax::Span;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

/// Marker that makes the analysis of a chunk panic when test hooks are on.
pub const TEST_PANIC_MARKER: &str = "sdy-lsp-test-panic";

/// The analysis of one chunk, positions relative to the chunk's start.
pub struct ChunkResult {
    /// The chunk's text.
    pub src: Arc<String>,
    pub analysis: ChunkAnalysis,
    /// Built on the first position query.
    index: OnceLock<query::Index>,
    /// Which of `top` is the explicit `module`, found on first use (a scan of the
    /// top-level statements: tens of thousands of `#loc` aliases in real exports).
    module: OnceLock<Option<usize>>,
    /// The document version `src` was taken from, the chunk's place in it and the
    /// version's mark in the document's [`EditLog`]: an update finds what changed since
    /// in the log, or compares the texts where the next version does not share pieces.
    origin: Option<(Rope, Span, u64)>,
}

impl ChunkResult {
    /// Analyses `chunk` of `rope`.
    pub fn compute(rope: &Rope, chunk: &Chunk, test_hooks: bool) -> ChunkResult {
        ChunkResult::with_text(chunk_text(rope, chunk), chunk, test_hooks).taken_from(
            rope,
            chunk.span,
            u64::MAX,
        )
    }

    /// Notes that the text is `span` of `rope`, at `mark` of the document's edit log
    /// (`u64::MAX`: unknown) (see `origin`).
    pub fn taken_from(mut self, rope: &Rope, span: Span, mark: u64) -> ChunkResult {
        self.origin = Some((rope.clone(), span, mark));
        self
    }

    /// Analyses `chunk`, whose text is `src`.
    pub fn with_text(src: String, chunk: &Chunk, test_hooks: bool) -> ChunkResult {
        ChunkResult::analyzed(src, chunk, test_hooks, sdy_analysis::analyze_chunk_incremental)
    }

    /// [`ChunkResult::with_text`] without what updates need, for the first diagnostics
    /// of a chunk sooner: [`ChunkResult::keep_state`] must follow before the result is
    /// used for anything else (until then it has no tree: [`ChunkResult::top`] is empty).
    pub fn quick(src: String, chunk: &Chunk, test_hooks: bool) -> ChunkResult {
        ChunkResult::analyzed(src, chunk, test_hooks, sdy_analysis::analyze_chunk)
    }

    fn analyzed(
        src: String,
        chunk: &Chunk,
        test_hooks: bool,
        analyze: fn(&str, &Chunk) -> ChunkAnalysis,
    ) -> ChunkResult {
        if test_hooks && src.contains(TEST_PANIC_MARKER) {
            panic!("analysis panic requested by the test marker");
        }
        let analysis = analyze(&src, &relative(chunk));
        ChunkResult::new(src, analysis, None)
    }

    fn new(src: String, analysis: ChunkAnalysis, origin: Option<(Rope, Span, u64)>) -> ChunkResult {
        let (index, module) = (OnceLock::new(), OnceLock::new());
        ChunkResult { src: Arc::new(src), analysis, index, module, origin }
    }

    /// Gives a [`ChunkResult::quick`] result of `chunk` what updates need.
    pub fn keep_state(&mut self, chunk: &Chunk) {
        let analysis = std::mem::take(&mut self.analysis);
        self.analysis = analysis.with_incremental_state(&self.src, &relative(chunk));
    }

    /// The analysis of `chunk` of `rope` (`log`: the document's edits up to it) from
    /// `base`, the analysis of an earlier version of it: the text patched where the trees
    /// differ, the analysis updated. Also what it replaced, to free off the hot path. The
    /// analysis keeps `chunk`'s tree (taken, not copied: a real export has tens of
    /// thousands of top-level statements).
    pub fn update(
        base: Arc<ChunkResult>,
        rope: &Rope,
        log: &EditLog,
        chunk: Chunk,
        test_hooks: bool,
    ) -> (ChunkResult, UpdateStats, Garbage) {
        let mark = log.count();
        // Unless a request still holds it, the base is taken over, not copied.
        let (src, analysis, origin) = match Arc::try_unwrap(base) {
            Ok(b) => (b.src, b.analysis, b.origin),
            Err(shared) => (shared.src.clone(), shared.analysis.clone(), shared.origin.clone()),
        };
        let span = chunk.span;
        let relative = Chunk { span: Span::new(0, span.len()), top: chunk.top };
        let len = span.len() as usize;
        let src = match analysis.changed_text(&relative) {
            Some((from, to, delta)) if src.len() as i64 + delta == len as i64 => {
                let mut src = Arc::try_unwrap(src).unwrap_or_else(|s| (*s).clone());
                let at = span.start as usize;
                let new_to = (to as i64 + delta) as usize;
                let piece: Cow<str> = rope.byte_slice(at + from as usize..at + new_to).into();
                src.replace_range(from as usize..to as usize, &piece);
                // The trees tell where statements changed, not where the text between
                // them did: edits analysed at once can change whitespace or a comment
                // elsewhere and keep its length. The edit log tells (else the text is
                // compared: with the version the base was taken from by the rope pieces
                // the edits copied, else in full), and such an update is done afresh.
                let same = match &origin {
                    Some((old, old_span, old_mark)) => {
                        let logged = log.changed_since(*old_mark).is_some_and(|(dirty, total)| {
                            edits_inside(dirty, total, *old_span, span, from, new_to as u32)
                        });
                        // (Edits in other chunks too: the texts tell.)
                        logged || same_outside(old, *old_span, rope, span, from, new_to as u32)
                    }
                    None => same_text(&src, rope, span),
                };
                drop(origin);
                if !same {
                    drop(analysis);
                    let stats = UpdateStats {
                        fresh: Some("text changed between the statements"),
                        ..UpdateStats::default()
                    };
                    let text = span_text(rope, span);
                    return (
                        ChunkResult::with_text(text, &relative, test_hooks)
                            .taken_from(rope, span, mark),
                        stats,
                        Garbage::default(),
                    );
                }
                src
            }
            _ => span_text(rope, span),
        };
        if test_hooks && src.contains(TEST_PANIC_MARKER) {
            panic!("analysis panic requested by the test marker");
        }
        // The analysis keeps the tree (the identity of the analysed text).
        let (mut analysis, stats) = analysis.update_owned(&src, relative);
        let garbage = analysis.take_garbage();
        (ChunkResult::new(src, analysis, Some((rope.clone(), span, mark))), stats, garbage)
    }

    /// Whether this result can serve as the base for `chunk`'s: it shares a statement at
    /// either end (an edit elsewhere in the same chunk).
    pub fn shares_with(&self, chunk: &Chunk) -> bool {
        let same = |a: Option<ChildRef>, b: Option<ChildRef>| match (a, b) {
            (Some(a), Some(b)) => Arc::ptr_eq(a.op, b.op),
            _ => false,
        };
        let top = self.top();
        same(top.first(), chunk.top.first()) || same(top.last(), chunk.top.last())
    }

    /// Whether this is the analysis of `chunk` (same top-level ops at the same offsets).
    pub fn is_for(&self, chunk: &Chunk) -> bool {
        let top = self.top();
        top.len() == chunk.top.len()
            && top
                .iter()
                .zip(&chunk.top)
                .all(|(a, b)| a.offset == b.offset && Arc::ptr_eq(a.op, b.op))
    }

    /// The position index of the model.
    pub fn index(&self) -> &query::Index {
        self.index.get_or_init(|| query::Index::new(&self.analysis.model))
    }

    /// The chunk as the analysis core's editor features see it.
    pub fn snapshot(&self) -> Snapshot<'_> {
        // The chunk's `module` is found once, not per request.
        let scope = Scope { model: &self.analysis.model, src: &self.src, module: self.module() };
        Snapshot { scope, index: self.index() }
    }

    /// The chunk's explicit `module` op and its chunk-relative start
    /// (`ide::strings::sites::module_of`), found once.
    pub fn module(&self) -> Option<(u32, &Op)> {
        let i = *self.module.get_or_init(|| {
            let (start, op) = sites::module_of(0, self.top())?;
            self.top().iter().position(|c| c.offset == start && std::ptr::eq(&**c.op, op))
        });
        let c = self.top().get(i?)?;
        Some((c.offset, c.op))
    }

    /// The chunk's top-level statements, offsets chunk-relative (alias definitions, the
    /// resource section and an explicit `module` are not in the model).
    pub fn top(&self) -> &Children {
        static EMPTY: Children = Children::new();
        self.analysis.tree().map_or(&EMPTY, |c| &c.top)
    }

    /// The text of a chunk-relative span.
    pub fn text(&self, span: Span) -> &str {
        self.src.get(span.start as usize..span.end as usize).unwrap_or("")
    }
}

/// One chunk of an analysed revision.
#[derive(Clone)]
pub struct AnalyzedChunk {
    /// The chunk's place in the document (absolute).
    pub span: Span,
    /// `None` if its analysis failed (a panic, already logged).
    pub result: Option<Arc<ChunkResult>>,
}

/// A whole document revision, analysed: everything a request needs, consistent with
/// itself (text, line index and results of the same revision).
pub struct Analyzed {
    /// The server's revision counter of the document (increases with every change).
    pub rev: u64,
    /// The client's version of that revision.
    pub version: i32,
    pub rope: Rope,
    pub lines: Arc<LineIndex>,
    pub chunks: Vec<AnalyzedChunk>,
}

impl Analyzed {
    pub fn text(&self, encoding: PositionEncoding) -> Text<'_> {
        Text::new(&self.rope, &self.lines, encoding)
    }

    /// The chunk holding absolute `offset` (its end included), with the chunk's start.
    pub fn chunk_at(&self, offset: u32) -> Option<(u32, &ChunkResult)> {
        let i = self.chunks.partition_point(|c| c.span.start <= offset).checked_sub(1)?;
        let c = &self.chunks[i];
        if offset > c.span.end {
            return None;
        }
        Some((c.span.start, c.result.as_deref()?))
    }

    /// The chunk results, for reuse by the next revision.
    pub fn results(&self) -> impl Iterator<Item = &Arc<ChunkResult>> {
        self.chunks.iter().filter_map(|c| c.result.as_ref())
    }
}

/// The text of `chunk` of `rope`.
pub fn chunk_text(rope: &Rope, chunk: &Chunk) -> String {
    span_text(rope, chunk.span)
}

/// The text of `span` of `rope`.
fn span_text(rope: &Rope, span: Span) -> String {
    let range = span.start as usize..span.end as usize;
    // Exactly sized: a `collect` from the rope would grow (and copy) it up to 2x.
    let mut src = String::with_capacity(range.len());
    for piece in rope.byte_slice(range).chunks() {
        src.push_str(piece);
    }
    src
}

/// Whether `src` is the text of `span` of `rope`.
fn same_text(src: &str, rope: &Rope, span: Span) -> bool {
    let range = span.start as usize..span.end as usize;
    if src.len() != range.len() {
        return false;
    }
    let mut at = 0;
    rope.byte_slice(range).chunks().all(|piece| {
        let same = src.as_bytes().get(at..at + piece.len()) == Some(piece.as_bytes());
        at += piece.len();
        same
    })
}

/// Whether the text of `new_span` of `new` is that of `old_span` of `old` outside an edit
/// (chunk-relative: the new text `[from, new_to)` is the edit's; the old text before
/// `from` and the same length of it at the end are compared). Versions of a document's
/// rope share their unchanged leaves: those are passed over by address, so only the
/// leaves an edit copied are compared byte by byte.
fn same_outside(
    old: &Rope,
    old_span: Span,
    new: &Rope,
    new_span: Span,
    from: u32,
    new_to: u32,
) -> bool {
    let (o, n) = (old_span.start as usize, new_span.start as usize);
    let (from, new_to) = (from as usize, new_to as usize);
    let tail = new_span.len() as usize - new_to;
    if old_span.end as usize > old.len_bytes()
        || new_span.end as usize > new.len_bytes()
        || (old_span.len() as usize) < from + tail
    {
        return false;
    }
    same_slices(old.byte_slice(o..o + from), new.byte_slice(n..n + from))
        && same_slices(
            old.byte_slice(old_span.end as usize - tail..old_span.end as usize),
            new.byte_slice(new_span.end as usize - tail..new_span.end as usize),
        )
}

/// Whether edits that wrote only inside `dirty` (absolute, in the new text; `None`:
/// no edit) and changed the length by `total` left the text of `new_span` the same as
/// that of `old_span` outside the chunk-relative edit (the new text `[from, new_to)`).
fn edits_inside(
    dirty: Option<(u64, u64)>,
    total: i64,
    old_span: Span,
    new_span: Span,
    from: u32,
    new_to: u32,
) -> bool {
    // The text before the edit stays in place, the text after it moves by `total`.
    let (n, from, new_to) = (new_span.start as u64, from as u64, new_to as u64);
    let placed = old_span.start == new_span.start
        && old_span.end as i64 + total == new_span.end as i64
        && new_to <= new_span.len() as u64;
    placed && dirty.is_none_or(|(lo, hi)| n + from <= lo && hi <= n + new_to)
}

/// Whether two rope slices hold the same bytes (pieces at the same address do).
fn same_slices(a: ropey::RopeSlice, b: ropey::RopeSlice) -> bool {
    if a.len_bytes() != b.len_bytes() {
        return false;
    }
    let (mut chunks_a, mut chunks_b) = (a.chunks(), b.chunks());
    let (mut pa, mut pb): (&[u8], &[u8]) = (&[], &[]);
    loop {
        if pa.is_empty() {
            match chunks_a.next() {
                Some(c) => pa = c.as_bytes(),
                // The lengths are equal: `b` is used up too.
                None => return true,
            }
            continue;
        }
        if pb.is_empty() {
            match chunks_b.next() {
                Some(c) => pb = c.as_bytes(),
                None => return false,
            }
            continue;
        }
        let k = pa.len().min(pb.len());
        if pa.as_ptr() != pb.as_ptr() && pa[..k] != pb[..k] {
            return false;
        }
        pa = &pa[k..];
        pb = &pb[k..];
    }
}

/// `chunk` with positions relative to its start, as it is analysed.
fn relative(chunk: &Chunk) -> Chunk {
    Chunk { span: Span::new(0, chunk.span.len()), top: chunk.top.clone() }
}

/// Finds a reusable result for `chunk` among `cache`.
pub fn reuse(cache: &[Arc<ChunkResult>], chunk: &Chunk) -> Option<Arc<ChunkResult>> {
    cache.iter().find(|r| r.is_for(chunk)).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdy_syntax::document::Document;

    /// Text compared across rope versions: equal outside the edit when only the edit
    /// changed, unequal when text elsewhere changed with the same length.
    #[test]
    fn rope_versions_compare_outside_the_edit() {
        let line = "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n";
        let text = format!("// head\n{}// tail\n", line.repeat(4000));
        let old = Rope::from_str(&text);
        let span = Span::new(0, text.len() as u32);
        let mut new = old.clone();
        let at = text.len() / 2;
        new.insert(new.byte_to_char(at), "  ");
        let new_span = Span::new(0, span.end + 2);
        let (from, new_to) = (at as u32 - 10, at as u32 + 12);
        assert!(same_outside(&old, span, &new, new_span, from, new_to));
        // The same edit, and one character replaced far from it.
        let mut other = new.clone();
        let far = other.byte_to_char(100);
        other.remove(far..far + 1);
        other.insert(far, "#");
        assert!(!same_outside(&old, span, &other, new_span, from, new_to));
        let far = other.byte_to_char(text.len() - 50);
        let mut after = new.clone();
        after.remove(far..far + 1);
        after.insert(far, "#");
        assert!(!same_outside(&old, span, &after, new_span, from, new_to));
    }

    /// A chunk's result stays valid when another chunk changes and this one moves.
    #[test]
    fn unchanged_chunks_are_reused_wherever_they_move() {
        let text = "func.func @a() {\n  return\n}\n// -----\nfunc.func @b(%x: tensor<2xf32>) {\n  return %y : tensor<2xf32>\n}\n";
        let mut doc = Document::new(text, true);
        let old_start = doc.chunks()[1].span.start;
        let before: Vec<ChunkResult> =
            doc.chunks().iter().map(|c| ChunkResult::compute(doc.text(), c, false)).collect();
        let at = text.find("return").unwrap();
        doc.apply_edit(at..at, "    ");
        assert!(!before[0].is_for(&doc.chunks()[0]));
        assert!(before[1].is_for(&doc.chunks()[1]));
        assert_eq!(doc.chunks()[1].span.start, old_start + 4);
        let fresh = ChunkResult::compute(doc.text(), &doc.chunks()[1], false);
        assert_eq!(before[1].analysis.diagnostics, fresh.analysis.diagnostics);
        assert!(!fresh.analysis.diagnostics.is_empty());
        // An edit inside the second chunk: not reusable any more.
        let at = doc.text().to_string().find("%y").unwrap();
        doc.apply_edit(at..at + 2, "%x");
        assert!(!before[1].is_for(&doc.chunks()[1]));
    }
}
