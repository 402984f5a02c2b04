//! `textDocument/references`, `textDocument/prepareRename` and `textDocument/rename`
//! over `sdy_analysis::ide::references`: SSA values, meshes, functions and mesh axes,
//! within the `// -----` chunk of the cursor (each chunk is its own module).

use super::analysis::{Analyzed, ChunkResult};
use super::capabilities::ClientConfig;
use super::position::Text;
use sdy_analysis::ide::references::{self as refs, Ctx};
use std::collections::HashMap;
use tower_lsp::lsp_types::{
    Location, Position, PrepareRenameResponse, TextEdit, Url, WorkspaceEdit,
};

/// The chunk of `position`, its start, the cursor relative to it, and the text.
fn locate<'a>(
    analyzed: &'a Analyzed,
    config: &ClientConfig,
    position: Position,
) -> Option<(Text<'a>, u32, &'a ChunkResult, u32)> {
    let text = analyzed.text(config.encoding);
    let offset = text.offset(position);
    let (base, chunk) = analyzed.chunk_at(offset)?;
    Some((text, base, chunk, offset - base))
}

pub fn ctx(chunk: &ChunkResult) -> Ctx<'_> {
    Ctx { model: &chunk.analysis.model, index: chunk.index(), top: chunk.top(), src: &chunk.src }
}

pub fn references(
    analyzed: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    position: Position,
    include_declaration: bool,
) -> Option<Vec<Location>> {
    let (text, base, chunk, offset) = locate(analyzed, config, position)?;
    let cx = ctx(chunk);
    let found = refs::entity_at(&cx, offset)?;
    let list = refs::references(&cx, &found.entity, include_declaration);
    let locations = list
        .into_iter()
        .map(|r| Location { uri: uri.clone(), range: text.range(r.span.shift(base)) })
        .collect();
    Some(locations)
}

/// `Some(Err(reason))` when the thing at `position` cannot be renamed.
pub fn prepare_rename(
    analyzed: &Analyzed,
    config: &ClientConfig,
    position: Position,
) -> Option<Result<PrepareRenameResponse, String>> {
    let (text, base, chunk, offset) = locate(analyzed, config, position)?;
    match refs::prepare_rename(&ctx(chunk), offset) {
        Ok(None) => None,
        Ok(Some(t)) => Some(Ok(PrepareRenameResponse::RangeWithPlaceholder {
            range: text.range(t.span.shift(base)),
            placeholder: t.placeholder,
        })),
        Err(reason) => Some(Err(reason)),
    }
}

/// `Some(Err(reason))` when the rename is refused.
pub fn rename(
    analyzed: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    position: Position,
    new_name: &str,
) -> Option<Result<WorkspaceEdit, String>> {
    let (text, base, chunk, offset) = locate(analyzed, config, position)?;
    let edits = match refs::rename(&ctx(chunk), offset, new_name) {
        Ok(None) => return None,
        Ok(Some(edits)) => edits,
        Err(reason) => return Some(Err(reason)),
    };
    let edits: Vec<TextEdit> = edits
        .into_iter()
        .map(|e| TextEdit { range: text.range(e.span.shift(base)), new_text: e.text })
        .collect();
    let changes = HashMap::from([(uri.clone(), edits)]);
    Some(Ok(WorkspaceEdit { changes: Some(changes), ..Default::default() }))
}
