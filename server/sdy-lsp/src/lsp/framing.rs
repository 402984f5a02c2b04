//! LSP base-protocol framing of the server's input: `Name: value` header lines, an
//! empty line, then `Content-Length` bytes of body.
//!
//! Nothing a client sends ends the stream here. Header names are matched without regard
//! to case (they are HTTP-style), unknown header fields are ignored, and a body's memory
//! is touched only as its bytes arrive (a `Content-Length` up to the cap is reserved as
//! address space; past the cap it is refused). A header problem (a line that is no header field, a
//! `Content-Length` that is missing, not a number or over [`MAX_BODY`], a charset other
//! than UTF-8) is returned as [`Frame::Bad`], and reading resynchronises at the next
//! `Content-Length` in the input: a length over the cap is treated like a garbled one
//! rather than skipped, so a client that lies about it loses that message only, not the
//! rest of the session; a real message that big is scanned past the same way.

use std::io::Read;

/// The biggest body accepted: four times VS Code's 50 MB document sync limit, in JSON.
pub const MAX_BODY: u64 = 1 << 30;

/// A header line longer than this is garbage.
const MAX_HEADER_LINE: usize = 4096;

/// So is a header longer than this.
const MAX_HEADER: usize = 4 * MAX_HEADER_LINE;

const CONTENT_LENGTH: &[u8] = b"content-length";

/// One framed message, or why the input at this point was not one.
#[derive(Debug, PartialEq)]
pub enum Frame {
    Body(Vec<u8>),
    Bad(String),
}

/// Reads frames from `R` through a buffer of its own (resynchronising needs to look
/// back into a header line that turned out to be garbage).
pub struct Framer<R> {
    r: R,
    buf: Vec<u8>,
    at: usize,
    /// The start of the header being read: kept in the buffer to resynchronise from.
    mark: usize,
    end: usize,
    eof: bool,
}

impl<R: Read> Framer<R> {
    pub fn new(r: R) -> Framer<R> {
        Framer { r, buf: vec![0; 1 << 16], at: 0, mark: 0, end: 0, eof: false }
    }

    /// Reads more input behind what is buffered; false at the end of input.
    fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        let keep = self.mark.min(self.at);
        if keep > 0 {
            self.buf.copy_within(keep..self.end, 0);
            (self.end, self.at, self.mark) = (self.end - keep, self.at - keep, self.mark - keep);
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.r.read(&mut self.buf[self.end..]) {
                Ok(0) => break,
                Ok(n) => {
                    self.end += n;
                    return true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break, // ends the input like its end
            }
        }
        self.eof = true;
        false
    }

    /// The length of the line at the read position, its `\n` included; `Err(true)` if
    /// it is longer than [`MAX_HEADER_LINE`], `Err(false)` at the end of input.
    fn line_len(&mut self) -> Result<usize, bool> {
        let mut searched = 0;
        loop {
            let avail = &self.buf[self.at + searched..self.end];
            if let Some(i) = memchr::memchr(b'\n', avail) {
                let len = searched + i + 1;
                return if len > MAX_HEADER_LINE { Err(true) } else { Ok(len) };
            }
            searched = self.end - self.at;
            if searched > MAX_HEADER_LINE {
                return Err(true);
            }
            if !self.fill() {
                return Err(false);
            }
        }
    }

    /// Skips input up to the next `Content-Length` (any case) after the read position.
    fn resync(&mut self) {
        self.at += 1.min(self.end - self.at);
        loop {
            match find_content_length(&self.buf[self.at..self.end]) {
                Found::At(i) => {
                    self.at += i;
                    return;
                }
                Found::Prefix(i) => self.at += i, // kept, to be completed by more input
                Found::Nothing => self.at = self.end,
            }
            if !self.fill() {
                self.at = self.end;
                return;
            }
        }
    }

    /// The next frame; `None` at the end of input.
    pub fn next_frame(&mut self) -> Option<Frame> {
        let frame = self.frame();
        self.mark = self.at;
        frame
    }

    fn frame(&mut self) -> Option<Frame> {
        let mut len: Option<u64> = None;
        let mut bad: Option<String> = None;
        let mut in_header = false;
        loop {
            if !in_header {
                self.mark = self.at;
            } else if self.at - self.mark > MAX_HEADER {
                self.at = self.mark;
                self.resync();
                return Some(Frame::Bad("the header is too long".into()));
            }
            let n = match self.line_len() {
                Ok(n) => n,
                Err(false) => {
                    // The end of input inside a header: nothing more will come.
                    self.at = self.end;
                    return None;
                }
                Err(true) => {
                    self.resync();
                    return Some(Frame::Bad("a header line is too long".into()));
                }
            };
            let line = &self.buf[self.at..self.at + n];
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                self.at += n;
                if !in_header {
                    continue; // blank lines between messages
                }
                break;
            }
            let field = std::str::from_utf8(line).ok().and_then(|l| l.split_once(':'));
            let Some((name, value)) = field.filter(|(name, _)| is_token(name)) else {
                self.resync();
                return Some(Frame::Bad("expected a header field or Content-Length".into()));
            };
            let value = value.trim();
            in_header = true;
            if name.eq_ignore_ascii_case("content-length") {
                match parse_length(value) {
                    Ok(n) if len.is_none_or(|l| l == n) => len = Some(n),
                    Ok(_) => bad = Some("two different Content-Length values".into()),
                    Err(why) => {
                        self.resync();
                        return Some(Frame::Bad(why));
                    }
                }
            } else if name.eq_ignore_ascii_case("content-type") {
                if let Some(charset) = charset(value).filter(|c| !is_utf8(c)) {
                    bad = Some(format!("unsupported charset '{charset}' (only utf-8)"));
                }
            }
            self.at += n;
        }
        let Some(len) = len else {
            // Perhaps garbage ran into a `Content-Length` line (`xyzContent-Length: 5`).
            self.at = self.mark;
            self.resync();
            return Some(Frame::Bad("missing Content-Length header".into()));
        };
        if let Some(why) = bad {
            self.skip(len);
            return Some(Frame::Bad(why));
        }
        Some(Frame::Body(self.read_body(len as usize)))
    }

    /// Skips `n` bytes of input.
    fn skip(&mut self, mut n: u64) {
        loop {
            let here = (self.end - self.at).min(usize::try_from(n).unwrap_or(usize::MAX));
            self.at += here;
            n -= here as u64;
            if n == 0 || !self.fill() {
                return;
            }
        }
    }

    /// Up to `len` bytes of body (fewer at the end of input), in a buffer of exactly
    /// `len` bytes. It is reserved at once as address space only (under the cap; pages
    /// are touched as bytes arrive, so a client that lies about the length costs what it
    /// sent) and filled straight from the input: growing it by doubling faulted in and
    /// copied twice the memory, 15% of the open of a 10 MB file. Where the system refuses
    /// the reservation, the buffer grows by doubling as bytes arrive.
    fn read_body(&mut self, len: usize) -> Vec<u8> {
        let mut body = Vec::new();
        let exact = body.try_reserve_exact(len).is_ok();
        loop {
            let take = (self.end - self.at).min(len - body.len());
            if body.capacity() - body.len() < take {
                let want = (body.capacity() * 2).max(body.len() + take).max(1 << 16).min(len);
                body.reserve_exact(want - body.len());
            }
            body.extend_from_slice(&self.buf[self.at..self.at + take]);
            self.at += take;
            if body.len() == len {
                return body;
            }
            if exact && len - body.len() >= self.buf.len() {
                // The rest straight into the body: no copy through the buffer.
                let rest = (len - body.len()) as u64;
                let mut r = (&mut self.r).take(rest);
                if r.read_to_end(&mut body).is_err() || body.len() < len {
                    self.eof = true; // an error ends the input like its end
                }
                return body;
            }
            if !self.fill() {
                return body;
            }
        }
    }
}

enum Found {
    At(usize),
    /// A prefix of it ends the haystack here.
    Prefix(usize),
    Nothing,
}

/// Where `Content-Length`, in any case, is in `hay`.
fn find_content_length(hay: &[u8]) -> Found {
    let mut from = 0;
    while let Some(i) = memchr::memchr2(b'c', b'C', &hay[from..]) {
        let start = from + i;
        let cand = &hay[start..hay.len().min(start + CONTENT_LENGTH.len())];
        if cand.eq_ignore_ascii_case(&CONTENT_LENGTH[..cand.len()]) {
            // A prefix only where the haystack ends: no later candidate can be whole.
            return if cand.len() == CONTENT_LENGTH.len() {
                Found::At(start)
            } else {
                Found::Prefix(start)
            };
        }
        from = start + 1;
    }
    Found::Nothing
}

/// A decimal `Content-Length` within [`MAX_BODY`].
fn parse_length(value: &str) -> Result<u64, String> {
    let n = value
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| value.parse::<u64>().ok())
        .flatten()
        .filter(|_| !value.is_empty());
    match n {
        Some(n) if n <= MAX_BODY => Ok(n),
        Some(n) => Err(format!("Content-Length {n} is over the limit of {MAX_BODY} bytes")),
        None => Err(format!("invalid Content-Length '{}'", value.escape_debug())),
    }
}

/// The `charset` parameter of a `Content-Type` value.
fn charset(value: &str) -> Option<&str> {
    value.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches('"'))
    })
}

fn is_utf8(charset: &str) -> bool {
    charset.eq_ignore_ascii_case("utf-8") || charset.eq_ignore_ascii_case("utf8")
}

/// An HTTP header field name.
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames of `input`, read through a reader that returns at most `step` bytes
    /// at a time (so every boundary case of the buffer is met).
    fn frames(input: &[u8], step: usize) -> Vec<Frame> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut f = Framer::new(Trickle(input, step));
        std::iter::from_fn(|| f.next_frame()).collect()
    }

    fn body(s: &str) -> Frame {
        Frame::Body(s.as_bytes().to_vec())
    }

    fn bad(s: &str) -> Frame {
        Frame::Bad(s.to_string())
    }

    #[test]
    fn messages_and_header_problems() {
        let cases: &[(&str, &[Frame])] = &[
            ("Content-Length: 2\r\n\r\n{}", &[body("{}")]),
            ("content-length: 2\n\n{}", &[body("{}")]),
            ("CONTENT-LENGTH:2\r\nX-Third: 1\r\nX-Fourth: 2\r\n\r\n{}", &[body("{}")]),
            (
                "Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=UTF-8\r\n\r\n{}",
                &[body("{}")],
            ),
            ("\r\n\r\nContent-Length: 2\r\n\r\n{}", &[body("{}")]),
            (
                "Content-Length: 2\r\nContent-Type: text/x; charset=latin1\r\n\r\n{}Content-Length: 1\r\n\r\n1",
                &[bad("unsupported charset 'latin1' (only utf-8)"), body("1")],
            ),
            (
                "garbage\r\n\r\nContent-Length: 1\r\n\r\n1",
                &[bad("expected a header field or Content-Length"), body("1")],
            ),
            (
                "garbage Content-Length: 1\r\n\r\n1",
                &[bad("expected a header field or Content-Length"), body("1")],
            ),
            ("garbageContent-Length: 1\r\n\r\n1", &[bad("missing Content-Length header"), body("1")]),
            (
                "X-Other: 1\r\n\r\n{}Content-Length: 1\r\n\r\n1",
                &[bad("missing Content-Length header"), body("1")],
            ),
            (
                "Content-Length: -5\r\n\r\n{}Content-Length: 1\r\n\r\n1",
                &[bad("invalid Content-Length '-5'"), body("1")],
            ),
            (
                "Content-Length: 18446744073709551615\r\n\r\n{}content-length: 1\r\n\r\n1",
                &[
                    bad("Content-Length 18446744073709551615 is over the limit of 1073741824 bytes"),
                    body("1"),
                ],
            ),
            (
                "Content-Length: 99999999999999999999999\r\n\r\n{}Content-Length: 1\r\n\r\n1",
                &[bad("invalid Content-Length '99999999999999999999999'"), body("1")],
            ),
            (
                "Content-Length: 1\r\nContent-Length: 2\r\n\r\n{}Content-Length: 1\r\n\r\n1",
                &[
                    bad("two different Content-Length values"),
                    bad("expected a header field or Content-Length"),
                    body("1"),
                ],
            ),
            // Truncated at the end of input.
            ("Content-Length: 10\r\n\r\n{}", &[body("{}")]),
            ("Content-Length: 10\r\n", &[]),
            ("", &[]),
        ];
        for (input, expected) in cases {
            for step in [1, 3, 1 << 20] {
                assert_eq!(frames(input.as_bytes(), step), *expected, "{input:?} step {step}");
            }
        }
    }

    #[test]
    fn endless_headers_are_bounded_and_skipped() {
        let mut input = b"X-A: 1\r\n".repeat(MAX_HEADER);
        input.extend(b"\r\nContent-Length: 1\r\n\r\n1");
        assert_eq!(frames(&input, 1 << 20), [bad("the header is too long"), body("1")]);
    }

    #[test]
    fn garbage_without_newlines_is_bounded_and_skipped() {
        let mut input = vec![b'x'; 3 * MAX_HEADER_LINE];
        input.extend(b"Content-Length: 1\r\n\r\n1");
        assert_eq!(frames(&input, 1 << 20), [bad("a header line is too long"), body("1")]);
    }

    /// A claimed length at the cap with little behind it: the body is what came.
    #[test]
    fn a_body_is_what_arrives() {
        let mut f = Framer::new(&b"Content-Length: 1073741824\r\n\r\n{}"[..]);
        let Some(Frame::Body(b)) = f.next_frame() else { panic!() };
        assert_eq!(b, b"{}");
        let big = vec![b' '; 200_000];
        let mut input = format!("Content-Length: {}\r\n\r\n", big.len()).into_bytes();
        input.extend(&big);
        let Some(Frame::Body(b)) = Framer::new(&input[..]).next_frame() else { panic!() };
        assert_eq!((b.len(), b.capacity()), (big.len(), big.len()));
    }
}
