//! `textDocument/publishDiagnostics`: the analysis core's diagnostics in LSP terms.
//!
//! * range: the diagnostic's `focus` (the precise offending part), not the place MLIR
//!   reports it;
//! * severity: error, warning, information or hint, as the core says;
//! * source `sdy`, code the core's [`diag::DiagnosticCode`] (with a link to Shardy's
//!   documentation where it has one);
//! * notes: `relatedInformation` in the same document when the client supports it,
//!   else appended to the message;
//! * the Python source of the op or value (its `loc(...)` file position), as
//!   `relatedInformation` pointing into that file when it exists (Shardy's messages
//!   are never changed).

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use super::position::Text;
use sdy_analysis::diag::{self, Severity};
use sdy_analysis::explain::source;
use sdy_analysis::model::Model;
use tower_lsp::lsp_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, Url,
};

pub const SOURCE: &str = "sdy";

/// Every diagnostic of an analysed revision, in document order.
pub fn to_lsp(analyzed: &Analyzed, uri: &Url, config: &ClientConfig) -> Vec<Diagnostic> {
    let text = analyzed.text(config.encoding);
    let mut out = Vec::new();
    for chunk in &analyzed.chunks {
        let Some(result) = &chunk.result else { continue };
        let base = chunk.span.start;
        // Most modules have no locations: nothing to look up.
        let locs = config.related_information && result.src.contains("loc(");
        for d in &result.analysis.diagnostics {
            let mut lsp = convert(d, base, &text, uri, config);
            let python =
                locs.then(|| python_source(uri, &result.analysis.model, &result.src, d.span.start));
            if let Some((Some(r), _)) = python.flatten() {
                lsp.related_information.get_or_insert_with(Vec::new).push(r);
            }
            out.push(lsp);
        }
    }
    out
}

/// One diagnostic; its spans are relative to its chunk, which starts at `base`.
fn convert(
    d: &diag::Diagnostic,
    base: u32,
    text: &Text<'_>,
    uri: &Url,
    config: &ClientConfig,
) -> Diagnostic {
    let mut message = d.message.clone();
    let related = if config.related_information {
        let notes = d.notes.iter().map(|n| DiagnosticRelatedInformation {
            location: Location { uri: uri.clone(), range: text.range(n.span.shift(base)) },
            message: n.message.clone(),
        });
        Some(notes.collect::<Vec<_>>()).filter(|v| !v.is_empty())
    } else {
        for n in &d.notes {
            let p = text.position(n.span.start + base);
            message.push_str(&format!(
                "\nnote ({}:{}): {}",
                p.line + 1,
                p.character + 1,
                n.message
            ));
        }
        None
    };
    Diagnostic {
        range: text.range(d.focus.shift(base)),
        severity: Some(severity(d.severity)),
        code: Some(code(d.code)),
        code_description: code_description(d.code),
        source: Some(SOURCE.to_string()),
        message,
        related_information: related,
        tags: None,
        data: None,
    }
}

/// The Python source of what a diagnostic at chunk-relative `offset` is about, when its
/// `loc(...)` has a file position: related information there when the file exists,
/// and the position as text (`model.py:4:12`).
pub fn python_source(
    uri: &Url,
    model: &Model,
    src: &str,
    offset: u32,
) -> Option<(Option<DiagnosticRelatedInformation>, String)> {
    let loc = source::at_diagnostic(model, src, offset)?;
    let frame = loc.frames.first()?;
    let related =
        super::definition::file_location(uri, frame).map(|location| DiagnosticRelatedInformation {
            location,
            message: format!("Python source: {}", source::render(&loc)),
        });
    Some((related, frame.to_string()))
}

pub fn code(c: diag::DiagnosticCode) -> NumberOrString {
    NumberOrString::String(c.as_str().to_string())
}

pub fn code_description(c: diag::DiagnosticCode) -> Option<CodeDescription> {
    Some(CodeDescription { href: Url::parse(&c.documentation()?).ok()? })
}

pub fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Information => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    }
}
