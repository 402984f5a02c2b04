//! The server's output over stdio, for the whole-process tests.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;

/// Starts the real server with `envs` (stderr discarded); a thread reads its output
/// frame by frame ([`read_frame`]) until the output ends or is malformed.
pub fn spawn(envs: &[(&str, &str)]) -> (Child, ChildStdin, mpsc::Receiver<Result<Value, String>>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sdy-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .envs(envs.iter().copied())
        .spawn()
        .expect("cannot start sdy-lsp");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, messages) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let m = read_frame(&mut r);
            let end = m.is_err();
            if tx.send(m).is_err() || end {
                return;
            }
        }
    });
    (child, stdin, messages)
}

/// One message of the server's output, which must be framed exactly as the server
/// frames it (`Content-Length: N\r\n\r\n` and N bytes of JSON).
pub fn read_frame(r: &mut impl BufRead) -> Result<Value, String> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("end of output".into());
        }
        if line == "\r\n" {
            break;
        }
        let v = line.strip_prefix("Content-Length: ").ok_or(format!("header {line:?}"))?;
        len = Some(v.trim_end().parse::<usize>().map_err(|e| e.to_string())?);
    }
    let mut body = vec![0; len.ok_or("no Content-Length")?];
    r.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body).map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&body)))
}
