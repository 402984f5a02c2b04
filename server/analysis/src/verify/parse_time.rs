//! Rules MLIR checks while parsing, found on the model: attribute verifiers that run as
//! attributes are built (meshes M1–M6, propagation edges), static shapes of `dense`
//! literals, the type kinds of sdy ops' custom syntax, operand types against earlier
//! uses, and undeclared SSA names. They are parse errors: MLIR stops at the first.

use super::edges;
use super::generic::differ;
use super::messages as msg;
use super::values::{is_collective, is_shaped, type_string};
use super::Ctx;
use crate::diag::{Diagnostic, Note, Origin};
use crate::model::{written_operand_type, OpId, OpInfo};
use sdy_syntax::sdy::{MeshAst, MeshRefAst, SdyAttr};
use sdy_syntax::tree::{Attr, AttrKind, Custom, TypeKind};
use sdy_syntax::Span;

/// Every parse-time diagnostic of the module.
pub fn check(cx: &Ctx) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for u in &cx.model.undefined_uses {
        let mut d = Diagnostic::error(
            u.span,
            msg::UNDECLARED_VALUE,
            Origin::Parse { first_of_failure: true },
        );
        d.focus = u.span;
        out.push(d);
    }
    for id in 0..cx.model.ops.len() as OpId {
        let op = cx.model.op(id);
        if let Custom::Mesh { .. } = op.node.custom {
            mesh_op(cx, op, &mut out);
        }
        for_each_attr(op, |attr, custom| walk_attr(cx, op, attr, custom, &mut out));
        custom_type_kind(op, &mut out);
        operand_types(cx, id, &mut out);
    }
    out
}

/// A failure: its first error and the chained lines, each at its offset.
fn failure(lines: Vec<(u32, String)>, focus: Span, out: &mut Vec<Diagnostic>) {
    for (i, (at, m)) in lines.into_iter().enumerate() {
        let mut d =
            Diagnostic::error(Span::empty(at), m, Origin::Parse { first_of_failure: i == 0 });
        d.focus = focus;
        out.push(d);
    }
}

/// Calls `f` on each attribute of an op with whether it is written in the op's custom
/// syntax (errors then get the `custom op '<name>' ` prefix).
fn for_each_attr<'m>(op: &'m OpInfo, mut f: impl FnMut(&'m Attr, bool)) {
    let custom = !op.node.generic;
    op.node.inherent.iter().filter_map(|a| a.value.as_ref()).for_each(|a| f(a, custom));
    let values =
        |d: &'m sdy_syntax::tree::AttrDict| d.entries.iter().filter_map(|a| a.value.as_ref());
    op.node.attrs.iter().flat_map(values).for_each(|a| f(a, false));
    if let Custom::Func(f_) = &op.node.custom {
        let dicts = f_.args.iter().map(|a| &a.attrs).chain(f_.results.iter().map(|r| &r.attrs));
        let dicts = dicts.chain(std::iter::once(&f_.fn_attrs));
        dicts.flatten().flat_map(values).for_each(|a| f(a, false));
    }
}

/// The offset of the first token at or after `offset`.
fn next_token(src: &str, offset: u32) -> u32 {
    let rest = src.get(offset as usize..).unwrap_or("");
    offset + (rest.len() - rest.trim_start().len()) as u32
}

/// An attribute and everything inside it.
fn walk_attr(cx: &Ctx, op: &OpInfo, attr: &Attr, custom: bool, out: &mut Vec<Diagnostic>) {
    match &attr.kind {
        AttrKind::Array(items) => items.iter().for_each(|a| walk_attr(cx, op, a, custom, out)),
        AttrKind::Dict(d) => d
            .entries
            .iter()
            .filter_map(|a| a.value.as_ref())
            .for_each(|a| walk_attr(cx, op, a, custom, out)),
        AttrKind::Sdy(s) => match &**s {
            SdyAttr::Sharding(sh) => inline_mesh(cx, op, &sh.mesh, custom, out),
            // The custom `sdy.mesh` syntax is checked with its op.
            SdyAttr::Mesh(m) if !custom => standalone_mesh(cx, op, m, "", out),
            SdyAttr::PerValue(p) => {
                p.shardings.iter().for_each(|sh| inline_mesh(cx, op, &sh.mesh, custom, out))
            }
            SdyAttr::Opaque => {
                if let Some(e) = edges::parse(cx.src, attr, op.start) {
                    if let Some(m) = edges::verify_parsed(&e) {
                        failure(vec![(e.at, m)], attr.span.shift(op.start), out);
                    }
                }
            }
            _ => {}
        },
        AttrKind::Elements { ty: Some(ty) } => {
            let span = attr.span.shift(op.start);
            let dense = span.text(cx.src).starts_with("dense<");
            let dynamic = match &*ty.kind {
                TypeKind::Tensor { shape: None, .. } => true,
                TypeKind::Tensor { shape: Some(dims), .. } => {
                    dims.iter().any(|d| matches!(d, sdy_syntax::tree::Dim::Dynamic))
                }
                _ => false,
            };
            if dense && dynamic {
                failure(vec![(span.start, msg::ELEMENTS_STATIC_SHAPE.to_string())], span, out);
            }
        }
        _ => {}
    }
}

/// What is wrong with a mesh, M1 (an axis) or M2–M6 (the mesh).
enum MeshProblem {
    /// A bad axis size: the axis span (absolute).
    Axis(Span, String),
    Mesh(String),
}

/// M1–M6 on a mesh as written.
fn mesh_problem(m: &MeshAst, base: u32) -> Option<MeshProblem> {
    if let Some(a) = m.axes.iter().find(|a| a.size <= 0) {
        return Some(MeshProblem::Axis(a.span.shift(base), msg::axis_size_at_least_one(a.size)));
    }
    let total = m.axes.iter().fold(1i64, |acc, a| acc.saturating_mul(a.size));
    let mut ids: Vec<i64> =
        m.device_ids.as_ref().map_or_else(Vec::new, |d| d.ids.iter().map(|(v, _)| *v).collect());
    // Iota device ids are dropped while the attribute is built.
    if !m.axes.is_empty()
        && ids.len() as i64 == total
        && ids.iter().enumerate().all(|(i, v)| *v == i as i64)
    {
        ids.clear();
    }
    if let Some(id) = ids.iter().find(|&&id| id < 0) {
        return Some(MeshProblem::Mesh(msg::device_id_negative(*id)));
    }
    if m.axes.is_empty() {
        return (ids.len() > 1)
            .then(|| MeshProblem::Mesh(msg::AXES_EMPTY_MANY_DEVICE_IDS.to_string()));
    }
    for (i, a) in m.axes.iter().enumerate() {
        if m.axes[..i].iter().any(|b| b.name == a.name) {
            return Some(MeshProblem::Mesh(msg::duplicate_axis_name(&a.name)));
        }
    }
    if ids.is_empty() {
        return None;
    }
    if total != ids.len() as i64 {
        return Some(MeshProblem::Mesh(msg::device_count_mismatch(total, ids.len())));
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted.iter().enumerate().any(|(i, v)| *v != i as i64) {
        return Some(MeshProblem::Mesh(msg::device_ids_not_permutation(&sorted)));
    }
    None
}

/// `sdy.mesh @m = <...>`: its mesh is parsed by the op's custom syntax.
fn mesh_op(cx: &Ctx, op: &OpInfo, out: &mut Vec<Diagnostic>) {
    let Some(attr) = op.node.inherent_attr("mesh").and_then(|a| a.value.as_ref()) else { return };
    let AttrKind::Sdy(s) = &attr.kind else { return };
    if let SdyAttr::Mesh(m) = &**s {
        standalone_mesh(cx, op, m, &msg::custom_op_prefix("sdy.mesh"), out);
    }
}

/// A mesh parsed on its own (`sdy.mesh` syntax, or `#sdy.mesh<...>`): a bad axis adds
/// the axes chain line, a bad mesh is one line.
fn standalone_mesh(cx: &Ctx, op: &OpInfo, m: &MeshAst, prefix: &str, out: &mut Vec<Diagnostic>) {
    match mesh_problem(m, op.start) {
        Some(MeshProblem::Axis(span, m)) => {
            let after = next_token(cx.src, span.end);
            failure(
                vec![
                    (span.start, format!("{prefix}{m}")),
                    (after, format!("{prefix}{}", msg::FAILED_TO_PARSE_MESH_AXES)),
                ],
                span,
                out,
            );
        }
        Some(MeshProblem::Mesh(text)) => {
            let span = m.span.shift(op.start);
            failure(vec![(span.start, format!("{prefix}{text}"))], span, out);
        }
        None => {}
    }
}

/// An inline mesh (`mesh<...>`) in a sharding; `custom`: written in the op's custom
/// syntax (errors get the `custom op '<name>' ` prefix).
fn inline_mesh(cx: &Ctx, op: &OpInfo, mesh: &MeshRefAst, custom: bool, out: &mut Vec<Diagnostic>) {
    let MeshRefAst::Inline(m) = mesh else { return };
    let Some(problem) = mesh_problem(m, op.start) else { return };
    let prefix = if custom { msg::custom_op_prefix(op.name()) } else { String::new() };
    let attr_failed = format!("{prefix}{}", msg::FAILED_TO_PARSE_MESH_ATTR);
    match problem {
        MeshProblem::Axis(span, text) => {
            let after = next_token(cx.src, span.end);
            let lines = vec![
                (span.start, format!("{prefix}{text}")),
                (after, format!("{prefix}{}", msg::FAILED_TO_PARSE_MESH_AXES)),
                (after, attr_failed),
            ];
            failure(lines, span, out);
        }
        MeshProblem::Mesh(text) => {
            let span = m.span.shift(op.start);
            let after = next_token(cx.src, span.end);
            failure(vec![(span.start, format!("{prefix}{text}")), (after, attr_failed)], span, out);
        }
    }
}

/// The custom syntax of sdy ops parses their type as a ranked tensor or a shaped type.
fn custom_type_kind(op: &OpInfo, out: &mut Vec<Diagnostic>) {
    if op.node.generic {
        return;
    }
    let name = op.name();
    let ranked = matches!(name, "sdy.sharding_group" | "sdy.propagation_barrier");
    let shaped =
        matches!(name, "sdy.data_flow_edge" | "sdy.func_data_flow_edge") || is_collective(name);
    if !ranked && !shaped {
        return;
    }
    let Some(ty) = op.node.sig.inputs.first() else { return };
    let span = ty.span.shift(op.start);
    if ranked && !matches!(&*ty.kind, TypeKind::Tensor { shape: Some(_), .. }) && known_kind(ty) {
        let m = msg::invalid_type_kind_expected("builtin.tensor", &type_string(ty));
        let prefix = msg::custom_op_prefix(name);
        failure(vec![(span.start, format!("{prefix}{m}"))], span, out);
    } else if shaped && !is_shaped(ty) && known_kind(ty) {
        let prefix = msg::custom_op_prefix(name);
        failure(vec![(span.start, format!("{prefix}{}", msg::INVALID_TYPE_KIND))], span, out);
    }
}

/// Types whose kind we know for sure (not aliases).
fn known_kind(ty: &sdy_syntax::tree::Type) -> bool {
    !matches!(&*ty.kind, TypeKind::Alias(_))
}

/// Ops whose written types are the types of their operands.
fn types_operands(op: &OpInfo) -> bool {
    let name = op.name();
    op.node.generic
        || name.starts_with("sdy.")
        || matches!(name, "func.return" | "func.call" | "stablehlo.return")
}

/// An operand written with another type than the value's: MLIR's parser rejects the use.
fn operand_types(cx: &Ctx, id: OpId, out: &mut Vec<Diagnostic>) {
    let op = cx.model.op(id);
    if !types_operands(op) {
        return;
    }
    for (i, operand) in op.operands.iter().enumerate() {
        let Some(v) = operand else { continue };
        let value = cx.model.value(*v);
        let (Some(written), Some(def)) = (written_operand_type(&op.node, i), value.ty.as_ref())
        else {
            continue;
        };
        let use_ref = &op.node.operands[i];
        let use_span = use_ref.span.shift(op.start);
        if value.span.start >= use_span.start || !differ(written, def) {
            continue;
        }
        let name = match use_ref.index {
            Some(k) => format!("{}#{k}", use_ref.name),
            None => use_ref.name.to_string(),
        };
        let m = msg::value_type_mismatch(&name, &type_string(written), &type_string(def));
        let mut d = Diagnostic::error(
            Span::empty(use_span.start),
            m,
            Origin::Parse { first_of_failure: true },
        );
        d.focus = use_span;
        d.notes.push(Note {
            span: Span::empty(value.span.start),
            message: msg::PRIOR_USE_HERE.to_string(),
        });
        out.push(d);
    }
}
