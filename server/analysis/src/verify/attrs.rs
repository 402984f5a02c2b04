//! Reading sdy attributes off ops, and the attribute hooks MLIR runs on every op:
//! the discardable `sdy.*` attributes in name order (`sdy.sharding`: P1–P4), and the
//! shardings of function arguments and results (F1–F2).

use super::messages as msg;
use super::sharding::{resolve_mesh, verify_sharding, TypeArg};
use super::{edges, rule, Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{AxisRef, Spanned, SpannedSharding};
use crate::model::{Model, OpId, OpInfo};
use sdy_syntax::sdy::{Reduction, SdyAttr};
use sdy_syntax::tree::{Attr, AttrDict, AttrKind, Custom, NamedAttr, Type};

/// The sdy attribute behind an attribute value, if it is one.
pub fn sdy(attr: Option<&Attr>) -> Option<&SdyAttr> {
    match &attr?.kind {
        AttrKind::Sdy(s) => Some(s),
        _ => None,
    }
}

/// An attribute value of an op starting at `base`, with the absolute start its spans
/// are relative to: an sdy attribute alias (`#s`) is looked through to its definition.
/// `None` for an alias of anything else.
pub fn resolved<'m>(
    model: &'m Model,
    attr: Option<&'m Attr>,
    base: u32,
) -> Option<(&'m Attr, u32)> {
    let attr = attr?;
    match &attr.kind {
        AttrKind::AliasRef(name) => model.sdy_alias(name).map(|(start, a)| (a, start)),
        _ => Some((attr, base)),
    }
}

/// The sdy attribute behind a named attribute of an op, with the start of its spans.
fn named_sdy<'m>(model: &'m Model, attr: &'m NamedAttr, base: u32) -> Option<(&'m SdyAttr, u32)> {
    let (a, base) = resolved(model, attr.value.as_ref(), base)?;
    sdy(Some(a)).map(|s| (s, base))
}

fn inherent_sdy<'m>(model: &'m Model, op: OpId, key: &str) -> Option<(&'m SdyAttr, u32)> {
    let info = model.op(op);
    named_sdy(model, info.node.inherent_attr(key)?, info.start)
}

/// An inherent `#sdy.sharding` (`sharding`, `out_sharding`).
pub fn inherent_sharding(model: &Model, op: OpId, key: &str) -> Option<SpannedSharding> {
    match inherent_sdy(model, op, key)? {
        (SdyAttr::Sharding(s), base) => Some(SpannedSharding::from_ast(s, base)),
        _ => None,
    }
}

/// An inherent per-value sharding list (`in_shardings`, `out_shardings`).
pub fn inherent_per_value(model: &Model, op: OpId, key: &str) -> Option<Vec<SpannedSharding>> {
    match inherent_sdy(model, op, key)? {
        (SdyAttr::PerValue(p), base) => Some(SpannedSharding::per_value(p, base)),
        _ => None,
    }
}

/// The op's `sdy.sharding` result shardings, when it is a per-value attribute.
pub fn result_shardings(model: &Model, op: OpId) -> Option<Vec<SpannedSharding>> {
    let info = model.op(op);
    match named_sdy(model, info.node.attr("sdy.sharding")?, info.start)? {
        (SdyAttr::PerValue(p), base) => Some(SpannedSharding::per_value(p, base)),
        _ => None,
    }
}

/// An argument or result of a function: its type (when known) and attributes.
pub struct FuncValue<'a> {
    pub ty: Option<&'a Type>,
    pub attrs: Option<&'a AttrDict>,
}

/// A function's arguments and results, from its custom form or, written in the generic
/// form, from its entry block and `arg_attrs`/`res_attrs` properties (result types are
/// then unknown: they are only in the function type).
pub fn func_signature(op: &OpInfo) -> Option<(Vec<FuncValue<'_>>, Vec<FuncValue<'_>>)> {
    if let Custom::Func(f) = &op.node.custom {
        let args = f.args.iter().map(|a| FuncValue { ty: Some(&a.ty), attrs: a.attrs.as_ref() });
        let results =
            f.results.iter().map(|r| FuncValue { ty: Some(&r.ty), attrs: r.attrs.as_ref() });
        return Some((args.collect(), results.collect()));
    }
    if op.name() != "func.func" {
        return None;
    }
    let args = (0..generic_entry_args(op).len()).filter_map(|i| func_arg(op, i)).collect();
    let results = generic_attr_dicts(op, "res_attrs")
        .map(|items| items.iter().map(|a| FuncValue { ty: None, attrs: as_dict(a) }).collect())
        .unwrap_or_default();
    Some((args, results))
}

/// Argument `index` of a function ([`func_signature`]'s), without building the others:
/// functions of real exports have thousands of arguments, each checked on its own.
pub fn func_arg(op: &OpInfo, index: usize) -> Option<FuncValue<'_>> {
    if let Custom::Func(f) = &op.node.custom {
        let a = f.args.get(index)?;
        return Some(FuncValue { ty: Some(&a.ty), attrs: a.attrs.as_ref() });
    }
    if op.name() != "func.func" {
        return None;
    }
    let arg = generic_entry_args(op).get(index)?;
    let attrs = generic_attr_dicts(op, "arg_attrs").and_then(|items| as_dict(items.get(index)?));
    Some(FuncValue { ty: arg.ty.as_ref(), attrs })
}

/// The entry block arguments of a generic `func.func`.
fn generic_entry_args(op: &OpInfo) -> &[sdy_syntax::tree::BlockArg] {
    op.node.regions.first().and_then(|r| r.blocks.first()).map_or(&[], |b| &b.args[..])
}

/// The items of a generic `func.func`'s `arg_attrs`/`res_attrs` array.
fn generic_attr_dicts<'a>(op: &'a OpInfo, key: &str) -> Option<&'a [Attr]> {
    match op.node.inherent_attr(key).and_then(|a| a.value.as_ref()).map(|v| &v.kind) {
        Some(AttrKind::Array(items)) => Some(items),
        _ => None,
    }
}

fn as_dict(a: &Attr) -> Option<&AttrDict> {
    match &a.kind {
        AttrKind::Dict(d) => Some(d),
        _ => None,
    }
}

/// The `sdy.sharding` of argument `index` of a function, when it is a tensor sharding.
pub fn func_arg_sharding(model: &Model, op: OpId, index: usize) -> Option<SpannedSharding> {
    let info = model.op(op);
    let attr = func_arg(info, index)?.attrs?.get("sdy.sharding")?;
    match named_sdy(model, attr, info.start)? {
        (SdyAttr::Sharding(s), base) => Some(SpannedSharding::from_ast(s, base)),
        _ => None,
    }
}

/// The manual axes of a `sdy.manual_computation`, with their positions; `None` when
/// written in a form we do not read (rules depending on them are then skipped).
pub fn manual_axis_refs(op: &OpInfo) -> Option<Vec<Spanned<AxisRef>>> {
    let Some(attr) = op.node.inherent_attr("manual_axes") else { return Some(Vec::new()) };
    match sdy(attr.value.as_ref()) {
        Some(SdyAttr::ManualAxes(axes)) => Some(Spanned::list(axes, op.start)),
        _ => None,
    }
}

/// The manual axes of a `sdy.manual_computation` (`None`: unreadable).
pub fn manual_axes(op: &OpInfo) -> Option<Vec<String>> {
    manual_axis_refs(op).map(|axes| axes.iter().map(|a| a.name.to_string()).collect())
}

/// An attribute alias (`#name`): its value is elsewhere.
pub fn is_alias(attr: &NamedAttr) -> bool {
    matches!(attr.value.as_ref().map(|v| &v.kind), Some(AttrKind::AliasRef(_)))
}

/// The name an alias attribute refers to (without `#`; empty for other attributes).
fn alias_name(attr: &NamedAttr) -> &str {
    match attr.value.as_ref().map(|v| &v.kind) {
        Some(AttrKind::AliasRef(name)) => name,
        _ => "",
    }
}

/// An inherent axis-ref list (`reduction_axes`, `axes` of replicated_to_unreduced).
pub fn axis_list(model: &Model, op: OpId, key: &str) -> Option<Vec<Spanned<AxisRef>>> {
    match inherent_sdy(model, op, key)? {
        (SdyAttr::AxisList(l), base) => Some(Spanned::list(l, base)),
        _ => None,
    }
}

/// An inherent list of per-dimension axis lists (`gathering_axes`, ...).
pub fn axis_lists_per_dim(
    model: &Model,
    op: OpId,
    key: &str,
) -> Option<Vec<Vec<Spanned<AxisRef>>>> {
    match inherent_sdy(model, op, key)? {
        (SdyAttr::AxisListPerDim(l), base) => {
            Some(l.iter().map(|d| Spanned::list(&d.axes, base)).collect())
        }
        _ => None,
    }
}

/// The reduction of `sdy.all_reduce` / `sdy.reduce_scatter` (`sum` unless written).
pub fn reduction_op(op: &OpInfo) -> Reduction {
    match op.node.inherent_attr("reduction_op").and_then(|a| a.value.as_ref()).map(|v| &v.kind) {
        Some(AttrKind::Keyword(k)) if k == "max" => Reduction::Max,
        Some(AttrKind::Keyword(k)) if k == "min" => Reduction::Min,
        _ => Reduction::Sum,
    }
}

/// The op's discardable attributes in MLIR's (name-sorted) dictionary order.
fn discardable(op: &OpInfo) -> Vec<&NamedAttr> {
    let mut attrs: Vec<&NamedAttr> = op.node.attrs.iter().flat_map(|d| &d.entries).collect();
    if let Custom::Func(f) = &op.node.custom {
        attrs.extend(f.fn_attrs.iter().flat_map(|d| &d.entries));
    }
    attrs.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    attrs
}

/// The sdy dialect's hook on each discardable `sdy.*` attribute, in dictionary order.
pub fn verify_discardable(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let op = cx.model.op(id);
    // An alias is looked through for `sdy.sharding`; the other attributes' rules skip it.
    let skipped = |a: &NamedAttr| is_alias(a) && &*a.name != "sdy.sharding";
    for attr in discardable(op).into_iter().filter(|a| !skipped(a)) {
        match &*attr.name {
            "sdy.sharding" => op_sharding(cx, id, attr)?,
            "sdy.sharding_rule" => rule::verify(cx, id, attr)?,
            "sdy.propagation_edges" => edges::verify_op_attr(cx, id, attr)?,
            "sdy.result_propagation_edges" | "sdy.block_arg_propagation_edges" => {
                edges::verify_array_attr(cx, id, attr)?
            }
            _ => {}
        }
    }
    Ok(())
}

/// Verifies shardings against their values' types (§4): the count, then each sharding
/// with the value-indexed prefix `<kind> - ` / `<kind> <i> - `.
pub fn verify_per_value(
    cx: &Ctx,
    shardings: &[SpannedSharding],
    types: &[TypeArg],
    owner: OpId,
    kind: &str,
) -> Result<(), Violation> {
    // A zero-value op may carry one sharding without dimensions, or a maximal one.
    if types.is_empty() && shardings.len() == 1 {
        let s = &shardings[0];
        let maximal = resolve_mesh(cx.model, s).is_some_and(|m| m.is_maximal());
        if maximal || s.dims.iter().all(|d| d.axes.is_empty()) {
            return verify_sharding(cx.model, s, TypeArg::Absent, owner)
                .map_err(|v| v.prefixed(&msg::value_prefix(kind, 0, 0)));
        }
    }
    if shardings.len() != types.len() {
        let span = shardings.last().map_or(cx.model.op(owner).name_span(), |s| s.span);
        return Err(Violation::of(
            C::ShardingPerValue,
            msg::shardings_count_mismatch(kind, shardings.len(), types.len()),
            span,
        ));
    }
    for (i, (s, ty)) in shardings.iter().zip(types).enumerate() {
        verify_sharding(cx.model, s, *ty, owner)
            .map_err(|v| v.prefixed(&msg::value_prefix(kind, i, types.len())))?;
    }
    Ok(())
}

/// The type of each result of `op` (unknown when not written).
pub fn result_types<'m>(model: &'m Model, op: OpId) -> Vec<TypeArg<'m>> {
    (0..model.op(op).results.len()).map(|i| TypeArg::from(model.result_type(op, i))).collect()
}

/// The type of each operand of `op` (unknown when not written).
pub fn operand_types<'m>(model: &'m Model, op: OpId) -> Vec<TypeArg<'m>> {
    (0..model.op(op).operands.len()).map(|i| TypeArg::from(model.operand_type(op, i))).collect()
}

/// P1–P4: the op-level `sdy.sharding` (one sharding per result).
fn op_sharding(cx: &Ctx, id: OpId, attr: &NamedAttr) -> Result<(), Violation> {
    let op = cx.model.op(id);
    if is_alias(attr) && cx.model.sdy_alias(alias_name(attr)).is_none() {
        return Ok(()); // an alias of something else: not ours to judge
    }
    let per_value = match named_sdy(cx.model, attr, op.start) {
        Some((SdyAttr::PerValue(p), base)) => SpannedSharding::per_value(p, base),
        _ => {
            return Err(Violation::of(
                C::ShardingPerValue,
                msg::EXPECTED_PER_VALUE.to_string(),
                attr.span.shift(op.start),
            ))
        }
    };
    verify_per_value(cx, &per_value, &result_types(cx.model, id), id, "result")
}

/// F1–F2: `sdy.sharding` on function arguments and results (always indexed prefixes).
pub fn verify_func_attrs(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let op = cx.model.op(id);
    let Some((args, results)) = func_signature(op) else { return Ok(()) };
    let args = args.iter().enumerate().map(|(i, a)| ("arg", i, a.ty, a.attrs));
    let results = results.iter().enumerate().map(|(i, r)| ("result", i, r.ty, r.attrs));
    for (kind, i, ty, attrs) in args.chain(results) {
        let Some(attr) = attrs.and_then(|d| d.get("sdy.sharding")) else { continue };
        if is_alias(attr) && cx.model.sdy_alias(alias_name(attr)).is_none() {
            continue; // an alias of something else: not ours to judge
        }
        let prefix = msg::indexed_prefix(kind, i);
        let s = match named_sdy(cx.model, attr, op.start) {
            Some((SdyAttr::Sharding(s), base)) => SpannedSharding::from_ast(s, base),
            _ => {
                let span = attr.span.shift(op.start);
                return Err(Violation::of(
                    C::FuncSharding,
                    msg::EXPECTED_TENSOR_SHARDING.to_string(),
                    span,
                )
                .prefixed(&prefix));
            }
        };
        verify_sharding(cx.model, &s, ty.into(), id).map_err(|v| v.prefixed(&prefix))?;
    }
    Ok(())
}

impl<'a> From<Option<&'a Type>> for TypeArg<'a> {
    fn from(t: Option<&'a Type>) -> TypeArg<'a> {
        t.map_or(TypeArg::Unknown, TypeArg::Of)
    }
}
