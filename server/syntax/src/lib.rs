//! Syntax layer of sdy-lsp: lexer, tolerant parser, syntax tree with byte ranges.
//! Knows nothing of LSP, JSON or async; works on byte offsets.
pub mod children;
pub mod document;
pub mod escape;
pub mod lexer;
pub mod parser;
pub mod sdy;
mod shift;
pub mod span;
pub mod split;
pub mod tree;

pub use span::Span;
