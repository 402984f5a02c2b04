//! The tolerant parser. Every input yields a tree plus errors: a statement that cannot
//! be read becomes an error node, and parsing resumes at the next statement.

mod attr;
mod op;
mod sdy_attr;
mod ty;

use crate::lexer::{self, Token, TokenKind};
use crate::span::Span;
use crate::tree::{Child, Op, SyntaxError};
use std::sync::Arc;

pub use op::is_statement_start_kind;

/// Maximum bracket nesting the parser descends into; deeper input is reported, not
/// recursed into, so pathological input cannot overflow the stack.
const MAX_DEPTH: u32 = 256;

/// How many tokens past the cursor are always lexed. Lookahead never needs more
/// (a longer look, e.g. at a huge result list, just sees the end of input).
const LOOKAHEAD: usize = 128;

/// A token cursor over one piece of text (a chunk, or statements when re-parsing).
///
/// Tokens are lexed on demand into a window that is trimmed at statement starts, so
/// parsing never materialises the whole file's tokens.
pub struct Parser<'s> {
    pub(crate) src: &'s str,
    lexer: logos::Lexer<'s, TokenKind>,
    /// The token window; `toks[0]` has the global index `first`.
    toks: Vec<Token>,
    /// For each token of the window: whether a line break precedes it.
    nl: Vec<bool>,
    /// End of the last token put in the window.
    last_end: usize,
    first: usize,
    lexed_all: bool,
    /// Global index of the current token.
    pos: usize,
    /// Start of the op being parsed: spans are made relative to it.
    pub(crate) base: u32,
    /// Errors of the op being parsed (relative spans).
    pub(crate) errors: Vec<SyntaxError>,
    /// Set while parsing the custom syntax of an op, to prefix errors like MLIR does
    /// (`custom op 'sdy.mesh' ...`).
    pub(crate) custom_op: Option<&'static str>,
    depth: u32,
    /// Interned types by spelling (see `tree::Type`).
    types: rustc_hash::FxHashMap<&'s str, Arc<crate::tree::TypeKind>>,
    /// Whether the last emitted error started a new failure (for `chained`).
    in_failure: bool,
}

impl<'s> Parser<'s> {
    pub fn new(src: &'s str) -> Parser<'s> {
        use logos::Logos;
        let mut p = Parser {
            src,
            lexer: TokenKind::lexer(src),
            toks: Vec::with_capacity(8192),
            nl: Vec::with_capacity(8192),
            last_end: 0,
            first: 0,
            lexed_all: false,
            pos: 0,
            base: 0,
            errors: Vec::new(),
            custom_op: None,
            depth: 0,
            types: rustc_hash::FxHashMap::default(),
            in_failure: false,
        };
        p.refill();
        p
    }

    /// Lexes more tokens when fewer than `LOOKAHEAD` remain past the cursor.
    #[inline]
    fn refill(&mut self) {
        if self.lexed_all || self.first + self.toks.len() >= self.pos + LOOKAHEAD {
            return;
        }
        self.lex_batch();
    }

    #[inline(never)]
    fn lex_batch(&mut self) {
        let target = self.toks.len() + 1024;
        while self.toks.len() < target {
            match self.lexer.next() {
                Some(r) => {
                    let kind = r.unwrap_or(TokenKind::Error);
                    if kind == TokenKind::Comment {
                        continue;
                    }
                    let span = self.lexer.span();
                    // Gaps are mostly one space: a plain loop beats memchr here.
                    let gap = &self.src.as_bytes()[self.last_end..span.start];
                    let nl = gap.contains(&b'\n');
                    self.nl.push(nl || (self.toks.is_empty() && self.first == 0));
                    self.last_end = span.end;
                    self.toks.push(Token { kind, start: span.start as u32, end: span.end as u32 });
                }
                None => {
                    self.lexed_all = true;
                    return;
                }
            }
        }
    }

    /// Forgets tokens before the current one (keeping the previous token): called at
    /// statement starts, where the parser never backtracks across.
    pub(crate) fn trim_window(&mut self) {
        if self.pos > self.first + 4096 {
            let drop = self.pos - 1 - self.first;
            self.toks.drain(..drop);
            self.nl.drain(..drop);
            self.first += drop;
        }
    }

    #[inline]
    fn tok(&self, i: usize) -> Option<Token> {
        i.checked_sub(self.first).and_then(|k| self.toks.get(k)).copied()
    }

    // ----- cursor -----

    /// The token `n` places ahead. Past `LOOKAHEAD` it is always end of input, so what
    /// the parser sees never depends on how far the lexer happens to have run.
    #[inline]
    pub(crate) fn nth(&self, n: usize) -> Token {
        let found = if n < LOOKAHEAD { self.tok(self.pos + n) } else { None };
        match found {
            Some(t) => t,
            None => {
                let end = self.src.len() as u32;
                Token { kind: TokenKind::Eof, start: end, end }
            }
        }
    }
    #[inline]
    pub(crate) fn peek(&self) -> Token {
        self.nth(0)
    }
    #[inline]
    pub(crate) fn kind(&self) -> TokenKind {
        self.peek().kind
    }
    pub(crate) fn nth_kind(&self, n: usize) -> TokenKind {
        self.nth(n).kind
    }
    #[inline]
    pub(crate) fn at(&self, kind: TokenKind) -> bool {
        self.kind() == kind
    }
    pub(crate) fn at_eof(&self) -> bool {
        self.kind() == TokenKind::Eof
    }
    pub(crate) fn text(&self, tok: Token) -> &'s str {
        tok.text(self.src)
    }
    pub(crate) fn peek_text(&self) -> &'s str {
        self.text(self.peek())
    }
    /// Whether the current token is the bare keyword `kw`.
    pub(crate) fn at_keyword(&self, kw: &str) -> bool {
        self.at(TokenKind::BareId) && self.peek_text() == kw
    }
    #[inline]
    pub(crate) fn bump(&mut self) -> Token {
        let t = self.peek();
        if t.kind != TokenKind::Eof {
            self.pos += 1;
            self.refill();
        }
        t
    }
    pub(crate) fn eat(&mut self, kind: TokenKind) -> Option<Token> {
        if self.at(kind) {
            Some(self.bump())
        } else {
            None
        }
    }
    pub(crate) fn eat_keyword(&mut self, kw: &str) -> Option<Token> {
        if self.at_keyword(kw) {
            Some(self.bump())
        } else {
            None
        }
    }
    /// The end of the previous token (absolute), or 0.
    pub(crate) fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.tok(self.pos - 1).map_or(0, |t| t.end)
        }
    }
    /// Whether a line break separates the current token from the previous one.
    pub(crate) fn nl_before(&self) -> bool {
        self.nl_before_nth(0)
    }
    pub(crate) fn nl_before_nth(&self, n: usize) -> bool {
        let i = self.pos + n;
        if n >= LOOKAHEAD {
            return true; // as `nth`: past the lookahead is the end of input
        }
        if let Some(&nl) = i.checked_sub(self.first).and_then(|k| self.nl.get(k)) {
            return nl;
        }
        // End of input: is there a line break after the last token?
        let prev_end = match i.checked_sub(1).and_then(|j| self.tok(j)) {
            Some(t) => t.end as usize,
            None => return true,
        };
        self.src.as_bytes()[prev_end..].contains(&b'\n')
    }
    pub(crate) fn save(&self) -> usize {
        self.pos
    }
    pub(crate) fn restore(&mut self, pos: usize) {
        self.pos = pos;
    }

    // ----- spans -----

    /// A token's span relative to the current op.
    pub(crate) fn rel(&self, tok: Token) -> Span {
        Span::new(tok.start - self.base, tok.end - self.base)
    }
    /// The relative span from `start` (absolute) to the end of the previous token.
    pub(crate) fn rel_from(&self, start: u32) -> Span {
        let end = self.prev_end().max(start);
        Span::new(start - self.base, end - self.base)
    }

    // ----- errors -----

    /// Reports the first error of a failure at `span` (relative).
    pub(crate) fn error(&mut self, span: Span, message: impl Into<String>) {
        self.push_error(span, message.into(), false);
    }
    /// Reports an error that belongs to the failure reported just before (MLIR's
    /// "failed to parse ..." chain lines).
    pub(crate) fn error_chained(&mut self, span: Span, message: impl Into<String>) {
        self.push_error(span, message.into(), true);
    }
    fn push_error(&mut self, span: Span, mut message: String, chained: bool) {
        if let Some(op) = self.custom_op {
            message = format!("custom op '{op}' {message}");
        }
        let chained = chained && self.in_failure;
        self.in_failure = true;
        self.errors.push(SyntaxError { span, message, chained });
    }
    /// Reports `expected X` (MLIR's wording) where MLIR puts it: right after the previous
    /// token when whitespace separates it from the current one, else at the current
    /// token; never with the custom-op prefix.
    pub(crate) fn error_expected(&mut self, what: &str) {
        let t = self.peek();
        let pos = if self.pos == 0 { t.start } else { self.prev_end().max(self.base) };
        let span = if pos == t.start && t.kind != TokenKind::Eof {
            self.rel(t)
        } else {
            Span::empty(pos - self.base)
        };
        let prefix = self.custom_op.take();
        self.error(span, format!("expected {what}"));
        self.custom_op = prefix;
    }
    /// Consumes `kind` or reports `expected 'X'` at the current token.
    pub(crate) fn expect(&mut self, kind: TokenKind, what: &str) -> Option<Token> {
        match self.eat(kind) {
            Some(t) => Some(t),
            None => {
                self.error_expected(what);
                None
            }
        }
    }

    pub(crate) fn in_failure(&self) -> bool {
        self.in_failure
    }
    pub(crate) fn set_in_failure(&mut self, v: bool) {
        self.in_failure = v;
    }
    /// Starts a new failure: the next error is not chained to earlier ones.
    pub(crate) fn reset_failure(&mut self) {
        self.in_failure = false;
    }

    // ----- nesting guard -----

    pub(crate) fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            let span = self.rel(self.peek());
            self.error(span, "nesting is too deep");
            return false;
        }
        self.depth += 1;
        true
    }
    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skips one token, or a whole bracketed group when at an opening bracket
    /// (`(`, `[`, `{`, `<`), stopping early at the end of input.
    pub(crate) fn skip_balanced(&mut self) {
        let open = self.kind();
        let close = match open {
            TokenKind::LParen => TokenKind::RParen,
            TokenKind::LBracket => TokenKind::RBracket,
            TokenKind::LBrace => TokenKind::RBrace,
            TokenKind::Less => TokenKind::Greater,
            _ => {
                self.bump();
                return;
            }
        };
        let mut stack: smallvec::SmallVec<[TokenKind; 16]> = smallvec::smallvec![close];
        self.bump();
        while let Some(&want) = stack.last() {
            if self.at_eof() {
                return;
            }
            let k = self.kind();
            if k == want {
                stack.pop();
            } else {
                match k {
                    TokenKind::LParen => stack.push(TokenKind::RParen),
                    TokenKind::LBracket => stack.push(TokenKind::RBracket),
                    TokenKind::LBrace => stack.push(TokenKind::RBrace),
                    TokenKind::Less if open == TokenKind::Less || want == TokenKind::Greater => {
                        stack.push(TokenKind::Greater)
                    }
                    // A closer of an outer group: the group was not closed; stop here.
                    TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace
                        if stack.contains(&k) =>
                    {
                        while stack.last() != Some(&k) {
                            stack.pop();
                        }
                        stack.pop();
                    }
                    _ => {}
                }
            }
            self.bump();
        }
    }
}

/// Parses a chunk of text into its top-level statements (offsets relative to `text`).
pub fn parse_top_level(text: &str) -> Vec<Child> {
    let mut p = Parser::new(text);
    p.top_level()
}

/// Parses `text` as exactly one statement, for incremental re-parsing. Returns `None`
/// when the text is not one complete statement (then a larger unit must be re-parsed).
pub fn parse_one_statement(text: &str, in_region: bool) -> Option<Arc<Op>> {
    let mut p = Parser::new(text);
    let first = p.peek();
    if first.kind == TokenKind::Eof || first.start != 0 {
        // Leading whitespace or comments belong to the gap before the statement.
        if first.kind == TokenKind::Eof || !text[..first.start as usize].trim().is_empty() {
            return None;
        }
    }
    let child = p.statement(in_region)?;
    if !p.at_eof() || child.offset != 0 || child.op.len as usize != text.trim_end().len() {
        return None;
    }
    Some(child.op)
}

/// Parses `text` as a sequence of complete statements (offsets relative to `text`), for
/// incremental re-parsing of a run of siblings. Returns `None` when the text is not made
/// of complete statements: a `}` that would close the enclosing region, text left over,
/// or a region left open.
pub fn parse_statement_seq(text: &str, in_region: bool) -> Option<Vec<Child>> {
    let mut p = Parser::new(text);
    let mut out = Vec::new();
    while !p.at_eof() {
        if p.at(TokenKind::RBrace) {
            return None;
        }
        out.push(p.statement(in_region)?);
    }
    if out
        .iter()
        .any(|c| c.op.errors.iter().any(|e| e.message.starts_with("expected '}' to close")))
    {
        return None;
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------
// Incremental re-parsing support, used by `crate::document`. Additive only.
// ---------------------------------------------------------------------------------------

/// Re-parses a run of sibling statements for an incremental update, exactly as the full
/// parse would read them.
///
/// `text` must start at a line start (or at the chunk start), so that it lexes as in the
/// whole document; its tokens before `from` are only context (line breaks, the previous
/// token), and its text from `stop` on is only lookahead context. Statements are read from
/// the first token at or after `from` until the next token starts at or after `stop`, as
/// in a block (`in_region`) or at the top level of a chunk, with the parser `depth`
/// regions deep. Offsets are relative to `text`.
///
/// Returns `None` when the run does not fit between `from` and `stop`: a token straddles
/// either position, a statement ends after `stop`, or the run meets a `}` or a block
/// label, which the enclosing region handles itself.
pub fn reparse_siblings(
    text: &str,
    from: u32,
    stop: u32,
    in_region: bool,
    depth: u32,
) -> Option<Vec<Child>> {
    if straddled(text, from) || straddled(text, stop) {
        return None;
    }
    let mut p = Parser::new(text);
    p.depth = depth;
    while !p.at_eof() && p.peek().start < from {
        p.bump();
    }
    let mut out = Vec::new();
    loop {
        let t = p.peek();
        if t.kind == TokenKind::Eof || t.start >= stop {
            break;
        }
        match t.kind {
            TokenKind::RBrace | TokenKind::CaretId if in_region => return None,
            TokenKind::RBrace => {
                // What `Parser::top_level` does with a stray `}`.
                p.bump();
                let mut op = Op::empty(crate::tree::StmtKind::Error);
                op.len = t.end - t.start;
                op.errors.push(SyntaxError {
                    span: Span::new(0, op.len),
                    message: "unexpected '}' at top level".to_string(),
                    chained: false,
                });
                out.push(Child { offset: t.start, op: Arc::new(op) });
            }
            _ => out.push(p.statement(in_region)?),
        }
    }
    if p.prev_end() > stop {
        return None;
    }
    Some(out)
}

/// Whether a token (comments included) starts before `at` and ends after it. Only the
/// line around `at` is lexed: no token spans a line break.
fn straddled(text: &str, at: u32) -> bool {
    let at = at as usize;
    if at == 0 || at >= text.len() {
        return false;
    }
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let base = line_start as u32;
    let mut toks = Vec::new();
    lexer::lex_into(&text[line_start..line_end], base, &mut toks);
    toks.iter().any(|t| (t.start as usize) < at && (t.end as usize) > at)
}
