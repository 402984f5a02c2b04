//! Analysis core of sdy-lsp: semantic model, verifier, printer, propagation, explain.
//! Pure: byte offsets in, plain data out; no LSP, JSON, async or I/O.
pub mod diag;
pub mod print;
