//! Go to definition inside string attributes that hold sdy or GSPMD text
//! (`xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22x\22}]>"`, `xla.sdy.meshes`,
//! `mhlo.sharding = "{devices=[2,1]<=[2]}"`): see `sdy_analysis::ide::strings`.
//! Offsets are chunk-relative, like the chunk's analysis.

use super::analysis::ChunkResult;
use sdy_analysis::ide::strings;
use sdy_syntax::Span;

/// The definition of what is under chunk-relative `offset` inside such a string.
pub fn definition(chunk: &ChunkResult, offset: u32) -> Option<Span> {
    let op = chunk.index().op_at(&chunk.analysis.model, offset);
    strings::definition(&chunk.snapshot().scope, op, offset)
}
