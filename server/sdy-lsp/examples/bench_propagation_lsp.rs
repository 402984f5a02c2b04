//! Propagation inside the language server, measured through its LSP interface
//! (in-process, the same service the binary runs on stdio).
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_propagation_lsp -- [FILE] [--runs N]
//!     [--strategy S] [--keystrokes N] [--rounds N]
//! ```
//!
//! FILE defaults to `../shared/corpus/tfm_10k.mlir` (`.mlir.gz` is decompressed first).
//! Prints:
//! 1. `sdy.propagate` on the opened file: the time from the command to its answer, and
//!    the server's own figure for the run (median and min over `--runs` runs, each
//!    after a one-character edit, so that the chunk is propagated again);
//! 2. `textDocument/inlayHint` for 100-line ranges spread over the file once results
//!    exist (p50, p95 of 50 requests);
//! 3. keystroke → diagnostics (didChange to the publishDiagnostics of that version)
//!    p50/p95 over `--rounds` rounds (default 3) of `--keystrokes` edits each with
//!    nothing else going on, then while a second copy of the file is propagated over and
//!    over (strategies alternating, so each run recomputes), and the ratio of the p95s
//!    (budget: ≤ 1.10).
//!
//! Also the runs' CPU time (the propagation thread's) and the load average, since wall
//! times on a shared machine say more about the machine than about the server.
//!
//! The figures depend on the machine's load; the propagation thread runs at a lower
//! priority than the analysis worker, which is what keeps typing fast.

/// The binary uses mimalloc; measure what it does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use futures::StreamExt;
use sdy_lsp::lsp::{self, Options};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Mutex};
use tower::{Service, ServiceExt};
use tower_lsp::jsonrpc::Request;
use tower_lsp::LspService;

const A: &str = "file:///bench/a.mlir";
const B: &str = "file:///bench/b.mlir";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5usize;
    let mut keystrokes = 40usize;
    let mut rounds = 3usize;
    let mut strategy = "pipeline".to_string();
    let mut file = format!("{}/../../../shared/corpus/tfm_10k.mlir", env!("CARGO_MANIFEST_DIR"));
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).unwrap_or(runs).max(1),
            "--keystrokes" => {
                keystrokes = it.next().and_then(|n| n.parse().ok()).unwrap_or(keystrokes).max(5)
            }
            "--strategy" => strategy = it.next().cloned().unwrap_or(strategy),
            "--rounds" => rounds = it.next().and_then(|n| n.parse().ok()).unwrap_or(rounds).max(1),
            _ => file = a.clone(),
        }
    }
    // As the server does.
    sdy_lsp::alloc::purge_freed_memory_at_once();
    let text = read(&file);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(bench(&file, text, runs, keystrokes, rounds, &strategy));
}

fn read(file: &str) -> String {
    if file.ends_with(".gz") {
        let out = std::process::Command::new("zcat").arg(file).output().expect("zcat");
        String::from_utf8(out.stdout).expect("UTF-8")
    } else {
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"))
    }
}

/// The server and the messages it sends.
struct Client {
    service: Mutex<LspService<lsp::Server>>,
    inbox: Mutex<mpsc::UnboundedReceiver<Value>>,
    next_id: std::sync::atomic::AtomicI64,
}

impl Client {
    fn start() -> Arc<Client> {
        let options = Options { debounce: Duration::from_millis(50), test_hooks: false };
        let (service, mut socket) = lsp::service(options);
        let (tx, inbox) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(req) = socket.next().await {
                if tx.send(serde_json::to_value(&req).unwrap()).is_err() {
                    break;
                }
            }
        });
        Arc::new(Client {
            service: Mutex::new(service),
            inbox: Mutex::new(inbox),
            next_id: Default::default(),
        })
    }

    async fn call(&self, req: Request) -> Option<Value> {
        let fut = {
            let mut s = self.service.lock().await;
            s.ready().await.expect("service").call(req)
        };
        let resp = fut.await.expect("service error")?;
        let v = serde_json::to_value(&resp).unwrap();
        if let Some(e) = v.get("error") {
            panic!("request failed: {e}");
        }
        Some(v["result"].clone())
    }

    async fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let req = Request::build(method.to_string()).id(id).params(params).finish();
        self.call(req).await.expect("a response")
    }

    async fn notify(&self, method: &str, params: Value) {
        self.call(Request::build(method.to_string()).params(params).finish()).await;
    }

    /// Waits for the diagnostics of `version` of `uri`; returns how many there are.
    async fn diagnostics(&self, uri: &str, version: i64) -> usize {
        let mut inbox = self.inbox.lock().await;
        loop {
            let m = tokio::time::timeout(Duration::from_secs(120), inbox.recv())
                .await
                .expect("no diagnostics within 120 s")
                .expect("server gone");
            let p = &m["params"];
            if m["method"] == "textDocument/publishDiagnostics"
                && p["uri"] == uri
                && p["version"] == version
            {
                return p["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }

    async fn open(&self, uri: &str, text: &str) {
        let doc = json!({"uri": uri, "languageId": "mlir", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": doc})).await;
        self.diagnostics(uri, 1).await;
    }

    /// Inserts (`insert`) or removes a space at the end of line `line`.
    async fn edit(&self, uri: &str, version: i64, line: u32, col: u32, insert: bool) {
        let (end, new) = if insert { (col, " ") } else { (col + 1, "") };
        let change = json!({
            "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": end}},
            "text": new
        });
        let params =
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]});
        self.notify("textDocument/didChange", params).await;
    }

    async fn propagate(&self, uri: &str, strategy: &str) -> Value {
        let args = json!([{"uri": uri, "strategy": strategy}]);
        self.request(
            "workspace/executeCommand",
            json!({"command": "sdy.propagate", "arguments": args}),
        )
        .await
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}

async fn bench(
    file: &str,
    text: String,
    runs: usize,
    keystrokes: usize,
    rounds: usize,
    strategy: &str,
) {
    let lines: Vec<&str> = text.lines().collect();
    println!(
        "{file}: {} lines, {} bytes; strategy {strategy}; load average {}",
        lines.len(),
        text.len(),
        loadavg()
    );
    let c = Client::start();
    c.request("initialize", json!({"capabilities": {}})).await;
    c.notify("initialized", json!({})).await;
    c.open(A, &text).await;
    // The edit point: the end of the first line (a `#loc` line or a comment), so that
    // edits do not change what propagates.
    let (edit_line, edit_col) = (0u32, lines[0].len() as u32);
    let mut version = 1i64;

    // 1. sdy.propagate, each run after an edit of the chunk.
    let mut wall = Vec::new();
    let mut server = Vec::new();
    let mut cpu = Vec::new();
    let first = c.propagate(A, strategy).await;
    // The run publishes the diagnostics again, with its own (reshards, warnings).
    let n = c.diagnostics(A, 1).await;
    println!("first run: {}; {n} diagnostics after it", first["message"].as_str().unwrap_or(""));
    for k in 0..runs {
        version += 1;
        c.edit(A, version, edit_line, edit_col, k % 2 == 0).await;
        c.diagnostics(A, version).await;
        let t = Instant::now();
        let answer = c.propagate(A, strategy).await;
        wall.push(ms(t.elapsed()));
        server.push(answer["ms"].as_f64().unwrap_or(f64::NAN));
        cpu.push(answer["cpu_ms"].as_f64().unwrap_or(f64::NAN));
        assert_eq!(answer["computed"], 1, "{answer}");
    }
    let (wmin, smin) = (
        wall.iter().cloned().fold(f64::MAX, f64::min),
        server.iter().cloned().fold(f64::MAX, f64::min),
    );
    let cmin = cpu.iter().cloned().fold(f64::MAX, f64::min);
    println!(
        "propagation in the server: command → answer median {:.1} ms (min {:.1}); the run itself median {:.1} ms (min {:.1}), cpu median {:.1} ms (min {:.1}); budget 200 ms",
        percentile(&mut wall, 0.5),
        wmin,
        percentile(&mut server, 0.5),
        smin,
        percentile(&mut cpu, 0.5),
        cmin
    );

    // 2. Inlay hints for 100-line ranges once results exist.
    let mut times = Vec::new();
    let mut count = 0usize;
    let cpu0 = process_cpu();
    for k in 0..50u32 {
        let start = (k as usize * lines.len() / 50) as u32;
        let params = json!({
            "textDocument": {"uri": A},
            "range": {"start": {"line": start, "character": 0}, "end": {"line": start + 100, "character": 0}}
        });
        let t = Instant::now();
        let h = c.request("textDocument/inlayHint", params).await;
        times.push(ms(t.elapsed()));
        count += h.as_array().map_or(0, Vec::len);
    }
    // The server is otherwise idle: the process's CPU time is the requests'.
    let cpu = process_cpu().zip(cpu0).map_or(f64::NAN, |(b, a)| ms(b.saturating_sub(a)) / 50.0);
    println!(
        "inlay hints, 100-line ranges: p50 {:.2} ms, p95 {:.2} ms, cpu {:.2} ms per request ({:.0} hints per range); budget 10 ms",
        percentile(&mut times.clone(), 0.5),
        percentile(&mut times, 0.95),
        cpu,
        count as f64 / 50.0
    );

    // 3. Keystroke → diagnostics, idle and while propagating.
    let type_some = |c: Arc<Client>, mut version: i64| async move {
        let mut lat = Vec::new();
        for k in 0..keystrokes {
            version += 1;
            let t = Instant::now();
            c.edit(A, version, edit_line, edit_col, k % 2 == 0).await;
            c.diagnostics(A, version).await;
            lat.push(ms(t.elapsed()));
            // A typing pace: the next key after the diagnostics and a short pause.
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        (lat, version)
    };
    c.open(B, &text).await;
    // Rounds of idle typing then typing during propagation, interleaved so that the
    // machine's load, which drifts, weighs on both alike.
    let (mut idle, mut busy, mut n) = (Vec::new(), Vec::new(), 0usize);
    for _ in 0..rounds {
        let (lat, v) = type_some(c.clone(), version).await;
        idle.extend(lat);
        version = v;
        let busy_flag = Arc::new(AtomicBool::new(true));
        let (flag, cb) = (busy_flag.clone(), c.clone());
        let strategies = ["pipeline", "user-priority", "op-priority", "aggressive", "basic"];
        let background = tokio::spawn(async move {
            let mut n = 0usize;
            while flag.load(Ordering::SeqCst) {
                cb.propagate(B, strategies[n % strategies.len()]).await;
                n += 1;
            }
            n
        });
        // Let the first background run start.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (lat, v) = type_some(c.clone(), version).await;
        busy.extend(lat);
        version = v;
        busy_flag.store(false, Ordering::SeqCst);
        n += background.await.unwrap_or(0);
    }
    let (i95, b95) = (percentile(&mut idle, 0.95), percentile(&mut busy, 0.95));
    println!(
        "keystroke → diagnostics ({rounds} rounds of {keystrokes} edits): idle p50 {:.1} ms p95 {:.1} ms; while propagating ({n} runs of a copy) p50 {:.1} ms p95 {:.1} ms; p95 ratio {:.2} (budget 1.10)",
        percentile(&mut idle, 0.5),
        i95,
        percentile(&mut busy, 0.5),
        b95,
        b95 / i95
    );
    println!("load average: {}", loadavg());
}

/// The CPU time of the whole process, user + system (Linux; `None` elsewhere).
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces): utime is the 14th field.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(Duration::from_millis(ticks * 10))
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
