//! Analysis results as the server keeps them: one [`ChunkResult`] per `// -----` chunk,
//! in chunk-relative coordinates, reused while the chunk's top-level ops are unchanged.
//!
//! A chunk is analysed as its own module, as if it were a file of its own (offsets from
//! its start, its own text as the source). The result therefore does not depend on where
//! the chunk sits in the file: an edit in another chunk, or one that moves this chunk,
//! keeps it. Whether a chunk changed is decided by its top-level ops: the syntax layer
//! shares unchanged ops between document versions through `Arc`, so the same pointers at
//! the same relative offsets mean the same text was parsed.

use super::position::{LineIndex, PositionEncoding, Text};
use ropey::Rope;
use sdy_analysis::query;
use sdy_analysis::ChunkAnalysis;
use sdy_syntax::tree::{Child, Chunk};
use sdy_syntax::Span;
use std::sync::{Arc, OnceLock};

/// Marker that makes the analysis of a chunk panic when test hooks are on.
pub const TEST_PANIC_MARKER: &str = "sdy-lsp-test-panic";

/// The analysis of one chunk, positions relative to the chunk's start.
pub struct ChunkResult {
    /// The chunk's top-level ops (the identity of the analysed text).
    top: Vec<Child>,
    /// The chunk's text.
    pub src: Arc<String>,
    pub analysis: ChunkAnalysis,
    /// Built on the first position query.
    index: OnceLock<query::Index>,
}

impl ChunkResult {
    /// Analyses `chunk` of `rope`.
    pub fn compute(rope: &Rope, chunk: &Chunk, test_hooks: bool) -> ChunkResult {
        let range = chunk.span.start as usize..chunk.span.end as usize;
        // Exactly sized: a `collect` from the rope would grow (and copy) it up to 2x.
        let mut src = String::with_capacity(range.len());
        for piece in rope.byte_slice(range).chunks() {
            src.push_str(piece);
        }
        if test_hooks && src.contains(TEST_PANIC_MARKER) {
            panic!("analysis panic requested by the test marker");
        }
        let relative = Chunk { span: Span::new(0, chunk.span.len()), top: chunk.top.clone() };
        let analysis = sdy_analysis::analyze_chunk(&src, &relative);
        ChunkResult { top: chunk.top.clone(), src: Arc::new(src), analysis, index: OnceLock::new() }
    }

    /// Whether this is the analysis of `chunk` (same top-level ops at the same offsets).
    pub fn is_for(&self, chunk: &Chunk) -> bool {
        self.top.len() == chunk.top.len()
            && self
                .top
                .iter()
                .zip(&chunk.top)
                .all(|(a, b)| a.offset == b.offset && Arc::ptr_eq(&a.op, &b.op))
    }

    /// The position index of the model.
    pub fn index(&self) -> &query::Index {
        self.index.get_or_init(|| query::Index::new(&self.analysis.model))
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

/// Finds a reusable result for `chunk` among `cache`.
pub fn reuse(cache: &[Arc<ChunkResult>], chunk: &Chunk) -> Option<Arc<ChunkResult>> {
    cache.iter().find(|r| r.is_for(chunk)).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdy_syntax::document::Document;

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
