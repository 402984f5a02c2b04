//! `sdy-lsp opt` as a process, on `tests/fixtures/opt/NAME.mlir` (first line
//! `// ARGS: FLAG...`): stdout, then stderr after a `// ---- stderr` line, compared with
//! `NAME.out`. The expectations are the real Shardy's output
//! (`../shared/oracle/oracle_opt.py NAME.mlir FLAG...`), byte for byte;
//! `UPDATE_EXPECT=1` rewrites them.

use std::path::Path;
use std::process::Command;

#[test]
fn opt_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/opt");
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no fixtures in {}", dir.display());
    for input in inputs {
        let text = std::fs::read_to_string(&input).unwrap();
        let args: Vec<&str> = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// ARGS:"))
            .unwrap_or_else(|| panic!("{}: no `// ARGS:` line", input.display()))
            .split_whitespace()
            .collect();
        // The file by its bare name, as the expectations (and Shardy's tools) print it.
        let name = input.file_name().unwrap().to_str().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_sdy-lsp"))
            .current_dir(&dir)
            .arg("opt")
            .arg(name)
            .args(&args)
            .output()
            .unwrap();
        let got = format!(
            "{}// ---- stderr\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        expect_test::expect_file![input.with_extension("out")].assert_eq(&got);
    }
}
