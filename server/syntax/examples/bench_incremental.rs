//! Full-parse throughput and incremental edit latency on a file.
//!
//! ```text
//! cargo run --release -p sdy-syntax --example bench_incremental -- FILE [--split] [--check] [--runs N] [--parse-only] [--sequential] [--thp]
//! ```
//!
//! Prints the lex+parse throughput of FILE: the first parse of the process (fresh memory,
//! what opening a file in a new server costs, with its page faults) and the minimum and
//! median over N more runs (default 9), by wall clock, by the process's CPU time (all
//! threads; a loaded machine inflates it less) and by the calling thread's CPU time (the
//! critical path when the other thread has a core), with the load average; a big file is parsed
//! on two threads unless `--sequential`; then (unless `--parse-only`, which
//! is meant for profilers) the median and p95 latency of one-character edits
//! (`Document::apply_edit`: re-lex, re-parse, splice) at 200 positions spread through the
//! middle half of the file: inserting a space, deleting it again, and replacing a digit.
//! `--check` compares the final tree with a fresh parse. Freeing a tree is timed apart.
//! Transparent huge pages are off, as in the sdy-lsp binary; `--thp` leaves them on.
//!
//! Instructions per MB (no hardware counters in a VM) come from callgrind:
//! `valgrind --tool=callgrind --toggle-collect='sdy_syntax::parser::parse_top_level'
//! target/release/examples/parse_stats FILE`.

/// The binary uses mimalloc; measure what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use sdy_syntax::document::{Document, EditStats};
use sdy_syntax::parser;
use std::time::{Duration, Instant};

const POSITIONS: usize = 200;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // As the binary does (see `disable_transparent_huge_pages` in sdy-lsp's main.rs):
    // huge pages make the first parse slower; `--thp` keeps them, to compare.
    let thp = args.iter().any(|a| a == "--thp");
    #[cfg(target_os = "linux")]
    if !thp {
        // SAFETY: PR_SET_THP_DISABLE only sets a flag of the calling process.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!(
            "usage: bench_incremental FILE [--split] [--check] [--runs N] [--parse-only] [--sequential] [--thp]"
        );
        std::process::exit(2);
    };
    let split = args.iter().any(|a| a == "--split");
    let runs: usize = match args.iter().position(|a| a == "--runs") {
        Some(i) => args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(9),
        None => 9,
    }
    .max(1);
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mb = text.len() as f64 / 1e6;
    println!(
        "{path}: {:.2} MB, {} lines; load average {}; transparent huge pages {}",
        mb,
        text.lines().count(),
        loadavg(),
        if thp { "allowed (--thp)" } else { "off, as in sdy-lsp" }
    );

    // Full parse: the parser alone (freeing the tree not counted), and a whole Document
    // (rope and bookkeeping too).
    let parse: fn(&str) -> _ = if args.iter().any(|a| a == "--sequential") {
        parser::parse_top_level_sequential
    } else {
        parser::parse_top_level
    };
    let faults = minor_faults();
    let first = timed(|| parse(&text));
    let first_faults = minor_faults() - faults;
    let (mut wall, mut cpu, mut main_cpu, mut free) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut faults = Vec::new();
    for _ in 0..runs {
        let before = minor_faults();
        let t = timed(|| parse(&text));
        faults.push(minor_faults() - before);
        wall.push(t.wall);
        cpu.push(t.cpu);
        main_cpu.push(t.main_cpu);
        free.push(timed(|| drop(t.value)).wall);
    }
    let rate = |d: Duration| mb / d.as_secs_f64();
    println!(
        "full lex+parse, first run:  wall {:>8.2} ms {:>7.1} MB/s   cpu {:>8.2} ms {:>7.1} MB/s  ({first_faults} page faults)",
        ms(first.wall),
        rate(first.wall),
        ms(first.cpu),
        rate(first.cpu),
    );
    drop(first.value);
    for (name, times) in [("wall", &wall), ("cpu ", &cpu), ("main", &main_cpu)] {
        let (min, med) = (min(times), median(times.clone()));
        println!(
            "full lex+parse, {name}:       min {:>8.2} ms {:>7.1} MB/s   median {:>8.2} ms {:>7.1} MB/s  ({runs} runs)",
            ms(min),
            rate(min),
            ms(med),
            rate(med),
        );
    }
    faults.sort();
    println!(
        "page faults per later run: median {}; freeing the tree: median {:.2} ms",
        faults[faults.len() / 2],
        ms(median(free))
    );
    if args.iter().any(|a| a == "--parse-only") {
        return;
    }
    let new = median(
        (0..runs.min(3))
            .map(|_| timed(|| Document::new(&text, split).chunks().len()).wall)
            .collect(),
    );
    println!("Document::new:    {:>8.2} ms  {:>7.1} MB/s", ms(new), rate(new));

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

struct Timed<T> {
    value: T,
    wall: Duration,
    cpu: Duration,
    /// CPU time of the calling thread alone: with the other thread's work done on
    /// another core, the parse's critical path.
    main_cpu: Duration,
}

fn timed<T>(f: impl FnOnce() -> T) -> Timed<T> {
    let (start, cpu_start, main_start) = (Instant::now(), cpu_time(), thread_cpu_time());
    let value = std::hint::black_box(f());
    Timed {
        value,
        wall: start.elapsed(),
        cpu: cpu_time().saturating_sub(cpu_start),
        main_cpu: thread_cpu_time().saturating_sub(main_start),
    }
}

/// CPU time of the calling thread.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time of the process (all threads).
fn cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Minor page faults of the calling thread so far.
fn minor_faults() -> i64 {
    // SAFETY: an all-zero rusage is valid, and `getrusage` only writes to it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_minflt
}

fn loadavg() -> String {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

fn min(v: &[Duration]) -> Duration {
    v.iter().copied().min().unwrap_or_default()
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
