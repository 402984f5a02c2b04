//! The library part of `sdy-lsp`: the language server, so that tests can drive it
//! in-process. The binary (`main.rs`) adds the CLI commands.
pub mod alloc;
pub mod cpu;
pub mod lsp;
