//! MLIR's own checks that show up around sdy ops: `HasParent`, symbol redefinition,
//! `SameOperandsAndResultType`, isolation from above, result type inference, and the
//! function return types.

use super::messages as msg;
use super::values::{quoted_types, same_type, type_string};
use super::{Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::{OpId, ValueDef};
use sdy_syntax::tree::{AttrKind, Custom, Type, TypeKind};
use sdy_syntax::Span;
use std::collections::HashMap;

/// `sdy.mesh` lives directly in a module.
pub fn verify_parent_is_module(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    match cx.model.op(id).parent {
        Some(p) if cx.model.op(p).name() != "builtin.module" => {
            Err(Violation::of(C::Structure, msg::expects_parent("builtin.module"), Span::default()))
        }
        _ => Ok(()),
    }
}

/// The symbol a top-level op defines (meshes and functions).
fn symbol_of<'m>(cx: &Ctx<'m>, id: OpId) -> Option<(&'m str, Span)> {
    let op = cx.model.op(id);
    match &op.node.custom {
        Custom::Mesh { sym } => Some((&sym.text, sym.span.shift(op.start))),
        Custom::Func(f) => Some((&f.sym.text, f.sym.span.shift(op.start))),
        _ => None,
    }
}

/// Symbols defined twice in the module: at each redefinition, a note at the first.
pub fn symbol_redefinitions(cx: &Ctx) -> Vec<(OpId, Violation)> {
    // Known without a pass over the module's thousands of functions (per keystroke).
    if !cx.model.symbol_clash() {
        return Vec::new();
    }
    let mut first: HashMap<&str, OpId> = HashMap::new();
    let mut out = Vec::new();
    for &id in &cx.model.top {
        let Some((name, span)) = symbol_of(cx, id) else { continue };
        match first.get(name) {
            Some(&earlier) => {
                let note = Span::empty(cx.model.op(earlier).loc());
                out.push((
                    id,
                    Violation::of(C::Structure, msg::symbol_redefinition(name), span)
                        .with_note(note, msg::SEE_EXISTING_SYMBOL)
                        .plain(),
                ));
            }
            None => {
                first.insert(name, id);
            }
        }
    }
    out
}

/// Whether two types can be compared reliably (no aliases or opaque spellings inside).
fn comparable(ty: &Type) -> bool {
    match &*ty.kind {
        TypeKind::Tensor { elem, encoding, .. } => {
            encoding.is_none() && elem.bytes().all(|b| b.is_ascii_alphanumeric())
        }
        TypeKind::Token => true,
        TypeKind::Tuple(elems) => elems.iter().all(comparable),
        TypeKind::Alias(_) | TypeKind::Other(_) => false,
    }
}

/// Two types known to differ.
pub fn differ(a: &Type, b: &Type) -> bool {
    // Identical spellings share one interned kind.
    if std::sync::Arc::ptr_eq(&a.kind, &b.kind) {
        return false;
    }
    comparable(a) && comparable(b) && !same_type(a, b)
}

/// `SameOperandsAndResultType` of the generic form (the custom form writes one type).
pub fn verify_same_operand_and_result_type(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let op = cx.model.op(id);
    if !op.node.generic {
        return Ok(());
    }
    let sig = &op.node.sig;
    let Some(first) = sig.inputs.first().or(sig.outputs.first()) else { return Ok(()) };
    if sig.inputs.iter().chain(&sig.outputs).any(|t| differ(t, first)) {
        return Err(Violation::of(
            C::Structure,
            msg::SAME_OPERANDS_AND_RESULT_TYPE.to_string(),
            Span::default(),
        ));
    }
    Ok(())
}

/// `sdy.constant` (generic form): the result type is the value's type.
pub fn verify_constant_type(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let op = cx.model.op(id);
    let value_ty =
        match op.node.inherent_attr("value").and_then(|a| a.value.as_ref()).map(|v| &v.kind) {
            Some(AttrKind::Elements { ty: Some(ty) }) => ty,
            _ => return Ok(()),
        };
    match cx.model.result_type(id, 0) {
        Some(result) if differ(value_ty, result) => {
            Err(inferred_types_violation(&[value_ty], &[result]))
        }
        _ => Ok(()),
    }
}

/// The two errors MLIR emits when inferred result types differ from the written ones.
pub fn inferred_types_violation(inferred: &[&Type], actual: &[&Type]) -> Violation {
    let mut v = Violation::of(
        C::Structure,
        msg::inferred_types_incompatible(
            &quoted_types(inferred.iter().copied()),
            &quoted_types(actual.iter().copied()),
        ),
        Span::default(),
    );
    v.follow_ups.push(msg::FAILED_TO_INFER_TYPES.to_string());
    v
}

/// `func.return`: as many operands as the function has results, of the same types.
pub fn verify_func_return(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let Some(func) = cx.model.op(id).parent else { return Ok(()) };
    let f_op = cx.model.op(func);
    let Custom::Func(f) = &f_op.node.custom else { return Ok(()) };
    let ret = cx.model.op(id);
    if ret.operands.len() != f.results.len() {
        let m = msg::return_count_mismatch(ret.operands.len(), &f.sym.text, f.results.len());
        return Err(Violation::of(C::Structure, m, Span::default()));
    }
    for (i, r) in f.results.iter().enumerate() {
        if let Some(t) = cx.model.operand_type(id, i) {
            if differ(t, &r.ty) {
                let m =
                    msg::return_type_mismatch(i, &type_string(t), &type_string(&r.ty), &f.sym.text);
                return Err(Violation::of(
                    C::Structure,
                    m,
                    ret.node.operands[i].span.shift(ret.start),
                )
                .plain());
            }
        }
    }
    Ok(())
}

/// `IsolatedFromAbove`: no op inside uses a value defined outside (nested isolated
/// ops check themselves). Reported at the using op, with a note at the isolated op.
pub fn verify_isolated_from_above(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let inside = |v: u32| {
        let owner = match cx.model.value(v).def {
            ValueDef::Result { op, .. } => match cx.model.op(op).parent {
                Some(p) => p,
                None => return false,
            },
            ValueDef::BlockArg { op, .. } => op,
        };
        owner == id || cx.model.ancestors(owner).any(|a| a == id)
    };
    let mut pending: Vec<Vec<OpId>> = cx.regions(id).into_iter().rev().collect();
    while let Some(region) = pending.pop() {
        for &op in &region {
            let info = cx.model.op(op);
            for (i, operand) in info.operands.iter().enumerate() {
                if let Some(v) = operand {
                    if !inside(*v) {
                        let focus = info.node.operands[i].span.shift(info.start);
                        let mut v = Violation::of(
                            C::Structure,
                            msg::USING_VALUE_OUTSIDE_REGION.to_string(),
                            focus,
                        )
                        .with_note(Span::empty(cx.model.op(id).loc()), msg::REQUIRED_BY_ISOLATION);
                        v.at_op = Some(op);
                        return Err(v);
                    }
                }
            }
            if !is_isolated(info.name()) {
                pending.extend(cx.regions(op));
            }
        }
    }
    Ok(())
}

/// Dominance in the regions of isolated op `root` (MLIR's check after the op verified):
/// an operand defined by an op must come from an earlier op of an enclosing region, not
/// from a later op (a forward reference) nor from the op itself or an op enclosing the
/// use. Walked like MLIR: a region's ops in order, nested regions after (last pushed
/// first), isolated ops left to their own check. The first failure: the using op and
/// the violation.
pub fn dominance_failure(cx: &Ctx, root: OpId) -> Option<(OpId, Violation)> {
    let model = cx.model;
    let mut pending = vec![root];
    while let Some(op) = pending.pop() {
        // The children come region by region, each in order: MLIR's walk.
        for &user in cx.children(op) {
            if let Some(violation) = dominance_violation(cx, user) {
                return Some((user, violation));
            }
            let info = model.op(user);
            if !info.node.regions.is_empty() && !is_isolated(info.name()) {
                pending.push(user);
            }
        }
    }
    None
}

/// The first operand of `user` whose defining op does not dominate it.
pub fn dominance_violation(cx: &Ctx, user: OpId) -> Option<Violation> {
    let model = cx.model;
    let info = model.op(user);
    for (i, operand) in info.operands.iter().enumerate() {
        let Some(v) = *operand else { continue };
        let ValueDef::Result { op: def, .. } = model.value(v).def else { continue };
        if let Some(place) = does_not_dominate(cx, def, user) {
            let focus = info.node.operands[i].span.shift(info.start);
            return Some(
                Violation::of(C::Structure, msg::operand_does_not_dominate(i), focus)
                    .with_note(Span::empty(model.op(def).loc()), msg::operand_defined_here(place))
                    .plain(),
            );
        }
    }
    None
}

/// Whether `op` uses a value defined outside the nearest isolated op around it (what
/// [`verify_isolated_from_above`] of that op looks for).
pub fn uses_value_from_outside(cx: &Ctx, op: OpId) -> bool {
    let model = cx.model;
    let Some(root) = model.ancestors(op).find(|&a| is_isolated(model.op(a).name())) else {
        return false;
    };
    model.op(op).operands.iter().flatten().any(|&v| {
        let owner = match model.value(v).def {
            ValueDef::Result { op, .. } => match model.op(op).parent {
                Some(p) => p,
                None => return true,
            },
            ValueDef::BlockArg { op, .. } => op,
        };
        owner != root && !model.ancestors(owner).any(|a| a == root)
    })
}

/// Why the result of `def` does not dominate its use by `user` (MLIR's note wording), or
/// `None` when it does. Regions are taken as single blocks.
fn does_not_dominate(cx: &Ctx, def: OpId, user: OpId) -> Option<&'static str> {
    let model = cx.model;
    let d = model.op(def);
    // The module body is a graph region: no dominance.
    let parent = d.parent?;
    // The op of the use, or its ancestor, in the region of `def`.
    let mut at = user;
    loop {
        let info = model.op(at);
        if info.parent == Some(parent) && info.region == d.region {
            break;
        }
        match info.parent {
            Some(p) => at = p,
            // The region of `def` does not enclose the use (a forward reference into a
            // region).
            None if model.ancestors(def).any(|a| a == user) => return Some("op in a child region"),
            None => return Some("op is neither in a parent nor in a child region"),
        }
    }
    if at == def {
        // Used by itself or inside its own regions.
        return Some(if user == def { "op in the same block" } else { "op in a parent region" });
    }
    if d.start < model.op(at).start {
        return None;
    }
    Some(if at == user { "op in the same block" } else { "op in a parent region" })
}

/// Ops whose regions are isolated from above.
pub fn is_isolated(name: &str) -> bool {
    matches!(name, "func.func" | "sdy.manual_computation" | "sdy.named_computation")
}
