//! Time of `sdy-lsp check` on a file, next to the real Shardy's parse + verify.
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_check -- FILE [--runs N] [--split]
//!     [--no-oracle] [--phases] [--memory]
//! ```
//!
//! FILE may be `.mlir` or `.mlir.gz` (decompressed with `zcat` before timing). Prints
//! the median (and min) over `--runs` runs (default 9, after one warm-up) of what
//! `check` does after reading the file: split, lex + parse, semantic model, every
//! verifier rule and hint, and the rendering of the diagnostics. `--phases` also times
//! each phase on its own (parse, model, verify...); `--memory` only prints how much
//! memory the tree, the model and the verifier take.
//!
//! When the oracle venv exists (`$SDY_ORACLE_VENV`, default
//! `~/.cache/sdy-oracle-venv`), it then times the real Shardy's `ir.Module.parse` (MLIR's
//! parser runs the full verifier) on the same text in that venv's Python, single
//! threaded like the oracle scripts, with the same number of runs, and prints the
//! ratio ours / Shardy's. The budget of the project is a ratio ≤ 1/3.

/// The binary uses mimalloc; measure what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use common::read;
use sdy_analysis::diag::{Diagnostic, LineIndex, Severity};
use std::fmt::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 9usize;
    let mut split = false;
    let mut oracle = true;
    let mut phases = false;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--split" | "--split-input-file" | "-split-input-file" => split = true,
            "--no-oracle" => oracle = false,
            "--phases" => phases = true,
            "--memory" => {}
            f if !f.starts_with("--") => file = Some(f.to_string()),
            other => {
                eprintln!("bench_check: unknown option {other}");
                std::process::exit(2);
            }
        }
    }
    let Some(path) = file else {
        eprintln!("usage: bench_check FILE [--runs N] [--split] [--no-oracle] [--phases]");
        std::process::exit(2);
    };
    let text = read(&path);
    let mb = text.len() as f64 / 1e6;
    println!("{path}: {mb:.2} MB, {} lines", text.lines().count());

    if args.iter().any(|a| a == "--memory") {
        print_memory(&text, split);
        return;
    }
    let mut errors = 0;
    std::hint::black_box(check(&path, &text, split, &mut errors)); // warm-up
    let times: Vec<Duration> =
        (0..runs).map(|_| time(|| check(&path, &text, split, &mut errors))).collect();
    let ours = median(&times);
    println!(
        "sdy-lsp check:            {:>8.1} ms  (median of {runs}, min {:.1} ms; {:.0} MB/s; {} error(s))",
        ms(ours),
        ms(*times.iter().min().expect("runs")),
        mb / ours.as_secs_f64(),
        errors / (runs + 1)
    );
    if let Some(process) = process_time(&path, &text, split, runs) {
        println!(
            "sdy-lsp check (process):  {:>8.1} ms  (median of {runs}: the binary beside this \
             example on the file, reading and exit included)",
            ms(process)
        );
    }
    if phases {
        print_phases(&text, split, runs);
    }
    if !oracle {
        return;
    }
    match shardy_parse_verify(&text, runs) {
        Ok(shardy) => {
            println!(
                "real Shardy parse+verify: {:>8.1} ms  (median of {runs}, ir.Module.parse, 1 thread)",
                ms(shardy)
            );
            let ratio = ours.as_secs_f64() / shardy.as_secs_f64();
            println!(
                "ratio ours / Shardy:      {ratio:>8.3}  ({:.1}x faster; budget ratio <= 0.333: {})",
                1.0 / ratio,
                if ratio <= 1.0 / 3.0 { "met" } else { "NOT met" }
            );
        }
        Err(e) => println!("real Shardy: not measured ({e})"),
    }
}

/// What `sdy-lsp check` does with a file's text: every diagnostic, rendered.
fn check(path: &str, text: &str, split: bool, errors: &mut usize) -> usize {
    let index = LineIndex::new(text);
    let mut out = String::new();
    for chunk in sdy_analysis::parse_chunks(text, split) {
        let analysis = sdy_analysis::analyze_chunk(text, &chunk);
        for d in &analysis.diagnostics {
            *errors += (d.severity == Severity::Error) as usize;
            render(path, &index, d, &mut out);
        }
    }
    out.len()
}

fn render(file: &str, index: &LineIndex, d: &Diagnostic, out: &mut String) {
    let (line, col) = index.line_col(d.span.start);
    let _ = writeln!(out, "{file}:{line}:{col}: {}: {}", d.severity.as_str(), d.message);
    for n in &d.notes {
        let (line, col) = index.line_col(n.span.start);
        let _ = writeln!(out, "{file}:{line}:{col}: note: {}", n.message);
    }
}

/// Median time of each phase on its own.
fn print_phases(text: &str, split: bool, runs: usize) {
    let parse = median(
        &(0..runs).map(|_| time(|| sdy_analysis::parse_chunks(text, split))).collect::<Vec<_>>(),
    );
    let chunks = sdy_analysis::parse_chunks(text, split);
    let model = median(
        &(0..runs)
            .map(|_| {
                time(|| chunks.iter().map(sdy_analysis::model::Model::build).collect::<Vec<_>>())
            })
            .collect::<Vec<_>>(),
    );
    let models: Vec<_> = chunks.iter().map(sdy_analysis::model::Model::build).collect();
    let syntax = median(
        &(0..runs)
            .map(|_| {
                time(|| {
                    chunks
                        .iter()
                        .map(sdy_analysis::syntax_diags::syntax_diagnostics)
                        .collect::<Vec<_>>()
                })
            })
            .collect::<Vec<_>>(),
    );
    let verify = median(
        &(0..runs)
            .map(|_| {
                time(|| {
                    models
                        .iter()
                        .map(|m| sdy_analysis::verify::verify_chunk(m, text))
                        .collect::<Vec<_>>()
                })
            })
            .collect::<Vec<_>>(),
    );
    let index = median(&(0..runs).map(|_| time(|| LineIndex::new(text))).collect::<Vec<_>>());
    println!("  lex + parse:            {:>8.1} ms", ms(parse));
    println!("  semantic model:         {:>8.1} ms", ms(model));
    println!("  syntax diagnostics:     {:>8.1} ms", ms(syntax));
    println!("  verifier + hints:       {:>8.1} ms", ms(verify));
    println!("  line index:             {:>8.1} ms", ms(index));
    let free = median(
        &(0..runs)
            .map(|_| {
                let c = sdy_analysis::parse_chunks(text, split);
                let m: Vec<_> = c.iter().map(sdy_analysis::model::Model::build).collect();
                time(move || drop((m, c)))
            })
            .collect::<Vec<_>>(),
    );
    println!("  freeing tree + model:   {:>8.1} ms", ms(free));
}

/// How much the resident set grows with the tree, the model and the verifier's output
/// (run first, in a fresh process: the allocator keeps freed memory).
fn print_memory(text: &str, split: bool) {
    let before = rss_mb();
    let c = sdy_analysis::parse_chunks(text, split);
    let after_parse = rss_mb();
    let m: Vec<_> = c.iter().map(sdy_analysis::model::Model::build).collect();
    let after_model = rss_mb();
    let v: Vec<_> = m.iter().map(|m| sdy_analysis::verify::verify_chunk(m, text)).collect();
    let after_verify = rss_mb();
    println!(
        "  memory (RSS growth):    tree {:.0} MB, model {:.0} MB, verifier {:.0} MB",
        after_parse - before,
        after_model - after_parse,
        after_verify - after_model
    );
    drop((v, m, c));
}

/// The resident set size of this process, in MB (0 where /proc is missing).
fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Median wall time of the `sdy-lsp check` process (built beside this example) on the
/// file, when the binary is there.
fn process_time(path: &str, text: &str, split: bool, runs: usize) -> Option<Duration> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join(format!("sdy-lsp{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        return None;
    }
    // A compressed file is decompressed once to a temporary file.
    let tmp = std::env::temp_dir().join(format!("bench_check_proc_{}.mlir", std::process::id()));
    let file = if path.ends_with(".gz") {
        std::fs::write(&tmp, text).ok()?;
        tmp.clone()
    } else {
        PathBuf::from(path)
    };
    let mut cmd = Command::new(&bin);
    cmd.arg("check").arg(&file).stdout(std::process::Stdio::null());
    if split {
        cmd.arg("--split-input-file");
    }
    let _ = cmd.status(); // warm-up (page cache)
    let times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let _ = cmd.status();
            start.elapsed()
        })
        .collect();
    let _ = std::fs::remove_file(&tmp);
    Some(median(&times))
}

/// Median time of the real Shardy's `ir.Module.parse(text)` in the oracle venv.
fn shardy_parse_verify(text: &str, runs: usize) -> Result<Duration, String> {
    let venv = std::env::var_os("SDY_ORACLE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sdy-oracle-venv")
    });
    let python = venv.join("bin/python");
    if !python.exists() {
        return Err(format!("no oracle venv at {}", venv.display()));
    }
    let tmp = std::env::temp_dir().join(format!("bench_check_{}.mlir", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| e.to_string())?;
    let script = format!(
        r#"
import statistics, sys, time
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir
text = open(sys.argv[1]).read()
def once():
    ctx = jax_mlir.make_ir_context()
    ctx.enable_multithreading(False)
    with ctx:
        t = time.perf_counter()
        m = ir.Module.parse(text)
        dt = time.perf_counter() - t
    del m
    return dt
once()
print(statistics.median([once() for _ in range({runs})]))
"#
    );
    let out = Command::new(&python).arg("-c").arg(script).arg(&tmp).output();
    let _ = std::fs::remove_file(&tmp);
    let out = out.map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    let secs: f64 =
        String::from_utf8_lossy(&out.stdout).trim().parse().map_err(|e| format!("{e}"))?;
    Ok(Duration::from_secs_f64(secs))
}

fn time<T>(f: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    std::hint::black_box(f());
    start.elapsed()
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
