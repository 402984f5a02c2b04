//! `textDocument/definition`: SSA values (uses and definitions) to their definition;
//! `@mesh` and function symbols to the name in their definition. Within one chunk (a
//! `// -----` chunk is its own module).

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use sdy_analysis::query;
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
    let model = &chunk.analysis.model;
    let target = chunk.index().target_at(model, offset - base)?;
    let span = query::definition(model, &target)?;
    let range = text.range(span.shift(base));
    Some(GotoDefinitionResponse::Scalar(Location { uri: uri.clone(), range }))
}
