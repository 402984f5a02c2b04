//! `textDocument/definition`: SSA values to their definition (from the argument of a
//! manual or named computation, to the operand it stands for); `@mesh` and function
//! symbols to their definition; axis names (in shardings, axis lists and meshes) to
//! their entry in the mesh; names inside sdy strings of round-trip exports through
//! strings.rs. Within one chunk (a `// -----` chunk is its own module). From an op
//! name, its `loc(...)`, or a value where it is defined, to the Python line its
//! location names (`sdy_analysis::explain::source`), when that file exists.

use super::analysis::Analyzed;
use super::analysis::ChunkResult;
use super::capabilities::ClientConfig;
use super::references::ctx;
use sdy_analysis::explain::source;
use sdy_analysis::ide::references as refs;
use tower_lsp::lsp_types::{GotoDefinitionResponse, Location, Position, Range, Url};

pub fn definition(
    analyzed: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    position: Position,
) -> Option<GotoDefinitionResponse> {
    let text = analyzed.text(config.encoding);
    let offset = text.offset(position);
    let (base, chunk) = analyzed.chunk_at(offset)?;
    if let Some(s) = super::strings::definition(chunk, offset - base) {
        let range = text.range(s.shift(base));
        return Some(GotoDefinitionResponse::Scalar(Location { uri: uri.clone(), range }));
    }
    if let Some(l) = source_location(uri, chunk, offset - base) {
        return Some(GotoDefinitionResponse::Scalar(l));
    }
    let spans = refs::definition(&ctx(chunk), offset - base);
    let mut locations: Vec<Location> = spans
        .into_iter()
        .map(|s| Location { uri: uri.clone(), range: text.range(s.shift(base)) })
        .collect();
    match locations.len() {
        0 => None,
        1 => locations.pop().map(GotoDefinitionResponse::Scalar),
        _ => Some(GotoDefinitionResponse::Array(locations)),
    }
}

/// The file position of the location at `offset` (chunk-relative), when the file
/// exists: as written, or relative to the document's directory.
fn source_location(uri: &Url, chunk: &ChunkResult, offset: u32) -> Option<Location> {
    let pos = source::definition_at(&chunk.analysis.model, &chunk.src, offset)?;
    file_location(uri, &pos)
}

/// The location of a file position of a `loc(...)` when the file exists: as written, or
/// relative to the directory of the document `uri`.
pub fn file_location(uri: &Url, pos: &sdy_analysis::mlir_loc::FilePos) -> Option<Location> {
    let written = std::path::PathBuf::from(&pos.file);
    let path = if written.is_absolute() {
        written
    } else {
        uri.to_file_path().ok()?.parent()?.join(written)
    };
    if !path.is_file() {
        return None;
    }
    let target = Url::from_file_path(&path).ok()?;
    let at = Position {
        line: u32::try_from(pos.line.saturating_sub(1)).ok()?,
        character: u32::try_from(pos.col.saturating_sub(1)).ok()?,
    };
    Some(Location { uri: target, range: Range { start: at, end: at } })
}
