//! The MLIR lexer (logos), covering the textual syntax that appears in sdy files.
//!
//! MLIR has no token that spans a line break (strings use `\0A` escapes, there are no
//! block comments), so every line start is a token boundary: lexing can restart at any
//! line start with no state, which is what incremental re-lexing relies on.

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
    let mut lexer = TokenKind::lexer(text);
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        let kind = result.unwrap_or(TokenKind::Error);
        out.push(Token { kind, start: base + span.start as u32, end: base + span.end as u32 });
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
