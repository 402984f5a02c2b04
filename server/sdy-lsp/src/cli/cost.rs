//! `sdy-lsp cost FILE [--strategy S] [--format text|json] [--split-input-file]`: what the
//! sharding of a module costs. Each chunk is propagated (`--strategy`, the editor's
//! strategies, `none` to take the shardings as written), then Shardy's explicit
//! reshards and reshard-to-collectives run on it (`sdy_analysis::cost`); per function
//! the collectives with their op's line, kind, axes and bytes per device, and the
//! memory per device; with `--bandwidth AXIS=GBPS` (repeatable, `*` for the other
//! axes) the estimated seconds (`sdy_analysis::cost::time`). Exit status 1 when a chunk cannot be propagated or exported.

use sdy_analysis::cost::time::Bandwidth;
use sdy_analysis::cost::{self, text, Cost};
use sdy_analysis::diag::{LineIndex, Severity};
use sdy_analysis::model::Model;
use sdy_analysis::propagation::editor::{propagate_unexplained, Strategy};
use serde_json::{json, Value};
use std::process::ExitCode;

pub const USAGE: &str = "sdy-lsp cost [--strategy pipeline|basic|aggressive|op-priority|user-priority|none] [--format text|json] [--bandwidth AXIS=GBPS]... [--split-input-file] FILE (FILE - is stdin)";

pub fn run(args: &[String]) -> ExitCode {
    let mut strategy: Option<Strategy> = Some(Strategy::Pipeline);
    let mut json_out = false;
    let mut split = false;
    let mut bandwidth = Bandwidth::default();
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value =
            |name: &str| inline.clone().or_else(|| it.next().cloned()).ok_or(name.to_string());
        match flag {
            "--strategy" => match value("--strategy").as_deref() {
                Ok("none") => strategy = None,
                Ok(s) => match Strategy::parse(s) {
                    Some(s) => strategy = Some(s),
                    None => return usage(&format!("unknown strategy '{s}'")),
                },
                Err(_) => return usage("--strategy needs a value"),
            },
            "--format" => match value("--format").as_deref() {
                Ok("json") => json_out = true,
                Ok("text") => json_out = false,
                _ => return usage("--format is text or json"),
            },
            "--bandwidth" => match value("--bandwidth") {
                Ok(v) => {
                    if let Err(e) = bandwidth.parse_assignment(&v) {
                        return usage(&format!("--bandwidth: {e}"));
                    }
                }
                Err(_) => return usage("--bandwidth needs AXIS=GBPS"),
            },
            "--split-input-file" | "-split-input-file" => split = true,
            f if f.starts_with('-') && f.len() > 1 => {
                return usage(&format!("unknown option '{f}'"))
            }
            f if file.is_none() => file = Some(f.to_string()),
            f => return usage(&format!("unexpected argument '{f}'")),
        }
    }
    let Some(file) = file else { return usage("no file") };
    let src = match super::read_input(&file) {
        Ok(t) => t,
        Err(e) => {
            complain!("sdy-lsp cost: cannot read {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let index = LineIndex::new(&src);
    let mut failed = false;
    let mut functions: Vec<Value> = Vec::new();
    let mut out = String::new();
    for chunk in sdy_analysis::parse_chunks(&src, split) {
        match chunk_cost(&src, &chunk, strategy) {
            Ok((model, c)) => {
                if let Some((at, msg)) = &c.failure {
                    let (l, col) = index.line_col(*at);
                    complain!("{file}:{l}:{col}: error: the export failed: {msg}");
                    failed = true;
                }
                let by_start: std::collections::HashMap<u32, usize> =
                    model.ops.iter().enumerate().map(|(i, o)| (o.start, i)).collect();
                let op_name = |o: Option<u32>| -> String {
                    o.and_then(|o| model.ops.get(*by_start.get(&o)?))
                        .map_or("?".to_string(), |x| x.name().to_string())
                };
                for f in &c.functions {
                    functions.push(function_json(f, &index, &op_name, &bandwidth));
                    out.push_str(&function_text(f, &index, &op_name, &bandwidth));
                }
            }
            Err((at, msg)) => {
                let (l, col) = index.line_col(at);
                complain!("{file}:{l}:{col}: error: {msg}");
                failed = true;
            }
        }
    }
    let text = if json_out {
        let mut s =
            serde_json::to_string_pretty(&json!({ "functions": functions })).unwrap_or_default();
        s.push('\n');
        s
    } else {
        out
    };
    super::out::print_then(&text, if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn usage(why: &str) -> ExitCode {
    complain!("sdy-lsp cost: {why}\nusage: {USAGE}");
    ExitCode::from(2)
}

/// The cost of one chunk (`strategy` `None`: as written), or the first error.
pub fn chunk_cost(
    src: &str,
    chunk: &sdy_syntax::tree::Chunk,
    strategy: Option<Strategy>,
) -> Result<(Model, Cost), (u32, String)> {
    let analysis = sdy_analysis::analyze_chunk(src, chunk);
    let first_error = |ds: &[sdy_analysis::diag::Diagnostic]| {
        ds.iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| (d.focus.start, d.message.clone()))
    };
    let Some(strategy) = strategy else {
        let errors = sdy_analysis::verify::mlir_view(&analysis.diagnostics, &analysis.model);
        if let Some(e) = first_error(&errors) {
            return Err(e);
        }
        let m = sdy_analysis::ir::build_module(src, chunk);
        let c = cost::analyze(src, &analysis.model, &m, &[]);
        return Ok((analysis.model, c));
    };
    let p = propagate_unexplained(src, chunk, &analysis.model, &analysis.diagnostics, strategy);
    if p.failed {
        return Err(
            first_error(&p.diagnostics).unwrap_or((chunk.span.start, "propagation failed".into()))
        );
    }
    let c = cost::of_propagation(src, &analysis.model, &p)
        .ok_or((chunk.span.start, "propagation failed".to_string()))?;
    Ok((analysis.model, c))
}

fn axes_json(c: &cost::OpCollective) -> Vec<String> {
    c.collective
        .axes
        .iter()
        .flat_map(|d| d.axes.iter())
        .map(|a| a.to_string().replace('"', ""))
        .collect()
}

fn function_json(
    f: &cost::FunctionCost,
    index: &LineIndex,
    op_name: &dyn Fn(Option<u32>) -> String,
    bw: &Bandwidth,
) -> Value {
    // With a bandwidth: `"seconds"` per collective and per function (null when an axis
    // has none).
    let timed = |v: &mut Value, s: Option<f64>| {
        if !bw.is_empty() {
            v["seconds"] = json!(s);
        }
    };
    let collectives: Vec<Value> = f
        .collectives
        .iter()
        .map(|c| {
            let mut v = json!({
                "line": c.op.map(|o| index.line_col(o).0),
                "op": op_name(c.op),
                "kind": c.collective.kind.name(),
                "axes": axes_json(c),
                "tensor": c.ty,
                "bytes_per_device": c.collective.bytes_sent,
                "groups": c.collective.groups.len(),
                "reason": text::reason(c, &op_name(c.op)),
            });
            timed(&mut v, bw.seconds(&c.collective));
            v
        })
        .collect();
    let mut v = json!({
        "name": f.name,
        "line": f.start.map(|o| index.line_col(o).0),
        "collectives": collectives,
        "bytes_per_device": f.bytes_per_device(),
        "memory": {
            "arguments_bytes_per_device": f.memory.arguments,
            "results_bytes_per_device": f.memory.results,
            "peak_bytes_per_device": f.memory.peak,
        },
    });
    timed(&mut v, bw.total(f.moving().map(|c| &c.collective)));
    v
}

fn function_text(
    f: &cost::FunctionCost,
    index: &LineIndex,
    op_name: &dyn Fn(Option<u32>) -> String,
    bw: &Bandwidth,
) -> String {
    let mut s = format!("@{}: {}\n", f.name, text::function_lens(f, bw));
    for c in &f.collectives {
        let at = c.op.map_or("?".to_string(), |o| index.line_col(o).0.to_string());
        s.push_str(&format!("  line {at}: {}\n", text::line(c, &op_name(c.op), bw)));
    }
    s
}
