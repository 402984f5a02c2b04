//! Full-parse throughput and incremental edit latency on a file.
//!
//! ```text
//! cargo run --release -p sdy-syntax --example bench_incremental -- FILE [--split] [--check]
//! ```
//!
//! Prints the lex+parse throughput of FILE (median of several runs), then the median and
//! p95 latency of one-character edits (`Document::apply_edit`: re-lex, re-parse, splice)
//! at 200 positions spread through the middle half of the file: inserting a space,
//! deleting it again, and replacing a digit. `--check` compares the final tree with a
//! fresh parse.

/// The binary uses mimalloc; measure what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use sdy_syntax::document::{Document, EditStats};
use sdy_syntax::parser;
use std::time::{Duration, Instant};

const POSITIONS: usize = 200;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: bench_incremental FILE [--split] [--check]");
        std::process::exit(2);
    };
    let split = args.iter().any(|a| a == "--split");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mb = text.len() as f64 / 1e6;
    println!("{path}: {:.2} MB, {} lines", mb, text.lines().count());

    // Full parse: the parser alone, and a whole Document (rope and bookkeeping too).
    let runs = if text.len() > 20_000_000 { 3 } else { 7 };
    let parse = median((0..runs).map(|_| time(|| parser::parse_top_level(&text).len())).collect());
    let new =
        median((0..runs).map(|_| time(|| Document::new(&text, split).chunks().len())).collect());
    println!(
        "full lex+parse:   {:>8.2} ms  {:>7.1} MB/s  (median of {runs})",
        ms(parse),
        mb / parse.as_secs_f64()
    );
    println!("Document::new:    {:>8.2} ms  {:>7.1} MB/s", ms(new), mb / new.as_secs_f64());

    // One-character edits through the middle half of the file.
    let mut doc = Document::new(&text, split);
    let mut current = text.clone();
    let (mut insert, mut delete, mut digit) = (Vec::new(), Vec::new(), Vec::new());
    let mut all_stats = Vec::new();
    for i in 0..POSITIONS {
        let mut at = text.len() / 4 + i * (text.len() / 2) / POSITIONS;
        while !current.is_char_boundary(at) {
            at += 1;
        }
        let (t, s) = timed_edit(&mut doc, &mut current, at..at, " ");
        insert.push(t);
        all_stats.push(s);
        let (t, s) = timed_edit(&mut doc, &mut current, at..at + 1, "");
        delete.push(t);
        all_stats.push(s);
        if let Some(d) = current[at..].find(|c: char| c.is_ascii_digit()).map(|d| at + d) {
            let old = current[d..d + 1].to_string();
            let new = if old == "7" { "3" } else { "7" };
            let (t, s) = timed_edit(&mut doc, &mut current, d..d + 1, new);
            digit.push(t);
            all_stats.push(s);
            timed_edit(&mut doc, &mut current, d..d + 1, &old); // restore, not counted
        }
    }
    println!("edit latency (apply_edit), {POSITIONS} positions:");
    for (name, times) in
        [("insert space", &insert), ("delete it", &delete), ("replace digit", &digit)]
    {
        report(name, times);
    }
    let every: Vec<Duration> = insert.iter().chain(&delete).chain(&digit).copied().collect();
    report("all", &every);

    let n = all_stats.len() as f64;
    let avg = |f: fn(&EditStats) -> usize| all_stats.iter().map(f).sum::<usize>() as f64 / n;
    println!(
        "per edit: {:.1} statements, {:.0} bytes re-parsed on average; {} widened, {} whole-chunk, max {} bytes",
        avg(|s| s.statements_reparsed),
        avg(|s| s.bytes_reparsed),
        all_stats.iter().filter(|s| s.widenings > 0).count(),
        all_stats.iter().filter(|s| s.chunk_reparsed).count(),
        all_stats.iter().map(|s| s.bytes_reparsed).max().unwrap_or(0),
    );

    if args.iter().any(|a| a == "--check") {
        assert_eq!(current, text);
        let fresh = Document::new(&current, split);
        assert!(doc.chunks() == fresh.chunks(), "incremental tree differs from a fresh parse");
        println!("check: incremental tree equals a fresh parse");
    }
}

fn timed_edit(
    doc: &mut Document,
    text: &mut String,
    range: std::ops::Range<usize>,
    new: &str,
) -> (Duration, EditStats) {
    text.replace_range(range.clone(), new);
    let start = Instant::now();
    let stats = doc.apply_edit(range, new);
    (start.elapsed(), stats)
}

fn time<T>(f: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    std::hint::black_box(f());
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn percentile(v: &[Duration], p: f64) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(name: &str, times: &[Duration]) {
    if times.is_empty() {
        return;
    }
    println!(
        "  {name:<14} median {:>7.1} µs   p95 {:>7.1} µs   max {:>7.1} µs",
        ms(percentile(times, 0.5)) * 1e3,
        ms(percentile(times, 0.95)) * 1e3,
        ms(percentile(times, 1.0)) * 1e3,
    );
}
