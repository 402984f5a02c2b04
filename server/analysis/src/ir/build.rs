//! Builds the IR from a parsed chunk: resolves SSA names to values, converts
//! attributes and types to their canonical form, and records for each op how MLIR
//! prints it.

use super::attr::{Attr, NamedAttr};
use super::float::canonical_float;
use super::sdy as s;
use super::text::{normalize_tokens, Normalizer};
use super::OpKind;
use super::*;
use crate::sharding::{AxisRef, Mesh, TensorSharding};
use crate::types::element_type;
use rustc_hash::FxHashMap as HashMap;
use sdy_syntax::escape::unescape_bytes;
use sdy_syntax::lexer::{self, TokenKind};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{
    self, AliasValue, AttrKind, Chunk, Custom, SigForm, StmtKind, Str, TypeKind,
};
use sdy_syntax::Span;

/// Builds the module of a chunk (the chunk's lone `module` op, or an implicit one).
pub fn build_module(src: &str, chunk: &Chunk) -> Module {
    let mut b =
        Builder { src, values: Vec::new(), scopes: Vec::new(), aliases: HashMap::default() };
    let base = chunk.span.start;
    for c in &chunk.top {
        if let Custom::Alias(def) = &c.op.custom {
            b.aliases.insert(def.name.text.to_string(), (base + c.offset, def.value.clone()));
        }
    }
    // A lone `module` (aliases aside) is the module; anything else is wrapped in an
    // implicit one.
    let ops: Vec<tree::ChildRef> = chunk
        .top
        .iter()
        .filter(|c| !matches!(c.op.kind, StmtKind::AliasDef | StmtKind::Resource))
        .collect();
    let explicit = match ops.as_slice() {
        [m] if m.op.kind == StmtKind::Op && m.op.full_name() == "builtin.module" => Some(*m),
        _ => None,
    };
    let top = match explicit {
        Some(m) => b.op(m.op, base + m.offset, Vec::new()),
        None => {
            b.scopes.push(HashMap::default());
            let region = b.region_ops(&[&chunk.top], base, &[], Vec::new());
            b.scopes.pop();
            Op {
                origin: None,
                name: "builtin.module".into(),
                kind: OpKind::Other,
                results: Vec::new(),
                operands: Vec::new(),
                props: Vec::new(),
                attrs: Vec::new(),
                regions: vec![region],
                syntax: Syntax::Pretty,
            }
        }
    };
    Module { values: b.values, top }
}

struct Builder<'s> {
    src: &'s str,
    values: Vec<ValueInfo>,
    /// Visible SSA names: `%x` -> (first value, number of values).
    scopes: Vec<HashMap<Str, (ValueId, u32)>>,
    /// `#name` / `!name` -> (absolute start of the alias statement, its value).
    aliases: HashMap<String, (u32, AliasValue)>,
}

impl Normalizer for Builder<'_> {
    fn alias_text(&self, name: &str) -> Option<String> {
        let (base, value) = self.aliases.get(name)?;
        Some(match value {
            AliasValue::Attr(a) => super::attr::attr_to_string(&self.attr(a, *base)),
            AliasValue::Type(t) => self.ty(t, *base),
        })
    }
}

/// Ops whose discardable attributes print right after the op name.
const DICT_AFTER_NAME: &[&str] = &["stablehlo.optimization_barrier"];

/// Ops with other syntax whose type is printed by `custom<SameOperandsAndResultType>`.
const SAME_OPERANDS_AND_RESULT_TYPE: &[&str] = &[
    "stablehlo.after_all",
    "stablehlo.cholesky",
    "stablehlo.clamp",
    "stablehlo.reverse",
    "stablehlo.reduce_precision",
];

/// Dialects registered in `sdy_opt`: their generic ops keep undotted attributes as
/// inherent properties.
fn is_registered(name: &str) -> bool {
    ["stablehlo.", "sdy.", "func.", "chlo.", "tensor.", "arith.", "builtin."]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Appends `n` in decimal (what `{n}` prints, without the formatting machinery).
fn push_int(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    let mut x = n.unsigned_abs();
    loop {
        k -= 1;
        digits[k] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    out.extend(digits[k..].iter().map(|&d| d as char));
}

/// Where the written signature gives the type of an op's operand or result `i`.
#[derive(Clone, Copy)]
enum TypeSource<'a> {
    No,
    Each(&'a [String]),
    All(&'a String),
}

impl<'a> TypeSource<'a> {
    fn get(self, i: usize) -> Option<&'a String> {
        match self {
            TypeSource::No => None,
            TypeSource::Each(l) => l.get(i),
            TypeSource::All(t) => Some(t),
        }
    }
}

impl Builder<'_> {
    fn new_value(&mut self, ty: Option<String>) -> ValueId {
        self.values.push(ValueInfo { ty });
        (self.values.len() - 1) as ValueId
    }

    fn define(&mut self, name: &str, first: ValueId, count: u32) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.into(), (first, count));
        }
    }

    fn resolve(&mut self, r: &tree::ValueRef) -> ValueId {
        for s in self.scopes.iter().rev() {
            if let Some(&(first, count)) = s.get(&*r.name) {
                let i = r.index.unwrap_or(0);
                if i < count {
                    return first + i;
                }
                break;
            }
        }
        self.new_value(None)
    }

    // ----- types and attributes -----

    fn text(&self, span: Span, base: u32) -> &str {
        let s = span.shift(base);
        self.src.get(s.start as usize..s.end as usize).unwrap_or("")
    }

    pub(super) fn ty(&self, t: &tree::Type, base: u32) -> String {
        match &*t.kind {
            TypeKind::Tensor { shape, elem, encoding } => {
                let elem = normalize_tokens(elem, self);
                let mut out = String::from("tensor<");
                match shape {
                    None => out.push_str("*x"),
                    Some(dims) => {
                        for d in dims {
                            match d {
                                tree::Dim::Static(n) => push_int(&mut out, *n),
                                tree::Dim::Dynamic => out.push('?'),
                            }
                            out.push('x');
                        }
                    }
                }
                out.push_str(&elem);
                if let Some(e) = encoding {
                    out.push_str(", ");
                    out.push_str(&normalize_tokens(e, self));
                }
                out.push('>');
                out
            }
            TypeKind::Token => "!stablehlo.token".into(),
            TypeKind::Tuple(ts) => {
                let inner: Vec<String> = ts.iter().map(|t| self.ty(t, base)).collect();
                format!("tuple<{}>", inner.join(", "))
            }
            TypeKind::Alias(name) => {
                self.alias_text(&format!("!{name}")).unwrap_or_else(|| format!("!{name}"))
            }
            TypeKind::Other(_) => normalize_tokens(self.text(t.span, base), self),
        }
    }

    fn dict(&self, d: &tree::AttrDict, base: u32) -> Vec<NamedAttr> {
        d.entries.iter().map(|e| self.named(e, base)).collect()
    }

    fn named(&self, e: &tree::NamedAttr, base: u32) -> NamedAttr {
        NamedAttr {
            name: e.name.to_string(),
            value: e.value.as_ref().map_or(Attr::Unit, |v| self.attr(v, base)),
        }
    }

    pub(super) fn attr(&self, a: &tree::Attr, base: u32) -> Attr {
        match &a.kind {
            AttrKind::Int { value, ty } => {
                let ty = ty.as_ref().map_or_else(|| "i64".to_string(), |t| self.ty(t, base));
                if super::float::FloatSem::of_type(&ty).is_some() {
                    let text: String = self
                        .text(a.span, base)
                        .split(':')
                        .next()
                        .unwrap_or("")
                        .split_whitespace()
                        .collect();
                    if let Some(f) = canonical_float(&text, &ty) {
                        return Attr::Float { text: f, ty };
                    }
                }
                Attr::Int { value: *value as i128, ty }
            }
            AttrKind::Float { text, ty } => {
                let ty = ty.as_ref().map_or_else(|| "f64".to_string(), |t| self.ty(t, base));
                let num: String = text.split_whitespace().collect();
                let text = canonical_float(&num, &ty).unwrap_or(num);
                Attr::Float { text, ty }
            }
            AttrKind::Bool(b) => Attr::Bool(*b),
            AttrKind::Unit => Attr::Unit,
            AttrKind::String { raw } => Attr::Str(unescape_bytes(raw)),
            AttrKind::Symbol(name) => {
                let name = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                    Some(q) if !name.contains("::") => {
                        String::from_utf8_lossy(&unescape_bytes(q)).into_owned()
                    }
                    _ => name.to_string(),
                };
                Attr::Symbol(name)
            }
            AttrKind::Array(items) => {
                Attr::Array(items.iter().map(|i| self.attr(i, base)).collect())
            }
            AttrKind::DenseArray { elem, values } => {
                let is_int = elem.starts_with('i') && elem[1..].bytes().all(|b| b.is_ascii_digit());
                if !is_int {
                    return Attr::Raw(normalize_tokens(self.text(a.span, base), self));
                }
                if values.is_empty() {
                    return Attr::Raw(format!("array<{elem}>"));
                }
                let vals: Vec<String> = values
                    .iter()
                    .map(|v| if &**elem == "i1" { (*v != 0).to_string() } else { v.to_string() })
                    .collect();
                Attr::Raw(format!("array<{elem}: {}>", vals.join(", ")))
            }
            AttrKind::Dict(d) => Attr::Dict(self.dict(d, base)),
            AttrKind::Type(t) => Attr::Type(self.ty(t, base)),
            AttrKind::Elements { ty } => Attr::Raw(self.elements(a, ty.as_ref(), base)),
            AttrKind::Sdy(sdy) => self.sdy_attr(sdy, a.span, base),
            AttrKind::AliasRef(name) => match self.aliases.get(&format!("#{name}")) {
                Some((abase, AliasValue::Attr(v))) => self.attr(v, *abase),
                _ => Attr::Raw(format!("#{name}")),
            },
            AttrKind::Keyword(k) => Attr::Raw(k.to_string()),
            AttrKind::Opaque => Attr::Raw(super::text::canonical_struct(normalize_tokens(
                self.text(a.span, base),
                self,
            ))),
        }
    }

    fn sdy_attr(&self, a: &SdyAttr, span: Span, base: u32) -> Attr {
        match a {
            SdyAttr::Mesh(m) => Attr::Mesh(Mesh::from_ast(m)),
            SdyAttr::Sharding(sh) => Attr::Sharding(TensorSharding::from_ast(sh)),
            SdyAttr::PerValue(p) => {
                Attr::PerValue(p.shardings.iter().map(TensorSharding::from_ast).collect())
            }
            SdyAttr::Rule(r) => Attr::Rule(s::rule(r)),
            SdyAttr::ManualAxes(v) | SdyAttr::AxisList(v) => {
                Attr::AxisList(AxisRef::list_from_ast(v))
            }
            SdyAttr::AxisListPerDim(v) => {
                Attr::AxisLists(v.iter().map(|l| AxisRef::list_from_ast(&l.axes)).collect())
            }
            SdyAttr::AllToAllParams(p) => Attr::AllToAll(s::all_to_all(p)),
            SdyAttr::Opaque => Attr::Raw(normalize_tokens(self.text(span, base), self)),
        }
    }

    /// `dense<...> : T` in MLIR's spelling: splats collapsed, floats canonical.
    fn elements(&self, a: &tree::Attr, ty: Option<&tree::Type>, base: u32) -> String {
        let text = self.text(a.span, base);
        let ty_text = ty.map(|t| self.ty(t, base));
        let body_end = match ty {
            Some(t) => {
                // The type's span is relative to the op, like the attribute's.
                let cut = t.span.start.saturating_sub(a.span.start) as usize;
                text.get(..cut)
                    .map(|s| s.trim_end().trim_end_matches(':').trim_end())
                    .unwrap_or(text)
            }
            None => text,
        };
        let (kw, rest) = match body_end.find('<') {
            Some(i) => (body_end[..i].trim(), &body_end[i..]),
            None => return normalize_tokens(text, self),
        };
        let mut out = String::new();
        if kw == "dense" {
            let inner = rest.strip_prefix('<').and_then(|r| r.strip_suffix('>')).unwrap_or(rest);
            let elem = ty_text.as_deref().map(element_type).unwrap_or("");
            match super::elements::normalize_dense(inner, elem) {
                Some(body) => out.push_str(&format!("dense<{body}>")),
                None => out.push_str(&normalize_tokens(body_end, self)),
            }
        } else {
            out.push_str(&normalize_tokens(body_end, self));
        }
        if let Some(t) = ty_text {
            out.push_str(" : ");
            out.push_str(&t);
        }
        out
    }

    // ----- regions -----

    /// Builds a region from its blocks' statements. `entry_args` are values already
    /// made for the entry block's arguments (function arguments), `arg_decls` the
    /// block arguments of each block as written.
    fn region_ops(
        &mut self,
        blocks: &[&tree::Children],
        base: u32,
        arg_decls: &[&[tree::BlockArg]],
        entry_args: Vec<ValueId>,
    ) -> Region {
        // Block arguments and all results of the region are visible everywhere in it.
        let mut block_args: Vec<Vec<ValueId>> = Vec::new();
        for (i, _) in blocks.iter().enumerate() {
            let mut args = Vec::new();
            if i == 0 {
                args.extend(entry_args.iter().copied());
            }
            if let Some(decls) = arg_decls.get(i) {
                for a in decls.iter() {
                    let ty = a.ty.as_ref().map(|t| self.ty(t, base));
                    let v = self.new_value(ty);
                    self.define(&a.name, v, 1);
                    args.push(v);
                }
            }
            block_args.push(args);
        }
        let mut results: Vec<Vec<Vec<ValueId>>> = Vec::new();
        for ops in blocks {
            let mut per_op = Vec::new();
            for c in ops.iter() {
                let mut vals = Vec::new();
                if c.op.kind == StmtKind::Op {
                    for g in &c.op.results {
                        let first = self.values.len() as ValueId;
                        for _ in 0..g.count {
                            self.new_value(None);
                        }
                        self.define(&g.name, first, g.count);
                        vals.extend(first..first + g.count);
                    }
                }
                per_op.push(vals);
            }
            results.push(per_op);
        }
        let mut out = Region::default();
        for ((ops, args), res) in blocks.iter().zip(block_args).zip(results) {
            let mut block = Block { args, ops: Vec::with_capacity(ops.len()) };
            for (c, r) in ops.iter().zip(res) {
                if c.op.kind != StmtKind::Op {
                    continue;
                }
                let op = self.op(c.op, base + c.offset, r);
                block.ops.push(op);
            }
            out.blocks.push(block);
        }
        out
    }

    /// A nested region of op `op` (at `base`), in a new scope.
    fn region(&mut self, r: &tree::Region, base: u32, entry_args: Vec<ValueId>) -> Region {
        self.scopes.push(HashMap::default());
        let blocks: Vec<&tree::Children> = r.blocks.iter().map(|b| &b.ops).collect();
        let decls: Vec<&[tree::BlockArg]> = r.blocks.iter().map(|b| b.args.as_slice()).collect();
        let region = self.region_ops(&blocks, base, &decls, entry_args);
        self.scopes.pop();
        region
    }

    // ----- ops -----

    fn op(&mut self, t: &tree::Op, abs: u32, results: Vec<ValueId>) -> Op {
        let name: tree::Str = match t.full_name() {
            n if n == &*t.name.text => t.name.text.clone(),
            n => n.into(),
        };
        let operands: Vec<ValueId> = t.operands.iter().map(|r| self.resolve(r)).collect();
        let mut op = Op {
            origin: Some(abs),
            kind: OpKind::of(&name),
            name: name.clone(),
            results,
            operands,
            props: t.inherent.iter().map(|a| self.named(a, abs)).collect(),
            attrs: t.attrs.as_ref().map(|d| self.dict(d, abs)).unwrap_or_default(),
            regions: Vec::new(),
            syntax: Syntax::Generic,
        };
        self.set_types(t, &mut op, abs);
        // A pretty constant's type is the type of its value (`dense<1> : tensor<i32>`).
        if let Some(&r) = op.results.first() {
            let value =
                t.inherent_attr("value").or_else(|| t.attr("value")).and_then(|a| a.value.as_ref());
            if let Some(AttrKind::Elements { ty: Some(ty) }) = value.map(|v| &v.kind) {
                if self.values[r as usize].ty.is_none() {
                    self.values[r as usize].ty = Some(self.ty(ty, abs));
                }
            }
        }

        if name == "func.func" && !t.generic {
            if let Custom::Func(h) = &t.custom {
                let info = FuncInfo {
                    visibility: h.visibility.as_ref().map(|v| v.text.to_string()),
                    sym: h.sym.text.to_string(),
                    args: h
                        .args
                        .iter()
                        .map(|a| FuncSlot {
                            ty: self.ty(&a.ty, abs),
                            attrs: a.attrs.as_ref().map(|d| self.dict(d, abs)).unwrap_or_default(),
                        })
                        .collect(),
                    results: h
                        .results
                        .iter()
                        .map(|r| FuncSlot {
                            ty: self.ty(&r.ty, abs),
                            attrs: r.attrs.as_ref().map(|d| self.dict(d, abs)).unwrap_or_default(),
                        })
                        .collect(),
                    fn_attrs: h.fn_attrs.as_ref().map(|d| self.dict(d, abs)).unwrap_or_default(),
                };
                if let Some(r) = t.regions.first() {
                    self.scopes.push(HashMap::default());
                    let mut entry = Vec::new();
                    for (a, slot) in h.args.iter().zip(&info.args) {
                        let v = self.new_value(Some(slot.ty.clone()));
                        self.define(&a.name, v, 1);
                        entry.push(v);
                    }
                    let region = self.region(r, abs, entry);
                    self.scopes.pop();
                    op.regions.push(region);
                }
                op.syntax = Syntax::Func(Box::new(info));
                return op;
            }
        }

        if name == "func.func" && t.generic {
            if let Some(f) = self.generic_func(t, &mut op, abs) {
                op.syntax = Syntax::Func(Box::new(f));
                return op;
            }
        }

        if name == "builtin.module" {
            if let (Custom::Module(h), false) = (&t.custom, t.generic) {
                if let Some(sym) = &h.sym {
                    op.props
                        .push(NamedAttr::new("sym_name", Attr::Str(sym.text.as_bytes().to_vec())));
                }
                op.attrs = h.attrs.as_ref().map(|d| self.dict(d, abs)).unwrap_or_default();
            }
            for r in &t.regions {
                let region = self.region(r, abs, Vec::new());
                op.regions.push(region);
            }
            op.syntax = Syntax::Pretty;
            return op;
        }

        // Regions: block arguments come from the region's own blocks (generic form or
        // op syntax such as `(%arg1: T) {`).
        for r in &t.regions {
            let region = self.region(r, abs, Vec::new());
            op.regions.push(region);
        }

        if name == "sdy.mesh" && !t.generic {
            if let Custom::Mesh { sym } = &t.custom {
                op.props.push(NamedAttr::new("sym_name", Attr::Str(sym.text.as_bytes().to_vec())));
            }
        }
        if name == "stablehlo.constant" && op.prop("value").is_none() {
            if let Some(v) = op.remove_attr("value") {
                op.props.push(NamedAttr::new("value", v));
            }
        }

        if t.generic && is_registered(&name) {
            // Undotted names in the discardable dictionary are inherent attributes.
            let (inh, disc): (Vec<NamedAttr>, Vec<NamedAttr>) =
                std::mem::take(&mut op.attrs).into_iter().partition(|a| !a.name.contains('.'));
            op.props.extend(inh);
            op.attrs = disc;
        }

        if name == "sdy.propagation_barrier" && t.generic {
            // The generic form spells the direction as its enum value (`2 : i32`).
            if let Some(Attr::Int { value, .. }) = op.prop("allowed_direction") {
                let word = ["NONE", "FORWARD", "BACKWARD", "BOTH"].get(*value as usize);
                if let Some(word) = word {
                    op.set_prop("allowed_direction", Attr::Raw(word.to_string()));
                }
            }
        }

        op.syntax = if pretty_printable(&op, t.generic) {
            Syntax::Pretty
        } else if t.generic {
            Syntax::Generic
        } else {
            let mut template = self.template(t, abs, &op);
            if op.kind == OpKind::StablehloReduce {
                reduce_template(&mut op, &mut template, &self.values);
            }
            Syntax::Custom(Box::new(template))
        };
        op
    }

    /// `"func.func"() <{function_type = ..., sym_name = ...}> ({...})`: the function in
    /// its pretty form (MLIR always prints it so).
    fn generic_func(&mut self, t: &tree::Op, op: &mut Op, abs: u32) -> Option<FuncInfo> {
        let sym = match op.prop("sym_name")? {
            Attr::Str(s) => String::from_utf8_lossy(s).into_owned(),
            _ => return None,
        };
        let (ins, outs) = match op.prop("function_type")? {
            Attr::Type(t) => split_function_type(t)?,
            _ => return None,
        };
        let slot_attrs = |op: &Op, key: &str, i: usize| -> Vec<NamedAttr> {
            match op.prop(key) {
                Some(Attr::Array(items)) => match items.get(i) {
                    Some(Attr::Dict(d)) => d.clone(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            }
        };
        let visibility = match op.prop("sym_visibility") {
            Some(Attr::Str(s)) => Some(String::from_utf8_lossy(s).into_owned()),
            _ => None,
        };
        let info = FuncInfo {
            visibility,
            sym,
            args: ins
                .iter()
                .enumerate()
                .map(|(i, ty)| FuncSlot { ty: ty.clone(), attrs: slot_attrs(op, "arg_attrs", i) })
                .collect(),
            results: outs
                .iter()
                .enumerate()
                .map(|(i, ty)| FuncSlot { ty: ty.clone(), attrs: slot_attrs(op, "res_attrs", i) })
                .collect(),
            fn_attrs: std::mem::take(&mut op.attrs),
        };
        for r in &t.regions {
            let region = self.region(r, abs, Vec::new());
            op.regions.push(region);
        }
        op.props.clear();
        Some(info)
    }

    /// Records the types of the op's results (and of operands whose type is unknown)
    /// from its written signature.
    fn set_types(&mut self, t: &tree::Op, op: &mut Op, abs: u32) {
        if t.sig.form == SigForm::None {
            return;
        }
        let inputs: Vec<String> = t.sig.inputs.iter().map(|ty| self.ty(ty, abs)).collect();
        let outputs: Vec<String> = t.sig.outputs.iter().map(|ty| self.ty(ty, abs)).collect();
        let (n_ops, n_res) = (op.operands.len(), op.results.len());
        use TypeSource::*;
        let (ins, outs) = match t.sig.form {
            SigForm::None => (No, No),
            SigForm::Function => (Each(&inputs), Each(&outputs)),
            SigForm::List if inputs.len() == 1 => (All(&inputs[0]), All(&inputs[0])),
            SigForm::List if inputs.len() == n_res && n_res == n_ops => {
                (Each(&inputs), Each(&inputs))
            }
            SigForm::List if inputs.len() == n_res => (No, Each(&inputs)),
            SigForm::List if inputs.len() == n_ops => (Each(&inputs), No),
            SigForm::List => (No, No),
        };
        // Only values without a type take one (copied then).
        for (i, &v) in op.results.iter().enumerate() {
            if let Some(info) = self.values.get_mut(v as usize) {
                if info.ty.is_none() {
                    info.ty = outs.get(i).cloned();
                }
            }
        }
        for (i, &v) in op.operands.iter().enumerate() {
            if let Some(info) = self.values.get_mut(v as usize) {
                if info.ty.is_none() {
                    info.ty = ins.get(i).cloned();
                }
            }
        }
    }

    /// The custom form of `t` as tokens with holes for what the IR owns.
    fn template(&self, t: &tree::Op, abs: u32, op: &Op) -> Template {
        let text = self.text(Span::new(0, t.len), abs);
        let toks: Vec<lexer::Token> =
            lexer::lex(text).into_iter().filter(|k| k.kind != TokenKind::Comment).collect();
        let mut skip: Vec<Span> = Vec::new();
        if let Some(l) = t.loc {
            skip.push(l);
        }
        for r in &t.regions {
            for a in r.blocks.first().map(|b| b.args.as_slice()).unwrap_or(&[]) {
                if let Some(l) = a.loc {
                    skip.push(l);
                }
            }
        }
        let dict = t.attrs.as_ref().map(|d| d.span);
        let mut pieces: Vec<Piece> = Vec::with_capacity(toks.len() + 1);
        let start =
            toks.iter().position(|k| k.start == t.name.span.start).map_or(toks.len(), |i| i + 1);
        let mut prev_end = t.name.span.end;
        let mut i = start;
        let mut has_dict = false;
        while i < toks.len() {
            let k = toks[i];
            let gap = k.start > prev_end;
            let span_end = |end: u32, i: &mut usize| {
                while *i < toks.len() && toks[*i].start < end {
                    *i += 1;
                }
            };
            if let Some(sp) = skip.iter().find(|s| s.start == k.start) {
                span_end(sp.end, &mut i);
                continue;
            }
            if let Some(r) = t.regions.iter().position(|r| r.span.start == k.start) {
                push(&mut pieces, true, PieceKind::Region(r));
                span_end(t.regions[r].span.end, &mut i);
                prev_end = t.regions[r].span.end;
                continue;
            }
            if let Some(d) = dict.filter(|d| d.start == k.start) {
                let keyword = matches!(pieces.last(), Some(Piece { kind: PieceKind::Text(s), .. }) if s == "attributes");
                let space =
                    if keyword { pieces.pop().is_some_and(|p| p.space_before) } else { gap };
                push(&mut pieces, space, PieceKind::AttrDict { keyword });
                has_dict = true;
                span_end(d.end, &mut i);
                prev_end = d.end;
                continue;
            }
            let tok_text = k.text(text);
            let kind = match k.kind {
                TokenKind::ValueId => {
                    if let Some(n) = t.operands.iter().position(|o| o.span.start == k.start) {
                        let end = t.operands[n].span.end;
                        i += 1;
                        span_end(end, &mut i);
                        prev_end = end;
                        push(&mut pieces, gap, PieceKind::Operand(n));
                        continue;
                    }
                    match block_arg_at(t, k.start) {
                        Some((r, j)) => PieceKind::BlockArg(r, j),
                        None => PieceKind::Text(tok_text.into()),
                    }
                }
                TokenKind::HashId | TokenKind::BangId => match self.alias_text(tok_text) {
                    Some(t) => PieceKind::Text(t.into()),
                    None => PieceKind::Text(tok_text.into()),
                },
                TokenKind::BareId if tok_text == "cond" && op.kind == OpKind::StablehloWhile => {
                    push(&mut pieces, false, PieceKind::Newline);
                    PieceKind::Text(tok_text.into())
                }
                _ => PieceKind::Text(tok_text.into()),
            };
            let after_newline =
                matches!(pieces.last(), Some(Piece { kind: PieceKind::Newline, .. }));
            push(&mut pieces, gap && !after_newline, kind);
            prev_end = k.end;
            i += 1;
        }
        drop_single_result_parens(&mut pieces);
        space_equals(&mut pieces);
        if let Some(c) = last_top_level_colon(&pieces) {
            // The trailing signature is always ` : `.
            pieces[c].space_before = true;
            if let Some(next) = pieces.get_mut(c + 1) {
                next.space_before = true;
            }
            // ... and so is its `->`.
            let mut depth = 0i32;
            for j in c + 1..pieces.len() {
                match &pieces[j].kind {
                    PieceKind::Text(s) if matches!(s.as_str(), "(" | "[" | "<" | "{") => depth += 1,
                    PieceKind::Text(s) if matches!(s.as_str(), ")" | "]" | ">" | "}") => depth -= 1,
                    PieceKind::Text(s) if s == "->" && depth == 0 => {
                        pieces[j].space_before = true;
                        if let Some(next) = pieces.get_mut(j + 1) {
                            next.space_before = true;
                        }
                    }
                    _ => {}
                }
            }
            if SAME_OPERANDS_AND_RESULT_TYPE.contains(&op.name.as_str()) {
                // `custom<SameOperandsAndResultType>`: `T` when every type is the same.
                let ty = |v: &ValueId| self.values.get(*v as usize).and_then(|i| i.ty.clone());
                let ins: Option<Vec<String>> = op.operands.iter().map(ty).collect();
                let out = op.results.first().and_then(ty);
                if let (Some(ins), Some(out), 1) = (ins, out, op.results.len()) {
                    let sig = if ins.iter().all(|t| *t == out) {
                        out
                    } else {
                        format!("({}) -> {out}", ins.join(", "))
                    };
                    pieces.truncate(c + 1);
                    pieces.push(Piece { space_before: true, kind: PieceKind::Text(sig.into()) });
                }
            }
            if op.kind == OpKind::StablehloAfterAll && op.operands.is_empty() {
                // `$inputs attr-dict : type` with no inputs leaves two spaces.
                pieces.insert(c, Piece { space_before: true, kind: PieceKind::Text(Str::new()) });
            }
        }
        if !has_dict {
            let slot = if DICT_AFTER_NAME.contains(&op.name.as_str()) {
                Some((0, false))
            } else if op.kind == OpKind::StablehloWhile {
                pieces.iter().position(|p| p.kind == PieceKind::Newline).map(|i| (i, true))
            } else {
                last_top_level_colon(&pieces).map(|i| (i, false))
            };
            let (at, keyword) = slot.unwrap_or((pieces.len(), false));
            pieces.insert(at, Piece { space_before: true, kind: PieceKind::AttrDict { keyword } });
        }
        Template { pieces }
    }
}

/// `-> (T)` prints as `-> T` (MLIR parenthesises a single result only when it is a
/// function type).
fn drop_single_result_parens(pieces: &mut Vec<Piece>) {
    fn text(p: &Piece) -> Option<&str> {
        match &p.kind {
            PieceKind::Text(s) => Some(s.as_str()),
            _ => None,
        }
    }
    let mut i = 0;
    while i + 1 < pieces.len() {
        if text(&pieces[i]) == Some("->") && text(&pieces[i + 1]) == Some("(") {
            let open = i + 1;
            let mut depth = 0i32;
            let mut close = None;
            let mut commas = 0;
            for (j, p) in pieces.iter().enumerate().skip(open) {
                match text(p) {
                    Some("(") | Some("<") | Some("[") | Some("{") => depth += 1,
                    Some(")") | Some(">") | Some("]") | Some("}") => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(j);
                            break;
                        }
                    }
                    Some(",") if depth == 1 => commas += 1,
                    _ => {}
                }
            }
            if let Some(close) = close {
                let single =
                    commas == 0 && close > open + 1 && text(&pieces[open + 1]) != Some("(");
                if single {
                    pieces.remove(close);
                    pieces.remove(open);
                    pieces[open].space_before = true;
                }
            }
        }
        i += 1;
    }
}

/// `stablehlo.reduce` in its region form: the reducer's block arguments are written in
/// pairs `(%lhs0, %rhs0) (%lhs1, %rhs1)` but the block holds `[lhs0, lhs1, rhs0, rhs1]`
/// (which decides their numbers); the form is printed on a new line; and a reducer that
/// is a single commutative op on the arguments prints compactly as `applies OP`.
fn reduce_template(op: &mut Op, t: &mut Template, values: &[ValueInfo]) {
    let Some(block) = op.regions.first_mut().and_then(|r| r.blocks.first_mut()) else { return };
    let n2 = block.args.len();
    if n2 == 0 || !n2.is_multiple_of(2) {
        return;
    }
    let n = n2 / 2;
    let new_index = |j: usize| if j.is_multiple_of(2) { j / 2 } else { n + j / 2 };
    let mut args = vec![0; n2];
    for (j, &a) in block.args.iter().enumerate() {
        args[new_index(j)] = a;
    }
    block.args = args;
    for p in &mut t.pieces {
        if let PieceKind::BlockArg(0, j) = &mut p.kind {
            *j = new_index(*j);
        }
    }
    let Some(k) = t.pieces.iter().position(|p| p.kind == PieceKind::Text("reducer".into())) else {
        return;
    };
    if reduce_is_compact(op, values) {
        let inner = op.regions[0].blocks[0].ops[0].name.clone();
        t.pieces.truncate(k);
        if let Some(a) = t.pieces.iter().position(|p| p.kind == PieceKind::Text("across".into())) {
            t.pieces.insert(a, Piece { space_before: true, kind: PieceKind::Text(inner) });
            t.pieces
                .insert(a, Piece { space_before: true, kind: PieceKind::Text("applies".into()) });
        }
        return;
    }
    t.pieces[k].space_before = true;
    t.pieces.insert(k, Piece { space_before: false, kind: PieceKind::Newline });
    if let Some(r) = t.pieces.iter().position(|p| matches!(p.kind, PieceKind::Region(_))) {
        t.pieces.insert(r, Piece { space_before: true, kind: PieceKind::Text(Str::new()) });
    }
}

/// StableHLO's `isReduceEligibleForCompactPrint`.
fn reduce_is_compact(op: &Op, values: &[ValueInfo]) -> bool {
    let block = &op.regions[0].blocks[0];
    let [inner, ret] = block.ops.as_slice() else { return false };
    if !inner.kind.is_compact_reducer() || inner.operands.len() != 2 || inner.results.len() != 1 {
        return false;
    }
    let ty = |v: ValueId| values.get(v as usize).and_then(|i| i.ty.clone());
    let t0 = ty(inner.operands[0]);
    if t0.is_none() || ty(inner.operands[1]) != t0 || ty(inner.results[0]) != t0 {
        return false;
    }
    let Some(input) = op.operands.first().and_then(|&v| ty(v)) else { return false };
    if t0 != Some(format!("tensor<{}>", element_type(&input))) {
        return false;
    }
    inner.operands == block.args && ret.name.ends_with(".return") && ret.operands == inner.results
}

/// Splits the text of a function type `(A, B) -> (R)` into input and result types.
fn split_function_type(t: &str) -> Option<(Vec<String>, Vec<String>)> {
    fn split_top(s: &str, sep: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut depth = 0i32;
        let mut start = 0;
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'(' | b'<' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b'>' if i == 0 || b[i - 1] != b'-' => depth -= 1,
                _ => {}
            }
            if depth == 0 && b[i..].starts_with(sep.as_bytes()) {
                out.push(s[start..i].trim().to_string());
                i += sep.len();
                start = i;
                continue;
            }
            i += 1;
        }
        out.push(s[start..].trim().to_string());
        out
    }
    let parts = split_top(t, "->");
    let [ins, outs] = parts.as_slice() else { return None };
    let list = |s: &str| -> Vec<String> {
        let inner = s.strip_prefix('(').and_then(|r| r.strip_suffix(')'));
        match inner {
            Some(i) if i.trim().is_empty() => Vec::new(),
            Some(i) => split_top(i, ","),
            None => vec![s.to_string()],
        }
    };
    Some((list(ins), list(outs)))
}

fn push(pieces: &mut Vec<Piece>, gap: bool, kind: PieceKind) {
    let prev_comma =
        matches!(pieces.last(), Some(Piece { kind: PieceKind::Text(s), .. }) if s == ",");
    let prev_open = matches!(pieces.last(), Some(Piece { kind: PieceKind::Text(s), .. }) if s == "(" || s == "[" || s == "<");
    let prev_symbol =
        matches!(pieces.last(), Some(Piece { kind: PieceKind::Text(s), .. }) if s.starts_with('@'));
    let space = match &kind {
        PieceKind::Text(s) if s == "," || s == ")" || s == "]" || s == ">" => false,
        PieceKind::Text(s) if s == "(" && prev_symbol => false,
        _ if prev_comma => true,
        _ if prev_open => false,
        _ => gap,
    };
    pieces.push(Piece { space_before: space, kind });
}

/// MLIR's custom forms print `name = value` with spaces (`dim=0` -> `dim = 0`); inside
/// `<...>` (attribute bodies such as `replicated={...}`) the text is kept.
fn space_equals(pieces: &mut [Piece]) {
    let mut angle = 0i32;
    for j in 0..pieces.len() {
        let PieceKind::Text(s) = &pieces[j].kind else { continue };
        match s.as_str() {
            "<" => angle += 1,
            ">" => angle -= 1,
            "=" if angle == 0 => {
                pieces[j].space_before = true;
                if let Some(next) = pieces.get_mut(j + 1) {
                    next.space_before = true;
                }
            }
            _ => {}
        }
    }
}

/// The index of the last `:` outside brackets (the start of the trailing signature).
fn last_top_level_colon(pieces: &[Piece]) -> Option<usize> {
    let mut depth = 0i32;
    let mut found = None;
    for (i, p) in pieces.iter().enumerate() {
        if let PieceKind::Text(s) = &p.kind {
            match s.as_str() {
                "(" | "[" | "{" | "<" => depth += 1,
                ")" | "]" | "}" | ">" => depth -= 1,
                ":" if depth == 0 => found = Some(i),
                _ => {}
            }
        }
    }
    found
}

/// The (region, argument) whose name token starts at `at`, for block arguments
/// written in op syntax before a region.
fn block_arg_at(t: &tree::Op, at: u32) -> Option<(usize, usize)> {
    for (ri, r) in t.regions.iter().enumerate() {
        if let Some(b) = r.blocks.first() {
            if let Some(j) = b.args.iter().position(|a| a.span.start == at) {
                return Some((ri, j));
            }
        }
    }
    None
}

/// Whether the printer has a dedicated printer for this op (and its props are the
/// ones it needs).
fn pretty_printable(op: &Op, from_generic: bool) -> bool {
    let has = |n: &str| op.prop(n).is_some();
    let sharding = |n: &str| matches!(op.prop(n), Some(Attr::Sharding(_)));
    let per_value = |n: &str| matches!(op.prop(n), Some(Attr::PerValue(_)));
    let one_in_one_out = op.operands.len() == 1 && op.results.len() == 1;
    match op.name.as_str() {
        "sdy.mesh" => matches!(op.prop("mesh"), Some(Attr::Mesh(_))) && has("sym_name"),
        "sdy.sharding_constraint" | "sdy.reshard" => sharding("sharding") && one_in_one_out,
        "sdy.data_flow_edge" => {
            one_in_one_out && op.prop("sharding").is_none_or(|a| matches!(a, Attr::Sharding(_)))
        }
        "sdy.func_data_flow_edge" => one_in_one_out,
        "sdy.propagation_barrier" => has("allowed_direction") && one_in_one_out,
        "sdy.sharding_group" => has("group_id") && op.operands.len() == 1 && op.results.is_empty(),
        "sdy.manual_computation" => {
            per_value("in_shardings")
                && per_value("out_shardings")
                && matches!(op.prop("manual_axes"), Some(Attr::AxisList(_)))
                && op.regions.len() == 1
        }
        "sdy.named_computation" => {
            matches!(op.prop("name"), Some(Attr::Str(_))) && op.regions.len() == 1
        }
        "sdy.all_gather" | "sdy.all_slice" | "sdy.reduce_scatter" | "sdy.sharded_to_unreduced" => {
            let key = op.kind.collective_axes_key();
            matches!(op.prop(key), Some(Attr::AxisLists(_)))
                && sharding("out_sharding")
                && one_in_one_out
        }
        "sdy.all_to_all" => {
            matches!(op.prop("params"), Some(Attr::AllToAll(_)))
                && sharding("out_sharding")
                && one_in_one_out
        }
        "sdy.collective_permute" => sharding("out_sharding") && one_in_one_out,
        "sdy.all_reduce" | "sdy.replicated_to_unreduced" => {
            let key = op.kind.collective_axes_key();
            matches!(op.prop(key), Some(Attr::AxisList(_)))
                && sharding("out_sharding")
                && one_in_one_out
        }
        "sdy.constant" | "stablehlo.constant" => {
            matches!(op.prop("value"), Some(Attr::Raw(_)))
                && op.operands.is_empty()
                && op.results.len() == 1
        }
        "sdy.return" | "func.return" | "stablehlo.return" => op.results.is_empty(),
        "func.call" => {
            from_generic
                && matches!(op.prop("callee"), Some(Attr::Symbol(_)))
                && op.regions.is_empty()
        }
        _ if op.kind.has_elementwise_form() => {
            op.results.len() == 1 && op.regions.is_empty() && op.props.is_empty()
        }
        // `select` also reads a function type, which MLIR prints in its short form.
        n if n.starts_with("stablehlo.") || n.starts_with("chlo.") => {
            (from_generic || n == "stablehlo.select") && super::stablehlo::custom_printable(op)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn push_int() {
        for n in [0, 7, -7, 10, 128, -4096, i64::MAX, i64::MIN] {
            let mut out = String::from("x");
            super::push_int(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
    }
}
