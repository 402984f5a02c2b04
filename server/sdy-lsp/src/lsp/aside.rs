//! The text of a big `textDocument/didOpen`, taken out of the message on its way in.
//!
//! tower-lsp would decode a 10 MB `didOpen` through a read buffer that keeps its size,
//! serde_json's unescaping buffer, an untagged-enum `Content` copy and a `Value` copy: on
//! a 10 MB file that was 64 MB of resident memory and ~90 ms before the handler ran.
//! Instead the stdin thread unescapes the text in place (the message's buffer becomes the
//! document's text) and sets it aside under a number; tower-lsp gets a small message of
//! the server's own method [`OPEN`] with the number in place of the text, and
//! [`super::gate`] trades the text back in (a move into the JSON value, no copy) and
//! renames the method before tower-lsp routes it. So every text set aside is taken by the
//! next service call for it, whatever tower-lsp then makes of the `didOpen` (rejected
//! before `initialize`, after `shutdown`, for bad params: the text goes with it), and no
//! client text can pass for a number: clients cannot send [`OPEN`].

use super::validate::{is_high, unit_at, Envelope, INTERNAL};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Messages from this size on have their text set aside.
pub const MIN_BODY: usize = 1 << 16;

/// The method of a `didOpen` whose text was set aside.
pub const OPEN: &str = "$/sdy-lsp/open";
const _: () = assert!(OPEN.len() > INTERNAL.len());

static ASIDE: Mutex<Option<HashMap<u64, String>>> = Mutex::new(None);
static NEXT: AtomicU64 = AtomicU64::new(0);

/// If `body` is a big `didOpen` notification with a string text, sets the text aside and
/// returns the message to pass on instead and the text's number; `body` then holds no
/// message any more. `None` (and `body` untouched) otherwise. The text is kept only once
/// [`keep`] is called.
pub fn split_off(body: &mut Vec<u8>, env: &Envelope) -> Option<(Vec<u8>, u64, String)> {
    if body.len() < MIN_BODY || env.has_id || env.method.as_deref() != Some("textDocument/didOpen")
    {
        return None;
    }
    let text = env.text_span.clone()?;
    let literal = &body[text.clone()];
    if literal.len() < 2 || literal[0] != b'"' {
        return None;
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut edits =
        [(env.method_span.clone(), format!("\"{OPEN}\"")), (text.clone(), n.to_string())];
    edits.sort_by_key(|(r, _)| r.start);
    let mut small = Vec::with_capacity(body.len() - literal.len() + 64);
    let mut at = 0;
    for (r, with) in &edits {
        small.extend_from_slice(body.get(at..r.start)?);
        small.extend_from_slice(with.as_bytes());
        at = r.end;
    }
    small.extend_from_slice(&body[at..]);
    let len = unescape_in_place(body, text.start + 1, text.end - 1);
    body.truncate(len);
    let text = String::from_utf8(std::mem::take(body)).ok()?;
    Some((small, n, text))
}

/// Keeps a text [`split_off`] gave until [`take`] asks for it.
pub fn keep(n: u64, text: String) {
    ASIDE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(n, text);
}

/// The text set aside under `n`, once.
pub fn take(n: u64) -> Option<String> {
    ASIDE.lock().unwrap_or_else(|e| e.into_inner()).as_mut()?.remove(&n)
}

/// How many texts are set aside and not taken yet.
pub fn held() -> usize {
    ASIDE.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map_or(0, HashMap::len)
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
