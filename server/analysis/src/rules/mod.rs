//! Op sharding rules: the [`OpShardingRule`] data type and THE registry that creates
//! the rule of every op Shardy knows (Shardy's `op_sharding_rule_registry.cc`).
//!
//! Entry points:
//!
//! * [`rule_for`]`(model, op, src, &opts)` — what propagation uses: the op's explicit
//!   `sdy.sharding_rule` when it has one, else the registry's rule
//!   ([`RuleLookup`]); unknown ops come back as [`RuleLookup::Unknown`] with Shardy's
//!   warning ([`Unknown::message`]), which the caller emits once per process like
//!   Shardy does.
//! * [`create_rule`]`(&desc, &opts)` — the registry alone, on an [`OpDesc`] (name,
//!   operand/result types, inherent attributes, facts about neighbouring ops), for ops
//!   that are not in a [`Model`] (made by a pass).
//!
//! Factor types: [`OpShardingRule::factor_type`] (pass-through, reduction,
//! need-replication, permutation) and [`OpShardingRule::is_blocked`].

mod builder;
pub mod memo;
pub mod registry;
pub(crate) mod rule;
pub(crate) mod stablehlo_attrs;

pub use registry::Registered;
pub use rule::{Factor, FactorType, OpShardingRule, TensorMapping};
pub use stablehlo_attrs::InherentAttrs;

use crate::model::{Model, OpId, ValueDef};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{AttrKind, Dim, Type, TypeKind};

/// The size Shardy uses for a dynamic dimension (`ShapedType::kDynamic`).
pub const DYNAMIC: i64 = i64::MIN;

/// Options of the registry (the `conservative-propagation` pass option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuleOptions {
    /// No rule may create sub-axes or propagate non-divisible shardings: no factor
    /// for concatenated dims and convolution spatial dims; padded, sliced and windowed
    /// dims are blocked.
    pub conservative: bool,
}

/// A value's type as the registry sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TensorType {
    /// Dimension sizes of a ranked tensor ([`DYNAMIC`] for `?`); `None` for values
    /// that are not ranked tensors (tokens, tuples, unranked), which have rank 0.
    pub shape: Option<Vec<i64>>,
    /// The element type as written (`f32`, `i1`).
    pub elem: String,
}

impl TensorType {
    pub fn from_type(t: Option<&Type>) -> TensorType {
        match t.map(|t| &*t.kind) {
            Some(TypeKind::Tensor { shape: Some(dims), elem, .. }) => TensorType {
                shape: Some(
                    dims.iter()
                        .map(|d| match d {
                            Dim::Static(n) => *n,
                            Dim::Dynamic => DYNAMIC,
                        })
                        .collect(),
                ),
                elem: elem.to_string(),
            },
            _ => TensorType::default(),
        }
    }
    pub fn rank(&self) -> usize {
        self.shape.as_ref().map_or(0, Vec::len)
    }
}

/// What the registry needs to know about an operand's producer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OperandFacts {
    /// The value's identity (any numbering, compared for equality only).
    pub value: Option<u32>,
    /// The name of the op defining it (`None` for block arguments).
    pub def_op: Option<String>,
    /// The identity of the defining op's first operand (for `slice` producers).
    pub def_operand0: Option<u32>,
}

/// Facts about an op's neighbourhood some rules depend on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpFacts {
    /// Per operand (concatenate of slices, dynamic_update_slice with constant indices).
    pub operands: Vec<OperandFacts>,
    /// Names of the ops using any result (`X64Combine` feeding `rng_bit_generator`).
    pub result_users: Vec<String>,
    /// For `scatter`: whether its body is a single supported commutative reduction
    /// (Shardy's `getCommonSupportedReductionOp`).
    pub scatter_reduction: bool,
}

/// An op as the registry sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpDesc {
    /// The full op name (`stablehlo.add`, `func.return`).
    pub name: String,
    pub operands: Vec<TensorType>,
    pub results: Vec<TensorType>,
    pub attrs: InherentAttrs,
    pub facts: OpFacts,
}

impl OpDesc {
    /// A hash of the name and operand/result types: descriptions alike (which may share
    /// one rule) have the same key; equal keys are compared in full.
    pub fn shape_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        self.name.hash(&mut h);
        for t in self.operands.iter().chain(&self.results) {
            (&t.shape, &t.elem).hash(&mut h);
        }
        h.finish()
    }
    pub fn operand_shape(&self, i: usize) -> Option<&[i64]> {
        self.operands.get(i)?.shape.as_deref()
    }
    pub fn result_shape(&self, i: usize) -> Option<&[i64]> {
        self.results.get(i)?.shape.as_deref()
    }
    fn builder(&self) -> builder::Builder {
        let o: Vec<usize> = self.operands.iter().map(TensorType::rank).collect();
        let r: Vec<usize> = self.results.iter().map(TensorType::rank).collect();
        builder::Builder::new(&o, &r)
    }

    /// The description of op `id` of `model` (`src`: the document text).
    pub fn from_model(model: &Model, id: OpId, src: &str) -> OpDesc {
        OpDesc::from_model_cached(model, id, src, &mut AttrCache::default())
    }

    /// [`OpDesc::from_model`], reading the attributes of ops alike once (`cache`).
    pub fn from_model_cached(model: &Model, id: OpId, src: &str, cache: &mut AttrCache) -> OpDesc {
        let info = model.op(id);
        let name = info.name().to_string();
        let (operand_types, result_types) = value_types(model, id);
        let operands = operand_types.into_iter().map(TensorType::from_type).collect();
        let results = result_types.into_iter().map(TensorType::from_type).collect();
        // Re-lexing the attributes and collecting the facts is for rules that read them.
        if !registry::reads_context(&name) {
            return OpDesc { name, operands, results, ..Default::default() };
        }
        let order = mlir_operand_order(&info.node);
        let text =
            src.get(info.start as usize..(info.start + info.node.len) as usize).unwrap_or("");
        let attrs = cache.of_op(&info.node, text);
        if !registry::reads_facts(&name) {
            return OpDesc { name, operands, results, attrs, ..Default::default() };
        }
        let def_of = |v: u32| match model.value(v).def {
            ValueDef::Result { op, .. } => Some(op),
            ValueDef::BlockArg { .. } => None,
        };
        let operand_facts = order
            .iter()
            .map(|&i| {
                let Some(v) = info.operands.get(i).copied().flatten() else {
                    return OperandFacts::default();
                };
                let def = def_of(v);
                OperandFacts {
                    value: Some(v),
                    def_op: def.map(|d| model.op(d).name().to_string()),
                    def_operand0: def.and_then(|d| model.op(d).operands.first().copied().flatten()),
                }
            })
            .collect();
        let result_users = info
            .results
            .iter()
            .flat_map(|&v| model.value(v).uses.iter().map(|u| model.op(u.op).name().to_string()))
            .collect();
        let scatter_reduction =
            name == "stablehlo.scatter" && scatter_has_common_reduction(model, id);
        OpDesc {
            name,
            operands,
            results,
            attrs,
            facts: OpFacts { operands: operand_facts, result_users, scatter_reduction },
        }
    }
}

/// The inherent attributes of ops already read, by op text without SSA names and
/// location: ops that differ only in those have the same attributes.
#[derive(Default)]
pub struct AttrCache {
    by_text: rustc_hash::FxHashMap<String, InherentAttrs>,
}

impl AttrCache {
    /// [`InherentAttrs::of_op`] (ops with regions or a custom call target in the
    /// syntax tree are read every time).
    pub fn of_op(&mut self, op: &sdy_syntax::tree::Op, text: &str) -> InherentAttrs {
        if !op.regions.is_empty() || op.full_name() == "stablehlo.custom_call" {
            return InherentAttrs::of_op(op, text);
        }
        let key = attrs_key(text);
        if let Some(a) = self.by_text.get(&key) {
            return a.clone();
        }
        let a = InherentAttrs::of_op(op, text);
        self.by_text.insert(key, a.clone());
        a
    }
}

/// `text` with each `%name` outside string literals cut to `%` (`%r:2` to `%:2`) and
/// without a trailing ` loc(...)`.
fn attrs_key(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut start, mut in_str) = (0usize, 0usize, false);
    // Where the last ` loc(` outside strings starts, in `out` and in `text`.
    let mut loc: Option<(usize, usize)> = None;
    while i < b.len() {
        let c = b[i];
        i += 1;
        if in_str {
            match c {
                b'\\' => i += 1,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'%' => {
                out.push_str(&text[start..i]);
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'.' | b'$' | b'-'))
                {
                    i += 1;
                }
                start = i;
            }
            b'l' if i >= 2 && b[i - 2].is_ascii_whitespace() && b[i..].starts_with(b"oc(") => {
                out.push_str(&text[start..i - 1]);
                start = i - 1;
                loc = Some((out.len(), i - 1));
            }
            _ => {}
        }
    }
    out.push_str(&text[start.min(text.len())..]);
    if let Some((at, t)) = loc {
        if closes_at_end(&text[t..]) {
            out.truncate(at);
        }
    }
    out
}

/// Whether `loc(...)` in `text` is balanced and followed by nothing but whitespace.
fn closes_at_end(text: &str) -> bool {
    let b = text.as_bytes();
    let (mut i, mut depth, mut in_str) = (0usize, 0i32, false);
    while i < b.len() {
        let c = b[i];
        i += 1;
        if in_str {
            match c {
                b'\\' => i += 1,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return text.get(i..).is_some_and(|r| r.trim().is_empty());
                }
            }
            _ => {}
        }
    }
    false
}

/// For each operand in MLIR's order, its index among the operands as written. They
/// differ for the custom form of `stablehlo.reduce`, written `(%in0 init: %i0), (%in1
/// init: %i1)` for the operands `(%in0, %in1, %i0, %i1)`; rules (and propagation's
/// tensor indices) use MLIR's order.
pub fn mlir_operand_order(op: &sdy_syntax::tree::Op) -> Vec<usize> {
    let n = op.operands.len();
    if !op.generic && op.full_name() == "stablehlo.reduce" && n.is_multiple_of(2) {
        (0..n / 2).map(|i| 2 * i).chain((0..n / 2).map(|i| 2 * i + 1)).collect()
    } else {
        (0..n).collect()
    }
}

/// The types of op `id`'s operands (in MLIR's order, see [`mlir_operand_order`]) and
/// results, as far as they are known.
#[allow(clippy::type_complexity)]
pub fn value_types(model: &Model, id: OpId) -> (Vec<Option<&Type>>, Vec<Option<&Type>>) {
    let info = model.op(id);
    let operands = mlir_operand_order(&info.node)
        .into_iter()
        .enumerate()
        .map(|(mlir, written)| operand_type(model, id, written, mlir))
        .collect();
    let results = (0..info.results.len()).map(|i| result_type(model, id, i)).collect();
    (operands, results)
}

/// The type of the operand written at index `written` (MLIR index `mlir`): its value's
/// type, else the one the signature gives (signatures list operands in MLIR's order).
fn operand_type(model: &Model, id: OpId, written: usize, mlir: usize) -> Option<&Type> {
    let info = model.op(id);
    info.operands
        .get(written)
        .copied()
        .flatten()
        .and_then(|v| value_type(model, v))
        .or_else(|| crate::model::written_operand_type(&info.node, mlir))
}

/// A value's type: the model's, else what the defining op's custom form says (see
/// [`result_type`]).
fn value_type(model: &Model, v: u32) -> Option<&Type> {
    let info = model.value(v);
    match (&info.ty, &info.def) {
        (Some(t), _) => Some(t),
        (None, ValueDef::Result { op, index }) => result_type(model, *op, *index as usize),
        (None, ValueDef::BlockArg { .. }) => None,
    }
}

/// The type of result `i`: the model's, or for custom forms the model does not map
/// the type they spell: `stablehlo.select %p, %a, %b : pred_type, result_type` (the
/// last type), `stablehlo.constant dense<0> : tensor<i32>` (the value's type).
fn result_type(model: &Model, id: OpId, i: usize) -> Option<&Type> {
    if let Some(t) = model.result_type(id, i) {
        return Some(t);
    }
    let node = &model.op(id).node;
    if node.num_results() != 1 {
        return None;
    }
    if let Some(AttrKind::Elements { ty: Some(t) }) =
        node.inherent_attr("value").and_then(|a| a.value.as_ref()).map(|v| &v.kind)
    {
        return Some(t);
    }
    match node.sig.form {
        sdy_syntax::tree::SigForm::List => node.sig.inputs.last(),
        _ => None,
    }
}

/// Shardy's `getCommonSupportedReductionOp` != null: the scatter body returns, for
/// each input `i`, `op(arg_i, arg_{i+N})` (either order) with the same `op` for all,
/// one of add, multiply, maximum, minimum (and/or on `i1`).
fn scatter_has_common_reduction(model: &Model, id: OpId) -> bool {
    let info = model.op(id);
    let n = info.results.len();
    let Some(region) = info.node.regions.first() else { return false };
    if region.blocks.len() != 1 || info.region_args.first().map_or(0, Vec::len) != 2 * n {
        return false;
    }
    let children: Vec<OpId> = (0..model.ops.len() as OpId)
        .filter(|&c| model.op(c).parent == Some(id) && model.op(c).region == 0)
        .collect();
    let Some(&ret) = children.last() else { return false };
    let ret = model.op(ret);
    if ret.name() != "stablehlo.return" || ret.operands.len() != n {
        return false;
    }
    let arg_index = |v: Option<u32>| -> Option<usize> {
        match model.value(v?).def {
            ValueDef::BlockArg { op, region: 0, block: 0, index } if op == id => {
                Some(index as usize)
            }
            _ => None,
        }
    };
    let mut common: Option<&str> = None;
    for (i, v) in ret.operands.iter().enumerate() {
        let Some(v) = *v else { return false };
        let ValueDef::Result { op: def, .. } = model.value(v).def else { return false };
        let d = model.op(def);
        if d.parent != Some(id) || d.operands.len() != 2 {
            return false;
        }
        let elem = TensorType::from_type(value_type(model, v));
        if elem.shape.is_none() {
            return false;
        }
        let logical = elem.elem == "i1" && matches!(d.name(), "stablehlo.and" | "stablehlo.or");
        let arithmetic = matches!(
            d.name(),
            "stablehlo.add" | "stablehlo.multiply" | "stablehlo.maximum" | "stablehlo.minimum"
        );
        if !logical && !arithmetic {
            return false;
        }
        match common {
            None => common = Some(d.name()),
            Some(c) if c != d.name() => return false,
            Some(_) => {}
        }
        let (l, r) = (arg_index(d.operands[0]), arg_index(d.operands[1]));
        let ok = (l == Some(i) && r == Some(i + n)) || (l == Some(i + n) && r == Some(i));
        if !ok {
            return false;
        }
    }
    true
}

/// An op the registry does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// `stablehlo.custom_call @target`
    CustomCall(String),
    /// Any other op, by name.
    Op(String),
}

impl Unknown {
    /// Shardy's warning (emitted once per process for each of the two kinds).
    pub fn message(&self) -> String {
        match self {
            Unknown::CustomCall(target) => {
                format!("custom call @{target} is unknown to SDY sharding rule registry")
            }
            Unknown::Op(name) => format!("op '{name}' is unknown to SDY sharding rule registry"),
        }
    }
}

/// The rule of an op, and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleLookup {
    /// The op's own `sdy.sharding_rule` attribute (it wins over the registry).
    Existing(OpShardingRule),
    /// Created by the registry.
    Created(OpShardingRule),
    /// The op has no rule (a propagation barrier).
    NoRule,
    /// The registry does not know the op: no rule, and Shardy warns.
    Unknown(Unknown),
}

impl RuleLookup {
    pub fn rule(&self) -> Option<&OpShardingRule> {
        match self {
            RuleLookup::Existing(r) | RuleLookup::Created(r) => Some(r),
            _ => None,
        }
    }
}

/// The registry's verdict on `desc` (its explicit rule, if any, is not looked at).
pub fn create_rule(desc: &OpDesc, opts: &RuleOptions) -> RuleLookup {
    match registry::create(desc, opts) {
        Registered::Rule(r) => RuleLookup::Created(r),
        Registered::NoRule => RuleLookup::NoRule,
        Registered::UnknownCustomCall(t) => RuleLookup::Unknown(Unknown::CustomCall(t)),
        Registered::UnknownOp(n) => RuleLookup::Unknown(Unknown::Op(n)),
    }
}

/// The explicit `sdy.sharding_rule` of op `id`: `None` without one, `Some(None)` when
/// it cannot be read here (an attribute alias `#rule`, factor indices out of range;
/// anything that is not a rule fails verification before a pass runs).
pub fn explicit_rule(model: &Model, id: OpId) -> Option<Option<OpShardingRule>> {
    let a = model.op(id).node.attr("sdy.sharding_rule")?;
    match a.value.as_ref().map(|v| &v.kind) {
        Some(AttrKind::Sdy(s)) => match &**s {
            SdyAttr::Rule(r) => Some(OpShardingRule::from_ast(r)),
            _ => Some(None),
        },
        _ => Some(None),
    }
}

/// The rule of op `id` (Shardy's `getOrCreateShardingRule` without attaching it).
pub fn rule_for(model: &Model, id: OpId, src: &str, opts: &RuleOptions) -> RuleLookup {
    match explicit_rule(model, id) {
        Some(Some(r)) => RuleLookup::Existing(r),
        Some(None) => RuleLookup::NoRule,
        None => memo::registry(model, id, src, opts).lookup(),
    }
}

#[cfg(test)]
mod tests {
    use super::attrs_key;

    #[test]
    fn attrs_key_ignores_ssa_names_and_location_only() {
        let a = r#"%1 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32> loc(#loc5)"#;
        let b = r#"%17 = stablehlo.broadcast_in_dim %3, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32> loc("f.py":3:1)"#;
        let c = r#"%17 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<4xf32>) -> tensor<4x2xf32>"#;
        assert_eq!(attrs_key(a), attrs_key(b));
        assert_ne!(attrs_key(a), attrs_key(c));
        // Text that only looks like an SSA name or a location inside a string stays.
        let d = r#"%0 = stablehlo.foo %1 {s = "%x loc(1)"}"#;
        let e = r#"%0 = stablehlo.foo %1 {s = "%y loc(1)"}"#;
        assert_ne!(attrs_key(d), attrs_key(e));
        // A `loc(` that does not end the op is kept.
        assert_ne!(attrs_key("%0 = x.y loc(a) {k = 1}"), attrs_key("%0 = x.y loc(a) {k = 2}"));
    }
}
