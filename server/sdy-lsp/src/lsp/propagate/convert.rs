//! Propagation results to protocol values: the diagnostics appended to a document's,
//! the commands' arguments and answers.

use super::{DocResult, RunOutcome};
use crate::lsp::analysis::Analyzed;
use crate::lsp::capabilities::ClientConfig;
use crate::lsp::diagnostics::{self, SOURCE};
use sdy_analysis::diag::{DiagnosticCode, Origin, Severity};
use sdy_analysis::explain::why_not::io_notes;
use sdy_analysis::propagation::editor::Strategy;
use sdy_syntax::Span;
use serde_json::{json, Value};
use tower_lsp::lsp_types::{Diagnostic, DiagnosticSeverity, Url};

const INFORMATION: DiagnosticSeverity = DiagnosticSeverity::INFORMATION;

/// The propagation diagnostics of an analysed revision (fresh chunks only): the
/// function arguments and results that end up replicated (information), an export
/// failure of the cost view, and the passes' warnings and failures.
pub fn diagnostics(
    result: &DocResult,
    a: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
) -> Vec<Diagnostic> {
    let text = a.text(config.encoding);
    let mut out = Vec::new();
    // No `codeDescription`: these codes are the editor's, not Shardy's.
    let mut push = |span: Span, severity, code: DiagnosticCode, message, related| {
        out.push(Diagnostic {
            range: text.range(span),
            severity: Some(severity),
            code: Some(diagnostics::code(code)),
            source: Some(SOURCE.to_string()),
            message,
            related_information: related,
            ..Default::default()
        })
    };
    for (i, c) in a.chunks.iter().enumerate() {
        let Some((run, true)) = result.run_for(a, i) else { continue };
        let base = c.span.start;
        if let Some((at, message)) = run.cost.as_ref().and_then(|c| c.failure.as_ref()) {
            let message = format!("the cost view's export failed: {message}");
            push(
                Span::new(*at, *at).shift(base),
                INFORMATION,
                DiagnosticCode::CostExportFailed,
                message,
                None,
            );
        }
        let line_of = |o: u32| Some(text.position(o + base).line + 1);
        let model = &run.analysis.model;
        let python = |o: u32| diagnostics::python_source(uri, model, &run.src, o);
        for (span, mut message) in io_notes(model, &run.src, &run.prop, &line_of) {
            // Our own note: the Python position as related information, or in the text.
            let related = match python(span.start) {
                Some((Some(r), _)) if config.related_information => Some(vec![r]),
                Some((_, at)) if !message.contains(&at) => {
                    message.push_str(&format!(" (Python source: `{at}`)"));
                    None
                }
                _ => None,
            };
            push(span.shift(base), INFORMATION, DiagnosticCode::Replicated, message, related);
        }
        for d in run.prop.diagnostics.iter().filter(|d| d.origin == Origin::Pass) {
            let (severity, code, message) = match d.severity {
                Severity::Error => {
                    let message = format!("propagation failed: {}", d.message);
                    (DiagnosticSeverity::WARNING, DiagnosticCode::PropagationFailed, message)
                }
                _ => (INFORMATION, d.code, d.message.clone()),
            };
            let related = match python(d.span.start) {
                Some((Some(r), _)) if config.related_information => Some(vec![r]),
                _ => None,
            };
            push(d.focus.shift(base), severity, code, message, related);
        }
    }
    out
}

/// `sdy.propagate` / `sdy.showPropagatedModule` arguments: `[{uri, strategy?}]`.
pub fn command_args(args: &[Value]) -> Result<(Url, Option<Strategy>), String> {
    let a = args.first().ok_or("expected one argument {uri, strategy}")?;
    let uri = a["uri"].as_str().ok_or("the argument has no \"uri\"")?;
    let uri = Url::parse(uri).map_err(|e| format!("bad uri {uri:?}: {e}"))?;
    let strategy = match a.get("strategy").and_then(Value::as_str) {
        None => None,
        Some(s) => Some(Strategy::parse(s).ok_or_else(|| {
            format!(
                "unknown strategy {s:?} (one of {})",
                Strategy::ALL.map(|s| s.name()).join(", ")
            )
        })?),
    };
    Ok((uri, strategy))
}

/// The answer of `sdy.propagate`.
pub fn propagate_answer(outcome: &RunOutcome) -> Value {
    match outcome {
        RunOutcome::Done(r) => json!({
            "message": r.summary(),
            "version": r.version,
            "strategy": r.strategy.name(),
            "chunks": r.chunks.len(),
            "computed": r.computed,
            "failed": r.failed(),
            "ms": (r.elapsed.as_secs_f64() * 1e3).round(),
            "cpu_ms": r.cpu.map(|c| (c.as_secs_f64() * 1e4).round() / 10.0),
        }),
        RunOutcome::Superseded => json!({"message": "sdy: superseded by a newer propagation run"}),
        RunOutcome::Cancelled => json!({"message": "sdy: propagation cancelled"}),
        RunOutcome::NotRun(why) => json!({"message": format!("sdy: not propagated: {why}")}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let (u, s) =
            command_args(&[json!({"uri": "file:///a.mlir", "strategy": "basic"})]).unwrap();
        assert_eq!((u.as_str(), s), ("file:///a.mlir", Some(Strategy::Basic)));
        assert!(command_args(&[json!({"uri": "file:///a.mlir", "strategy": "x"})]).is_err());
        assert!(command_args(&[]).is_err());
        assert_eq!(command_args(&[json!({"uri": "file:///a"})]).unwrap().1, None);
    }
}
