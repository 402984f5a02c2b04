//! Hover and go to definition inside string attributes that hold sdy or GSPMD text
//! (`xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22x\22}]>"`, `xla.sdy.meshes`,
//! `mhlo.sharding = "{devices=[2,1]<=[2]}"`): see `sdy_analysis::ide::strings`.
//! Offsets are chunk-relative, like the chunk's analysis.

use super::analysis::ChunkResult;
use super::hover::{HoverCtx, HoverResult};
use sdy_analysis::ide::strings::{self, Scope};
use sdy_syntax::Span;

fn scope(chunk: &ChunkResult) -> Scope<'_> {
    // The chunk's `module` is found once, not per request.
    Scope { model: &chunk.analysis.model, src: &chunk.src, module: chunk.module() }
}

/// The hover provider: answers only inside such strings.
pub fn hover(cx: &HoverCtx) -> Option<HoverResult> {
    let model = &cx.chunk.analysis.model;
    let op = cx.chunk.index().op_at(model, cx.offset);
    let h = strings::hover(&scope(cx.chunk), op, cx.offset)?;
    Some(HoverResult { span: h.range, markdown: h.markdown })
}

/// The definition of what is under chunk-relative `offset` inside such a string.
pub fn definition(chunk: &ChunkResult, offset: u32) -> Option<Span> {
    let op = chunk.index().op_at(&chunk.analysis.model, offset);
    strings::definition(&scope(chunk), op, offset)
}
