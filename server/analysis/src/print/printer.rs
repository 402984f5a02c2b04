//! Prints the IR like `mlir-opt` without debug info: two-space indentation, MLIR's SSA
//! names, each op in its custom form when it has one.

use super::names::{self, Names};
use crate::ir::attr::{attr_to_string, write_dict, write_dict_of, Attr, NamedAttr};
use crate::ir::sdy::{AllToAllDisplay, AxisListDisplay, AxisListsDisplay, PerValueList};
use crate::ir::OpKind;
use crate::ir::*;
use sdy_syntax::escape::{escape_string, symbol_ref};
use std::fmt::Write;

/// Prints the module.
pub fn print_module(m: &Module) -> String {
    let names = names::assign(m);
    let mut p = Printer { m, names: &names, out: String::new(), indent: 0, dialects: Vec::new() };
    p.op(&m.top);
    p.out.push('\n');
    p.out
}

/// Prints one op read from the source (at absolute offset `origin`) on its own, with
/// the SSA names it has in the module: what MLIR's `appendOp` puts in a diagnostic
/// note. `None` when no op has that origin.
pub fn print_op_at(m: &Module, origin: u32) -> Option<String> {
    let op = m.op_at(origin)?;
    let names = names::assign(m);
    let mut p = Printer { m, names: &names, out: String::new(), indent: 0, dialects: Vec::new() };
    p.op(op);
    Some(p.out)
}

struct Printer<'a> {
    m: &'a Module,
    names: &'a Names,
    out: String,
    /// Indentation of the op being printed.
    indent: usize,
    /// The default dialect of each enclosing region (`func` inside `func.func`).
    dialects: Vec<&'static str>,
}

impl Printer<'_> {
    fn use_of(&self, v: ValueId) -> String {
        self.names.use_of(v)
    }
    fn uses(&self, vs: &[ValueId]) -> String {
        vs.iter().map(|&v| self.use_of(v)).collect::<Vec<_>>().join(", ")
    }
    fn ty(&self, v: ValueId) -> String {
        self.m.ty(v).unwrap_or("<<unknown type>>").to_string()
    }
    fn types(&self, vs: &[ValueId]) -> Vec<String> {
        vs.iter().map(|&v| self.ty(v)).collect()
    }

    /// The op name as printed: `return` for `func.return` directly in a function.
    fn op_name<'n>(&self, name: &'n str) -> &'n str {
        match self.dialects.last() {
            Some(d) if !d.is_empty() => {
                name.strip_prefix(d).and_then(|r| r.strip_prefix('.')).unwrap_or(name)
            }
            _ => name,
        }
    }

    fn op(&mut self, op: &Op) {
        // A pass that renamed an op without `Op::set_name` left its kind behind.
        debug_assert_eq!(op.kind, OpKind::of(&op.name), "the kind of {}", op.name);
        if !op.results.is_empty() {
            let r = self.names.results_of(&op.results);
            self.out.push_str(&r);
            self.out.push_str(" = ");
        }
        match &op.syntax {
            Syntax::Generic => self.generic(op, true),
            Syntax::Pretty => self.pretty(op),
            Syntax::Func(f) => self.func(op, f),
            Syntax::Custom(t) => self.custom(op, t),
        }
    }

    fn attr_dict(&mut self, attrs: &[NamedAttr], elided: &[&str]) {
        let kept: Vec<&NamedAttr> =
            attrs.iter().filter(|a| !elided.contains(&a.name.as_str())).collect();
        if !kept.is_empty() {
            self.out.push(' ');
            write_dict_of(&mut self.out, kept);
        }
    }

    fn region(&mut self, r: &Region, parent: &str, entry_args: bool, empty_block: bool) {
        self.out.push_str("{\n");
        self.dialects.push(if parent == "func.func" { "func" } else { "" });
        let outer = self.indent;
        for (i, b) in r.blocks.iter().enumerate() {
            let header =
                i > 0 || (entry_args && !b.args.is_empty()) || (empty_block && b.ops.is_empty());
            if header {
                self.pad(outer);
                let _ = write!(self.out, "^bb{i}");
                if !b.args.is_empty() {
                    self.out.push('(');
                    let args: Vec<String> = b
                        .args
                        .iter()
                        .map(|&a| format!("{}: {}", self.use_of(a), self.ty(a)))
                        .collect();
                    self.out.push_str(&args.join(", "));
                    self.out.push(')');
                }
                self.out.push_str(":\n");
            }
            for op in &b.ops {
                self.indent = outer + 2;
                self.pad(outer + 2);
                self.op(op);
                self.out.push('\n');
            }
        }
        self.indent = outer;
        self.dialects.pop();
        self.pad(outer);
        self.out.push('}');
    }

    fn pad(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    fn fn_type(&mut self, ins: &[String], outs: &[String]) {
        let _ = write!(self.out, "({}) -> ", ins.join(", "));
        if outs.len() == 1 && !outs[0].starts_with('(') {
            self.out.push_str(&outs[0]);
        } else {
            let _ = write!(self.out, "({})", outs.join(", "));
        }
    }

    /// `"name"(%a) <{props}> ({...}) {attrs} : (T) -> R`; `with_name` false for
    /// `printGenericOp(op, /*printOpName=*/false)` inside a custom printer.
    fn generic(&mut self, op: &Op, with_name: bool) {
        if with_name {
            let _ = write!(self.out, "\"{}\"", op.name);
        }
        let _ = write!(self.out, "({})", self.uses(&op.operands));
        if !op.props.is_empty() {
            self.out.push_str(" <");
            write_dict(&mut self.out, &op.props);
            self.out.push('>');
        }
        if !op.regions.is_empty() {
            self.out.push_str(" (");
            for (i, r) in op.regions.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.region(r, &op.name, true, true);
            }
            self.out.push(')');
        }
        self.attr_dict(&op.attrs, &[]);
        self.out.push_str(" : ");
        let ins = self.types(&op.operands);
        let outs = self.types(&op.results);
        self.fn_type(&ins, &outs);
    }

    fn func(&mut self, op: &Op, f: &FuncInfo) {
        let name = self.op_name(&op.name).to_string();
        self.out.push_str(&name);
        self.out.push(' ');
        if let Some(v) = &f.visibility {
            self.out.push_str(v);
            self.out.push(' ');
        }
        self.out.push_str(&symbol_ref(&f.sym));
        self.out.push('(');
        let entry: Option<&Block> = op.regions.first().and_then(|r| r.blocks.first());
        for (i, a) in f.args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            if let Some(&v) = entry.and_then(|b| b.args.get(i)) {
                let _ = write!(self.out, "{}: ", self.use_of(v));
            }
            self.out.push_str(&a.ty);
            if !a.attrs.is_empty() {
                self.out.push(' ');
                write_dict(&mut self.out, &a.attrs);
            }
        }
        self.out.push(')');
        if !f.results.is_empty() {
            self.out.push_str(" -> ");
            let simple = f.results.len() == 1
                && f.results[0].attrs.is_empty()
                && !f.results[0].ty.starts_with('(');
            if simple {
                self.out.push_str(&f.results[0].ty);
            } else {
                self.out.push('(');
                for (i, r) in f.results.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.out.push_str(&r.ty);
                    if !r.attrs.is_empty() {
                        self.out.push(' ');
                        write_dict(&mut self.out, &r.attrs);
                    }
                }
                self.out.push(')');
            }
        }
        if !f.fn_attrs.is_empty() {
            self.out.push_str(" attributes ");
            write_dict(&mut self.out, &f.fn_attrs);
        }
        if let Some(r) = op.regions.first() {
            self.out.push(' ');
            self.region(r, &op.name, false, false);
        }
    }

    fn custom(&mut self, op: &Op, t: &Template) {
        let name = self.op_name(&op.name).to_string();
        self.out.push_str(&name);
        for p in &t.pieces {
            let text = match &p.kind {
                PieceKind::Text(s) => {
                    if p.space_before {
                        self.out.push(' ');
                    }
                    self.out.push_str(s);
                    continue;
                }
                PieceKind::Operand(i) => {
                    op.operands.get(*i).map_or_else(String::new, |&v| self.use_of(v))
                }
                PieceKind::BlockArg(r, j) => op
                    .regions
                    .get(*r)
                    .and_then(|r| r.blocks.first())
                    .and_then(|b| b.args.get(*j))
                    .map_or_else(String::new, |&v| self.use_of(v)),
                PieceKind::AttrDict { keyword } => {
                    if op.attrs.is_empty() {
                        continue;
                    }
                    let mut s = String::new();
                    if *keyword {
                        s.push_str("attributes ");
                    }
                    write_dict(&mut s, &op.attrs);
                    s
                }
                PieceKind::Newline => {
                    self.out.push('\n');
                    let n = self.indent;
                    self.pad(n);
                    continue;
                }
                PieceKind::Region(i) => {
                    if p.space_before {
                        self.out.push(' ');
                    }
                    if let Some(r) = op.regions.get(*i) {
                        self.region(r, &op.name, false, false);
                    }
                    continue;
                }
            };
            if p.space_before {
                self.out.push(' ');
            }
            self.out.push_str(&text);
        }
    }

    fn sharding_prop(&self, op: &Op, key: &str) -> String {
        match op.prop(key) {
            Some(Attr::Sharding(s)) => s.to_string(),
            Some(a) => attr_to_string(a),
            None => String::new(),
        }
    }

    fn per_value_prop(&self, op: &Op, key: &str) -> String {
        match op.prop(key) {
            Some(Attr::PerValue(v)) => PerValueList(v).to_string(),
            Some(a) => attr_to_string(a),
            None => "[]".into(),
        }
    }

    /// `: T` when every operand and result has type `T` (`SameOperandsAndResultType`),
    /// else the function type.
    fn same_or_fn_type(&mut self, op: &Op) {
        let ins = self.types(&op.operands);
        let outs = self.types(&op.results);
        self.out.push_str(" : ");
        if ins.iter().chain(&outs).all(|t| Some(t) == outs.first()) {
            self.out.push_str(&outs[0]);
        } else {
            self.fn_type(&ins, &outs);
        }
    }

    /// StableHLO custom forms of generic-form ops (`ir::stablehlo::custom_printable`).
    fn stablehlo(&mut self, op: &Op) {
        use super::stablehlo::{list, slice_ranges};
        use crate::ir::stablehlo::{dot_dims, enum_keyword, i64_array, int, precisions};
        let name = self.op_name(&op.name).to_string();
        match op.name.as_str() {
            "stablehlo.reduce" => return self.reduce(op, &name),
            "stablehlo.convolution" => return self.convolution(op, &name),
            "stablehlo.while" => return self.while_loop(op, &name),
            "stablehlo.partition_id" | "stablehlo.replica_id" => {
                self.out.push_str(&name);
                self.attr_dict(&op.attrs, &[]);
                let _ = write!(self.out, " : {}", self.ty(op.results[0]));
                return;
            }
            n if n.starts_with("chlo.") => return self.chlo(op, &name),
            _ => {}
        }
        let operands = self.uses(&op.operands);
        let arr = |k: &str| list(&i64_array(op.prop(k)).unwrap_or_default());
        let head = match op.name.as_str() {
            "stablehlo.transpose" => format!("{operands}, dims = {}", arr("permutation")),
            "stablehlo.broadcast_in_dim" => {
                format!("{operands}, dims = {}", arr("broadcast_dimensions"))
            }
            "stablehlo.concatenate" => {
                format!("{operands}, dim = {}", int(op.prop("dimension")).unwrap_or(0))
            }
            "stablehlo.reverse" => format!("{operands}, dims = {}", arr("dimensions")),
            "stablehlo.iota" => format!("dim = {}", int(op.prop("iota_dimension")).unwrap_or(0)),
            "stablehlo.pad" => format!(
                "{operands}, low = {}, high = {}, interior = {}",
                arr("edge_padding_low"),
                arr("edge_padding_high"),
                arr("interior_padding")
            ),
            "stablehlo.dynamic_slice" => format!("{operands}, sizes = {}", arr("slice_sizes")),
            "stablehlo.slice" => format!("{operands} {}", slice_ranges(op)),
            "stablehlo.compare" => {
                let dir = enum_keyword(op.prop("comparison_direction"), "comparison_direction");
                let ty = enum_keyword(op.prop("compare_type"), "comparison_type");
                let ty = ty.map(|t| format!(", {t}")).unwrap_or_default();
                format!("{}, {operands}{ty}", dir.unwrap_or_default())
            }
            "stablehlo.cholesky" => match op.prop("lower") {
                Some(Attr::Bool(true)) => format!("{operands}, lower = true"),
                _ => operands,
            },
            "stablehlo.rng_bit_generator" => format!(
                "{operands}, algorithm = {}",
                enum_keyword(op.prop("rng_algorithm"), "rng_algorithm").unwrap_or_default()
            ),
            "stablehlo.fft" => format!(
                "{operands}, type = {}, length = {}",
                enum_keyword(op.prop("fft_type"), "fft_type").unwrap_or_default(),
                arr("fft_length")
            ),
            "stablehlo.dot_general" | "stablehlo.dot" => {
                let mut head = operands;
                if let Some([lb, rb, lc, rc]) = dot_dims(op.prop("dot_dimension_numbers")) {
                    if !lb.is_empty() || !rb.is_empty() {
                        let _ = write!(head, ", batching_dims = {} x {}", list(&lb), list(&rb));
                    }
                    let _ = write!(head, ", contracting_dims = {} x {}", list(&lc), list(&rc));
                }
                if let Some(p) = op.prop("precision_config").and_then(precisions) {
                    let _ = write!(head, ", precision = {p}");
                }
                head
            }
            _ => operands,
        };
        let _ = write!(self.out, "{name} {head}");
        self.attr_dict(&op.attrs, &[]);
        match op.name.as_str() {
            "stablehlo.reverse" | "stablehlo.clamp" | "stablehlo.cholesky" => {
                self.same_or_fn_type(op)
            }
            "stablehlo.iota" | "stablehlo.tuple" => {
                let _ = write!(self.out, " : {}", self.ty(op.results[0]));
            }
            "stablehlo.select" => {
                let ins = self.types(&op.operands);
                let out = self.ty(op.results[0]);
                if ins[1] == out && ins[2] == out {
                    let _ = write!(self.out, " : {}, {out}", ins[0]);
                } else {
                    self.out.push_str(" : ");
                    self.fn_type(&ins, &[out]);
                }
            }
            _ => {
                let ins = self.types(&op.operands);
                let outs = self.types(&op.results);
                self.out.push_str(" : ");
                self.fn_type(&ins, &outs);
            }
        }
    }

    /// The attribute dictionary of a declarative custom form: the inherent attributes
    /// the form does not show, merged with the discardable ones (MLIR sorts them).
    fn remaining_attrs(&mut self, op: &Op, shown: &[&str]) {
        let mut all: Vec<NamedAttr> =
            op.props.iter().filter(|a| !shown.contains(&a.name.as_str())).cloned().collect();
        all.extend(op.attrs.iter().cloned());
        self.attr_dict(&all, &[]);
    }

    /// `stablehlo.convolution(%a, %b) dim_numbers = ..., window = {...} {attrs} : (A, B) -> R`
    fn convolution(&mut self, op: &Op, name: &str) {
        use super::stablehlo::conv_window;
        use crate::ir::stablehlo::{conv_dims, CONV_WINDOW};
        let dims = conv_dims(op.prop("dimension_numbers")).unwrap_or_default();
        let _ = write!(
            self.out,
            "{name}({}) dim_numbers = {dims}, window = {{{}}}",
            self.uses(&op.operands),
            conv_window(op)
        );
        let mut shown: Vec<&str> = CONV_WINDOW.iter().map(|(p, _)| *p).collect();
        shown.push("dimension_numbers");
        self.remaining_attrs(op, &shown);
        let ins = self.types(&op.operands);
        let outs = self.types(&op.results);
        self.out.push_str(" : ");
        self.fn_type(&ins, &outs);
    }

    /// `stablehlo.reduce(%x init: %i) applies stablehlo.add across dimensions = [1] : ...`,
    /// or with the body after ` reducer(%a: T, %b: T) ` when it is not a single such op.
    fn reduce(&mut self, op: &Op, name: &str) {
        use super::stablehlo::{compact_reducer, list};
        use crate::ir::stablehlo::i64_array;
        let pairs = op.operands.len() / 2;
        let inputs: Vec<String> = (0..pairs)
            .map(|i| {
                let (x, init) = (op.operands[i], op.operands[i + pairs]);
                format!("({} init: {})", self.use_of(x), self.use_of(init))
            })
            .collect();
        let _ = write!(self.out, "{name}{}", inputs.join(", "));
        let applies = compact_reducer(op, &|v| self.ty(v));
        if let Some(inner) = applies {
            let _ = write!(self.out, " applies {inner}");
        }
        let dims = list(&i64_array(op.prop("dimensions")).unwrap_or_default());
        let _ = write!(self.out, " across dimensions = {dims}");
        self.remaining_attrs(op, &["dimensions"]);
        let ins = self.types(&op.operands);
        let outs = self.types(&op.results);
        self.out.push_str(" : ");
        self.fn_type(&ins, &outs);
        if applies.is_some() {
            return;
        }
        let Some(region) = op.regions.first() else { return };
        self.out.push('\n');
        self.pad(self.indent);
        self.out.push_str(" reducer");
        let args = region.blocks.first().map(|b| b.args.clone()).unwrap_or_default();
        for i in 0..pairs {
            let arg = |v: ValueId| format!("{}: {}", self.use_of(v), self.ty(v));
            let _ = write!(self.out, "({}, {}) ", arg(args[i]), arg(args[i + pairs]));
        }
        self.out.push(' ');
        self.region(region, &op.name, false, false);
    }

    /// CHLO's custom forms: `chlo.square %x : T -> R`, `chlo.zeta %x, %q : A, B -> R`,
    /// `chlo.top_k(%x, k = 4) : T -> (V, I)`.
    fn chlo(&mut self, op: &Op, name: &str) {
        use crate::ir::stablehlo::int;
        let operands = self.uses(&op.operands);
        if op.kind == OpKind::ChloTopK {
            let k = int(op.prop("k")).unwrap_or_default();
            // The `is_stable` flag is not printed (nor parsed) by this StableHLO version.
            let _ = write!(self.out, "{name}({operands}, k = {k})");
        } else {
            let _ = write!(self.out, "{name} {operands}");
        }
        self.attr_dict(&op.attrs, &[]);
        let ins = self.types(&op.operands).join(", ");
        let outs = self.types(&op.results);
        let outs = if outs.len() == 1 { outs[0].clone() } else { format!("({})", outs.join(", ")) };
        let _ = write!(self.out, " : {ins} -> {outs}");
    }

    /// `stablehlo.while(%iterArg = %x) : T attributes {...}` then `cond {...} do {...}`
    /// on the next line (the iteration variables are the body's block arguments).
    fn while_loop(&mut self, op: &Op, name: &str) {
        let iter_args = op.regions[1].blocks[0].args.clone();
        let pairs: Vec<String> = iter_args
            .iter()
            .zip(&op.operands)
            .map(|(&a, &x)| format!("{} = {}", self.use_of(a), self.use_of(x)))
            .collect();
        let _ = write!(self.out, "{name}({})", pairs.join(", "));
        if !op.operands.is_empty() {
            let _ = write!(self.out, " : {}", self.types(&op.operands).join(", "));
        }
        if !op.attrs.is_empty() {
            self.out.push_str(" attributes ");
            write_dict(&mut self.out, &op.attrs);
        }
        self.out.push('\n');
        self.pad(self.indent);
        self.out.push_str("cond ");
        self.region(&op.regions[0], &op.name, false, false);
        self.out.push_str(" do ");
        self.region(&op.regions[1], &op.name, false, false);
    }

    /// Dedicated printers of MLIR custom forms.
    fn pretty(&mut self, op: &Op) {
        let name = self.op_name(&op.name).to_string();
        let result_ty = op.results.first().map(|&r| self.ty(r));
        let input = op.operands.first().map(|&v| self.use_of(v)).unwrap_or_default();
        match op.name.as_str() {
            "builtin.module" => {
                self.out.push_str("module");
                if let Some(Attr::Str(s)) = op.prop("sym_name") {
                    self.out.push(' ');
                    self.out.push_str(&symbol_ref(&String::from_utf8_lossy(s)));
                }
                if !op.attrs.is_empty() {
                    self.out.push_str(" attributes ");
                    write_dict(&mut self.out, &op.attrs);
                }
                self.out.push(' ');
                match op.regions.first() {
                    Some(r) => self.region(r, &op.name, false, false),
                    None => self.out.push_str("{\n}"),
                }
            }
            "sdy.mesh" => {
                let sym = match op.prop("sym_name") {
                    Some(Attr::Str(s)) => String::from_utf8_lossy(s).into_owned(),
                    _ => String::new(),
                };
                let mesh = match op.prop("mesh") {
                    Some(Attr::Mesh(m)) => m.to_string(),
                    _ => String::new(),
                };
                let _ = write!(self.out, "{name} {} = {mesh}", symbol_ref(&sym));
                self.attr_dict(&op.attrs, &[]);
            }
            "sdy.sharding_constraint" | "sdy.reshard" => {
                let _ = write!(self.out, "{name} {input} {}", self.sharding_prop(op, "sharding"));
                self.attr_dict(&op.attrs, &[]);
                let _ = write!(self.out, " : {}", result_ty.unwrap_or_default());
            }
            "sdy.data_flow_edge" => {
                let _ = write!(self.out, "{name} {input}");
                if op.prop("sharding").is_some() {
                    let _ = write!(self.out, " sharding={}", self.sharding_prop(op, "sharding"));
                }
                self.attr_dict(&op.attrs, &[]);
                let _ = write!(self.out, " : {}", result_ty.unwrap_or_default());
            }
            "sdy.func_data_flow_edge" => {
                let _ = write!(self.out, "{name} {input}");
                self.attr_dict(&op.attrs, &[]);
                let _ = write!(self.out, " : {}", result_ty.unwrap_or_default());
            }
            "sdy.propagation_barrier" => {
                let dir = op.prop("allowed_direction").map(attr_to_string).unwrap_or_default();
                let _ = write!(self.out, "{name} {input} allowed_direction={dir}");
                self.attr_dict(&op.attrs, &[]);
                let ty = op.operands.first().map(|&v| self.ty(v)).unwrap_or_default();
                let _ = write!(self.out, " : {ty}");
            }
            "sdy.sharding_group" => {
                let id = match op.prop("group_id") {
                    Some(Attr::Int { value, .. }) => value.to_string(),
                    Some(a) => attr_to_string(a),
                    None => String::new(),
                };
                let _ = write!(self.out, "{name} {input} group_id={id}");
                self.attr_dict(&op.attrs, &[]);
                let ty = op.operands.first().map(|&v| self.ty(v)).unwrap_or_default();
                let _ = write!(self.out, " : {ty}");
            }
            "sdy.manual_computation" | "sdy.named_computation" => {
                self.out.push_str(&name);
                if let Some(Attr::Str(s)) = op.prop("name") {
                    let _ = write!(self.out, "<{}>", escape_string(s));
                }
                let _ = write!(self.out, "({})", self.uses(&op.operands));
                let manual = op.kind == OpKind::SdyManualComputation;
                for key in ["in_shardings", "out_shardings"] {
                    if manual || op.prop(key).is_some() {
                        let _ = write!(self.out, " {key}={}", self.per_value_prop(op, key));
                    }
                }
                if manual {
                    let axes = match op.prop("manual_axes") {
                        Some(Attr::AxisList(v)) => AxisListDisplay(v).to_string(),
                        _ => "{}".into(),
                    };
                    let _ = write!(self.out, " manual_axes={axes}");
                }
                self.out.push_str(" (");
                if let Some(r) = op.regions.first() {
                    let args: Vec<String> = r
                        .blocks
                        .first()
                        .map(|b| {
                            b.args
                                .iter()
                                .map(|&a| format!("{}: {}", self.use_of(a), self.ty(a)))
                                .collect()
                        })
                        .unwrap_or_default();
                    self.out.push_str(&args.join(", "));
                    self.out.push_str(") ");
                    self.region(r, &op.name, false, false);
                } else {
                    self.out.push_str(") {\n}");
                }
                self.attr_dict(&op.attrs, &[]);
                self.out.push_str(" : ");
                let ins = self.types(&op.operands);
                let outs = self.types(&op.results);
                self.fn_type(&ins, &outs);
            }
            "sdy.all_gather"
            | "sdy.all_slice"
            | "sdy.reduce_scatter"
            | "sdy.sharded_to_unreduced"
            | "sdy.all_to_all"
            | "sdy.collective_permute"
            | "sdy.all_reduce"
            | "sdy.replicated_to_unreduced" => {
                self.out.push_str(&name);
                if let Some(r) = op.prop("reduction_op") {
                    let r = attr_to_string(r);
                    if r != "sum" && !r.is_empty() {
                        let _ = write!(self.out, " {r}");
                    }
                }
                let axes = match op.name.as_str() {
                    "sdy.all_to_all" => match op.prop("params") {
                        Some(Attr::AllToAll(p)) => Some(AllToAllDisplay(p).to_string()),
                        _ => None,
                    },
                    "sdy.collective_permute" => None,
                    _ => {
                        match op
                            .prop(op.kind.collective_axes_key())
                            .or_else(|| op.prop("sharded_axes"))
                        {
                            Some(Attr::AxisLists(v)) => Some(AxisListsDisplay(v).to_string()),
                            Some(Attr::AxisList(v)) => Some(AxisListDisplay(v).to_string()),
                            Some(a) => Some(attr_to_string(a)),
                            None => None,
                        }
                    }
                };
                if let Some(a) = axes {
                    let _ = write!(self.out, " {a}");
                }
                let _ = write!(
                    self.out,
                    " {input} out_sharding={}",
                    self.sharding_prop(op, "out_sharding")
                );
                self.attr_dict(&op.attrs, &[]);
                let _ = write!(self.out, " : {}", result_ty.unwrap_or_default());
            }
            "sdy.constant" | "stablehlo.constant" => {
                let value = op.prop("value").map(attr_to_string).unwrap_or_default();
                let rt = result_ty.unwrap_or_default();
                if value.ends_with(&format!(" : {rt}")) {
                    self.out.push_str(&name);
                    self.attr_dict(&op.attrs, &[]);
                    let _ = write!(self.out, " {value}");
                } else {
                    self.out.push_str(&name);
                    self.generic(op, false);
                }
            }
            "sdy.return" | "func.return" | "stablehlo.return" => {
                self.out.push_str(&name);
                self.attr_dict(&op.attrs, &[]);
                if !op.operands.is_empty() {
                    let tys = self.types(&op.operands).join(", ");
                    let _ = write!(self.out, " {} : {tys}", self.uses(&op.operands));
                }
            }
            "func.call" => {
                let callee = op.prop("callee").map(attr_to_string).unwrap_or_default();
                let _ = write!(self.out, "{name} {callee}({})", self.uses(&op.operands));
                self.attr_dict(&op.attrs, &[]);
                self.out.push_str(" : ");
                let ins = self.types(&op.operands);
                let outs = self.types(&op.results);
                self.fn_type(&ins, &outs);
            }
            n if (n.starts_with("stablehlo.") || n.starts_with("chlo."))
                && !op.kind.has_elementwise_form() =>
            {
                self.stablehlo(op)
            }
            _ if op.kind.has_elementwise_form() => {
                let _ = write!(self.out, "{name} {}", self.uses(&op.operands));
                self.attr_dict(&op.attrs, &[]);
                let ins = self.types(&op.operands);
                let outs = self.types(&op.results);
                self.out.push_str(" : ");
                if ins.iter().chain(&outs).all(|t| Some(t) == outs.first()) {
                    self.out.push_str(&outs[0]);
                } else {
                    self.fn_type(&ins, &outs);
                }
            }
            _ => self.generic(op, true),
        }
    }
}
