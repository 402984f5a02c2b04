//! The lexer's side: tokens the tree does not cover, classified line by line, merged
//! with the tree's.

use super::{intersects, SemToken, TokenType, DECLARATION, SUB_AXIS};
use crate::model::Model;
use sdy_syntax::lexer::{Token, TokenKind};
use sdy_syntax::Span;

/// Words written as `key=value` in sdy custom syntax (keywords, not attribute names).
const SDY_KEYS: &[&str] = &[
    "replicated",
    "unreduced",
    "device_ids",
    "in_shardings",
    "out_shardings",
    "manual_axes",
    "out_sharding",
    "sharding",
    "allowed_direction",
    "group_id",
];

/// Merges the tree's tokens (sorted) into the lexer's, line by line: a lexer token the
/// tree covers (even in part) gives way; the others are classified on their own.
pub(super) struct Merger<'a, S> {
    pub(super) model: &'a Model,
    pub(super) src: &'a str,
    pub(super) tree: &'a [SemToken],
    /// The next tree token.
    pub(super) ti: usize,
    pub(super) range: Span,
    pub(super) sink: S,
    /// Where the last token given to `sink` ends.
    pub(super) last_end: u32,
}

impl<S: FnMut(SemToken)> Merger<'_, S> {
    fn push(&mut self, t: SemToken) {
        if self.last_end <= t.span.start && intersects(t.span, self.range) {
            self.last_end = t.span.end;
            (self.sink)(t);
        }
    }

    /// The tokens of whole lines, split into lines.
    pub(super) fn lines(&mut self, toks: &[Token]) {
        let mut start = 0;
        for i in 1..toks.len() {
            if !same_line(self.src, toks[i - 1].end, toks[i].start) {
                self.line(&toks[start..i]);
                start = i;
            }
        }
        if start < toks.len() {
            self.line(&toks[start..]);
        }
    }

    fn line(&mut self, toks: &[Token]) {
        let lx = Lexed { model: self.model, src: self.src, toks };
        let mut i = 0;
        while i < toks.len() {
            let tok = toks[i];
            while self.ti < self.tree.len() && self.tree[self.ti].span.start < tok.end {
                self.push(self.tree[self.ti]);
                self.ti += 1;
            }
            let mut used = 1;
            if self.last_end <= tok.start {
                let next_tree = self.tree.get(self.ti).map_or(u32::MAX, |t| t.span.start);
                if let Some((t, n)) = lx.classify(i, next_tree) {
                    self.push(t);
                    used = n;
                }
            }
            i += used;
        }
    }

    pub(super) fn finish(mut self) {
        while self.ti < self.tree.len() {
            self.push(self.tree[self.ti]);
            self.ti += 1;
        }
    }
}

/// Whether no line break separates byte `a` from byte `b`.
pub(super) fn same_line(src: &str, a: u32, b: u32) -> bool {
    let gap = src.as_bytes().get(a as usize..b as usize).unwrap_or(&[]);
    !gap.iter().any(|&c| c == b'\n' || c == b'\r')
}

/// Classifies the lexer tokens of one line by their kind, text and neighbours.
#[derive(Clone, Copy)]
struct Lexed<'a> {
    model: &'a Model,
    src: &'a str,
    /// The line's tokens.
    toks: &'a [Token],
}

impl Lexed<'_> {
    fn text(&self, t: Token) -> &str {
        self.src.get(t.start as usize..t.end as usize).unwrap_or("")
    }

    fn prev(&self, i: usize) -> Option<Token> {
        self.toks.get(i.checked_sub(1)?).copied()
    }

    fn next(&self, i: usize) -> Option<Token> {
        self.toks.get(i + 1).copied()
    }

    fn next_is(&self, i: usize, kind: TokenKind) -> bool {
        self.next(i).is_some_and(|n| n.kind == kind)
    }

    /// The token (or run of tokens, for a type such as `tensor<8xf32>`) starting with
    /// token `i`, and how many lexer tokens it takes. A run never reaches `limit` (where
    /// the tree's next token starts).
    fn classify(&self, i: usize, limit: u32) -> Option<(SemToken, usize)> {
        let t = self.toks[i];
        let one = |ty: TokenType, mods: u32| {
            Some((SemToken { span: Span::new(t.start, t.end), ty, mods }, 1))
        };
        // A definition line: `#alias = ...`, `!alias = ...`.
        let defines = || self.prev(i).is_none() && self.next_is(i, TokenKind::Equal);
        let decl = |yes: bool| if yes { DECLARATION } else { 0 };
        match t.kind {
            TokenKind::Comment => one(TokenType::Comment, 0),
            TokenKind::String => match self.axis_like(i) {
                Some(mods) => one(TokenType::Property, mods),
                None => one(TokenType::String, 0),
            },
            TokenKind::UnterminatedString => one(TokenType::String, 0),
            TokenKind::Integer | TokenKind::HexInteger | TokenKind::Float => {
                one(TokenType::Number, 0)
            }
            TokenKind::HashId => match self.prev(i) {
                // `#1` of `%0#1`.
                Some(p) if p.kind == TokenKind::ValueId && p.end == t.start => {
                    one(TokenType::Variable, 0)
                }
                _ => one(TokenType::Decorator, decl(defines())),
            },
            TokenKind::BangId => one(TokenType::Type, decl(defines())),
            TokenKind::ValueId => one(TokenType::Variable, decl(self.next_is(i, TokenKind::Equal))),
            TokenKind::CaretId => one(TokenType::Keyword, 0),
            TokenKind::Question => one(TokenType::Operator, 0),
            TokenKind::AtId => {
                let name = self.text(t).trim_start_matches('@').trim_matches('"');
                if self.model.mesh(name).is_some() {
                    return one(TokenType::Namespace, 0);
                }
                if self.model.funcs.contains_key(name) {
                    return one(TokenType::Function, 0);
                }
                match self.prev(i).map(|p| (p.kind, self.text(p))) {
                    Some((TokenKind::BareId, "module" | "builtin.module" | "sdy.mesh")) => {
                        one(TokenType::Namespace, DECLARATION)
                    }
                    Some((TokenKind::BareId, "func.func" | "private" | "public" | "nested")) => {
                        one(TokenType::Function, DECLARATION)
                    }
                    Some((TokenKind::Less, _)) => one(TokenType::Namespace, 0),
                    _ => one(TokenType::Function, 0),
                }
            }
            TokenKind::BareId => {
                let w = self.text(t);
                if is_shaped_type(w) && self.next(i).is_some_and(|n| n.kind == TokenKind::Less) {
                    if let Some(end) = self.type_end(i).filter(|&e| self.toks[e].end <= limit) {
                        let span = Span::new(t.start, self.toks[end].end);
                        return Some((
                            SemToken { span, ty: TokenType::Type, mods: 0 },
                            end - i + 1,
                        ));
                    }
                }
                if is_shaped_type(w) || is_scalar_type(w) {
                    one(TokenType::Type, 0)
                } else if self.next_is(i, TokenKind::Equal) {
                    let ty = if SDY_KEYS.contains(&w) {
                        TokenType::Keyword
                    } else {
                        TokenType::Decorator
                    };
                    one(ty, 0)
                } else if is_priority(w)
                    && self.prev(i).is_some_and(|p| p.kind == TokenKind::RBrace && p.end == t.start)
                {
                    one(TokenType::Modifier, 0)
                } else if w.starts_with(|c: char| c.is_ascii_uppercase()) {
                    one(TokenType::EnumMember, 0)
                } else {
                    one(TokenType::Keyword, 0)
                }
            }
            _ => None,
        }
    }

    /// Whether string `i`, which the tree did not read (a sharding or mesh being
    /// typed), is written as an axis: an entry of a `{...}` list (`{"x", "y":(1)2}`;
    /// dictionary keys are followed by `=`), or a mesh's `["x"=2, ...]`. The modifiers
    /// if so.
    fn axis_like(&self, i: usize) -> Option<u32> {
        use TokenKind::{Colon, Comma, Equal, LBrace, LBracket, Less, RBrace};
        let prev = self.prev(i)?.kind;
        let next = self.next(i).map_or(TokenKind::Eof, |n| n.kind);
        // What the string is if it is in a `{...}` list, or in a mesh's `[...]`.
        let (list, mods) = match (prev, next) {
            (LBrace | Comma, Colon) => (LBrace, SUB_AXIS),
            (LBrace | Comma, RBrace | Comma) => (LBrace, 0),
            (LBracket | Comma, Equal) => (LBracket, DECLARATION),
            _ => return None,
        };
        let o = self.open_bracket(i)?;
        let in_mesh = || o > 0 && self.toks[o - 1].kind == Less;
        (self.toks[o].kind == list && (list == LBrace || in_mesh())).then_some(mods)
    }

    /// The innermost bracket of the line open before token `i` (line-local, so that a
    /// range, lexed from its first line's start, sees the same as the whole text). A
    /// closer that does not match is skipped over (the text may be half typed).
    fn open_bracket(&self, i: usize) -> Option<usize> {
        let mut closers: Vec<TokenKind> = Vec::new();
        for j in (0..i).rev() {
            let closer = match self.toks[j].kind {
                k @ (TokenKind::RParen
                | TokenKind::RBracket
                | TokenKind::RBrace
                | TokenKind::Greater) => {
                    closers.push(k);
                    continue;
                }
                TokenKind::LParen => TokenKind::RParen,
                TokenKind::LBracket => TokenKind::RBracket,
                TokenKind::LBrace => TokenKind::RBrace,
                TokenKind::Less => TokenKind::Greater,
                _ => continue,
            };
            match closers.last() {
                None => return Some(j),
                Some(&c) if c == closer => {
                    closers.pop();
                }
                Some(_) => {}
            }
        }
        None
    }

    /// The index of the `>` closing the `<` after token `i`, on the same line.
    fn type_end(&self, i: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut j = i + 1;
        while j < self.toks.len() {
            match self.toks[j].kind {
                TokenKind::Less => depth += 1,
                TokenKind::Greater => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            }
            j += 1;
        }
        None
    }
}

fn is_shaped_type(w: &str) -> bool {
    matches!(w, "tensor" | "memref" | "vector" | "tuple" | "complex")
}

/// Builtin scalar types: `f32`, `bf16`, `i1`, `si8`, `ui32`, `index`, `f8E4M3FN`, ...
fn is_scalar_type(w: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(w, "index" | "none" | "bf16" | "tf32" | "f16" | "f32" | "f64" | "f80" | "f128")
        || w.strip_prefix("si").or_else(|| w.strip_prefix("ui")).is_some_and(digits)
        || w.strip_prefix('i').is_some_and(digits)
        || ["f4E", "f6E", "f8E"].iter().any(|p| w.starts_with(p))
}

/// `p0`, `p12`.
fn is_priority(w: &str) -> bool {
    w.len() > 1 && w.starts_with('p') && w[1..].bytes().all(|b| b.is_ascii_digit())
}
