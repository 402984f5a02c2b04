//! Differential propagation test against real Shardy (opt-in: set `SDY_DIFFERENTIAL=1`;
//! needs the oracle venv, `~/.cache/sdy-oracle-venv` or `$SDY_ORACLE_VENV`, and
//! `../shared/oracle`). Random programs from `tests/differential/propagation/gen.py` go
//! through every propagation pass in both tools; the printed modules must match.
//! `SDY_DIFFERENTIAL_COUNT` (default 50) and `SDY_DIFFERENTIAL_SEED` (default 1) pick the
//! programs.

use sdy_tests::sdy_lsp;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn differential_against_shardy() {
    if std::env::var_os("SDY_DIFFERENTIAL").is_none() {
        eprintln!("skipping: set SDY_DIFFERENTIAL=1 to compare with real Shardy");
        return;
    }
    let venv = std::env::var_os("SDY_ORACLE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sdy-oracle-venv")
    });
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let oracle = root.join("../shared/oracle/oracle_opt.py");
    if !venv.exists() || !oracle.exists() {
        eprintln!("skipping: no oracle venv or ../shared/oracle");
        return;
    }
    let count = std::env::var("SDY_DIFFERENTIAL_COUNT").unwrap_or_else(|_| "50".into());
    let seed = std::env::var("SDY_DIFFERENTIAL_SEED").unwrap_or_else(|_| "1".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("differential/propagation/run.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("--bin")
        .arg(sdy_lsp())
        .args(["--count", &count, "--seed", &seed, "--show", "3"])
        .env("SDY_ORACLE_OPT", &oracle)
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    let overall = text.lines().find(|l| l.starts_with("overall:")).expect("a summary line");
    // "overall: X/Y exact (Z%)"
    let frac = overall.split_whitespace().nth(1).unwrap();
    let (same, total) = frac.split_once('/').unwrap();
    let (same, total): (f64, f64) = (same.parse().unwrap(), total.parse().unwrap());
    assert!(total > 0.0, "the oracle accepted no program");
    assert!(same / total >= 0.98, "match rate {same}/{total} below 98%");
}
