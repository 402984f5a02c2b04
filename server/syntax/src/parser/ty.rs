//! Type parsing. Shapes such as `8x?xf32` lex as several tokens (`8`, `x`, `?`, `xf32`),
//! so the text between a shaped type's angle brackets is re-read character by character.

use super::{messages as msg, Parser};
use crate::lexer::TokenKind;
use crate::span::Span;
use crate::tree::{Dim, Type, TypeKind};
use std::sync::Arc;

impl<'s> Parser<'s> {
    /// Whether the current token can begin a type.
    pub(crate) fn at_type_start(&self) -> bool {
        match self.kind() {
            TokenKind::BangId | TokenKind::LParen => true,
            TokenKind::BareId => is_builtin_type_name(self.peek_text()),
            _ => false,
        }
    }

    /// At `tensor<...>` with no bracket inside whose spelling was met before in this
    /// parse: the type, with the cursor moved past it, without stepping through its tokens
    /// (most types of a file are repeats). `None`, the cursor unmoved, otherwise.
    pub(crate) fn known_plain_tensor(&mut self) -> Option<Type> {
        if !self.at_keyword("tensor") || self.nth_kind(1) != TokenKind::Less {
            return None;
        }
        let start = self.peek().start;
        let (close, end) = self.plain_group_close(1, TokenKind::Greater)?;
        let range = start as usize..end as usize;
        let kind = match self.recent_types.get(self.src.as_bytes().get(range.clone())?) {
            Some(k) => k,
            None => {
                let text = self.src.get(range)?;
                let k = self.types.get(text)?.clone();
                self.recent_types.put(text.as_bytes(), k.clone());
                k
            }
        };
        self.advance(close + 1);
        Some(Type { span: Span::new(start - self.base, end - self.base), kind })
    }

    /// The type the strict reading of this op's custom form read at the cursor, with the
    /// cursor moved past it.
    fn kept_type(&mut self) -> Option<Type> {
        let (at, base) = (self.save(), self.base);
        let k = self.form_types.iter().find(|k| k.at == at && k.base == base)?;
        let (end, ty) = (k.end, k.ty.clone());
        self.restore(end);
        Some(ty)
    }

    /// Parses a type; reports MLIR's `expected non-function type` and returns `None` when there is none.
    pub(crate) fn parse_type(&mut self) -> Option<Type> {
        if !self.form_types.is_empty() {
            if let Some(ty) = self.kept_type() {
                return Some(ty);
            }
        }
        let start = self.peek().start;
        // Seen this exact tensor type before: skip it without re-reading the shape.
        if let Some(ty) = self.known_plain_tensor() {
            return Some(ty);
        }
        if self.at_keyword("tensor") && self.nth_kind(1) == TokenKind::Less {
            let save = self.save();
            self.bump();
            self.skip_balanced();
            if let Some(k) = self.types.get(self.text_from(start)) {
                let kind = k.clone();
                return Some(Type { span: self.rel_from(start), kind });
            }
            self.restore(save);
        }
        let kind = self.parse_type_kind()?;
        let text = self.text_from(start);
        let kind = match self.types.get(text) {
            Some(k) => k.clone(),
            // Tuples hold element types with op-relative spans: never shared.
            None if matches!(kind, TypeKind::Tuple(_)) => Arc::new(kind),
            None => {
                let k = Arc::new(kind);
                self.types.insert(text, k.clone());
                k
            }
        };
        Some(Type { span: self.rel_from(start), kind })
    }

    fn parse_type_kind(&mut self) -> Option<TypeKind> {
        let start_tok = self.peek();
        match start_tok.kind {
            TokenKind::BangId => {
                let name = &self.text(start_tok)[1..];
                self.bump();
                let kind = if self.at(TokenKind::Less) && !self.nl_before() {
                    self.skip_balanced();
                    TypeKind::Other(self.text_from(start_tok.start).into())
                } else if name == "stablehlo.token" {
                    TypeKind::Token
                } else if name.contains('.') {
                    TypeKind::Other(self.text(start_tok).into())
                } else {
                    TypeKind::Alias(name.into())
                };
                Some(kind)
            }
            TokenKind::BareId => {
                let name = self.text(start_tok);
                if !is_builtin_type_name(name) {
                    self.error_expected("non-function type");
                    return None;
                }
                self.bump();
                let kind = match name {
                    "tensor" => self.shaped_body(start_tok.start)?,
                    "tuple" => {
                        self.expect(TokenKind::Less, "'<'")?;
                        let mut elems = Vec::new();
                        if self.eat(TokenKind::Greater).is_none() {
                            loop {
                                if !self.enter() {
                                    return None;
                                }
                                let t = self.parse_type();
                                self.leave();
                                elems.push(t?);
                                if self.eat(TokenKind::Comma).is_none() {
                                    break;
                                }
                            }
                            self.expect(TokenKind::Greater, "'>'")?;
                        }
                        TypeKind::Tuple(elems)
                    }
                    _ => {
                        if self.at(TokenKind::Less) {
                            self.skip_balanced();
                        }
                        TypeKind::Other(self.text_from(start_tok.start).into())
                    }
                };
                Some(kind)
            }
            TokenKind::LParen => {
                // A function type used as a type: `(T) -> R`.
                self.skip_balanced();
                if self.eat(TokenKind::Arrow).is_some() {
                    if self.at(TokenKind::LParen) {
                        self.skip_balanced();
                    } else {
                        self.parse_type()?;
                    }
                }
                Some(TypeKind::Other(self.text_from(start_tok.start).into()))
            }
            _ => {
                self.error_expected("non-function type");
                None
            }
        }
    }

    /// The source text from absolute `start` to the end of the previous token.
    pub(crate) fn text_from(&self, start: u32) -> &'s str {
        &self.src[start as usize..self.prev_end().max(start) as usize]
    }

    /// After `tensor`: `<dims x elem (, encoding)?>`.
    fn shaped_body(&mut self, start: u32) -> Option<TypeKind> {
        let lt = self.expect(TokenKind::Less, "'<' in tensor type")?;
        self.restore(self.save() - 1);
        self.skip_balanced();
        let close = self.prev_end();
        if self.src.as_bytes().get(close as usize - 1) != Some(&b'>') {
            let span = self.rel_from(start);
            self.error(span, msg::EXPECTED_GREATER);
            return None;
        }
        let inner = &self.src[lt.end as usize..close as usize - 1];
        match parse_shape(inner) {
            Ok(kind) => Some(kind),
            Err(msg) => {
                let span = self.rel_from(start);
                self.error(span, msg);
                None
            }
        }
    }
}

/// Names that start a builtin type.
pub(crate) fn is_builtin_type_name(name: &str) -> bool {
    matches!(
        name,
        "tensor"
            | "tuple"
            | "memref"
            | "vector"
            | "complex"
            | "index"
            | "none"
            | "f16"
            | "bf16"
            | "f32"
            | "f64"
            | "f80"
            | "f128"
            | "tf32"
    ) || name.starts_with("f8E")
        || name.starts_with("f4E")
        || name.starts_with("f6E")
        || int_type_width(name).is_some()
}

fn int_type_width(name: &str) -> Option<u32> {
    let digits = name
        .strip_prefix("si")
        .or_else(|| name.strip_prefix("ui"))
        .or_else(|| name.strip_prefix('i'))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Reads `8x?xf32`, `*xf32`, `f32`, `4x8xf32, #enc`.
fn parse_shape(inner: &str) -> Result<TypeKind, &'static str> {
    let inner = inner.trim();
    let (body, encoding) = match split_top_comma(inner) {
        Some((b, e)) => (b.trim(), Some(e.trim().into())),
        None => (inner, None),
    };
    if let Some(rest) = body.strip_prefix('*') {
        let elem = rest.trim_start().strip_prefix('x').ok_or(msg::DIM_LIST_X)?;
        return Ok(TypeKind::Tensor { shape: None, elem: elem.trim().into(), encoding });
    }
    let bytes = body.as_bytes();
    let mut dims = crate::tree::Shape::new();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while bytes.get(*i).is_some_and(|b| b.is_ascii_whitespace()) {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        let start = i;
        if bytes.get(i) == Some(&b'?') {
            i += 1;
            skip_ws(&mut i);
            if bytes.get(i) != Some(&b'x') {
                return Err(msg::DIM_LIST_X);
            }
            dims.push(Dim::Dynamic);
            i += 1;
            continue;
        }
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            break;
        }
        let end = i;
        skip_ws(&mut i);
        if bytes.get(i) != Some(&b'x') {
            return Err(msg::DIM_LIST_X);
        }
        let v: i64 = body[start..end].parse().map_err(|_| "dimension is too large")?;
        dims.push(Dim::Static(v));
        i += 1;
    }
    let elem = body[i..].trim();
    if elem.is_empty() {
        return Err(msg::NON_FUNCTION_TYPE);
    }
    Ok(TypeKind::Tensor { shape: Some(dims), elem: elem.into(), encoding })
}

/// Splits at the first comma not nested in `<>`, `()`, `[]` or `{}`.
fn split_top_comma(s: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' | b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => return Some((&s[..i], &s[i + 1..])),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let t = |s: &str| format!("{:?}", parse_shape(s));
        assert_eq!(
            t("8x?xf32"),
            r#"Ok(Tensor { shape: Some([Static(8), Dynamic]), elem: "f32", encoding: None })"#
        );
        assert_eq!(t("*xf32"), r#"Ok(Tensor { shape: None, elem: "f32", encoding: None })"#);
        assert_eq!(t("f32"), r#"Ok(Tensor { shape: Some([]), elem: "f32", encoding: None })"#);
        assert_eq!(
            t("0x8xcomplex<f32>, #enc<1, 2>"),
            r##"Ok(Tensor { shape: Some([Static(0), Static(8)]), elem: "complex<f32>", encoding: Some("#enc<1, 2>") })"##
        );
        assert_eq!(t("8x"), r#"Err("expected non-function type")"#);
    }
}
