//! Go to definition, find references and rename over one chunk's model: SSA values,
//! mesh and function symbols, and mesh axes (in meshes, shardings and axis lists).
//!
//! Every name comes from one walk ([`crate::query::occurrences`]) over an op's
//! attributes, so the three features agree on what refers to what:
//! * an axis name in a sharding belongs to the sharding's mesh;
//! * an axis name in an op's axis list (`manual_axes`, `gathering_axes`, ...) belongs to
//!   the mesh the op's own shardings name (Shardy checks lists against that mesh);
//! * `@name` anywhere in an attribute is a symbol reference, except a custom call's
//!   target.

mod rename;

pub use rename::{prepare_rename, rename, Edit, RenameTarget};

use crate::model::{Model, OpId, ValueDef, ValueId};
use crate::query::occurrences::{
    alias_occurrences, list_meshes, op_occurrences, AxisScope, Occurrence,
};
use crate::query::{self, AxisOf, Index, Target};
use sdy_syntax::lexer::TokenKind;
use sdy_syntax::tree::{Children, Custom, StmtKind};
use sdy_syntax::Span;

/// What the features look at: one chunk, in chunk-relative offsets.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub model: &'a Model,
    pub index: &'a Index,
    /// The chunk's top-level statements (alias definitions are not in the model).
    pub top: &'a Children,
    /// The chunk's text.
    pub src: &'a str,
}

/// A thing with a definition and references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entity {
    /// SSA values: one, or the values of a result group named at its definition.
    Values(Vec<ValueId>),
    /// A mesh or function symbol (or an undefined one), by name.
    Symbol(String),
    /// A mesh axis.
    Axis { of: AxisOf, name: String },
}

/// The entity at a position and the token naming it there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub entity: Entity,
    pub span: Span,
    pub is_def: bool,
}

/// One place that names an entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reference {
    pub span: Span,
    pub is_def: bool,
}

/// The entity named at `offset`.
pub fn entity_at(cx: &Ctx, offset: u32) -> Option<Found> {
    if let Some(found) = in_alias(cx, offset) {
        return Some(found);
    }
    match cx.index.target_at(cx.model, offset) {
        Some(Target::Value { values, span, is_def }) => {
            return Some(Found { entity: Entity::Values(values), span, is_def })
        }
        Some(Target::Symbol { name, span, is_def, .. }) => {
            return Some(Found { entity: Entity::Symbol(name), span, is_def })
        }
        None => {}
    }
    let axis = cx.index.axis_at(cx.model, offset)?;
    let of = match axis.of {
        AxisOf::List(op) => resolve_list(cx.model, op, &axis.name),
        of => of,
    };
    Some(Found {
        entity: Entity::Axis { of, name: axis.name },
        span: axis.span,
        is_def: axis.is_def,
    })
}

/// A name inside a top-level alias definition.
fn in_alias(cx: &Ctx, offset: u32) -> Option<Found> {
    let aliases = cx.top.iter().filter(|c| c.op.kind == StmtKind::AliasDef);
    let child = aliases.into_iter().find(|c| c.span().touches(offset))?;
    let mut found = None;
    alias_occurrences(child, &mut |o| {
        if found.is_none() && o.span().touches(offset) {
            found = Some(match o {
                Occurrence::Symbol { name, span, is_def } => {
                    Found { entity: Entity::Symbol(name.to_string()), span, is_def }
                }
                Occurrence::Axis { scope, name, span, is_def } => Found {
                    entity: Entity::Axis { of: AxisOf::from(scope), name: name.to_string() },
                    span,
                    is_def,
                },
            });
        }
    });
    found
}

/// The mesh an axis of op `op`'s axis list belongs to: the one mesh of the op's
/// shardings that has the axis (or the one mesh they name); else the list itself.
fn resolve_list(model: &Model, op: OpId, axis: &str) -> AxisOf {
    let meshes = list_meshes(model, op);
    let has_axis = |m: &&str| {
        model.mesh(m).and_then(|s| s.mesh.as_ref()).is_some_and(|m| m.axis(axis).is_some())
    };
    let with_axis: Vec<&str> = meshes.iter().copied().filter(has_axis).collect();
    match (with_axis.as_slice(), meshes.as_slice()) {
        ([m], _) | ([], [m]) => AxisOf::Mesh(m.to_string()),
        _ => AxisOf::List(op),
    }
}

/// Where the entity at `offset` is defined (several places for an axis list whose op
/// names several meshes; none for an undefined symbol).
pub fn definition(cx: &Ctx, offset: u32) -> Vec<Span> {
    if let Some(t) = cx.index.target_at(cx.model, offset) {
        return query::definition(cx.model, &t).into_iter().collect();
    }
    let Some(found) = entity_at(cx, offset) else { return Vec::new() };
    match &found.entity {
        Entity::Values(_) => Vec::new(),
        Entity::Symbol(name) => symbol_definition(cx.model, name).into_iter().collect(),
        Entity::Axis { of: AxisOf::Mesh(m), name } => {
            query::mesh_axis_name_span(cx.model, m, name).into_iter().collect()
        }
        Entity::Axis { of: AxisOf::List(op), name } => list_meshes(cx.model, *op)
            .into_iter()
            .filter_map(|m| query::mesh_axis_name_span(cx.model, m, name))
            .collect(),
        Entity::Axis { .. } => {
            let refs = references(cx, &found.entity, true);
            refs.into_iter().filter(|r| r.is_def).map(|r| r.span).collect()
        }
    }
}

/// The name in the definition of symbol `name`.
fn symbol_definition(model: &Model, name: &str) -> Option<Span> {
    if let Some(m) = model.mesh(name) {
        return Some(m.name_span);
    }
    let info = model.op(*model.funcs.get(name)?);
    match &info.node.custom {
        Custom::Func(f) => Some(f.sym.span.shift(info.start)),
        _ => None,
    }
}

/// Every place naming `entity`, in text order; definitions only if `include_decl`.
pub fn references(cx: &Ctx, entity: &Entity, include_decl: bool) -> Vec<Reference> {
    let mut out = match entity {
        Entity::Values(values) => value_references(cx.model, values),
        Entity::Symbol(name) => {
            let mut out = Vec::new();
            for_each_occurrence(cx, &mut |o| match o {
                Occurrence::Symbol { name: n, span, is_def } if n == name => {
                    out.push(Reference { span, is_def })
                }
                _ => {}
            });
            symbols_in_broken_statements(cx, name, &mut out);
            out
        }
        Entity::Axis { of, name } => axis_references(cx, of, name),
    };
    if !include_decl {
        out.retain(|r| !r.is_def);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `@name` in statements with a syntax error. The parser skips the rest of such a
/// statement, so the attributes after the error are not in the tree; but that is the
/// line being edited, and references and rename must still reach it.
fn symbols_in_broken_statements(cx: &Ctx, name: &str, out: &mut Vec<Reference>) {
    let mut broken: Vec<Span> = Vec::new();
    let error_children = |base: u32, ops: &Children, broken: &mut Vec<Span>| {
        for c in ops.iter().filter(|c| c.op.kind == StmtKind::Error) {
            broken.push(Span::new(base + c.offset, base + c.offset + c.op.len));
        }
    };
    error_children(0, cx.top, &mut broken);
    for info in &cx.model.ops {
        if !info.node.errors.is_empty() {
            broken.push(info.span());
        }
        for b in info.node.regions.iter().flat_map(|r| &r.blocks) {
            error_children(info.start, &b.ops, &mut broken);
        }
    }
    for span in broken {
        let Some(text) = cx.src.get(span.start as usize..span.end as usize) else { continue };
        for t in sdy_syntax::lexer::lex(text) {
            let written = t.text(text).strip_prefix('@').unwrap_or_default();
            if t.kind != TokenKind::AtId || written.trim_matches('"') != name {
                continue;
            }
            let at = Span::new(span.start + t.start, span.start + t.end);
            if !out.iter().any(|r| r.span == at) {
                out.push(Reference { span: at, is_def: false });
            }
        }
    }
}

/// The definitions and uses of SSA values.
fn value_references(model: &Model, values: &[ValueId]) -> Vec<Reference> {
    let mut out = Vec::new();
    for &v in values {
        let info = model.value(v);
        out.push(Reference { span: info.span, is_def: true });
        out.extend(info.uses.iter().map(|u| Reference { span: model.use_span(u), is_def: false }));
    }
    out
}

/// The axis `name` of `of`: its definition, the axis refs of shardings on its mesh, and
/// the axis-list entries of ops whose shardings are on it.
fn axis_references(cx: &Ctx, of: &AxisOf, name: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    // The mesh of an op's axis lists, computed once per op.
    let mut lists: Option<(OpId, bool)> = None;
    for_each_occurrence(cx, &mut |o| {
        let Occurrence::Axis { scope, name: n, span, is_def } = o else { return };
        if n != name {
            return;
        }
        let hit = match (scope, of) {
            (AxisScope::Mesh(m), AxisOf::Mesh(want)) => m == want,
            (AxisScope::Inline(s), AxisOf::Inline(want)) => s == *want,
            (AxisScope::List(op), AxisOf::List(want)) => op == *want,
            (AxisScope::List(op), AxisOf::Mesh(want)) => match lists {
                Some((o, hit)) if o == op => hit,
                _ => {
                    let hit = list_meshes(cx.model, op).contains(&want.as_str());
                    lists = Some((op, hit));
                    hit
                }
            },
            _ => false,
        };
        if hit {
            out.push(Reference { span, is_def });
        }
    });
    out
}

/// Every occurrence in the chunk: alias definitions, then ops in model order.
fn for_each_occurrence<'m>(cx: &Ctx<'m>, f: &mut dyn FnMut(Occurrence<'m>)) {
    for c in cx.top {
        alias_occurrences(c, f);
    }
    for id in 0..cx.model.ops.len() as OpId {
        op_occurrences(cx.model, id, f);
    }
}

/// The values named together with `v` at its definition: the whole result group.
pub fn value_group(model: &Model, v: ValueId) -> Vec<ValueId> {
    let info = model.value(v);
    match info.def {
        ValueDef::Result { op, .. } => {
            let results = &model.op(op).results;
            results.iter().copied().filter(|&r| model.value(r).span == info.span).collect()
        }
        ValueDef::BlockArg { .. } => vec![v],
    }
}

#[cfg(test)]
mod tests;
