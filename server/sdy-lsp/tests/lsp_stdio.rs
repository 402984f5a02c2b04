//! Whole-process tests: the built `sdy-lsp` binary over stdio, driven by transcripts.
//!
//! A transcript (`tests/transcripts/NAME.lsp`) is a list of lines:
//!
//! * `# ...` and blank lines: comments;
//! * `args ARG...`: command-line arguments (before anything is sent; default none);
//! * `env KEY=VALUE`: an environment variable for the server (idem);
//! * `-> {json}`: a message to send (the `jsonrpc` member and the framing are added);
//! * `-> open URI FIXTURE`: `didOpen` of `tests/lsp_fixtures/FIXTURE`, version 1;
//! * `<- #ID` or `<- METHOD`: wait for the response to request `ID`, or for the next
//!   notification `METHOD` (others on the way are recorded too); `<- A, B`: wait for
//!   both, in any order (they are recorded in the order listed);
//! * `exit-within MS`: wait for the process to end, stdin still open.
//!
//! Everything the server sent is recorded, pretty-printed, and compared with
//! `tests/transcripts/NAME.expected` (`UPDATE_EXPECT=1` rewrites it).

mod lsp_common;

use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(30);

struct Process {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
}

impl Process {
    fn start(args: &[String], env: &[(String, String)]) -> Process {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sdy-lsp"));
        cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("cannot start sdy-lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Ok(m) = lsp_common::stdio::read_frame(&mut r) {
                if tx.send(m).is_err() {
                    return;
                }
            }
        });
        Process { child, stdin, messages }
    }

    fn send(&mut self, mut msg: Value) {
        msg["jsonrpc"] = json!("2.0");
        let body = serde_json::to_vec(&msg).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(&body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn next(&mut self) -> Value {
        self.messages.recv_timeout(TIMEOUT).expect("no message from the server")
    }
}

fn run_transcript(name: &str) {
    let dir = format!("{}/tests", env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(format!("{dir}/transcripts/{name}.lsp")).unwrap();
    let mut args = Vec::new();
    let mut env = Vec::new();
    let mut process: Option<Process> = None;
    let mut log = String::new();
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("args ") {
            args = rest.split_whitespace().map(String::from).collect();
            continue;
        }
        if let Some(rest) = line.strip_prefix("env ") {
            let (k, v) = rest.split_once('=').expect("env KEY=VALUE");
            env.push((k.to_string(), v.to_string()));
            continue;
        }
        let p = process.get_or_insert_with(|| Process::start(&args, &env));
        if let Some(rest) = line.strip_prefix("-> open ") {
            let (uri, file) = rest.split_once(' ').expect("open URI FIXTURE");
            let text = std::fs::read_to_string(format!("{dir}/lsp_fixtures/{file}")).unwrap();
            let doc = json!({"uri": uri, "languageId": "mlir", "version": 1, "text": text});
            p.send(json!({"method": "textDocument/didOpen", "params": {"textDocument": doc}}));
            log.push_str(&format!("-> didOpen {uri} ({file})\n"));
        } else if let Some(rest) = line.strip_prefix("-> ") {
            let msg: Value = serde_json::from_str(rest).unwrap_or_else(|e| panic!("{rest}: {e}"));
            let what = match (&msg["id"], &msg["method"]) {
                (Value::Null, m) => m.as_str().unwrap().to_string(),
                (id, m) => format!("#{id} {}", m.as_str().unwrap()),
            };
            p.send(msg);
            log.push_str(&format!("-> {what}\n"));
        } else if let Some(wants) = line.strip_prefix("<- ") {
            let wants: Vec<&str> = wants.split(',').map(str::trim).collect();
            let mut found: Vec<Option<Value>> = vec![None; wants.len()];
            while found.iter().any(Option::is_none) {
                let m = p.next();
                let slot = wants.iter().zip(&found).position(|(want, f)| {
                    f.is_none()
                        && match want.strip_prefix('#') {
                            Some(id) => {
                                m["id"] == id.parse::<i64>().unwrap() && m.get("method").is_none()
                            }
                            None => m["method"] == *want,
                        }
                });
                match slot {
                    Some(i) => found[i] = Some(m),
                    None => {
                        log.push_str(&format!("<- {}\n", serde_json::to_string_pretty(&m).unwrap()))
                    }
                }
            }
            for m in found.into_iter().flatten() {
                log.push_str(&format!("<- {}\n", serde_json::to_string_pretty(&m).unwrap()));
            }
        } else if let Some(ms) = line.strip_prefix("exit-within ") {
            let limit = Duration::from_millis(ms.parse().unwrap());
            let t0 = Instant::now();
            let status = loop {
                if let Some(status) = p.child.try_wait().unwrap() {
                    break status;
                }
                if t0.elapsed() > limit {
                    let _ = p.child.kill();
                    panic!("{name}: still running {ms} ms after exit (stdin open)");
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            log.push_str(&format!("exited within {ms} ms, stdin open: code {:?}\n", status.code()));
        } else {
            panic!("{name}: cannot read transcript line {line:?}");
        }
    }
    if let Some(mut p) = process {
        let _ = p.child.kill();
        let _ = p.child.wait();
    }
    expect_test::expect_file![format!("{dir}/transcripts/{name}.expected")].assert_eq(&log);
}

#[test]
fn basic_session() {
    run_transcript("basic");
}

#[test]
fn utf8_edits_and_diagnostics() {
    run_transcript("utf8_edits");
}

#[test]
fn panic_then_exit_without_shutdown() {
    run_transcript("panic");
}

impl Process {
    /// The next message `pred` accepts (others are skipped).
    fn wait(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let m = self.next();
            if pred(&m) {
                return m;
            }
        }
    }
}

/// A document over 64 KiB, with every kind of character JSON escapes or encodes: its
/// `didOpen` takes the stdin thread's way (the text set aside, unescaped in place).
fn big_text() -> String {
    let mut text = String::from("sdy.mesh @mesh = <[\"x\"=2]>\r\n");
    for i in 0..400 {
        text.push_str(&format!(
            "func.func @f{i}(%arg0: tensor<4xf32>)\t-> tensor<4xf32> attributes {{n = \"q\\\"é😀\\\\ {i}\"}} {{\r\n  %0 = stablehlo.add %arg0, %missing{i} : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}}\n"
        ));
    }
    assert!(text.len() > 1 << 16);
    text
}

/// Through stdio, a big document is the text the client sent, and gets the diagnostics
/// the in-process server (tower-lsp decoding the message) gives it.
#[tokio::test]
async fn a_big_open_is_read_as_sent() {
    let text = big_text();
    let mut s = lsp_common::TestServer::start().await;
    let expected = s.open_and_wait(&text).await;
    assert!(expected["diagnostics"].as_array().unwrap().len() >= 400, "{expected}");

    let hooks = [("SDY_LSP_TEST_HOOKS".to_string(), "1".to_string())];
    let mut p = Process::start(&[], &hooks);
    let caps = lsp_common::capabilities(&[]);
    p.send(json!({"id": 1, "method": "initialize", "params": {"capabilities": caps}}));
    p.wait(|m| m["id"] == 1);
    p.send(json!({"method": "initialized", "params": {}}));
    let doc = json!({"uri": lsp_common::URI, "languageId": "mlir", "version": 1, "text": text});
    p.send(json!({"method": "textDocument/didOpen", "params": {"textDocument": doc}}));
    let got = p.wait(|m| m["method"] == "textDocument/publishDiagnostics");
    assert_eq!(got["params"], expected);
    p.send(json!({"id": 2, "method": "sdy/testText", "params": {"uri": lsp_common::URI}}));
    let server_text = p.wait(|m| m["id"] == 2);
    assert!(server_text["result"] == text, "the server's text differs from the client's");
    p.send(json!({"id": 3, "method": "shutdown"}));
    p.wait(|m| m["id"] == 3);
    p.send(json!({"method": "exit"}));
    let _ = p.child.wait();
}
