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

use super::Parser;
use crate::lexer::{Token, TokenKind as K};
use crate::sdy::*;
use crate::span::Span;

// Chain lines, in the words of Shardy's generated parsers.
const MESH_AXES: &str =
    "failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`";
const MESH_DEVICE_IDS: &str =
    "failed to parse Sdy_Mesh parameter 'device_ids' which is to be a `::llvm::ArrayRef<int64_t>`";
const MESH_AXIS_NAME: &str =
    "failed to parse Sdy_MeshAxis parameter 'name' which is to be a `::llvm::StringRef`";
const MESH_AXIS_SIZE: &str =
    "failed to parse Sdy_MeshAxis parameter 'size' which is to be a `int64_t`";
const MESH_ATTR: &str = "failed to parse MeshAttr";
const MESH_OR_REF: &str = "expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>";
const AXIS_REF_NAME: &str =
    "failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`";
const AXIS_REF_SUB: &str =
    "failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`";
const SUB_PRE_SIZE: &str =
    "failed to parse Sdy_SubAxisInfo parameter 'pre_size' which is to be a `int64_t`";
const SUB_SIZE: &str =
    "failed to parse Sdy_SubAxisInfo parameter 'size' which is to be a `int64_t`";
const DIM_SHARDINGS: &str = "failed to parse Sdy_TensorSharding parameter 'dim_shardings' which \
                             is to be a `::llvm::ArrayRef<DimensionShardingAttr>`";
const REPLICATED: &str = "failed to parse Sdy_TensorSharding parameter 'replicated_axes'";
const UNREDUCED: &str = "failed to parse Sdy_TensorSharding parameter 'unreduced_axes'";
const AXIS_LIST: &str =
    "failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`";
const AFTER_COMMA: &str =
    "failed to parse Sdy_TensorSharding, expected valid named axis list after comma";
const PER_VALUE: &str = "failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which \
                         is to be a `::llvm::ArrayRef<TensorShardingAttr>`";
const OPERAND_MAPPINGS: &str = "failed to parse Sdy_OpShardingRule parameter 'operand_mappings' \
                                which is to be a `::llvm::ArrayRef<TensorMappingAttr>`";
const RESULT_MAPPINGS: &str = "failed to parse Sdy_OpShardingRule parameter 'result_mappings' \
                               which is to be a `::llvm::ArrayRef<TensorMappingAttr>`";
const DIM_MAPPINGS: &str = "failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is \
                            to be a `::llvm::ArrayRef<DimMappingAttr>`";
const MANUAL_AXES: &str = "failed to parse Sdy_ManualAxes parameter 'value' which is to be a \
                           `::llvm::ArrayRef<StringAttr>`";
const AXIS_REF_LIST: &str = "failed to parse Sdy_AxisRefList parameter 'value' which is to be a \
                             `::llvm::ArrayRef<AxisRefAttr>`";
const LIST_OF_AXIS_REF_LISTS: &str = "failed to parse Sdy_ListOfAxisRefLists parameter 'value' \
                                      which is to be a `::llvm::ArrayRef<AxisRefListAttr>`";
const A2A_AXES: &str = "failed to parse Sdy_AllToAllParamAttr parameter 'axes' which is to be a \
                        `::llvm::ArrayRef<AxisRefAttr>`";
const A2A_SRC: &str =
    "failed to parse Sdy_AllToAllParamAttr parameter 'src_dim' which is to be a `int64_t`";
const A2A_TGT: &str =
    "failed to parse Sdy_AllToAllParamAttr parameter 'tgt_dim' which is to be a `int64_t`";
const A2A_LIST: &str = "failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a \
                        `::llvm::ArrayRef<AllToAllParamAttr>`";

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
                self.sdy_chain(MESH_AXES);
                return None;
            };
            axes = list;
            self.sdy_punct(K::RBracket, "']'")?;
        }
        let mut device_ids = None;
        if self.eat(K::Comma).is_some() {
            let kw = self.peek();
            if self.eat_keyword("device_ids").is_none() {
                self.sdy_error_here("expected 'device_ids'");
                return None;
            }
            self.sdy_punct(K::Equal, "'='")?;
            self.sdy_punct(K::LBracket, "'['")?;
            let Some(ids) = self.sdy_list(Self::sdy_int) else {
                self.sdy_chain(MESH_DEVICE_IDS);
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
                self.sdy_chain(DIM_SHARDINGS);
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
                self.sdy_chain(PER_VALUE);
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
            self.sdy_chain(MANUAL_AXES);
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
            self.sdy_chain(LIST_OF_AXIS_REF_LISTS);
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
            self.sdy_chain(A2A_LIST);
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
            self.sdy_chain(MESH_AXIS_NAME);
            return None;
        };
        self.sdy_punct(K::Equal, "'='")?;
        let Some((size, size_span)) = self.sdy_int() else {
            self.sdy_chain(MESH_AXIS_SIZE);
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
                self.sdy_chain(MESH_ATTR);
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
            self.sdy_error_at(span, "invalid kind of attribute specified");
        }
        self.sdy_chain(MESH_OR_REF);
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
            self.sdy_error_here(format!("expecting priority in format 'p<number>', got: {text}"));
            return None;
        }
        if digits.starts_with('0') && digits.len() > 1 {
            self.sdy_error_here(format!(
                "priorities with leading zeros are not allowed, got: {text}"
            ));
            return None;
        }
        match digits.parse::<i64>() {
            Ok(v) => Some(v),
            Err(_) => {
                self.sdy_error_here(format!("expecting integer priority, got: {text}"));
                None
            }
        }
    }

    /// `"a"` or `"a":(2)4` (Shardy's generated `AxisRefAttr::parse`).
    fn sdy_axis_ref(&mut self) -> Option<AxisRefAst> {
        let name_tok = self.peek();
        let Some(name) = self.sdy_string() else {
            self.sdy_chain(AXIS_REF_NAME);
            return None;
        };
        let mut sub = None;
        if self.at(K::ColonColon) {
            // MLIR lexes `::` as two colons: the first is the optional `:`, and `(` is
            // expected at the second.
            let second = self.sdy_second_colon();
            self.sdy_raw(second, "expected '('".into(), false, false);
            self.sdy_raw(second, AXIS_REF_SUB.into(), true, true);
            return None;
        }
        if self.eat(K::Colon).is_some() {
            let Some(s) = self.sdy_sub_axis() else {
                self.sdy_chain(AXIS_REF_SUB);
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
            self.sdy_chain(SUB_PRE_SIZE);
            return None;
        };
        self.sdy_punct(K::RParen, "')'")?;
        let Some((size, _)) = self.sdy_int() else {
            self.sdy_chain(SUB_SIZE);
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
                    self.sdy_chain(REPLICATED);
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
                    self.sdy_chain(UNREDUCED);
                    return None;
                };
                unreduced = Some(UnreducedAst { span: self.rel_from(kw.start), reduction, list });
            } else {
                self.sdy_error_here(AFTER_COMMA);
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
            self.sdy_chain(AXIS_LIST);
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
            self.sdy_chain(OPERAND_MAPPINGS);
            return None;
        };
        self.sdy_punct(K::RParen, "')'")?;
        self.sdy_punct(K::Arrow, "'->'")?;
        self.sdy_punct(K::LParen, "'('")?;
        let Some(results) = self.sdy_list(Self::sdy_tensor_mapping) else {
            self.sdy_chain(RESULT_MAPPINGS);
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
                self.sdy_error_here("expected 'custom'");
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
                self.sdy_chain(DIM_MAPPINGS);
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
            let c = s.as_bytes()[0];
            if !(b'i'..=b'z').contains(&c) {
                let c = s[..].chars().next().unwrap_or('?');
                self.sdy_error_here(format!("expecting symbol from 'i' to 'z'. Received: '{c}'"));
                return None;
            }
            *rest = &s[1..];
            return Some(i64::from(c - b'i'));
        }
        let digits = s[2..].bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            self.sdy_error_here(format!("expecting integer after 'z_'. Received: '{s}'"));
            return None;
        }
        let number = &s[2..2 + digits];
        if number.starts_with('0') {
            self.sdy_error_here(format!(
                "expecting positive integer without leading zeros. Received: '{number}'"
            ));
            return None;
        }
        // Shardy reports an index beyond i64 but goes on as if it were 0.
        let index = number.parse::<i64>().unwrap_or_else(|_| {
            self.sdy_error_here(format!("expecting symbol index <=2^63-1. Received: '{number}'"));
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
                self.sdy_error_here("expected valid keyword");
                return None;
            }
            self.bump();
            let mut rest = self.text(t);
            let expected = sizes.len() as i64;
            let index = self.sdy_factor_symbol(&mut rest)?;
            if index != expected {
                self.sdy_error_here(format!(
                    "expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. \
                     {{i=#, j=#, ...}}). Expecting factor index symbol '{}', received: '{}'",
                    factor_symbol(expected),
                    factor_symbol(index)
                ));
                return None;
            }
            if !rest.is_empty() {
                self.sdy_error_here(format!("expecting single factor symbol: {rest}"));
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
                    self.sdy_error_here("expected valid keyword");
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
            self.sdy_error_at(span, "invalid kind of attribute specified");
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
                self.sdy_chain(AXIS_REF_LIST);
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
            self.sdy_chain(A2A_AXES);
            return None;
        };
        self.sdy_punct(K::RBrace, "'}'")?;
        let axes = AxisListAst { span: self.rel_from(start), axes };
        if self.at(K::ColonColon) {
            // `::` is two colons for MLIR: the source dimension is expected at the second.
            let second = self.sdy_second_colon();
            self.sdy_raw(second, "expected integer value".into(), true, false);
            self.sdy_raw(second, A2A_SRC.into(), true, true);
            return None;
        }
        self.sdy_punct(K::Colon, "':'")?;
        let Some(src_dim) = self.sdy_int() else {
            self.sdy_chain(A2A_SRC);
            return None;
        };
        self.sdy_punct(K::Arrow, "'->'")?;
        let Some(tgt_dim) = self.sdy_int() else {
            self.sdy_chain(A2A_TGT);
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
    fn sdy_string(&mut self) -> Option<Box<str>> {
        if !self.at(K::String) {
            self.sdy_error_here("expected string");
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
                self.sdy_error_here("expected integer value");
                return None;
            }
        };
        let t = self.bump();
        let span = self.rel_from(first.start);
        match int_value(self.text(t), negative) {
            Some(v) => Some((v, span)),
            None => {
                self.sdy_error_at(span, "integer value too large");
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

    /// After `:` of a typed attribute: skips a type, or reports MLIR's error.
    fn sdy_skip_type(&mut self) -> bool {
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
        self.sdy_error_here(format!("attribute references are not supported here: {text}"));
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
            K::UnterminatedString => {
                (Span::empty(t.end - self.base), "expected '\"' in string literal")
            }
            K::Error => (self.rel(t), "unexpected character"),
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
mod tmp_diff {
    use super::*;
    #[test]
    fn tmp_diff_cases() {
        let Ok(input) = std::fs::read_to_string("/tmp/sdyattr/cases.txt") else { return };
        let mut out = String::new();
        for line in input.lines() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (kind, body) = line.split_once(' ').unwrap();
            let text = format!("x {body}");
            let mut p = Parser::new(&text);
            p.bump();
            let op = match kind {
                "meshop" => Some("sdy.mesh"),
                "sc" => Some("sdy.sharding_constraint"),
                "nc" => Some("sdy.named_computation"),
                "mc" => Some("sdy.manual_computation"),
                "ar" => Some("sdy.all_reduce"),
                "ag" => Some("sdy.all_gather"),
                "a2a" => Some("sdy.all_to_all"),
                _ => None,
            };
            p.custom_op = op;
            let ok = match kind {
                "sh" | "sc" => p.sdy_sharding_body().is_some(),
                "pv" => p.sdy_per_value_body().is_some(),
                "rule" => p.sdy_rule_body().is_some(),
                "mesh" | "meshop" => p.sdy_mesh_body().is_some(),
                "nc" => p.sdy_stripped_per_value().is_some(),
                "mc" => p.sdy_manual_axes().is_some(),
                "ar" => p.sdy_axis_list().is_some(),
                "ag" => p.sdy_axis_list_per_dim().is_some(),
                "a2a" => p.sdy_all_to_all_params().is_some(),
                _ => panic!("{kind}"),
            };
            out.push_str(&format!("== {kind} {body}\n"));
            for e in &p.errors {
                out.push_str(&format!("   {}: {}\n", e.span.start as i64 - 2, e.message));
            }
            if p.errors.is_empty() {
                out.push_str(if ok { "   OK\n" } else { "   NONE-WITHOUT-ERROR\n" });
            }
        }
        std::fs::write("/tmp/sdyattr/ours.txt", out).unwrap();
    }
}
