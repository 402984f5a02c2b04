//! The conformance ratchet: runs Shardy's lit tests (../shared/conformance and
//! ../shared/conformance-passes, when present) through `sdy-lsp opt` with the shared harness, and fails if a case listed in
//! `tests/conformance-baseline.txt` no longer passes. `UPDATE_BASELINE=1` rewrites the
//! baseline with every passing case (a case that passed must keep passing).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn have_filecheck() -> bool {
    ["FileCheck", "FileCheck-22", "FileCheck-21", "FileCheck-20", "FileCheck-19"]
        .iter()
        .any(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        || std::env::var_os("FILECHECK").is_some()
}

#[test]
fn conformance_ratchet() {
    let root = root();
    let shared = root.join("../shared");
    let harness = shared.join("tools/conformance.py");
    if !harness.exists() || !have_filecheck() {
        eprintln!("skipping: ../shared/conformance or FileCheck not available");
        return;
    }
    let out = std::env::temp_dir().join(format!("sdy-conformance-{}.json", std::process::id()));
    let bin = env!("CARGO_BIN_EXE_sdy-lsp");
    let status = Command::new("python3")
        .arg(&harness)
        .arg("--bin")
        .arg(format!("{bin} opt"))
        .arg(shared.join("conformance"))
        .args([shared.join("conformance-passes")].iter().filter(|p| p.exists()))
        .arg("--json")
        .arg(&out)
        .arg("--jobs")
        .arg("2")
        .status()
        .expect("python3 runs");
    assert!(status.success(), "conformance harness failed to run");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    let mut passing = BTreeSet::new();
    for file in json["files"].as_array().unwrap() {
        for case in file["cases"].as_array().unwrap() {
            if case["status"] == "pass" {
                passing.insert(case["id"].as_str().unwrap().to_string());
            }
        }
    }
    let baseline_path = root.join("tests/conformance-baseline.txt");
    if std::env::var_os("UPDATE_BASELINE").is_some() {
        let mut text = String::from(
            "# Conformance cases that pass; the ratchet test fails if one stops passing.\n\
             # Regenerate with: UPDATE_BASELINE=1 cargo test -p sdy-lsp --test conformance_ratchet\n",
        );
        for id in &passing {
            text.push_str(id);
            text.push('\n');
        }
        std::fs::write(&baseline_path, text).unwrap();
        return;
    }
    let baseline = std::fs::read_to_string(&baseline_path).unwrap_or_default();
    let regressed: Vec<&str> = baseline
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|id| !passing.contains(*id))
        .collect();
    let total = json["totals"]["total"].as_u64().unwrap_or(0);
    eprintln!("conformance: {} of {} cases pass", passing.len(), total);
    assert!(regressed.is_empty(), "cases that passed before now fail:\n{}", regressed.join("\n"));
}
