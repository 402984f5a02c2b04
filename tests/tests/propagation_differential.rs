//! Differential propagation test against real Shardy (opt-in: set `SDY_DIFFERENTIAL=1`;
//! needs the oracle venv, `~/.cache/sdy-oracle-venv` or `$SDY_ORACLE_VENV`, and
//! `../shared/oracle`). Random programs from `tests/differential/propagation/gen.py` go
//! through every propagation pass in both tools; the printed modules must match.
//! `SDY_DIFFERENTIAL_COUNT` (default 50) and `SDY_DIFFERENTIAL_SEED` (default 1) pick the
//! programs. Further tests do the same for the export path and the rule registry's
//! generator.

use sdy_tests::sdy_lsp;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `run.py` with `args` when the oracle is there (`None` otherwise) and returns
/// its summary line.
fn run_differential(args: &[&str]) -> Option<String> {
    if std::env::var_os("SDY_DIFFERENTIAL").is_none() {
        eprintln!("skipping: set SDY_DIFFERENTIAL=1 to compare with real Shardy");
        return None;
    }
    let venv = std::env::var_os("SDY_ORACLE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sdy-oracle-venv")
    });
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let oracle = root.join("../shared/oracle/oracle_opt.py");
    if !venv.exists() || !oracle.exists() {
        eprintln!("skipping: no oracle venv or ../shared/oracle");
        return None;
    }
    let count = std::env::var("SDY_DIFFERENTIAL_COUNT").unwrap_or_else(|_| "50".into());
    let seed = std::env::var("SDY_DIFFERENTIAL_SEED").unwrap_or_else(|_| "1".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("differential/propagation/run.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("--bin")
        .arg(sdy_lsp())
        .args(["--count", &count, "--seed", &seed, "--show", "3"])
        .args(args)
        .env("SDY_ORACLE_OPT", &oracle)
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    Some(text.lines().find(|l| l.starts_with("overall:")).expect("a summary line").to_string())
}

/// The `n`th `X/Y` of a summary line, as a rate (`Y` must be positive).
fn rate(summary: &str, n: usize) -> f64 {
    let frac = summary.split_whitespace().filter(|w| w.contains('/')).nth(n).unwrap();
    let (same, total) = frac.split_once('/').unwrap();
    let (same, total): (f64, f64) = (same.parse().unwrap(), total.parse().unwrap());
    assert!(total > 0.0, "the oracle accepted nothing: {summary}");
    same / total
}

#[test]
fn differential_against_shardy() {
    // "overall: X/Y programs exact (Z%), ..."
    let Some(summary) = run_differential(&[]) else { return };
    assert!(rate(&summary, 0) >= 0.98, "match rate below 98%: {summary}");
}

/// The export path (`run.py --export`): the same programs propagated, resharded
/// explicitly and turned into collectives in both tools; printed modules and each
/// program's stderr must match.
#[test]
fn export_against_shardy() {
    // "overall: X/Y programs exact (Z%), ..."
    let Some(summary) = run_differential(&["--export"]) else { return };
    assert!(rate(&summary, 0) >= 0.99, "export match rate below 99%: {summary}");
}

/// Random ops of every kind the registry knows (`differential/rules/gen.py`): Shardy's
/// rules, with and without conservative mode, and shardings through each strategy.
#[test]
fn rule_registry_against_shardy() {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("differential/rules/gen.py");
    let gen = gen.to_str().unwrap();
    let rules = [
        "--gen",
        gen,
        "--what",
        "rules",
        "--pass=-sdy-populate-op-sharding-rules",
        "--pass=-sdy-populate-op-sharding-rules=conservative-propagation=true",
    ];
    // "overall: X/Y programs exact (Z%), A/B rules identical (C%)"
    let Some(summary) = run_differential(&rules) else { return };
    assert_eq!(rate(&summary, 1), 1.0, "rules differ: {summary}");
    let Some(summary) = run_differential(&["--gen", gen, "--pretty"]) else { return };
    assert_eq!(rate(&summary, 1), 1.0, "shardings differ: {summary}");
}
