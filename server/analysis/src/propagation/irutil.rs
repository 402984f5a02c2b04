//! Small helpers over the printable IR used by the structural passes: calls and
//! functions, deep cloning with value remapping, symbol uniquing, and a walk over
//! every sharding of the module.

use crate::ir::attr::NamedAttr;
use crate::ir::{
    Attr, Block, FuncInfo, FuncSlot, Module, Op, OpKind, PieceKind, Region, Syntax, ValueId,
};
use crate::sharding::TensorSharding;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::borrow::Cow;

/// The callee of a `func.call` (the `callee` property, or the `@sym` of its custom form).
pub fn callee(op: &Op) -> Option<String> {
    callee_ref(op).map(Cow::into_owned)
}

/// [`callee`], borrowed unless the name has escapes.
pub fn callee_ref(op: &Op) -> Option<Cow<'_, str>> {
    if let Some(Attr::Symbol(s)) = op.prop("callee") {
        return Some(Cow::Borrowed(s));
    }
    if let Syntax::Custom(t) = &op.syntax {
        for p in &t.pieces {
            if let PieceKind::Text(s) = &p.kind {
                if let Some(rest) = s.strip_prefix('@') {
                    let name = rest.trim_matches('"');
                    return Some(if name.contains('\\') {
                        Cow::Owned(sdy_syntax::escape::unescape(name))
                    } else {
                        Cow::Borrowed(name)
                    });
                }
            }
        }
    }
    None
}

/// Points a `func.call` at `name` (printed in its pretty form from now on).
pub fn set_callee(op: &mut Op, name: &str) {
    op.syntax = Syntax::Pretty;
    op.set_prop("callee", Attr::Symbol(name.to_string()));
}

/// A new `func.call @callee(operands)`.
pub fn make_call(callee: &str, operands: Vec<ValueId>, results: Vec<ValueId>) -> Op {
    Op::pretty(
        "func.call",
        operands,
        results,
        vec![NamedAttr::new("callee", Attr::Symbol(callee.to_string()))],
    )
}

pub fn func_sym(op: &Op) -> Option<&str> {
    op.func().map(|f| f.sym.as_str())
}

pub fn is_private(op: &Op) -> bool {
    op.func().is_some_and(|f| f.visibility.as_deref() == Some("private"))
}

/// `sdy.original_func_name`, else the symbol.
pub fn original_func_name(op: &Op) -> Option<String> {
    let f = op.func()?;
    for a in &f.fn_attrs {
        if a.name == "sdy.original_func_name" {
            if let Attr::Str(s) = &a.value {
                return Some(String::from_utf8_lossy(s).into_owned());
            }
        }
    }
    Some(f.sym.clone())
}

pub fn set_fn_attr(op: &mut Op, name: &str, value: Attr) {
    if let Some(f) = op.func_mut() {
        match f.fn_attrs.iter_mut().find(|a| a.name == name) {
            Some(a) => a.value = value,
            None => f.fn_attrs.push(NamedAttr::new(name, value)),
        }
    }
}

pub fn remove_fn_attr(op: &mut Op, name: &str) {
    if let Some(f) = op.func_mut() {
        f.fn_attrs.retain(|a| a.name != name);
    }
}

/// A new private function.
pub fn make_func(
    sym: &str,
    args: Vec<(ValueId, String)>,
    results: Vec<String>,
    ops: Vec<Op>,
) -> Op {
    let info = FuncInfo {
        visibility: Some("private".into()),
        sym: sym.to_string(),
        args: args.iter().map(|(_, t)| FuncSlot { ty: t.clone(), attrs: Vec::new() }).collect(),
        results: results.into_iter().map(|t| FuncSlot { ty: t, attrs: Vec::new() }).collect(),
        fn_attrs: Vec::new(),
    };
    Op {
        origin: None,
        name: "func.func".into(),
        kind: OpKind::FuncFunc,
        results: Vec::new(),
        operands: Vec::new(),
        props: Vec::new(),
        attrs: Vec::new(),
        regions: vec![Region {
            blocks: vec![Block { args: args.into_iter().map(|(v, _)| v).collect(), ops }],
        }],
        syntax: Syntax::Func(Box::new(info)),
    }
}

/// Clones `op` and everything in it with fresh results and block arguments; operands
/// defined outside are looked up in `map` (kept when absent).
pub fn clone_op(m: &mut Module, op: &Op, map: &mut HashMap<ValueId, ValueId>) -> Op {
    let mut c = op.clone();
    c.results = op
        .results
        .iter()
        .map(|&r| {
            let nv = m.new_value(m.ty(r).map(str::to_string));
            map.insert(r, nv);
            nv
        })
        .collect();
    c.operands = op.operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    c.regions = op
        .regions
        .iter()
        .map(|r| Region {
            blocks: r
                .blocks
                .iter()
                .map(|b| {
                    let args = b
                        .args
                        .iter()
                        .map(|&a| {
                            let nv = m.new_value(m.ty(a).map(str::to_string));
                            map.insert(a, nv);
                            nv
                        })
                        .collect();
                    Block { args, ops: Vec::new() }
                })
                .collect(),
        })
        .collect();
    for (ri, r) in op.regions.iter().enumerate() {
        for (bi, b) in r.blocks.iter().enumerate() {
            let ops: Vec<Op> = b.ops.iter().map(|o| clone_op(m, o, map)).collect();
            c.regions[ri].blocks[bi].ops = ops;
        }
    }
    c
}

/// A module's symbol names with MLIR's uniquing (`name_0`, `name_1`, ... with one
/// counter per symbol table).
pub struct SymbolTable {
    names: HashSet<String>,
    counter: u32,
}

impl SymbolTable {
    pub fn new(m: &Module) -> SymbolTable {
        let mut names = HashSet::default();
        for op in m.body() {
            if let Some(s) = func_sym(op) {
                names.insert(s.to_string());
            } else if let Some(Attr::Str(s)) = op.prop("sym_name") {
                names.insert(String::from_utf8_lossy(s).into_owned());
            }
        }
        SymbolTable { names, counter: 0 }
    }
    /// The name `name` gets when inserted.
    pub fn insert(&mut self, name: &str) -> String {
        if self.names.insert(name.to_string()) {
            return name.to_string();
        }
        loop {
            let cand = format!("{name}_{}", self.counter);
            self.counter += 1;
            if self.names.insert(cand.clone()) {
                return cand;
            }
        }
    }
    pub fn remove(&mut self, name: &str) {
        self.names.remove(name);
    }
}

/// Index of function `sym` in the module body.
pub fn func_index(m: &Module, sym: &str) -> Option<usize> {
    m.body().iter().position(|o| func_sym(o) == Some(sym))
}

/// Calls `f` on every sharding of the module to edit it in place (Shardy's
/// `transformShardings`; in place, as most edits change a field or nothing):
/// function arguments and results, `sdy.sharding`, the sharding properties of sdy
/// ops, manual/named computation in/out shardings.
pub fn transform_shardings(m: &mut Module, f: &mut dyn FnMut(&mut TensorSharding)) {
    fn one(a: &mut Attr, f: &mut dyn FnMut(&mut TensorSharding)) {
        match a {
            Attr::Sharding(s) => f(s),
            Attr::PerValue(v) => {
                for s in v.iter_mut() {
                    f(s);
                }
            }
            _ => {}
        }
    }
    m.top.walk_mut(&mut |op: &mut Op| {
        if let Some(fi) = op.func_mut() {
            for slot in fi.args.iter_mut().chain(fi.results.iter_mut()) {
                for a in &mut slot.attrs {
                    if a.name == "sdy.sharding" {
                        one(&mut a.value, f);
                    }
                }
            }
            return;
        }
        for p in &mut op.props {
            if matches!(
                p.name.as_str(),
                "sharding" | "out_sharding" | "in_shardings" | "out_shardings"
            ) {
                one(&mut p.value, f);
            }
        }
        for a in &mut op.attrs {
            if a.name == "sdy.sharding" {
                one(&mut a.value, f);
            }
        }
    });
}
