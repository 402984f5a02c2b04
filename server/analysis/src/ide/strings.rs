//! sdy attributes and GSPMD shardings written inside string attributes.
//!
//! After an XLA round trip, exports carry Shardy's attributes as strings that Shardy's
//! import (`-sdy-round-trip-import-pipeline`) parses back:
//! `mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22x\22}]>"}`
//! on arguments, results and ops, `xla.sdy.meshes = "{mesh = #sdy.mesh<[...]>}"` on the
//! module, `xla.sdy.sharding_rule`, the `shard_map` body calls' `xla.sdy.in_shardings`,
//! `xla.sdy.out_shardings` and `xla.sdy.manual_axes`, and beside them GSPMD's
//! `mhlo.sharding = "{devices=[2,1]<=[2]}"`.
//!
//! This module finds those strings ([`sites`]), decodes them with an exact map back to
//! the source ([`escape`]: `\22` is three source bytes for one `"`), reads the sdy ones
//! with the syntax layer's parser ([`sdy_text`]) and the GSPMD ones with [`gspmd`], and
//! answers diagnostics (Shardy's own checks and messages, at exact in-string ranges),
//! hovers (the explanation `explain` gives a written sharding) and definitions.

mod check;
pub(crate) mod escape;
mod explain;
pub mod gspmd;
mod gspmd_hover;
mod navigate;
mod sdy_text;
pub mod sites;

use crate::diag::Diagnostic;
use crate::model::sharding::{SpannedMesh, SpannedSharding};
use crate::model::{Model, OpId};
use sdy_syntax::sdy::{MeshAst, SdyAttr, ShardingAst};
use sdy_syntax::tree::{AttrKind, Children, Chunk, Op};
use sdy_syntax::Span;

pub use sites::{Embedded, Kind, Place};

/// What the string features need: the chunk's model, its text (the model's
/// coordinates) and its `module` op, whose attributes hold `xla.sdy.meshes`.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub model: &'a Model,
    pub src: &'a str,
    /// The explicit `module` op and its absolute start.
    pub module: Option<(u32, &'a Op)>,
}

impl<'a> Scope<'a> {
    /// `top`: the chunk's top-level statements, relative to `chunk_start`.
    pub fn new(model: &'a Model, src: &'a str, chunk_start: u32, top: &'a Children) -> Scope<'a> {
        Scope { model, src, module: sites::module_of(chunk_start, top) }
    }

    /// The meshes of the module's `xla.sdy.meshes` strings.
    pub fn meshes(&self) -> Vec<StringMesh> {
        let mut strings = Vec::new();
        if let Some((start, op)) = self.module {
            sites::in_module(start, op, &|kind, _, _| kind == Kind::Meshes, &mut strings);
        }
        strings.iter().flat_map(string_meshes).collect()
    }

    /// The string (of interest) containing `offset`, among those of `op` (the innermost
    /// op there) or, without one, of the module.
    pub fn string_at(&self, op: Option<OpId>, offset: u32) -> Option<Embedded> {
        let mut strings = Vec::new();
        let keep = |_, _, literal: Span| literal.contains(offset);
        match op {
            Some(id) => sites::in_op(self.model, id, &keep, &mut strings),
            None => {
                if let Some((start, op)) = self.module {
                    sites::in_module(start, op, &keep, &mut strings);
                }
            }
        }
        strings.pop()
    }
}

/// The diagnostics of every string of a chunk (`src` and `chunk` as given to
/// `analyze_chunk`).
pub fn diagnostics(model: &Model, src: &str, chunk: &Chunk) -> Vec<Diagnostic> {
    check::diagnostics(&Scope::new(model, src, chunk.span.start, &chunk.top))
}

/// What a hover inside a string shows: the range it is about and Markdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    pub range: Span,
    pub markdown: String,
}

/// The explanation of what is under `offset` inside a string (`op`: the innermost op
/// at `offset`, if any).
pub fn hover(scope: &Scope, op: Option<OpId>, offset: u32) -> Option<Hover> {
    let e = scope.string_at(op, offset)?;
    explain::hover(scope, &e, offset)
}

/// Where what is under `offset` inside a string is defined: a mesh name's mesh, an
/// axis name's entry in its mesh.
pub fn definition(scope: &Scope, op: Option<OpId>, offset: u32) -> Option<Span> {
    let e = scope.string_at(op, offset)?;
    navigate::definition(scope, &e, offset)
}

/// A mesh of an `xla.sdy.meshes` string; spans are in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StringMesh {
    pub name: String,
    pub name_span: Span,
    pub mesh: SpannedMesh,
}

/// The meshes an `xla.sdy.meshes` string defines (none for other strings).
fn string_meshes(e: &Embedded) -> Vec<StringMesh> {
    if e.kind != Kind::Meshes {
        return Vec::new();
    }
    let read = sdy_text::read(&e.text.text);
    let map = SpanMap { read: &read, e };
    let Some(AttrKind::Dict(d)) = read.value.as_ref().map(|v| &v.kind) else { return Vec::new() };
    d.entries
        .iter()
        .filter_map(|entry| {
            let AttrKind::Sdy(s) = &entry.value.as_ref()?.kind else { return None };
            let SdyAttr::Mesh(m) = &**s else { return None };
            let name = entry.name.trim_matches('"').to_string();
            Some(StringMesh { name, name_span: map.span(entry.name_span), mesh: map.mesh(m) })
        })
        .collect()
}

/// The mesh named `name`: an `sdy.mesh` of the module, else one of `meshes`.
fn find_mesh<'m>(
    model: &'m Model,
    meshes: &'m [StringMesh],
    name: &str,
) -> Option<&'m SpannedMesh> {
    model
        .mesh(name)
        .and_then(|m| m.mesh.as_ref())
        .or_else(|| meshes.iter().find(|m| m.name == name).map(|m| &m.mesh))
}

/// Maps spans of an attribute read from a string's text to the source.
struct SpanMap<'a> {
    read: &'a sdy_text::Read,
    e: &'a Embedded,
}

impl SpanMap<'_> {
    fn span(&self, s: Span) -> Span {
        self.e.text.source_span(self.read.text_span(s))
    }

    fn mesh(&self, ast: &MeshAst) -> SpannedMesh {
        let mut m = SpannedMesh::from_ast(ast, 0);
        m.map_spans(|s| self.span(s));
        m
    }

    fn sharding(&self, ast: &ShardingAst) -> SpannedSharding {
        let mut s = SpannedSharding::from_ast(ast, 0);
        s.map_spans(|x| self.span(x));
        s
    }
}

/// The shardings of a read `#sdy.sharding` or `#sdy.sharding_per_value`, with their
/// spans in the source; `None` for any other attribute.
fn read_shardings(read: &sdy_text::Read, e: &Embedded) -> Option<(bool, Vec<SpannedSharding>)> {
    let map = SpanMap { read, e };
    let AttrKind::Sdy(s) = &read.value.as_ref()?.kind else { return None };
    match &**s {
        SdyAttr::Sharding(s) => Some((false, vec![map.sharding(s)])),
        SdyAttr::PerValue(p) => Some((true, p.shardings.iter().map(|s| map.sharding(s)).collect())),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
