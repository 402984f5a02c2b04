//! `textDocument/definition`: SSA values to their definition (from the argument of a
//! manual or named computation, to the operand it stands for); `@mesh` and function
//! symbols to their definition; axis names (in shardings, axis lists and meshes) to
//! their entry in the mesh; names inside sdy strings of round-trip exports through
//! strings.rs. Within one chunk (a `// -----` chunk is its own module).

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use super::references::ctx;
use sdy_analysis::ide::references as refs;
use tower_lsp::lsp_types::{GotoDefinitionResponse, Location, Position, Url};

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
