//! Semantic tokens of one chunk: what each piece of the text is, for highlighting.
//!
//! Two sources, merged:
//! * the model and its syntax trees, for what needs context: SSA definitions and uses
//!   (results vs block arguments), symbols (meshes vs functions), the sdy attributes
//!   (mesh axes, axis references, sub-axes, `?`, priorities), op names and types;
//! * the lexer, for everything else (comments, strings, numbers, attribute names,
//!   keywords), classified by the token and its neighbours on the same line. This also
//!   colours what the parser could not read (the statement being typed).
//!
//! Where both speak, the tree wins. Tokens never span a line break: the lexer has no
//! multi-line tokens, every tree span used here is made of lexer tokens, and a type
//! written over several lines is left to the lexer. The lexer's side only looks at the
//! token's own line, so a range (lexed from its first line's start) gets exactly the
//! whole text's tokens.
//!
//! Legend (standard LSP types, plus one modifier of our own):
//!
//! | text | type | modifiers |
//! |---|---|---|
//! | `@m` of `sdy.mesh @m`, `@m` in a sharding | `namespace` | `declaration` on the definition |
//! | `"x"` of a mesh / of an axis reference | `property` | `declaration` in the mesh; `subAxis` before `:(m)k` |
//! | `?` of an open dimension | `operator` | |
//! | `p<N>` priority | `modifier` | |
//! | op names (`stablehlo.add`, `sdy.reshard`), keywords (`replicated`, `loc`, ...) | `keyword` | |
//! | `%x` results / `%arg` block and function arguments | `variable` / `parameter` | `declaration` where defined |
//! | `@f` functions (and other symbols) | `function` | `declaration` on the definition |
//! | types (`tensor<8xf32>`, `!stablehlo.token`, `i32`) | `type` | |
//! | factors of `#sdy.op_sharding_rule` | `typeParameter` | |
//! | attribute names, `#sdy.sharding`, `#alias` | `decorator` | `declaration` on an alias definition |
//! | enum keywords (`FORWARD`) | `enumMember` | |
//! | comments, strings, numbers | `comment`, `string`, `number` | |

use crate::model::Model;
use sdy_syntax::lexer::lex_into;
use sdy_syntax::Span;

mod lexical;
#[cfg(test)]
mod tests;
mod tree;

use lexical::{same_line, Merger};
use tree::TreeTokens;

/// Token types, in legend order (the index is what the protocol sends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenType {
    Namespace,
    Type,
    TypeParameter,
    Parameter,
    Variable,
    Property,
    EnumMember,
    Function,
    Keyword,
    Modifier,
    Comment,
    String,
    Number,
    Operator,
    Decorator,
}

impl TokenType {
    pub const ALL: [TokenType; 15] = [
        TokenType::Namespace,
        TokenType::Type,
        TokenType::TypeParameter,
        TokenType::Parameter,
        TokenType::Variable,
        TokenType::Property,
        TokenType::EnumMember,
        TokenType::Function,
        TokenType::Keyword,
        TokenType::Modifier,
        TokenType::Comment,
        TokenType::String,
        TokenType::Number,
        TokenType::Operator,
        TokenType::Decorator,
    ];

    /// The LSP name of the type.
    pub fn name(self) -> &'static str {
        match self {
            TokenType::Namespace => "namespace",
            TokenType::Type => "type",
            TokenType::TypeParameter => "typeParameter",
            TokenType::Parameter => "parameter",
            TokenType::Variable => "variable",
            TokenType::Property => "property",
            TokenType::EnumMember => "enumMember",
            TokenType::Function => "function",
            TokenType::Keyword => "keyword",
            TokenType::Modifier => "modifier",
            TokenType::Comment => "comment",
            TokenType::String => "string",
            TokenType::Number => "number",
            TokenType::Operator => "operator",
            TokenType::Decorator => "decorator",
        }
    }

    /// The index in [`TokenType::ALL`] (the legend).
    pub fn index(self) -> u32 {
        self as u32
    }
}

/// Modifier bits; bit `i` is `MODIFIERS[i]` of the legend.
pub const DECLARATION: u32 = 1;
/// An axis name followed by `:(pre)size`.
pub const SUB_AXIS: u32 = 2;
/// Modifier names, in bit order.
pub const MODIFIERS: [&str; 2] = ["declaration", "subAxis"];

/// One token: a chunk-relative byte range on one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemToken {
    pub span: Span,
    pub ty: TokenType,
    pub mods: u32,
}

/// The tokens of a chunk (`src` is the chunk's text, `model` its model) that intersect
/// `range` (chunk-relative), sorted, disjoint. Tokens of the ops outside `range` are not
/// computed, so a small range costs little whatever the size of the chunk; the result is
/// exactly the whole chunk's tokens that intersect `range`.
pub fn semantic_tokens(model: &Model, src: &str, range: Span) -> Vec<SemToken> {
    let mut out = Vec::new();
    semantic_tokens_into(model, src, range, |t| out.push(t));
    out
}

/// [`semantic_tokens`], handed to `sink` one by one in order (nothing is kept: a whole
/// file's tokens need not be held twice).
pub fn semantic_tokens_into(model: &Model, src: &str, range: Span, sink: impl FnMut(SemToken)) {
    let len = src.len() as u32;
    let range = Span::new(range.start.min(len), range.end.min(len));
    // Lex whole lines: every line start is a token boundary.
    let from = line_start(src, range.start);
    let to = line_end(src, range.end.max(range.start));
    // Real modules have a token per ~13 bytes, about half of them known to the tree
    // (capacity never written costs no memory).
    let estimate = (to - from) as usize / 16;
    let mut tree = TreeTokens { model, src, range, out: Vec::with_capacity(estimate) };
    tree.ops_in(&model.top);
    let mut tree = tree.out;
    if !tree.windows(2).all(|w| w[0].span.start <= w[1].span.start) {
        tree.sort_by_key(|t| t.span.start);
    }
    let mut m = Merger { model, src, tree: &tree, ti: 0, range, sink, last_end: 0 };
    // Windows of whole lines, lexed into one buffer.
    let mut buf = Vec::new();
    let mut a = from;
    while a < to {
        let b = line_end(src, a.saturating_add(WINDOW).min(to)).clamp(a + 1, to);
        buf.clear();
        if let Some(text) = src.get(a as usize..b as usize) {
            lex_into(text, a, &mut buf);
        }
        m.lines(&buf);
        a = b;
    }
    m.finish();
}

/// Bytes lexed at a time (then up to the end of the line).
const WINDOW: u32 = 64 * 1024;

/// Whether `s` and the range intersect (an empty range intersects nothing but tokens
/// around its position).
fn intersects(s: Span, range: Span) -> bool {
    s.start < range.end.max(range.start.saturating_add(1)) && s.end > range.start
}

pub(crate) fn line_start(src: &str, at: u32) -> u32 {
    let b = src.as_bytes();
    let mut i = (at as usize).min(b.len());
    while i > 0 && b[i - 1] != b'\n' && b[i - 1] != b'\r' {
        i -= 1;
    }
    i as u32
}

pub(crate) fn line_end(src: &str, at: u32) -> u32 {
    let b = src.as_bytes();
    let mut i = (at as usize).min(b.len());
    while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
        i += 1;
    }
    i as u32
}
