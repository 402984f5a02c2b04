//! Beyond Shardy: hints and facts that are never errors (issue 3 §4) — padded
//! dimensions, meshes with another device count than the others, manual axes Shardy
//! will reorder, meshes nobody uses.

use super::attrs::{self, inherent_per_value, inherent_sharding, manual_axis_refs};
use super::edges::common_mesh;
use super::messages as msg;
use super::sharding::{resolve_mesh, verify_sharding, TypeArg};
use super::values::is_collective;
use super::Ctx;
use crate::diag::{Diagnostic, DiagnosticCode, Origin, Severity};
use crate::model::sharding::SpannedSharding;
use crate::model::OpId;
use crate::sharding::axis::MeshAxes;
use sdy_syntax::tree::{Custom, Dim, Type};
use sdy_syntax::Span;

/// Whether `@name` of mesh `m` appears in `text` other than where `m` defines it.
pub fn is_referenced(text: &str, m: &crate::model::MeshSymbol) -> bool {
    referenced(text, &m.name, m.name_span)
}

/// The hints about one op's shardings.
pub fn check_op(cx: &Ctx, id: OpId, out: &mut Vec<Diagnostic>) {
    for (s, ty) in shardings_with_types(cx, id) {
        padded_dimensions(cx, id, &s, ty, out);
    }
    if cx.model.op(id).name() == "sdy.manual_computation" {
        manual_axes_order(cx, id, out);
    }
}

fn hint(span: Span, severity: Severity, code: DiagnosticCode, message: String) -> Diagnostic {
    let mut d = Diagnostic::error(span, message, Origin::Lint).with_code(code);
    d.severity = severity;
    d
}

/// Every sharding an op carries, with the type of the value it shards.
fn shardings_with_types<'m>(cx: &Ctx<'m>, id: OpId) -> Vec<(SpannedSharding, Option<&'m Type>)> {
    let m = cx.model;
    let op = m.op(id);
    let results = |s: Vec<SpannedSharding>| -> Vec<(SpannedSharding, Option<&'m Type>)> {
        s.into_iter().enumerate().map(|(i, s)| (s, m.result_type(id, i))).collect()
    };
    let operands = |s: Vec<SpannedSharding>| -> Vec<(SpannedSharding, Option<&'m Type>)> {
        s.into_iter().enumerate().map(|(i, s)| (s, m.operand_type(id, i))).collect()
    };
    let mut out = attrs::result_shardings(m, id).map(results).unwrap_or_default();
    match op.name() {
        "sdy.sharding_constraint" | "sdy.reshard" | "sdy.data_flow_edge" => {
            out.extend(inherent_sharding(m, id, "sharding").map(|s| (s, m.result_type(id, 0))));
        }
        n if is_collective(n) => {
            out.extend(inherent_sharding(m, id, "out_sharding").map(|s| (s, m.result_type(id, 0))))
        }
        "sdy.manual_computation" | "sdy.named_computation" => {
            out.extend(inherent_per_value(m, id, "in_shardings").map(operands).unwrap_or_default());
            out.extend(inherent_per_value(m, id, "out_shardings").map(results).unwrap_or_default());
        }
        "func.func" => {
            if let Custom::Func(f) = &op.node.custom {
                for (i, a) in f.args.iter().enumerate() {
                    out.extend(attrs::func_arg_sharding(m, id, i).map(|s| (s, Some(&a.ty))));
                }
                for r in &f.results {
                    let attr = r.attrs.as_ref().and_then(|d| d.get("sdy.sharding"));
                    if let Some(sdy_syntax::sdy::SdyAttr::Sharding(s)) =
                        attrs::sdy(attr.and_then(|a| a.value.as_ref()))
                    {
                        out.push((SpannedSharding::from_ast(s, op.start), Some(&r.ty)));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// A dimension its axes do not divide: Shardy pads it.
fn padded_dimensions(
    cx: &Ctx,
    id: OpId,
    s: &SpannedSharding,
    ty: Option<&Type>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(ty) = ty else { return };
    let Some(shape) = ty.shape() else { return };
    let Some(mesh) = resolve_mesh(cx.model, s) else { return };
    let mut hints = Vec::new();
    for (d, (size, dim)) in shape.iter().zip(&s.dims).enumerate() {
        let Dim::Static(size) = *size else { continue };
        // Checked: axis sizes multiply past i64 in hostile (or mistaken) meshes.
        let shards = dim.axes.iter().try_fold(1i64, |acc, a| {
            acc.checked_mul(
                a.sub.map_or_else(|| mesh.axis(&a.name).map_or(1, |m| m.1), |(_, sub)| sub),
            )
        });
        if shards.is_none_or(|shards| shards > 1 && size % shards != 0) {
            let padded = shards.and_then(|s| size.checked_add(s - 1).map(|x| x / s * s));
            let m = msg::padded_dimension(d, size, shards, padded);
            hints.push(hint(s.dim_spans[d], Severity::Hint, DiagnosticCode::PaddedDimension, m));
        }
    }
    // Only for shardings that are otherwise valid.
    if !hints.is_empty() && verify_sharding(cx.model, s, TypeArg::Of(ty), id).is_ok() {
        out.extend(hints);
    }
}

/// Manual axes written out of mesh order (Shardy sorts them silently).
fn manual_axes_order(cx: &Ctx, id: OpId, out: &mut Vec<Diagnostic>) {
    let Some(axes) = manual_axis_refs(cx.model.op(id)) else { return };
    let shardings: Vec<SpannedSharding> = ["in_shardings", "out_shardings"]
        .iter()
        .flat_map(|k| inherent_per_value(cx.model, id, k).unwrap_or_default())
        .collect();
    let Some(mesh) = common_mesh(cx, &shardings) else { return };
    let Some(indices) =
        axes.iter().map(|a| mesh.axis_position(&a.name)).collect::<Option<Vec<usize>>>()
    else {
        return;
    };
    if indices.windows(2).all(|w| w[0] <= w[1]) {
        return;
    }
    let mut sorted: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
    sorted.sort_by_key(|n| mesh.axis_position(n));
    let list = sorted.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
    let span = axes[0].span.cover(axes[axes.len() - 1].span);
    out.push(hint(
        span,
        Severity::Hint,
        DiagnosticCode::UnsortedManualAxes,
        msg::manual_axes_unsorted(&list),
    ));
}

/// Meshes (neither empty nor maximal) whose device count differs from the first one's.
pub fn mesh_device_counts(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let first_of_name =
        |m: &&crate::model::MeshSymbol| cx.model.mesh(&m.name).is_some_and(|f| f.op == m.op);
    let sized: Vec<_> = cx
        .model
        .meshes
        .iter()
        .filter(first_of_name)
        .filter_map(|m| {
            m.mesh
                .as_ref()
                .filter(|mesh| !mesh.axes.is_empty())
                .map(|mesh| (m, mesh.device_count()))
        })
        .collect();
    let Some(&(first, count)) = sized.first() else { return };
    for &(m, c) in &sized[1..] {
        if c != count {
            out.push(hint(
                m.name_span,
                Severity::Information,
                DiagnosticCode::MeshDeviceCount,
                msg::mesh_device_count_differs(&m.name, c, &first.name, count),
            ));
        }
    }
}

/// Whether `@name` appears in `text` outside `except` (a symbol reference).
fn referenced(text: &str, name: &str, except: Span) -> bool {
    // Stops at the first reference: a used mesh is named all over a big file.
    references_iter(text, &format!("@{name}")).any(|at| !except.contains(at as u32))
}

/// Where `@name` appears in `text` as a whole symbol (not the start of a longer one).
pub fn symbol_references(text: &str, name: &str) -> Vec<usize> {
    references_iter(text, &format!("@{name}")).collect()
}

fn references_iter<'t>(text: &'t str, needle: &'t str) -> impl Iterator<Item = usize> + 't {
    let bytes = text.as_bytes();
    text.match_indices(needle)
        .map(|(at, _)| at)
        .filter(move |&at| ends_symbol(bytes.get(at + needle.len()).copied()))
}

/// Whether the byte after `@name` (if any) ends the symbol.
pub fn ends_symbol(next: Option<u8>) -> bool {
    next.is_none_or(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b'-')))
}

/// Meshes no sharding refers to (`is_referenced` tells, for a mesh).
pub fn unused_meshes(
    cx: &Ctx,
    mut is_referenced: impl FnMut(&crate::model::MeshSymbol) -> bool,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for m in &cx.model.meshes {
        if !is_referenced(m) {
            out.push(hint(
                m.name_span,
                Severity::Hint,
                DiagnosticCode::UnusedMesh,
                msg::unused_mesh(&m.name),
            ));
        }
    }
    out
}
