//! Parsers of the sdy attribute bodies, with Shardy's exact error messages and
//! "failed to parse ..." chains.
//!
//! Each parser consumes tokens the way the MLIR parser it stands for does (Shardy's
//! generated and hand-written attribute parsers), so that every error lands where MLIR
//! reports it:
//! - a missing punctuation token (MLIR's `parseToken`: `expected '='`, `expected ']'`,
//!   ...) is reported right after the previous token when whitespace separates the two
//!   (an empty span there), else on the current token; it never gets the
//!   `custom op '...'` prefix;
//! - every other error, and every chain line, is reported on the current token (which
//!   may be the token after one that was consumed, e.g. after a bad priority keyword);
//! - a lexer error token (unterminated string, stray character) replaces the whole
//!   failure by the lexer's message, as MLIR abandons diagnostics at an error token.
//!
//! Attribute aliases (`#name`) where MLIR would accept any attribute of the right kind
//! cannot be resolved here and are reported as unsupported (nested
//! `#sdy.sharding<...>` inside a per-value list is supported).

use super::{messages as msg, Parser};
use crate::lexer::{Token, TokenKind as K};
use crate::sdy::*;
use crate::span::Span;

/// Index of the factor `z`; `z_<n>` is `n + 17`.
const START_AT_Z: i64 = 17;

impl Parser<'_> {
    // ===== entry points =====

    /// At `<` after `#sdy.mesh` or `sdy.mesh @m =`: `<["a"=2], device_ids=[...]>`.
    pub(crate) fn sdy_mesh_body(&mut self) -> Option<MeshAst> {
        let start = self.peek().start;
        self.sdy_punct(K::Less, "'<'")?;
        self.sdy_punct(K::LBracket, "'['")?;
        let mut axes = Vec::new();
        if self.eat(K::RBracket).is_none() {
            let Some(list) = self.sdy_list(Self::sdy_mesh_axis) else {
                self.sdy_chain(msg::MESH_AXES);
                return None;
            };
            axes = list;
            self.sdy_punct(K::RBracket, "']'")?;
        }
        let mut device_ids = None;
        if self.eat(K::Comma).is_some() {
            let kw = self.peek();
            if self.eat_keyword("device_ids").is_none() {
                self.sdy_error_here(msg::EXPECTED_DEVICE_IDS);
                return None;
            }
            self.sdy_punct(K::Equal, "'='")?;
            self.sdy_punct(K::LBracket, "'['")?;
            let Some(ids) = self.sdy_list(Self::sdy_int) else {
                self.sdy_chain(msg::MESH_DEVICE_IDS);
                return None;
            };
            self.sdy_punct(K::RBracket, "']'")?;
            device_ids = Some(DeviceIdsAst { span: self.rel_from(kw.start), ids });
        }
        self.sdy_punct(K::Greater, "'>'")?;
        Some(MeshAst { span: self.rel_from(start), axes, device_ids })
    }

    /// At `<`: the sharding body `<@m, [{"a"}, {?}], replicated={"b"}>`.
    pub(crate) fn sdy_sharding_body(&mut self) -> Option<ShardingAst> {
        let start = self.peek().start;
        self.sdy_punct(K::Less, "'<'")?;
        let mesh = self.sdy_mesh_or_ref()?;
        self.sdy_punct(K::Comma, "','")?;
        let dims_start = self.peek().start;
        self.sdy_punct(K::LBracket, "'['")?;
        let mut dims = Vec::new();
        if self.eat(K::RBracket).is_none() {
            let Some(list) = self.sdy_list(Self::sdy_dim_sharding) else {
                self.sdy_chain(msg::DIM_SHARDINGS);
                return None;
            };
            dims = list;
            self.sdy_punct(K::RBracket, "']'")?;
        }
        let dims_span = self.rel_from(dims_start);
        let (replicated, unreduced) = self.sdy_replicated_unreduced()?;
        self.sdy_punct(K::Greater, "'>'")?;
        Some(ShardingAst {
            span: self.rel_from(start),
            mesh,
            dims,
            dims_span,
            replicated,
            unreduced,
        })
    }

    /// At `<` after `#sdy.sharding_per_value`: `<[<...>, <...>]>`.
    pub(crate) fn sdy_per_value_body(&mut self) -> Option<PerValueAst> {
        let start = self.peek().start;
        self.sdy_punct(K::Less, "'<'")?;
        self.sdy_punct(K::LBracket, "'['")?;
        let mut shardings = Vec::new();
        if self.eat(K::RBracket).is_none() {
            let Some(list) = self.sdy_list(Self::sdy_sharding_elem) else {
                self.sdy_chain(msg::PER_VALUE);
                return None;
            };
            shardings = list;
            self.sdy_punct(K::RBracket, "']'")?;
        }
        self.sdy_punct(K::Greater, "'>'")?;
        Some(PerValueAst { span: self.rel_from(start), shardings })
    }

    /// At `[`: the op-syntax per-value list `[<...>, <...>]` (in/out_shardings=).
    pub(crate) fn sdy_stripped_per_value(&mut self) -> Option<PerValueAst> {
        let start = self.peek().start;
        self.sdy_punct(K::LBracket, "'['")?;
        let mut shardings = Vec::new();
        if self.eat(K::RBracket).is_none() {
            shardings = self.sdy_list(Self::sdy_sharding_elem)?;
            self.sdy_punct(K::RBracket, "']'")?;
        }
        Some(PerValueAst { span: self.rel_from(start), shardings })
    }

    /// At `<` after `#sdy.op_sharding_rule`.
    pub(crate) fn sdy_rule_body(&mut self) -> Option<RuleAst> {
        let first_error = self.errors.len();
        let rule = self.sdy_rule_inner();
        // An out-of-range `z_<n>` is reported without stopping the parse; MLIR prints
        // it together with whatever is reported after it, as one failure.
        for e in self.errors.iter_mut().skip(first_error + 1) {
            e.chained = true;
        }
        rule
    }

    /// At `{`: manual axes `{"a", "b"}`.
    pub(crate) fn sdy_manual_axes(&mut self) -> Option<Vec<AxisRefAst>> {
        self.sdy_punct(K::LBrace, "'{'")?;
        if self.eat(K::RBrace).is_some() {
            return Some(Vec::new());
        }
        let Some(axes) = self.sdy_list(Self::sdy_manual_axis) else {
            self.sdy_chain(msg::MANUAL_AXES);
            return None;
        };
        self.sdy_punct(K::RBrace, "'}'")?;
        Some(axes)
    }

    /// At `{`: an axis-ref list `{"y", "x":(1)2}` (may be empty).
    pub(crate) fn sdy_axis_list(&mut self) -> Option<Vec<AxisRefAst>> {
        self.sdy_axis_ref_list().map(|l| l.axes)
    }

    /// At `[`: per-dimension axis lists `[{}, {"x"}]`.
    pub(crate) fn sdy_axis_list_per_dim(&mut self) -> Option<Vec<AxisListAst>> {
        self.sdy_punct(K::LBracket, "'['")?;
        if self.eat(K::RBracket).is_some() {
            return Some(Vec::new());
        }
        let Some(lists) = self.sdy_list(|p| {
            p.sdy_reject_alias()?;
            p.sdy_axis_ref_list()
        }) else {
            self.sdy_chain(msg::LIST_OF_AXIS_REF_LISTS);
            return None;
        };
        self.sdy_punct(K::RBracket, "']'")?;
        Some(lists)
    }

    /// At `[`: all-to-all params `[{"x"}: 0->2, {"y"}: 1->3]`.
    pub(crate) fn sdy_all_to_all_params(&mut self) -> Option<Vec<AllToAllParamAst>> {
        self.sdy_punct(K::LBracket, "'['")?;
        if self.eat(K::RBracket).is_some() {
            return Some(Vec::new());
        }
        let Some(params) = self.sdy_list(Self::sdy_all_to_all_param) else {
            self.sdy_chain(msg::A2A_LIST);
            return None;
        };
        self.sdy_punct(K::RBracket, "']'")?;
        Some(params)
    }

    // ===== mesh =====

    /// `"a"=2`
    fn sdy_mesh_axis(&mut self) -> Option<MeshAxisAst> {
        self.sdy_reject_alias()?;
        let name_tok = self.peek();
        let Some(name) = self.sdy_string() else {
            self.sdy_chain(msg::MESH_AXIS_NAME);
            return None;
        };
        self.sdy_punct(K::Equal, "'='")?;
        let Some((size, size_span)) = self.sdy_int() else {
            self.sdy_chain(msg::MESH_AXIS_SIZE);
            return None;
        };
        Some(MeshAxisAst {
            span: self.rel_from(name_tok.start),
            name,
            name_span: self.rel(name_tok),
            size,
            size_span,
        })
    }

    /// `@name` or `mesh<...>` (Shardy's `parseMeshOrRef`).
    fn sdy_mesh_or_ref(&mut self) -> Option<MeshRefAst> {
        if self.eat_keyword("mesh").is_some() {
            let mesh = match self.sdy_reject_alias() {
                Some(()) => self.sdy_mesh_body(),
                None => None,
            };
            if mesh.is_none() {
                self.sdy_chain(msg::MESH_ATTR);
            }
            return mesh.map(MeshRefAst::Inline);
        }
        let t = self.peek();
        if t.kind == K::AtId && self.nth_kind(1) != K::ColonColon {
            self.bump();
            let name = unquote(&self.text(t)[1..]);
            return Some(MeshRefAst::Symbol { name: name.into(), span: self.rel(t) });
        }
        // MLIR parses any attribute here, then rejects what is not a flat symbol ref.
        if self.sdy_skip_generic_attr() {
            let span = self.rel_from(t.start);
            self.sdy_error_at(span, msg::INVALID_ATTRIBUTE_KIND);
        }
        self.sdy_chain(msg::MESH_OR_REF);
        None
    }

    // ===== tensor sharding =====

    /// An element of a per-value list: `<...>` or `#sdy.sharding<...>`.
    fn sdy_sharding_elem(&mut self) -> Option<ShardingAst> {
        let t = self.peek();
        if t.kind == K::HashId
            && self.text(t) == "#sdy.sharding"
            && self.nth_kind(1) == K::Less
            && self.nth(1).start == t.end
        {
            self.bump();
        } else {
            self.sdy_reject_alias()?;
        }
        self.sdy_sharding_body()
    }

    /// `{"a", ?}p1` (Shardy's `DimensionShardingAttr::parse`).
    fn sdy_dim_sharding(&mut self) -> Option<DimShardingAst> {
        self.sdy_reject_alias()?;
        let start = self.peek().start;
        self.sdy_punct(K::LBrace, "'{'")?;
        let mut axes = Vec::new();
        let mut open = None;
        while self.eat(K::RBrace).is_none() {
            if !axes.is_empty() {
                self.sdy_punct(K::Comma, "','")?;
            }
            if let Some(q) = self.eat(K::Question) {
                open = Some(self.rel(q));
                self.sdy_punct(K::RBrace, "'}'")?;
                break;
            }
            axes.push(self.sdy_axis_ref()?);
        }
        let mut priority = None;
        if self.at(K::BareId) {
            let t = self.bump();
            let value = self.sdy_priority(self.text(t))?;
            priority = Some((value, self.rel(t)));
        }
        Some(DimShardingAst { span: self.rel_from(start), axes, open, priority })
    }

    /// Checks a priority keyword (already consumed: errors go to the next token).
    fn sdy_priority(&mut self, text: &str) -> Option<i64> {
        let digits = text.get(1..).unwrap_or("");
        if text.len() < 2 || !text.starts_with('p') || !digits.bytes().all(|b| b.is_ascii_digit()) {
            self.sdy_error_here(msg::priority_format(text));
            return None;
        }
        if digits.starts_with('0') && digits.len() > 1 {
            self.sdy_error_here(msg::priority_leading_zeros(text));
            return None;
        }
        match digits.parse::<i64>() {
            Ok(v) => Some(v),
            Err(_) => {
                self.sdy_error_here(msg::priority_integer(text));
                None
            }
        }
    }

    /// `"a"` or `"a":(2)4` (Shardy's generated `AxisRefAttr::parse`).
    fn sdy_axis_ref(&mut self) -> Option<AxisRefAst> {
        let name_tok = self.peek();
        let Some(name) = self.sdy_string() else {
            self.sdy_chain(msg::AXIS_REF_NAME);
            return None;
        };
        let mut sub = None;
        if self.at(K::ColonColon) {
            // MLIR lexes `::` as two colons: the first is the optional `:`, and `(` is
            // expected at the second.
            let second = self.sdy_second_colon();
            self.sdy_raw(second, "expected '('".into(), false, false);
            self.sdy_raw(second, msg::AXIS_REF_SUB.into(), true, true);
            return None;
        }
        if self.eat(K::Colon).is_some() {
            let Some(s) = self.sdy_sub_axis() else {
                self.sdy_chain(msg::AXIS_REF_SUB);
                return None;
            };
            sub = Some(s);
        }
        Some(AxisRefAst {
            span: self.rel_from(name_tok.start),
            name,
            name_span: self.rel(name_tok),
            sub,
        })
    }

    /// An axis ref in a list whose elements MLIR parses "with fallback" (an alias or a
    /// full `#sdy.axis_ref<...>` would be accepted there).
    fn sdy_axis_ref_elem(&mut self) -> Option<AxisRefAst> {
        self.sdy_reject_alias()?;
        self.sdy_axis_ref()
    }

    /// `(2)4`
    fn sdy_sub_axis(&mut self) -> Option<SubAxisAst> {
        self.sdy_reject_alias()?;
        let start = self.peek().start;
        self.sdy_punct(K::LParen, "'('")?;
        let Some((pre_size, _)) = self.sdy_int() else {
            self.sdy_chain(msg::SUB_PRE_SIZE);
            return None;
        };
        self.sdy_punct(K::RParen, "')'")?;
        let Some((size, _)) = self.sdy_int() else {
            self.sdy_chain(msg::SUB_SIZE);
            return None;
        };
        Some(SubAxisAst { span: self.rel_from(start), pre_size, size })
    }

    /// `, replicated={...}` / `, unreduced(=(sum|max|min)?)?{...}` in either order
    /// (Shardy's `parseReplicatedAndUnreducedAxes`).
    fn sdy_replicated_unreduced(&mut self) -> Option<(Option<AxisListAst>, Option<UnreducedAst>)> {
        let mut replicated = None;
        let mut unreduced = None;
        while self.eat(K::Comma).is_some() {
            if replicated.is_none() && self.at_keyword("replicated") {
                self.bump();
                let list = match self.sdy_punct(K::Equal, "'='") {
                    Some(_) => self.sdy_braced_axis_list(),
                    None => None,
                };
                let Some(list) = list else {
                    self.sdy_chain(msg::REPLICATED);
                    return None;
                };
                replicated = Some(list);
            } else if unreduced.is_none() && self.at_keyword("unreduced") {
                let kw = self.bump();
                let mut reduction = None;
                if self.eat(K::Equal).is_some() && self.at(K::BareId) {
                    let r = match self.peek_text() {
                        "sum" => Some(Reduction::Sum),
                        "max" => Some(Reduction::Max),
                        "min" => Some(Reduction::Min),
                        _ => None,
                    };
                    if let Some(r) = r {
                        let t = self.bump();
                        reduction = Some((r, self.rel(t)));
                    }
                }
                let Some(list) = self.sdy_braced_axis_list() else {
                    self.sdy_chain(msg::UNREDUCED);
                    return None;
                };
                unreduced = Some(UnreducedAst { span: self.rel_from(kw.start), reduction, list });
            } else {
                self.sdy_error_here(msg::AFTER_COMMA);
                return None;
            }
        }
        Some((replicated, unreduced))
    }

    /// `{"a", "b"}` with at least one axis (Shardy's `parseAxisList`).
    fn sdy_braced_axis_list(&mut self) -> Option<AxisListAst> {
        let start = self.peek().start;
        self.sdy_punct(K::LBrace, "'{'")?;
        let Some(axes) = self.sdy_list(Self::sdy_axis_ref_elem) else {
            self.sdy_chain(msg::AXIS_LIST);
            return None;
        };
        self.sdy_punct(K::RBrace, "'}'")?;
        Some(AxisListAst { span: self.rel_from(start), axes })
    }

    // ===== op sharding rule =====

    fn sdy_rule_inner(&mut self) -> Option<RuleAst> {
        let start = self.peek().start;
        self.sdy_punct(K::Less, "'<'")?;
        self.sdy_punct(K::LParen, "'('")?;
        let Some(operands) = self.sdy_list(Self::sdy_tensor_mapping) else {
            self.sdy_chain(msg::OPERAND_MAPPINGS);
            return None;
        };
        self.sdy_punct(K::RParen, "')'")?;
        self.sdy_punct(K::Arrow, "'->'")?;
        self.sdy_punct(K::LParen, "'('")?;
        let Some(results) = self.sdy_list(Self::sdy_tensor_mapping) else {
            self.sdy_chain(msg::RESULT_MAPPINGS);
            return None;
        };
        self.sdy_punct(K::RParen, "')'")?;
        let factor_sizes = self.sdy_factor_sizes()?;
        let reduction = self.sdy_typed_factors("reduction")?;
        let need_replication = self.sdy_typed_factors("need_replication")?;
        let permutation = self.sdy_typed_factors("permutation")?;
        let blocked_propagation = self.sdy_typed_factors("blocked_propagation")?;
        let mut custom = false;
        if self.eat(K::Comma).is_some() {
            if self.eat_keyword("custom").is_none() {
                self.sdy_error_here(msg::EXPECTED_CUSTOM);
                return None;
            }
            custom = true;
        }
        self.sdy_punct(K::Greater, "'>'")?;
        Some(RuleAst {
            span: self.rel_from(start),
            operands,
            results,
            factor_sizes,
            reduction,
            need_replication,
            permutation,
            blocked_propagation,
            custom,
        })
    }

    /// `[i, jk, ]`
    fn sdy_tensor_mapping(&mut self) -> Option<TensorMappingAst> {
        self.sdy_reject_alias()?;
        let start = self.peek().start;
        self.sdy_punct(K::LBracket, "'['")?;
        let mut dims = Vec::new();
        if self.eat(K::RBracket).is_none() {
            let Some(list) = self.sdy_list(Self::sdy_dim_mapping) else {
                self.sdy_chain(msg::DIM_MAPPINGS);
                return None;
            };
            dims = list;
            self.sdy_punct(K::RBracket, "']'")?;
        }
        Some(TensorMappingAst { span: self.rel_from(start), dims })
    }

    /// One dimension: a keyword of concatenated factor symbols, or nothing (an empty
    /// mapping, which the verifier rejects).
    fn sdy_dim_mapping(&mut self) -> Option<DimMappingAst> {
        self.sdy_reject_alias()?;
        let t = self.peek();
        if t.kind != K::BareId {
            return Some(DimMappingAst {
                span: Span::empty(t.start - self.base),
                factors: Vec::new(),
            });
        }
        self.bump();
        let mut rest = self.text(t);
        let mut factors = Vec::new();
        while !rest.is_empty() {
            factors.push(self.sdy_factor_symbol(&mut rest)?);
        }
        Some(DimMappingAst { span: self.rel(t), factors })
    }

    /// Decodes the factor symbol at the start of `rest` (`i`..`z`, `z_<n>`) and removes
    /// it. The keyword was consumed: errors go to the next token.
    fn sdy_factor_symbol(&mut self, rest: &mut &str) -> Option<i64> {
        let s = *rest;
        if !s.starts_with("z_") {
            // Keywords are ASCII, so one byte is one symbol.
            let c = s.as_bytes()[0];
            if !(b'i'..=b'z').contains(&c) {
                let c = char::from(c);
                self.sdy_error_here(msg::factor_symbol_range(c));
                return None;
            }
            *rest = &s[1..];
            return Some(i64::from(c - b'i'));
        }
        let digits = s[2..].bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            self.sdy_error_here(msg::factor_after_z(s));
            return None;
        }
        let number = &s[2..2 + digits];
        if number.starts_with('0') {
            self.sdy_error_here(msg::factor_leading_zeros(number));
            return None;
        }
        // Shardy reports an index beyond i64 but goes on as if it were 0.
        let index = number.parse::<i64>().unwrap_or_else(|_| {
            self.sdy_error_here(msg::factor_index_too_large(number));
            0
        });
        *rest = &s[2 + digits..];
        Some(index.wrapping_add(START_AT_Z))
    }

    /// `{i=8, j=4}` (optional), declared in factor order.
    fn sdy_factor_sizes(&mut self) -> Option<Vec<(i64, Span)>> {
        let mut sizes = Vec::new();
        if self.eat(K::LBrace).is_none() || self.eat(K::RBrace).is_some() {
            return Some(sizes);
        }
        loop {
            let t = self.peek();
            if t.kind != K::BareId {
                self.sdy_error_here(msg::EXPECTED_KEYWORD);
                return None;
            }
            self.bump();
            let mut rest = self.text(t);
            let expected = sizes.len() as i64;
            let index = self.sdy_factor_symbol(&mut rest)?;
            if index != expected {
                let (expected, index) = (factor_symbol(expected), factor_symbol(index));
                self.sdy_error_here(msg::factor_order(expected, index));
                return None;
            }
            if !rest.is_empty() {
                self.sdy_error_here(msg::single_factor_symbol(rest));
                return None;
            }
            self.sdy_punct(K::Equal, "'='")?;
            let (size, _) = self.sdy_int()?;
            sizes.push((size, self.rel_from(t.start)));
            if self.eat(K::Comma).is_none() {
                break;
            }
        }
        self.sdy_punct(K::RBrace, "'}'")?;
        Some(sizes)
    }

    /// `kw={k, l}` (optional; the braces are optional too). Only the first symbol of
    /// each keyword counts, as in Shardy.
    fn sdy_typed_factors(&mut self, kw: &str) -> Option<Option<FactorListAst>> {
        let Some(kw_tok) = self.eat_keyword(kw) else {
            return Some(None);
        };
        self.sdy_punct(K::Equal, "'='")?;
        let mut factors = Vec::new();
        if self.eat(K::LBrace).is_some() && self.eat(K::RBrace).is_none() {
            loop {
                let t = self.peek();
                if t.kind != K::BareId {
                    self.sdy_error_here(msg::EXPECTED_KEYWORD);
                    return None;
                }
                self.bump();
                let mut rest = self.text(t);
                let index = self.sdy_factor_symbol(&mut rest)?;
                factors.push((index, self.rel(t)));
                if self.eat(K::Comma).is_none() {
                    break;
                }
            }
            self.sdy_punct(K::RBrace, "'}'")?;
        }
        Some(Some(FactorListAst { span: self.rel_from(kw_tok.start), factors }))
    }

    // ===== op-syntax lists =====

    /// A manual axis: a string attribute (MLIR parses any attribute, then checks it).
    fn sdy_manual_axis(&mut self) -> Option<AxisRefAst> {
        self.sdy_reject_alias()?;
        let t = self.peek();
        if t.kind == K::String {
            self.bump();
            // A string attribute may carry a type: `"a" : i32`.
            if self.eat(K::Colon).is_some() && !self.sdy_skip_type() {
                return None;
            }
            let span = self.rel(t);
            return Some(AxisRefAst {
                span,
                name: unquote(self.text(t)).into(),
                name_span: span,
                sub: None,
            });
        }
        if self.sdy_skip_generic_attr() {
            let span = self.rel_from(t.start);
            self.sdy_error_at(span, msg::INVALID_ATTRIBUTE_KIND);
        }
        None
    }

    /// `{}` or `{"a", "b":(1)2}` (`AxisRefListAttr`).
    fn sdy_axis_ref_list(&mut self) -> Option<AxisListAst> {
        let start = self.peek().start;
        self.sdy_punct(K::LBrace, "'{'")?;
        let mut axes = Vec::new();
        if self.eat(K::RBrace).is_none() {
            let Some(list) = self.sdy_list(Self::sdy_axis_ref_elem) else {
                self.sdy_chain(msg::AXIS_REF_LIST);
                return None;
            };
            axes = list;
            self.sdy_punct(K::RBrace, "'}'")?;
        }
        Some(AxisListAst { span: self.rel_from(start), axes })
    }

    /// `{"x"}: 0->2`
    fn sdy_all_to_all_param(&mut self) -> Option<AllToAllParamAst> {
        self.sdy_reject_alias()?;
        let start = self.peek().start;
        self.sdy_punct(K::LBrace, "'{'")?;
        let Some(axes) = self.sdy_list(Self::sdy_axis_ref_elem) else {
            self.sdy_chain(msg::A2A_AXES);
            return None;
        };
        self.sdy_punct(K::RBrace, "'}'")?;
        let axes = AxisListAst { span: self.rel_from(start), axes };
        if self.at(K::ColonColon) {
            // `::` is two colons for MLIR: the source dimension is expected at the second.
            let second = self.sdy_second_colon();
            self.sdy_raw(second, msg::EXPECTED_INTEGER.into(), true, false);
            self.sdy_raw(second, msg::A2A_SRC.into(), true, true);
            return None;
        }
        self.sdy_punct(K::Colon, "':'")?;
        let Some(src_dim) = self.sdy_int() else {
            self.sdy_chain(msg::A2A_SRC);
            return None;
        };
        self.sdy_punct(K::Arrow, "'->'")?;
        let Some(tgt_dim) = self.sdy_int() else {
            self.sdy_chain(msg::A2A_TGT);
            return None;
        };
        Some(AllToAllParamAst { span: self.rel_from(start), axes, src_dim, tgt_dim })
    }

    // ===== tokens =====

    /// A comma-separated list of at least one element, without delimiters.
    fn sdy_list<T>(&mut self, mut elem: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let mut out = vec![elem(self)?];
        while self.eat(K::Comma).is_some() {
            out.push(elem(self)?);
        }
        Some(out)
    }

    /// A string literal, unquoted (escapes kept as written).
    fn sdy_string(&mut self) -> Option<crate::tree::Str> {
        if !self.at(K::String) {
            self.sdy_error_here(msg::EXPECTED_STRING);
            return None;
        }
        let t = self.bump();
        Some(unquote(self.text(t)).into())
    }

    /// An `int64_t` as MLIR's `parseInteger` reads it: `-`? decimal or hex, or
    /// `true` (-1: a 1-bit 1, sign-extended) / `false`.
    fn sdy_int(&mut self) -> Option<(i64, Span)> {
        let first = self.peek();
        let negative = match first.kind {
            K::BareId if matches!(self.text(first), "true" | "false") => {
                self.bump();
                let value = if self.text(first) == "true" { -1 } else { 0 };
                return Some((value, self.rel(first)));
            }
            K::Integer | K::HexInteger => false,
            K::Minus => {
                self.bump();
                if !matches!(self.kind(), K::Integer | K::HexInteger) {
                    self.sdy_expected("integer value");
                    return None;
                }
                true
            }
            _ => {
                self.sdy_error_here(msg::EXPECTED_INTEGER);
                return None;
            }
        };
        let t = self.bump();
        let span = self.rel_from(first.start);
        match int_value(self.text(t), negative) {
            Some(v) => Some((v, span)),
            None => {
                self.sdy_error_at(span, msg::INTEGER_TOO_LARGE);
                None
            }
        }
    }

    /// Consumes `kind` or reports MLIR's `expected X` for it.
    fn sdy_punct(&mut self, kind: K, what: &str) -> Option<Token> {
        let t = self.eat(kind);
        if t.is_none() {
            self.sdy_expected(what);
        }
        t
    }

    /// Skips what MLIR's generic attribute parser would read as one attribute, or
    /// reports `expected attribute value` and returns false.
    fn sdy_skip_generic_attr(&mut self) -> bool {
        let t = self.peek();
        match t.kind {
            K::String | K::Integer | K::HexInteger | K::Float => {
                self.bump();
            }
            K::Minus if matches!(self.nth_kind(1), K::Integer | K::HexInteger | K::Float) => {
                self.bump();
                self.bump();
            }
            K::LBracket | K::LBrace => self.skip_balanced(),
            K::AtId => {
                self.bump();
                while self.at(K::ColonColon) && self.nth_kind(1) == K::AtId {
                    self.bump();
                    self.bump();
                }
            }
            K::HashId | K::BangId => {
                self.bump();
                self.sdy_skip_adjacent_body();
            }
            K::BareId if is_attr_keyword(self.text(t)) || is_type_keyword(self.text(t)) => {
                self.bump();
                self.sdy_skip_adjacent_body();
            }
            _ => {
                self.sdy_expected("attribute value");
                return false;
            }
        }
        true
    }

    /// After `:` of a typed attribute: skips a type (a function type too), or reports
    /// MLIR's error.
    fn sdy_skip_type(&mut self) -> bool {
        if !self.at(K::LParen) {
            return self.sdy_skip_non_function_type();
        }
        if !self.sdy_skip_type_list() {
            return false;
        }
        if self.eat(K::Arrow).is_none() {
            self.sdy_expected("'->' in function type");
            return false;
        }
        if self.at(K::LParen) {
            self.sdy_skip_type_list()
        } else {
            self.sdy_skip_non_function_type()
        }
    }

    /// `(type, ...)`
    fn sdy_skip_type_list(&mut self) -> bool {
        self.bump();
        if self.eat(K::RParen).is_some() {
            return true;
        }
        loop {
            if !self.sdy_skip_non_function_type() {
                return false;
            }
            if self.eat(K::Comma).is_none() {
                break;
            }
        }
        self.sdy_punct(K::RParen, "')'").is_some()
    }

    fn sdy_skip_non_function_type(&mut self) -> bool {
        let t = self.peek();
        let is_type = match t.kind {
            K::BangId => true,
            K::BareId => is_type_keyword(self.text(t)),
            _ => false,
        };
        if !is_type {
            self.sdy_expected("non-function type");
            return false;
        }
        self.bump();
        self.sdy_skip_adjacent_body();
        true
    }

    /// Skips a `<...>` that directly follows the previous token.
    fn sdy_skip_adjacent_body(&mut self) {
        if self.at(K::Less) && self.peek().start == self.prev_end() {
            self.skip_balanced();
        }
    }

    /// Rejects an attribute alias (or a nested dialect attribute) where MLIR would
    /// accept one of the right kind: we cannot resolve it here.
    fn sdy_reject_alias(&mut self) -> Option<()> {
        if !self.at(K::HashId) {
            return Some(());
        }
        let text = self.peek_text();
        self.sdy_error_here(msg::attribute_reference(text));
        None
    }

    /// The span of the second `:` of the current `::` token.
    fn sdy_second_colon(&self) -> Span {
        let t = self.rel(self.peek());
        Span::new(t.start + 1, t.end)
    }

    // ===== error reporting =====

    /// Where MLIR's `getCurrentLocation()` points: the current token (or, after an
    /// error at the second `:` of `::`, that error's position).
    fn sdy_here(&self) -> Span {
        let tok = self.rel(self.peek());
        match self.errors.last() {
            Some(e) if e.span.start > tok.start && e.span.start < tok.end => e.span,
            _ => tok,
        }
    }

    /// MLIR's `emitWrongTokenError("expected X")`: after the previous token when
    /// whitespace (or comments) separate them, else at the current token; no prefix.
    fn sdy_expected(&mut self, what: &str) {
        if self.sdy_lex_error() {
            return;
        }
        let t = self.peek();
        let pos = if self.save() == 0 { t.start } else { self.prev_end().max(self.base) };
        let span = if pos == t.start && t.kind != K::Eof {
            self.rel(t)
        } else {
            Span::empty(pos - self.base)
        };
        self.sdy_raw(span, format!("expected {what}"), false, false);
    }

    /// The first error of a failure, at the current token (custom-op prefixed).
    fn sdy_error_here(&mut self, message: impl Into<String>) {
        if self.sdy_lex_error() {
            return;
        }
        let span = self.sdy_here();
        self.sdy_raw(span, message.into(), true, false);
    }

    /// The first error of a failure, at `span` (custom-op prefixed).
    fn sdy_error_at(&mut self, span: Span, message: &str) {
        if self.sdy_lex_error() {
            return;
        }
        self.sdy_raw(span, message.into(), true, false);
    }

    /// A "failed to parse ..." line of the current failure, at the current token.
    fn sdy_chain(&mut self, message: &str) {
        if self.sdy_lex_error() {
            return;
        }
        let span = self.sdy_here();
        self.sdy_raw(span, message.into(), true, true);
    }

    /// At a lexer error token, reports the lexer's message (once) and returns true:
    /// MLIR drops every other diagnostic emitted while such a token is current.
    fn sdy_lex_error(&mut self) -> bool {
        let t = self.peek();
        let (span, message) = match t.kind {
            K::UnterminatedString => (Span::empty(t.end - self.base), msg::UNTERMINATED_STRING),
            K::Error => (self.rel(t), msg::UNEXPECTED_CHARACTER),
            _ => return false,
        };
        if !self.errors.iter().any(|e| e.span == span && e.message == message) {
            self.sdy_raw(span, message.into(), false, false);
        }
        true
    }

    fn sdy_raw(&mut self, span: Span, message: String, prefixed: bool, chained: bool) {
        let custom_op = self.custom_op;
        if !prefixed {
            self.custom_op = None;
        }
        if chained {
            self.error_chained(span, message);
        } else {
            self.error(span, message);
        }
        self.custom_op = custom_op;
    }
}

/// `"text"` → `text`; anything else as is.
fn unquote(s: &str) -> &str {
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// The value of an integer literal as an `int64_t`, or None when it does not fit.
fn int_value(text: &str, negative: bool) -> Option<i64> {
    let magnitude = match text.strip_prefix("0x") {
        Some(hex) => u128::from_str_radix(hex, 16).ok()?,
        None => text.parse::<u128>().ok()?,
    };
    if negative {
        (magnitude <= 1 << 63).then(|| (magnitude as i128).wrapping_neg() as i64)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Shardy's `factorSymbolString` (including its wrap-around for huge indices).
fn factor_symbol(index: i64) -> String {
    if index <= START_AT_Z {
        char::from(index.wrapping_add(i64::from(b'i')) as u8).to_string()
    } else {
        format!("z_{}", index - START_AT_Z)
    }
}

/// Bare keywords that start a builtin attribute.
fn is_attr_keyword(s: &str) -> bool {
    matches!(
        s,
        "true"
            | "false"
            | "unit"
            | "dense"
            | "dense_resource"
            | "sparse"
            | "array"
            | "affine_map"
            | "affine_set"
            | "strided"
            | "distinct"
            | "loc"
    )
}

/// Bare keywords that start a builtin type.
fn is_type_keyword(s: &str) -> bool {
    let int_width = |rest: &str| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    matches!(
        s,
        "index"
            | "none"
            | "bf16"
            | "tf32"
            | "tensor"
            | "memref"
            | "vector"
            | "complex"
            | "tuple"
            | "opaque"
    ) || s.strip_prefix('i').is_some_and(int_width)
        || s.strip_prefix("si").is_some_and(int_width)
        || s.strip_prefix("ui").is_some_and(int_width)
        || (s.starts_with('f') && s.as_bytes().get(1).is_some_and(u8::is_ascii_digit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    // ----- rendering -----

    fn sp(s: Span) -> String {
        format!("{}..{}", s.start, s.end)
    }

    fn axis(a: &AxisRefAst) -> String {
        let sub = match a.sub {
            Some(s) => format!(":({}){}<{}>", s.pre_size, s.size, sp(s.span)),
            None => String::new(),
        };
        format!("\"{}\"{sub}@{}<name {}>", a.name, sp(a.span), sp(a.name_span))
    }

    fn axes(list: &[AxisRefAst]) -> String {
        list.iter().map(axis).collect::<Vec<_>>().join(", ")
    }

    fn axis_list(l: &AxisListAst) -> String {
        format!("{{{}}}@{}", axes(&l.axes), sp(l.span))
    }

    fn mesh_text(m: &MeshAst) -> String {
        let mut out = format!("mesh@{}", sp(m.span));
        for a in &m.axes {
            out += &format!(
                "\n  axis \"{}\"={}@{}<name {}, size {}>",
                a.name,
                a.size,
                sp(a.span),
                sp(a.name_span),
                sp(a.size_span)
            );
        }
        if let Some(ids) = &m.device_ids {
            let ids: Vec<String> = ids.ids.iter().map(|(v, s)| format!("{v}@{}", sp(*s))).collect();
            out += &format!("\n  device_ids@{} [{}]", sp(ids_span(m)), ids.join(", "));
        }
        out
    }

    fn ids_span(m: &MeshAst) -> Span {
        m.device_ids.as_ref().map_or(Span::default(), |d| d.span)
    }

    fn sharding_text(s: &ShardingAst) -> String {
        let mesh = match &s.mesh {
            MeshRefAst::Symbol { name, span } => format!("@{name}@{}", sp(*span)),
            MeshRefAst::Inline(m) => mesh_text(m).replace("\n", "\n  "),
        };
        let mut out = format!("sharding@{} {mesh}\n  dims@{}", sp(s.span), sp(s.dims_span));
        for d in &s.dims {
            out += &format!("\n    {{{}}}@{}", axes(&d.axes), sp(d.span));
            if let Some(q) = d.open {
                out += &format!(" open@{}", sp(q));
            }
            if let Some((p, ps)) = d.priority {
                out += &format!(" p{p}@{}", sp(ps));
            }
        }
        if let Some(r) = &s.replicated {
            out += &format!("\n  replicated {}", axis_list(r));
        }
        if let Some(u) = &s.unreduced {
            let red = match u.reduction {
                Some((r, rs)) => format!(" {}@{}", r.as_str(), sp(rs)),
                None => String::new(),
            };
            out += &format!("\n  unreduced@{}{red} {}", sp(u.span), axis_list(&u.list));
        }
        out
    }

    fn per_value_text(v: &PerValueAst) -> String {
        let mut out = format!("per_value@{}", sp(v.span));
        for s in &v.shardings {
            out += "\n  ";
            out += &sharding_text(s).replace("\n", "\n  ");
        }
        out
    }

    fn factors(f: &[i64]) -> String {
        f.iter().map(|i| factor_symbol(*i)).collect::<Vec<_>>().join("")
    }

    fn rule_text(r: &RuleAst) -> String {
        let mapping = |m: &TensorMappingAst| {
            let dims: Vec<String> =
                m.dims.iter().map(|d| format!("{}@{}", factors(&d.factors), sp(d.span))).collect();
            format!("[{}]@{}", dims.join(", "), sp(m.span))
        };
        let maps = |ms: &[TensorMappingAst]| ms.iter().map(mapping).collect::<Vec<_>>().join(", ");
        let mut out = format!("rule@{}", sp(r.span));
        out += &format!("\n  operands {}\n  results {}", maps(&r.operands), maps(&r.results));
        let sizes: Vec<String> =
            r.factor_sizes.iter().map(|(v, s)| format!("{v}@{}", sp(*s))).collect();
        out += &format!("\n  sizes [{}]", sizes.join(", "));
        for (name, list) in [
            ("reduction", &r.reduction),
            ("need_replication", &r.need_replication),
            ("permutation", &r.permutation),
            ("blocked_propagation", &r.blocked_propagation),
        ] {
            if let Some(l) = list {
                let fs: Vec<String> = l
                    .factors
                    .iter()
                    .map(|(f, s)| format!("{}@{}", factor_symbol(*f), sp(*s)))
                    .collect();
                out += &format!("\n  {name}@{} {{{}}}", sp(l.span), fs.join(", "));
            }
        }
        if r.custom {
            out += "\n  custom";
        }
        out
    }

    fn a2a_text(params: &[AllToAllParamAst]) -> String {
        let items: Vec<String> = params
            .iter()
            .map(|p| {
                format!(
                    "{}: {}@{}->{}@{} @{}",
                    axis_list(&p.axes),
                    p.src_dim.0,
                    sp(p.src_dim.1),
                    p.tgt_dim.0,
                    sp(p.tgt_dim.1),
                    sp(p.span)
                )
            })
            .collect();
        format!("[{}]", items.join(", "))
    }

    // ----- harness -----

    type Run = fn(&mut Parser) -> Option<String>;

    fn mesh(p: &mut Parser) -> Option<String> {
        p.sdy_mesh_body().map(|m| mesh_text(&m))
    }
    fn sharding(p: &mut Parser) -> Option<String> {
        p.sdy_sharding_body().map(|s| sharding_text(&s))
    }
    fn per_value(p: &mut Parser) -> Option<String> {
        p.sdy_per_value_body().map(|v| per_value_text(&v))
    }
    fn stripped(p: &mut Parser) -> Option<String> {
        p.sdy_stripped_per_value().map(|v| per_value_text(&v))
    }
    fn rule(p: &mut Parser) -> Option<String> {
        p.sdy_rule_body().map(|r| rule_text(&r))
    }
    fn manual_axes(p: &mut Parser) -> Option<String> {
        p.sdy_manual_axes().map(|a| format!("{{{}}}", axes(&a)))
    }
    fn axis_list_attr(p: &mut Parser) -> Option<String> {
        p.sdy_axis_list().map(|a| format!("{{{}}}", axes(&a)))
    }
    fn per_dim(p: &mut Parser) -> Option<String> {
        p.sdy_axis_list_per_dim()
            .map(|l| format!("[{}]", l.iter().map(axis_list).collect::<Vec<_>>().join(", ")))
    }
    fn a2a(p: &mut Parser) -> Option<String> {
        p.sdy_all_to_all_params().map(|v| a2a_text(&v))
    }

    /// Runs `run` on `src` (the parser is put after a leading `x` token when `src`
    /// starts with `x `, to have a previous token), then renders the result, where the
    /// cursor stopped, and the errors (`start..end: message`, chain lines indented).
    fn run_with(custom_op: Option<&'static str>, run: Run, src: &str) -> String {
        let mut p = Parser::new(src);
        if src.starts_with("x ") {
            p.bump();
        }
        p.custom_op = custom_op;
        let mut out = run(&mut p).unwrap_or_else(|| "None".to_string());
        if !p.at_eof() {
            out += &format!("\nstopped at {}", p.peek().start);
        }
        for e in &p.errors {
            let indent = if e.chained { "  " } else { "" };
            out += &format!("\n{indent}{}: {}", sp(e.span), e.message);
        }
        out
    }

    fn check(run: Run, src: &str, expect: Expect) {
        expect.assert_eq(&run_with(None, run, src));
    }

    fn check_op(op: &'static str, run: Run, src: &str, expect: Expect) {
        expect.assert_eq(&run_with(Some(op), run, src));
    }

    // ----- mesh -----

    #[test]
    fn mesh_forms() {
        check(mesh, "<[]>", expect!["mesh@0..4"]);
        check(
            mesh,
            r#"<["x"=4, "yy" = 0x2]>"#,
            expect![[r#"
            mesh@0..21
              axis "x"=4@2..7<name 2..5, size 6..7>
              axis "yy"=2@9..19<name 9..13, size 16..19>"#]],
        );
        check(
            mesh,
            r#"<[], device_ids=[7]>"#,
            expect![[r#"
            mesh@0..20
              device_ids@5..19 [7@17..18]"#]],
        );
        check(
            mesh,
            r#"<["x"=2, "y"=1], device_ids=[-1, 0, true, false]> tail"#,
            expect![[r#"
            mesh@0..49
              axis "x"=2@2..7<name 2..5, size 6..7>
              axis "y"=1@9..14<name 9..12, size 13..14>
              device_ids@17..48 [-1@29..31, 0@33..34, -1@36..40, 0@42..47]
            stopped at 50"#]],
        );
        check(
            mesh,
            r#"<["x"=9223372036854775807], device_ids=[-9223372036854775808]>"#,
            expect![[r#"
                mesh@0..62
                  axis "x"=9223372036854775807@2..25<name 2..5, size 6..25>
                  device_ids@28..61 [-9223372036854775808@40..60]"#]],
        );
    }

    #[test]
    fn mesh_errors() {
        check(
            mesh,
            r#"["x"=2]"#,
            expect![[r#"
            None
            stopped at 0
            0..1: expected '<'"#]],
        );
        check(
            mesh,
            r#"<"x"=2>"#,
            expect![[r#"
            None
            stopped at 1
            1..4: expected '['"#]],
        );
        check(
            mesh,
            r#"<[x=2]>"#,
            expect![[r#"
            None
            stopped at 2
            2..3: expected string
              2..3: failed to parse Sdy_MeshAxis parameter 'name' which is to be a `::llvm::StringRef`
              2..3: failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check(
            mesh,
            r#"<["x" 2]>"#,
            expect![[r#"
            None
            stopped at 6
            5..5: expected '='
              6..7: failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check(
            mesh,
            r#"<["x"=, "y"=2]>"#,
            expect![[r#"
            None
            stopped at 6
            6..7: expected integer value
              6..7: failed to parse Sdy_MeshAxis parameter 'size' which is to be a `int64_t`
              6..7: failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check(
            mesh,
            r#"<["x"=- y]>"#,
            expect![[r#"
            None
            stopped at 8
            7..7: expected integer value
              8..9: failed to parse Sdy_MeshAxis parameter 'size' which is to be a `int64_t`
              8..9: failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check(
            mesh,
            r#"<["x"=2.0]>"#,
            expect![[r#"
            None
            stopped at 6
            6..9: expected integer value
              6..9: failed to parse Sdy_MeshAxis parameter 'size' which is to be a `int64_t`
              6..9: failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check(
            mesh,
            r#"<["x"=18446744073709551616]>"#,
            expect![[r#"
            None
            stopped at 26
            6..26: integer value too large
              26..27: failed to parse Sdy_MeshAxis parameter 'size' which is to be a `int64_t`
              26..27: failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check(
            mesh,
            r#"<["x"=2 "y"=2]>"#,
            expect![[r#"
            None
            stopped at 8
            7..7: expected ']'"#]],
        );
        check(
            mesh,
            r#"<["x"=2],>"#,
            expect![[r#"
            None
            stopped at 9
            9..10: expected 'device_ids'"#]],
        );
        check(
            mesh,
            r#"<["x"=2], ids=[0]>"#,
            expect![[r#"
            None
            stopped at 10
            10..13: expected 'device_ids'"#]],
        );
        check(
            mesh,
            r#"<["x"=2], device_ids [0]>"#,
            expect![[r#"
            None
            stopped at 21
            20..20: expected '='"#]],
        );
        check(
            mesh,
            r#"<["x"=2], device_ids=(0)>"#,
            expect![[r#"
            None
            stopped at 21
            21..22: expected '['"#]],
        );
        check(
            mesh,
            r#"<["x"=2], device_ids=[]>"#,
            expect![[r#"
            None
            stopped at 22
            22..23: expected integer value
              22..23: failed to parse Sdy_Mesh parameter 'device_ids' which is to be a `::llvm::ArrayRef<int64_t>`"#]],
        );
        check(
            mesh,
            r#"<["x"=2], device_ids=[0,]>"#,
            expect![[r#"
            None
            stopped at 24
            24..25: expected integer value
              24..25: failed to parse Sdy_Mesh parameter 'device_ids' which is to be a `::llvm::ArrayRef<int64_t>`"#]],
        );
        check(
            mesh,
            r#"<["x"=2], device_ids=[-9223372036854775809, 1]>"#,
            expect![[r#"
            None
            stopped at 42
            22..42: integer value too large
              42..43: failed to parse Sdy_Mesh parameter 'device_ids' which is to be a `::llvm::ArrayRef<int64_t>`"#]],
        );
        check(
            mesh,
            r#"<["x"=2], device_ids=[0 1]>"#,
            expect![[r#"
            None
            stopped at 24
            23..23: expected ']'"#]],
        );
        check(
            mesh,
            r#"<["x"=2] junk>"#,
            expect![[r#"
            None
            stopped at 9
            8..8: expected '>'"#]],
        );
        check(
            mesh,
            r#"<["x"=2]"#,
            expect![[r#"
            None
            8..8: expected '>'"#]],
        );
    }

    #[test]
    fn mesh_errors_in_custom_op() {
        // Errors of the `sdy.mesh` op syntax get the `custom op` prefix, except
        // MLIR's "expected <token>" ones.
        check_op(
            "sdy.mesh",
            mesh,
            r#"<[y=2]>"#,
            expect![[r#"
            None
            stopped at 2
            2..3: custom op 'sdy.mesh' expected string
              2..3: custom op 'sdy.mesh' failed to parse Sdy_MeshAxis parameter 'name' which is to be a `::llvm::StringRef`
              2..3: custom op 'sdy.mesh' failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check_op(
            "sdy.mesh",
            mesh,
            r#"<["y"=2] x>"#,
            expect![[r#"
            None
            stopped at 9
            8..8: expected '>'"#]],
        );
        check_op(
            "sdy.mesh",
            mesh,
            r#"<["y"=-z]>"#,
            expect![[r#"
            None
            stopped at 7
            7..8: expected integer value
              7..8: custom op 'sdy.mesh' failed to parse Sdy_MeshAxis parameter 'size' which is to be a `int64_t`
              7..8: custom op 'sdy.mesh' failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check_op(
            "sdy.mesh",
            mesh,
            r#"<["y"=z]>"#,
            expect![[r#"
            None
            stopped at 6
            6..7: custom op 'sdy.mesh' expected integer value
              6..7: custom op 'sdy.mesh' failed to parse Sdy_MeshAxis parameter 'size' which is to be a `int64_t`
              6..7: custom op 'sdy.mesh' failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"#]],
        );
        check_op(
            "sdy.mesh",
            mesh,
            r#"<["y"=2], device_ids=[0x8000000000000000]>"#,
            expect![[r#"
            None
            stopped at 40
            22..40: custom op 'sdy.mesh' integer value too large
              40..41: custom op 'sdy.mesh' failed to parse Sdy_Mesh parameter 'device_ids' which is to be a `::llvm::ArrayRef<int64_t>`"#]],
        );
    }

    // ----- tensor sharding -----

    #[test]
    fn sharding_forms() {
        check(
            sharding,
            "<@mesh_1, []>",
            expect![[r#"
            sharding@0..13 @mesh_1@1..8
              dims@10..12"#]],
        );
        check(
            sharding,
            r#"<@"my mesh", [{}, {?}]>"#,
            expect![[r#"
            sharding@0..23 @my mesh@1..11
              dims@13..22
                {}@14..16
                {}@18..21 open@19..20"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x", "y":(2)4, ?}p0, {"z" : ( -1 ) 2}p12, {?} p3]>"#,
            expect![[r#"
            sharding@0..57 @m@1..3
              dims@5..56
                {"x"@7..10<name 7..10>, "y":(2)4<16..20>@12..20<name 12..15>}@6..26 open@22..23 p0@24..26
                {"z":(-1)2<35..43>@29..43<name 29..32>}@28..47 p12@44..47
                {}@49..55 open@50..51 p3@53..55"#]],
        );
        check(
            sharding,
            r#"<mesh<["x"=2, "y"=2]>, [{"x"}], replicated={"y"}>"#,
            expect![[r#"
            sharding@0..49 mesh@5..21
                axis "x"=2@7..12<name 7..10, size 11..12>
                axis "y"=2@14..19<name 14..17, size 18..19>
              dims@23..30
                {"x"@25..28<name 25..28>}@24..29
              replicated {"y"@44..47<name 44..47>}@43..48"#]],
        );
        check(
            sharding,
            r#"<mesh <[]>, []>"#,
            expect![[r#"
            sharding@0..15 mesh@6..10
              dims@12..14"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced={"x"}, replicated={"y", "z":(1)2}>"#,
            expect![[r#"
                sharding@0..55 @m@1..3
                  dims@5..9
                    {}@6..8
                  replicated {"y"@40..43<name 40..43>, "z":(1)2<49..53>@45..53<name 45..48>}@39..54
                  unreduced@11..26 {"x"@22..25<name 22..25>}@21..26"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated={"y"},unreduced=max{"x"}>"#,
            expect![[r#"
            sharding@0..47 @m@1..3
              dims@5..9
                {}@6..8
              replicated {"y"@23..26<name 23..26>}@22..27
              unreduced@28..46 max@38..41 {"x"@42..45<name 42..45>}@41..46"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced = sum {"x"}>"#,
            expect![[r#"
            sharding@0..33 @m@1..3
              dims@5..9
                {}@6..8
              unreduced@11..32 sum@23..26 {"x"@28..31<name 28..31>}@27..32"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced=min{"x"}>"#,
            expect![[r#"
            sharding@0..30 @m@1..3
              dims@5..9
                {}@6..8
              unreduced@11..29 min@21..24 {"x"@25..28<name 25..28>}@24..29"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced{"x"}>"#,
            expect![[r#"
            sharding@0..26 @m@1..3
              dims@5..9
                {}@6..8
              unreduced@11..25 {"x"@21..24<name 21..24>}@20..25"#]],
        );
        check(
            sharding,
            r#"<@m, [{}p9223372036854775807]>"#,
            expect![[r#"
            sharding@0..30 @m@1..3
              dims@5..29
                {}@6..28 p9223372036854775807@8..28"#]],
        );
    }

    #[test]
    fn sharding_priority_errors() {
        // The priority keyword is consumed before it is checked: errors land on the
        // token after it.
        check(
            sharding,
            r#"<@m, [{"x"}, {}plow]>"#,
            expect![[r#"
            None
            stopped at 19
            19..20: expecting priority in format 'p<number>', got: plow
              19..20: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"}p]>"#,
            expect![[r#"
            None
            stopped at 12
            12..13: expecting priority in format 'p<number>', got: p
              12..13: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"}q2]>"#,
            expect![[r#"
            None
            stopped at 13
            13..14: expecting priority in format 'p<number>', got: q2
              13..14: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"}p2x, {}]>"#,
            expect![[r#"
            None
            stopped at 14
            14..15: expecting priority in format 'p<number>', got: p2x
              14..15: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"}p007]>"#,
            expect![[r#"
            None
            stopped at 15
            15..16: priorities with leading zeros are not allowed, got: p007
              15..16: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"}p00]>"#,
            expect![[r#"
            None
            stopped at 14
            14..15: priorities with leading zeros are not allowed, got: p00
              14..15: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"}p9223372036854775808]>"#,
            expect![[r#"
            None
            stopped at 31
            31..32: expecting integer priority, got: p9223372036854775808
              31..32: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"}p1 p2]>"#,
            expect![[r#"
            None
            stopped at 14
            13..13: expected ']'"#]],
        );
    }

    #[test]
    fn sharding_dim_errors() {
        check(
            sharding,
            r#"<@m, [{"x" "y"}]>"#,
            expect![[r#"
            None
            stopped at 11
            10..10: expected ','
              11..14: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"?}]>"#,
            expect![[r#"
            None
            stopped at 10
            10..11: expected ','
              10..11: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{?, "x"}]>"#,
            expect![[r#"
            None
            stopped at 8
            8..9: expected '}'
              8..9: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x",}]>"#,
            expect![[r#"
            None
            stopped at 11
            11..12: expected string
              11..12: failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              11..12: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{,}]>"#,
            expect![[r#"
            None
            stopped at 7
            7..8: expected string
              7..8: failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              7..8: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{x}]>"#,
            expect![[r#"
            None
            stopped at 7
            7..8: expected string
              7..8: failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              7..8: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{}, ]>"#,
            expect![[r#"
            None
            stopped at 10
            9..9: expected '{'
              10..11: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{} {}]>"#,
            expect![[r#"
            None
            stopped at 9
            8..8: expected ']'"#]],
        );
        check(
            sharding,
            r#"<@m, {}>"#,
            expect![[r#"
            None
            stopped at 5
            4..4: expected '['"#]],
        );
        check(
            sharding,
            r#"<@m [{}]>"#,
            expect![[r#"
            None
            stopped at 4
            3..3: expected ','"#]],
        );
        check(
            sharding,
            r#"<@m, [{}] replicated={"x"}>"#,
            expect![[r#"
            None
            stopped at 10
            9..9: expected '>'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}]"#,
            expect![[r#"
            None
            9..9: expected '>'"#]],
        );
        check(
            sharding,
            r#"x @m, [{}]>"#,
            expect![[r#"
            None
            stopped at 2
            1..1: expected '<'"#]],
        );
    }

    #[test]
    fn sharding_sub_axis_errors() {
        check(
            sharding,
            r#"<@m, [{"x":4}]>"#,
            expect![[r#"
            None
            stopped at 11
            11..12: expected '('
              11..12: failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`
              11..12: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x"::(1)2}]>"#,
            expect![[r#"
            None
            stopped at 10
            11..12: expected '('
              11..12: failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`
              11..12: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x":(1)}]>"#,
            expect![[r#"
            None
            stopped at 14
            14..15: expected integer value
              14..15: failed to parse Sdy_SubAxisInfo parameter 'size' which is to be a `int64_t`
              14..15: failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`
              14..15: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x":( )2}]>"#,
            expect![[r#"
            None
            stopped at 13
            13..14: expected integer value
              13..14: failed to parse Sdy_SubAxisInfo parameter 'pre_size' which is to be a `int64_t`
              13..14: failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`
              13..14: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x":(1 2}]>"#,
            expect![[r#"
            None
            stopped at 14
            13..13: expected ')'
              14..15: failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`
              14..15: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{"x":(1)2:(2)2}]>"#,
            expect![[r#"
            None
            stopped at 15
            15..16: expected ','
              15..16: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
    }

    #[test]
    fn sharding_replicated_unreduced_errors() {
        check(
            sharding,
            r#"<@m, [{}], replicated{"x"}>"#,
            expect![[r#"
            None
            stopped at 21
            21..22: expected '='
              21..22: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated  unreduced={"x"}>"#,
            expect![[r#"
            None
            stopped at 23
            21..21: expected '='
              23..32: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated>"#,
            expect![[r#"
            None
            stopped at 21
            21..22: expected '='
              21..22: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated=["x"]>"#,
            expect![[r#"
            None
            stopped at 22
            22..23: expected '{'
              22..23: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated={}>"#,
            expect![[r#"
            None
            stopped at 23
            23..24: expected string
              23..24: failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              23..24: failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`
              23..24: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated={"x", y}>"#,
            expect![[r#"
            None
            stopped at 28
            28..29: expected string
              28..29: failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              28..29: failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`
              28..29: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated={"x" "y"}>"#,
            expect![[r#"
            None
            stopped at 27
            26..26: expected '}'
              27..30: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated={"x"::(1)2}>"#,
            expect![[r#"
            None
            stopped at 26
            27..28: expected '('
              27..28: failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`
              27..28: failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`
              27..28: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced=("x")>"#,
            expect![[r#"
            None
            stopped at 21
            21..22: expected '{'
              21..22: failed to parse Sdy_TensorSharding parameter 'unreduced_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced=prod{"x"}>"#,
            expect![[r#"
            None
            stopped at 21
            21..25: expected '{'
              21..25: failed to parse Sdy_TensorSharding parameter 'unreduced_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced={"x", "y"()}>"#,
            expect![[r#"
            None
            stopped at 30
            30..31: expected '}'
              30..31: failed to parse Sdy_TensorSharding parameter 'unreduced_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced>"#,
            expect![[r#"
            None
            stopped at 20
            20..21: expected '{'
              20..21: failed to parse Sdy_TensorSharding parameter 'unreduced_axes'"#]],
        );
        check(
            sharding,
            r#"<@m, [{}],>"#,
            expect![[r#"
            None
            stopped at 10
            10..11: failed to parse Sdy_TensorSharding, expected valid named axis list after comma"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated={"x"},  >"#,
            expect![[r#"
            None
            stopped at 30
            30..31: failed to parse Sdy_TensorSharding, expected valid named axis list after comma"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], partial={"x"}>"#,
            expect![[r#"
            None
            stopped at 11
            11..18: failed to parse Sdy_TensorSharding, expected valid named axis list after comma"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated={"x"}, replicated={"y"}>"#,
            expect![[r#"
            None
            stopped at 29
            29..39: failed to parse Sdy_TensorSharding, expected valid named axis list after comma"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], unreduced={"x"}, unreduced={"y"}>"#,
            expect![[r#"
            None
            stopped at 28
            28..37: failed to parse Sdy_TensorSharding, expected valid named axis list after comma"#]],
        );
    }

    #[test]
    fn sharding_mesh_errors() {
        check(
            sharding,
            r#"<mesh<["x"]>, []>"#,
            expect![[r#"
            None
            stopped at 10
            10..11: expected '='
              10..11: failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`
              10..11: failed to parse MeshAttr"#]],
        );
        check(
            sharding,
            r#"<mesh<["x"=2] y>, []>"#,
            expect![[r#"
            None
            stopped at 14
            13..13: expected '>'
              14..15: failed to parse MeshAttr"#]],
        );
        check(
            sharding,
            r#"<mesh["x"=2], []>"#,
            expect![[r#"
            None
            stopped at 5
            5..6: expected '<'
              5..6: failed to parse MeshAttr"#]],
        );
        check(
            sharding,
            r#"<mesh, []>"#,
            expect![[r#"
            None
            stopped at 5
            5..6: expected '<'
              5..6: failed to parse MeshAttr"#]],
        );
        check(
            sharding,
            r#"<"m", []>"#,
            expect![[r#"
            None
            stopped at 4
            1..4: invalid kind of attribute specified
              4..5: expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
        check(
            sharding,
            r#"<[1, 2], []>"#,
            expect![[r#"
            None
            stopped at 7
            1..7: invalid kind of attribute specified
              7..8: expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
        check(
            sharding,
            r#"<@a::@b, []>"#,
            expect![[r#"
            None
            stopped at 7
            1..7: invalid kind of attribute specified
              7..8: expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
        check(
            sharding,
            r#"<-3, []>"#,
            expect![[r#"
            None
            stopped at 3
            1..3: invalid kind of attribute specified
              3..4: expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
        check(
            sharding,
            r#"<m, []>"#,
            expect![[r#"
            None
            stopped at 1
            1..2: expected attribute value
              1..2: expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
        check(
            sharding,
            r#"< , []>"#,
            expect![[r#"
            None
            stopped at 2
            1..1: expected attribute value
              2..3: expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
        check(
            sharding,
            r#"<#sdy.mesh<["x"=2]>, []>"#,
            expect![[r#"
            None
            stopped at 19
            1..19: invalid kind of attribute specified
              19..20: expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
    }

    #[test]
    fn sharding_errors_in_custom_op() {
        let op = "sdy.sharding_constraint";
        check_op(
            op,
            sharding,
            r#"<@m, [{"x"}phigh]>"#,
            expect![[r#"
            None
            stopped at 16
            16..17: custom op 'sdy.sharding_constraint' expecting priority in format 'p<number>', got: phigh
              16..17: custom op 'sdy.sharding_constraint' failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check_op(
            op,
            sharding,
            r#"<@m, [{"x" "y"}]>"#,
            expect![[r#"
            None
            stopped at 11
            10..10: expected ','
              11..14: custom op 'sdy.sharding_constraint' failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check_op(
            op,
            sharding,
            r#"<@m, [{}], replicated{"x"}>"#,
            expect![[r#"
            None
            stopped at 21
            21..22: expected '='
              21..22: custom op 'sdy.sharding_constraint' failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check_op(
            op,
            sharding,
            r#"<@m, [{}], replicated={"x", y}>"#,
            expect![[r#"
            None
            stopped at 28
            28..29: custom op 'sdy.sharding_constraint' expected string
              28..29: custom op 'sdy.sharding_constraint' failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              28..29: custom op 'sdy.sharding_constraint' failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`
              28..29: custom op 'sdy.sharding_constraint' failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check_op(
            op,
            sharding,
            r#"<@m, [{}], replicated={"x"},>"#,
            expect![[r#"
            None
            stopped at 28
            28..29: custom op 'sdy.sharding_constraint' failed to parse Sdy_TensorSharding, expected valid named axis list after comma"#]],
        );
        check_op(
            op,
            sharding,
            r#"<mesh<["x"=2] y>, []>"#,
            expect![[r#"
            None
            stopped at 14
            13..13: expected '>'
              14..15: custom op 'sdy.sharding_constraint' failed to parse MeshAttr"#]],
        );
        check_op(
            op,
            sharding,
            r#"<"m", []>"#,
            expect![[r#"
            None
            stopped at 4
            1..4: custom op 'sdy.sharding_constraint' invalid kind of attribute specified
              4..5: custom op 'sdy.sharding_constraint' expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
        check_op(
            op,
            sharding,
            r#"<m, []>"#,
            expect![[r#"
            None
            stopped at 1
            1..2: expected attribute value
              1..2: custom op 'sdy.sharding_constraint' expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>"#]],
        );
        check_op(
            op,
            sharding,
            "x @m, []>",
            expect![[r#"
            None
            stopped at 2
            1..1: expected '<'"#]],
        );
    }

    #[test]
    fn expected_token_positions() {
        // MLIR reports a missing token right after the previous one, skipping
        // whitespace, line breaks and comments; at the end of input too.
        check(
            sharding,
            "<@m, [{\"x\"}]\n  replicated={\"x\"}>",
            expect![[r#"
            None
            stopped at 15
            12..12: expected '>'"#]],
        );
        check(
            sharding,
            "<@m, [{}], replicated // note\n\n  // more\n  {\"x\"}>",
            expect![[r#"
            None
            stopped at 43
            21..21: expected '='
              43..44: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            "<@m, [{\"x\"} // note\n \"y\"]>",
            expect![[r#"
            None
            stopped at 21
            11..11: expected ']'"#]],
        );
        check(
            sharding,
            "<@m, [{}], replicated={\"x\"}  \n",
            expect![[r#"
            None
            27..27: expected '>'"#]],
        );
        check(
            sharding,
            "",
            expect![[r#"
            None
            0..0: expected '<'"#]],
        );
    }

    #[test]
    fn lexer_errors() {
        // MLIR drops every diagnostic emitted at a lexer error token: only the lexer's
        // own message is left.
        check(
            sharding,
            "<@m, [{\"x}]>",
            expect![[r#"
            None
            stopped at 7
            12..12: expected '"' in string literal"#]],
        );
        check(
            sharding,
            "<@m, [{}], replicated={\"x\", \"y}>\n",
            expect![[r#"
            None
            stopped at 28
            32..32: expected '"' in string literal"#]],
        );
        check(
            sharding,
            "<@m, [{\"x\"} ` ]>",
            expect![[r#"
            None
            stopped at 12
            12..13: unexpected character"#]],
        );
        check_op(
            "sdy.reshard",
            sharding,
            "<@m, [{\"x\"}], replicated={`}>",
            expect![[r#"
            None
            stopped at 26
            26..27: unexpected character"#]],
        );
    }

    #[test]
    fn attribute_references() {
        check(
            sharding,
            r#"<@m, [#dim]>"#,
            expect![[r#"
            None
            stopped at 6
            6..10: attribute references are not supported here: #dim
              6..10: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check(
            sharding,
            r#"<@m, [{}], replicated={#ax}>"#,
            expect![[r#"
            None
            stopped at 23
            23..26: attribute references are not supported here: #ax
              23..26: failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`
              23..26: failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check(
            sharding,
            r#"<mesh #m, []>"#,
            expect![[r#"
            None
            stopped at 6
            6..8: attribute references are not supported here: #m
              6..8: failed to parse MeshAttr"#]],
        );
        check(
            per_value,
            r#"<[#s]>"#,
            expect![[r#"
            None
            stopped at 2
            2..4: attribute references are not supported here: #s
              2..4: failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`"#]],
        );
    }

    // ----- per value -----

    #[test]
    fn per_value_forms() {
        check(per_value, "<[]>", expect!["per_value@0..4"]);
        check(
            per_value,
            r#"<[<@m, [{"x"}]>, #sdy.sharding<@n, []>, <@m, [], unreduced=max{"y"}>]>"#,
            expect![[r#"
                per_value@0..70
                  sharding@2..15 @m@3..5
                    dims@7..14
                      {"x"@9..12<name 9..12>}@8..13
                  sharding@30..38 @n@31..33
                    dims@35..37
                  sharding@40..68 @m@41..43
                    dims@45..47
                    unreduced@49..67 max@59..62 {"y"@63..66<name 63..66>}@62..67"#]],
        );
        check(stripped, "[]", expect!["per_value@0..2"]);
        check(
            stripped,
            r#"[<@m, [{"x"}, {}]>, <@m, []>] (%arg0"#,
            expect![[r#"
            per_value@0..29
              sharding@1..18 @m@2..4
                dims@6..17
                  {"x"@8..11<name 8..11>}@7..12
                  {}@14..16
              sharding@20..28 @m@21..23
                dims@25..27
            stopped at 30"#]],
        );
    }

    #[test]
    fn per_value_errors() {
        check(
            per_value,
            r#"<[<@m, [{}]phigh>]>"#,
            expect![[r#"
            None
            stopped at 11
            11..16: expected '>'
              11..16: failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`"#]],
        );
        check(
            per_value,
            r#"<[<@m, [{"x"}p01]>]>"#,
            expect![[r#"
            None
            stopped at 16
            16..17: priorities with leading zeros are not allowed, got: p01
              16..17: failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`
              16..17: failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`"#]],
        );
        check(
            per_value,
            r#"<[<@m, []>, <@m, [{}], replicated={"x", y}>]>"#,
            expect![[r#"
            None
            stopped at 40
            40..41: expected string
              40..41: failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              40..41: failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`
              40..41: failed to parse Sdy_TensorSharding parameter 'replicated_axes'
              40..41: failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`"#]],
        );
        check(
            per_value,
            r#"<[<@m, [{}], replicated={"x"}, >]>"#,
            expect![[r#"
            None
            stopped at 31
            31..32: failed to parse Sdy_TensorSharding, expected valid named axis list after comma
              31..32: failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`"#]],
        );
        check(
            per_value,
            r#"<[<@m, []>,]>"#,
            expect![[r#"
            None
            stopped at 11
            11..12: expected '<'
              11..12: failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`"#]],
        );
        check(
            per_value,
            r#"<[@m, []]>"#,
            expect![[r#"
            None
            stopped at 2
            2..4: expected '<'
              2..4: failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`"#]],
        );
        check(
            per_value,
            r#"<[<@m, []> <@m, []>]>"#,
            expect![[r#"
            None
            stopped at 11
            10..10: expected ']'"#]],
        );
        check(
            per_value,
            r#"<<@m, []>>"#,
            expect![[r#"
            None
            stopped at 1
            1..2: expected '['"#]],
        );
        check(
            per_value,
            r#"<[<@m, []>] x>"#,
            expect![[r#"
            None
            stopped at 12
            11..11: expected '>'"#]],
        );
        check(
            per_value,
            r#"[<@m, []>]"#,
            expect![[r#"
            None
            stopped at 0
            0..1: expected '<'"#]],
        );
    }

    #[test]
    fn stripped_per_value_errors() {
        // The op syntax list adds no chain line of its own.
        let op = "sdy.manual_computation";
        check_op(
            op,
            stripped,
            r#"x <@m, []>"#,
            expect![[r#"
            None
            stopped at 2
            1..1: expected '['"#]],
        );
        check_op(
            op,
            stripped,
            r#"[<@m, []>, ]"#,
            expect![[r#"
            None
            stopped at 11
            10..10: expected '<'"#]],
        );
        check_op(
            op,
            stripped,
            r#"[<@m, []> <@m, []>]"#,
            expect![[r#"
            None
            stopped at 10
            9..9: expected ']'"#]],
        );
        check_op(
            op,
            stripped,
            r#"[<@m, [{}p01]>]"#,
            expect![[r#"
            None
            stopped at 12
            12..13: custom op 'sdy.manual_computation' priorities with leading zeros are not allowed, got: p01
              12..13: custom op 'sdy.manual_computation' failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`"#]],
        );
        check_op(
            op,
            stripped,
            r#"[<@m, [{}], replicated={"x", y}>]"#,
            expect![[r#"
            None
            stopped at 29
            29..30: custom op 'sdy.manual_computation' expected string
              29..30: custom op 'sdy.manual_computation' failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              29..30: custom op 'sdy.manual_computation' failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`
              29..30: custom op 'sdy.manual_computation' failed to parse Sdy_TensorSharding parameter 'replicated_axes'"#]],
        );
        check_op(
            op,
            stripped,
            r#"[<@m [{}]>]"#,
            expect![[r#"
            None
            stopped at 5
            4..4: expected ','"#]],
        );
    }

    // ----- op sharding rule -----

    #[test]
    fn rule_forms() {
        check(
            rule,
            "<([], [])->([])>",
            expect![[r#"
            rule@0..16
              operands []@2..4, []@6..8
              results []@12..14
              sizes []"#]],
        );
        check(
            rule,
            "<([i, j], [j, k])->([i, k]) {i=8, j=4, k=0x10} reduction={j} \
             need_replication={i, k} permutation={k} blocked_propagation={i}, custom>",
            expect![[r#"
                rule@0..133
                  operands [i@3..4, j@6..7]@2..8, [j@11..12, k@14..15]@10..16
                  results [i@21..22, k@24..25]@20..26
                  sizes [8@29..32, 4@34..37, 16@39..45]
                  reduction@47..60 {j@58..59}
                  need_replication@61..84 {i@79..80, k@82..83}
                  permutation@85..100 {k@98..99}
                  blocked_propagation@101..124 {i@122..123}
                  custom"#]],
        );
        check(
            rule,
            "<([ij, k]) -> ([ijk]) {i=2, j=-3, k=true}>",
            expect![[r#"
            rule@0..42
              operands [ij@3..5, k@7..8]@2..9
              results [ijk@16..19]@15..20
              sizes [2@23..26, -3@28..32, -1@34..40]"#]],
        );
        check(
            rule,
            "<([z_1zz_2, z_10i])->([]) {}>",
            expect![[r#"
            rule@0..29
              operands [z_1zz_2@3..10, z_10i@12..17]@2..18
              results []@22..24
              sizes []"#]],
        );
        check(
            rule,
            "<([i, , j], [,])->([i,]) {i=1, j=1} reduction=>",
            expect![[r#"
            rule@0..47
              operands [i@3..4, @6..6, j@8..9]@2..10, [@13..13, @14..14]@12..15
              results [i@20..21, @22..22]@19..23
              sizes [1@26..29, 1@31..34]
              reduction@36..46 {}"#]],
        );
        check(
            rule,
            "<([i])->([i]) permutation={jk, z_3}>",
            expect![[r#"
            rule@0..36
              operands [i@3..4]@2..5
              results [i@10..11]@9..12
              sizes []
              permutation@14..35 {j@27..29, z_3@31..34}"#]],
        );
    }

    #[test]
    fn rule_structure_errors() {
        check(
            rule,
            "<[i]->([i])>",
            expect![[r#"
            None
            stopped at 1
            1..2: expected '('"#]],
        );
        check(
            rule,
            "<()->([i])>",
            expect![[r#"
            None
            stopped at 2
            2..3: expected '['
              2..3: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([i])->()>",
            expect![[r#"
            None
            stopped at 9
            9..10: expected '['
              9..10: failed to parse Sdy_OpShardingRule parameter 'result_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<(i)->([i])>",
            expect![[r#"
            None
            stopped at 2
            2..3: expected '['
              2..3: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([i], \"j\")->([i])>",
            expect![[r#"
            None
            stopped at 7
            6..6: expected '['
              7..10: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([i],)->([i])>",
            expect![[r#"
            None
            stopped at 6
            6..7: expected '['
              6..7: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([\"i\"])->([i])>",
            expect![[r#"
            None
            stopped at 3
            3..6: expected ']'
              3..6: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([i])->([i j])>",
            expect![[r#"
            None
            stopped at 12
            11..11: expected ']'
              12..13: failed to parse Sdy_OpShardingRule parameter 'result_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([i] [j])->([i])>",
            expect![[r#"
            None
            stopped at 6
            5..5: expected ')'"#]],
        );
        check(
            rule,
            "<([i]) ([i])>",
            expect![[r#"
            None
            stopped at 7
            6..6: expected '->'"#]],
        );
        check(
            rule,
            "<([i])->[i]>",
            expect![[r#"
            None
            stopped at 8
            8..9: expected '('"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2},>",
            expect![[r#"
            None
            stopped at 20
            20..21: expected 'custom'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2}, \"custom\">",
            expect![[r#"
            None
            stopped at 21
            21..29: expected 'custom'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2}, custom, custom>",
            expect![[r#"
            None
            stopped at 27
            27..28: expected '>'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} custom>",
            expect![[r#"
            None
            stopped at 20
            19..19: expected '>'"#]],
        );
    }

    #[test]
    fn rule_factor_symbol_errors() {
        check(
            rule,
            "<([k, b])->([k])>",
            expect![[r#"
            None
            stopped at 7
            7..8: expecting symbol from 'i' to 'z'. Received: 'b'
              7..8: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              7..8: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([j_2])->([j])>",
            expect![[r#"
            None
            stopped at 6
            6..7: expecting symbol from 'i' to 'z'. Received: '_'
              6..7: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              6..7: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([i.j])->([i])>",
            expect![[r#"
            None
            stopped at 6
            6..7: expecting symbol from 'i' to 'z'. Received: '.'
              6..7: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              6..7: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([k2])->([k])>",
            expect![[r#"
            None
            stopped at 5
            5..6: expecting symbol from 'i' to 'z'. Received: '2'
              5..6: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              5..6: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([z_])->([i])>",
            expect![[r#"
            None
            stopped at 5
            5..6: expecting integer after 'z_'. Received: 'z_'
              5..6: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              5..6: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([z_ 3])->([i])>",
            expect![[r#"
            None
            stopped at 6
            6..7: expecting integer after 'z_'. Received: 'z_'
              6..7: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              6..7: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([z_-3])->([i])>",
            expect![[r#"
            None
            stopped at 5
            5..6: expecting integer after 'z_'. Received: 'z_'
              5..6: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              5..6: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([iz_k])->([i])>",
            expect![[r#"
            None
            stopped at 7
            7..8: expecting integer after 'z_'. Received: 'z_k'
              7..8: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              7..8: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([z_0])->([i])>",
            expect![[r#"
            None
            stopped at 6
            6..7: expecting positive integer without leading zeros. Received: '0'
              6..7: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              6..7: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([z_05])->([i])>",
            expect![[r#"
            None
            stopped at 7
            7..8: expecting positive integer without leading zeros. Received: '05'
              7..8: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              7..8: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
        check(
            rule,
            "<([z_5_])->([i])>",
            expect![[r#"
            None
            stopped at 7
            7..8: expecting symbol from 'i' to 'z'. Received: '_'
              7..8: failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`
              7..8: failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`"#]],
        );
    }

    #[test]
    fn rule_factor_sizes_errors() {
        check(
            rule,
            "<([i, j])->([ij]) {j=4, i=2}>",
            expect![[r#"
            None
            stopped at 20
            20..21: expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index symbol 'i', received: 'j'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2, k=3}>",
            expect![[r#"
            None
            stopped at 21
            21..22: expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index symbol 'j', received: 'k'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {z=1}>",
            expect![[r#"
            None
            stopped at 16
            16..17: expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index symbol 'i', received: 'z'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {ij=2}>",
            expect![[r#"
            None
            stopped at 17
            17..18: expecting single factor symbol: j"#]],
        );
        check(
            rule,
            "<([i])->([i]) {\"i\"=2}>",
            expect![[r#"
            None
            stopped at 15
            15..18: expected valid keyword"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2,}>",
            expect![[r#"
            None
            stopped at 19
            19..20: expected valid keyword"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i 2}>",
            expect![[r#"
            None
            stopped at 17
            16..16: expected '='"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=}>",
            expect![[r#"
            None
            stopped at 17
            17..18: expected integer value"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2 j=3}>",
            expect![[r#"
            None
            stopped at 19
            18..18: expected '}'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=99999999999999999999}>",
            expect![[r#"
            None
            stopped at 37
            17..37: integer value too large"#]],
        );
        check(
            rule,
            "<([i])->([i]) {a=2}>",
            expect![[r#"
            None
            stopped at 16
            16..17: expecting symbol from 'i' to 'z'. Received: 'a'"#]],
        );
    }

    #[test]
    fn rule_typed_list_errors() {
        check(
            rule,
            "<([i])->([i]) {i=2} reduction: {i}>",
            expect![[r#"
            None
            stopped at 29
            29..30: expected '='"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} reduction {i}>",
            expect![[r#"
            None
            stopped at 30
            29..29: expected '='"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} reduce={i}>",
            expect![[r#"
            None
            stopped at 20
            19..19: expected '>'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} permutation={i} reduction={i}>",
            expect![[r#"
            None
            stopped at 36
            35..35: expected '>'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} reduction={i} reduction={i}>",
            expect![[r#"
            None
            stopped at 34
            33..33: expected '>'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} reduction={i}, need_replication={i}>",
            expect![[r#"
            None
            stopped at 35
            35..51: expected 'custom'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} need_replication={b}>",
            expect![[r#"
            None
            stopped at 39
            39..40: expecting symbol from 'i' to 'z'. Received: 'b'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} need_replication={z_0}>",
            expect![[r#"
            None
            stopped at 41
            41..42: expecting positive integer without leading zeros. Received: '0'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} reduction={i,}>",
            expect![[r#"
            None
            stopped at 33
            33..34: expected valid keyword"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} reduction={i j}>",
            expect![[r#"
            None
            stopped at 33
            32..32: expected '}'"#]],
        );
        check(
            rule,
            "<([i])->([i]) {i=2} reduction=i>",
            expect![[r#"
            None
            stopped at 30
            30..31: expected '>'"#]],
        );
    }

    #[test]
    fn rule_symbol_index_overflow_continues() {
        // An index beyond 2^63-1 is reported but parsing goes on with index 0 + 17:
        // all the errors are one failure for MLIR.
        check(
            rule,
            "<([i, z_9223372036854775808])->([i]) {i=1, z_9223372036854775808=1}>",
            expect![[r#"
                None
                stopped at 64
                27..28: expecting symbol index <=2^63-1. Received: '9223372036854775808'
                  64..65: expecting symbol index <=2^63-1. Received: '9223372036854775808'
                  64..65: expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index symbol 'j', received: 'z'"#]],
        );
        check(
            rule,
            "<([i])->([z_99999999999999999999])>",
            expect![[r#"
            rule@0..35
              operands [i@3..4]@2..5
              results [z@10..32]@9..33
              sizes []
            32..33: expecting symbol index <=2^63-1. Received: '99999999999999999999'"#]],
        );
        // i64::MAX + 17 wraps around, as in Shardy.
        check(
            rule,
            "<([i])->([i]) {i=4, z_9223372036854775807=2}>",
            expect![[r#"
            None
            stopped at 41
            41..42: expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index symbol 'j', received: 'y'"#]],
        );
    }

    // ----- op-syntax lists -----

    #[test]
    fn manual_axes_forms_and_errors() {
        let op = "sdy.manual_computation";
        check_op(op, manual_axes, "{}", expect!["{}"]);
        check_op(
            op,
            manual_axes,
            r#"{"x", "y" : i32, "z":(i32, f32) -> ()} (%a"#,
            expect![[r#"
            {"x"@1..4<name 1..4>, "y"@6..9<name 6..9>, "z"@17..20<name 17..20>}
            stopped at 39"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"x ["x"]"#,
            expect![[r#"
            None
            stopped at 2
            1..1: expected '{'"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{"x",}"#,
            expect![[r#"
            None
            stopped at 5
            5..6: expected attribute value
              5..6: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{x}"#,
            expect![[r#"
            None
            stopped at 1
            1..2: expected attribute value
              1..2: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{"x" "y"}"#,
            expect![[r#"
            None
            stopped at 5
            4..4: expected '}'"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{3}"#,
            expect![[r#"
            None
            stopped at 2
            1..2: custom op 'sdy.manual_computation' invalid kind of attribute specified
              2..3: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{@x, "y"}"#,
            expect![[r#"
            None
            stopped at 3
            1..3: custom op 'sdy.manual_computation' invalid kind of attribute specified
              3..4: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{["x"]}"#,
            expect![[r#"
            None
            stopped at 6
            1..6: custom op 'sdy.manual_computation' invalid kind of attribute specified
              6..7: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{tensor<2xf32>}"#,
            expect![[r#"
            None
            stopped at 14
            1..14: custom op 'sdy.manual_computation' invalid kind of attribute specified
              14..15: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{"x":(1)2}"#,
            expect![[r#"
            None
            stopped at 6
            6..7: expected non-function type
              6..7: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{"x" : y}"#,
            expect![[r#"
            None
            stopped at 7
            6..6: expected non-function type
              7..8: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
        check_op(
            op,
            manual_axes,
            r#"{"x" : (i32)}"#,
            expect![[r#"
            None
            stopped at 12
            12..13: expected '->' in function type
              12..13: custom op 'sdy.manual_computation' failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`"#]],
        );
    }

    #[test]
    fn axis_list_forms_and_errors() {
        let op = "sdy.all_reduce";
        check_op(
            op,
            axis_list_attr,
            "{} %x",
            expect![[r#"
            {}
            stopped at 3"#]],
        );
        check_op(
            op,
            axis_list_attr,
            r#"{"x", "y":(1)2}"#,
            expect![[r#"{"x"@1..4<name 1..4>, "y":(1)2<10..14>@6..14<name 6..9>}"#]],
        );
        check_op(
            op,
            axis_list_attr,
            r#"x ["x"]"#,
            expect![[r#"
            None
            stopped at 2
            1..1: expected '{'"#]],
        );
        check_op(
            op,
            axis_list_attr,
            r#"{"x",}"#,
            expect![[r#"
            None
            stopped at 5
            5..6: custom op 'sdy.all_reduce' expected string
              5..6: custom op 'sdy.all_reduce' failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              5..6: custom op 'sdy.all_reduce' failed to parse Sdy_AxisRefList parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefAttr>`"#]],
        );
        check_op(
            op,
            axis_list_attr,
            r#"{x}"#,
            expect![[r#"
            None
            stopped at 1
            1..2: custom op 'sdy.all_reduce' expected string
              1..2: custom op 'sdy.all_reduce' failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              1..2: custom op 'sdy.all_reduce' failed to parse Sdy_AxisRefList parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefAttr>`"#]],
        );
        check_op(
            op,
            axis_list_attr,
            r#"{"x" "y"}"#,
            expect![[r#"
            None
            stopped at 5
            4..4: expected '}'"#]],
        );
        check_op(
            op,
            axis_list_attr,
            r#"{"x":2}"#,
            expect![[r#"
            None
            stopped at 5
            5..6: expected '('
              5..6: custom op 'sdy.all_reduce' failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`
              5..6: custom op 'sdy.all_reduce' failed to parse Sdy_AxisRefList parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefAttr>`"#]],
        );
    }

    #[test]
    fn axis_list_per_dim_forms_and_errors() {
        let op = "sdy.all_gather";
        check_op(op, per_dim, "[]", expect!["[]"]);
        check_op(
            op,
            per_dim,
            r#"[{}, {"x", "y":(2)2}]"#,
            expect![[
                r#"[{}@1..3, {"x"@6..9<name 6..9>, "y":(2)2<15..19>@11..19<name 11..14>}@5..20]"#
            ]],
        );
        check_op(
            op,
            per_dim,
            r#"x {}"#,
            expect![[r#"
            None
            stopped at 2
            1..1: expected '['"#]],
        );
        check_op(
            op,
            per_dim,
            r#"[{}, ]"#,
            expect![[r#"
            None
            stopped at 5
            4..4: expected '{'
              5..6: custom op 'sdy.all_gather' failed to parse Sdy_ListOfAxisRefLists parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefListAttr>`"#]],
        );
        check_op(
            op,
            per_dim,
            r#"[{} {}]"#,
            expect![[r#"
            None
            stopped at 4
            3..3: expected ']'"#]],
        );
        check_op(
            op,
            per_dim,
            r#"[{x}]"#,
            expect![[r#"
            None
            stopped at 2
            2..3: custom op 'sdy.all_gather' expected string
              2..3: custom op 'sdy.all_gather' failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              2..3: custom op 'sdy.all_gather' failed to parse Sdy_AxisRefList parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefAttr>`
              2..3: custom op 'sdy.all_gather' failed to parse Sdy_ListOfAxisRefLists parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefListAttr>`"#]],
        );
        check_op(
            op,
            per_dim,
            r#"[{"x" "y"}]"#,
            expect![[r#"
            None
            stopped at 6
            5..5: expected '}'
              6..9: custom op 'sdy.all_gather' failed to parse Sdy_ListOfAxisRefLists parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefListAttr>`"#]],
        );
        check_op(
            op,
            per_dim,
            r#"[{"x"::(1)2}]"#,
            expect![[r#"
            None
            stopped at 5
            6..7: expected '('
              6..7: custom op 'sdy.all_gather' failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`
              6..7: custom op 'sdy.all_gather' failed to parse Sdy_AxisRefList parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefAttr>`
              6..7: custom op 'sdy.all_gather' failed to parse Sdy_ListOfAxisRefLists parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefListAttr>`"#]],
        );
        check_op(
            op,
            per_dim,
            r#"[[]]"#,
            expect![[r#"
            None
            stopped at 1
            1..2: expected '{'
              1..2: custom op 'sdy.all_gather' failed to parse Sdy_ListOfAxisRefLists parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefListAttr>`"#]],
        );
    }

    #[test]
    fn all_to_all_forms_and_errors() {
        let op = "sdy.all_to_all";
        check_op(op, a2a, "[]", expect!["[]"]);
        check_op(
            op,
            a2a,
            r#"[{"x"}: 0->1, {"y", "z"} : 1 -> -2]"#,
            expect![[
                r#"[{"x"@2..5<name 2..5>}@1..6: 0@8..9->1@11..12 @1..12, {"y"@15..18<name 15..18>, "z"@20..23<name 20..23>}@14..24: 1@27..28->-2@32..34 @14..34]"#
            ]],
        );
        check_op(
            op,
            a2a,
            r#"[{}: 0->1]"#,
            expect![[r#"
            None
            stopped at 2
            2..3: custom op 'sdy.all_to_all' expected string
              2..3: custom op 'sdy.all_to_all' failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              2..3: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamAttr parameter 'axes' which is to be a `::llvm::ArrayRef<AxisRefAttr>`
              2..3: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[{x}: 0->1]"#,
            expect![[r#"
            None
            stopped at 2
            2..3: custom op 'sdy.all_to_all' expected string
              2..3: custom op 'sdy.all_to_all' failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`
              2..3: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamAttr parameter 'axes' which is to be a `::llvm::ArrayRef<AxisRefAttr>`
              2..3: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[{"x" "y"}: 0->1]"#,
            expect![[r#"
            None
            stopped at 6
            5..5: expected '}'
              6..9: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[("x"): 0->1]"#,
            expect![[r#"
            None
            stopped at 1
            1..2: expected '{'
              1..2: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[{"x"} 0->1]"#,
            expect![[r#"
            None
            stopped at 7
            6..6: expected ':'
              7..8: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[{"x"}::0->1]"#,
            expect![[r#"
            None
            stopped at 6
            7..8: custom op 'sdy.all_to_all' expected integer value
              7..8: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamAttr parameter 'src_dim' which is to be a `int64_t`
              7..8: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[{"x"}: y->1]"#,
            expect![[r#"
            None
            stopped at 8
            8..9: custom op 'sdy.all_to_all' expected integer value
              8..9: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamAttr parameter 'src_dim' which is to be a `int64_t`
              8..9: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[{"x"}: 0 1]"#,
            expect![[r#"
            None
            stopped at 10
            9..9: expected '->'
              10..11: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[{"x"}: 0->]"#,
            expect![[r#"
            None
            stopped at 11
            11..12: custom op 'sdy.all_to_all' expected integer value
              11..12: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamAttr parameter 'tgt_dim' which is to be a `int64_t`
              11..12: custom op 'sdy.all_to_all' failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`"#]],
        );
        check_op(
            op,
            a2a,
            r#"[{"x"}: 0->1 {"y"}: 1->0]"#,
            expect![[r#"
            None
            stopped at 13
            12..12: expected ']'"#]],
        );
        check_op(
            op,
            a2a,
            r#"x {"x"}: 0->1"#,
            expect![[r#"
            None
            stopped at 2
            1..1: expected '['"#]],
        );
    }
}
