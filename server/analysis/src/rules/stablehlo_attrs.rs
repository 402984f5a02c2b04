//! A normalized view of an op's inherent attributes, read from its source tokens, so
//! that the registry does not care how the op was written:
//!
//! | attribute | custom (pretty) form | generic form |
//! |---|---|---|
//! | broadcast dims | `dims = [0, 2]` | `broadcast_dimensions = array<i64: 0, 2>` |
//! | transpose | `dims = [1, 0]` | `permutation = array<i64: 1, 0>` |
//! | reverse / reduce | `dims = [1]` / `across dimensions = [1]` | `dimensions = array<i64: 1>` |
//! | concatenate | `dim = 1` | `dimension = 1 : i64` |
//! | dot_general | `batching_dims = [0] x [0], contracting_dims = [2] x [1]` | `dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], ...>` |
//! | convolution | `dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` | `dimension_numbers = #stablehlo.conv<...>` (either spelling, or `raw ...`) |
//! | fft | `type = FFT, length = [32]` | `fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 32>` |
//! | custom_call | `@target(...)` | `call_target_name = "target"` |
//!
//! Everything else (`#stablehlo.gather<...>`, `#stablehlo.scatter<...>`, `padding =
//! dense<...> : tensor<..>`, `transpose_a = #stablehlo<transpose ...>`, counts and
//! flags) is read the same way in both forms: every `key = value` outside the op's
//! regions is collected, in `<{...}>` properties, attribute dictionaries and custom
//! syntax alike.

use sdy_syntax::lexer::{self, Token, TokenKind};
use sdy_syntax::tree;
use sdy_syntax::Span;

/// An attribute value, as far as the registry needs to read it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Bool(bool),
    /// A string literal (escapes undecoded).
    Str(String),
    /// `@sym`
    Symbol(String),
    /// A bare word (`FFT`, `b`), or the last word of `#stablehlo<transpose NO_TRANSPOSE>`.
    Word(String),
    /// `[a, b]`, `array<i64: a, b>`, `dense<[[..], [..]]>`
    List(Vec<Value>),
    /// `{k = v, ...}` and `#dialect.attr<k = v, ...>`
    Struct(Vec<(String, Value)>),
    /// `[..] x [..]` or `[..]x[..]->[..]` (pretty dot_general / convolution numbers).
    Product(Vec<Value>),
    /// Anything else (floats, types, sdy attributes, ...).
    Other,
}

impl Value {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    /// A list of integers (`[1, 2]`, `array<i64: 1, 2>`).
    pub fn as_ints(&self) -> Option<Vec<i64>> {
        match self {
            Value::List(items) => items.iter().map(Value::as_int).collect(),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_word(&self) -> Option<&str> {
        match self {
            Value::Word(w) => Some(w),
            _ => None,
        }
    }
    pub fn field(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Struct(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// The inherent attributes of one op, by name, in source order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InherentAttrs {
    pub entries: Vec<(String, Value)>,
}

/// `dot_general` dimension numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DotDims {
    pub lhs_batching: Vec<i64>,
    pub rhs_batching: Vec<i64>,
    pub lhs_contracting: Vec<i64>,
    pub rhs_contracting: Vec<i64>,
}

/// `gather` / `scatter` dimension numbers, with the gather names (`offset_dims` =
/// scatter's `update_window_dims`, `collapsed_slice_dims` = `inserted_window_dims`,
/// `operand_batching_dims` = `input_batching_dims`, `start_indices_batching_dims` =
/// `scatter_indices_batching_dims`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GatherScatterDims {
    pub offset_dims: Vec<i64>,
    pub collapsed_slice_dims: Vec<i64>,
    pub operand_batching_dims: Vec<i64>,
    pub indices_batching_dims: Vec<i64>,
    pub index_vector_dim: i64,
}

/// `convolution` dimension numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvDims {
    pub input_batch: i64,
    pub input_feature: i64,
    pub input_spatial: Vec<i64>,
    pub kernel_input_feature: i64,
    pub kernel_output_feature: i64,
    pub kernel_spatial: Vec<i64>,
    pub output_batch: i64,
    pub output_feature: i64,
    pub output_spatial: Vec<i64>,
}

impl InherentAttrs {
    /// Reads the attributes of `op`, whose text is `op_text` (the op's statement).
    pub fn of_op(op: &tree::Op, op_text: &str) -> InherentAttrs {
        let skip: Vec<Span> = op.regions.iter().map(|r| r.span).collect();
        let mut attrs = InherentAttrs::from_text(op_text, &skip);
        // The custom form of custom_call names its target with `@target(...)`.
        if attrs.get("call_target_name").is_none() {
            if let Some(a) = op.inherent_attr("call_target_name") {
                if let Some(tree::AttrKind::Symbol(s)) = a.value.as_ref().map(|v| &v.kind) {
                    attrs.entries.push(("call_target_name".into(), Value::Symbol(s.to_string())));
                }
            }
        }
        attrs
    }

    /// Reads every `key = value` of `text` outside the `skip` ranges (relative to
    /// `text`; the op's regions).
    pub fn from_text(text: &str, skip: &[Span]) -> InherentAttrs {
        // Only the text between the skipped ranges is lexed: a function's body is most
        // of the file. No token crosses a region's braces.
        let mut skip = skip.to_vec();
        skip.sort_by_key(|s| s.start);
        let mut toks: Vec<Token> = Vec::new();
        let mut at = 0usize;
        for s in skip.iter().chain([&Span::new(text.len() as u32, text.len() as u32)]) {
            let start = (s.start as usize).min(text.len());
            if start > at {
                if let Some(part) = text.get(at..start) {
                    lexer::lex_into(part, at as u32, &mut toks);
                }
            }
            at = at.max((s.end as usize).min(text.len()));
        }
        toks.retain(|t| t.kind != TokenKind::Comment);
        let mut r = Reader { text, toks: &toks, pos: 0, depth: 0 };
        let mut entries = Vec::new();
        while r.pos < toks.len() {
            let is_key = matches!(r.kind(0), Some(TokenKind::BareId | TokenKind::String))
                && r.kind(1) == Some(TokenKind::Equal)
                // `%0 = ...` is not an attribute; neither is the `=` of `%r:2 = ...`.
                && r.pos + 1 < toks.len();
            if is_key {
                let key = r.text(0).trim_matches('"').to_string();
                r.pos += 2;
                let v = r.value_with_product();
                entries.push((key, v));
            } else {
                r.pos += 1;
            }
        }
        InherentAttrs { entries }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The first of `keys` that is present.
    pub fn any(&self, keys: &[&str]) -> Option<&Value> {
        keys.iter().find_map(|k| self.get(k))
    }

    pub fn int(&self, keys: &[&str]) -> Option<i64> {
        self.any(keys).and_then(Value::as_int)
    }

    pub fn ints(&self, keys: &[&str]) -> Option<Vec<i64>> {
        self.any(keys).and_then(Value::as_ints)
    }

    pub fn bool(&self, keys: &[&str]) -> Option<bool> {
        self.any(keys).and_then(Value::as_bool)
    }

    pub fn word(&self, keys: &[&str]) -> Option<&str> {
        self.any(keys).and_then(Value::as_word)
    }

    /// `custom_call`'s target.
    pub fn call_target(&self) -> Option<&str> {
        match self.get("call_target_name")? {
            Value::Str(s) | Value::Symbol(s) => Some(s),
            _ => None,
        }
    }

    /// `broadcast_in_dim`'s `dims` / `broadcast_dimensions`.
    pub fn broadcast_dims(&self) -> Option<Vec<i64>> {
        self.ints(&["broadcast_dimensions", "dims"])
    }

    /// `transpose`'s `dims` / `permutation`.
    pub fn permutation(&self) -> Option<Vec<i64>> {
        self.ints(&["permutation", "dims"])
    }

    /// `reverse`'s and `reduce`'s `dims` / `dimensions`.
    pub fn dimensions(&self) -> Option<Vec<i64>> {
        self.ints(&["dimensions", "dims"])
    }

    /// `concatenate`'s / `sort`'s `dim` / `dimension`.
    pub fn dimension(&self) -> Option<i64> {
        self.int(&["dimension", "dim"])
    }

    /// `fft`'s `length` / `fft_length`.
    pub fn fft_length(&self) -> Option<Vec<i64>> {
        self.ints(&["fft_length", "length"])
    }

    /// `dot_general`'s dimension numbers.
    pub fn dot_dims(&self) -> Option<DotDims> {
        if let Some(s) = self.get("dot_dimension_numbers") {
            let list = |k: &str| s.field(k).and_then(Value::as_ints).unwrap_or_default();
            return Some(DotDims {
                lhs_batching: list("lhs_batching_dimensions"),
                rhs_batching: list("rhs_batching_dimensions"),
                lhs_contracting: list("lhs_contracting_dimensions"),
                rhs_contracting: list("rhs_contracting_dimensions"),
            });
        }
        let pair = |k: &str| -> Option<(Vec<i64>, Vec<i64>)> {
            match self.get(k) {
                None => Some((Vec::new(), Vec::new())),
                Some(Value::Product(p)) if p.len() == 2 => Some((p[0].as_ints()?, p[1].as_ints()?)),
                Some(_) => None,
            }
        };
        let (lhs_batching, rhs_batching) = pair("batching_dims")?;
        let (lhs_contracting, rhs_contracting) = pair("contracting_dims")?;
        if self.get("contracting_dims").is_none() && self.get("batching_dims").is_none() {
            return None;
        }
        Some(DotDims { lhs_batching, rhs_batching, lhs_contracting, rhs_contracting })
    }

    /// `gather`'s dimension numbers.
    pub fn gather_dims(&self) -> Option<GatherScatterDims> {
        let s = self.get("dimension_numbers")?;
        let list = |k: &str| s.field(k).and_then(Value::as_ints).unwrap_or_default();
        Some(GatherScatterDims {
            offset_dims: list("offset_dims"),
            collapsed_slice_dims: list("collapsed_slice_dims"),
            operand_batching_dims: list("operand_batching_dims"),
            indices_batching_dims: list("start_indices_batching_dims"),
            index_vector_dim: s.field("index_vector_dim").and_then(Value::as_int).unwrap_or(0),
        })
    }

    /// `scatter`'s dimension numbers (named like gather's).
    pub fn scatter_dims(&self) -> Option<GatherScatterDims> {
        let s = self.get("scatter_dimension_numbers")?;
        let list = |k: &str| s.field(k).and_then(Value::as_ints).unwrap_or_default();
        Some(GatherScatterDims {
            offset_dims: list("update_window_dims"),
            collapsed_slice_dims: list("inserted_window_dims"),
            operand_batching_dims: list("input_batching_dims"),
            indices_batching_dims: list("scatter_indices_batching_dims"),
            index_vector_dim: s.field("index_vector_dim").and_then(Value::as_int).unwrap_or(0),
        })
    }

    /// `convolution`'s dimension numbers.
    pub fn conv_dims(&self) -> Option<ConvDims> {
        let v = self.any(&["dimension_numbers", "dim_numbers"])?;
        match v {
            Value::Product(parts) if parts.len() == 3 => conv_from_layouts(parts),
            Value::Struct(_) => {
                let int = |k: &str| v.field(k).and_then(Value::as_int);
                let list = |k: &str| v.field(k).and_then(Value::as_ints);
                Some(ConvDims {
                    input_batch: int("input_batch_dimension")?,
                    input_feature: int("input_feature_dimension")?,
                    input_spatial: list("input_spatial_dimensions").unwrap_or_default(),
                    kernel_input_feature: int("kernel_input_feature_dimension")?,
                    kernel_output_feature: int("kernel_output_feature_dimension")?,
                    kernel_spatial: list("kernel_spatial_dimensions").unwrap_or_default(),
                    output_batch: int("output_batch_dimension")?,
                    output_feature: int("output_feature_dimension")?,
                    output_spatial: list("output_spatial_dimensions").unwrap_or_default(),
                })
            }
            _ => None,
        }
    }

    /// A `dense<...>` matrix such as `padding` (`[[lo, hi], ...]`); a splat gives
    /// `rows` rows of that value.
    pub fn int_matrix(&self, key: &str, rows: usize) -> Option<Vec<Vec<i64>>> {
        match self.get(key)? {
            Value::Int(i) => Some(vec![vec![*i, *i]; rows]),
            Value::List(rs) => rs.iter().map(Value::as_ints).collect(),
            _ => None,
        }
    }
}

/// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`: the position of each letter/number.
fn conv_from_layouts(parts: &[Value]) -> Option<ConvDims> {
    fn layout(v: &Value, a: &str, b: &str) -> Option<(i64, i64, Vec<i64>)> {
        let Value::List(items) = v else { return None };
        let (mut first, mut second) = (None, None);
        let mut spatial: Vec<(i64, i64)> = Vec::new();
        for (pos, item) in items.iter().enumerate() {
            let pos = pos as i64;
            match item {
                Value::Word(w) if w == a => first = Some(pos),
                Value::Word(w) if w == b => second = Some(pos),
                Value::Int(n) => spatial.push((*n, pos)),
                _ => return None,
            }
        }
        spatial.sort();
        Some((first?, second?, spatial.into_iter().map(|(_, p)| p).collect()))
    }
    let (ib, ifeat, is) = layout(&parts[0], "b", "f")?;
    let (ki, ko, ks) = layout(&parts[1], "i", "o")?;
    let (ob, of, os) = layout(&parts[2], "b", "f")?;
    Some(ConvDims {
        input_batch: ib,
        input_feature: ifeat,
        input_spatial: is,
        kernel_input_feature: ki,
        kernel_output_feature: ko,
        kernel_spatial: ks,
        output_batch: ob,
        output_feature: of,
        output_spatial: os,
    })
}

struct Reader<'a> {
    text: &'a str,
    toks: &'a [Token],
    pos: usize,
    depth: u32,
}

const MAX_DEPTH: u32 = 64;

fn is_scalar_type(s: &str) -> bool {
    let digits = |r: &str| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit());
    s == "index"
        || ["i", "si", "ui", "f", "bf"].iter().any(|p| s.strip_prefix(p).is_some_and(digits))
        || s.starts_with("f8E")
        || s.starts_with("f4E")
        || s.starts_with("f6E")
        || s == "tf32"
}

impl Reader<'_> {
    fn kind(&self, n: usize) -> Option<TokenKind> {
        self.toks.get(self.pos + n).map(|t| t.kind)
    }
    fn text(&self, n: usize) -> &str {
        self.toks.get(self.pos + n).map_or("", |t| t.text(self.text))
    }
    fn eat(&mut self, k: TokenKind) -> bool {
        if self.kind(0) == Some(k) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Skips one token, or a balanced group when it opens one.
    fn skip_one(&mut self) {
        let opens = |k| {
            matches!(
                k,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace | TokenKind::Less
            )
        };
        let closes = |k| {
            matches!(
                k,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace | TokenKind::Greater
            )
        };
        let Some(k) = self.kind(0) else { return };
        self.pos += 1;
        if !opens(k) {
            return;
        }
        let mut depth = 1u32;
        while let Some(k) = self.kind(0) {
            self.pos += 1;
            if opens(k) {
                depth += 1;
            } else if closes(k) {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
        }
    }

    /// Skips to just after the `>` closing the group we are in.
    fn skip_to_close_angle(&mut self) {
        while let Some(k) = self.kind(0) {
            if k == TokenKind::Greater {
                self.pos += 1;
                return;
            }
            self.skip_one();
        }
    }

    /// `: i64` after an integer (not a signature's `: (...)` or `: tensor<...>`).
    fn optional_scalar_type(&mut self) {
        if self.kind(0) == Some(TokenKind::Colon)
            && self.kind(1) == Some(TokenKind::BareId)
            && is_scalar_type(self.text(1))
            && self.kind(2) != Some(TokenKind::Less)
        {
            self.pos += 2;
        }
    }

    /// `: tensor<...>` after `dense<...>`.
    fn optional_shaped_type(&mut self) {
        if self.kind(0) != Some(TokenKind::Colon) {
            return;
        }
        match self.kind(1) {
            Some(TokenKind::BareId) if self.kind(2) == Some(TokenKind::Less) => {
                self.pos += 2;
                self.skip_one_from_open();
            }
            Some(TokenKind::BangId) => self.pos += 2,
            _ => {}
        }
    }

    /// At a `<`: skips the balanced group.
    fn skip_one_from_open(&mut self) {
        if self.kind(0) == Some(TokenKind::Less) {
            self.skip_one();
        }
    }

    /// A value, and `[..] x [..] (-> [..])` products after a list.
    fn value_with_product(&mut self) -> Value {
        let first = self.value();
        if !matches!(first, Value::List(_)) {
            return first;
        }
        if !(self.kind(0) == Some(TokenKind::BareId)
            && self.text(0) == "x"
            && self.kind(1) == Some(TokenKind::LBracket))
        {
            return first;
        }
        self.pos += 1;
        let mut parts = vec![first, self.value()];
        if self.kind(0) == Some(TokenKind::Arrow) && self.kind(1) == Some(TokenKind::LBracket) {
            self.pos += 1;
            parts.push(self.value());
        }
        Value::Product(parts)
    }

    fn value(&mut self) -> Value {
        if self.depth >= MAX_DEPTH {
            self.skip_one();
            return Value::Other;
        }
        self.depth += 1;
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> Value {
        let Some(k) = self.kind(0) else { return Value::Other };
        match k {
            TokenKind::Minus if self.kind(1) == Some(TokenKind::Integer) => {
                let v = self.text(1).parse::<i64>().map(|v| -v).ok();
                self.pos += 2;
                self.optional_scalar_type();
                v.map_or(Value::Other, Value::Int)
            }
            TokenKind::Integer => {
                let v = self.text(0).parse::<i64>().ok();
                self.pos += 1;
                self.optional_scalar_type();
                v.map_or(Value::Other, Value::Int)
            }
            TokenKind::HexInteger => {
                let v = i64::from_str_radix(&self.text(0)[2..], 16).ok();
                self.pos += 1;
                self.optional_scalar_type();
                v.map_or(Value::Other, Value::Int)
            }
            TokenKind::Float | TokenKind::Minus => {
                self.pos += 1;
                if k == TokenKind::Minus && self.kind(0) == Some(TokenKind::Float) {
                    self.pos += 1;
                }
                self.optional_scalar_type();
                Value::Other
            }
            TokenKind::String => {
                let s = self.text(0);
                let s = s.get(1..s.len().saturating_sub(1)).unwrap_or("").to_string();
                self.pos += 1;
                Value::Str(s)
            }
            TokenKind::AtId => {
                let s = self.text(0)[1..].trim_matches('"').to_string();
                self.pos += 1;
                Value::Symbol(s)
            }
            TokenKind::LBracket => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    match self.kind(0) {
                        None => break,
                        Some(TokenKind::RBracket) => {
                            self.pos += 1;
                            break;
                        }
                        Some(TokenKind::Comma) => self.pos += 1,
                        Some(TokenKind::RParen | TokenKind::RBrace | TokenKind::Greater) => break,
                        Some(_) => {
                            let before = self.pos;
                            let v = self.value();
                            // `0:4:2` slice ranges: keep the start only.
                            while self.kind(0) == Some(TokenKind::Colon) {
                                self.pos += 1;
                                let _ = self.value();
                            }
                            items.push(v);
                            if self.pos == before {
                                self.pos += 1;
                            }
                        }
                    }
                }
                Value::List(items)
            }
            TokenKind::LBrace => {
                self.pos += 1;
                let entries = self.entries(TokenKind::RBrace);
                Value::Struct(entries)
            }
            TokenKind::BareId => {
                let word = self.text(0).to_string();
                match word.as_str() {
                    "true" | "false" => {
                        self.pos += 1;
                        Value::Bool(word == "true")
                    }
                    "array" if self.kind(1) == Some(TokenKind::Less) => {
                        // array<i64: 1, 2> / array<i64>
                        self.pos += 2;
                        let mut items = Vec::new();
                        if self.kind(0) == Some(TokenKind::BareId) {
                            self.pos += 1;
                        }
                        if self.eat(TokenKind::Colon) {
                            loop {
                                match self.kind(0) {
                                    None | Some(TokenKind::Greater) => break,
                                    Some(TokenKind::Comma) => self.pos += 1,
                                    Some(_) => {
                                        let before = self.pos;
                                        items.push(self.value());
                                        if self.pos == before {
                                            self.pos += 1;
                                        }
                                    }
                                }
                            }
                        }
                        self.skip_to_close_angle();
                        Value::List(items)
                    }
                    "dense" if self.kind(1) == Some(TokenKind::Less) => {
                        self.pos += 2;
                        let v = if self.kind(0) == Some(TokenKind::Greater) {
                            Value::List(Vec::new())
                        } else {
                            self.value()
                        };
                        self.skip_to_close_angle();
                        self.optional_shaped_type();
                        v
                    }
                    _ if self.kind(1) == Some(TokenKind::Less) => {
                        // A type or another keyword-introduced attribute.
                        self.pos += 1;
                        self.skip_one();
                        self.optional_shaped_type();
                        Value::Other
                    }
                    _ => {
                        self.pos += 1;
                        Value::Word(word)
                    }
                }
            }
            TokenKind::HashId => {
                self.pos += 1;
                if self.kind(0) != Some(TokenKind::Less) {
                    return Value::Other;
                }
                self.dialect_attr_body()
            }
            _ => {
                self.skip_one();
                Value::Other
            }
        }
    }

    /// At the `<` of `#dialect.attr<...>`: key/value entries, `[..]x[..]->[..]`, or
    /// words (`#stablehlo<transpose NO_TRANSPOSE>`); anything else is skipped.
    fn dialect_attr_body(&mut self) -> Value {
        let open = self.pos;
        self.pos += 1;
        if self.kind(0) == Some(TokenKind::BareId)
            && self.text(0) == "raw"
            && self.kind(1) == Some(TokenKind::BareId)
        {
            self.pos += 1;
        }
        let v = match self.kind(0) {
            Some(TokenKind::BareId) if self.kind(1) == Some(TokenKind::Equal) => {
                Value::Struct(self.entries(TokenKind::Greater))
            }
            Some(TokenKind::LBracket) => {
                let v = self.value_with_product();
                if self.eat(TokenKind::Greater) {
                    v
                } else {
                    self.pos = open;
                    self.skip_one();
                    Value::Other
                }
            }
            Some(TokenKind::BareId) => {
                let mut last = None;
                while self.kind(0) == Some(TokenKind::BareId) {
                    last = Some(self.text(0).to_string());
                    self.pos += 1;
                }
                if self.eat(TokenKind::Greater) {
                    last.map_or(Value::Other, Value::Word)
                } else {
                    self.pos = open;
                    self.skip_one();
                    Value::Other
                }
            }
            _ => {
                self.pos = open;
                self.skip_one();
                Value::Other
            }
        };
        v
    }

    /// `k = v, k2, ...` up to and including `close`.
    fn entries(&mut self, close: TokenKind) -> Vec<(String, Value)> {
        let mut entries = Vec::new();
        loop {
            match self.kind(0) {
                None => break,
                Some(k) if k == close => {
                    self.pos += 1;
                    break;
                }
                Some(TokenKind::Comma) => self.pos += 1,
                Some(TokenKind::BareId | TokenKind::String) => {
                    let key = self.text(0).trim_matches('"').to_string();
                    self.pos += 1;
                    if self.eat(TokenKind::Equal) {
                        let v = self.value_with_product();
                        entries.push((key, v));
                    } else {
                        entries.push((key, Value::Bool(true)));
                    }
                }
                Some(
                    TokenKind::RParen
                    | TokenKind::RBracket
                    | TokenKind::RBrace
                    | TokenKind::Greater,
                ) => {
                    // Mismatched closer: stop without consuming (the caller recovers).
                    break;
                }
                Some(_) => self.skip_one(),
            }
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(text: &str) -> InherentAttrs {
        InherentAttrs::from_text(text, &[])
    }

    #[test]
    fn pretty_and_generic_forms_agree() {
        let pretty = attrs(
            "%0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>",
        );
        let generic = attrs(
            r#"%0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>]}> : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>"#,
        );
        let want = DotDims {
            lhs_batching: vec![0],
            rhs_batching: vec![0],
            lhs_contracting: vec![2],
            rhs_contracting: vec![1],
        };
        assert_eq!(pretty.dot_dims(), Some(want.clone()));
        assert_eq!(generic.dot_dims(), Some(want));

        let conv_pretty = attrs(
            "%0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {batch_group_count = 4 : i64, feature_group_count = 1 : i64} : (tensor<8x9x9x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x4x4x8xf32>",
        );
        let conv_generic = attrs(
            r#"%0 = "stablehlo.convolution"(%a, %b) <{batch_group_count = 4 : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, feature_group_count = 1 : i64}> : (tensor<8x9x9x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x4x4x8xf32>"#,
        );
        let conv_generic2 = attrs(
            r#"%0 = "stablehlo.convolution"(%a, %b) <{batch_group_count = 4 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64}> : (tensor<8x9x9x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x4x4x8xf32>"#,
        );
        let dims = conv_pretty.conv_dims().unwrap();
        assert_eq!(dims.input_spatial, vec![1, 2]);
        assert_eq!(dims.kernel_output_feature, 3);
        assert_eq!(conv_generic.conv_dims(), Some(dims.clone()));
        assert_eq!(conv_generic2.conv_dims(), Some(dims));
        for a in [&conv_pretty, &conv_generic, &conv_generic2] {
            assert_eq!(a.int(&["batch_group_count"]), Some(4));
        }

        let t1 = attrs(
            "%0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>",
        );
        let t2 = attrs(
            r#"%0 = "stablehlo.transpose"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>"#,
        );
        assert_eq!(t1.permutation(), Some(vec![1, 0]));
        assert_eq!(t2.permutation(), Some(vec![1, 0]));

        let c1 = attrs("%0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>");
        let c2 = attrs(
            r#"%0 = "stablehlo.concatenate"(%a, %b) <{dimension = 1 : i64}> : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>"#,
        );
        assert_eq!(c1.dimension(), Some(1));
        assert_eq!(c2.dimension(), Some(1));

        let f1 = attrs("%0 = stablehlo.fft %a, type = RFFT, length = [32, 64] : (tensor<8x32x64xf32>) -> tensor<8x32x33xcomplex<f32>>");
        let f2 = attrs(
            r#"%0 = "stablehlo.fft"(%a) <{fft_length = array<i64: 32, 64>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<8x32x64xf32>) -> tensor<8x32x33xcomplex<f32>>"#,
        );
        assert_eq!(f1.fft_length(), Some(vec![32, 64]));
        assert_eq!(f2.fft_length(), Some(vec![32, 64]));

        let r1 = attrs("%1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [1] : (tensor<2x64x13xf32>, tensor<f32>) -> tensor<2x13xf32>");
        assert_eq!(r1.dimensions(), Some(vec![1]));
    }

    #[test]
    fn nested_and_odd_values() {
        let g = attrs(
            r#"%0 = "stablehlo.gather"(%arg0, %arg1) {
    dimension_numbers = #stablehlo.gather<
      offset_dims = [2, 3, 4],
      collapsed_slice_dims = [0],
      start_index_map = [1, 0, 3],
      index_vector_dim = 2>,
    slice_sizes = array<i64: 1, 2, 2, 1>,
    indices_are_sorted = false
  } : (tensor<3x4x2x5xf32>, tensor<2x3x3xi64>) -> tensor<2x3x2x2x1xf32>"#,
        );
        let d = g.gather_dims().unwrap();
        assert_eq!(d.offset_dims, vec![2, 3, 4]);
        assert_eq!(d.collapsed_slice_dims, vec![0]);
        assert_eq!(d.index_vector_dim, 2);
        assert_eq!(g.bool(&["indices_are_sorted"]), Some(false));

        let w = attrs(
            "{window_dimensions = array<i64: 3, 1, 1>, padding = dense<[[0, 0], [2, -2], [0, 0]]> : tensor<3x2xi64>, window_strides = array<i64: 3, 1, 1>}",
        );
        assert_eq!(w.int_matrix("padding", 3), Some(vec![vec![0, 0], vec![2, -2], vec![0, 0]]));
        assert_eq!(w.ints(&["window_strides"]), Some(vec![3, 1, 1]));
        let splat = attrs("{padding = dense<0> : tensor<2x2xi64>}");
        assert_eq!(splat.int_matrix("padding", 2), Some(vec![vec![0, 0], vec![0, 0]]));

        let t = attrs(
            r#"{left_side = true, transpose_a = #stablehlo<transpose TRANSPOSE>, sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a"}]>]>, x = 3}"#,
        );
        assert_eq!(t.word(&["transpose_a"]), Some("TRANSPOSE"));
        assert_eq!(t.bool(&["left_side"]), Some(true));
        assert_eq!(t.int(&["x"]), Some(3));

        let cc = attrs(
            r#"%0 = "stablehlo.custom_call"(%a) <{call_target_name = "Eigh"}> : (tensor<4xf32>) -> tensor<4xf32>"#,
        );
        assert_eq!(cc.call_target(), Some("Eigh"));

        // Nothing panics on junk.
        for junk in ["= = [", "a = #x<[", "a = array<", "a = dense<[[1, >", "k = [1]x[", "z = -"] {
            let _ = attrs(junk);
        }
    }
}
