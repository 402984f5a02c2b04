//! `sdy-lsp explain FILE:LINE:COL` prints exactly the hover a client without Markdown
//! gets at that position (and the Markdown with `--markdown`), inside strings too.
mod lsp_common;

use lsp_common::{fixture, pos16, TestServer};
use std::process::Command;

/// (fixture, needle, occurrence, bytes into it).
const PROBES: &[(&str, &str, usize, usize)] = &[
    ("nav.mlir", "@mesh,", 0, 2),
    ("nav.mlir", "{\"x\"}", 0, 2),
    ("nav.mlir", "%1 =", 0, 1),
    ("nav.mlir", "@mesh =", 0, 2),
    ("nav.mlir", "stablehlo.add", 0, 2),
    ("nav.mlir", "@helper(", 0, 3),
    ("strings.mlir", "@mesh, [{\\22x", 0, 8),
    ("strings.mlir", "{devices=[2,4]", 0, 3),
    ("strings.mlir", "\\22y\\22=4", 0, 4),
];

fn explain(path: &str, line: usize, col: usize, markdown: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sdy-lsp"));
    cmd.arg("explain");
    if markdown {
        cmd.arg("--markdown");
    }
    let out = cmd.arg(format!("{path}:{line}:{col}")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn cli_prints_the_hover() {
    let dir = format!("{}/tests/lsp_fixtures", env!("CARGO_MANIFEST_DIR"));
    let mut plain = TestServer::new();
    plain.initialize(serde_json::json!({})).await;
    let mut md = TestServer::start().await;
    let mut opened = String::new();
    for &(name, needle, nth, delta) in PROBES {
        let text = fixture(name);
        if opened != name {
            // One document at a time: reopen under the same URI.
            if !opened.is_empty() {
                let close = serde_json::json!({"textDocument": {"uri": lsp_common::URI}});
                plain.notify("textDocument/didClose", close.clone()).await;
                md.notify("textDocument/didClose", close).await;
            }
            plain.open_and_wait(&text).await;
            md.open_and_wait(&text).await;
            opened = name.to_string();
        }
        let at = lsp_common::find(&text, needle, nth) + delta;
        let (line16, col16) = pos16(&text, needle, nth, delta);
        // The CLI takes 1-based byte columns, as MLIR prints locations.
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let (line, col) = (line16 as usize + 1, at - line_start + 1);
        let path = format!("{dir}/{name}");
        let h = plain.hover(line16, col16).await.unwrap();
        assert_eq!(h["contents"]["kind"], "plaintext");
        let hover = h["contents"]["value"].as_str().unwrap();
        let cli = explain(&path, line, col, false);
        assert_eq!(cli.trim_end(), hover.trim_end(), "{name} {needle}");
        assert!(!cli.contains("**") && !cli.contains('`'), "{cli}");
        let h = md.hover(line16, col16).await.unwrap();
        assert_eq!(explain(&path, line, col, true), h["contents"]["value"].as_str().unwrap());
    }
}
