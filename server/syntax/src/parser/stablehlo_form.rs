//! StableHLO custom forms read strictly, as MLIR reads them: the first mistake gives
//! MLIR's message at MLIR's position. The tolerant scanner (`scan_custom`) still builds
//! the op; this check only decides whether, and where, the form is wrong.
//!
//! Each op's grammar is a list of [`Step`]s (StableHLO's `assemblyFormat`s). Positions
//! follow MLIR's `emitWrongTokenError`: an unexpected token is reported where the
//! previous token ends.

use super::{messages as msg, Parser};
use crate::lexer::TokenKind;
use crate::span::Span;
use crate::tree::{self, Custom, Op};
use smallvec::SmallVec;

/// One piece of a custom form.
#[derive(Clone, Copy)]
enum Step {
    /// `%x` (or `%x#0`).
    Operand,
    /// `operands`: `%a, %b` (possibly none).
    Operands,
    /// VariadicOperandWithAttribute: `%a, %b,` (each operand followed by a comma).
    OperandsWithComma,
    Comma,
    Equal,
    Keyword(&'static str),
    /// `[1, 2]` (a dense i64 array).
    IntArray,
    /// An integer attribute (`dim = 1`).
    IntAttr,
    /// `, precision = [DEFAULT, ...]`, `, algorithm = <...>`: optional.
    Precision,
    /// `@target(%a, %b)`: custom_call's callee and operands.
    CallTarget,
    /// constant's `{attrs}? dense<...>`, then `:` and the type.
    Constant,
    /// optimization_barrier's `%a, %b : T, U` or `()`.
    BarrierBody,
    /// cholesky's `, lower = true`: optional.
    OptionalLower,
    /// reduce's `(%x init: %y)` groups, then `applies op` or nothing.
    ReduceHead,
    /// A bare keyword of an enum (`GT`, `FLOAT`).
    EnumKeyword,
    /// `(`, `, compare_type` after compare's operands: optional.
    OptionalCommaKeyword,
    /// dot_general's dimension numbers.
    DotDims,
    /// `[0:8, 0:4:2]`.
    SliceRanges,
    /// The optional attribute dictionary.
    AttrDict,
    /// The optional attribute dictionary, then `:`.
    Colon,
    /// `functional-type(operands, results)`.
    FunctionType,
    /// `operands attr-dict : functional-type(operands, results)`, the counts compared.
    OperandsFunctionType,
    /// `custom<SameOperandsAndResultType>`: a type, or a function type.
    SameType,
    /// A list of types (select's `T1, T2`) or a function type.
    TypeList,
    /// One type.
    Type,
}

use Step::*;

const UNARY: &[Step] = &[Operand, Colon, SameType];
const BINARY: &[Step] = &[Operand, Comma, Operand, Colon, SameType];
const TERNARY: &[Step] = &[Operand, Comma, Operand, Comma, Operand, Colon, SameType];
const OPERANDS_FN: &[Step] = &[OperandsFunctionType];

/// The grammar of a StableHLO op written in custom form (`name` without the dialect),
/// for the ops whose form has no region and is checked here.
fn grammar(name: &str) -> Option<&'static [Step]> {
    Some(match name {
        "abs"
        | "cbrt"
        | "ceil"
        | "convert"
        | "count_leading_zeros"
        | "cosine"
        | "exponential"
        | "exponential_minus_one"
        | "floor"
        | "imag"
        | "log"
        | "log_plus_one"
        | "logistic"
        | "not"
        | "negate"
        | "popcnt"
        | "real"
        | "round_nearest_afz"
        | "round_nearest_even"
        | "rsqrt"
        | "sign"
        | "sine"
        | "sqrt"
        | "tan"
        | "tanh" => UNARY,
        "add"
        | "atan2"
        | "divide"
        | "maximum"
        | "minimum"
        | "multiply"
        | "power"
        | "remainder"
        | "shift_left"
        | "shift_right_arithmetic"
        | "shift_right_logical"
        | "subtract"
        | "and"
        | "or"
        | "xor" => BINARY,
        "clamp" => TERNARY,
        "select" => &[Operand, Comma, Operand, Comma, Operand, Colon, TypeList],
        "compare" => &[
            EnumKeyword,
            Comma,
            Operand,
            Comma,
            Operand,
            OptionalCommaKeyword,
            Colon,
            FunctionType,
        ],
        "broadcast_in_dim" | "transpose" => {
            &[Operand, Comma, Keyword("dims"), Equal, IntArray, Colon, FunctionType]
        }
        "reverse" => &[Operand, Comma, Keyword("dims"), Equal, IntArray, Colon, SameType],
        "reshape" | "bitcast_convert" | "is_finite" | "dynamic_update_slice" => OPERANDS_FN,
        "iota" => &[Keyword("dim"), Equal, IntAttr, Colon, Type],
        "partition_id" | "replica_id" => &[Colon, Type],
        "concatenate" => &[OperandsWithComma, Keyword("dim"), Equal, IntAttr, Colon, FunctionType],
        "dot" => &[Operand, Comma, Operand, Precision, Colon, FunctionType],
        "dot_general" => &[Operand, Comma, Operand, Comma, DotDims, Precision, Colon, FunctionType],
        "dynamic_slice" => &[
            Operand,
            Comma,
            OperandsWithComma,
            Keyword("sizes"),
            Equal,
            IntArray,
            Colon,
            FunctionType,
        ],
        "custom_call" => &[CallTarget, Colon, FunctionType],
        "optimization_barrier" => &[AttrDict, BarrierBody],
        "cholesky" => &[Operand, OptionalLower, Colon, SameType],
        "constant" => &[Constant],
        "reduce" => &[
            ReduceHead,
            Keyword("across"),
            Keyword("dimensions"),
            Equal,
            IntArray,
            Colon,
            FunctionType,
        ],
        "slice" => &[Operand, SliceRanges, Colon, FunctionType],
        "pad" => &[
            Operand,
            Comma,
            Operand,
            Comma,
            Keyword("low"),
            Equal,
            IntArray,
            Comma,
            Keyword("high"),
            Equal,
            IntArray,
            Comma,
            Keyword("interior"),
            Equal,
            IntArray,
            Colon,
            FunctionType,
        ],
        _ => return None,
    })
}

/// `tensor<AxBxE>` with a static shape: its element count and element type.
fn static_tensor(ty: &str) -> Option<(u64, &str)> {
    let inner = ty.strip_prefix("tensor<")?.strip_suffix('>')?;
    // Every part but the last is a dimension.
    let mut parts = inner.split('x').map(str::trim);
    let mut elem = parts.next()?;
    let mut count = 1u64;
    for p in parts {
        count = count.checked_mul(elem.parse().ok()?)?;
        elem = p;
    }
    Some((count, elem))
}

/// A mistake: where, and MLIR's message (without the `custom op` prefix, which
/// `prefixed` says to add).
struct Mistake {
    span: Span,
    message: String,
    prefixed: bool,
    /// A line MLIR chains to the error (`failed to parse ...`), at this position.
    chained: Option<(Span, &'static str)>,
}

type Check = Result<(), Mistake>;

/// What the strict reading keeps for the tree, so that nothing is read from the text
/// again later.
#[derive(Default)]
struct Kept {
    /// dot_general's dimension numbers; `None` also when one does not fit an `i64`.
    dot_dims: Option<tree::DotDims>,
}

const PRECISION_PARSE_FAILED: &str = "failed to parse StableHLO_PrecisionAttr parameter 'value' which is to be a `::mlir::stablehlo::Precision`";

impl Parser<'_> {
    /// Checks the custom form of StableHLO op `name` (the cursor after the name) and
    /// reports MLIR's first error; the cursor is left where it was. Whether an error
    /// was reported.
    /// What the form spells that the tree has no other place for goes to `op.custom`.
    pub(crate) fn check_stablehlo_form(
        &mut self,
        op: &mut Op,
        full_name: &str,
        name: &str,
    ) -> bool {
        let Some(steps) = grammar(name) else { return false };
        let save = self.save();
        self.form_types.clear();
        let mut kept = Kept::default();
        let result = steps
            .iter()
            .try_for_each(|&s| self.step(s, &mut kept))
            .and_then(|()| self.form_end(name));
        self.restore(save);
        match result {
            Ok(()) => {
                if let Some(d) = kept.dot_dims {
                    op.custom = Custom::DotDims(Box::new(d));
                }
                false
            }
            Err(m) => {
                let prefix =
                    if m.prefixed { format!("custom op '{full_name}' ") } else { String::new() };
                self.error(m.span, format!("{prefix}{}", m.message));
                if let Some((span, chained)) = m.chained {
                    self.error_chained(span, format!("{prefix}{chained}"));
                }
                true
            }
        }
    }

    /// After the form: on the same line only the location, another op or a region
    /// (reduce's `reducer`) may follow; MLIR reads anything else as an op name.
    fn form_end(&mut self, name: &str) -> Check {
        if self.at_eof() || self.nl_before() || name == "reduce" {
            return Ok(());
        }
        match self.kind() {
            TokenKind::ValueId | TokenKind::BareId | TokenKind::String | TokenKind::RBrace => {
                Ok(())
            }
            _ => Err(self.wrong_token("operation name in quotes")),
        }
    }

    /// The error at the end of the previous token (MLIR's `emitWrongTokenError`).
    fn wrong_token(&self, what: &str) -> Mistake {
        let pos = self.prev_end().max(self.base);
        Mistake {
            span: Span::empty(pos - self.base),
            message: format!("expected {what}"),
            prefixed: false,
            chained: None,
        }
    }

    /// An error at the current token, with the custom op prefix.
    fn at_token(&self, message: String) -> Mistake {
        Mistake { span: self.rel(self.peek()), message, prefixed: true, chained: None }
    }

    fn need(&mut self, kind: TokenKind, what: &str) -> Check {
        match self.eat(kind) {
            Some(_) => Ok(()),
            None => Err(self.wrong_token(what)),
        }
    }

    fn step(&mut self, step: Step, kept: &mut Kept) -> Check {
        match step {
            Operand => self.strict_operand(),
            Operands => {
                if self.at(TokenKind::ValueId) {
                    self.strict_operand()?;
                    while self.eat(TokenKind::Comma).is_some() {
                        self.strict_operand()?;
                    }
                }
                Ok(())
            }
            OperandsFunctionType => {
                let at = self.peek();
                let mut count = 0;
                if self.at(TokenKind::ValueId) {
                    self.strict_operand()?;
                    count += 1;
                    while self.eat(TokenKind::Comma).is_some() {
                        self.strict_operand()?;
                        count += 1;
                    }
                }
                self.step(Colon, kept)?;
                let inputs = self.strict_function_type()?;
                if inputs != count {
                    return Err(Mistake {
                        span: self.rel(at),
                        message: format!(
                            "number of operands and types do not match: got {count} operands and {inputs} types"
                        ),
                        prefixed: true, chained: None,
                    });
                }
                Ok(())
            }
            OperandsWithComma => {
                while self.at(TokenKind::ValueId) {
                    self.strict_operand()?;
                    self.need(TokenKind::Comma, "','")?;
                }
                Ok(())
            }
            Comma => self.need(TokenKind::Comma, "','"),
            Equal => self.need(TokenKind::Equal, "'='"),
            Keyword(kw) => {
                if self.eat_keyword(kw).is_some() {
                    Ok(())
                } else {
                    Err(self.at_token(format!("expected '{kw}'")))
                }
            }
            IntArray => self.int_array(),
            IntAttr => {
                if self.at_keyword("tensor") {
                    self.strict_type()?;
                    return Ok(());
                }
                if self.at(TokenKind::Minus) {
                    self.bump();
                }
                if self.eat(TokenKind::Integer).is_some() {
                    return Ok(());
                }
                Err(self.wrong_token("attribute value"))
            }
            Precision => self.precision(),
            CallTarget => {
                if self.eat(TokenKind::AtId).is_none() && self.eat(TokenKind::String).is_none() {
                    return Err(self.at_token(msg::EXPECTED_SYMBOL_NAME.into()));
                }
                self.need(TokenKind::LParen, "'('")?;
                if self.eat(TokenKind::RParen).is_none() {
                    if !self.at(TokenKind::ValueId) {
                        return Err(self.wrong_token("')'"));
                    }
                    loop {
                        self.strict_operand()?;
                        if self.eat(TokenKind::Comma).is_none() {
                            break;
                        }
                    }
                    self.need(TokenKind::RParen, "')'")?;
                }
                Ok(())
            }
            Constant => self.constant(),
            BarrierBody => {
                if self.at(TokenKind::ValueId) {
                    self.step(Operands, kept)?;
                    self.step(Colon, kept)?;
                    return self.step(TypeList, kept);
                }
                self.need(TokenKind::LParen, "'('")?;
                self.need(TokenKind::RParen, "')'")
            }
            OptionalLower => {
                if self.eat(TokenKind::Comma).is_some() {
                    self.step(Keyword("lower"), kept)?;
                    self.step(Equal, kept)?;
                    if self.eat(TokenKind::BareId).is_none() {
                        return Err(self.wrong_token("attribute value"));
                    }
                }
                Ok(())
            }
            ReduceHead => self.reduce_head(),
            EnumKeyword => {
                if self.at(TokenKind::BareId) {
                    self.bump();
                    Ok(())
                } else {
                    Err(self.at_token(msg::EXPECTED_KEYWORD.into()))
                }
            }
            OptionalCommaKeyword => {
                if self.eat(TokenKind::Comma).is_some() {
                    return self.step(EnumKeyword, kept);
                }
                Ok(())
            }
            DotDims => self.dot_dims(kept),
            SliceRanges => self.slice_ranges(),
            AttrDict => self.attr_dict(),
            Colon => {
                self.attr_dict()?;
                self.need(TokenKind::Colon, "':'")
            }
            FunctionType => self.strict_function_type().map(|_| ()),
            SameType | Type => self.strict_type().map(|_| ()),
            TypeList => {
                if self.strict_type()?.is_some() {
                    return Ok(());
                }
                while self.eat(TokenKind::Comma).is_some() {
                    self.strict_type()?;
                }
                Ok(())
            }
        }
    }

    /// A type that must be a function type; how many inputs it has.
    fn strict_function_type(&mut self) -> Result<usize, Mistake> {
        let start = self.peek();
        if let Some(inputs) = self.strict_type()? {
            return Ok(inputs);
        }
        let text = self.text_from(start.start).to_string();
        Err(Mistake {
            span: self.rel(start),
            message: msg::not_a_function_type(text),
            prefixed: true,
            chained: None,
        })
    }

    fn strict_operand(&mut self) -> Check {
        if !self.at(TokenKind::ValueId) {
            return Err(self.wrong_token("SSA operand"));
        }
        let t = self.bump();
        let next = self.peek();
        if next.kind == TokenKind::HashId && next.start == t.end {
            self.bump();
        }
        Ok(())
    }

    fn int(&mut self) -> Check {
        if self.at(TokenKind::Integer) || self.at(TokenKind::HexInteger) {
            self.bump();
            return Ok(());
        }
        if self.at(TokenKind::Minus) && self.nth_kind(1) == TokenKind::Integer {
            self.bump();
            self.bump();
            return Ok(());
        }
        Err(self.at_token(msg::EXPECTED_INTEGER.into()))
    }

    /// An `int` whose value is kept (`None` when it does not fit an `i64`).
    fn int_value(&mut self) -> Result<Option<i64>, Mistake> {
        let negative = self.at(TokenKind::Minus) && self.nth_kind(1) == TokenKind::Integer;
        if negative {
            self.bump();
        }
        let t = self.peek();
        let value = match t.kind {
            TokenKind::Integer => {
                self.text(t).parse::<i64>().ok().map(|v| if negative { -v } else { v })
            }
            TokenKind::HexInteger => i64::from_str_radix(&self.text(t)[2..], 16).ok(),
            _ => return Err(self.at_token(msg::EXPECTED_INTEGER.into())),
        };
        self.bump();
        Ok(value)
    }

    /// `[` (integer (`,` integer)*)? `]`.
    fn int_array(&mut self) -> Check {
        self.need(TokenKind::LBracket, "'['")?;
        if self.eat(TokenKind::RBracket).is_some() {
            return Ok(());
        }
        loop {
            self.int()?;
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            return self.need(TokenKind::RBracket, "']'");
        }
    }

    /// An `int_array` whose values are kept (`None` when one does not fit an `i64`).
    fn int_list(&mut self) -> Result<Option<SmallVec<[i64; 2]>>, Mistake> {
        self.need(TokenKind::LBracket, "'['")?;
        let mut out = Some(SmallVec::new());
        if self.eat(TokenKind::RBracket).is_some() {
            return Ok(out);
        }
        loop {
            match (self.int_value()?, &mut out) {
                (Some(v), Some(list)) => list.push(v),
                _ => out = None,
            }
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            self.need(TokenKind::RBracket, "']'")?;
            return Ok(out);
        }
    }

    /// `, precision = [DEFAULT, HIGH]` and `, algorithm = <...>`, each optional.
    fn precision(&mut self) -> Check {
        while self.at(TokenKind::Comma) {
            let save = self.save();
            self.bump();
            if self.eat_keyword("precision").is_some() {
                self.need(TokenKind::Equal, "'='")?;
                self.need(TokenKind::LBracket, "'['")?;
                if self.eat(TokenKind::RBracket).is_some() {
                    continue;
                }
                loop {
                    if !self.at(TokenKind::BareId) && !self.at(TokenKind::String) {
                        return Err(self.at_token(msg::EXPECTED_KEYWORD_OR_STRING.into()));
                    }
                    if !matches!(self.peek_text(), "DEFAULT" | "HIGH" | "HIGHEST") {
                        let mut m = self.at_token(msg::PRECISION_VALUES.into());
                        m.chained = Some((Span::empty(m.span.end), PRECISION_PARSE_FAILED));
                        return Err(m);
                    }
                    self.bump();
                    if self.eat(TokenKind::Comma).is_some() {
                        continue;
                    }
                    self.need(TokenKind::RBracket, "']'")?;
                    break;
                }
            } else if self.eat_keyword("algorithm").is_some() {
                self.need(TokenKind::Equal, "'='")?;
                if self.at(TokenKind::Less) {
                    self.skip_balanced();
                }
            } else if self.at(TokenKind::Colon) || self.at(TokenKind::LBrace) {
                self.restore(save);
                break;
            } else {
                return Err(self.at_token(msg::EXPECTED_PRECISION.into()));
            }
        }
        Ok(())
    }

    /// `{attrs}? dense<literal> : type`, and the literal against the element type (a
    /// splat); other attribute values are not checked.
    fn constant(&mut self) -> Check {
        self.attr_dict()?;
        let value_start = self.peek();
        if self.at_keyword("tensor") {
            // A type is an attribute, but not an elements attribute.
            self.strict_type()?;
            return Err(Mistake {
                span: self.rel(value_start),
                message: msg::INVALID_ATTRIBUTE_KIND.into(),
                prefixed: true,
                chained: None,
            });
        }
        if self.eat_keyword("dense").is_none() {
            let known = match self.kind() {
                TokenKind::BareId => {
                    super::ty::is_builtin_type_name(self.peek_text())
                        || matches!(
                            self.peek_text(),
                            "array" | "dense_resource" | "true" | "false" | "unit"
                        )
                }
                TokenKind::Less | TokenKind::Greater | TokenKind::Arrow | TokenKind::Colon => false,
                _ => true,
            };
            if !known {
                return Err(self.wrong_token("attribute value"));
            }
            // Another spelling (`constant() {value = ...} : () -> T`): not checked.
            while !self.at_eof() && !self.nl_before() {
                self.bump();
            }
            return Ok(());
        }
        if !self.at(TokenKind::Less) {
            return Err(self.wrong_token("'<' after 'dense'"));
        }
        self.bump();
        let empty = self.at(TokenKind::Greater);
        // The literal: one scalar (checked below) or a nested list (not checked).
        let mut scalar = None;
        let mut negative = false;
        if !self.at(TokenKind::Greater) {
            match self.kind() {
                TokenKind::LBracket | TokenKind::LParen => self.skip_balanced(),
                TokenKind::Minus
                    if matches!(self.nth_kind(1), TokenKind::Integer | TokenKind::Float) =>
                {
                    self.bump();
                    negative = true;
                    scalar = Some(self.bump());
                }
                TokenKind::Integer
                | TokenKind::HexInteger
                | TokenKind::Float
                | TokenKind::String => {
                    scalar = Some(self.bump());
                }
                TokenKind::BareId if matches!(self.peek_text(), "true" | "false") => {
                    scalar = Some(self.bump());
                }
                _ => return Err(self.at_token_plain(msg::ELEMENT_LITERAL)),
            }
        }
        self.need(TokenKind::Greater, "'>'")?;
        self.need(TokenKind::Colon, "':'")?;
        let ty_start = self.peek().start;
        self.strict_type()?;
        let ty = self.text_from(ty_start);
        let Some((count, elem)) = static_tensor(ty) else { return Ok(()) };
        if empty && count > 0 {
            return Err(Mistake {
                span: self.rel(value_start),
                message: msg::zero_elements(ty),
                prefixed: false,
                chained: None,
            });
        }
        let Some(lit) = scalar else { return Ok(()) };
        let at_lit = |m: &str| Mistake {
            span: self.rel(lit),
            message: m.to_string(),
            prefixed: false,
            chained: None,
        };
        let integer = elem.starts_with('i') || elem.starts_with("si") || elem.starts_with("ui");
        let float = elem.starts_with('f') || elem == "bf16";
        if lit.kind == TokenKind::BareId {
            return match elem {
                "i1" => Ok(()),
                _ if float => Err(at_lit(msg::FLOAT_LITERAL)),
                _ => Err(at_lit(msg::BOOL_LITERAL)),
            };
        }
        if integer && lit.kind == TokenKind::HexInteger {
            let digits = self.text(lit)[2..].trim_start_matches('0');
            let width: u32 =
                elem.trim_start_matches(|c: char| c.is_ascii_alphabetic()).parse().unwrap_or(64);
            let bits = match digits.as_bytes().first() {
                None => 0,
                Some(&d) => {
                    let lead = (d as char).to_digit(16).unwrap_or(15);
                    (digits.len() as u32 - 1) * 4 + (32 - lead.leading_zeros())
                }
            };
            if bits > width {
                return Err(at_lit(msg::INTEGER_OUT_OF_RANGE));
            }
        }
        if integer && negative && elem.starts_with("ui") {
            return Err(at_lit(msg::NEGATIVE_UNSIGNED));
        }
        if integer && lit.kind == TokenKind::Float {
            return Err(at_lit(msg::FLOAT_FOR_INTEGER));
        }
        if float && lit.kind == TokenKind::Integer {
            return Err(at_lit(msg::DECIMAL_FOR_FLOAT));
        }
        if float && lit.kind == TokenKind::HexInteger {
            let digits = self.text(lit)[2..].trim_start_matches('0').len() as u32;
            let width = match elem {
                "f16" | "bf16" => 16,
                "f32" => 32,
                "f64" => 64,
                _ => u32::MAX,
            };
            if digits * 4 > width {
                return Err(at_lit(msg::HEX_FLOAT_OUT_OF_RANGE));
            }
        }
        Ok(())
    }

    /// An optional attribute dictionary, read as MLIR reads it: names, values (one
    /// attribute each, not checked inside), commas, the closing `}`.
    fn attr_dict(&mut self) -> Check {
        if self.eat(TokenKind::LBrace).is_none() {
            return Ok(());
        }
        if self.eat(TokenKind::RBrace).is_some() {
            return Ok(());
        }
        loop {
            if !matches!(self.kind(), TokenKind::BareId | TokenKind::String) {
                return Err(self.wrong_token("attribute name"));
            }
            self.bump();
            if self.eat(TokenKind::Equal).is_some() {
                self.attr_value()?;
            }
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            return self.need(TokenKind::RBrace, "'}' in attribute dictionary");
        }
    }

    /// One attribute value: a token or bracketed group, `name<...>`, and `: type`.
    fn attr_value(&mut self) -> Check {
        match self.kind() {
            TokenKind::Comma | TokenKind::RBrace | TokenKind::Eof => {
                return Err(self.wrong_token("attribute value"))
            }
            TokenKind::Minus => {
                self.bump();
                self.bump();
            }
            TokenKind::BareId | TokenKind::HashId | TokenKind::BangId => {
                self.bump();
                if self.at(TokenKind::Less) {
                    self.skip_balanced();
                }
            }
            _ => self.skip_balanced(),
        }
        if self.at(TokenKind::Colon) && self.nth_kind(1) == TokenKind::BareId {
            self.bump();
            self.strict_type()?;
        }
        Ok(())
    }

    /// An error at the current token, without the custom op prefix.
    fn at_token_plain(&self, message: &str) -> Mistake {
        Mistake {
            span: self.rel(self.peek()),
            message: message.to_string(),
            prefixed: false,
            chained: None,
        }
    }

    /// `(%x init: %y), (%z init: %w)`, then `applies op.name` (or the region form).
    fn reduce_head(&mut self) -> Check {
        while self.at(TokenKind::LParen) {
            self.need(TokenKind::LParen, "'('")?;
            self.strict_operand()?;
            if self.eat_keyword("init").is_none() {
                return Err(self.at_token(msg::EXPECTED_INIT.into()));
            }
            self.need(TokenKind::Colon, "':'")?;
            self.strict_operand()?;
            self.need(TokenKind::RParen, "')'")?;
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        if self.eat_keyword("applies").is_some() && self.eat(TokenKind::BareId).is_none() {
            return Err(self.wrong_token("bare identifier"));
        }
        Ok(())
    }

    /// `(batching_dims = [..] x [..] ,)? contracting_dims = [..] x [..]`, kept.
    fn dot_dims(&mut self, kept: &mut Kept) -> Check {
        type List = SmallVec<[i64; 2]>;
        let pair = |p: &mut Self| -> Result<Option<(List, List)>, Mistake> {
            p.need(TokenKind::Equal, "'='")?;
            let lhs = p.int_list()?;
            if p.eat_keyword("x").is_none() {
                return Err(p.at_token(msg::EXPECTED_X.into()));
            }
            Ok(lhs.zip(p.int_list()?))
        };
        let mut batching = Some(Default::default());
        if self.eat_keyword("batching_dims").is_some() {
            batching = pair(self)?;
            self.need(TokenKind::Comma, "','")?;
        }
        if self.eat_keyword("contracting_dims").is_none() {
            return Err(self.at_token(msg::EXPECTED_CONTRACTING_DIMS.into()));
        }
        let contracting = pair(self)?;
        kept.dot_dims = batching.zip(contracting).map(|((lb, rb), (lc, rc))| tree::DotDims {
            lhs_batching: lb,
            rhs_batching: rb,
            lhs_contracting: lc,
            rhs_contracting: rc,
        });
        Ok(())
    }

    /// `[` (start `:` limit (`:` stride)?)* `]`.
    fn slice_ranges(&mut self) -> Check {
        self.need(TokenKind::LBracket, "'['")?;
        if self.eat(TokenKind::RBracket).is_some() {
            return Ok(());
        }
        loop {
            self.int()?;
            self.need(TokenKind::Colon, "':'")?;
            self.int()?;
            if self.eat(TokenKind::Colon).is_some() {
                self.int()?;
            }
            if self.eat(TokenKind::RBracket).is_some() {
                return Ok(());
            }
            self.need(TokenKind::Comma, "','")?;
        }
    }

    /// One type, read as MLIR's type parser reads it. A function type: its number of
    /// inputs.
    fn strict_type(&mut self) -> Result<Option<usize>, Mistake> {
        match self.kind() {
            TokenKind::LParen => {
                self.bump();
                let mut inputs = 0;
                if self.eat(TokenKind::RParen).is_none() {
                    loop {
                        self.strict_type()?;
                        inputs += 1;
                        if self.eat(TokenKind::Comma).is_some() {
                            continue;
                        }
                        self.need(TokenKind::RParen, "')'")?;
                        break;
                    }
                }
                self.need(TokenKind::Arrow, "'->' in function type")?;
                if self.at(TokenKind::LParen) {
                    self.bump();
                    if self.eat(TokenKind::RParen).is_none() {
                        loop {
                            self.strict_non_function_type()?;
                            if self.eat(TokenKind::Comma).is_some() {
                                continue;
                            }
                            self.need(TokenKind::RParen, "')'")?;
                            break;
                        }
                    }
                } else {
                    self.strict_non_function_type()?;
                }
                Ok(Some(inputs))
            }
            _ => self.strict_non_function_type().map(|_| None),
        }
    }

    fn strict_non_function_type(&mut self) -> Check {
        if self.at_keyword("tensor") {
            return self.strict_tensor_type();
        }
        match self.kind() {
            TokenKind::BangId => {
                self.bump();
                if self.at(TokenKind::Less) {
                    self.skip_balanced();
                }
                Ok(())
            }
            TokenKind::BareId if super::ty::is_builtin_type_name(self.peek_text()) => {
                self.bump();
                if self.at(TokenKind::Less) {
                    self.skip_balanced();
                }
                Ok(())
            }
            _ => Err(self.wrong_token("non-function type")),
        }
    }

    /// `tensor<8x?xf32, #enc>`, read character by character between the brackets (the
    /// lexer splits shapes into odd tokens). A spelling met before is known good.
    fn strict_tensor_type(&mut self) -> Check {
        let at = self.save();
        if let Some(ty) = self.known_plain_tensor() {
            let (end, base) = (self.save(), self.base);
            self.form_types.push(super::KeptType { at, end, base, ty });
            return Ok(());
        }
        let tensor = self.bump();
        if !self.at(TokenKind::Less) {
            return Err(self.wrong_token("'<' in tensor type"));
        }
        let src = self.src.as_bytes();
        let mut i = self.peek().end as usize;
        let skip_ws = |i: &mut usize| {
            while *i < src.len() && matches!(src[*i], b' ' | b'\t' | b'\r' | b'\n') {
                *i += 1;
            }
        };
        // MLIR's position for an unexpected token: after the previous one.
        let err_at = |p: &Self, prev_end: usize, what: &str| Mistake {
            span: Span::empty(prev_end as u32 - p.base),
            message: format!("expected {what}"),
            prefixed: false,
            chained: None,
        };
        let mut prev_end = i;
        skip_ws(&mut i);
        if src.get(i) == Some(&b'*') {
            i += 1;
            prev_end = i;
            skip_ws(&mut i);
            if src.get(i) != Some(&b'x') {
                return Err(err_at(self, prev_end, "'x' in dimension list"));
            }
            i += 1;
            prev_end = i;
        } else {
            loop {
                skip_ws(&mut i);
                let start = i;
                if src.get(i) == Some(&b'?') {
                    i += 1;
                } else {
                    while i < src.len() && src[i].is_ascii_digit() {
                        i += 1;
                    }
                    if i == start {
                        break;
                    }
                }
                prev_end = i;
                skip_ws(&mut i);
                if src.get(i) != Some(&b'x') {
                    return Err(err_at(self, prev_end, "'x' in dimension list"));
                }
                i += 1;
                prev_end = i;
            }
        }
        // The element type: an identifier (or `!dialect.type`), maybe with `<...>`.
        skip_ws(&mut i);
        let start = i;
        if src.get(i) == Some(&b'!') {
            i += 1;
        }
        while i < src.len()
            && (src[i].is_ascii_alphanumeric() || matches!(src[i], b'_' | b'.' | b'$'))
        {
            i += 1;
        }
        let word = &self.src[start..i];
        if word == "tensor" {
            // A tensor type as element type: MLIR reads it, then wants the `>`.
            if src.get(i) != Some(&b'<') {
                return Err(err_at(self, i, "'<' in tensor type"));
            }
            let mut depth = 0;
            while i < src.len() && src[i] != b'\n' {
                match src[i] {
                    b'<' => depth += 1,
                    b'>' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            let nested_end = i;
            skip_ws(&mut i);
            if src.get(i) != Some(&b'>') {
                return Err(err_at(self, nested_end, "'>' in tensor type"));
            }
        }
        if word.is_empty()
            || !(word.starts_with('!') || super::ty::is_builtin_type_name(word))
            || word == "tensor"
        {
            return Err(err_at(self, prev_end, "non-function type"));
        }
        if src.get(i) == Some(&b'<') {
            let mut depth = 0;
            while i < src.len() {
                match src[i] {
                    b'<' => depth += 1,
                    b'>' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    b'\n' => break,
                    _ => {}
                }
                i += 1;
            }
        }
        prev_end = i;
        skip_ws(&mut i);
        if src.get(i) == Some(&b',') {
            // An encoding: any attribute up to the closing `>`.
            let mut depth = 0;
            while i < src.len() && src[i] != b'\n' {
                match src[i] {
                    b'<' | b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    b'>' if depth == 0 => break,
                    b'>' => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            prev_end = i;
        }
        if src.get(i) != Some(&b'>') {
            return Err(err_at(self, prev_end, "'>' in tensor type"));
        }
        let end = i as u32 + 1;
        let _ = tensor;
        // Move past the type's tokens.
        while !self.at_eof() && self.peek().start < end {
            self.bump();
        }
        if self.prev_end() != end {
            // The `>` was inside a token (`->`): MLIR's lexer splits it the same way,
            // but the tokens do not line up with the type; call it malformed there.
            return Err(err_at(self, prev_end, "'>' in tensor type"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::tree::Custom;

    fn custom(text: &str) -> Custom {
        super::super::parse_one_statement(text, true).expect("a statement").custom.clone()
    }

    #[test]
    fn dot_general_keeps_its_dimension_numbers() {
        let sig = ": (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>";
        let op = |dims: &str| custom(&format!("%0 = stablehlo.dot_general %a, %b, {dims} {sig}"));
        let Custom::DotDims(d) = op("batching_dims = [0] x [0], contracting_dims = [2] x [0x1]")
        else {
            panic!("not kept")
        };
        assert_eq!(
            (
                &d.lhs_batching[..],
                &d.rhs_batching[..],
                &d.lhs_contracting[..],
                &d.rhs_contracting[..]
            ),
            (&[0][..], &[0][..], &[2][..], &[1][..])
        );
        let Custom::DotDims(d) = op("contracting_dims = [-1, 1] x []") else { panic!("not kept") };
        assert!(d.lhs_batching.is_empty() && d.rhs_batching.is_empty());
        assert_eq!((&d.lhs_contracting[..], &d.rhs_contracting[..]), (&[-1, 1][..], &[][..]));
        // Not an i64, or a form MLIR rejects: nothing kept.
        assert_eq!(op("contracting_dims = [99999999999999999999] x [0]"), Custom::None);
        assert_eq!(op("contracting_dims = [2] [1]"), Custom::None);
    }
}
