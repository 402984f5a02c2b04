//! Analysis core of sdy-lsp: semantic model, verifier, printer, propagation, explain.
//! Pure: byte offsets in, plain data out; no LSP, JSON, async or I/O.
pub mod canonicalize;
pub mod diag;
pub mod explain;
pub mod model;
pub mod passes;
pub mod print;
pub mod propagation;
pub mod query;
pub mod rules;
pub mod syntax_diags;
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
        .map(|span| Chunk { span, top: sdy_syntax::parser::parse_top_level(span.text(text)) })
        .collect()
}

/// Everything the analysis knows about one chunk.
pub struct ChunkAnalysis {
    pub model: Model,
    /// Syntax errors, verifier errors and hints, in document order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Builds the semantic model of a chunk and collects its diagnostics.
pub fn analyze_chunk(src: &str, chunk: &Chunk) -> ChunkAnalysis {
    let model = Model::build(chunk);
    let mut diagnostics = syntax_diags::syntax_diagnostics(chunk);
    // Syntax errors keep their order (a failure's chained lines follow its first error).
    let mut verifier = verify::verify_chunk(&model, src);
    verifier.sort_by_key(|d| d.span.start);
    diagnostics.extend(verifier);
    ChunkAnalysis { model, diagnostics }
}
