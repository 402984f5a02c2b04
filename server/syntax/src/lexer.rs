//! The MLIR lexer, covering the textual syntax that appears in sdy files.
//!
//! MLIR has no token that spans a line break (strings use `\0A` escapes, there are no
//! block comments), so every line start is a token boundary: lexing can restart at any
//! line start with no state, which is what incremental re-lexing relies on.
//!
//! The tokens are defined by the logos patterns on [`TokenKind`]. Lexing itself runs a
//! hand-written [`Scanner`] that produces exactly the tokens logos would (same kinds,
//! same spans, errors included; property tests compare the two on arbitrary text and
//! real files) about 1.6 times as fast (`examples/lex_stats.rs`), and notes line breaks
//! on the way, which the parser needs.

use logos::Logos;

/// Kinds of tokens. Values that MLIR splits later (e.g. `8x8xf32` inside a shape) are
/// re-read from the text by the parser; the lexer stays context-free.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[logos(skip r"[ \t\r\n\x0C]+")]
pub enum TokenKind {
    #[regex(r"//[^\n]*", allow_greedy = true)]
    Comment,
    /// Bare identifiers and keywords, including dotted op names (`stablehlo.add`).
    #[regex(r"[A-Za-z_][A-Za-z0-9_$.]*")]
    BareId,
    /// `%name` (results and uses); a following `#N` / `:N` are separate tokens.
    #[regex(r"%[A-Za-z0-9_$.\-]+")]
    ValueId,
    /// `^bb0`
    #[regex(r"\^[A-Za-z0-9_$.\-]+")]
    CaretId,
    /// `@sym` or `@"quoted sym"`
    #[regex(r"@[A-Za-z_][A-Za-z0-9_$.\-]*")]
    #[regex(r#"@"([^"\\\n]|\\[^\n])*""#)]
    AtId,
    /// `#attr`, `#alias`, `#dialect.attr`, and result numbers `#1` in `%0#1`.
    #[regex(r"#[A-Za-z0-9_$.\-]+")]
    HashId,
    /// `!type`, `!dialect.type`
    #[regex(r"![A-Za-z0-9_$.\-]+")]
    BangId,
    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    String,
    /// A string that reaches the end of the line without its closing quote.
    #[regex(r#""([^"\\\n]|\\[^\n])*"#, priority = 1)]
    UnterminatedString,
    #[regex(r"[0-9]+")]
    Integer,
    #[regex(r"0x[0-9A-Fa-f]+")]
    HexInteger,
    #[regex(r"[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?")]
    Float,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("<")]
    Less,
    #[token(">")]
    Greater,
    #[token(",")]
    Comma,
    #[token("=")]
    Equal,
    #[token(":")]
    Colon,
    #[token("::")]
    ColonColon,
    #[token("->")]
    Arrow,
    #[token("?")]
    Question,
    #[token("...")]
    Ellipsis,
    #[token("*")]
    Star,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("|")]
    Pipe,
    /// `{-#` opening the trailing resource section.
    #[token("{-#")]
    FileMetadataBegin,
    /// `#-}` closing it.
    #[token("#-}")]
    FileMetadataEnd,
    /// Any character the lexer does not understand.
    Error,
    /// Synthesized at the end of input; never produced by logos.
    Eof,
}

/// A token: its kind and byte range in the lexed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub start: u32,
    pub end: u32,
}

impl Token {
    #[inline]
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start as usize..self.end as usize]
    }
    pub fn len(&self) -> u32 {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// Lexes `text`, whose first byte sits at `base` in the document, appending to `out`.
/// Comments are kept (the caller decides whether to skip them).
pub fn lex_into(text: &str, base: u32, out: &mut Vec<Token>) {
    Scanner::new(text).scan_tokens::<true>(|t, _| {
        out.push(Token { kind: t.kind, start: base + t.start, end: base + t.end });
        true
    });
}

/// Lexes with the logos-generated lexer: the definition the [`Scanner`] is tested against.
pub fn lex_with_logos(text: &str) -> Vec<Token> {
    let mut lexer = TokenKind::lexer(text);
    let mut out = Vec::new();
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        let kind = result.unwrap_or(TokenKind::Error);
        out.push(Token { kind, start: span.start as u32, end: span.end as u32 });
    }
    out
}

// Byte classes of the scanner.
const WS: u8 = 1; // skipped: ` \t\r\n\x0C`
const ID: u8 = 2; // continues a bare identifier: `[A-Za-z0-9_$.]`
const SUFFIX: u8 = 4; // continues `%x`, `^x`, `#x`, `!x`, `@x`: `[A-Za-z0-9_$.\-]`
const DIGIT: u8 = 8;
const HEX: u8 = 16;
const ID_START: u8 = 32; // `[A-Za-z_]`

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut k = 0;
        if matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0C) {
            k |= WS;
        }
        let alpha = c.is_ascii_alphabetic() || c == b'_';
        if alpha {
            k |= ID_START;
        }
        if alpha || c.is_ascii_digit() || c == b'$' || c == b'.' {
            k |= ID | SUFFIX;
        }
        if c == b'-' {
            k |= SUFFIX;
        }
        if c.is_ascii_digit() {
            k |= DIGIT;
        }
        if c.is_ascii_hexdigit() {
            k |= HEX;
        }
        t[b] = k;
        b += 1;
    }
    t
};

/// One-character tokens that begin no longer token: their kind by byte.
static SINGLE: [Option<TokenKind>; 256] = {
    let mut t = [None; 256];
    t[b'(' as usize] = Some(TokenKind::LParen);
    t[b')' as usize] = Some(TokenKind::RParen);
    t[b'[' as usize] = Some(TokenKind::LBracket);
    t[b']' as usize] = Some(TokenKind::RBracket);
    t[b'}' as usize] = Some(TokenKind::RBrace);
    t[b'<' as usize] = Some(TokenKind::Less);
    t[b'>' as usize] = Some(TokenKind::Greater);
    t[b',' as usize] = Some(TokenKind::Comma);
    t[b'=' as usize] = Some(TokenKind::Equal);
    t[b'?' as usize] = Some(TokenKind::Question);
    t[b'*' as usize] = Some(TokenKind::Star);
    t[b'+' as usize] = Some(TokenKind::Plus);
    t[b'|' as usize] = Some(TokenKind::Pipe);
    t
};

/// Whether a byte of `w` equals `b`: the high bit of the lowest such byte is set in the
/// result (higher bytes may show false positives, which the callers do not look at).
#[inline]
fn has_byte(w: u64, b: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = w ^ (ONES * b as u64);
    x.wrapping_sub(ONES) & !x & (ONES << 7)
}

/// The hand-written lexer: the same tokens as the logos patterns of [`TokenKind`]
/// (longest match; where no pattern matches, an `Error` token over what a pattern could
/// still have read, or over one character).
pub struct Scanner<'s> {
    src: &'s str,
    pos: usize,
    /// Whether a line break was skipped since the last non-comment token.
    nl: bool,
}

impl<'s> Scanner<'s> {
    pub fn new(src: &'s str) -> Scanner<'s> {
        Scanner { src, pos: 0, nl: true }
    }

    /// A scanner starting at `line_start` (0 or just after a `\n`): it lexes as a
    /// scanner from the start of `src` would from there, since no token spans a line.
    pub fn at_line(src: &'s str, line_start: usize) -> Scanner<'s> {
        debug_assert!(line_start == 0 || src.as_bytes()[line_start - 1] == b'\n');
        Scanner { src, pos: line_start, nl: true }
    }

    /// Scans on, skipping comments, handing each token and whether a line break precedes
    /// it to `emit` until `emit` returns false (then returns true) or the text ends (then
    /// returns false). The parser's hot loop: its state stays in registers.
    #[inline]
    pub fn scan(&mut self, emit: impl FnMut(Token, bool) -> bool) -> bool {
        self.scan_tokens::<false>(emit)
    }

    /// As [`Scanner::scan`], handing comments to `emit` too when `COMMENTS`; a comment
    /// does not count as the token a line break precedes.
    #[inline]
    fn scan_tokens<const COMMENTS: bool>(
        &mut self,
        mut emit: impl FnMut(Token, bool) -> bool,
    ) -> bool {
        let bytes = self.src.as_bytes();
        let mut i = self.pos;
        let mut nl = self.nl;
        loop {
            let Some(&b) = bytes.get(i) else {
                (self.pos, self.nl) = (i, nl);
                return false;
            };
            let class = CLASS[b as usize];
            if class & WS != 0 {
                if b == b'\n' {
                    nl = true;
                }
                i += 1;
                continue;
            }
            let start = i;
            // The common shapes first, without the general dispatch: one-character
            // tokens (half of all tokens) and bare identifiers.
            let kind = if let Some(k) = SINGLE[b as usize] {
                i += 1;
                k
            } else if class & ID_START != 0 {
                i = self.skip_class(i + 1, ID);
                TokenKind::BareId
            } else {
                let (k, end) = self.token_at(start, b);
                i = end;
                if k == TokenKind::Comment {
                    if COMMENTS {
                        let t = Token { kind: k, start: start as u32, end: end as u32 };
                        if !emit(t, nl) {
                            (self.pos, self.nl) = (i, nl);
                            return true;
                        }
                    }
                    continue;
                }
                k
            };
            let go = emit(Token { kind, start: start as u32, end: i as u32 }, nl);
            nl = false;
            if !go {
                (self.pos, self.nl) = (i, nl);
                return true;
            }
        }
    }

    /// Whether a line break follows the last token that is not a comment (true when
    /// there is none).
    pub fn line_break_pending(&self) -> bool {
        self.nl
    }

    /// Byte at `i`, or 0 past the end (0 continues no token).
    #[inline]
    fn at(&self, i: usize) -> u8 {
        self.src.as_bytes().get(i).copied().unwrap_or(0)
    }

    /// The end of the run of bytes of `class` from `i`.
    #[inline]
    fn skip_class(&self, mut i: usize, class: u8) -> usize {
        let bytes = self.src.as_bytes();
        // Eight bytes at a time while eight remain: a fixed-size chunk is checked without
        // a bounds check per byte (identifiers and shapes are most of the text).
        while let Some(chunk) = bytes.get(i..i + 8).and_then(|c| <&[u8; 8]>::try_from(c).ok()) {
            match chunk.iter().position(|&b| CLASS[b as usize] & class == 0) {
                Some(k) => return i + k,
                None => i += 8,
            }
        }
        while let Some(&b) = bytes.get(i) {
            if CLASS[b as usize] & class == 0 {
                break;
            }
            i += 1;
        }
        i
    }

    /// The token starting at `start` (whose first byte is `b`): its kind and end. Every
    /// token shape is here; `scan_tokens` reads the commonest ones before calling it
    /// (without these arms the compiler lays the dispatch out worse: 4% more
    /// instructions per parse).
    #[inline]
    fn token_at(&self, start: usize, b: u8) -> (TokenKind, usize) {
        use TokenKind as K;
        let next = self.at(start + 1);
        let single = |k: TokenKind| (k, start + 1);
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => (K::BareId, self.skip_class(start + 1, ID)),
            b'%' | b'^' | b'#' | b'!' => {
                if b == b'#' && next == b'-' && self.at(start + 2) == b'}' {
                    return (K::FileMetadataEnd, start + 3);
                }
                if CLASS[next as usize] & SUFFIX == 0 {
                    return single(K::Error);
                }
                let kind = match b {
                    b'%' => K::ValueId,
                    b'^' => K::CaretId,
                    b'#' => K::HashId,
                    _ => K::BangId,
                };
                (kind, self.skip_class(start + 2, SUFFIX))
            }
            b'@' => {
                if CLASS[next as usize] & ID_START != 0 {
                    (K::AtId, self.skip_class(start + 2, SUFFIX))
                } else if next == b'"' {
                    match self.quoted(start + 2) {
                        Ok(end) => (K::AtId, end),
                        // No pattern matches: the error covers what was read.
                        Err((_, dead)) => (K::Error, dead),
                    }
                } else {
                    single(K::Error)
                }
            }
            b'"' => match self.quoted(start + 1) {
                Ok(end) => (K::String, end),
                Err((last_unit, _)) => (K::UnterminatedString, last_unit),
            },
            b'0'..=b'9' => self.number(start),
            b'(' => single(K::LParen),
            b')' => single(K::RParen),
            b'[' => single(K::LBracket),
            b']' => single(K::RBracket),
            b'{' if next == b'-' && self.at(start + 2) == b'#' => (K::FileMetadataBegin, start + 3),
            b'{' => single(K::LBrace),
            b'}' => single(K::RBrace),
            b'<' => single(K::Less),
            b'>' => single(K::Greater),
            b',' => single(K::Comma),
            b'=' => single(K::Equal),
            b':' if next == b':' => (K::ColonColon, start + 2),
            b':' => single(K::Colon),
            b'-' if next == b'>' => (K::Arrow, start + 2),
            b'-' => single(K::Minus),
            b'?' => single(K::Question),
            b'*' => single(K::Star),
            b'+' => single(K::Plus),
            b'|' => single(K::Pipe),
            b'.' => {
                // Only `...` is a token; `.` and `..` are errors over what was read.
                let dots = if next == b'.' { 2 } else { 1 };
                if dots == 2 && self.at(start + 2) == b'.' {
                    (K::Ellipsis, start + 3)
                } else {
                    (K::Error, start + dots)
                }
            }
            b'/' if next == b'/' => {
                let rest = &self.src.as_bytes()[start..];
                let len = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                (K::Comment, start + len)
            }
            _ => {
                // One character that starts no token.
                let first = self.src.get(start..).and_then(|s| s.chars().next());
                let len = first.map_or(1, char::len_utf8);
                (K::Error, start + len)
            }
        }
    }

    /// The body of a quoted string from `i` (just after the opening quote). `Ok(end)` past
    /// the closing quote; otherwise `Err((end of the last complete character or escape,
    /// where reading stopped))` at a line break or the end of the text.
    #[inline]
    fn quoted(&self, mut i: usize) -> Result<usize, (usize, usize)> {
        let bytes = self.src.as_bytes();
        loop {
            // Plain characters eight at a time (`loc("...")` strings are long).
            while let Some(word) = bytes.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
                let w = u64::from_le_bytes(word);
                let special = has_byte(w, b'"') | has_byte(w, b'\\') | has_byte(w, b'\n');
                if special != 0 {
                    i += special.trailing_zeros() as usize / 8;
                    break;
                }
                i += 8;
            }
            match bytes.get(i) {
                Some(b'"') => return Ok(i + 1),
                Some(b'\\') => match bytes.get(i + 1) {
                    // An escape takes the next character, whatever it is but a line break
                    // (its continuation bytes, if any, are read as plain characters).
                    Some(&c) if c != b'\n' => i += 2,
                    _ => return Err((i, i + 1)),
                },
                Some(b'\n') | None => return Err((i, i)),
                Some(_) => i += 1,
            }
        }
    }

    /// An integer, hex integer or float at `start` (a digit).
    #[inline]
    fn number(&self, start: usize) -> (TokenKind, usize) {
        if self.at(start) == b'0'
            && self.at(start + 1) == b'x'
            && CLASS[self.at(start + 2) as usize] & HEX != 0
        {
            return (TokenKind::HexInteger, self.skip_class(start + 3, HEX));
        }
        let int_end = self.skip_class(start + 1, DIGIT);
        if self.at(int_end) != b'.' {
            return (TokenKind::Integer, int_end);
        }
        let frac_end = self.skip_class(int_end + 1, DIGIT);
        // An exponent only counts with at least one digit.
        if matches!(self.at(frac_end), b'e' | b'E') {
            let sign = matches!(self.at(frac_end + 1), b'+' | b'-') as usize;
            let digits = frac_end + 1 + sign;
            if CLASS[self.at(digits) as usize] & DIGIT != 0 {
                return (TokenKind::Float, self.skip_class(digits + 1, DIGIT));
            }
        }
        (TokenKind::Float, frac_end)
    }
}

/// Lexes a whole text (positions relative to its start).
pub fn lex(text: &str) -> Vec<Token> {
    let mut out = Vec::with_capacity(text.len() / 4);
    lex_into(text, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check(src: &str, expect: Expect) {
        let toks = lex(src);
        let rendered: Vec<String> =
            toks.iter().map(|t| format!("{:?} {:?}", t.kind, t.text(src))).collect();
        expect.assert_eq(&rendered.join("\n"));
    }

    #[test]
    fn sharding_attribute() {
        check(
            r#"%0:2 = "d.op"(%a#1) {sdy.sharding = #sdy.sharding<@m, [{"x":(2)4, ?}p1]>} : (tensor<8x?xf32>) -> !stablehlo.token loc(#loc3)"#,
            expect![[r##"
                ValueId "%0"
                Colon ":"
                Integer "2"
                Equal "="
                String "\"d.op\""
                LParen "("
                ValueId "%a"
                HashId "#1"
                RParen ")"
                LBrace "{"
                BareId "sdy.sharding"
                Equal "="
                HashId "#sdy.sharding"
                Less "<"
                AtId "@m"
                Comma ","
                LBracket "["
                LBrace "{"
                String "\"x\""
                Colon ":"
                LParen "("
                Integer "2"
                RParen ")"
                Integer "4"
                Comma ","
                Question "?"
                RBrace "}"
                BareId "p1"
                RBracket "]"
                Greater ">"
                RBrace "}"
                Colon ":"
                LParen "("
                BareId "tensor"
                Less "<"
                Integer "8"
                BareId "x"
                Question "?"
                BareId "xf32"
                Greater ">"
                RParen ")"
                Arrow "->"
                BangId "!stablehlo.token"
                BareId "loc"
                LParen "("
                HashId "#loc3"
                RParen ")""##]],
        );
    }

    #[test]
    fn literals_comments_and_errors() {
        check(
            "// -----\n@\"q s\" 1.5e-3 0x1F -7 ... :: \"a\\22b\" \"open\n{-# x #-} ^bb0 ` ",
            expect![[r##"
                Comment "// -----"
                AtId "@\"q s\""
                Float "1.5e-3"
                HexInteger "0x1F"
                Minus "-"
                Integer "7"
                Ellipsis "..."
                ColonColon "::"
                String "\"a\\22b\""
                UnterminatedString "\"open"
                FileMetadataBegin "{-#"
                BareId "x"
                FileMetadataEnd "#-}"
                CaretId "^bb0"
                Error "`""##]],
        );
    }

    /// Tokens of the scanner and of logos, side by side where they differ.
    fn assert_same_as_logos(text: &str) {
        let ours = lex(text);
        let theirs = lex_with_logos(text);
        if ours != theirs {
            let at = ours.iter().zip(&theirs).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "scanner and logos differ on {text:?} at token {at}: {:?} vs {:?}",
                ours.get(at).map(|t| (t.kind, t.text(text))),
                theirs.get(at).map(|t| (t.kind, t.text(text))),
            );
        }
    }

    #[test]
    fn scanner_matches_logos_on_edge_cases() {
        #[rustfmt::skip]
        let cases = [
            "@\"abc", "@\"abc\\", "\"abc\\", "\"abc\\\n", "..", ".", "....", "1..2", "é",
            "aé", "%", "%é", "#", "#-", "#-}", "#-}x", "#--}", "#-x", "{-", "{-#", "{-#-}", "1.",
            "1.e5", "1.5e", "1.5e+", "1.5E-3", "1.5e-x", "1e5", "0x", "0xg", "0x1Fg", "0x1.5",
            "00x1", "09.5", "`", "😀x", "-", "->", ":::", "\"a\"b", "\"\\\"\"", "//x\ny", "\\",
            "$", "a$b.c", "%a-b", "^bb-1", "!a", "!", "@", "@1", "@_", "@a-b", "@\"", "@\"a\"b",
            "@\"\\é\"", "@\"a\\\n", "/", "/x", "a/b", "\r\n", "\x0C", "\x0B", "\0", "\u{85}x",
            "%0#1", "-1.5", "1.5.3", "\"é", "\"\\é\"", "x // c\n y", "",
        ];
        for c in cases {
            assert_same_as_logos(c);
        }
    }

    /// Text made mostly of the characters MLIR tokens are made of, so the two lexers meet
    /// every token shape, its prefixes and its neighbours.
    fn mlir_like_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let pieces = proptest::sample::select(vec![
            "%",
            "^",
            "#",
            "!",
            "@",
            "\"",
            "\\",
            "/",
            ".",
            "-",
            ">",
            "<",
            "{",
            "}",
            "#-}",
            "{-#",
            ":",
            "0",
            "1",
            "9",
            "x",
            "e",
            "E",
            "+",
            "a",
            "_",
            "$",
            " ",
            "\n",
            "\t",
            "\r",
            "\x0C",
            "é",
            "😀",
            "`",
            "(",
            ")",
            "[",
            "]",
            ",",
            "=",
            "?",
            "*",
            "|",
            "0x",
            "1.5",
            "..",
            "tensor<8x?xf32>",
            "%arg0",
            "@\"q s\"",
            "\"a\\22b\"",
            "// c",
        ]);
        prop_oneof![
            proptest::collection::vec(pieces, 0..40).prop_map(|v| v.concat()),
            any::<String>(),
        ]
    }

    #[test]
    fn scanner_matches_logos_on_arbitrary_text() {
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config { cases: 4000, ..Config::default() });
        runner
            .run(&mlir_like_text(), |text| {
                assert_same_as_logos(&text);
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn scanner_matches_logos_on_project_files() {
        // The corpus and test inputs, when present: every real token shape.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dirs = [root.join("tests/fixtures"), root.join("../shared/corpus")];
        let mut seen = 0;
        let mut stack: Vec<std::path::PathBuf> = dirs.into_iter().collect();
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "mlir") {
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        assert_same_as_logos(&text);
                        seen += 1;
                    }
                }
            }
        }
        assert!(seen > 0, "no .mlir file found under tests/fixtures");
    }

    #[test]
    fn restartable_at_line_starts() {
        let src =
            "%0 = stablehlo.add %a, %b : tensor<f32>\n  return %0 : tensor<f32> // done\n\"s\"\n";
        let whole = lex(src);
        let mut pieces = Vec::new();
        let mut base = 0u32;
        for line in src.split_inclusive('\n') {
            lex_into(line, base, &mut pieces);
            base += line.len() as u32;
        }
        assert_eq!(whole, pieces);
    }
}
