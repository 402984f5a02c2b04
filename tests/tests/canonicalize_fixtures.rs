//! `-canonicalize` on data-driven fixtures: every `tests/fixtures/canonicalize/NAME.mlir`
//! starts with `// PASSES: FLAG...`; each `// -----` chunk is verified and goes through
//! those passes in the analysis core (like `sdy-lsp opt -split-input-file FLAG...`), and
//! the printed modules are compared with `NAME.out`. The expectations were checked
//! against real Shardy (`../shared/oracle/oracle_opt.py`), except where a fixture says
//! otherwise. `UPDATE_EXPECT=1 cargo test -p sdy-tests --test canonicalize_fixtures`
//! rewrites them.
//!
//! Also: the canonicalizer never panics on any chunk of the conformance corpus (verified
//! or not), and an opt-in differential test against real Shardy on random programs
//! (`SDY_DIFFERENTIAL=1`, see `tests/differential/canonicalize/gen.py`).

use sdy_analysis::canonicalize::{canonicalize, driver::Config};
use sdy_analysis::diag::Severity;
use sdy_analysis::ir::build_module;
use sdy_analysis::passes::{parse_pass_flag, Pipeline, Session};
use sdy_analysis::print::print_module;
use sdy_tests::{fixtures, mlir_files};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `flags` on every chunk of `text` and prints the results like `sdy_opt`
/// (diagnostics as `LEVEL: MESSAGE` lines after the chunk's output).
fn run_passes(text: &str, flags: &[String]) -> String {
    let mut session = Session::new(false);
    let mut pipeline = Pipeline::new();
    for f in flags {
        let spec = parse_pass_flag(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        pipeline.add(&spec).unwrap();
    }
    let mut outs = Vec::new();
    for chunk in sdy_analysis::parse_chunks(text, true) {
        let analysis = sdy_analysis::analyze_chunk(text, &chunk);
        let diags = sdy_analysis::verify::mlir_view(&analysis.diagnostics, &analysis.model);
        let mut out = String::new();
        for d in diags.iter().filter(|d| d.severity == Severity::Error) {
            out.push_str(&format!("verifier: {}\n", d.message));
        }
        if out.is_empty() {
            let run = pipeline.run(text, &chunk, &analysis.model, &mut session);
            if !run.failed {
                out = print_module(&run.module);
            }
            for d in run.diagnostics {
                out.push_str(&format!("{}: {}\n", d.severity.as_str(), d.message));
            }
        }
        outs.push(out);
    }
    outs.join("// -----\n")
}

/// The flags of a fixture's `// PASSES:` line (one flag may hold spaces: `-p=a=1 b=2`
/// is written `-p=a=1 b=2` and split only before a new `-`).
fn flags_of(input: &Path, text: &str) -> Vec<String> {
    let first = text.lines().next().unwrap_or("");
    let line = first
        .strip_prefix("// PASSES:")
        .unwrap_or_else(|| panic!("{}: no `// PASSES:` line", input.display()));
    let mut flags: Vec<String> = Vec::new();
    for word in line.split_whitespace() {
        match flags.last_mut() {
            Some(last) if !word.starts_with('-') => {
                last.push(' ');
                last.push_str(word);
            }
            _ => flags.push(word.to_string()),
        }
    }
    flags
}

#[test]
fn canonicalize_fixtures() {
    let inputs = mlir_files(&fixtures("canonicalize"));
    assert!(inputs.len() >= 5, "fixtures missing in {}", fixtures("canonicalize").display());
    for input in inputs {
        let text = std::fs::read_to_string(&input).unwrap();
        let flags = flags_of(&input, &text);
        let out = run_passes(&text, &flags);
        assert!(
            !out.contains("verifier:"),
            "{}: a fixture does not verify:\n{out}",
            input.display()
        );
        expect_test::expect_file![input.with_extension("out")].assert_eq(&out);
    }
}

/// Every chunk of the conformance corpus that parses goes through the canonicalizer,
/// verified or not, with both traversal orders: no panic, and a second run changes
/// nothing (the result is a fixed point).
#[test]
fn never_panics_and_converges_on_the_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance");
    let Ok(folders) = std::fs::read_dir(&dir) else { return };
    let mut files: Vec<PathBuf> = Vec::new();
    for f in folders.flatten() {
        if let Ok(entries) = std::fs::read_dir(f.path()) {
            files.extend(entries.flatten().map(|e| e.path()));
        }
    }
    files.sort();
    let mut chunks = 0;
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "mlir")) {
        let text = std::fs::read_to_string(path).unwrap();
        for chunk in sdy_analysis::parse_chunks(&text, true) {
            let syntax = sdy_analysis::syntax_diags::syntax_diagnostics(&chunk);
            if !sdy_analysis::syntax_diags::first_parse_failure(&syntax).is_empty() {
                continue;
            }
            for top_down in [true, false] {
                let cfg = Config { top_down, ..Config::default() };
                let mut m = build_module(&text, &chunk);
                let first = canonicalize(&mut m, &cfg);
                let once = print_module(&m);
                if first.converged {
                    canonicalize(&mut m, &cfg);
                    assert_eq!(print_module(&m), once, "{}: not a fixed point", path.display());
                }
            }
            chunks += 1;
        }
    }
    assert!(chunks > 100, "only {chunks} chunks");
}

/// Broken IR (lines of the canonicalization fixtures and lit tests deleted, duplicated or
/// swapped, so counts, uses and attributes stop matching) never makes the canonicalizer
/// panic, with any driver option.
#[test]
fn never_panics_on_broken_ir() {
    let mut texts: Vec<String> = Vec::new();
    for dir in [
        fixtures("canonicalize"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/ir"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "mlir")) {
            texts.push(std::fs::read_to_string(p).unwrap());
        }
    }
    let configs = [
        Config::default(),
        Config { top_down: false, max_iterations: 2, ..Config::default() },
        Config { max_num_rewrites: 1, region_simplify: false, ..Config::default() },
    ];
    // xorshift64*: deterministic, so a failure names its seed.
    let mut state: u64 = 0x2545F4914F6CDD1D;
    let mut next = move |n: usize| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545F4914F6CDD1D) >> 33) as usize % n.max(1)
    };
    let mut runs = 0;
    for text in &texts {
        for chunk_text in text.split("// -----\n") {
            let lines: Vec<&str> = chunk_text.lines().collect();
            for round in 0..8 {
                let mut l = lines.clone();
                for _ in 0..=round % 3 {
                    let (i, j) = (next(l.len()), next(l.len()));
                    match next(3) {
                        0 if !l.is_empty() => {
                            l.remove(i);
                        }
                        1 if !l.is_empty() => l.insert(j, l[i]),
                        _ if i < l.len() && j < l.len() => l.swap(i, j),
                        _ => {}
                    }
                }
                let mutated = l.join("\n");
                for chunk in sdy_analysis::parse_chunks(&mutated, false) {
                    let syntax = sdy_analysis::syntax_diags::syntax_diagnostics(&chunk);
                    if !sdy_analysis::syntax_diags::first_parse_failure(&syntax).is_empty() {
                        continue;
                    }
                    let mut m = build_module(&mutated, &chunk);
                    canonicalize(&mut m, &configs[runs % configs.len()]);
                    let _ = print_module(&m);
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 200, "only {runs} broken modules parsed");
}

/// Random programs through `-canonicalize` in real Shardy and in `sdy-lsp opt`, with
/// default and with limiting options: every program the oracle accepts must print the
/// same. Opt-in: `SDY_DIFFERENTIAL=1` (needs the oracle venv and `../shared/oracle`);
/// `SDY_DIFFERENTIAL_COUNT` (default 200) and `SDY_DIFFERENTIAL_SEED` (default 1).
#[test]
fn differential_against_shardy() {
    if std::env::var_os("SDY_DIFFERENTIAL").is_none() {
        eprintln!("skipping: set SDY_DIFFERENTIAL=1 to compare with real Shardy");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let venv = std::env::var_os("SDY_ORACLE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sdy-oracle-venv")
    });
    let oracle = root.join("../shared/oracle/oracle_opt.py");
    if !venv.exists() || !oracle.exists() {
        eprintln!("skipping: no oracle venv or ../shared/oracle");
        return;
    }
    let bin = sdy_tests::sdy_lsp();
    let count = std::env::var("SDY_DIFFERENTIAL_COUNT").unwrap_or_else(|_| "200".into());
    let seed = std::env::var("SDY_DIFFERENTIAL_SEED").unwrap_or_else(|_| "1".into());
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("differential");
    let out = Command::new("python3")
        .arg(here.join("propagation/run.py"))
        .arg("--bin")
        .arg(&bin)
        .arg("--gen")
        .arg(here.join("canonicalize/gen.py"))
        .args(["--count", &count, "--seed", &seed, "--show", "3"])
        .args(["--pass=-canonicalize", "--pass=-canonicalize=max-num-rewrites=1 max-iterations=2"])
        .arg("--pass=-canonicalize=top-down=false")
        .env("SDY_ORACLE_OPT", &oracle)
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    let overall = text.lines().find(|l| l.starts_with("overall:")).expect("a summary line");
    // "overall: X/Y exact (Z%)"
    let frac = overall.split_whitespace().nth(1).unwrap();
    let (same, total) = frac.split_once('/').unwrap();
    let (same, total): (u64, u64) = (same.parse().unwrap(), total.parse().unwrap());
    assert!(total > 0, "the oracle accepted no program");
    assert_eq!(same, total, "programs printed differently from real Shardy");
}
