//! Analysis core of sdy-lsp: semantic model, verifier, printer, propagation, explain.
//! Pure: byte offsets in, plain data out; no LSP, JSON, async or I/O.
pub mod canonicalize;
pub mod collectives;
pub mod cost;
pub mod diag;
pub mod explain;
pub(crate) mod export;
pub mod ide;
pub mod incremental;
pub mod ir;
pub mod mlir_loc;
pub mod model;
pub(crate) mod pass;
pub mod passes;
pub mod print;
pub mod propagation;
pub mod query;
pub mod rules;
pub(crate) mod shape;
pub mod sharding;
pub mod syntax_diags;
pub(crate) mod types;
pub mod verify;

use diag::Diagnostic;
use model::Model;
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;

/// Parses `text` into chunks: one per `// -----` piece when `split`, else one.
pub fn parse_chunks(text: &str, split: bool) -> Vec<Chunk> {
    let spans = if split {
        sdy_syntax::split::split_chunks(text)
    } else {
        vec![Span::new(0, text.len() as u32)]
    };
    spans
        .into_iter()
        .map(|span| Chunk {
            span,
            top: sdy_syntax::parser::parse_top_level(span.text(text)).into(),
        })
        .collect()
}

/// Everything the analysis knows about one chunk.
#[derive(Clone, Default)]
pub struct ChunkAnalysis {
    pub model: Model,
    /// Syntax errors (in their order: a failure's chained lines follow its first error),
    /// then verifier errors, hints and in-string diagnostics by position.
    pub diagnostics: Vec<Diagnostic>,
    /// What [`ChunkAnalysis::update`] needs (see [`analyze_chunk_incremental`]).
    state: Option<Box<incremental::State>>,
}

/// Builds the semantic model of a chunk and collects its diagnostics.
pub fn analyze_chunk(src: &str, chunk: &Chunk) -> ChunkAnalysis {
    incremental::analyze(src, chunk, false)
}

/// [`analyze_chunk`], keeping what [`ChunkAnalysis::update`] needs after an edit.
pub fn analyze_chunk_incremental(src: &str, chunk: &Chunk) -> ChunkAnalysis {
    incremental::analyze(src, chunk, true)
}

impl ChunkAnalysis {
    /// The analysis of `chunk` (text `src`), an edited version of the chunk analysed
    /// (same start; its unchanged statements shared, as the syntax layer's incremental
    /// re-parse leaves them): equal to a fresh [`analyze_chunk_incremental`], redoing
    /// only what the edit can affect.
    pub fn update(self, src: &str, chunk: &Chunk) -> (ChunkAnalysis, incremental::UpdateStats) {
        incremental::update(self, src, chunk.clone())
    }

    /// [`ChunkAnalysis::update`] taking the tree: the analysis keeps it without a copy
    /// (the top-level list of a real export has tens of thousands of `#loc` aliases, and
    /// each copy is an atomic increment per entry, and a decrement when dropped).
    pub fn update_owned(
        self,
        src: &str,
        chunk: Chunk,
    ) -> (ChunkAnalysis, incremental::UpdateStats) {
        incremental::update(self, src, chunk)
    }

    /// An analysis of [`analyze_chunk`] turned into one of [`analyze_chunk_incremental`]
    /// (an incremental one is returned as it is): the model is kept, the checks are run
    /// again recording what they read. The diagnostics stay the same; what it costs
    /// (about half of a plain analysis) can come after they are shown.
    pub fn with_incremental_state(self, src: &str, chunk: &Chunk) -> ChunkAnalysis {
        incremental::keep_state(self, src, chunk)
    }

    /// The tree analysed (chunk-relative), if the analysis keeps what updates need.
    pub fn tree(&self) -> Option<&Chunk> {
        incremental::tree(self)
    }

    /// Where the text of `chunk`, an edited version of the chunk analysed, differs:
    /// `(from, to, delta)`, the old text `[from, to)` became `[from, to + delta)`; `None`
    /// when the update will not tell (it then analyses afresh).
    pub fn changed_text(&self, chunk: &Chunk) -> Option<(u32, u32, i64)> {
        incremental::changed_text(self, chunk)
    }

    /// The old trees the last update replaced, for the caller to free when it suits it
    /// (after publishing), rather than on the next update.
    pub fn take_garbage(&mut self) -> incremental::Garbage {
        incremental::take_garbage(self)
    }
}
