//! `textDocument/codeLens`: above each function, "Propagate shardings" (the
//! `sdy.propagate` command), and above the first function of each `// -----` chunk the
//! state of its propagation; with a fresh run, above each function its cost
//! (collectives and bytes per device, memory; the `sdy.showCommunication` command) and: "propagated (v12, pipeline) · show module", "stale:
//! propagated v12, the text changed since", or the failure.

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use super::propagate::{DocResult, PROPAGATE, SHOW_COMMUNICATION, SHOW_MODULE};
use super::settings::{Mode, Settings};
use serde_json::json;
use tower_lsp::lsp_types::{CodeLens, Command, Position, Range, Url};

pub fn code_lenses(
    a: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    result: Option<&DocResult>,
    settings: &Settings,
) -> Option<Vec<CodeLens>> {
    if settings.mode == Mode::Off {
        return Some(Vec::new());
    }
    let text = a.text(config.encoding);
    let strategy = settings.strategy;
    let args = |strategy: &str| Some(vec![json!({"uri": uri, "strategy": strategy})]);
    let mut out = Vec::new();
    for (i, c) in a.chunks.iter().enumerate() {
        let Some(r) = &c.result else { continue };
        let model = &r.analysis.model;
        let funcs = model.top.iter().filter(|&&id| model.op(id).name() == "func.func");
        for (k, &f) in funcs.enumerate() {
            let line = text.position(c.span.start + model.op(f).start).line;
            let range = Range::new(Position::new(line, 0), Position::new(line, 0));
            let command = Command {
                title: "Propagate shardings".into(),
                command: PROPAGATE.into(),
                arguments: args(strategy.name()),
            };
            out.push(CodeLens { range, command: Some(command), data: None });
            let run = result.and_then(|res| res.run_for(a, i));
            let cost = run.filter(|r| r.1).and_then(|r| r.0.cost.as_ref());
            if let Some(fc) = cost.and_then(|c| c.function_at(model.op(f).start)) {
                let command = Command {
                    title: sdy_analysis::cost::text::function_lens(fc, &settings.bandwidth),
                    command: SHOW_COMMUNICATION.into(),
                    arguments: args(strategy.name()),
                };
                out.push(CodeLens { range, command: Some(command), data: None });
            }
            if k > 0 {
                continue;
            }
            let Some((run, fresh)) = run else { continue };
            let s = run.prop.strategy.name();
            let command = if run.prop.failed {
                let why = run
                    .prop
                    .diagnostics
                    .iter()
                    .find(|d| d.severity == sdy_analysis::diag::Severity::Error)
                    .map_or(String::new(), |d| format!(": {}", first_line(&d.message)));
                Command {
                    title: format!("propagation failed (v{}, {s}){why}", run.version),
                    command: PROPAGATE.into(),
                    arguments: args(s),
                }
            } else if fresh {
                Command {
                    title: format!(
                        "propagated (v{}, {s}, {:.0} ms) · show module",
                        run.version,
                        run.elapsed.as_secs_f64() * 1e3
                    ),
                    command: SHOW_MODULE.into(),
                    arguments: args(s),
                }
            } else {
                Command {
                    title: format!(
                        "stale: propagated v{}, the text changed since · run again",
                        run.version
                    ),
                    command: PROPAGATE.into(),
                    arguments: args(s),
                }
            };
            out.push(CodeLens { range, command: Some(command), data: None });
        }
    }
    Some(out)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
