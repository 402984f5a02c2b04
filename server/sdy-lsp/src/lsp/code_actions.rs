//! `textDocument/codeAction`: the quick fixes of `sdy_analysis::ide::fixes` for the
//! diagnostics in the requested range, each tied to the diagnostic it fixes (the
//! client's own copy when it sent one), `isPreferred` when it is the one obvious fix;
//! `expected-*` annotations for Shardy lit tests as `source` actions.

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use super::diagnostics::{severity, SOURCE};
use super::position::Text;
use sdy_analysis::diag;
use sdy_analysis::ide::fixes::{self, Fix, FixKind};
use sdy_syntax::Span;
use std::collections::HashMap;
use tower_lsp::lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Diagnostic, TextEdit, Url,
    WorkspaceEdit,
};

/// The kinds this server offers (advertised in the capabilities).
pub fn kinds() -> Vec<CodeActionKind> {
    vec![CodeActionKind::QUICKFIX, CodeActionKind::SOURCE]
}

pub fn code_actions(
    analyzed: &Analyzed,
    config: &ClientConfig,
    params: &CodeActionParams,
) -> Option<Vec<CodeActionOrCommand>> {
    let text = analyzed.text(config.encoding);
    let start = text.offset(params.range.start);
    let end = text.offset(params.range.end).max(start);
    let (base, chunk) = analyzed.chunk_at(start)?;
    let len = chunk.src.len() as u32;
    let range = Span::new(start - base, (end - base).min(len));
    let diagnostics = &chunk.analysis.diagnostics;
    let found = fixes::fixes(&chunk.analysis.model, &chunk.src, diagnostics, range);
    let only = params.context.only.as_deref();
    let uri = &params.text_document.uri;
    let actions: Vec<CodeActionOrCommand> = found
        .into_iter()
        .filter(|f| wanted(only, &kind_of(f)))
        .map(|f| {
            let d = &diagnostics[f.diagnostic];
            let lsp = client_copy(&params.context.diagnostics, d, base, &text)
                .unwrap_or_else(|| fresh(d, base, &text));
            CodeActionOrCommand::CodeAction(action(f, lsp, uri, base, &text))
        })
        .collect();
    Some(actions)
}

fn kind_of(f: &Fix) -> CodeActionKind {
    match f.kind {
        FixKind::QuickFix => CodeActionKind::QUICKFIX,
        FixKind::Annotation => CodeActionKind::SOURCE,
    }
}

/// Whether `kind` is asked for: no filter, or a requested kind equal to it or one of its
/// parents (`source` covers `source.x`).
fn wanted(only: Option<&[CodeActionKind]>, kind: &CodeActionKind) -> bool {
    let k = kind.as_str();
    only.is_none_or(|list| {
        list.iter().any(|r| {
            let r = r.as_str();
            k == r || (k.starts_with(r) && k.as_bytes().get(r.len()) == Some(&b'.'))
        })
    })
}

/// The diagnostic as the client sent it back in the request's context, if it did.
fn client_copy(
    sent: &[Diagnostic],
    d: &diag::Diagnostic,
    base: u32,
    text: &Text<'_>,
) -> Option<Diagnostic> {
    let range = text.range(d.focus.shift(base));
    sent.iter()
        .find(|c| {
            c.range == range
                && c.message.starts_with(&d.message)
                && c.source.as_deref() == Some(SOURCE)
        })
        .cloned()
}

/// The diagnostic in LSP terms, for clients that did not send it.
fn fresh(d: &diag::Diagnostic, base: u32, text: &Text<'_>) -> Diagnostic {
    Diagnostic {
        range: text.range(d.focus.shift(base)),
        severity: Some(severity(d.severity)),
        code: Some(super::diagnostics::code(d.code)),
        code_description: super::diagnostics::code_description(d.code),
        source: Some(SOURCE.to_string()),
        message: d.message.clone(),
        ..Default::default()
    }
}

fn action(f: Fix, d: Diagnostic, uri: &Url, base: u32, text: &Text<'_>) -> CodeAction {
    let edits: Vec<TextEdit> = f
        .edits
        .iter()
        .map(|e| TextEdit { range: text.range(e.span.shift(base)), new_text: e.text.clone() })
        .collect();
    let preferred = f.kind == FixKind::QuickFix && f.preferred;
    CodeAction {
        title: f.title.clone(),
        kind: Some(kind_of(&f)),
        diagnostics: Some(vec![d]),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), edits)])),
            ..Default::default()
        }),
        is_preferred: preferred.then_some(true),
        ..Default::default()
    }
}
