//! `textDocument/documentSymbol` and `textDocument/foldingRange` over
//! `sdy_analysis::ide::symbols`, chunk by chunk: in a file split by `// -----` every
//! chunk is a namespace holding its own outline, and folds on its own.

use super::analysis::{Analyzed, ChunkResult};
use super::capabilities::ClientConfig;
use super::position::Text;
use sdy_analysis::ide::symbols::{self as core, DocSymbol, FoldKind};
use sdy_syntax::Span;
use tower_lsp::lsp_types::{
    DocumentSymbol, DocumentSymbolResponse, FoldingRange, FoldingRangeKind, Location,
    SymbolInformation, SymbolKind, Url,
};

/// The outline: nested symbols, or (for clients without hierarchical symbols) a flat
/// list naming each symbol's container.
pub fn document_symbols(
    analyzed: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
) -> Option<DocumentSymbolResponse> {
    let text = analyzed.text(config.encoding);
    let split = analyzed.chunks.len() > 1;
    let mut out = Vec::new();
    for (i, c) in analyzed.chunks.iter().enumerate() {
        let Some(chunk) = c.result.as_deref() else { continue };
        let base = c.span.start;
        let symbols = chunk_symbols(chunk).into_iter().map(|s| convert(&text, base, s));
        if !split {
            out.extend(symbols);
            continue;
        }
        let children: Vec<DocumentSymbol> = symbols.collect();
        let range = text.range(c.span);
        let selection =
            children.first().map_or(text.range(Span::empty(base)), |s| s.selection_range);
        #[allow(deprecated)]
        out.push(DocumentSymbol {
            name: format!("chunk {}", i + 1),
            detail: Some(format!("// ----- split, line {}", range.start.line + 1)),
            kind: SymbolKind::NAMESPACE,
            tags: None,
            deprecated: None,
            range,
            selection_range: selection,
            children: Some(children),
        });
    }
    if config.hierarchical_symbols {
        return Some(DocumentSymbolResponse::Nested(out));
    }
    let mut flat = Vec::new();
    flatten(uri, out, None, &mut flat);
    Some(DocumentSymbolResponse::Flat(flat))
}

fn chunk_symbols(chunk: &ChunkResult) -> Vec<DocSymbol> {
    core::document_symbols(&chunk.analysis.model, chunk.top(), &chunk.src)
}

fn convert(text: &Text, base: u32, s: DocSymbol) -> DocumentSymbol {
    let kind = match s.kind {
        core::SymbolKind::Module => SymbolKind::MODULE,
        core::SymbolKind::Mesh => SymbolKind::STRUCT,
        core::SymbolKind::MeshAxis => SymbolKind::FIELD,
        core::SymbolKind::Function => SymbolKind::FUNCTION,
        core::SymbolKind::ManualComputation => SymbolKind::OBJECT,
        core::SymbolKind::NamedComputation => SymbolKind::METHOD,
    };
    let children: Vec<DocumentSymbol> =
        s.children.into_iter().map(|c| convert(text, base, c)).collect();
    #[allow(deprecated)]
    DocumentSymbol {
        name: s.name,
        detail: s.detail,
        kind,
        tags: None,
        deprecated: None,
        range: text.range(s.span.shift(base)),
        selection_range: text.range(s.selection.shift(base)),
        children: (!children.is_empty()).then_some(children),
    }
}

fn flatten(
    uri: &Url,
    symbols: Vec<DocumentSymbol>,
    container: Option<&str>,
    out: &mut Vec<SymbolInformation>,
) {
    for s in symbols {
        #[allow(deprecated)]
        out.push(SymbolInformation {
            name: s.name.clone(),
            kind: s.kind,
            tags: None,
            deprecated: None,
            location: Location { uri: uri.clone(), range: s.range },
            container_name: container.map(str::to_string),
        });
        if let Some(children) = s.children {
            flatten(uri, children, Some(&s.name), out);
        }
    }
}

/// Folds of every chunk, and of each chunk itself when the file is split.
pub fn folding_ranges(analyzed: &Analyzed) -> Option<Vec<FoldingRange>> {
    let lines = &analyzed.lines;
    let mut out = Vec::new();
    let mut push = |start: u32, end: u32, kind: FoldingRangeKind| {
        let (start_line, end_line) = (lines.line_of(start) as u32, lines.line_of(end) as u32);
        if start_line < end_line {
            out.push(FoldingRange {
                start_line,
                start_character: None,
                end_line,
                end_character: None,
                kind: Some(kind),
                collapsed_text: None,
            });
        }
    };
    let split = analyzed.chunks.len() > 1;
    for c in &analyzed.chunks {
        if split && c.span.end > c.span.start {
            // The chunk's last line holds its last byte (the marker line stays visible).
            push(c.span.start, c.span.end - 1, FoldingRangeKind::Region);
        }
        let Some(chunk) = c.result.as_deref() else { continue };
        let base = c.span.start;
        for f in core::folding_ranges(&chunk.analysis.model, chunk.top(), &chunk.src) {
            let kind = match f.kind {
                FoldKind::Region | FoldKind::Attribute | FoldKind::Resource => {
                    FoldingRangeKind::Region
                }
            };
            push(base + f.start, base + f.end, kind);
        }
    }
    // Nested attributes can fold the same lines (a dictionary and its one sharding).
    out.sort_by_key(|f| (f.start_line, f.end_line));
    out.dedup_by_key(|f| (f.start_line, f.end_line));
    Some(out)
}
