//! Hovers inside strings: an sdy sharding, axis or mesh read from a string gets the
//! explanation `explain` gives the same thing written as an attribute; GSPMD strings
//! get theirs from [`super::gspmd_hover`].

use super::sites::{Embedded, Kind, Place};
use super::{gspmd_hover, read_shardings, sdy_text, Hover, Scope, SpanMap};
use crate::explain::locate::{in_mesh, in_sharding, Site, Target};
use crate::explain::{self, NamedMesh};
use crate::model::sharding::SpannedSharding;
use crate::model::OpId;
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::AttrKind;

pub fn hover(scope: &Scope, e: &Embedded, offset: u32) -> Option<Hover> {
    let at = e.text.text_offset(offset)?;
    match e.kind {
        Kind::Gspmd => gspmd_hover::hover(scope, e, at),
        Kind::Sharding | Kind::InShardings | Kind::OutShardings => sharding(scope, e, offset),
        Kind::Meshes => mesh(scope, e, offset),
        Kind::ManualAxes | Kind::Rule => None,
    }
}

/// The meshes of `xla.sdy.meshes`, for the explanations.
fn named_meshes(scope: &Scope) -> Vec<NamedMesh> {
    scope.meshes().into_iter().map(|m| (m.name, m.mesh.value)).collect()
}

/// The op and the site a sharding read from a string describes (entry `index` of a
/// per-value list).
pub(super) fn site_of(e: &Embedded, index: usize) -> Option<(OpId, Site)> {
    let i = index as u32;
    match (e.place, e.kind) {
        (Place::FuncArg { func, index }, _) => Some((func, Site::FuncArg(index))),
        (Place::FuncResult { func, index }, _) => Some((func, Site::FuncResult(index))),
        (Place::Op(op), Kind::InShardings | Kind::OutShardings) => {
            Some((op, Site::Other(e.kind.key().to_string())))
        }
        (Place::Op(op), _) => Some((op, Site::Result(i))),
        (Place::Module, _) => None,
    }
}

fn sharding(scope: &Scope, e: &Embedded, offset: u32) -> Option<Hover> {
    let read = sdy_text::read(&e.text.text);
    let (per_value, shardings) = read_shardings(&read, e)?;
    let whole = SpanMap { read: &read, e }.span(read.value.as_ref()?.span);
    // A lone `#sdy.sharding<...>` answers anywhere in it; a list, on its entries.
    let inside = |s: &SpannedSharding| if per_value { s.span } else { whole }.touches(offset);
    let (index, s) = shardings.into_iter().enumerate().find(|(_, s)| inside(s))?;
    let range = if per_value { s.span } else { whole };
    let (op, site) = site_of(e, index)?;
    let target = in_sharding(op, site, s, range, offset);
    let mut x = explain::explain_target(scope.model, scope.src, &named_meshes(scope), &target);
    if matches!(target, Target::Sharding { .. }) {
        x.markdown.push_str(&format!(
            "\nRead from the `{}` string: Shardy's round-trip import turns it into this \
             sharding.\n",
            e.kind.key()
        ));
    }
    Some(Hover { range: x.range, markdown: x.markdown })
}

fn mesh(scope: &Scope, e: &Embedded, offset: u32) -> Option<Hover> {
    let read = sdy_text::read(&e.text.text);
    let map = SpanMap { read: &read, e };
    let AttrKind::Dict(d) = &read.value.as_ref()?.kind else { return None };
    let entry = d.entries.iter().find(|x| map.span(x.span).touches(offset))?;
    let name = entry.name.trim_matches('"').to_string();
    let name_span = map.span(entry.name_span);
    let target = if name_span.touches(offset) {
        Target::MeshSymbol { name, span: name_span }
    } else {
        let value = entry.value.as_ref()?;
        let range = map.span(value.span);
        let AttrKind::Sdy(s) = &value.kind else { return None };
        let SdyAttr::Mesh(m) = &**s else { return None };
        if !range.touches(offset) {
            return None;
        }
        in_mesh(Some(name), map.mesh(m), range, offset)
    };
    let x = explain::explain_target(scope.model, scope.src, &named_meshes(scope), &target);
    Some(Hover { range: x.range, markdown: x.markdown })
}
