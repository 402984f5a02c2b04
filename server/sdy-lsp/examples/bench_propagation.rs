//! Time of propagation passes (default `-sdy-propagation-pipeline`) on a file, next to
//! the real Shardy running the same passes on the same text.
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_propagation -- FILE [--runs N]
//!     [--pass FLAG|PIPELINE] [--verifier off|on|both] [--no-oracle]
//! ```
//!
//! FILE may be `.mlir` or `.mlir.gz`. `--pass` takes one pass flag or a textual
//! pipeline as `-pass-pipeline` does, e.g. propagation and the export path:
//! `'builtin.module(sdy-propagation-pipeline,sdy-export-pipeline{enable-insert-explicit-collectives=true})'`.
//! Prints the median (and min) over `--runs` runs (default 5, after one warm-up) of
//! * `passes`: what Shardy's `PassManager.run` does: building the IR of the parsed
//!   module and running the passes (parse and print excluded), and
//! * `opt`: everything `sdy-lsp opt FILE FLAG` does after reading the file (parse,
//!   model, verifier, passes, printing).
//!
//! When the oracle venv exists (`$SDY_ORACLE_VENV`, default `~/.cache/sdy-oracle-venv`)
//! it then times Shardy's `PassManager.run` of the same passes on a freshly parsed
//! module, single threaded, with the same number of runs, and prints the ratio ours /
//! Shardy's. `--verifier` says whether the IR is verified after each pass, on both
//! sides alike: `off` (the default) times the passes themselves, `on` what `sdy_opt`
//! and `sdy-lsp opt` do by default (MLIR's `-verify-each`), `both` both. The
//! project's budget for the pipeline is a ratio ≤ 0.5.
//!
//! The allocator keeps freed memory, as `sdy-lsp opt` does (`sdy_lsp::alloc`).
//!
//! Every figure is given as wall time and as on-CPU time of the running thread (both
//! sides single threaded): on a loaded machine the wall time includes waiting for a
//! core, the CPU time does not.

/// The binary uses mimalloc; measure what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use sdy_analysis::passes::{self, Pipeline, Session};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5usize;
    let mut flag = "-sdy-propagation-pipeline".to_string();
    let mut oracle = true;
    let mut verifier = Verifier::Off;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).unwrap_or(runs).max(1),
            "--pass" => flag = it.next().cloned().unwrap_or(flag),
            "--no-oracle" => oracle = false,
            "--verifier" => {
                verifier = match it.next().map(String::as_str) {
                    Some("on") => Verifier::On,
                    Some("both") => Verifier::Both,
                    _ => Verifier::Off,
                }
            }
            _ => file = Some(a.clone()),
        }
    }
    let Some(file) = file else {
        eprintln!(
            "usage: bench_propagation FILE [--runs N] [--pass FLAG|PIPELINE] \
             [--verifier off|on|both] [--no-oracle]"
        );
        std::process::exit(2);
    };
    // As `sdy-lsp opt` does.
    sdy_lsp::alloc::keep_freed_memory();
    let text = read(&file);
    // A textual pipeline (`builtin.module(...)`) as `-pass-pipeline` takes it, or one flag.
    let (specs, shardy_pipeline) = match flag.starts_with("builtin.module(") {
        true => (passes::parse_pass_pipeline(&flag), flag.clone()),
        false => (
            passes::parse_pass_flag(&flag).map(|s| vec![s]),
            format!("builtin.module({})", flag.trim_start_matches('-')),
        ),
    };
    let specs = specs.unwrap_or_else(|e| panic!("{e}"));
    let pipeline = || {
        let mut p = Pipeline::new();
        for spec in &specs {
            p.add(spec).unwrap_or_else(|e| panic!("{e}"));
        }
        p
    };
    println!("file: {file} ({:.1} MB), passes {shardy_pipeline}, {runs} runs", text.len() as f64 / 1e6);
    let chunks = sdy_analysis::parse_chunks(&text, false);
    let analyses: Vec<_> = chunks.iter().map(|c| sdy_analysis::analyze_chunk(&text, c)).collect();
    for &verify in verifier.settings() {
        let mut passes_t = Vec::new();
        let mut opt_t = Vec::new();
        let mut passes_cpu = Vec::new();
        let mut opt_cpu = Vec::new();
        let session = || {
            let mut session = Session::new(true);
            session.verify_each = verify;
            session
        };
        for round in 0..=runs {
            let (t, tc) = time(|| {
                let mut session = session();
                for (c, a) in chunks.iter().zip(&analyses) {
                    let run = pipeline().run(&text, c, &a.model, &mut session);
                    assert!(!run.failed, "the pass failed on {file}");
                    std::hint::black_box(run.module);
                }
            });
            let (o, oc) = time(|| {
                let mut session = session();
                let mut out = String::new();
                for c in sdy_analysis::parse_chunks(&text, false) {
                    let a = sdy_analysis::analyze_chunk(&text, &c);
                    let run = pipeline().run(&text, &c, &a.model, &mut session);
                    out.push_str(&sdy_analysis::print::print_module(&run.module));
                }
                out
            });
            if round > 0 {
                passes_t.push(t);
                opt_t.push(o);
                passes_cpu.push(tc);
                opt_cpu.push(oc);
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let on_off = if verify { "on" } else { "off" };
        println!(
            "verifier after each pass {on_off}: sdy-lsp passes: median {:.0} ms (min {:.0} ms), \
             cpu median {:.0} ms (min {:.0} ms); opt end to end: median {:.0} ms, cpu {:.0} ms",
            ms(median(&passes_t)),
            ms(min(&passes_t)),
            ms(median(&passes_cpu)),
            ms(min(&passes_cpu)),
            ms(median(&opt_t)),
            ms(median(&opt_cpu))
        );
        if !oracle {
            continue;
        }
        match shardy_pass(&text, &shardy_pipeline, verify, runs) {
            Ok((shardy, shardy_cpu)) => {
                let ours = median(&passes_t);
                let ours_cpu = median(&passes_cpu);
                println!(
                    "verifier after each pass {on_off}: Shardy PassManager.run: median {:.0} ms, \
                     cpu median {:.0} ms",
                    ms(shardy),
                    ms(shardy_cpu)
                );
                println!(
                    "verifier after each pass {on_off}: ratio sdy-lsp / Shardy = {:.2} wall, \
                     {:.2} cpu (budget for the pipeline: <= 0.50)",
                    ours.as_secs_f64() / shardy.as_secs_f64(),
                    ours_cpu.as_secs_f64() / shardy_cpu.as_secs_f64()
                );
            }
            Err(e) => println!("Shardy: not timed ({e})"),
        }
    }
}

/// Which settings of the verifier after each pass to time (both sides alike).
#[derive(Clone, Copy)]
enum Verifier {
    Off,
    On,
    Both,
}

impl Verifier {
    fn settings(self) -> &'static [bool] {
        match self {
            Verifier::Off => &[false],
            Verifier::On => &[true],
            Verifier::Both => &[false, true],
        }
    }
}

/// Median wall and thread CPU time of Shardy's `PassManager.run` of `pipeline` (a fresh
/// parse per run, untimed), with MLIR's verifier after each pass on or off.
fn shardy_pass(
    text: &str,
    pipeline: &str,
    verify: bool,
    runs: usize,
) -> Result<(Duration, Duration), String> {
    let venv = std::env::var_os("SDY_ORACLE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sdy-oracle-venv")
    });
    let python = venv.join("bin/python");
    if !python.exists() {
        return Err(format!("no oracle venv at {}", venv.display()));
    }
    let verify = if verify { "True" } else { "False" };
    let tmp = std::env::temp_dir().join(format!("bench_propagation_{}.mlir", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| e.to_string())?;
    let script = format!(
        r#"
import statistics, sys, time
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir, passmanager
text = open(sys.argv[1]).read()
ctx = jax_mlir.make_ir_context()
ctx.enable_multithreading(False)
def once():
    with ctx:
        m = ir.Module.parse(text)
        pm = passmanager.PassManager.parse("{pipeline}")
        pm.enable_verifier({verify})
        t = time.perf_counter()
        c = time.thread_time()
        pm.run(m.operation)
        dc = time.thread_time() - c
        dt = time.perf_counter() - t
    del m
    return dt, dc
once()
times = [once() for _ in range({runs})]
print(statistics.median(t for t, _ in times), statistics.median(c for _, c in times))
"#
    );
    let out = Command::new(&python).arg("-c").arg(script).arg(&tmp).output();
    let _ = std::fs::remove_file(&tmp);
    let out = out.map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let secs: Vec<f64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{e}"))?;
    match secs[..] {
        [wall, cpu] => Ok((Duration::from_secs_f64(wall), Duration::from_secs_f64(cpu))),
        _ => Err(format!("unexpected output: {text}")),
    }
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

/// Wall time and thread CPU time of `f`.
fn time<T>(f: impl FnOnce() -> T) -> (Duration, Duration) {
    let cpu = sdy_lsp::cpu::thread().unwrap_or_default();
    let start = Instant::now();
    std::hint::black_box(f());
    let wall = start.elapsed();
    (wall, sdy_lsp::cpu::thread().unwrap_or_default().saturating_sub(cpu))
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

fn min(v: &[Duration]) -> Duration {
    v.iter().copied().min().unwrap_or_default()
}
