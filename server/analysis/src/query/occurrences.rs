//! Every name an op's attributes mention: mesh and function symbols (defined or
//! referenced) and mesh axes (defined in a mesh, referenced in a sharding or an axis
//! list), with absolute spans. Position queries, references and rename share this walk,
//! so they agree on what a name is.

use crate::model::{Model, OpId};
use sdy_syntax::sdy::{AxisRefAst, MeshAst, MeshRefAst, SdyAttr, ShardingAst};
use sdy_syntax::tree::{Attr, AttrKind, ChildRef, Custom, NamedAttr, Op, StmtKind};
use sdy_syntax::Span;

/// Which mesh an axis name belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisScope<'a> {
    /// A mesh symbol: the `@m` of a sharding, or the `sdy.mesh @m` defining the axis.
    Mesh(&'a str),
    /// An inline `mesh<[...]>` (or an `#sdy.mesh` that defines no symbol), by its span.
    Inline(Span),
    /// An axis list of an op (`manual_axes`, `gathering_axes`, ...): the axes of the
    /// mesh of the op's own shardings ([`list_meshes`]).
    List(OpId),
}

/// One name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occurrence<'a> {
    /// `@name` (or the quoted `sym_name` of a generic `sdy.mesh`).
    Symbol { name: &'a str, span: Span, is_def: bool },
    /// An axis name, `span` being its quoted token (`"x"` of `"x":(1)2`). The name is
    /// as written between the quotes (escapes undecoded).
    Axis { scope: AxisScope<'a>, name: &'a str, span: Span, is_def: bool },
}

impl Occurrence<'_> {
    pub fn span(&self) -> Span {
        match self {
            Occurrence::Symbol { span, .. } | Occurrence::Axis { span, .. } => *span,
        }
    }
}

/// The names op `id` mentions itself (not those of nested ops), in no particular order.
pub fn op_occurrences<'m>(model: &'m Model, id: OpId, f: &mut dyn FnMut(Occurrence<'m>)) {
    let info = model.op(id);
    let node: &'m Op = &info.node;
    let mesh_def = mesh_symbol_of(model, id);
    let mut w = Walk { base: info.start, list: Some(id), mesh_def, f };
    match &node.custom {
        Custom::Mesh { sym } => {
            let span = sym.span.shift(info.start);
            (w.f)(Occurrence::Symbol { name: sym.text.as_str(), span, is_def: true });
        }
        Custom::Func(func) => {
            let span = func.sym.span.shift(info.start);
            (w.f)(Occurrence::Symbol { name: func.sym.text.as_str(), span, is_def: true });
            let dicts = func.args.iter().filter_map(|a| a.attrs.as_ref());
            let dicts = dicts.chain(func.results.iter().filter_map(|r| r.attrs.as_ref()));
            for d in dicts.chain(func.fn_attrs.as_ref()) {
                d.entries.iter().for_each(|a| w.named(a));
            }
        }
        _ if node.generic && mesh_def.is_some() => {
            // `"sdy.mesh"() <{..., sym_name = "m"}>`: the string is the definition.
            let model_mesh = model.meshes.iter().find(|m| m.op == id);
            if let Some(m) = model_mesh {
                (w.f)(Occurrence::Symbol { name: &m.name, span: m.name_span, is_def: true });
            }
        }
        _ => {}
    }
    node.inherent.iter().for_each(|a| w.named(a));
    node.attrs.iter().flat_map(|d| &d.entries).for_each(|a| w.named(a));
    for b in node.regions.iter().flat_map(|r| &r.blocks) {
        for d in b.args.iter().filter_map(|a| a.attrs.as_ref()) {
            d.entries.iter().for_each(|a| w.named(a));
        }
    }
}

/// The names in a top-level alias definition (`#s = #sdy.sharding<@m, ...>`) of the
/// chunk (`child` of the chunk's top level, whose offsets are chunk-relative).
pub fn alias_occurrences<'m>(child: ChildRef<'m>, f: &mut dyn FnMut(Occurrence<'m>)) {
    if child.op.kind != StmtKind::AliasDef {
        return;
    }
    if let Custom::Alias(def) = &child.op.custom {
        if let sdy_syntax::tree::AliasValue::Attr(a) = &def.value {
            Walk { base: child.offset, list: None, mesh_def: None, f }.attr(a);
        }
    }
}

/// The meshes an axis list of op `id` can refer to: the distinct mesh symbols its own
/// shardings name (an inline mesh counts as no symbol), leaving out meshes known to have
/// no axes (empty and maximal meshes, which Shardy ignores when it looks for the common
/// mesh of an op).
pub fn list_meshes(model: &Model, id: OpId) -> Vec<&str> {
    fn add<'m>(model: &Model, names: &mut Vec<&'m str>, s: &'m ShardingAst) {
        if let MeshRefAst::Symbol { name, .. } = &s.mesh {
            let axis_less =
                model.mesh(name).and_then(|m| m.mesh.as_ref()).is_some_and(|m| m.axes.is_empty());
            if !axis_less && !names.contains(&name.as_str()) {
                names.push(name.as_str());
            }
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for a in &model.op(id).node.inherent {
        if let Some(AttrKind::Sdy(s)) = a.value.as_ref().map(|v| &v.kind) {
            match &**s {
                SdyAttr::Sharding(sh) => add(model, &mut names, sh),
                SdyAttr::PerValue(p) => {
                    p.shardings.iter().for_each(|sh| add(model, &mut names, sh))
                }
                _ => {}
            }
        }
    }
    names
}

/// The symbol op `id` defines when it is a top-level `sdy.mesh`.
fn mesh_symbol_of(model: &Model, id: OpId) -> Option<&str> {
    let info = model.op(id);
    if info.parent.is_some() || info.name() != "sdy.mesh" {
        return None;
    }
    match &info.node.custom {
        Custom::Mesh { sym } => Some(sym.text.as_str()),
        _ => model.meshes.iter().find(|m| m.op == id).map(|m| m.name.as_str()),
    }
}

struct Walk<'m, 'f> {
    /// What the spans of the walked attributes are relative to.
    base: u32,
    /// The op whose axis lists are walked (`None` outside ops).
    list: Option<OpId>,
    /// The symbol of the `sdy.mesh` op walked: its mesh body defines that symbol's axes.
    mesh_def: Option<&'m str>,
    f: &'f mut dyn FnMut(Occurrence<'m>),
}

impl<'m> Walk<'m, '_> {
    fn named(&mut self, a: &'m NamedAttr) {
        // `stablehlo.custom_call @target` names a target, not a symbol of the module.
        if &*a.name == "call_target_name" {
            return;
        }
        if let Some(v) = &a.value {
            self.attr(v);
        }
    }

    fn attr(&mut self, attr: &'m Attr) {
        match &attr.kind {
            AttrKind::Symbol(name) => {
                let span = attr.span.shift(self.base);
                (self.f)(Occurrence::Symbol { name: name.as_str(), span, is_def: false });
            }
            AttrKind::Array(items) => items.iter().for_each(|a| self.attr(a)),
            AttrKind::Dict(d) => d.entries.iter().for_each(|a| self.named(a)),
            AttrKind::Sdy(s) => self.sdy(s),
            _ => {}
        }
    }

    fn sdy(&mut self, s: &'m SdyAttr) {
        match s {
            SdyAttr::Sharding(sh) => self.sharding(sh),
            SdyAttr::PerValue(p) => p.shardings.iter().for_each(|sh| self.sharding(sh)),
            SdyAttr::Mesh(m) => {
                let scope = match self.mesh_def.take() {
                    Some(name) => AxisScope::Mesh(name),
                    None => AxisScope::Inline(m.span.shift(self.base)),
                };
                self.mesh_axes(m, scope);
            }
            SdyAttr::ManualAxes(axes) | SdyAttr::AxisList(axes) => self.list(axes),
            SdyAttr::AxisListPerDim(lists) => lists.iter().for_each(|l| self.list(&l.axes)),
            SdyAttr::AllToAllParams(params) => params.iter().for_each(|p| self.list(&p.axes.axes)),
            SdyAttr::Rule(_) | SdyAttr::Opaque => {}
        }
    }

    fn sharding(&mut self, sh: &'m ShardingAst) {
        let scope = match &sh.mesh {
            MeshRefAst::Symbol { name, span } => {
                let span = span.shift(self.base);
                (self.f)(Occurrence::Symbol { name: name.as_str(), span, is_def: false });
                AxisScope::Mesh(name.as_str())
            }
            MeshRefAst::Inline(m) => {
                let scope = AxisScope::Inline(m.span.shift(self.base));
                self.mesh_axes(m, scope);
                scope
            }
        };
        let dims = sh.dims.iter().flat_map(|d| &d.axes);
        let replicated = sh.replicated.iter().flat_map(|l| &l.axes);
        let unreduced = sh.unreduced.iter().flat_map(|u| &u.list.axes);
        for a in dims.chain(replicated).chain(unreduced) {
            self.axis_ref(a, scope);
        }
    }

    fn mesh_axes(&mut self, m: &'m MeshAst, scope: AxisScope<'m>) {
        for a in &m.axes {
            let span = a.name_span.shift(self.base);
            (self.f)(Occurrence::Axis { scope, name: a.name.as_str(), span, is_def: true });
        }
    }

    fn list(&mut self, axes: &'m [AxisRefAst]) {
        let Some(op) = self.list else { return };
        for a in axes {
            self.axis_ref(a, AxisScope::List(op));
        }
    }

    fn axis_ref(&mut self, a: &'m AxisRefAst, scope: AxisScope<'m>) {
        let span = a.name_span.shift(self.base);
        (self.f)(Occurrence::Axis { scope, name: a.name.as_str(), span, is_def: false });
    }
}
