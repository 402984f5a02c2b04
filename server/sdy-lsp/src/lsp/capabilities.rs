//! `initialize`: what the client can do, and what the server offers.

use super::position::PositionEncoding;
use serde::Deserialize;
use std::time::Duration;
use tower_lsp::lsp_types::{
    HoverProviderCapability, InitializeParams, MarkupKind, OneOf, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
};

/// What the server needs to know about the client, fixed at `initialize`.
#[derive(Clone, Debug, Default)]
pub struct ClientConfig {
    pub encoding: PositionEncoding,
    /// `publishDiagnostics.relatedInformation`: notes as related locations.
    pub related_information: bool,
    /// Hover content in Markdown.
    pub markdown: bool,
    /// Log analysis timings to stderr (`SDY_LSP_TRACE=1`).
    pub trace_timing: bool,
    /// `documentSymbol.hierarchicalDocumentSymbolSupport`: nested symbols, else a flat list.
    pub hierarchical_symbols: bool,
    /// `rename.prepareSupport`: the server may only offer `prepareRename` if set.
    pub prepare_rename: bool,
    /// `completion.completionItem.snippetSupport`: completions may insert snippets.
    pub snippets: bool,
}

impl ClientConfig {
    pub fn from_params(params: &InitializeParams) -> ClientConfig {
        let caps = &params.capabilities;
        let offered = caps.general.as_ref().and_then(|g| g.position_encodings.as_deref());
        let text = caps.text_document.as_ref();
        ClientConfig {
            encoding: PositionEncoding::negotiate(offered),
            related_information: text
                .and_then(|t| t.publish_diagnostics.as_ref())
                .and_then(|p| p.related_information)
                .unwrap_or(false),
            markdown: text
                .and_then(|t| t.hover.as_ref())
                .and_then(|h| h.content_format.as_ref())
                .is_some_and(|f| f.contains(&MarkupKind::Markdown)),
            trace_timing: std::env::var("SDY_LSP_TRACE").is_ok_and(|v| v == "1"),
            hierarchical_symbols: text
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|d| d.hierarchical_document_symbol_support)
                .unwrap_or(false),
            prepare_rename: text
                .and_then(|t| t.rename.as_ref())
                .and_then(|r| r.prepare_support)
                .unwrap_or(false),
            snippets: text
                .and_then(|t| t.completion.as_ref())
                .and_then(|c| c.completion_item.as_ref())
                .and_then(|i| i.snippet_support)
                .unwrap_or(false),
        }
    }
}

/// `initializationOptions` the server understands.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitOptions {
    /// See [`super::Options::debounce`].
    pub diagnostics_debounce_ms: Option<u64>,
}

impl InitOptions {
    pub fn debounce(&self) -> Option<Duration> {
        self.diagnostics_debounce_ms.map(Duration::from_millis)
    }
}

pub fn server_capabilities(config: &ClientConfig) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(config.encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            // `didSave` for `propagation.mode = onSave`.
            save: Some(tower_lsp::lsp_types::TextDocumentSyncSaveOptions::Supported(true)),
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(if config.prepare_rename {
            OneOf::Right(tower_lsp::lsp_types::RenameOptions {
                prepare_provider: Some(true),
                work_done_progress_options: Default::default(),
            })
        } else {
            OneOf::Left(true)
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(tower_lsp::lsp_types::FoldingRangeProviderCapability::Simple(
            true,
        )),
        completion_provider: Some(tower_lsp::lsp_types::CompletionOptions {
            trigger_characters: Some(
                super::completion::TRIGGER_CHARACTERS.iter().map(|c| c.to_string()).collect(),
            ),
            ..Default::default()
        }),
        semantic_tokens_provider: Some(super::semantic_tokens::capability()),
        code_action_provider: Some(tower_lsp::lsp_types::CodeActionProviderCapability::Options(
            tower_lsp::lsp_types::CodeActionOptions {
                code_action_kinds: Some(super::code_actions::kinds()),
                ..Default::default()
            },
        )),
        // ----- propagation (propagate.rs, inlay_hints.rs, code_lens.rs) -----
        inlay_hint_provider: Some(OneOf::Right(
            tower_lsp::lsp_types::InlayHintServerCapabilities::Options(
                tower_lsp::lsp_types::InlayHintOptions {
                    resolve_provider: Some(true),
                    work_done_progress_options: Default::default(),
                },
            ),
        )),
        code_lens_provider: Some(tower_lsp::lsp_types::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        execute_command_provider: Some(tower_lsp::lsp_types::ExecuteCommandOptions {
            commands: vec![
                super::propagate::PROPAGATE.to_string(),
                super::propagate::SHOW_MODULE.to_string(),
                super::propagate::SHOW_COMMUNICATION.to_string(),
            ],
            work_done_progress_options: Default::default(),
        }),
        // -----
        ..Default::default()
    }
}
