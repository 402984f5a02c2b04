//! Parsing a big text on two cores.
//!
//! A second thread parses, speculatively, the statements from a line near the middle of
//! the text up to the end of their block (a `}`, a block label or the end of input), as
//! statements of a block: a segment. Then it goes on with a segment from the next line
//! that looks like a statement start, and so on to the end of the text. The main parse
//! adopts a segment when one of its statement loops (a block's, or the top level's) is
//! about to read a statement starting exactly where the segment starts, and goes on from
//! where the segment stopped (most often at the `}` that closes the block); once it is
//! past a segment's start otherwise, the speculation is dropped. Adopting gives exactly
//! the sequential parse: a statement is a function of the tokens from its start on (the
//! lexer restarts at any line start), and of the nesting depth only through the depth
//! limit, which is checked (`Parser::depth_peak`); the statement loops stop on the same
//! tokens as a segment's loop.

use super::{Parser, MAX_DEPTH};
use crate::lexer::{Scanner, TokenKind};
use crate::tree::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

/// Below this size a text is parsed on one thread: a thread costs more than it saves.
const PARALLEL_MIN: usize = 1 << 20;

/// How far a line that starts a statement is looked for.
const SEARCH: usize = 64 << 10;

/// Parses a chunk of text into its top-level statements (offsets relative to `text`),
/// on two threads when it is big.
pub fn parse_top_level(text: &str) -> Vec<Child> {
    match (text.len() >= PARALLEL_MIN).then(|| split_line(text)).flatten() {
        Some(line) => parse_top_level_split_at(text, line).0,
        None => parse_top_level_sequential(text),
    }
}

/// [`parse_top_level`] on one thread.
pub fn parse_top_level_sequential(text: &str) -> Vec<Child> {
    Parser::new(text).top_level()
}

/// [`parse_top_level`] with the second thread starting at the line holding byte `at`,
/// whatever the text's size, and how many segments were adopted: for tests, which
/// compare it with the sequential parse.
#[doc(hidden)]
pub fn parse_top_level_split_at(text: &str, at: usize) -> (Vec<Child>, u32) {
    let at = at.min(text.len());
    let line = text.as_bytes()[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let Some(start) = first_token(text, line) else {
        return (parse_top_level_sequential(text), 0);
    };
    let cancel = Arc::new(AtomicBool::new(false));
    std::thread::scope(|s| {
        // Segments are sent as they are done; the main parse takes them in order.
        let (tx, rx) = mpsc::channel();
        let stop = cancel.clone();
        s.spawn(move || {
            let run = std::panic::AssertUnwindSafe(|| speculate(text, line, &tx, &stop));
            // A panic here would happen in the main parse too, which reports it; the
            // closed channel ends the speculation.
            let _ = std::panic::catch_unwind(run);
        });
        let mut p = Parser::new(text);
        p.spec = Some(Pending { start, rx, cancel });
        let top = p.top_level();
        if let Some(pending) = p.spec.take() {
            pending.cancel.store(true, Ordering::Relaxed);
        }
        (top, p.adopted)
    })
}

/// The speculative parse the main parse may adopt.
pub(super) struct Pending<'s> {
    /// Where the next segment's first statement starts.
    start: u32,
    rx: mpsc::Receiver<Segment<'s>>,
    cancel: Arc<AtomicBool>,
}

/// A finished segment: its statements (offsets from the text's start), the parser,
/// positioned where it stopped, and where the next segment starts.
struct Segment<'s> {
    parser: Parser<'s>,
    kids: Vec<Child>,
    next: Option<u32>,
}

/// The second thread: segments from `line` on, each the statements of a block as
/// `Parser::region_blocks` reads them, at depth 0.
fn speculate<'s>(
    text: &'s str,
    mut line: usize,
    tx: &mpsc::Sender<Segment<'s>>,
    cancel: &AtomicBool,
) {
    loop {
        let mut parser = Parser::with_scanner(text, Scanner::at_line(text, line));
        let mut kids = Vec::new();
        while !matches!(parser.kind(), TokenKind::Eof | TokenKind::RBrace | TokenKind::CaretId) {
            if cancel.load(Ordering::Relaxed) {
                return;
            }
            let Some(kid) = parser.statement(true) else { return };
            kids.push(kid);
        }
        let stop = parser.peek();
        let next_line = match stop.kind {
            TokenKind::Eof => None,
            _ => statement_line(text, stop.end as usize),
        };
        let next = next_line.and_then(|l| first_token(text, l));
        if tx.send(Segment { parser, kids, next }).is_err() || next.is_none() {
            return;
        }
        line = next_line.expect("a next segment has a line");
    }
}

impl<'s> Parser<'s> {
    /// Called by the statement loops where they would read a statement: the statements
    /// of the next speculative segment (offsets relative to `self.base`) when it starts
    /// right here, the cursor moved to where it stopped.
    #[inline]
    pub(super) fn adopt_speculation(&mut self) -> Option<Vec<Child>> {
        if self.spec.as_ref()?.start > self.cur_tok.start {
            return None;
        }
        self.adopt()
    }

    #[inline(never)]
    fn adopt(&mut self) -> Option<Vec<Child>> {
        let pending = self.spec.take()?;
        if pending.start != self.cur_tok.start || self.cur_tok.kind == TokenKind::Eof {
            pending.cancel.store(true, Ordering::Relaxed);
            return None;
        }
        let Segment { parser: b, mut kids, next } = pending.rx.recv().ok()?;
        // Its depth checks pass or fail here as they did at depth 0.
        if b.depth_peak > 0 && self.depth + b.depth_peak > MAX_DEPTH {
            pending.cancel.store(true, Ordering::Relaxed);
            return None;
        }
        if b.depth_peak > 0 {
            self.depth_peak = self.depth_peak.max(self.depth + b.depth_peak);
        }
        // Its token `i` is ours `i + here` (the global indices `save` gives).
        let here = self.save();
        self.scanner = b.scanner;
        self.toks = b.toks;
        self.cur_tok = b.cur_tok;
        self.first = b.first + here;
        self.lexed_all = b.lexed_all;
        self.cur = b.cur;
        for k in &mut kids {
            k.offset -= self.base;
        }
        self.spec = next.map(|start| Pending { start, ..pending });
        self.adopted += 1;
        Some(kids)
    }
}

/// The start of the first token at or after `line`, if any.
fn first_token(text: &str, line: usize) -> Option<u32> {
    let mut first = None;
    Scanner::at_line(text, line).scan(|t, _| {
        first = Some(t.start);
        false
    });
    first
}

/// A line start just past the middle of `text` whose line starts a statement, the least
/// indented one found (most likely a statement of the outermost big block).
fn split_line(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mid = text.len() / 2;
    let end = (mid + SEARCH).min(bytes.len());
    let mut pos = bytes[mid..].iter().position(|&b| b == b'\n')? + mid + 1;
    let mut best: Option<(usize, usize)> = None;
    while pos < end {
        let line_end = line_end(bytes, pos);
        let line = &bytes[pos..line_end];
        let indent = line.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
        if best.is_none_or(|(i, _)| indent < i) && starts_statement(&line[indent..]) {
            best = Some((indent, pos));
        }
        pos = line_end + 1;
    }
    best.map(|(_, line)| line)
}

/// The start of the first line after the one holding `from` that starts a statement.
fn statement_line(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let end = from.saturating_add(SEARCH).min(bytes.len());
    let mut pos = line_end(bytes, from) + 1;
    while pos < end {
        let line_end = line_end(bytes, pos);
        let line = &bytes[pos..line_end];
        let indent = line.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
        if starts_statement(&line[indent..]) {
            return Some(pos);
        }
        pos = line_end + 1;
    }
    None
}

/// Where the line holding `pos` ends (its `\n`, or the end of the text).
fn line_end(bytes: &[u8], pos: usize) -> usize {
    bytes[pos.min(bytes.len())..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| pos + i)
}

/// Whether a line (without its indentation) looks like the start of a statement: only a
/// hint, the adoption check decides.
fn starts_statement(rest: &[u8]) -> bool {
    match rest.first() {
        Some(b'%') => {
            let name_end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
            rest[name_end..].starts_with(b" = ")
        }
        Some(b'"' | b'#' | b'!') => true,
        Some(b) if b.is_ascii_alphabetic() => {
            let word =
                rest.iter().take_while(|&&b| b.is_ascii_alphanumeric() || b"._$-".contains(&b));
            word.clone().any(|&b| b == b'.') && !rest[word.count()..].starts_with(b" =")
        }
        _ => false,
    }
}
