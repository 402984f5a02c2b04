//! Time of the analysis after one-character edits, as the language server does it:
//! incremental re-parse, then `ChunkAnalysis::update` (model patch, re-verification of
//! what the edit can affect); next to a fresh analysis.
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_edit -- FILE [--edits N] [--kind space|char]
//! ```
//!
//! Edits are spread evenly over the lines like `../shared/bench/lsp_bench.py` does:
//! `space` inserts a blank next to a blank outside strings (the text stays valid),
//! `char` inserts `x` after the first letter of an identifier (usually an error). Prints
//! the fresh analysis time, the update's p50/p95/max, and how many updates fell back to
//! a fresh analysis.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use sdy_syntax::document::Document;
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut edits = 50usize;
    let mut kind = "space".to_string();
    let mut file = None;
    let mut verbose = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--edits" => edits = it.next().and_then(|n| n.parse().ok()).expect("--edits N"),
            "--kind" => kind = it.next().cloned().expect("--kind space|char"),
            "--verbose" => verbose = true,
            f => file = Some(f.to_string()),
        }
    }
    let path = file.expect("usage: bench_edit FILE [--edits N] [--kind space|char]");
    let mut text = read(&path);
    println!("{path}: {:.2} MB", text.len() as f64 / 1e6);

    let t = Clock::now();
    let mut doc = Document::new(&text, false);
    let t_parse = t.elapsed();
    let rss_parse = rss();
    let chunk = relative(&doc);
    let t = Clock::now();
    let mut analysis = sdy_analysis::analyze_chunk_incremental(&text, &chunk);
    let t_fresh = t.elapsed();
    let rss_analysis = rss();
    let t = Clock::now();
    let plain = sdy_analysis::analyze_chunk(&text, &chunk);
    let t_plain = t.elapsed();
    drop(plain);
    println!(
        "parse {}, fresh analysis {} (keeping incremental state; {} without), {} diagnostics",
        t_parse,
        t_fresh,
        t_plain,
        analysis.diagnostics.len()
    );

    println!(
        "RSS: {rss_parse} after the parse (text, tree), {rss_analysis} with the analysis (model, diagnostics, incremental state)"
    );
    println!("sizes: {:?}", sdy_analysis::incremental::sizes(&analysis));
    let spots = spots(&text, edits, &kind);
    let mut times = Vec::new();
    let mut cpu_times = Vec::new();
    let mut fresh = 0;
    let mut rechecked = 0;
    for (at, insert) in spots {
        // The benchmark's own copy of the text is not timed (the server's text update is
        // measured by `lsp_bench.py`).
        text.insert_str(at, insert);
        let t = Instant::now();
        let c = cpu_time();
        doc.apply_edit(at..at, insert);
        let chunk = relative(&doc);
        let (a, stats) = analysis.update(&text, &chunk);
        analysis = a;
        // As the server does: the replaced trees are freed after the diagnostics are out.
        let garbage = analysis.take_garbage();
        times.push(t.elapsed());
        cpu_times.push(cpu_time() - c);
        drop(garbage);
        fresh += stats.fresh.is_some() as usize;
        rechecked += stats.rechecked;
        if let Some(why) = stats.fresh {
            println!("  fresh at {at}: {why}");
        }
        if verbose {
            println!(
                "  at {at}: {:?} {:.2} ms",
                stats,
                ms(*times.last().unwrap_or(&Duration::ZERO))
            );
        }
    }
    if times.is_empty() {
        return;
    }
    let stats = |mut sorted: Vec<Duration>| {
        sorted.sort();
        let pct = |p: f64| {
            ms(sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1])
        };
        format!("p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms", pct(0.5), pct(0.95), pct(1.0))
    };
    println!(
        "{} {kind} edits (re-parse + update): wall {}; cpu {}; {fresh} fresh; {rechecked} ops rechecked besides the edited ones; {} diagnostics",
        times.len(),
        stats(times),
        stats(cpu_times),
        analysis.diagnostics.len()
    );
}

/// The process's resident and peak resident set size (Linux).
fn rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        let line = status.lines().find(|l| l.starts_with(name));
        let kb: u64 = line.and_then(|l| l.split_whitespace().nth(1)?.parse().ok()).unwrap_or(0);
        kb / 1024
    };
    format!("{} MB (peak {} MB)", field("VmRSS:"), field("VmHWM:"))
}

/// Wall and CPU time (of the whole process: the analysis of big modules uses two
/// threads) since a start.
struct Clock(Instant, Duration);

impl Clock {
    fn now() -> Clock {
        Clock(Instant::now(), cpu_time())
    }
    fn elapsed(&self) -> String {
        format!("{:.1} ms (cpu {:.1} ms)", ms(self.0.elapsed()), ms(cpu_time() - self.1))
    }
}

/// The document's single chunk, positions relative to it (as the server analyses it).
fn relative(doc: &Document) -> Chunk {
    let c = &doc.chunks()[0];
    Chunk { span: Span::new(0, c.span.len()), top: c.top.clone() }
}

/// Edit spots spread over the lines, in a fixed shuffled order, with what to insert.
fn spots(text: &str, n: usize, kind: &str) -> Vec<(usize, &'static str)> {
    let starts: Vec<usize> =
        std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let lines = starts.len();
    let mut out = Vec::new();
    let mut used = std::collections::HashSet::new();
    for k in 0..n {
        let target = ((k as f64 + 0.5) * lines as f64 / n as f64) as usize;
        for probe in 0..lines {
            let ln = (target + probe) % lines;
            if used.contains(&ln) {
                continue;
            }
            let start = starts[ln];
            let end = starts.get(ln + 1).map_or(text.len(), |e| e - 1);
            let line = &text[start..end];
            let spot = if kind == "space" { blank_outside_strings(line) } else { identifier(line) };
            if let Some(i) = spot {
                used.insert(ln);
                out.push((start + i, if kind == "space" { " " } else { "x" }));
                break;
            }
        }
    }
    // A fixed shuffle; then each position moved by the inserts before it.
    let mut seed = 0x2545F4914F6CDD1Du64;
    for i in (1..out.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    let original: Vec<usize> = out.iter().map(|(p, _)| *p).collect();
    for k in 0..out.len() {
        let moved: usize =
            (0..k).filter(|&j| original[j] <= original[k]).map(|j| out[j].1.len()).sum();
        out[k].0 = original[k] + moved;
    }
    out
}

/// The middle blank outside string literals.
fn blank_outside_strings(line: &str) -> Option<usize> {
    let mut in_str = false;
    let mut blanks = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_str => i += 1,
            b'"' => in_str = !in_str,
            b' ' if !in_str => blanks.push(i),
            _ => {}
        }
        i += 1;
    }
    blanks.get(blanks.len() / 2).copied()
}

/// After the first letter of the first identifier not preceded by `%#@!^$.-` or a word
/// character.
fn identifier(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    (0..b.len()).find_map(|i| {
        let ok_start = b[i].is_ascii_alphabetic() || b[i] == b'_';
        let prev = i.checked_sub(1).map(|p| b[p]);
        let blocked = prev.is_some_and(|p| p.is_ascii_alphanumeric() || b"_%#@!^$.-".contains(&p));
        (ok_start && !blocked).then_some(i + 1)
    })
}

fn read(path: &str) -> String {
    if path.ends_with(".gz") {
        let out = std::process::Command::new("zcat").arg(path).output().expect("zcat");
        String::from_utf8(out.stdout).expect("UTF-8")
    } else {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The process's user + system CPU time (zero where it cannot be read).
fn cpu_time() -> Duration {
    sdy_lsp::cpu::process().unwrap_or_default()
}
