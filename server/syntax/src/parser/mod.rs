//! The tolerant parser. Every input yields a tree plus errors: a statement that cannot
//! be read becomes an error node, and parsing resumes at the next statement.

mod attr;
mod messages;
mod op;
mod recent;
mod sdy_attr;
mod speculate;
mod stablehlo_form;
mod ty;

use crate::lexer::{self, Token, TokenKind};
use crate::span::Span;
use crate::tree::{Child, Op, Str, SyntaxError};
use messages as msg;
use std::sync::Arc;

pub use op::is_statement_start_kind;
pub use speculate::{parse_top_level, parse_top_level_sequential, parse_top_level_split_at};

/// Maximum bracket nesting the parser descends into; deeper input is reported, not
/// recursed into, so pathological input cannot overflow the stack.
const MAX_DEPTH: u32 = 256;

/// How many tokens past the cursor are always lexed. Lookahead never needs more
/// (a longer look, e.g. at a huge result list, just sees the end of input).
const LOOKAHEAD: usize = 128;

/// A token of the parser's window: the lexer's token plus whether a line break precedes
/// it (the parser asks that often; recording it while lexing is cheapest).
#[derive(Clone, Copy)]
struct WindowToken {
    start: u32,
    end: u32,
    kind: TokenKind,
    nl: bool,
}

impl WindowToken {
    #[inline]
    fn token(self) -> Token {
        Token { kind: self.kind, start: self.start, end: self.end }
    }
}

/// A token cursor over one piece of text (a chunk, or statements when re-parsing).
///
/// Tokens are lexed on demand into a window that is trimmed at statement starts, so
/// parsing never materialises the whole file's tokens. The window always holds at least
/// `LOOKAHEAD` tokens from the cursor on: once the input is exhausted it is padded with
/// end-of-input tokens, so looking ahead is a plain index.
pub struct Parser<'s> {
    pub(crate) src: &'s str,
    scanner: lexer::Scanner<'s>,
    /// The token window; `toks[0]` has the global index `first`.
    toks: Vec<WindowToken>,
    /// The current token, `toks[cur]`, kept at hand: it is read far more than it moves.
    cur_tok: WindowToken,
    first: usize,
    lexed_all: bool,
    /// Window index of the current token.
    cur: usize,
    /// Start of the op being parsed: spans are made relative to it.
    pub(crate) base: u32,
    /// Errors of the op being parsed (relative spans).
    pub(crate) errors: crate::tree::ThinVec<SyntaxError>,
    /// Set while parsing the custom syntax of an op, to prefix errors like MLIR does
    /// (`custom op 'sdy.mesh' ...`).
    pub(crate) custom_op: Option<&'static str>,
    depth: u32,
    /// The deepest `depth + 1` an `enter` checked (0: none), to tell whether a parse
    /// started at depth 0 reads the same at another depth (see `speculate`).
    depth_peak: u32,
    /// A parse of a later part of the text running on another thread (see `speculate`).
    spec: Option<speculate::Pending<'s>>,
    /// How many speculative segments were adopted.
    adopted: u32,
    /// Interned types by spelling (see `tree::Type`).
    types: rustc_hash::FxHashMap<&'s str, Arc<crate::tree::TypeKind>>,
    /// Interned strings too long to be stored inline (op and attribute names).
    strings: rustc_hash::FxHashMap<&'s str, Str>,
    /// The last hits of `types` and `strings`, looked up first.
    recent_types: recent::Recent<'s, Arc<crate::tree::TypeKind>>,
    recent_strings: recent::Recent<'s, Str>,
    /// Elements of the arrays and entries of the dictionaries being read (innermost
    /// last), so that each is stored at its exact size.
    attr_scratch: Vec<crate::tree::Attr>,
    named_scratch: Vec<crate::tree::NamedAttr>,
    /// Ops of the blocks being read (innermost last), likewise.
    child_scratch: Vec<Child>,
    /// Whether the last emitted error started a new failure (for `chained`).
    in_failure: bool,
    /// The tensor types the strict reading of a StableHLO custom form met (see
    /// `stablehlo_form`), which the tolerant reading of the same op then takes as they
    /// are instead of looking their spelling up again.
    pub(crate) form_types: smallvec::SmallVec<[KeptType; 4]>,
}

/// A type read at cursor position `at` of the op starting at `base`, ending at `end`.
pub(crate) struct KeptType {
    pub(crate) at: usize,
    pub(crate) end: usize,
    pub(crate) base: u32,
    pub(crate) ty: crate::tree::Type,
}

/// Tokens lexed per refill of the window.
const BATCH: usize = 1024;

impl<'s> Parser<'s> {
    pub fn new(src: &'s str) -> Parser<'s> {
        Parser::with_scanner(src, lexer::Scanner::new(src))
    }

    fn with_scanner(src: &'s str, scanner: lexer::Scanner<'s>) -> Parser<'s> {
        // Small texts (incremental re-parses) get a small window.
        let capacity = (src.len() / 3).clamp(LOOKAHEAD, BATCH) + LOOKAHEAD + BATCH / 4;
        let mut p = Parser {
            src,
            scanner,
            toks: Vec::with_capacity(capacity),
            first: 0,
            cur_tok: WindowToken { start: 0, end: 0, kind: TokenKind::Eof, nl: true },
            lexed_all: false,
            cur: 0,
            base: 0,
            errors: Default::default(),
            custom_op: None,
            depth: 0,
            depth_peak: 0,
            spec: None,
            adopted: 0,
            types: rustc_hash::FxHashMap::default(),
            strings: rustc_hash::FxHashMap::default(),
            recent_types: recent::Recent::new(),
            recent_strings: recent::Recent::new(),
            attr_scratch: Vec::new(),
            named_scratch: Vec::new(),
            child_scratch: Vec::new(),
            in_failure: false,
            form_types: smallvec::SmallVec::new(),
        };
        p.refill();
        p.cur_tok = p.window_token(0);
        p
    }

    /// Lexes more tokens when fewer than `LOOKAHEAD` remain past the cursor.
    #[inline]
    fn refill(&mut self) {
        if self.toks.len() < self.cur + LOOKAHEAD {
            self.lex_batch();
        }
    }

    #[inline(never)]
    fn lex_batch(&mut self) {
        if self.lexed_all {
            return;
        }
        let target = self.toks.len() + BATCH;
        let toks = &mut self.toks;
        let more = self.scanner.scan(|t, nl| {
            toks.push(WindowToken { start: t.start, end: t.end, kind: t.kind, nl });
            toks.len() < target
        });
        if !more {
            self.lexed_all = true;
            // The end-of-input padding. The first one is preceded by a line break when
            // the text after the last token has one (or there is no token).
            let end = self.src.len() as u32;
            let nl = self.scanner.line_break_pending();
            for i in 0..LOOKAHEAD {
                self.toks.push(WindowToken {
                    start: end,
                    end,
                    kind: TokenKind::Eof,
                    nl: nl || i > 0,
                });
            }
        }
    }

    /// Forgets tokens before the current one (keeping the previous token): called at
    /// statement starts, where the parser never backtracks across.
    pub(crate) fn trim_window(&mut self) {
        if self.cur > 4096 {
            let drop = self.cur - 1;
            self.toks.drain(..drop);
            self.first += drop;
            self.cur -= drop;
        }
    }

    // ----- cursor -----

    /// Where the token `n` places ahead sits in the window.
    #[inline]
    fn window_index(&self, n: usize) -> usize {
        self.cur + n
    }

    /// The token `n` places ahead. Past `LOOKAHEAD` it is always end of input, so what
    /// the parser sees never depends on how far the lexer happens to have run.
    #[inline]
    pub(crate) fn nth(&self, n: usize) -> Token {
        if n == 0 {
            return self.cur_tok.token();
        }
        match self.toks.get(self.window_index(n)) {
            Some(t) if n < LOOKAHEAD => t.token(),
            _ => {
                let end = self.src.len() as u32;
                Token { kind: TokenKind::Eof, start: end, end }
            }
        }
    }
    /// The current token's kind and whether a line break precedes it.
    #[inline]
    pub(crate) fn peek_kind_nl(&self) -> (TokenKind, bool) {
        (self.cur_tok.kind, self.cur_tok.nl)
    }
    #[inline]
    pub(crate) fn peek(&self) -> Token {
        self.nth(0)
    }
    #[inline]
    pub(crate) fn kind(&self) -> TokenKind {
        self.peek().kind
    }
    #[inline]
    pub(crate) fn nth_kind(&self, n: usize) -> TokenKind {
        self.nth(n).kind
    }
    #[inline]
    pub(crate) fn at(&self, kind: TokenKind) -> bool {
        self.kind() == kind
    }
    #[inline]
    pub(crate) fn at_eof(&self) -> bool {
        self.kind() == TokenKind::Eof
    }
    #[inline]
    pub(crate) fn text(&self, tok: Token) -> &'s str {
        tok.text(self.src)
    }
    #[inline]
    pub(crate) fn peek_text(&self) -> &'s str {
        self.text(self.peek())
    }
    /// Whether the current token is the bare keyword `kw`.
    #[inline]
    pub(crate) fn at_keyword(&self, kw: &str) -> bool {
        // On bytes: a `str` slice would check both ends for character boundaries.
        let t = self.cur_tok;
        t.kind == TokenKind::BareId
            && self.src.as_bytes().get(t.start as usize..t.end as usize) == Some(kw.as_bytes())
    }
    #[inline]
    pub(crate) fn bump(&mut self) -> Token {
        let t = self.peek();
        if t.kind != TokenKind::Eof {
            self.cur += 1;
            self.refill();
            self.cur_tok = self.window_token(self.cur);
        }
        t
    }
    #[inline]
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
    #[inline]
    pub(crate) fn prev_end(&self) -> u32 {
        match self.cur.checked_sub(1) {
            Some(i) => self.toks.get(i).map_or(0, |t| t.end),
            None => 0,
        }
    }
    /// Whether a line break separates the current token from the previous one.
    #[inline]
    pub(crate) fn nl_before(&self) -> bool {
        self.nl_before_nth(0)
    }
    #[inline]
    pub(crate) fn nl_before_nth(&self, n: usize) -> bool {
        if n == 0 {
            return self.cur_tok.nl;
        }
        match self.toks.get(self.window_index(n)) {
            Some(t) if n < LOOKAHEAD => t.nl,
            // As `nth`: past the lookahead is the end of input.
            _ => true,
        }
    }
    /// The cursor position, to `restore` within the same statement.
    pub(crate) fn save(&self) -> usize {
        self.first + self.cur
    }
    pub(crate) fn restore(&mut self, pos: usize) {
        // Positions before the window cannot occur (it is trimmed only at statement
        // starts); clamped all the same rather than trusted.
        self.cur = pos.saturating_sub(self.first).min(self.toks.len().saturating_sub(1));
        self.cur_tok = self.window_token(self.cur);
    }
    /// For a group opened by the token `n` places ahead that holds no bracket (the
    /// common `<16x128xf32>`): how many places ahead its `close` is, and the closer's end.
    /// Looks over the lexed tokens only; `None` if they do not settle it.
    pub(crate) fn plain_group_close(&self, n: usize, close: TokenKind) -> Option<(usize, u32)> {
        let open = self.cur + n;
        for (k, t) in self.toks.get(open + 1..)?.iter().enumerate() {
            if t.kind == close {
                return Some((n + 1 + k, t.end));
            }
            if is_bracket(t.kind) || t.kind == TokenKind::Eof {
                return None;
            }
        }
        None
    }

    /// Moves the cursor `n` tokens forward, as `n` calls of `bump` would.
    pub(crate) fn advance(&mut self, n: usize) {
        self.jump_to(self.cur + n);
    }

    /// Moves the cursor forward to window index `i` (at most to the first end-of-input
    /// token), as that many `bump`s would.
    #[inline]
    fn jump_to(&mut self, i: usize) {
        while self.cur < i && self.cur_tok.kind != TokenKind::Eof {
            // Never past the window: `refill` keeps `LOOKAHEAD` tokens ahead of `cur`.
            let step = (i - self.cur).min(LOOKAHEAD);
            self.cur += step;
            self.refill();
            self.cur_tok = self.window_token(self.cur);
        }
    }
    /// The window token at `i`; end of input past the window.
    #[inline]
    fn window_token(&self, i: usize) -> WindowToken {
        match self.toks.get(i) {
            Some(&t) => t,
            None => {
                let end = self.src.len() as u32;
                WindowToken { start: end, end, kind: TokenKind::Eof, nl: true }
            }
        }
    }

    /// `s` as a tree string; one shared copy per parse when too long to be inline.
    #[inline]
    pub(crate) fn intern(&mut self, s: &'s str) -> Str {
        if s.len() <= Str::INLINE_LIMIT {
            return Str::from(s);
        }
        if let Some(v) = self.recent_strings.get(s.as_bytes()) {
            return v;
        }
        let v = self.strings.entry(s).or_insert_with(|| Str::from(s)).clone();
        self.recent_strings.put(s.as_bytes(), v.clone());
        v
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
            message = msg::custom_op(op, message);
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
        let pos = if self.save() == 0 { t.start } else { self.prev_end().max(self.base) };
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
        self.depth_peak = self.depth_peak.max(self.depth + 1);
        if self.depth >= MAX_DEPTH {
            let span = self.rel(self.peek());
            self.error(span, msg::NESTING_TOO_DEEP);
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
        // Most groups hold no bracket (`loc(#loc3)`, `<16x128xf32>`): their first closer
        // ends them.
        if let Some((n, _)) = self.plain_group_close(0, close) {
            self.advance(n + 1);
            return;
        }
        self.bump();
        // The tokens are looked over in the lexed window, the cursor left in place, and it
        // jumps once past the closer (or to where the window ends, then the next part of
        // the window is looked over): most groups (`loc(#loc3)`, `<16x128xf32>`,
        // `loc("name"(#loc3))`) are skipped without stepping the cursor token by token.
        // The closer wanted next, and those of the enclosing groups opened since.
        let mut want = close;
        let mut outer: smallvec::SmallVec<[TokenKind; 16]> = smallvec::SmallVec::new();
        loop {
            let mut i = self.cur;
            while let Some(t) = self.toks.get(i) {
                let k = t.kind;
                i += 1;
                let closed = if k == want {
                    true
                } else {
                    match k {
                        TokenKind::Eof => {
                            self.jump_to(i - 1);
                            return;
                        }
                        TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => {
                            outer.push(want);
                            want = match k {
                                TokenKind::LParen => TokenKind::RParen,
                                TokenKind::LBracket => TokenKind::RBracket,
                                _ => TokenKind::RBrace,
                            };
                            false
                        }
                        TokenKind::Less
                            if open == TokenKind::Less || want == TokenKind::Greater =>
                        {
                            outer.push(want);
                            want = TokenKind::Greater;
                            false
                        }
                        // A closer of an outer group: the groups inside it were not closed;
                        // it closes them and itself.
                        TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace
                            if outer.contains(&k) =>
                        {
                            while let Some(w) = outer.pop() {
                                if w == k {
                                    break;
                                }
                            }
                            true
                        }
                        _ => false,
                    }
                };
                if closed {
                    match outer.pop() {
                        Some(w) => want = w,
                        None => {
                            self.jump_to(i);
                            return;
                        }
                    }
                }
            }
            // The window ends inside the group: move there (which lexes more) and go on.
            self.jump_to(i);
        }
    }
}

/// Whether `k` opens or closes a bracketed group.
#[inline]
fn is_bracket(k: TokenKind) -> bool {
    matches!(
        k,
        TokenKind::LParen
            | TokenKind::RParen
            | TokenKind::LBracket
            | TokenKind::RBracket
            | TokenKind::LBrace
            | TokenKind::RBrace
            | TokenKind::Less
            | TokenKind::Greater
    )
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
    if out.iter().any(|c| c.op.errors.iter().any(|e| e.message.starts_with(msg::UNCLOSED_REGION))) {
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
                    message: msg::BRACE_AT_TOP_LEVEL.to_string(),
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
