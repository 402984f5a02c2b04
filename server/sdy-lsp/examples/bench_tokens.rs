//! Time of the semantic tokens requests on a file, as the server computes them.
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_tokens -- FILE [--runs N] [--ranges N]
//! ```
//!
//! FILE may be `.mlir` or `.mlir.gz`. The file is parsed and analysed as the server does
//! on open (not timed); then, over `--runs` runs (default 9, after a warm-up), the
//! median and maximum of:
//! * full: `semanticTokens/full`'s data, UTF-16 positions (tokens of every chunk, then
//!   encoded); on their own, the serialization of that answer to JSON, and the way
//!   tower-lsp sends it (a `serde_json::Value` tree first, then its text);
//! * delta: a full result again and its diff against the previous one (no change);
//! * range: `--ranges` (default 200) requests for a 60-line window at spread positions
//!   (an editor's visible range), each timed;
//! * completion of the SSA values in scope after the `%` of each `return %...` (the end
//!   of a function body: every value of the function is in scope).
//!
//! Each figure is wall time and, in brackets, the time the thread was on a CPU
//! (`CLOCK_THREAD_CPUTIME_ID`): on a loaded machine the wall time includes waiting for
//! a CPU.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use ropey::Rope;
use sdy_lsp::lsp::analysis::{Analyzed, AnalyzedChunk, ChunkResult};
use sdy_lsp::lsp::capabilities::ClientConfig;
use sdy_lsp::lsp::position::{LineIndex, PositionEncoding};
use sdy_lsp::lsp::{completion, semantic_tokens};
use sdy_syntax::document::Document;
use sdy_syntax::Span;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower_lsp::lsp_types::{CompletionResponse, Position, Range, SemanticTokens};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 9usize;
    let mut ranges = 200usize;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--ranges" => ranges = it.next().and_then(|n| n.parse().ok()).expect("--ranges N"),
            f if !f.starts_with("--") => file = Some(f.to_string()),
            other => {
                eprintln!("bench_tokens: unknown option {other}");
                std::process::exit(2);
            }
        }
    }
    let Some(path) = file else {
        eprintln!("usage: bench_tokens FILE [--runs N] [--ranges N]");
        std::process::exit(2);
    };
    let text = read(&path);
    let lines = text.lines().count();
    println!("{path}: {:.2} MB, {lines} lines", text.len() as f64 / 1e6);

    let t0 = Instant::now();
    let analyzed = analyze(&text);
    println!("parse + analysis (not part of the figures): {}", ms(t0.elapsed()));

    let enc = PositionEncoding::Utf16;
    let data = semantic_tokens::encode(&analyzed, enc, None);
    println!("{} tokens", data.len());

    let mut full = Vec::new();
    let mut json = Vec::new();
    let mut tower = Vec::new();
    let mut delta = Vec::new();
    for run in 0..=runs {
        let t = Timer::start();
        let d = semantic_tokens::encode(&analyzed, enc, None);
        let full_time = t.stop();
        let t = Timer::start();
        let answer = SemanticTokens { result_id: Some("1".into()), data: d };
        let bytes = serde_json::to_vec(&answer).expect("json");
        let json_time = t.stop();
        let t = Timer::start();
        let value = serde_json::to_value(&answer).expect("value");
        let text = serde_json::to_string(&value).expect("json");
        let tower_time = t.stop();
        assert_eq!(text.len(), bytes.len());
        drop(value);
        let t = Timer::start();
        let again = semantic_tokens::encode(&analyzed, enc, None);
        let edit = semantic_tokens::diff(&answer.data, &again);
        let delta_time = t.stop();
        assert!(edit.is_none() && !bytes.is_empty());
        if run > 0 {
            full.push(full_time);
            json.push(json_time);
            tower.push(tower_time);
            delta.push(delta_time);
        }
    }
    report("full (compute + encode)", &mut full);
    report("full: JSON serialization", &mut json);
    report("full: as tower-lsp sends it (Value tree, then JSON)", &mut tower);
    report("delta, no change (full + diff)", &mut delta);

    let mut times = Vec::new();
    let mut slowest = (Duration::ZERO, 0);
    let text16 = analyzed.text(enc);
    let mut count = 0usize;
    for k in 0..ranges {
        let line = (k * lines.saturating_sub(60) / ranges.max(1)) as u32;
        let r = Range {
            start: Position { line, character: 0 },
            end: Position { line: line + 60, character: 0 },
        };
        let span: Span = text16.span(r);
        let t = Timer::start();
        let d = semantic_tokens::encode(&analyzed, enc, Some(span));
        let took = t.stop();
        if took.1.unwrap_or(took.0) > slowest.0 {
            slowest = (took.1.unwrap_or(took.0), line);
        }
        times.push(took);
        count += d.len();
    }
    println!("range: {ranges} windows of 60 lines, {} tokens each on average", count / ranges);
    report("range (60 lines)", &mut times);
    println!("slowest range: lines {}..{}", slowest.1, slowest.1 + 60);

    let config = ClientConfig::default();
    let mut times = Vec::new();
    let mut most = 0;
    for (at, _) in text.match_indices("return %") {
        let pos = text16.position((at + "return %".len()) as u32);
        let t = Timer::start();
        let items = completion::completion(&analyzed, &config, pos);
        times.push(t.stop());
        if let Some(CompletionResponse::List(l)) = items {
            most = most.max(l.items.len());
        }
    }
    if !times.is_empty() {
        println!("completion after {} `return %`: at most {most} items", times.len());
        report("completion (values in scope)", &mut times);
    }
}

/// What the server holds after opening the file.
fn analyze(text: &str) -> Analyzed {
    let doc = Document::new(text, true);
    let rope: Rope = doc.text().clone();
    let chunks = doc
        .chunks()
        .iter()
        .map(|c| AnalyzedChunk {
            span: c.span,
            result: Some(Arc::new(ChunkResult::compute(&rope, c, false))),
        })
        .collect();
    Analyzed { rev: 1, version: 1, lines: Arc::new(LineIndex::from_rope(&rope)), rope, chunks }
}

/// Wall time and on-CPU time of the current thread.
struct Timer {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Timer {
    fn start() -> Timer {
        Timer { wall: Instant::now(), cpu: sdy_lsp::cpu::thread() }
    }

    fn stop(&self) -> (Duration, Option<Duration>) {
        (self.wall.elapsed(), sdy_lsp::cpu::since(self.cpu, sdy_lsp::cpu::thread()))
    }
}

fn report(what: &str, times: &mut [(Duration, Option<Duration>)]) {
    let mut wall: Vec<Duration> = times.iter().map(|t| t.0).collect();
    let mut cpu: Vec<Duration> = times.iter().filter_map(|t| t.1).collect();
    let stats = |v: &mut Vec<Duration>| {
        v.sort();
        let p95 = v[(v.len() * 95 / 100).min(v.len() - 1)];
        (v[v.len() / 2], p95, v[v.len() - 1])
    };
    let (m, p, x) = stats(&mut wall);
    let mut line = format!("{what}: median {}, p95 {}, max {}", ms(m), ms(p), ms(x));
    if !cpu.is_empty() {
        let (m, p, x) = stats(&mut cpu);
        line.push_str(&format!(" [on CPU: median {}, p95 {}, max {}]", ms(m), ms(p), ms(x)));
    }
    println!("{line}");
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn read(path: &str) -> String {
    if path.ends_with(".gz") {
        let out = Command::new("zcat").arg(path).output().unwrap_or_else(|e| panic!("zcat: {e}"));
        assert!(out.status.success(), "zcat {path} failed");
        String::from_utf8(out.stdout).expect("UTF-8")
    } else {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}
