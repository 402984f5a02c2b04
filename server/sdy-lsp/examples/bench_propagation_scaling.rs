//! How the editor's propagation scales with the length of a chain of ops, next to
//! `opt -sdy-propagation-pipeline` on the same text.
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_propagation_scaling -- [--sizes 1000,5000,20000]
//!     [--runs N] [--strategy S]
//! ```
//!
//! Two generated modules per size N: a plain chain of N `stablehlo.add`s from a sharded
//! argument (a long residual chain), and the same with a `stablehlo.dot_general` every
//! 1,000 ops (axes enter along the way, and conflict). Each measurement runs in a fresh
//! child process (this binary with `--child`), so that its peak memory (`VmHWM`) is its
//! own:
//! * `editor`: what the server does for the document: parse and analyse (as on open),
//!   then the `sdy.propagate` run (the explained propagation, its inlay hints) and the
//!   hover's explanation of the last value of the chain; the allocator returns freed
//!   memory at once, as in the server;
//! * `opt`: what `sdy-lsp opt FILE -sdy-propagation-pipeline` does after reading the
//!   file (parse, analyse, run the pipeline, print), keeping freed memory as `opt` does.
//!
//! Printed per size: the medians over `--runs` children of wall time, thread CPU time
//! and peak memory, and the memory the editor still holds with the result alive; then
//! per variant the fitted exponent (log-log slope over the sizes) of the editor's CPU
//! time and peak memory, and the editor/opt ratios at the largest size. The targets:
//! exponents at most 1 (linear), ratios within 2.

/// The binary uses mimalloc; measure what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use sdy_analysis::passes::{self, Pipeline, Session};
use sdy_analysis::propagation::editor::{self, hints, Strategy};
use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

/// A `stablehlo.dot_general` every this many ops in the second variant.
const DOT_EVERY: usize = 1000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        child(&args[1..]);
        return;
    }
    let mut sizes = vec![1000usize, 5000, 20000];
    let mut runs = 3usize;
    let mut strategy = "pipeline".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).unwrap_or(runs).max(1),
            "--strategy" => strategy = it.next().cloned().unwrap_or(strategy),
            "--sizes" => {
                let list = it.next().map(String::as_str).unwrap_or("");
                sizes = list.split(',').filter_map(|n| n.trim().parse().ok()).collect();
            }
            other => {
                eprintln!("unknown argument {other:?}");
                std::process::exit(2);
            }
        }
    }
    if Strategy::parse(&strategy).is_none() {
        eprintln!("unknown strategy {strategy:?}");
        std::process::exit(2);
    }
    println!("strategy {strategy}, {runs} runs per figure, load average {}", loadavg());
    for dots in [false, true] {
        let variant = if dots { "add chain, dot_general every 1000" } else { "add chain" };
        println!("\n{variant}:");
        println!(
            "{:>7} {:>8} | {:>22} {:>9} {:>9} | {:>21} {:>9} | {:>6} {:>6}",
            "ops",
            "KB",
            "editor wall/cpu ms",
            "peak MB",
            "kept MB",
            "opt wall/cpu ms",
            "peak MB",
            "cpu×",
            "mem×"
        );
        let mut rows = Vec::new();
        for &n in &sizes {
            let text = chain(n, dots);
            let path = std::env::temp_dir()
                .join(format!("bench_scaling_{}_{n}_{dots}.mlir", std::process::id()));
            std::fs::write(&path, &text).expect("write the generated module");
            let file = path.to_string_lossy().to_string();
            let editor = measure(&["editor", &file, &strategy], runs);
            let opt = measure(&["opt", &file, &strategy], runs);
            let _ = std::fs::remove_file(&path);
            println!(
                "{n:>7} {:>8.0} | {:>10.0} {:>11.0} {:>9.1} {:>9.1} | {:>10.0} {:>10.0} {:>9.1} | {:>6.2} {:>6.2}",
                text.len() as f64 / 1024.0,
                editor.wall,
                editor.cpu,
                editor.peak_mb,
                editor.kept_mb,
                opt.wall,
                opt.cpu,
                opt.peak_mb,
                editor.cpu / opt.cpu,
                editor.peak_mb / opt.peak_mb
            );
            rows.push((n as f64, editor, opt));
        }
        if rows.len() >= 2 {
            let slope = |f: &dyn Fn(&Sample) -> f64| {
                fit(&rows.iter().map(|(n, e, _)| (*n, f(e))).collect::<Vec<_>>())
            };
            let opt_slope = |f: &dyn Fn(&Sample) -> f64| {
                fit(&rows.iter().map(|(n, _, o)| (*n, f(o))).collect::<Vec<_>>())
            };
            let (_, e, o) = rows.last().expect("rows");
            println!(
                "exponent (log-log slope): editor cpu {:.2}, peak memory {:.2}, kept memory {:.2}; \
                 opt cpu {:.2}, peak memory {:.2}",
                slope(&|s| s.cpu),
                slope(&|s| s.peak_mb),
                slope(&|s| s.kept_mb),
                opt_slope(&|s| s.cpu),
                opt_slope(&|s| s.peak_mb)
            );
            println!(
                "at {} ops: editor / opt = {:.2} cpu, {:.2} wall, {:.2} peak memory (targets: \
                 exponents <= 1, ratios <= 2)",
                rows.last().map_or(0.0, |r| r.0),
                e.cpu / o.cpu,
                e.wall / o.wall,
                e.peak_mb / o.peak_mb
            );
        }
    }
}

/// A function of `n` chained ops: `stablehlo.add`s, with a `dot_general` by a sharded
/// weight every [`DOT_EVERY`] ops when `dots`.
fn chain(n: usize, dots: bool) -> String {
    let ty = "tensor<64x64xf32>";
    let mut s = String::with_capacity(n * 64 + 512);
    s.push_str("sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n\n");
    let _ = writeln!(
        s,
        "func.func @main(%arg0: {ty} {{sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}, {{}}]>}}, \
         %arg1: {ty} {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{\"y\"}}]>}}) -> {ty} {{"
    );
    for i in 0..n {
        let prev = if i == 0 { "%arg0".to_string() } else { format!("%{}", i - 1) };
        if dots && i % DOT_EVERY == DOT_EVERY - 1 {
            let _ = writeln!(
                s,
                "  %{i} = stablehlo.dot_general {prev}, %arg1, contracting_dims = [1] x [0] : \
                 ({ty}, {ty}) -> {ty}"
            );
        } else {
            let _ = writeln!(s, "  %{i} = stablehlo.add {prev}, {prev} : {ty}");
        }
    }
    let _ = writeln!(s, "  return %{} : {ty}\n}}", n.saturating_sub(1));
    s
}

#[derive(Clone, Copy, Default)]
struct Sample {
    wall: f64,
    cpu: f64,
    peak_mb: f64,
    kept_mb: f64,
}

/// The medians of `runs` children.
fn measure(args: &[&str], runs: usize) -> Sample {
    let exe = std::env::current_exe().expect("current_exe");
    let mut samples = Vec::new();
    for _ in 0..runs {
        let out = Command::new(&exe).arg("--child").args(args).output().expect("run a child");
        assert!(
            out.status.success(),
            "child {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<f64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        assert_eq!(v.len(), 4, "unexpected child output {text:?}");
        samples.push(Sample { wall: v[0], cpu: v[1], peak_mb: v[2], kept_mb: v[3] });
    }
    let med = |f: &dyn Fn(&Sample) -> f64| {
        let mut v: Vec<f64> = samples.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Sample {
        wall: med(&|s| s.wall),
        cpu: med(&|s| s.cpu),
        peak_mb: med(&|s| s.peak_mb),
        kept_mb: med(&|s| s.kept_mb),
    }
}

/// Least-squares slope of log(y) over log(x).
fn fit(points: &[(f64, f64)]) -> f64 {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    let n = pts.len() as f64;
    let (mx, my) =
        (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let num: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = pts.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    if den == 0.0 {
        f64::NAN
    } else {
        num / den
    }
}

/// One measurement: prints `wall_ms cpu_ms peak_mb kept_mb`.
fn child(args: &[String]) {
    let (mode, file, strategy) = match args {
        [m, f, s] => (m.as_str(), f.as_str(), Strategy::parse(s).expect("strategy")),
        _ => panic!("--child MODE FILE STRATEGY"),
    };
    let text = std::fs::read_to_string(file).expect("read the module");
    let start = Instant::now();
    let cpu0 = sdy_lsp::cpu::thread().unwrap_or_default();
    let kept = match mode {
        "editor" => {
            sdy_lsp::alloc::purge_freed_memory_at_once();
            let chunk = sdy_analysis::parse_chunks(&text, false).remove(0);
            let a = sdy_analysis::analyze_chunk(&text, &chunk);
            let p = editor::propagate(&text, &chunk, &a.model, &a.diagnostics, strategy);
            assert!(!p.failed, "propagation failed: {:?}", p.diagnostics);
            let h = hints::propagated(&a.model, &p, &p.meshes);
            // The hover on the end of the chain: its origin walks the whole chain.
            let last = p.values.iter().rev().find(|v| !v.inferred.is_empty()).expect("a value");
            let why =
                sdy_analysis::explain::why::explain(&a.model, &text, &p, last, false, &|_| None);
            std::hint::black_box((&h, &why));
            Some((a, p, h))
        }
        "opt" => {
            sdy_lsp::alloc::keep_freed_memory();
            let spec = passes::parse_pass_flag(&format!("-{}", strategy.flag())).expect("flag");
            let mut session = Session::new(true);
            let mut out = String::new();
            for c in sdy_analysis::parse_chunks(&text, false) {
                let a = sdy_analysis::analyze_chunk(&text, &c);
                let mut p = Pipeline::new();
                p.add(&spec).expect("pass");
                let run = p.run(&text, &c, &a.model, &mut session);
                assert!(!run.failed, "opt failed");
                out.push_str(&sdy_analysis::print::print_module(&run.module));
            }
            std::hint::black_box(out);
            None
        }
        _ => panic!("unknown mode {mode}"),
    };
    let wall = start.elapsed();
    let cpu = sdy_lsp::cpu::thread().unwrap_or_default().saturating_sub(cpu0);
    let (rss, peak) = memory_mb();
    drop(kept);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("{:.1} {:.1} {peak:.1} {rss:.1}", ms(wall), ms(cpu));
}

/// `VmRSS` and `VmHWM` of this process, in MB.
fn memory_mb() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
