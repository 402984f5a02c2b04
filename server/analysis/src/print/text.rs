//! Re-spelling source text that the printer keeps as text (types, dialect attributes
//! it does not model): tokens joined with MLIR's spacing, comments dropped, aliases
//! replaced by what they stand for.

use sdy_syntax::lexer::{self, TokenKind};

/// Resolves `#alias` / `!alias` names to their printed definitions.
pub trait Normalizer {
    fn alias_text(&self, name: &str) -> Option<String>;
}

/// No aliases.
pub struct NoAliases;

impl Normalizer for NoAliases {
    fn alias_text(&self, _: &str) -> Option<String> {
        None
    }
}

/// Joins the tokens of `text`: one space where the source had white space (or a
/// comment), always one after a comma, none before a comma or a closing `)`/`]`/`>`,
/// none after an opening `(`/`[`/`<`.
pub fn normalize_tokens(text: &str, n: &impl Normalizer) -> String {
    // One bare identifier (`f32`, `bf16`, `i1`): itself, without lexing.
    let b = text.as_bytes();
    if b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return text.to_string();
    }
    let toks = lexer::lex(text);
    let mut out = String::with_capacity(text.len());
    let mut prev_end: Option<u32> = None;
    let mut prev_text = "";
    for t in toks.iter().filter(|t| t.kind != TokenKind::Comment) {
        let s = t.text(text);
        if let Some(end) = prev_end {
            let gap = t.start > end;
            let space = match s {
                "," | ")" | "]" | ">" => false,
                _ if prev_text == "," => true,
                _ if prev_text == "(" || prev_text == "[" || prev_text == "<" => false,
                _ => gap,
            };
            if space {
                out.push(' ');
            }
        }
        match t.kind {
            TokenKind::HashId | TokenKind::BangId => match n.alias_text(s) {
                Some(a) => out.push_str(&a),
                None => out.push_str(s),
            },
            _ => out.push_str(s),
        }
        prev_end = Some(t.end);
        prev_text = s;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn spacing() {
        assert_eq!(
            normalize_tokens(
                "#stablehlo.gather<offset_dims = [2,3],\n  index_vector_dim = 2>",
                &NoAliases
            ),
            "#stablehlo.gather<offset_dims = [2, 3], index_vector_dim = 2>"
        );
        assert_eq!(normalize_tokens("tensor<8x8xf32> // c\n", &NoAliases), "tensor<8x8xf32>");
        assert_eq!(normalize_tokens("[ 1 , 2 ]", &NoAliases), "[1, 2]");
    }
}
