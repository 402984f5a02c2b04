//! Cost of the in-string features (`sdy_analysis::ide::strings`) on a big file.
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_strings -- FILE [--runs N]
//! ```
//!
//! FILE may be `.mlir` or `.mlir.gz`. Prints the median time of the in-string
//! diagnostics (what `analyze_chunk` adds per analysis) on FILE as is, then on a
//! round-trip variant of it where every `sdy.sharding = #sdy.sharding<...>` attribute
//! becomes `mhlo.frontend_attributes = {xla.sdy.sharding = "..."}` with an
//! `mhlo.sharding` string beside it (as XLA exports carry them), and the median time of
//! a hover inside one of those strings.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use sdy_analysis::ide::strings::{self, Scope};
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 9usize;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            f => file = Some(f.to_string()),
        }
    }
    let Some(file) = file else {
        eprintln!("usage: bench_strings FILE [--runs N]");
        std::process::exit(2);
    };
    let text = if file.ends_with(".gz") {
        let out = Command::new("zcat").arg(&file).output().expect("zcat");
        String::from_utf8(out.stdout).expect("UTF-8")
    } else {
        std::fs::read_to_string(&file).expect("read")
    };
    println!("{file}: {} bytes, {} lines", text.len(), text.lines().count());
    measure("as is", &text, runs);
    let variant = round_trip(&text);
    measure("round-trip strings", &variant, runs);
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn measure(label: &str, text: &str, runs: usize) {
    let chunk = &sdy_analysis::parse_chunks(text, false)[0];
    let model = sdy_analysis::model::Model::build(chunk);
    let mut times = Vec::new();
    let mut found = Vec::new();
    for _ in 0..=runs {
        let t = Instant::now();
        found = strings::diagnostics(&model, text, chunk);
        times.push(t.elapsed());
    }
    times.remove(0);
    let count = strings::sites::all(&model, text, None).len();
    println!(
        "{label}: {count} strings, {} diagnostics, in-string diagnostics median {:.2} ms",
        found.len(),
        median(times)
    );
    let Some(at) = text.find("xla.sdy.sharding = \"#sdy.sharding<@") else { return };
    let offset = (at + "xla.sdy.sharding = \"#sdy.sharding<@".len()) as u32 + 1;
    let index = sdy_analysis::query::Index::new(&model);
    let scope = Scope::new(&model, text, 0, &chunk.top);
    let mut times = Vec::new();
    for _ in 0..=runs * 10 {
        let t = Instant::now();
        let op = index.op_at(&model, offset);
        let h = strings::hover(&scope, op, offset);
        times.push(t.elapsed());
        assert!(h.is_some());
    }
    times.remove(0);
    println!("{label}: hover inside a string median {:.3} ms", median(times));
}

/// `sdy.sharding = #sdy.sharding<BODY>` → `mhlo.frontend_attributes = {xla.sdy.sharding =
/// "#sdy.sharding<BODY>"}, mhlo.sharding = "{replicated}"` (quotes as `\22`).
fn round_trip(text: &str) -> String {
    const KEY: &str = "sdy.sharding = #sdy.sharding<";
    let mut out = String::with_capacity(text.len() * 2);
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        out.push_str(&rest[..at]);
        let body_start = at + KEY.len() - 1;
        let mut depth = 0;
        let mut end = body_start;
        for (i, c) in rest[body_start..].char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        end = body_start + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let body = rest[body_start..end].replace('"', "\\22");
        out.push_str(&format!(
            "mhlo.frontend_attributes = {{xla.sdy.sharding = \"#sdy.sharding{body}\"}}, \
             mhlo.sharding = \"{{replicated}}\""
        ));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
