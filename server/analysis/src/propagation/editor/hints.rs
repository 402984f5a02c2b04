//! Inlay hints, as plain data: a label at a chunk-relative offset.
//!
//! * [`HintKind::Sharding`]: after a value without a written sharding (an op result's
//!   name, a function argument's or result's type), the sharding propagation gave it;
//! * [`HintKind::Extension`]: after a written sharding that propagation changed
//!   (an open dimension extended, an export pass closing or narrowing it), the result;
//! * [`HintKind::Shape`]: after a sharded value's type, its per-device shape;
//! * [`HintKind::Communication`] and [`HintKind::Memory`]: at the end of an op's line,
//!   the collectives the export inserts for it and its results' bytes per device
//!   (made by [`crate::cost::hints`]).
//!
//! Labels are the sharding without its mesh (`[{"x"}, {?}]`; `@m [...]` when the chunk
//! has more than one mesh), `#i ` in front for one result of several, and `a | b` when
//! copies of the value (a function cloned per call site) differ.

use super::reshards::{compact, local_shape, tensor_shape};
use super::{ChunkPropagation, Site, ValueResult};
use crate::explain;
use crate::model::{Model, OpId, ValueDef, ValueId};
use crate::sharding::{Mesh, MeshRef, TensorSharding};
use rustc_hash::FxHashMap;
use sdy_syntax::tree::{Custom, Dim};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HintKind {
    Sharding,
    Extension,
    Shape,
    Communication,
    Memory,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    /// Chunk-relative offset the hint is shown at.
    pub offset: u32,
    pub kind: HintKind,
    pub label: String,
    /// The value it is about, for the explanation.
    pub site: Option<Site>,
    /// The value is an op result sharded like one of the op's operands: the compact
    /// view leaves its hints out (on a JAX export nearly every line has one), so what
    /// remains marks where a sharding changes.
    pub follows_operand: bool,
    /// A communication hint: the source op whose collectives it lists (the server
    /// relabels it with the current bandwidth settings).
    pub collectives_of: Option<u32>,
}

/// The hints of a propagated chunk, sorted by offset. `meshes` are the module's meshes
/// by name (for shard sizes).
pub fn propagated(
    model: &Model,
    p: &ChunkPropagation,
    meshes: &HashMap<String, Mesh>,
) -> Vec<Hint> {
    let mut out = Vec::new();
    let by_start: FxHashMap<u32, OpId> =
        model.ops.iter().enumerate().map(|(i, o)| (o.start, i as OpId)).collect();
    let many_meshes = meshes.len() > 1;
    let finals: FxHashMap<ValueId, &TensorSharding> =
        p.values.iter().filter_map(|v| Some((v.value?, v.single()?))).collect();
    for v in &p.values {
        let shardings: Vec<&TensorSharding> =
            v.inferred.iter().filter_map(|x| x.sharding.as_ref()).collect();
        if shardings.is_empty() {
            continue;
        }
        let prefix = result_prefix(model, v);
        let label =
            shardings.iter().map(|s| label_of(s, many_meshes)).collect::<Vec<_>>().join(" | ");
        let follows_operand = match shardings.as_slice() {
            [s] => follows_operand(model, &by_start, &finals, v, s),
            _ => false,
        };
        match &v.written {
            None => {
                if let Some(offset) = name_end(model, &by_start, v) {
                    out.push(Hint {
                        offset,
                        kind: HintKind::Sharding,
                        label: format!("{prefix}{label}"),
                        site: Some(v.site),
                        follows_operand,
                        collectives_of: None,
                    });
                }
            }
            Some(w) => {
                if shardings.iter().any(|s| !same_axes(s, w)) {
                    if let Some(offset) = written_end(model, &by_start, v) {
                        out.push(Hint {
                            offset,
                            kind: HintKind::Extension,
                            label: format!("{prefix}→ {label}"),
                            site: Some(v.site),
                            follows_operand: false,
                            collectives_of: None,
                        });
                    }
                }
            }
        }
        if let [s] = shardings.as_slice() {
            if let Some(h) = shape_hint(model, &by_start, v, s, meshes) {
                out.push(Hint { follows_operand, ..h });
            }
        }
    }
    out.sort_by_key(|h| h.offset);
    out
}

/// Per-device shapes of the values whose sharding is written (no propagation needed),
/// sorted by offset.
pub fn written_shapes(model: &Model) -> Vec<Hint> {
    let mut out = Vec::new();
    for v in 0..model.values.len() as ValueId {
        let Some((s, _, _)) = explain::value_sharding(model, v) else { continue };
        let Some(ty) = model.value(v).ty.as_ref() else { continue };
        let Some(mesh) = explain::MeshOf::resolve(model, &s).mesh() else { continue };
        let Some(local) = explain::sharding::local_shape(mesh, &s, ty) else { continue };
        let Some(global) = ty.shape() else { continue };
        if local.as_slice() == global {
            continue;
        }
        let Some(span) = crate::query::type_span(model, v) else { continue };
        let elem = match &*ty.kind {
            sdy_syntax::tree::TypeKind::Tensor { elem, .. } => elem.to_string(),
            _ => continue,
        };
        out.push(Hint {
            offset: span.end,
            kind: HintKind::Shape,
            label: shape_label(&local, &elem),
            site: None,
            follows_operand: false,
            collectives_of: None,
        });
    }
    out.sort_by_key(|h| h.offset);
    out.dedup_by(|a, b| a.offset == b.offset && a.label == b.label);
    out
}

fn shape_label(dims: &[Dim], elem: &str) -> String {
    let dims: String = dims
        .iter()
        .map(|d| match d {
            Dim::Static(n) => format!("{n}x"),
            Dim::Dynamic => "?x".into(),
        })
        .collect();
    format!("per-device {dims}{elem}")
}

/// The label of one sharding.
pub fn label_of(s: &TensorSharding, with_mesh: bool) -> String {
    match (&s.mesh, with_mesh) {
        (MeshRef::Symbol(name), true) => format!("@{name} {}", compact(s)),
        _ => compact(s),
    }
}

/// Whether two shardings have the same axes (open/closed and priorities aside).
fn same_axes(a: &TensorSharding, b: &TensorSharding) -> bool {
    a.dims.len() == b.dims.len()
        && a.dims.iter().zip(&b.dims).all(|(x, y)| x.axes == y.axes)
        && a.unreduced == b.unreduced
        && a.mesh == b.mesh
}

/// `#1 ` for result 1 of an op with several results.
fn result_prefix(model: &Model, v: &ValueResult) -> String {
    let Site::OpResult { index, .. } = v.site else { return String::new() };
    let Some(value) = v.value else { return String::new() };
    let ValueDef::Result { op, .. } = model.value(value).def else { return String::new() };
    if model.op(op).results.len() > 1 {
        format!("#{index} ")
    } else {
        String::new()
    }
}

fn func_header<'m>(
    model: &'m Model,
    by_start: &FxHashMap<u32, OpId>,
    func: u32,
) -> Option<(u32, &'m sdy_syntax::tree::FuncHeader)> {
    let op = model.op(*by_start.get(&func)?);
    match &op.node.custom {
        Custom::Func(f) => Some((op.start, f)),
        _ => None,
    }
}

/// Where a value without a written sharding gets its hint: after an op result's
/// name (`%0`, `%0:2`), after a function argument's or result's type.
fn name_end(model: &Model, by_start: &FxHashMap<u32, OpId>, v: &ValueResult) -> Option<u32> {
    match v.site {
        Site::OpResult { op, .. } => {
            let value = v.value?;
            let info = model.op(*by_start.get(&op)?);
            // The result group holding the value (`%0:2` as written).
            let span = model.value(value).span;
            let group = info
                .node
                .results
                .iter()
                .map(|g| g.span.shift(info.start))
                .find(|g| g.start <= span.start && span.end <= g.end);
            Some(group.map_or(span.end, |g| g.end))
        }
        Site::Arg { func, index } => {
            let (start, f) = func_header(model, by_start, func)?;
            Some(f.args.get(index)?.ty.span.end + start)
        }
        Site::Result { func, index } => {
            let (start, f) = func_header(model, by_start, func)?;
            Some(f.results.get(index)?.ty.span.end + start)
        }
    }
}

/// The end of the written sharding of a value.
fn written_end(model: &Model, by_start: &FxHashMap<u32, OpId>, v: &ValueResult) -> Option<u32> {
    match v.site {
        Site::Result { func, index } => {
            let (start, f) = func_header(model, by_start, func)?;
            let attr = f.results.get(index)?.attrs.as_ref()?.get("sdy.sharding")?;
            Some(attr.span.end + start)
        }
        _ => Some(explain::value_sharding(model, v.value?)?.0.span.end),
    }
}

/// The per-device shape hint of a value sharded `s`, after its type.
fn shape_hint(
    model: &Model,
    by_start: &FxHashMap<u32, OpId>,
    v: &ValueResult,
    s: &TensorSharding,
    meshes: &HashMap<String, Mesh>,
) -> Option<Hint> {
    let mesh = match &s.mesh {
        MeshRef::Symbol(name) => meshes.get(name)?,
        MeshRef::Inline(m) => m,
    };
    let (ty_span, ty) = match v.site {
        Site::Result { func, index } => {
            let (start, f) = func_header(model, by_start, func)?;
            let t = &f.results.get(index)?.ty;
            (t.span.shift(start), t)
        }
        _ => {
            let value = v.value?;
            (crate::query::type_span(model, value)?, model.value(value).ty.as_ref()?)
        }
    };
    let text = explain::type_string(ty);
    let (dims, elem) = tensor_shape(&text)?;
    let local = local_shape(&dims, s, mesh)?;
    if local == dims {
        return None;
    }
    let dims: Vec<Dim> = local.into_iter().map(Dim::Static).collect();
    Some(Hint {
        offset: ty_span.end,
        kind: HintKind::Shape,
        label: shape_label(&dims, elem),
        site: Some(v.site),
        follows_operand: false,
        collectives_of: None,
    })
}

/// Whether `v`, an op result sharded `s`, has the axes of one of its op's operands.
fn follows_operand(
    model: &Model,
    by_start: &FxHashMap<u32, OpId>,
    finals: &FxHashMap<ValueId, &TensorSharding>,
    v: &ValueResult,
    s: &TensorSharding,
) -> bool {
    let Site::OpResult { op, .. } = v.site else { return false };
    let Some(&id) = by_start.get(&op) else { return false };
    model.op(id).operands.iter().flatten().any(|o| finals.get(o).is_some_and(|t| same_axes(s, t)))
}
