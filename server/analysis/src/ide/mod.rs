//! Editor features over one chunk's model: pure functions from a model, its text and
//! byte offsets to plain answers. The LSP layer (`server/sdy-lsp/src/lsp`) turns them
//! into protocol messages.

pub mod completion;
pub mod fixes;
pub mod hover;
pub mod references;
pub mod strings;
pub mod symbols;
pub mod tokens;
