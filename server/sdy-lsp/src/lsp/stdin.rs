//! The server's input: stdin read by a thread of its own, checked message by message
//! before tower-lsp sees any of it.
//!
//! tower-lsp 0.20 ends the session at the first message it cannot frame or decode. Here
//! `framing.rs` frames the input (never giving up on it), `validate.rs` decides what
//! tower-lsp may see, and everything else is answered through [`super::gate`] (an
//! [`Answer`] message) or dropped, with a line on stderr: one bad byte costs one message,
//! not the session. Messages that pass go on in order, unchanged, except a big
//! `didOpen`, whose text `aside.rs` takes out on the way.

use super::aside;
use super::framing::{Frame, Framer};
use super::gate::Answer;
use super::validate::{self, Verdict};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;
use tower_lsp::jsonrpc::{ErrorCode, Id};

/// Stdin for tower-lsp, read by a thread of its own (see the module comment).
pub struct Input {
    rx: mpsc::Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Input {
    pub fn stdin() -> Input {
        Input::new(std::io::stdin())
    }

    /// Input read from `r` (tests use other readers).
    pub fn new(r: impl std::io::Read + Send + 'static) -> Input {
        let (tx, rx) = mpsc::channel(8);
        let spawned = std::thread::Builder::new().name("sdy-stdin".into()).spawn(move || {
            let mut framer = Framer::new(r);
            while let Some(frame) = framer.next_frame() {
                for piece in accept(frame) {
                    if tx.blocking_send(piece).is_err() {
                        return;
                    }
                }
            }
        });
        if let Err(e) = spawned {
            eprintln!("sdy-lsp: cannot start the stdin thread: {e}");
        }
        Input { rx, buf: Vec::new(), at: 0 }
    }
}

impl AsyncRead for Input {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        while self.at == self.buf.len() {
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some(m)) => (self.buf, self.at) = (m, 0),
                Poll::Ready(None) => return Poll::Ready(Ok(())), // end of input
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = out.remaining().min(self.buf.len() - self.at);
        let at = self.at;
        out.put_slice(&self.buf[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

/// What to pass on to tower-lsp for a frame: a header and a body, an [`Answer`], or
/// nothing.
fn accept(frame: Frame) -> Vec<Vec<u8>> {
    let mut body = match frame {
        Frame::Body(body) => body,
        Frame::Bad(why) => {
            eprintln!("sdy-lsp: unreadable input: {why}");
            let message = format!("Parse error: {why}");
            return vec![
                Answer { id: Id::Null, code: ErrorCode::ParseError.code(), message }.framed()
            ];
        }
    };
    let env = match validate::envelope(&mut body) {
        Ok(env) => env,
        Err(v) => return refuse(v),
    };
    if let Some((small, n, text)) = aside::split_off(&mut body, &env) {
        return match validate::decodes(&small, &env) {
            Verdict::Pass => {
                aside::keep(n, text);
                framed(small)
            }
            v => refuse(v),
        };
    }
    match validate::decodes(&body, &env) {
        Verdict::Pass => framed(body),
        v => refuse(v),
    }
}

fn framed(body: Vec<u8>) -> Vec<Vec<u8>> {
    vec![format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes(), body]
}

fn refuse(v: Verdict) -> Vec<Vec<u8>> {
    match v {
        Verdict::Pass => Vec::new(),
        Verdict::Answer { id, code, message } => {
            eprintln!("sdy-lsp: refused a message: {message}");
            vec![Answer { id, code: code.code(), message }.framed()]
        }
        Verdict::Drop(why) => {
            eprintln!("sdy-lsp: dropped a message: {why}");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    /// What is passed on for each frame of `input`.
    fn pass(input: Vec<u8>) -> Vec<Vec<u8>> {
        let mut framer = Framer::new(std::io::Cursor::new(input));
        std::iter::from_fn(|| framer.next_frame()).map(|f| accept(f).concat()).collect()
    }

    fn did_open(text: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": "file:///a.mlir", "languageId": "mlir",
                             "version": 1, "text": text}}})
    }

    fn body_of(m: &[u8]) -> Value {
        let at = m.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let len: usize = std::str::from_utf8(&m[16..at - 4]).unwrap().trim().parse().unwrap();
        assert_eq!(len, m.len() - at);
        serde_json::from_slice(&m[at..]).unwrap()
    }

    /// Tests that count the texts set aside run one at a time.
    static ASIDE_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The text set aside for a message passed on, checking that the message is `sent`
    /// with the server's method and the text's number.
    fn taken(out: &[u8], sent: &Value) -> String {
        let mut got = body_of(out);
        assert_eq!(got["method"], aside::OPEN);
        let n = got["params"]["textDocument"]["text"].as_u64().unwrap();
        let text = aside::take(n).expect("set aside");
        assert_eq!(aside::take(n), None, "taken once");
        got["method"] = sent["method"].clone();
        got["params"]["textDocument"]["text"] = sent["params"]["textDocument"]["text"].clone();
        assert_eq!(&got, sent);
        text
    }

    /// Every escape JSON has, characters of every UTF-8 length, a big text: the text
    /// set aside is the one sent, the message otherwise the same.
    #[test]
    fn a_big_did_open_sets_its_text_aside() {
        let _lock = ASIDE_TESTS.lock();
        let piece = "a \"q\" \\ / \u{8} \u{c}\n\r\t \u{1} é € 😀 \u{7f}\n";
        let text = piece.repeat(aside::MIN_BODY / piece.len() + 1);
        for ascii in [false, true] {
            let msg = did_open(&text);
            let body = if ascii {
                // Python's default: non-ASCII as \u escapes (surrogate pairs included).
                msg.to_string().chars().fold(String::new(), |mut s, c| {
                    if c.is_ascii() {
                        s.push(c)
                    } else {
                        let mut u = [0; 2];
                        for unit in c.encode_utf16(&mut u) {
                            s.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    s
                })
            } else {
                msg.to_string()
            };
            let out = pass(frame(&body));
            assert_eq!(out.len(), 1);
            assert_eq!(taken(&out[0], &msg), text);
        }
        // Lone surrogates: replacement characters, as long in UTF-16.
        let body = did_open(&text).to_string().replace("😀", "\\ud83d").replace("€", "\\udc00");
        let out = pass(frame(&body));
        let expected = text.replace(['😀', '€'], "\u{fffd}");
        assert_eq!(taken(&out[0], &did_open(&expected)), expected);
        assert_eq!(aside::held(), 0);
    }

    /// A text is set aside only if the rest of its message will reach the gate.
    #[test]
    fn a_refused_did_open_keeps_nothing() {
        let _lock = ASIDE_TESTS.lock();
        let text = "x".repeat(aside::MIN_BODY);
        let mut bad = did_open(&text);
        bad["params"]["n"] = json!(1);
        let body = bad.to_string().replace("\"n\":1", "\"n\":1e999");
        assert_eq!(pass(frame(&body)), [Vec::<u8>::new()]);
        assert_eq!(aside::held(), 0);
    }

    #[test]
    fn other_messages_pass_unchanged() {
        let big = "x".repeat(aside::MIN_BODY);
        let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": "file:///a.mlir", "version": 2},
            "contentChanges": [{"text": big}]}})
        .to_string();
        let small_open = did_open("module {}").to_string();
        let with_id = json!({"jsonrpc": "2.0", "id": 1, "method": "textDocument/didOpen",
                             "params": {"textDocument": {"text": big}}})
        .to_string();
        let response = r#"{"jsonrpc":"2.0","id":7,"result":null}"#;
        for body in [&change, &small_open, &with_id, response] {
            assert_eq!(pass(frame(body)), [frame(body)]);
        }
    }

    /// Whatever tower-lsp would choke on is answered in its place, or dropped.
    #[test]
    fn bad_messages_are_answered_or_dropped() {
        let answer = |id: Value, code: i64, message: &str| {
            let params = json!({"id": id, "code": code, "message": message});
            json!({"jsonrpc": "2.0", "method": super::super::gate::ANSWER, "params": params})
        };
        let mut input = b"garbage\r\n\r\n".to_vec();
        input.extend(frame("[]"));
        input.extend(frame(r#"{"jsonrpc":"1.0","id":"a","method":"x"}"#));
        // Deeper than serde_json's recursion limit: JSON, but tower-lsp cannot decode it.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        input.extend(frame(&format!(r#"{{"jsonrpc":"2.0","method":"x","params":{deep}}}"#)));
        let out = pass(input);
        assert_eq!(out.len(), 4);
        let expected = [
            answer(json!(null), -32700, "Parse error: expected a header field or Content-Length"),
            answer(json!(null), -32600, "Invalid request: batches are not supported"),
            answer(json!("a"), -32600, "Invalid request: jsonrpc must be \"2.0\""),
        ];
        for (got, want) in out.iter().zip(&expected) {
            assert_eq!(&body_of(got), want);
        }
        assert!(out[3].is_empty());
    }
}
