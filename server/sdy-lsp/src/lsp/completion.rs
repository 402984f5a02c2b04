//! `textDocument/completion`: the analysis core's completions at the cursor
//! (`sdy_analysis::ide::completion`, chunk-relative), with their replace ranges mapped
//! to the document in the negotiated encoding. Snippets are sent as plain text to
//! clients that do not support them.

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use sdy_analysis::ide::completion::{self, ItemKind};
use tower_lsp::lsp_types::{
    CompletionItem, CompletionItemKind, CompletionList, CompletionResponse, CompletionTextEdit,
    Documentation, InsertTextFormat, Position, TextEdit,
};

/// Characters after which clients ask for completions unprompted: a mesh (`@`), a value
/// (`%`), an axis (`{`, `,`, `"`), an op name (`.`), an attribute (`#`), a sharding
/// (`<`).
pub const TRIGGER_CHARACTERS: &[&str] = &["@", "%", "{", ",", "\"", ".", "#", "<"];

pub fn completion(
    analyzed: &Analyzed,
    config: &ClientConfig,
    position: Position,
) -> Option<CompletionResponse> {
    let text = analyzed.text(config.encoding);
    let offset = text.offset(position);
    let (base, chunk) = analyzed.chunk_at(offset)?;
    let found =
        completion::complete(&chunk.analysis.model, chunk.index(), &chunk.src, offset - base);
    if found.items.is_empty() && !found.incomplete {
        return None;
    }
    let items = found
        .items
        .into_iter()
        .map(|i| {
            let snippet = i.snippet && config.snippets;
            let new_text = if i.snippet && !snippet {
                completion::snippet_to_plain(&i.insert)
            } else {
                i.insert
            };
            let range = text.range(i.replace.shift(base));
            CompletionItem {
                label: i.label,
                kind: Some(kind(i.kind)),
                detail: i.detail,
                documentation: i.documentation.map(Documentation::String),
                sort_text: Some(format!("{:05}", i.order)),
                filter_text: Some(i.filter),
                insert_text_format: Some(if snippet {
                    InsertTextFormat::SNIPPET
                } else {
                    InsertTextFormat::PLAIN_TEXT
                }),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text })),
                ..Default::default()
            }
        })
        .collect();
    Some(CompletionResponse::List(CompletionList { is_incomplete: found.incomplete, items }))
}

fn kind(k: ItemKind) -> CompletionItemKind {
    match k {
        ItemKind::Mesh => CompletionItemKind::MODULE,
        ItemKind::Axis => CompletionItemKind::FIELD,
        ItemKind::Operator => CompletionItemKind::OPERATOR,
        ItemKind::Priority => CompletionItemKind::CONSTANT,
        ItemKind::Keyword => CompletionItemKind::KEYWORD,
        ItemKind::Op => CompletionItemKind::FUNCTION,
        ItemKind::Value => CompletionItemKind::VARIABLE,
        ItemKind::Function => CompletionItemKind::FUNCTION,
        ItemKind::Attribute => CompletionItemKind::PROPERTY,
    }
}
