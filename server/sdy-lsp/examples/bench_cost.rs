//! The cost view's budgets, measured:
//! * the cost of a propagated chunk (`sdy_analysis::cost::of_propagation`: explicit
//!   reshards, reshard-to-collectives, attribution, memory) after a propagation run
//!   (budget on the ~10k-line corpus module: ≤ 300 ms);
//! * its inlay hints (computed once per run) and the hints of a 100-line range as the
//!   server answers them (budget ≤ 10 ms);
//! * `sdy-lsp cost` end to end (parse, analysis, propagation pipeline, export, cost)
//!   next to the real Shardy's `PassManager.run` of the propagation pipeline, explicit
//!   reshards (full version) and reshard-to-collectives (budget: ratio ≤ 0.5).
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_cost -- FILE [--runs N] [--no-oracle]
//! ```

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use common::{median, read, shardy_pass, time};
use sdy_analysis::cost;
use sdy_analysis::propagation::editor::{propagate, propagate_unexplained, Strategy};
use std::time::Duration;

const SHARDY: &str = "sdy-propagation-pipeline,func.func(sdy-insert-explicit-reshards{enable-full-version=true}),func.func(sdy-reshard-to-collectives)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3usize;
    let mut oracle = true;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).unwrap_or(runs).max(1),
            "--no-oracle" => oracle = false,
            _ => file = Some(a.clone()),
        }
    }
    let Some(file) = file else {
        eprintln!("usage: bench_cost FILE [--runs N] [--no-oracle]");
        std::process::exit(2);
    };
    sdy_lsp::alloc::keep_freed_memory();
    let text = read(&file);
    let chunk = sdy_analysis::parse_chunks(&text, false).remove(0);
    let a = sdy_analysis::analyze_chunk(&text, &chunk);
    let p = propagate(&text, &chunk, &a.model, &a.diagnostics, Strategy::Pipeline);
    assert!(!p.failed, "propagation failed on {file}");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (mut view, mut view_cpu, mut hints_t, mut range_t, mut e2e, mut e2e_cpu) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut summary = String::new();
    for round in 0..=runs {
        let mut c = None;
        let (t, tc) = time(|| c = cost::of_propagation(&text, &a.model, &p));
        let c = c.expect("a cost");
        let mut hints = Vec::new();
        let (h, _) = time(|| hints = cost::hints::hints(&a.model, &text, &c, &Default::default()));
        // A 100-line range in the middle, as the server answers it: a binary search in
        // the sorted hints and the labels copied out.
        let lines: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
        let mid = lines.len() / 2;
        let (lo, hi) =
            (lines[mid.saturating_sub(50)] as u32, lines[(mid + 50).min(lines.len() - 1)] as u32);
        let (r, _) = time(|| {
            let s = hints.partition_point(|h| h.offset < lo);
            let e = hints.partition_point(|h| h.offset <= hi);
            hints[s..e.max(s)].iter().map(|h| h.label.clone()).collect::<Vec<_>>()
        });
        let (o, oc) = time(|| {
            let chunk = sdy_analysis::parse_chunks(&text, false).remove(0);
            let a = sdy_analysis::analyze_chunk(&text, &chunk);
            // As `sdy-lsp cost` runs it: without the editor's explanation.
            let p =
                propagate_unexplained(&text, &chunk, &a.model, &a.diagnostics, Strategy::Pipeline);
            cost::of_propagation(&text, &a.model, &p).map(|c| c.functions.len())
        });
        if round > 0 {
            view.push(t);
            view_cpu.push(tc);
            hints_t.push(h);
            range_t.push(r);
            e2e.push(o);
            e2e_cpu.push(oc);
        } else {
            let n: usize = c.functions.iter().map(|f| f.collectives.len()).sum();
            let bytes: i64 = c.functions.iter().map(|f| f.bytes_per_device()).sum();
            summary = format!(
                "{} functions, {n} collectives, {:.1} MiB per device, {} hints{}",
                c.functions.len(),
                bytes as f64 / (1 << 20) as f64,
                hints.len(),
                c.failure.as_ref().map_or(String::new(), |f| format!(", export failed: {}", f.1))
            );
        }
    }
    println!(
        "file: {file} ({:.1} MB, {} lines), {runs} runs: {summary}",
        text.len() as f64 / 1e6,
        text.lines().count()
    );
    println!(
        "cost view after propagation: median {:.0} ms, cpu {:.0} ms (budget on tfm_10k: <= 300 ms)",
        ms(median(&view)),
        ms(median(&view_cpu))
    );
    println!(
        "hints: all {:.2} ms once per run; a 100-line range {:.3} ms (budget <= 10 ms)",
        ms(median(&hints_t)),
        ms(median(&range_t))
    );
    println!(
        "sdy-lsp cost end to end (parse, analysis, pipeline, export, cost): median {:.0} ms, cpu {:.0} ms",
        ms(median(&e2e)),
        ms(median(&e2e_cpu))
    );
    if !oracle {
        return;
    }
    match shardy_pass(&text, &format!("builtin.module({SHARDY})"), false, runs) {
        Ok((wall, cpu)) => {
            println!(
                "Shardy PassManager.run (pipeline, explicit reshards, reshard-to-collectives; verifier off): median {:.0} ms, cpu {:.0} ms",
                ms(wall),
                ms(cpu)
            );
            println!(
                "ratio sdy-lsp cost / Shardy = {:.2} wall, {:.2} cpu (budget <= 0.50)",
                median(&e2e).as_secs_f64() / wall.as_secs_f64(),
                median(&e2e_cpu).as_secs_f64() / cpu.as_secs_f64()
            );
        }
        Err(e) => println!("Shardy: not timed ({e})"),
    }
}
