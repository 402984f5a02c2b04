//! Propagation results to protocol values: the diagnostics appended to a document's,
//! the commands' arguments and answers.

use super::{DocResult, RunOutcome};
use crate::lsp::analysis::Analyzed;
use crate::lsp::capabilities::ClientConfig;
use crate::lsp::diagnostics::SOURCE;
use crate::lsp::position::Text;
use sdy_analysis::diag::{Origin, Severity};
use sdy_analysis::propagation::editor::Strategy;
use sdy_syntax::Span;
use serde_json::{json, Value};
use tower_lsp::lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, NumberOrString, Url,
};

/// The propagation diagnostics of an analysed revision (fresh chunks only): the
/// function arguments and results that end up replicated (information), an export
/// failure of the cost view, and the passes' warnings and failures.
pub fn diagnostics(result: &DocResult, a: &Analyzed, config: &ClientConfig) -> Vec<Diagnostic> {
    let text = a.text(config.encoding);
    let mut out = Vec::new();
    for (i, c) in a.chunks.iter().enumerate() {
        let Some((run, true)) = result.run_for(a, i) else { continue };
        let base = c.span.start;
        if let Some((at, message)) = run.cost.as_ref().and_then(|c| c.failure.as_ref()) {
            let span = Span::new(*at, *at).shift(base);
            let message = format!("the cost view's export failed: {message}");
            out.push(diagnostic(
                &text,
                span,
                DiagnosticSeverity::INFORMATION,
                "cost",
                message,
                None,
            ));
        }
        let line_of = |o: u32| Some(text.position(o + base).line + 1);
        let notes = sdy_analysis::explain::why_not::io_notes(
            &run.analysis.model,
            &run.src,
            &run.prop,
            &line_of,
        );
        for (span, message) in notes {
            out.push(diagnostic(
                &text,
                span.shift(base),
                DiagnosticSeverity::INFORMATION,
                "replicated",
                message,
                None,
            ));
        }
        for d in run.prop.diagnostics.iter().filter(|d| d.origin == Origin::Pass) {
            let (severity, code) = match d.severity {
                Severity::Error => (DiagnosticSeverity::WARNING, PROPAGATION_FAILED),
                _ => (DiagnosticSeverity::INFORMATION, d.code.as_str()),
            };
            let message = if d.severity == Severity::Error {
                format!("propagation failed: {}", d.message)
            } else {
                d.message.clone()
            };
            out.push(diagnostic(&text, d.focus.shift(base), severity, code, message, None));
        }
    }
    out
}

const PROPAGATION_FAILED: &str = sdy_analysis::diag::DiagnosticCode::PropagationFailed.as_str();

fn diagnostic(
    text: &Text<'_>,
    span: Span,
    severity: DiagnosticSeverity,
    code: &str,
    message: String,
    related: Option<Vec<DiagnosticRelatedInformation>>,
) -> Diagnostic {
    Diagnostic {
        range: text.range(span),
        severity: Some(severity),
        code: Some(NumberOrString::String(code.to_string())),
        source: Some(SOURCE.to_string()),
        message,
        related_information: related,
        ..Default::default()
    }
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
