//! Position queries over a chunk's model, for editors: what is at an offset (an SSA
//! value, a symbol), and where it is defined. Plain data in, plain data out; the LSP
//! layer turns the answers into hovers and locations.
//!
//! Lookups cost `O(log n)`: the innermost op around an offset is found by binary search
//! over the model's ops (sorted by start, see [`Index`]), then only that op's own names,
//! operands and attributes are looked at.

pub(crate) mod occurrences;

use crate::model::{Model, OpId, ValueDef, ValueId};
use occurrences::{list_meshes, op_occurrences, AxisScope, Occurrence};
use sdy_syntax::sdy::{MeshRefAst, SdyAttr, ShardingAst};
use sdy_syntax::tree::{Attr, AttrDict, AttrKind, Custom, NamedAttr, Op};
use sdy_syntax::Span;

/// What a symbol names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Mesh,
    Func,
    /// Not defined in this module.
    Unknown,
}

/// The thing under the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// SSA values: a use (`%x`, `%x#1`: one value), or a definition (a result group,
    /// `%x:2` gives both values; a block or function argument).
    Value { values: Vec<ValueId>, span: Span, is_def: bool },
    /// `@name`: a use (in a sharding, a call, ...) or the name in its definition.
    Symbol { name: String, kind: SymbolKind, span: Span, is_def: bool },
}

impl Target {
    pub fn span(&self) -> Span {
        match self {
            Target::Value { span, .. } | Target::Symbol { span, .. } => *span,
        }
    }
}

/// Finds the innermost op around an offset. The model's ops are already sorted by start
/// (pre-order, a parent before a child at the same offset), so this holds nothing: a
/// copy sorted anew per revision cost milliseconds on the first request after each edit.
#[derive(Clone, Debug, Default)]
pub struct Index {}

impl Index {
    pub fn new(_model: &Model) -> Index {
        Index {}
    }

    /// The innermost op whose text holds `offset` (its end included, for a cursor right
    /// after the last token).
    pub fn op_at(&self, model: &Model, offset: u32) -> Option<OpId> {
        innermost_op(model, offset, true)
    }

    /// The value or symbol at `offset`.
    pub fn target_at(&self, model: &Model, offset: u32) -> Option<Target> {
        let id = self.op_at(model, offset)?;
        value_at(model, id, offset).or_else(|| symbol_at(model, id, offset))
    }

    /// The axis name at `offset`: an axis of a mesh, of a sharding or of an axis list.
    pub fn axis_at(&self, model: &Model, offset: u32) -> Option<AxisTarget> {
        let id = self.op_at(model, offset)?;
        let mut found = None;
        op_occurrences(model, id, &mut |o| {
            if let Occurrence::Axis { scope, name, span, is_def } = o {
                if found.is_none() && span.touches(offset) {
                    found = Some(AxisTarget {
                        of: AxisOf::from(scope),
                        name: name.into(),
                        span,
                        is_def,
                        op: id,
                    });
                }
            }
        });
        found
    }
}

/// The innermost op whose text holds `offset`; with `end_included`, also when `offset`
/// is right after its last token (a cursor).
pub fn innermost_op(model: &Model, offset: u32, end_included: bool) -> Option<OpId> {
    // Ops are in pre-order (sorted by start) and nest, so the innermost op holding
    // `offset` is the last one starting at or before it, or one of its ancestors: a
    // binary search, not a scan (hover on a 100k-line file).
    let last = model.ops.partition_point(|o| o.start <= offset).checked_sub(1)? as OpId;
    let holds = |s: Span| if end_included { s.touches(offset) } else { s.contains(offset) };
    std::iter::once(last).chain(model.ancestors(last)).find(|&id| holds(model.op(id).span()))
}

/// Which mesh an axis name belongs to (the owned form of [`AxisScope`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisOf {
    Mesh(String),
    /// An inline mesh, by its span.
    Inline(Span),
    /// An axis list of this op: the mesh of the op's shardings.
    List(OpId),
}

impl From<AxisScope<'_>> for AxisOf {
    fn from(s: AxisScope<'_>) -> AxisOf {
        match s {
            AxisScope::Mesh(m) => AxisOf::Mesh(m.to_string()),
            AxisScope::Inline(span) => AxisOf::Inline(span),
            AxisScope::List(op) => AxisOf::List(op),
        }
    }
}

/// An axis name under the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisTarget {
    pub of: AxisOf,
    /// As written between the quotes.
    pub name: String,
    /// The quoted name (`"x"`, also of a sub-axis `"x":(1)2`).
    pub span: Span,
    /// In a mesh (`sdy.mesh` or inline), rather than a use.
    pub is_def: bool,
    /// The op the name is written in.
    pub op: OpId,
}

/// Where an axis is defined: its quoted name in the mesh (`"x"` of `"x"=2`). An axis
/// list whose op names several meshes gives the axis in each of them.
pub fn axis_definitions(model: &Model, target: &AxisTarget) -> Vec<Span> {
    let meshes: Vec<&str> = match &target.of {
        AxisOf::Mesh(m) => vec![m.as_str()],
        AxisOf::List(op) => list_meshes(model, *op),
        AxisOf::Inline(mesh) => {
            let mut defs = Vec::new();
            op_occurrences(model, target.op, &mut |o| match o {
                Occurrence::Axis { scope: AxisScope::Inline(s), name, span, is_def: true }
                    if s == *mesh && name == target.name =>
                {
                    defs.push(span)
                }
                _ => {}
            });
            return defs;
        }
    };
    meshes.into_iter().filter_map(|m| mesh_axis_name_span(model, m, &target.name)).collect()
}

/// The quoted name of axis `axis` in the definition of mesh `mesh`.
pub fn mesh_axis_name_span(model: &Model, mesh: &str, axis: &str) -> Option<Span> {
    let op = model.mesh(mesh)?.op;
    let mut def = None;
    op_occurrences(model, op, &mut |o| match o {
        Occurrence::Axis { scope: AxisScope::Mesh(_), name, span, is_def: true }
            if name == axis && def.is_none() =>
        {
            def = Some(span)
        }
        _ => {}
    });
    def
}

/// The operand a block argument of `sdy.manual_computation` or `sdy.named_computation`
/// stands for (argument `i` of the body is operand `i` of the op): the operand's span.
pub fn computation_operand(model: &Model, v: ValueId) -> Option<Span> {
    let ValueDef::BlockArg { op, region: 0, block: 0, index } = model.value(v).def else {
        return None;
    };
    let info = model.op(op);
    if !matches!(info.name(), "sdy.manual_computation" | "sdy.named_computation") {
        return None;
    }
    Some(info.node.operands.get(index as usize)?.span.shift(info.start))
}

/// A value defined or used by op `id` itself (not by a nested op) at `offset`.
fn value_at(model: &Model, id: OpId, offset: u32) -> Option<Target> {
    let info = model.op(id);
    for (i, r) in info.node.operands.iter().enumerate() {
        let span = r.span.shift(info.start);
        if span.touches(offset) {
            let v = (*info.operands.get(i)?)?;
            return Some(Target::Value { values: vec![v], span, is_def: false });
        }
    }
    // Result groups: every value of a group has the group's name span.
    let mut group: Vec<ValueId> = Vec::new();
    let mut group_span = None;
    for &v in &info.results {
        let span = model.value(v).span;
        if span.touches(offset) && group_span.is_none_or(|s| s == span) {
            group_span = Some(span);
            group.push(v);
        }
    }
    if let Some(span) = group_span {
        return Some(Target::Value { values: group, span, is_def: true });
    }
    // Block and function arguments.
    let entry_args = info.region_args.iter().flatten().copied();
    let multi_block = info.node.regions.iter().any(|r| r.blocks.len() > 1);
    // Arguments of later blocks are not listed per op: find them by their definition.
    let later_args = (0..model.values.len() as ValueId).filter(|&v| {
        multi_block
            && matches!(model.value(v).def, ValueDef::BlockArg { op, block, .. } if op == id && block > 0)
    });
    entry_args.chain(later_args).find_map(|v| {
        let span = model.value(v).span;
        span.touches(offset).then(|| Target::Value { values: vec![v], span, is_def: true })
    })
}

/// A symbol named by op `id` itself at `offset`: its own name (`sdy.mesh @m`,
/// `func.func @f`) or a reference in its attributes.
fn symbol_at(model: &Model, id: OpId, offset: u32) -> Option<Target> {
    let info = model.op(id);
    let base = info.start;
    let own = match &info.node.custom {
        Custom::Mesh { sym } => Some((&**sym, SymbolKind::Mesh)),
        Custom::Func(f) => Some((&f.sym, SymbolKind::Func)),
        _ => None,
    };
    if let Some((sym, kind)) = own {
        let span = sym.span.shift(base);
        if span.touches(offset) {
            return Some(Target::Symbol { name: sym.text.to_string(), kind, span, is_def: true });
        }
    }
    let (name, span) = symbol_ref_in_op(&info.node, offset.checked_sub(base)?)?;
    let kind = if model.mesh(&name).is_some() {
        SymbolKind::Mesh
    } else if model.funcs.contains_key(&name) {
        SymbolKind::Func
    } else {
        SymbolKind::Unknown
    };
    Some(Target::Symbol { name, kind, span: span.shift(base), is_def: false })
}

/// A symbol reference (`@name` in any attribute of the op, shardings included) at `rel`
/// (relative to the op): its name and op-relative span.
fn symbol_ref_in_op(op: &Op, rel: u32) -> Option<(String, Span)> {
    let mut dicts: Vec<&AttrDict> = op.attrs.iter().collect();
    match &op.custom {
        Custom::Func(f) => {
            dicts.extend(f.args.iter().filter_map(|a| a.attrs.as_ref()));
            dicts.extend(f.results.iter().filter_map(|r| r.attrs.as_ref()));
            dicts.extend(f.fn_attrs.as_ref());
        }
        Custom::Module(m) => dicts.extend(m.attrs.as_ref()),
        _ => {}
    }
    for r in &op.regions {
        for b in &r.blocks {
            dicts.extend(b.args.iter().filter_map(|a| a.attrs.as_ref()));
        }
    }
    let named = op.inherent.iter().chain(dicts.into_iter().flat_map(|d| &d.entries));
    named.filter(|a: &&NamedAttr| a.span.touches(rel)).find_map(|a| in_attr(a.value.as_ref()?, rel))
}

fn in_attr(attr: &Attr, rel: u32) -> Option<(String, Span)> {
    if !attr.span.touches(rel) {
        return None;
    }
    match &attr.kind {
        AttrKind::Symbol(name) => Some((name.to_string(), attr.span)),
        AttrKind::Array(items) => items.iter().find_map(|a| in_attr(a, rel)),
        AttrKind::Dict(d) => {
            d.entries.iter().filter_map(|a| a.value.as_ref()).find_map(|a| in_attr(a, rel))
        }
        AttrKind::Sdy(s) => match &**s {
            SdyAttr::Sharding(sh) => in_sharding(sh, rel),
            SdyAttr::PerValue(p) => p.shardings.iter().find_map(|sh| in_sharding(sh, rel)),
            _ => None,
        },
        _ => None,
    }
}

fn in_sharding(sh: &ShardingAst, rel: u32) -> Option<(String, Span)> {
    match &sh.mesh {
        MeshRefAst::Symbol { name, span } if span.touches(rel) => Some((name.to_string(), *span)),
        _ => None,
    }
}

/// Where a target is defined: the name of the value or symbol in its definition. From
/// the block argument of a manual or named computation, the operand it stands for.
pub fn definition(model: &Model, target: &Target) -> Option<Span> {
    match target {
        Target::Value { values, is_def: true, .. }
            if values.len() == 1 && computation_operand(model, values[0]).is_some() =>
        {
            computation_operand(model, values[0])
        }
        Target::Value { values, .. } => values.first().map(|&v| model.value(v).span),
        Target::Symbol { name, kind: SymbolKind::Mesh, .. } => Some(model.mesh(name)?.name_span),
        Target::Symbol { name, kind: SymbolKind::Func, .. } => {
            let info = model.op(*model.funcs.get(name)?);
            match &info.node.custom {
                Custom::Func(f) => Some(f.sym.span.shift(info.start)),
                _ => Some(info.name_span()),
            }
        }
        Target::Symbol { kind: SymbolKind::Unknown, .. } => None,
    }
}

/// The op that defines a value (its result's op, or the op owning the argument's region).
pub fn defining_op(model: &Model, v: ValueId) -> OpId {
    match model.value(v).def {
        ValueDef::Result { op, .. } | ValueDef::BlockArg { op, .. } => op,
    }
}

/// Where the value's type is written (absolute), when it is.
pub fn type_span(model: &Model, v: ValueId) -> Option<Span> {
    let ty = model.value(v).ty.as_ref()?;
    // Types are spans in the defining op's text (results: its signature; arguments: the
    // region's or function's header).
    Some(ty.span.shift(model.op(defining_op(model, v)).start))
}

/// The text of a mesh definition up to the end of the mesh itself
/// (`sdy.mesh @m = <[...]>`, without trailing attributes and location).
pub fn mesh_definition_span(model: &Model, name: &str) -> Option<Span> {
    let m = model.mesh(name)?;
    let op = model.op(m.op);
    let end = m.mesh.as_ref().map_or(op.span().end, |mesh| mesh.span.end);
    Some(Span::new(op.start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_chunks;

    const SRC: &str = r#"sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0:2 = call @helper(%arg0) : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>)
  %1 = stablehlo.add %0#0, %arg0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
func.func private @helper(%a: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %c = stablehlo.constant dense<0.0> : tensor<8xf32>
  return %a, %c : tensor<8x8xf32>, tensor<8xf32>
}
"#;

    /// The offset `delta` bytes into the `nth` (0-based) occurrence of `needle`.
    fn at(needle: &str, nth: usize, delta: u32) -> u32 {
        let mut from = 0;
        for _ in 0..nth {
            from += SRC[from..].find(needle).unwrap() + 1;
        }
        (from + SRC[from..].find(needle).unwrap()) as u32 + delta
    }

    fn describe(offset: u32) -> String {
        let chunk = &parse_chunks(SRC, false)[0];
        let model = Model::build(chunk);
        let index = Index::new(&model);
        let Some(t) = index.target_at(&model, offset) else { return "nothing".into() };
        let text = |s: Span| s.text(SRC).to_string();
        let def = definition(&model, &t).map(|s| format!("{}@{}", text(s), s.start));
        match &t {
            Target::Value { values, span, is_def } => {
                let tys: Vec<String> =
                    values.iter().map(|&v| type_span(&model, v).map_or("?".into(), text)).collect();
                format!("value {} def={is_def} types={tys:?} -> {def:?}", text(*span))
            }
            Target::Symbol { name, kind, span, is_def } => {
                format!("symbol {name} {kind:?} at {} def={is_def} -> {def:?}", text(*span))
            }
        }
    }

    #[test]
    fn targets() {
        let cases = [
            describe(at("%arg0:", 0, 2)),
            describe(at("%arg0)", 0, 0)),
            describe(at("%0:2", 0, 1)),
            describe(at("%0#0", 0, 3)),
            describe(at("%1 =", 0, 2)),
            describe(at("@mesh,", 0, 2)),
            describe(at("@mesh =", 0, 1)),
            describe(at("@helper(", 0, 3)),
            describe(at("@helper(", 1, 3)),
            describe(at("%c :", 0, 0)),
            describe(at("stablehlo.add", 0, 3)),
        ];
        expect_test::expect![[r#"
            value %arg0 def=true types=["tensor<8x8xf32>"] -> Some("%arg0@50")
            value %arg0 def=false types=["tensor<8x8xf32>"] -> Some("%arg0@50")
            value %0 def=true types=["tensor<8x8xf32>", "tensor<8xf32>"] -> Some("%0@148")
            value %0#0 def=false types=["tensor<8x8xf32>"] -> Some("%0@148")
            value %1 def=true types=["tensor<8x8xf32>"] -> Some("%1@233")
            symbol mesh Mesh at @mesh def=false -> Some("@mesh@9")
            symbol mesh Mesh at @mesh def=true -> Some("@mesh@9")
            symbol helper Func at @helper def=false -> Some("@helper@332")
            symbol helper Func at @helper def=true -> Some("@helper@332")
            value %c def=false types=["tensor<8xf32>"] -> Some("%c@401")
            nothing"#]]
        .assert_eq(&cases.join("\n"));
    }

    #[test]
    fn innermost_op_by_binary_search() {
        let chunk = &parse_chunks(SRC, false)[0];
        let model = Model::build(chunk);
        let index = Index::new(&model);
        let name = |o: u32| index.op_at(&model, o).map(|id| model.op(id).name().to_string());
        assert_eq!(name(at("stablehlo.add", 0, 0)).as_deref(), Some("stablehlo.add"));
        // Between two ops of a body: the function.
        assert_eq!(name(at("\n  return %1", 0, 0) + 1).as_deref(), Some("func.func"));
        // Right after an op's last token still counts as in it; past that, nothing.
        assert_eq!(name(SRC.len() as u32 - 1).as_deref(), Some("func.func"));
        assert_eq!(name(SRC.len() as u32).as_deref(), None);
    }
}
