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

/// A token cursor over one piece of text (a chunk, or one statement when re-parsing).
pub struct Parser<'s> {
    pub(crate) src: &'s str,
    toks: Vec<Token>,
    pos: usize,
    /// Start of the op being parsed: spans are made relative to it.
    pub(crate) base: u32,
    /// Errors of the op being parsed (relative spans).
    pub(crate) errors: Vec<SyntaxError>,
    /// Set while parsing the custom syntax of an op, to prefix errors like MLIR does
    /// (`custom op 'sdy.mesh' ...`).
    pub(crate) custom_op: Option<&'static str>,
    depth: u32,
    /// Whether the last emitted error started a new failure (for `chained`).
    in_failure: bool,
}

impl<'s> Parser<'s> {
    pub fn new(src: &'s str) -> Parser<'s> {
        let mut toks = Vec::with_capacity(src.len() / 5 + 1);
        lexer::lex_into(src, 0, &mut toks);
        toks.retain(|t| t.kind != TokenKind::Comment);
        Parser {
            src,
            toks,
            pos: 0,
            base: 0,
            errors: Vec::new(),
            custom_op: None,
            depth: 0,
            in_failure: false,
        }
    }

    // ----- cursor -----

    pub(crate) fn nth(&self, n: usize) -> Token {
        match self.toks.get(self.pos + n) {
            Some(t) => *t,
            None => {
                let end = self.src.len() as u32;
                Token { kind: TokenKind::Eof, start: end, end }
            }
        }
    }
    pub(crate) fn peek(&self) -> Token {
        self.nth(0)
    }
    pub(crate) fn kind(&self) -> TokenKind {
        self.peek().kind
    }
    pub(crate) fn nth_kind(&self, n: usize) -> TokenKind {
        self.nth(n).kind
    }
    pub(crate) fn at(&self, kind: TokenKind) -> bool {
        self.kind() == kind
    }
    pub(crate) fn at_eof(&self) -> bool {
        self.pos >= self.toks.len()
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
    pub(crate) fn bump(&mut self) -> Token {
        let t = self.peek();
        if self.pos < self.toks.len() {
            self.pos += 1;
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
            self.toks[self.pos - 1].end
        }
    }
    /// Whether a line break separates the current token from the previous one.
    pub(crate) fn nl_before(&self) -> bool {
        self.nl_before_nth(0)
    }
    pub(crate) fn nl_before_nth(&self, n: usize) -> bool {
        let i = self.pos + n;
        if i == 0 {
            return true;
        }
        let prev_end = match self.toks.get(i - 1) {
            Some(t) => t.end as usize,
            None => return true,
        };
        let start = self.toks.get(i).map_or(self.src.len(), |t| t.start as usize);
        self.src.as_bytes()[prev_end..start].contains(&b'\n')
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
    /// Reports `expected 'X'` (MLIR's wording) at the current token.
    pub(crate) fn error_expected(&mut self, what: &str) {
        let span = self.rel(self.peek());
        self.error(span, format!("expected {what}"));
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
        let mut stack = vec![close];
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
