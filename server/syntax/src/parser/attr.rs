//! Attribute parsing: builtin attributes generically, sdy attributes structurally.

use super::{messages as msg, Parser};
use crate::lexer::TokenKind;
use crate::sdy::SdyAttr;
use crate::tree::{Attr, AttrDict, AttrKind, NamedAttr};

impl Parser<'_> {
    /// At `{`: `{name = value, unit_name, ...}`.
    pub(crate) fn parse_attr_dict(&mut self) -> Option<AttrDict> {
        let open = self.expect(TokenKind::LBrace, "'{'")?;
        // Entries are gathered on a scratch stack shared by nested dictionaries, so the
        // dictionary is allocated once, at its exact size.
        let mark = self.named_scratch.len();
        let done = self.dict_entries_onto_scratch();
        let entries = self.named_scratch.drain(mark..);
        done?;
        let mut v = crate::tree::ThinVec::with_capacity(entries.len());
        v.extend(entries);
        Some(AttrDict { span: self.rel_from(open.start), entries: v })
    }

    fn dict_entries_onto_scratch(&mut self) -> Option<()> {
        if self.eat(TokenKind::RBrace).is_some() {
            return Some(());
        }
        loop {
            let entry = self.parse_named_attr()?;
            self.named_scratch.push(entry);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            if self.eat(TokenKind::RBrace).is_some() {
                return Some(());
            }
            self.error_expected("'}' in attribute dictionary");
            return None;
        }
    }

    /// Like `parse_attr_dict`, but on an error (already reported) skips the whole
    /// `{...}` group and returns `None`, so the rest of the op is still read.
    pub(crate) fn parse_attr_dict_recovering(&mut self) -> Option<AttrDict> {
        let save = self.save();
        let d = self.parse_attr_dict();
        if d.is_none() {
            self.restore(save);
            self.skip_balanced();
        }
        d
    }

    fn parse_named_attr(&mut self) -> Option<NamedAttr> {
        let name_tok = self.peek();
        let name: crate::tree::Str = match name_tok.kind {
            TokenKind::BareId => self.intern(self.text(name_tok)),
            TokenKind::String => {
                let t = self.text(name_tok);
                self.intern(&t[1..t.len() - 1])
            }
            _ => {
                self.error_expected("attribute name");
                return None;
            }
        };
        self.bump();
        let name_span = self.rel(name_tok);
        let value = if self.eat(TokenKind::Equal).is_some() {
            if !self.enter() {
                return None;
            }
            let v = self.parse_attr_for(&name);
            self.leave();
            Some(v?)
        } else {
            None
        };
        Some(NamedAttr { name, name_span, value, span: self.rel_from(name_tok.start) })
    }

    /// Parses an attribute value. `key` is the dictionary key it belongs to (unused by
    /// the generic parser; kept for diagnostics of sdy keys).
    fn parse_attr_for(&mut self, _key: &str) -> Option<Attr> {
        self.parse_attr()
    }

    /// Parses one attribute value.
    pub(crate) fn parse_attr(&mut self) -> Option<Attr> {
        let start = self.peek();
        let kind = match start.kind {
            TokenKind::Integer | TokenKind::HexInteger | TokenKind::Minus => {
                if self.at(TokenKind::Minus) {
                    self.bump();
                }
                let t = self.peek();
                match t.kind {
                    TokenKind::Integer | TokenKind::HexInteger => {
                        self.bump();
                        let value = parse_int(self.text_from(start.start)).unwrap_or(0);
                        let ty = self.optional_colon_type();
                        AttrKind::Int { value, ty }
                    }
                    TokenKind::Float => {
                        self.bump();
                        let text: crate::tree::Str = self.text_from(start.start).into();
                        let ty = self.optional_colon_type();
                        AttrKind::Float { text, ty }
                    }
                    _ => {
                        self.error_expected("integer or floating point literal");
                        return None;
                    }
                }
            }
            TokenKind::Float => {
                self.bump();
                let text: crate::tree::Str = self.text(start).into();
                let ty = self.optional_colon_type();
                AttrKind::Float { text, ty }
            }
            TokenKind::String => {
                self.bump();
                let t = self.text(start);
                let raw = t[1..t.len() - 1].into();
                let _ = self.optional_colon_type();
                AttrKind::String { raw }
            }
            TokenKind::AtId => {
                self.bump();
                let mut name: String = self.text(start)[1..].into();
                while self.at(TokenKind::ColonColon) && self.nth_kind(1) == TokenKind::AtId {
                    self.bump();
                    let t = self.bump();
                    name.push_str("::");
                    name.push_str(self.text(t));
                }
                AttrKind::Symbol(name.into())
            }
            TokenKind::LBracket => {
                self.bump();
                AttrKind::Array(self.array_elements()?)
            }
            TokenKind::LBrace => AttrKind::Dict(self.parse_attr_dict()?),
            TokenKind::HashId => return self.parse_hash_attr(),
            TokenKind::UnterminatedString => {
                let span = self.rel(start);
                self.error(span, msg::UNTERMINATED_STRING);
                return None;
            }
            TokenKind::BareId => {
                let word = self.text(start);
                match word {
                    "true" | "false" => {
                        self.bump();
                        AttrKind::Bool(word == "true")
                    }
                    "unit" => {
                        self.bump();
                        AttrKind::Unit
                    }
                    "dense" | "dense_resource" | "sparse" => {
                        self.bump();
                        if self.at(TokenKind::Less) {
                            self.skip_balanced();
                        } else {
                            self.error_expected("'<'");
                            return None;
                        }
                        let ty = self.optional_colon_type();
                        AttrKind::Elements { ty }
                    }
                    "array" if self.nth_kind(1) == TokenKind::Less => self.dense_array()?,
                    "loc" if self.nth_kind(1) == TokenKind::LParen => {
                        self.bump();
                        self.skip_balanced();
                        AttrKind::Opaque
                    }
                    "affine_map" | "affine_set" | "strided" | "distinct" => {
                        self.bump();
                        if self.at(TokenKind::Less) || self.at(TokenKind::LBracket) {
                            self.skip_balanced();
                            if self.at(TokenKind::Less) {
                                self.skip_balanced();
                            }
                        }
                        AttrKind::Opaque
                    }
                    _ if self.at_type_start() => AttrKind::Type(self.parse_type()?),
                    _ => {
                        self.bump();
                        AttrKind::Keyword(self.intern(word))
                    }
                }
            }
            TokenKind::BangId | TokenKind::LParen => AttrKind::Type(self.parse_type()?),
            _ => {
                self.error_expected("attribute value");
                return None;
            }
        };
        Some(Attr { span: self.rel_from(start.start), kind })
    }

    /// After `[`: the elements up to `]`. They are gathered on a scratch stack shared by
    /// nested arrays, so the array is allocated once, at its exact size.
    fn array_elements(&mut self) -> Option<Vec<Attr>> {
        let mark = self.attr_scratch.len();
        let done = self.array_elements_onto_scratch();
        let elems = self.attr_scratch.drain(mark..);
        done.map(|()| {
            let mut v = Vec::with_capacity(elems.len());
            v.extend(elems);
            v
        })
    }

    fn array_elements_onto_scratch(&mut self) -> Option<()> {
        if self.eat(TokenKind::RBracket).is_some() {
            return Some(());
        }
        loop {
            if !self.enter() {
                return None;
            }
            let a = self.parse_attr();
            self.leave();
            self.attr_scratch.push(a?);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            self.expect(TokenKind::RBracket, "']'")?;
            return Some(());
        }
    }

    /// `: type` after a literal, when present.
    fn optional_colon_type(&mut self) -> Option<crate::tree::Type> {
        if self.at(TokenKind::Colon) && self.nth_type_start(1) {
            self.bump();
            self.parse_type()
        } else {
            None
        }
    }

    fn nth_type_start(&self, n: usize) -> bool {
        let t = self.nth(n);
        match t.kind {
            TokenKind::BangId => true,
            TokenKind::BareId => super::ty::is_builtin_type_name(self.text(t)),
            _ => false,
        }
    }

    /// `array<i64: 1, 2, 3>` or `array<i64>`.
    fn dense_array(&mut self) -> Option<AttrKind> {
        self.bump();
        self.expect(TokenKind::Less, "'<'")?;
        let elem_tok = self.bump();
        let elem: crate::tree::Str = self.text(elem_tok).into();
        let mut values = Vec::new();
        if self.eat(TokenKind::Colon).is_some() {
            loop {
                let neg = self.eat(TokenKind::Minus).is_some();
                let t = self.peek();
                match t.kind {
                    TokenKind::Integer | TokenKind::HexInteger => {
                        self.bump();
                        let v = parse_int(self.text(t)).unwrap_or(0);
                        values.push(if neg { -v } else { v });
                    }
                    TokenKind::BareId if matches!(self.text(t), "true" | "false") => {
                        self.bump();
                        values.push((self.text(t) == "true") as i64);
                    }
                    TokenKind::Float => {
                        self.bump();
                    }
                    _ => {
                        self.error_expected("integer value");
                        return None;
                    }
                }
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
        }
        self.expect(TokenKind::Greater, "'>'")?;
        Some(AttrKind::DenseArray { elem, values })
    }

    /// `#sdy.sharding<...>`, other `#dialect.attr<...>`, `#alias`.
    fn parse_hash_attr(&mut self) -> Option<Attr> {
        let start = self.bump();
        let name = &self.text(start)[1..];
        let has_body = self.at(TokenKind::Less) && !self.nl_before();
        let kind = match name {
            "sdy.sharding" if has_body => {
                AttrKind::Sdy(Box::new(SdyAttr::Sharding(self.sdy_sharding_body()?)))
            }
            "sdy.sharding_per_value" if has_body => {
                AttrKind::Sdy(Box::new(SdyAttr::PerValue(self.sdy_per_value_body()?)))
            }
            "sdy.op_sharding_rule" if has_body => {
                AttrKind::Sdy(Box::new(SdyAttr::Rule(self.sdy_rule_body()?)))
            }
            "sdy.mesh" if has_body => AttrKind::Sdy(Box::new(SdyAttr::Mesh(self.sdy_mesh_body()?))),
            "sdy" if has_body && self.sdy_generic_mnemonic().is_some() => {
                AttrKind::Sdy(Box::new(self.sdy_generic_attr()?))
            }
            _ if has_body => {
                self.skip_balanced();
                if name.starts_with("sdy.") {
                    AttrKind::Sdy(Box::new(SdyAttr::Opaque))
                } else {
                    AttrKind::Opaque
                }
            }
            _ if name.contains('.') => AttrKind::Opaque,
            _ => AttrKind::AliasRef(name.into()),
        };
        Some(Attr { span: self.rel_from(start.start), kind })
    }
}

impl Parser<'_> {
    /// The mnemonic of a `#sdy<mnemonic ...>` attribute this parser reads structurally
    /// (the generic form of the sdy ops' axis-list parameters), at its `<`.
    fn sdy_generic_mnemonic(&self) -> Option<&'static str> {
        let t = self.nth(1);
        if t.kind != TokenKind::BareId {
            return None;
        }
        ["manual_axes", "axis_ref_list", "list_of_axis_ref_lists", "all_to_all_param_list"]
            .into_iter()
            .find(|m| self.text(t) == *m)
    }

    /// `<manual_axes{"a"}>`, `<axis_ref_list{"b"}>`, `<list_of_axis_ref_lists[{}, {"b"}]>`,
    /// `<all_to_all_param_list[{"a"}: 0->1]>`: what the custom forms write bare.
    fn sdy_generic_attr(&mut self) -> Option<SdyAttr> {
        let mnemonic = self.sdy_generic_mnemonic()?;
        self.bump();
        self.bump();
        let value = match mnemonic {
            "manual_axes" => SdyAttr::ManualAxes(self.sdy_manual_axes()?),
            "axis_ref_list" => SdyAttr::AxisList(self.sdy_axis_list()?),
            "list_of_axis_ref_lists" => SdyAttr::AxisListPerDim(self.sdy_axis_list_per_dim()?),
            _ => SdyAttr::AllToAllParams(self.sdy_all_to_all_params()?),
        };
        self.expect(TokenKind::Greater, "'>'")?;
        Some(value)
    }
}

/// Parses a decimal or hex integer literal, with an optional leading `-`.
pub(crate) fn parse_int(text: &str) -> Option<i64> {
    let (neg, t) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, text),
    };
    let v = if let Some(hex) = t.strip_prefix("0x") {
        u64::from_str_radix(hex, 16).ok()? as i64
    } else {
        t.parse::<i64>().or_else(|_| t.parse::<u64>().map(|v| v as i64)).ok()?
    };
    Some(if neg { -v } else { v })
}
