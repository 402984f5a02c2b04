//! The differential test against the real Shardy (`tests/differential/run.py`), opt-in:
//!
//! ```text
//! cargo test -p sdy-tests --test differential -- --ignored
//! ```
//!
//! It needs python3 and the oracle venv (`../shared/oracle/setup.sh`, at
//! `$SDY_ORACLE_VENV` or `~/.cache/sdy-oracle-venv`) and skips when either is missing.
//! 600 generated modules with a fault and 600 valid ones (seed 1, or `SDY_DIFF_SEED`,
//! `SDY_DIFF_COUNT`): the first error must be on the oracle's line for ≥ 99% of the
//! invalid ones, with the same message for ≥ 95%, and valid modules get no error.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
#[ignore = "needs the oracle venv; run with --ignored"]
fn differential_against_the_real_shardy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let venv = std::env::var_os("SDY_ORACLE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sdy-oracle-venv")
    });
    if !venv.join("bin/python").exists() {
        eprintln!("skipped: no oracle venv at {}", venv.display());
        return;
    }
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3");
        return;
    }
    let bin = sdy_tests::sdy_lsp();
    let seed = std::env::var("SDY_DIFF_SEED").unwrap_or_else(|_| "1".into());
    let count = std::env::var("SDY_DIFF_COUNT").unwrap_or_else(|_| "600".into());
    let out = Command::new("python3")
        .arg(root.join("tests/differential/run.py"))
        .args(["--count", &count, "--seed", &seed, "--bin"])
        .arg(&bin)
        .arg("--venv")
        .arg(&venv)
        .output()
        .expect("python3 runs");
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the differential test failed:\n{report}");
}
