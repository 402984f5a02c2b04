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
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        ..Default::default()
    }
}
