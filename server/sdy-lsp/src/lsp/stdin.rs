//! The server's input: stdin as tower-lsp reads it, except that the text of a big
//! `textDocument/didOpen` is taken out on the way.
//!
//! tower-lsp would decode a 10 MB `didOpen` through a read buffer that keeps its size,
//! serde_json's unescaping buffer, an untagged-enum `Content` copy and a `Value` copy: on
//! a 10 MB file that was 64 MB of resident memory and ~90 ms before the handler ran. Here
//! the message is read into one exactly sized buffer, its `text` is unescaped in place
//! (the buffer becomes the document's text) and set aside, and tower-lsp gets the message
//! with a marker in place of the text, which [`take`] trades back in the handler.
//! Messages are passed on in order and otherwise unchanged. Texts are set aside only
//! once `initialize` went through (tower-lsp drops a `didOpen` before it, whose text would
//! then stay), and a text not taken by the time [`KEEP`] more were set aside (a `didOpen`
//! tower-lsp rejected) is dropped.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// Messages from this size on have their text set aside.
const MIN_BODY: usize = 1 << 16;

/// How many texts set aside are kept: far more than can be in flight between this
/// thread and the handlers (the channel holds 8 messages).
const KEEP: u64 = 64;

/// Starts the marker that replaces a text set aside; its number follows.
const MARKER: &str = "\u{0}sdy-lsp: text set aside #";

/// Texts set aside, by number.
static ASIDE: Mutex<Option<HashMap<u64, String>>> = Mutex::new(None);
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The text a `didOpen` handler should use: the one set aside if `text` is its marker.
pub fn take(text: String) -> String {
    let Some(n) = text.strip_prefix(MARKER).and_then(|n| n.parse::<u64>().ok()) else {
        return text;
    };
    let mut aside = ASIDE.lock().unwrap_or_else(|e| e.into_inner());
    aside.as_mut().and_then(|m| m.remove(&n)).unwrap_or(text)
}

/// Stdin for tower-lsp, read by a thread of its own (see the module comment).
pub struct Input {
    rx: mpsc::Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Input {
    pub fn stdin() -> Input {
        let (tx, rx) = mpsc::channel(8);
        let spawned = std::thread::Builder::new().name("sdy-stdin".into()).spawn(move || {
            let mut r = std::io::BufReader::with_capacity(1 << 16, std::io::stdin().lock());
            let mut initialized = false;
            while let Some(m) = read_message(&mut r, &mut initialized) {
                if tx.blocking_send(m).is_err() {
                    break;
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

/// The next message as bytes to pass on (header and body); whatever cannot be framed is
/// passed on as it is, for tower-lsp to report. `None` at the end of input.
/// `initialized`: whether an `initialize` request went through.
fn read_message(r: &mut impl BufRead, initialized: &mut bool) -> Option<Vec<u8>> {
    let mut header = Vec::new();
    let mut len = None;
    loop {
        let start = header.len();
        if r.read_until(b'\n', &mut header).ok()? == 0 {
            return (!header.is_empty()).then_some(header);
        }
        let line = &header[start..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        let line = String::from_utf8_lossy(line);
        if let Some((k, v)) = line.split_once(':') {
            if k == "Content-Length" {
                len = v.trim().parse::<usize>().ok();
            }
        }
    }
    let Some(len) = len else { return Some(header) };
    // Exactly sized: grown by doubling, each copy would leave resident memory behind.
    let mut body = Vec::with_capacity(len);
    let read = r.take(len as u64).read_to_end(&mut body).unwrap_or(0);
    if !*initialized {
        let m: Option<Message> = serde_json::from_slice(&body).ok();
        *initialized = m.is_some_and(|m| m.method.as_deref() == Some("initialize"));
    } else if read == len && len >= MIN_BODY {
        if let Some(small) = set_text_aside(&mut body) {
            let mut m = format!("Content-Length: {}\r\n\r\n", small.len()).into_bytes();
            m.extend_from_slice(small.as_bytes());
            return Some(m);
        }
    }
    header.extend_from_slice(&body);
    Some(header)
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, rename = "textDocument")]
    text_document: Option<TextDocument<'a>>,
}

#[derive(Deserialize)]
struct TextDocument<'a> {
    #[serde(borrow)]
    text: Option<&'a RawValue>,
}

/// If `body` is a `didOpen`, sets its text aside and returns the message with the
/// marker in its place; `body` then holds no message any more. `None` (and `body`
/// untouched) for any other message.
fn set_text_aside(body: &mut Vec<u8>) -> Option<String> {
    let (start, end) = {
        let m: Message = serde_json::from_slice(body).ok()?;
        if m.method.as_deref() != Some("textDocument/didOpen") {
            return None;
        }
        let raw = m.params?.text_document?.text?.get().as_bytes();
        let start = raw.as_ptr() as usize - body.as_ptr() as usize;
        (start, start + raw.len())
    };
    let literal = body.get(start..end)?;
    if literal.len() < 2 || literal[0] != b'"' || has_lone_surrogate(literal) {
        return None; // not a string, or one serde_json refuses: tower-lsp reports it
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let marker = serde_json::to_string(&format!("{MARKER}{n}")).ok()?;
    let mut small = String::with_capacity(start + marker.len() + body.len() - end);
    small.push_str(std::str::from_utf8(&body[..start]).ok()?);
    small.push_str(&marker);
    small.push_str(std::str::from_utf8(&body[end..]).ok()?);
    let len = unescape_in_place(body, start + 1, end - 1);
    body.truncate(len);
    let text = String::from_utf8(std::mem::take(body)).ok()?;
    let mut aside = ASIDE.lock().unwrap_or_else(|e| e.into_inner());
    let aside = aside.get_or_insert_with(HashMap::new);
    aside.insert(n, text);
    aside.retain(|&k, _| k + KEEP > n);
    Some(small)
}

/// The code unit of the `\uXXXX` escape at the start of `s`.
fn unit_at(s: &[u8]) -> Option<u32> {
    match s {
        [b'\\', b'u', hex @ ..] if hex.len() >= 4 => {
            u32::from_str_radix(std::str::from_utf8(&hex[..4]).ok()?, 16).ok()
        }
        _ => None,
    }
}

fn is_high(u: u32) -> bool {
    (0xd800..0xdc00).contains(&u)
}

fn is_low(u: u32) -> bool {
    (0xdc00..0xe000).contains(&u)
}

/// Whether the JSON string literal `s` escapes a UTF-16 surrogate outside a pair.
fn has_lone_surrogate(s: &[u8]) -> bool {
    if memchr::memmem::find(s, b"\\u").is_none() {
        return false;
    }
    let mut i = 0;
    while let Some(k) = s.get(i..).and_then(|t| memchr::memchr(b'\\', t)) {
        i += k;
        match unit_at(&s[i..]) {
            Some(u) if is_high(u) => {
                if !unit_at(s.get(i + 6..).unwrap_or_default()).is_some_and(is_low) {
                    return true;
                }
                i += 12;
            }
            Some(u) if is_low(u) => return true,
            Some(_) => i += 6,
            None => i += 2,
        }
    }
    false
}

/// Unescapes the contents `buf[from..to]` of a valid JSON string literal without lone
/// surrogates to the start of `buf` (escapes are never shorter than what they stand
/// for, so the writes stay behind the reads); returns the length written.
fn unescape_in_place(buf: &mut [u8], from: usize, to: usize) -> usize {
    let (mut r, mut w) = (from, 0);
    while r < to {
        // Runs without escapes are moved as a whole.
        let run = memchr::memchr(b'\\', &buf[r..to]).unwrap_or(to - r);
        buf.copy_within(r..r + run, w);
        (r, w) = (r + run, w + run);
        if r == to {
            break;
        }
        let c = match buf[r + 1] {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'u' => {
                let mut u = unit_at(&buf[r..]).unwrap_or(0xfffd);
                let mut escape = 6;
                if is_high(u) {
                    let low = unit_at(&buf[r + 6..]).unwrap_or(0xdc00);
                    u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
                    escape = 12;
                }
                let mut utf8 = [0; 4];
                let s = char::from_u32(u).unwrap_or('\u{fffd}').encode_utf8(&mut utf8);
                buf[w..w + s.len()].copy_from_slice(s.as_bytes());
                (r, w) = (r + escape, w + s.len());
                continue;
            }
            other => other, // `"`, `\\`, `/`
        };
        buf[w] = c;
        (r, w) = (r + 2, w + 1);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    /// The messages passed on for `input`, sent after `initialize`.
    fn pass(input: Vec<u8>) -> Vec<Vec<u8>> {
        let mut r = std::io::Cursor::new(input);
        let mut initialized = true;
        std::iter::from_fn(|| read_message(&mut r, &mut initialized)).collect()
    }

    fn did_open(text: &str) -> String {
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": "file:///a.mlir", "languageId": "mlir",
                             "version": 1, "text": text}}})
        .to_string()
    }

    fn body_of(m: &[u8]) -> serde_json::Value {
        let at = m.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let len: usize = std::str::from_utf8(&m[16..at - 4]).unwrap().trim().parse().unwrap();
        assert_eq!(len, m.len() - at);
        serde_json::from_slice(&m[at..]).unwrap()
    }

    /// Every escape JSON has, characters of every UTF-8 length, a big text: the text
    /// set aside is the one sent, the message otherwise the same.
    #[test]
    fn a_big_did_open_sets_its_text_aside() {
        let piece = "a \"q\" \\ / \u{8} \u{c}\n\r\t \u{1} é € 😀 \u{7f}\n";
        let text = piece.repeat(MIN_BODY / piece.len() + 1);
        for ascii in [false, true] {
            let msg = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
                "textDocument": {"uri": "file:///a.mlir", "languageId": "mlir",
                                 "version": 3, "text": text}}});
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
            let got = body_of(&out[0]);
            let marker = got["params"]["textDocument"]["text"].as_str().unwrap().to_string();
            assert!(marker.starts_with(MARKER));
            let mut expected = msg.clone();
            expected["params"]["textDocument"]["text"] = json!(marker);
            assert_eq!(got, expected);
            assert_eq!(take(marker.clone()), text);
            // Taken once.
            assert_eq!(take(marker.clone()), marker);
        }
    }

    #[test]
    fn other_messages_pass_unchanged() {
        let big = "x".repeat(MIN_BODY);
        let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": "file:///a.mlir", "version": 2},
            "contentChanges": [{"text": big}]}})
        .to_string();
        let small_open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": "file:///a.mlir", "languageId": "mlir", "version": 1,
                             "text": "module {}"}}})
        .to_string();
        let not_json = format!("{{\"method\": \"textDocument/didOpen\", {big}");
        let mut input = frame(&change);
        input.extend(frame(&small_open));
        input.extend(frame(&not_json));
        input.extend(b"garbage\r\n\r\n");
        input.extend(frame("{}"));
        input.extend(b"Content-Length: 10\r\n\r\n{\"a\"");
        let out = pass(input);
        let expected = [
            frame(&change),
            frame(&small_open),
            frame(&not_json),
            b"garbage\r\n\r\n".to_vec(),
            frame("{}"),
            b"Content-Length: 10\r\n\r\n{\"a\"".to_vec(),
        ];
        assert_eq!(out, expected);
    }

    /// serde_json refuses unpaired surrogates: such a message is passed on unchanged.
    #[test]
    fn lone_surrogates_are_left_to_tower_lsp() {
        let text = "x".repeat(MIN_BODY);
        for lone in ["\\ud800", "\\udc00x", "\\ud800\\u0041"] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"file:///a","languageId":"mlir","version":1,"text":"{text}{lone}"}}}}}}"#
            );
            assert_eq!(pass(frame(&body)), [frame(&body)]);
        }
        assert!(!has_lone_surrogate(br#""\\ud800""#)); // an escaped backslash
        assert!(has_lone_surrogate(br#""\ud800""#));
    }

    /// Before `initialize`, tower-lsp drops a `didOpen`: its text is not set aside (it
    /// would never be taken); after it, it is.
    #[test]
    fn nothing_is_set_aside_before_initialize() {
        let text = "x".repeat(MIN_BODY);
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"capabilities": {}}})
        .to_string();
        let mut input = frame(&did_open(&text));
        input.extend(frame(&init));
        input.extend(frame(&did_open(&text)));
        let mut r = std::io::Cursor::new(input);
        let mut initialized = false;
        let out: Vec<_> = std::iter::from_fn(|| read_message(&mut r, &mut initialized)).collect();
        assert_eq!(out[..2], [frame(&did_open(&text)), frame(&init)]);
        let marker =
            body_of(&out[2])["params"]["textDocument"]["text"].as_str().unwrap().to_string();
        assert_eq!(take(marker), text);
    }

    /// A text never taken (its `didOpen` rejected) goes once [`KEEP`] more came.
    #[test]
    fn texts_never_taken_are_dropped() {
        let text = "y".repeat(MIN_BODY);
        let first = pass(frame(&did_open(&text)));
        let marker =
            body_of(&first[0])["params"]["textDocument"]["text"].as_str().unwrap().to_string();
        for _ in 0..KEEP {
            let m = pass(frame(&did_open(&text)));
            take(body_of(&m[0])["params"]["textDocument"]["text"].as_str().unwrap().to_string());
        }
        assert_eq!(take(marker.clone()), marker);
    }

    #[test]
    fn texts_not_set_aside_are_kept() {
        assert_eq!(take("module {}".into()), "module {}");
        let unknown = format!("{MARKER}999999999");
        assert_eq!(take(unknown.clone()), unknown);
    }
}
