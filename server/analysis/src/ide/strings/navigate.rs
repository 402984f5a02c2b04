//! Go to definition inside strings: a mesh name to its `sdy.mesh` (or its entry in
//! `xla.sdy.meshes`), an axis name to its entry in that mesh.

use super::sites::{Embedded, Kind};
use super::{read_shardings, sdy_text, Scope};
use crate::model::sharding::MeshRef;
use sdy_syntax::Span;

pub fn definition(scope: &Scope, e: &Embedded, offset: u32) -> Option<Span> {
    if !matches!(e.kind, Kind::Sharding | Kind::InShardings | Kind::OutShardings) {
        return None;
    }
    let read = sdy_text::read(&e.text.text);
    let (_, shardings) = read_shardings(&read, e)?;
    let s = shardings.into_iter().find(|s| s.span.touches(offset))?;
    let meshes = scope.meshes();
    let name = match &s.mesh {
        MeshRef::Symbol(name) if s.mesh_span.touches(offset) => {
            return scope
                .model
                .mesh(name)
                .map(|m| m.name_span)
                .or_else(|| meshes.iter().find(|m| &m.name == name).map(|m| m.name_span));
        }
        MeshRef::Symbol(name) => Some(name.as_str()),
        MeshRef::Inline(_) => None,
    };
    let (axis, _) = s.axes_with_spans().find(|(_, span)| span.touches(offset))?;
    let mesh = match (s.inline_mesh(), name) {
        (Some(m), _) => m,
        (_, Some(name)) => super::find_mesh(scope.model, &meshes, name)?.clone(),
        _ => return None,
    };
    let index = mesh.axes.iter().position(|a| a.0 == axis.name)?;
    mesh.axis_spans.get(index).copied()
}
