//! What the benchmarks share: reading a corpus file, timing (wall and thread CPU), and
//! timing the real Shardy on the same text.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Median wall and thread CPU time of Shardy's `PassManager.run` of `pipeline` (the
/// textual pipeline, `builtin.module(...)`; a fresh parse per run, untimed), with
/// MLIR's verifier after each pass on or off.
pub fn shardy_pass(
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

pub fn read(path: &str) -> String {
    if path.ends_with(".gz") {
        let out = Command::new("zcat").arg(path).output().unwrap_or_else(|e| panic!("zcat: {e}"));
        assert!(out.status.success(), "zcat {path} failed");
        String::from_utf8(out.stdout).expect("UTF-8")
    } else {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}

/// Wall time and thread CPU time of `f`.
pub fn time<T>(f: impl FnOnce() -> T) -> (Duration, Duration) {
    let cpu = sdy_lsp::cpu::thread().unwrap_or_default();
    let start = Instant::now();
    std::hint::black_box(f());
    let wall = start.elapsed();
    (wall, sdy_lsp::cpu::thread().unwrap_or_default().saturating_sub(cpu))
}

pub fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

pub fn min(v: &[Duration]) -> Duration {
    v.iter().copied().min().unwrap_or_default()
}
