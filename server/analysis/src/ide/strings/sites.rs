//! Finding the string attributes that hold sdy or GSPMD text, and where they sit.

use super::escape::Unescaped;
use crate::model::{Model, OpId};
use sdy_syntax::tree::{AttrDict, AttrKind, Children, Custom, Op, StmtKind};
use sdy_syntax::Span;

/// What a string attribute holds, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `xla.sdy.sharding`: `#sdy.sharding<...>` on arguments and results,
    /// `#sdy.sharding_per_value<[...]>` on ops.
    Sharding,
    /// `xla.sdy.in_shardings` / `xla.sdy.out_shardings` of a round-tripped
    /// `shard_map` body call: `#sdy.sharding_per_value<[...]>`.
    InShardings,
    OutShardings,
    /// `xla.sdy.manual_axes`: `#sdy<manual_axes{...}>`.
    ManualAxes,
    /// `xla.sdy.meshes` on the module: `{name = #sdy.mesh<...>, ...}`.
    Meshes,
    /// `xla.sdy.sharding_rule`: `#sdy.op_sharding_rule<...>`.
    Rule,
    /// `mhlo.sharding`: a GSPMD `HloSharding`.
    Gspmd,
}

impl Kind {
    fn of(name: &str) -> Option<Kind> {
        Some(match name {
            "xla.sdy.sharding" => Kind::Sharding,
            "xla.sdy.in_shardings" => Kind::InShardings,
            "xla.sdy.out_shardings" => Kind::OutShardings,
            "xla.sdy.manual_axes" => Kind::ManualAxes,
            "xla.sdy.meshes" => Kind::Meshes,
            "xla.sdy.sharding_rule" => Kind::Rule,
            "mhlo.sharding" => Kind::Gspmd,
            _ => return None,
        })
    }

    pub fn key(self) -> &'static str {
        match self {
            Kind::Sharding => "xla.sdy.sharding",
            Kind::InShardings => "xla.sdy.in_shardings",
            Kind::OutShardings => "xla.sdy.out_shardings",
            Kind::ManualAxes => "xla.sdy.manual_axes",
            Kind::Meshes => "xla.sdy.meshes",
            Kind::Rule => "xla.sdy.sharding_rule",
            Kind::Gspmd => "mhlo.sharding",
        }
    }
}

/// What the attribute is attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// The chunk's `module` op.
    Module,
    FuncArg {
        func: OpId,
        index: u32,
    },
    FuncResult {
        func: OpId,
        index: u32,
    },
    /// An op's own attributes (the sharding of its results).
    Op(OpId),
}

/// A string attribute holding sdy or GSPMD text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Embedded {
    pub kind: Kind,
    pub place: Place,
    /// The string literal, quotes included (absolute).
    pub literal: Span,
    /// Its decoded text, with absolute source offsets.
    pub text: Unescaped,
}

/// The chunk's explicit `module` op (a lone `module` among aliases, as
/// `Chunk::module_body` reads it) and its absolute start.
pub fn module_of(chunk_start: u32, top: &Children) -> Option<(u32, &Op)> {
    let mut module = None;
    for c in top {
        match c.op.kind {
            StmtKind::AliasDef | StmtKind::Resource => {}
            StmtKind::Op if c.op.full_name() == "builtin.module" && module.is_none() => {
                module = Some((chunk_start + c.offset, &**c.op))
            }
            _ => return None,
        }
    }
    module
}

/// Which strings to decode, by kind, place and literal (the others are skipped unread).
pub type Keep<'a> = &'a dyn Fn(Kind, Place, Span) -> bool;

/// Every string.
pub const ALL: Keep<'static> = &|_, _, _| true;

/// The strings on the module op (custom form: `module attributes {...}`; generic form:
/// its attribute dictionary).
pub fn in_module(start: u32, op: &Op, keep: Keep, out: &mut Vec<Embedded>) {
    if let Custom::Module(h) = &op.custom {
        if let Some(d) = &h.attrs {
            walk(d, start, Place::Module, keep, out);
        }
    }
    if let Some(d) = &op.attrs {
        walk(d, start, Place::Module, keep, out);
    }
}

/// The strings on op `id`: its attributes, and for functions those of each argument and
/// result (custom form, or the generic form's `arg_attrs`/`res_attrs`).
pub fn in_op(model: &Model, id: OpId, keep: Keep, out: &mut Vec<Embedded>) {
    let info = model.op(id);
    let (node, base) = (&info.node, info.start);
    if let Some(d) = &node.attrs {
        walk(d, base, Place::Op(id), keep, out);
    }
    if let Custom::Func(f) = &node.custom {
        for (i, a) in f.args.iter().enumerate() {
            if let Some(d) = &a.attrs {
                walk(d, base, Place::FuncArg { func: id, index: i as u32 }, keep, out);
            }
        }
        for (i, r) in f.results.iter().enumerate() {
            if let Some(d) = &r.attrs {
                walk(d, base, Place::FuncResult { func: id, index: i as u32 }, keep, out);
            }
        }
        if let Some(d) = &f.fn_attrs {
            walk(d, base, Place::Op(id), keep, out);
        }
    }
    for (key, arg) in [("arg_attrs", true), ("res_attrs", false)] {
        let Some(AttrKind::Array(items)) =
            node.inherent_attr(key).and_then(|a| a.value.as_ref()).map(|v| &v.kind)
        else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            if let AttrKind::Dict(d) = &item.kind {
                let index = i as u32;
                let place = if arg {
                    Place::FuncArg { func: id, index }
                } else {
                    Place::FuncResult { func: id, index }
                };
                walk(d, base, place, keep, out);
            }
        }
    }
}

/// Every such string of the chunk: the module's, then the ops' in op order. Cheap when
/// the text names none of the attributes.
pub fn all(model: &Model, src: &str, module: Option<(u32, &Op)>) -> Vec<Embedded> {
    let mut out = Vec::new();
    let bytes = src.as_bytes();
    if memchr::memmem::find(bytes, b"xla.sdy.").is_none()
        && memchr::memmem::find(bytes, b"mhlo.sharding").is_none()
    {
        return out;
    }
    if let Some((start, op)) = module {
        in_module(start, op, ALL, &mut out);
    }
    for id in 0..model.ops.len() as OpId {
        in_op(model, id, ALL, &mut out);
    }
    out
}

/// The strings of a dictionary, searching nested dictionaries
/// (`mhlo.frontend_attributes = {xla.sdy.sharding = "..."}`).
fn walk(dict: &AttrDict, base: u32, place: Place, keep: Keep, out: &mut Vec<Embedded>) {
    for e in &dict.entries {
        let Some(v) = &e.value else { continue };
        match &v.kind {
            AttrKind::String { raw } => {
                let Some(kind) = Kind::of(&e.name) else { continue };
                let start = base + v.span.start;
                let literal = Span::new(start, start + raw.len() as u32 + 2);
                if !keep(kind, place, literal) {
                    continue;
                }
                let Some(text) = Unescaped::decode(raw, start + 1) else { continue };
                out.push(Embedded { kind, place, literal, text });
            }
            AttrKind::Dict(d) => walk(d, base, place, keep, out),
            _ => {}
        }
    }
}
