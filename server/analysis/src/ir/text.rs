//! Re-spelling source text that the IR keeps as text (types, dialect attributes
//! it does not model): tokens joined with MLIR's spacing, comments dropped, aliases
//! replaced by what they stand for; the `#stablehlo.gather/scatter/dot<...>` attributes
//! with their fields in StableHLO's order.

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

/// The fields of the dimension-number attributes, in the order StableHLO prints them.
const STRUCTS: &[(&str, &[&str])] = &[
    (
        "#stablehlo.gather<",
        &[
            "offset_dims",
            "collapsed_slice_dims",
            "operand_batching_dims",
            "start_indices_batching_dims",
            "start_index_map",
            "index_vector_dim",
        ],
    ),
    (
        "#stablehlo.scatter<",
        &[
            "update_window_dims",
            "inserted_window_dims",
            "input_batching_dims",
            "scatter_indices_batching_dims",
            "scatter_dims_to_operand_dims",
            "index_vector_dim",
        ],
    ),
    (
        "#stablehlo.dot<",
        &[
            "lhs_batching_dimensions",
            "rhs_batching_dimensions",
            "lhs_contracting_dimensions",
            "rhs_contracting_dimensions",
        ],
    ),
];

/// The fields of the dimension-number attribute that starts with `prefix`
/// (`#stablehlo.gather<`), in the order StableHLO prints them.
pub fn struct_field_order(prefix: &str) -> &'static [&'static str] {
    STRUCTS.iter().find(|(p, _)| *p == prefix).map_or(&[], |(_, order)| order)
}

/// A `#stablehlo.gather/scatter/dot<...>` attribute as StableHLO prints it: fields in
/// their order, empty lists and a zero `index_vector_dim` left out. Any other text, or
/// one with a field this does not know, is returned as it is.
pub fn canonical_struct(text: String) -> String {
    let Some((prefix, order)) = STRUCTS.iter().find(|(p, _)| text.starts_with(p)) else {
        return text;
    };
    let Some(fields) = struct_fields(&text[prefix.len()..]) else { return text };
    if fields.iter().any(|(k, _)| !order.contains(k)) {
        return text;
    }
    let kept: Vec<String> = order
        .iter()
        .filter_map(|name| fields.iter().find(|(k, _)| k == name))
        .filter(|(k, v)| !(*v == "[]" || (*k == "index_vector_dim" && *v == "0")))
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    format!("{prefix}{}>", kept.join(", "))
}

/// The top-level `name = value` fields (values are lists or integers) of a
/// dimension-number attribute's body, after its `#stablehlo.gather<` and up to its `>`.
pub fn struct_fields(body: &str) -> Option<Vec<(&str, &str)>> {
    let body = body.strip_suffix('>')?;
    let mut fields: Vec<(&str, &str)> = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in body.char_indices().chain([(body.len(), ',')]) {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                let field = body[start..i].trim();
                if !field.is_empty() {
                    let (k, v) = field.split_once('=')?;
                    fields.push((k.trim(), v.trim()));
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    Some(fields)
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

    #[test]
    fn dimension_numbers_print_canonically() {
        let c = |s: &str| canonical_struct(s.to_string());
        assert_eq!(
            c("#stablehlo.gather<offset_dims = [], start_index_map = [1, 0], collapsed_slice_dims = [0, 1], index_vector_dim = 0>"),
            "#stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [1, 0]>"
        );
        assert_eq!(
            c("#stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>"),
            "#stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>"
        );
        assert_eq!(c("#stablehlo.gather<unknown = [1]>"), "#stablehlo.gather<unknown = [1]>");
        assert_eq!(
            c("#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>"),
            "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>"
        );
    }
}
