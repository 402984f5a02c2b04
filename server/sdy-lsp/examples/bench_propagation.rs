//! Time of propagation passes (default `-sdy-propagation-pipeline`) on a file, next to
//! the real Shardy running the same passes on the same text.
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_propagation -- FILE [--runs N]
//!     [--pass FLAG|PIPELINE] [--shardy-pass PIPELINE] [--verifier off|on|both] [--no-oracle]
//! ```
//!
//! FILE may be `.mlir` or `.mlir.gz`. `--pass` takes one pass flag or a textual
//! pipeline as `-pass-pipeline` does, e.g. propagation and the export path:
//! `'builtin.module(sdy-propagation-pipeline,sdy-export-pipeline{enable-insert-explicit-collectives=true})'`.
//! `--shardy-pass` gives Shardy's side another textual pipeline, for passes the two
//! sides spell differently: the oracle's older export pipeline lacks
//! `sdy-inline-meshes` (and `sdy-verify-unreduced-axes`, which it does not have), so
//! like for like is `--shardy-pass '...,sdy-export-pipeline{...},sdy-inline-meshes)'`.
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

mod common;

use common::{median, min, read, shardy_pass, time};
use sdy_analysis::passes::{self, Pipeline, Session};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5usize;
    let mut flag = "-sdy-propagation-pipeline".to_string();
    let mut oracle = true;
    let mut shardy_override = None;
    let mut verifier = Verifier::Off;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).unwrap_or(runs).max(1),
            "--pass" => flag = it.next().cloned().unwrap_or(flag),
            "--no-oracle" => oracle = false,
            "--shardy-pass" => shardy_override = it.next().cloned(),
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
             [--shardy-pass PIPELINE] [--verifier off|on|both] [--no-oracle]"
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
    let shardy_pipeline = shardy_override.unwrap_or(shardy_pipeline);
    let pipeline = || {
        let mut p = Pipeline::new();
        for spec in &specs {
            p.add(spec).unwrap_or_else(|e| panic!("{e}"));
        }
        p
    };
    println!(
        "file: {file} ({:.1} MB), passes {flag}, Shardy's {shardy_pipeline}, {runs} runs",
        text.len() as f64 / 1e6
    );
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
