//! What is under a byte offset: a part of an sdy attribute (sharding, axis, mesh), an
//! SSA value, or an op name; with where the attribute sits on its op.

use crate::model::sharding::{AxisRef, MeshRef, Spanned, SpannedMesh, SpannedSharding};
use crate::model::{Model, OpId, ValueId};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{Attr, AttrKind, Custom, NamedAttr};
use sdy_syntax::Span;

/// Where a sharding attribute sits on its op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Site {
    /// Entry `i` of the op's `sdy.sharding` (the sharding of result `i`).
    Result(u32),
    /// The `sdy.sharding` of function argument `i`.
    FuncArg(u32),
    /// The `sdy.sharding` of function result `i`.
    FuncResult(u32),
    /// The `sdy.sharding` of a block argument written with attributes.
    BlockArg { region: u32, block: u32, index: u32 },
    /// An inherent attribute: `sharding`, `out_sharding`, entry `i` of `in_shardings`.
    Inherent { key: String, index: Option<u32> },
    /// Any other attribute, by name.
    Other(String),
}

/// A hovered thing.
#[derive(Clone, Debug)]
pub enum Target {
    /// A tensor sharding (anywhere in it but on an axis or its mesh); `range` is the
    /// whole attribute (`#sdy.sharding<...>`, or the entry of a per-value list).
    Sharding { op: OpId, site: Site, sharding: SpannedSharding, range: Span },
    /// An axis ref inside a sharding.
    ShardingAxis { op: OpId, site: Site, sharding: SpannedSharding, axis: Spanned<AxisRef> },
    /// An axis ref in an op's axis list (`manual_axes`, `gathering_axes`, ...);
    /// `dim` for per-dimension lists.
    ListAxis { op: OpId, key: String, dim: Option<usize>, axis: Spanned<AxisRef> },
    /// A mesh named by its symbol (`@mesh` in a sharding, `sdy.mesh @mesh`).
    MeshSymbol { name: String, span: Span },
    /// A mesh body: an inline `mesh<...>` or the `<...>` of `sdy.mesh`; `range` covers
    /// the `mesh` keyword of an inline mesh too.
    MeshBody { name: Option<String>, mesh: SpannedMesh, range: Span },
    /// An axis of a mesh body.
    MeshAxis { name: Option<String>, mesh: SpannedMesh, index: usize },
    /// A `#sdy.sharding_per_value` outside its entries: every entry with its site.
    PerValue { op: OpId, entries: Vec<(Site, SpannedSharding)>, range: Span },
    /// An SSA value, at its definition or a use.
    Value { value: ValueId, span: Span },
    /// An op, by its name.
    OpName { op: OpId },
}

impl Target {
    /// The range of what is hovered.
    pub fn range(&self, model: &Model) -> Span {
        match self {
            Target::Sharding { range, .. } => *range,
            Target::ShardingAxis { axis, .. } | Target::ListAxis { axis, .. } => axis.span,
            Target::MeshSymbol { span, .. } | Target::Value { span, .. } => *span,
            Target::MeshBody { range, .. } | Target::PerValue { range, .. } => *range,
            Target::MeshAxis { mesh, index, .. } => mesh.axis_spans[*index],
            Target::OpName { op } => model.op(*op).name_span(),
        }
    }
}

/// What is under `offset` (absolute), in the innermost op whose statement contains it.
pub fn locate(model: &Model, offset: u32) -> Option<Target> {
    let id = crate::query::innermost_op(model, offset, false)?;
    let info = model.op(id);
    let node = &info.node;
    let base = info.start;
    let rel = offset.checked_sub(base)?;
    let in_attr = |a: &NamedAttr| a.span.contains(rel) || a.name_span.contains(rel);

    // sdy attributes: inherent, discardable, function and block argument attributes.
    for a in node.inherent.iter().filter(|a| in_attr(a)) {
        let site = |index| Site::Inherent { key: a.name.to_string(), index };
        if let Some(t) = in_sdy_attr(model, id, a, rel, site) {
            return Some(t);
        }
    }
    for a in node.attrs.iter().flat_map(|d| &d.entries).filter(|a| in_attr(a)) {
        let site = |index: Option<u32>| match &*a.name {
            "sdy.sharding" => Site::Result(index.unwrap_or(0)),
            other => Site::Other(other.to_string()),
        };
        if let Some(t) = in_sdy_attr(model, id, a, rel, site) {
            return Some(t);
        }
    }
    if let Custom::Func(f) = &node.custom {
        for (i, arg) in f.args.iter().enumerate() {
            for a in arg.attrs.iter().flat_map(|d| &d.entries).filter(|a| in_attr(a)) {
                let site = |_| sharding_site(a, Site::FuncArg(i as u32));
                if let Some(t) = in_sdy_attr(model, id, a, rel, site) {
                    return Some(t);
                }
            }
            if arg.span.contains(rel) {
                let value = model.op(id).region_args.first().and_then(|r| r.get(i)).copied()?;
                return Some(Target::Value { value, span: arg.span.shift(base) });
            }
        }
        for (i, res) in f.results.iter().enumerate() {
            for a in res.attrs.iter().flat_map(|d| &d.entries).filter(|a| in_attr(a)) {
                let site = |_| sharding_site(a, Site::FuncResult(i as u32));
                if let Some(t) = in_sdy_attr(model, id, a, rel, site) {
                    return Some(t);
                }
            }
        }
        for a in f.fn_attrs.iter().flat_map(|d| &d.entries).filter(|a| in_attr(a)) {
            let site = |_| Site::Other(a.name.to_string());
            if let Some(t) = in_sdy_attr(model, id, a, rel, site) {
                return Some(t);
            }
        }
    }
    for (ri, region) in node.regions.iter().enumerate() {
        for (bi, block) in region.blocks.iter().enumerate() {
            for (ai, arg) in block.args.iter().enumerate() {
                for a in arg.attrs.iter().flat_map(|d| &d.entries).filter(|a| in_attr(a)) {
                    let (region, block, index) = (ri as u32, bi as u32, ai as u32);
                    let site = |_| sharding_site(a, Site::BlockArg { region, block, index });
                    if let Some(t) = in_sdy_attr(model, id, a, rel, site) {
                        return Some(t);
                    }
                }
            }
        }
    }

    // The mesh symbol of `sdy.mesh @name`.
    if let Custom::Mesh { sym } = &node.custom {
        if sym.span.contains(rel) {
            return Some(Target::MeshSymbol {
                name: sym.text.to_string(),
                span: sym.span.shift(base),
            });
        }
    }

    // Values: results, block arguments, operands.
    let defined = info.results.iter().chain(info.region_args.iter().flatten());
    if let Some(&value) = defined.clone().find(|&&v| model.value(v).span.contains(offset)) {
        return Some(Target::Value { value, span: model.value(value).span });
    }
    for (i, r) in node.operands.iter().enumerate() {
        if r.span.contains(rel) {
            let value = info.operands.get(i).copied().flatten()?;
            return Some(Target::Value { value, span: r.span.shift(base) });
        }
    }
    // Block arguments of later blocks (not in `region_args`).
    if let Some(v) = model.values.iter().position(|v| {
        v.span.contains(offset)
            && matches!(v.def, crate::model::ValueDef::BlockArg { op, .. } if op == id)
    }) {
        let value = v as ValueId;
        return Some(Target::Value { value, span: model.value(value).span });
    }

    if node.name.span.contains(rel) {
        return Some(Target::OpName { op: id });
    }
    None
}

/// `Site` for a `sdy.sharding` attribute of an argument or result; other attributes
/// keep their name.
fn sharding_site(a: &NamedAttr, site: Site) -> Site {
    if &*a.name == "sdy.sharding" {
        site
    } else {
        Site::Other(a.name.to_string())
    }
}

/// The target inside the sdy attribute of `attr` (searching nested arrays and
/// dictionaries) at `rel` (relative to the op). `site` maps a per-value index.
fn in_sdy_attr(
    model: &Model,
    op: OpId,
    attr: &NamedAttr,
    rel: u32,
    site: impl Fn(Option<u32>) -> Site,
) -> Option<Target> {
    let (sdy, attr_span) = find_sdy(attr.value.as_ref()?, rel)?;
    let base = model.op(op).start;
    let offset = base + rel;
    let key = attr.name.to_string();
    let list_axis = |axes: &[sdy_syntax::sdy::AxisRefAst], dim: Option<usize>| {
        axes.iter().find(|a| a.span.contains(rel)).map(|a| Target::ListAxis {
            op,
            key: key.clone(),
            dim,
            axis: Spanned::from_ast(a, base),
        })
    };
    match sdy {
        SdyAttr::Sharding(s) => {
            let sharding = SpannedSharding::from_ast(s, base);
            Some(in_sharding(op, site(None), sharding, attr_span.shift(base), offset))
        }
        SdyAttr::PerValue(p) => {
            match p.shardings.iter().enumerate().find(|(_, s)| s.span.contains(rel)) {
                Some((i, s)) => {
                    let sharding = SpannedSharding::from_ast(s, base);
                    let range = sharding.span;
                    Some(in_sharding(op, site(Some(i as u32)), sharding, range, offset))
                }
                // Its name or brackets: the list as a whole.
                None => Some(Target::PerValue {
                    op,
                    entries: (p.shardings.iter().enumerate())
                        .map(|(i, s)| (site(Some(i as u32)), SpannedSharding::from_ast(s, base)))
                        .collect(),
                    range: attr_span.shift(base),
                }),
            }
        }
        SdyAttr::Mesh(m) => {
            let name = match &model.op(op).node.custom {
                Custom::Mesh { sym } => Some(sym.text.to_string()),
                _ => None,
            };
            let mesh = SpannedMesh::from_ast(m, base);
            let range = mesh.span;
            Some(in_mesh(name, mesh, range, offset))
        }
        SdyAttr::ManualAxes(axes) | SdyAttr::AxisList(axes) => list_axis(axes, None),
        SdyAttr::AxisListPerDim(lists) => {
            lists.iter().enumerate().find_map(|(d, l)| list_axis(&l.axes, Some(d)))
        }
        SdyAttr::AllToAllParams(params) => {
            params.iter().find_map(|p| list_axis(&p.axes.axes, usize::try_from(p.src_dim.0).ok()))
        }
        SdyAttr::Rule(_) | SdyAttr::Opaque => None,
    }
}

/// The innermost sdy attribute containing `rel` in an attribute value, and the span
/// of the attribute that holds it.
fn find_sdy(attr: &Attr, rel: u32) -> Option<(&SdyAttr, Span)> {
    if !attr.span.contains(rel) {
        return None;
    }
    match &attr.kind {
        AttrKind::Sdy(s) => Some((s, attr.span)),
        AttrKind::Array(items) => items.iter().find_map(|a| find_sdy(a, rel)),
        AttrKind::Dict(d) => d.entries.iter().find_map(|e| find_sdy(e.value.as_ref()?, rel)),
        _ => None,
    }
}

/// The part of a sharding under `offset`: its mesh, an axis, or the whole.
pub fn in_sharding(
    op: OpId,
    site: Site,
    sharding: SpannedSharding,
    range: Span,
    offset: u32,
) -> Target {
    let mesh_span = sharding.mesh_span;
    match &sharding.mesh {
        MeshRef::Symbol(name) if mesh_span.contains(offset) => {
            return Target::MeshSymbol { name: name.clone(), span: mesh_span };
        }
        // `mesh<...>`: the keyword follows the sharding's `<`.
        MeshRef::Inline(_) if sharding.span.start < offset && offset < mesh_span.end => {
            let range = Span::new(sharding.span.start + 1, mesh_span.end);
            let mesh = sharding.inline_mesh().expect("inline");
            return in_mesh(None, mesh, range, offset);
        }
        _ => {}
    }
    let axis = sharding.axes_with_spans().find(|(_, span)| span.contains(offset));
    if let Some((axis, span)) = axis {
        let axis = Spanned { value: axis.clone(), span };
        return Target::ShardingAxis { op, site, sharding, axis };
    }
    Target::Sharding { op, site, sharding, range }
}

/// The part of a mesh body under `offset`: an axis, or the whole (`range`).
pub fn in_mesh(name: Option<String>, mesh: SpannedMesh, range: Span, offset: u32) -> Target {
    match mesh.axis_spans.iter().position(|a| a.contains(offset)) {
        Some(index) => Target::MeshAxis { name, mesh, index },
        None => Target::MeshBody { name, mesh, range },
    }
}
