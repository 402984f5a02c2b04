//! The IR every pass rewrites and the printer prints: a small mutable module built
//! from the syntax tree ([`build_module`]), printed by [`crate::print`] the way
//! `sdy_opt` prints it.
//!
//! * ops read from the source keep their absolute start offset ([`Op::origin`], the
//!   same key as `model::OpInfo::start`), which identifies them across the tree, the
//!   semantic model and the IR; [`Module::op_at_mut`] finds them. Ops made by a pass
//!   have no origin;
//! * operands, results and block arguments are [`ValueId`]s in the order the tree
//!   lists them (function arguments are the entry block arguments of the body;
//!   `stablehlo.reduce` block arguments are in MLIR's order `[lhs..., rhs...]`);
//!   nothing here stores SSA names: printing numbers values the way MLIR does;
//! * attributes are values ([`Attr`]: shardings, sharding rules, axis lists, ...; other
//!   attributes their canonical text), set with [`Op::set_attr`] (`sdy.sharding`),
//!   [`Op::set_prop`] (`sharding`, `out_sharding`, `in_shardings`, ...) or
//!   [`FuncSlot::set_attr`] (function arguments and results); [`attr`] also spells them
//!   as MLIR does (the builder needs it to expand aliases, the printer to print);
//! * new ops ([`Op::pretty`], e.g. `sdy.reshard`, `sdy.all_reduce`) are inserted in a
//!   block's `ops`, with results from [`Module::new_value`]; [`Op::replace_uses`]
//!   rewires the users;
//! * source text the IR keeps as text (types, attributes it does not model, the custom
//!   forms of ops without a printer of their own) is normalised once, when built
//!   ([`text`], [`float`]).
//!
//! ```text
//! let mut m = build_module(src, &chunk);
//! if let Some(op) = m.op_at_mut(origin) {
//!     op.set_attr("sdy.sharding", Attr::PerValue(vec![sharding]));
//! }
//! print!("{}", crate::print::print_module(&m));
//! ```

pub mod attr;
pub mod build;
mod elements;
pub mod float;
pub mod kind;
pub mod sdy;
pub mod stablehlo;
pub mod text;

pub use attr::{Attr, NamedAttr};
pub use build::build_module;
pub use kind::OpKind;
use sdy_syntax::tree::Str;

/// An SSA value: an index into [`Module::values`].
pub type ValueId = u32;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueInfo {
    /// The canonical type text, when known (`tensor<8x8xf32>`).
    pub ty: Option<String>,
}

/// A module: the value table and the `builtin.module` op (implicit or written).
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub values: Vec<ValueInfo>,
    pub top: Op,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Region {
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub args: Vec<ValueId>,
    pub ops: Vec<Op>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// Absolute document offset of the op's start, for ops read from the source.
    pub origin: Option<u32>,
    /// The full op name (`func.func`, `stablehlo.add`, `sdy.reshard`); shared, not
    /// copied, by the copies of the op and the propagation index.
    pub name: Str,
    /// The kind of `name`, kept with it ([`Op::set_name`]); what passes dispatch on.
    pub kind: OpKind,
    pub results: Vec<ValueId>,
    pub operands: Vec<ValueId>,
    /// Inherent attributes (MLIR properties), by name: `sharding`, `out_sharding`,
    /// `in_shardings`, `manual_axes`, `sym_name`, ...
    pub props: Vec<NamedAttr>,
    /// The discardable attribute dictionary (`sdy.sharding`, `sdy.sharding_rule`, ...).
    pub attrs: Vec<NamedAttr>,
    pub regions: Vec<Region>,
    pub syntax: Syntax,
}

/// How an op is printed.
#[derive(Clone, Debug, PartialEq)]
pub enum Syntax {
    /// `"name"(%a) <{props}> ({...}) {attrs} : (T) -> R`
    Generic,
    /// MLIR's custom form, printed from `props` by a printer that knows the op
    /// (sdy ops, returns, `builtin.module`, constants, elementwise ops).
    Pretty,
    /// `func.func` with its signature and argument/result attributes.
    Func(Box<FuncInfo>),
    /// Another op's custom form, re-emitted from its tokens.
    Custom(Box<Template>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncInfo {
    /// `private`, `nested` or `public` when written.
    pub visibility: Option<String>,
    pub sym: String,
    /// Argument types and attributes (the entry block args are the values).
    pub args: Vec<FuncSlot>,
    pub results: Vec<FuncSlot>,
    /// `attributes {...}`
    pub fn_attrs: Vec<NamedAttr>,
}

/// A function argument or result: its type and attribute dictionary.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncSlot {
    pub ty: String,
    pub attrs: Vec<NamedAttr>,
}

impl FuncSlot {
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name).map(|a| &a.value)
    }
    pub fn set_attr(&mut self, name: &str, value: Attr) {
        set_in(&mut self.attrs, name, value)
    }
    pub fn remove_attr(&mut self, name: &str) -> Option<Attr> {
        remove_in(&mut self.attrs, name)
    }
}

/// The custom form of an op we have no dedicated printer for: its source tokens, with
/// the parts that the IR owns (operands, block arguments, regions, the attribute
/// dictionary) left as holes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Template {
    pub pieces: Vec<Piece>,
}

impl Template {
    /// The literal texts, in order (the holes left out).
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match &p.kind {
            PieceKind::Text(s) => Some(s.as_str()),
            _ => None,
        })
    }
    /// The literal texts joined by spaces, for reading values the tokens spell.
    pub fn joined_text(&self) -> String {
        self.texts().collect::<Vec<_>>().join(" ")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// Whether a space separates this piece from the previous one.
    pub space_before: bool,
    pub kind: PieceKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PieceKind {
    /// Literal text (already normalised; short tokens stay inline, unallocated).
    Text(Str),
    /// `op.operands[i]`
    Operand(usize),
    /// Argument `j` of the entry block of region `i`.
    BlockArg(usize, usize),
    /// `op.regions[i]` (entry block arguments not printed).
    Region(usize),
    /// The attribute dictionary, printed only when not empty; `keyword` prints it as
    /// `attributes {...}`.
    AttrDict { keyword: bool },
    /// A line break at the op's indentation (`stablehlo.while`'s `cond`).
    Newline,
}

fn set_in(list: &mut Vec<NamedAttr>, name: &str, value: Attr) {
    match list.iter_mut().find(|a| a.name == name) {
        Some(a) => a.value = value,
        None => list.push(NamedAttr::new(name, value)),
    }
}

fn remove_in(list: &mut Vec<NamedAttr>, name: &str) -> Option<Attr> {
    let i = list.iter().position(|a| a.name == name)?;
    Some(list.remove(i).value)
}

impl Op {
    /// A new op without origin, printed in its pretty form (sdy ops, returns...).
    pub fn pretty(
        name: &str,
        operands: Vec<ValueId>,
        results: Vec<ValueId>,
        props: Vec<NamedAttr>,
    ) -> Op {
        Op {
            origin: None,
            name: name.into(),
            kind: OpKind::of(name),
            results,
            operands,
            props,
            attrs: Vec::new(),
            regions: Vec::new(),
            syntax: Syntax::Pretty,
        }
    }

    /// The op's kind (computed when it was built or made).
    pub fn kind(&self) -> OpKind {
        self.kind
    }
    /// Renames the op, keeping its kind in step.
    pub fn set_name(&mut self, name: &str) {
        self.name = name.into();
        self.kind = OpKind::of(name);
    }

    /// A discardable attribute.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name).map(|a| &a.value)
    }
    pub fn set_attr(&mut self, name: &str, value: Attr) {
        set_in(&mut self.attrs, name, value)
    }
    pub fn remove_attr(&mut self, name: &str) -> Option<Attr> {
        remove_in(&mut self.attrs, name)
    }
    /// An inherent attribute.
    pub fn prop(&self, name: &str) -> Option<&Attr> {
        self.props.iter().find(|a| a.name == name).map(|a| &a.value)
    }
    pub fn set_prop(&mut self, name: &str, value: Attr) {
        set_in(&mut self.props, name, value)
    }

    pub fn func(&self) -> Option<&FuncInfo> {
        match &self.syntax {
            Syntax::Func(f) => Some(f),
            _ => None,
        }
    }
    pub fn func_mut(&mut self) -> Option<&mut FuncInfo> {
        match &mut self.syntax {
            Syntax::Func(f) => Some(f),
            _ => None,
        }
    }

    /// Visits this op and every op nested in it, parents first.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Op)) {
        f(self);
        for r in &self.regions {
            for b in &r.blocks {
                for op in &b.ops {
                    op.walk(f);
                }
            }
        }
    }
    pub fn walk_mut(&mut self, f: &mut impl FnMut(&mut Op)) {
        f(self);
        for r in &mut self.regions {
            for b in &mut r.blocks {
                for op in &mut b.ops {
                    op.walk_mut(f);
                }
            }
        }
    }

    /// Replaces every use of `from` by `to` in this op and the ops nested in it.
    pub fn replace_uses(&mut self, from: ValueId, to: ValueId) {
        self.walk_mut(&mut |op| {
            for v in &mut op.operands {
                if *v == from {
                    *v = to;
                }
            }
        });
    }
}

impl Module {
    /// A new SSA value of type `ty`.
    pub fn new_value(&mut self, ty: Option<String>) -> ValueId {
        self.values.push(ValueInfo { ty });
        (self.values.len() - 1) as ValueId
    }
    pub fn ty(&self, v: ValueId) -> Option<&str> {
        self.values.get(v as usize).and_then(|i| i.ty.as_deref())
    }
    /// The ops of the module body (`sdy.mesh`, `func.func`, ...).
    pub fn body(&self) -> &[Op] {
        self.top.regions.first().and_then(|r| r.blocks.first()).map_or(&[], |b| &b.ops)
    }
    pub fn body_mut(&mut self) -> Option<&mut Vec<Op>> {
        self.top.regions.first_mut().and_then(|r| r.blocks.first_mut()).map(|b| &mut b.ops)
    }
    /// The op read from the source at absolute offset `origin`.
    pub fn op_at(&self, origin: u32) -> Option<&Op> {
        let mut found = None;
        self.top.walk(&mut |op| {
            if found.is_none() && op.origin == Some(origin) {
                found = Some(op);
            }
        });
        found
    }
    pub fn op_at_mut(&mut self, origin: u32) -> Option<&mut Op> {
        fn go(op: &mut Op, origin: u32) -> Option<&mut Op> {
            if op.origin == Some(origin) {
                return Some(op);
            }
            for r in &mut op.regions {
                for b in &mut r.blocks {
                    for c in &mut b.ops {
                        if let Some(f) = go(c, origin) {
                            return Some(f);
                        }
                    }
                }
            }
            None
        }
        go(&mut self.top, origin)
    }
}

/// The `manual_axes` of a `sdy.manual_computation` (none for other ops).
pub fn manual_axes(op: &Op) -> Vec<String> {
    match op.prop("manual_axes") {
        Some(Attr::AxisList(v)) => v.iter().map(|a| a.name.to_string()).collect(),
        _ => Vec::new(),
    }
}
