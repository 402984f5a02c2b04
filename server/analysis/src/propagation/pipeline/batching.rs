//! `-sdy-explicit-gather-scatter-batching`: a `stablehlo.gather`/`stablehlo.scatter`
//! whose dimension 0 is an implicit batch dimension (the index component that indexes
//! operand dimension 0 comes from an `iota` along dimension 0, and dimension 0 of
//! operand and indices agree) gets it as an explicit batching dimension, and that
//! component is cut out of the indices.
//!
//! Shardy runs the two rewrites with MLIR's greedy driver on every function; this runs
//! them with the canonicalizer's driver (bottom-up, as `applyPatternsGreedily` is by
//! default), which also erases the ops left dead.

use crate::canonicalize::arena::OpRef;
use crate::canonicalize::driver::{Config, Rewriter};
use crate::ir::attr::NamedAttr;
use crate::ir::text::{struct_field_order, struct_fields};
use crate::ir::{Attr, Module, Op, ValueId};
use crate::propagation::graph::ValueType;
use crate::types::element_type;

/// Runs the pass on `m`.
pub fn explicit_gather_scatter_batching(m: &mut Module) {
    let cfg = Config { top_down: false, ..Config::default() };
    crate::canonicalize::rewrite_greedily(m, &cfg, apply);
}

fn apply(rw: &mut Rewriter, op: OpRef) -> bool {
    match rw.ir.name(op) {
        "stablehlo.gather" => rewrite(rw, op, &GATHER),
        "stablehlo.scatter" => rewrite(rw, op, &SCATTER),
        _ => false,
    }
}

/// The names one of the two ops gives its attribute and dimension-number fields.
struct Names {
    attr: &'static str,
    prefix: &'static str,
    /// Operand dimensions sliced away (gather `collapsed_slice_dims`, scatter
    /// `inserted_window_dims`).
    collapsed: &'static str,
    operand_batching: &'static str,
    indices_batching: &'static str,
    /// Index components to operand dimensions.
    index_map: &'static str,
    /// The boolean properties the op's builder always sets.
    flags: &'static [&'static str],
}

const GATHER: Names = Names {
    attr: "dimension_numbers",
    prefix: "#stablehlo.gather<",
    collapsed: "collapsed_slice_dims",
    operand_batching: "operand_batching_dims",
    indices_batching: "start_indices_batching_dims",
    index_map: "start_index_map",
    flags: &["indices_are_sorted"],
};

const SCATTER: Names = Names {
    attr: "scatter_dimension_numbers",
    prefix: "#stablehlo.scatter<",
    collapsed: "inserted_window_dims",
    operand_batching: "input_batching_dims",
    indices_batching: "scatter_indices_batching_dims",
    index_map: "scatter_dims_to_operand_dims",
    flags: &["indices_are_sorted", "unique_indices"],
};

/// A dimension-number attribute's fields as integer lists (`index_vector_dim` as a
/// one-element list).
struct DimNumbers(Vec<(String, Vec<i64>)>);

impl DimNumbers {
    fn parse(text: &str, prefix: &str) -> Option<DimNumbers> {
        let fields = struct_fields(text.strip_prefix(prefix)?)?;
        let mut out = Vec::new();
        for (k, v) in fields {
            let list = match v.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                Some(items) if items.trim().is_empty() => Vec::new(),
                Some(items) => {
                    items.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?
                }
                None => vec![v.parse().ok()?],
            };
            out.push((k.to_string(), list));
        }
        Some(DimNumbers(out))
    }
    fn get(&self, k: &str) -> &[i64] {
        self.0.iter().find(|(n, _)| n == k).map_or(&[], |(_, v)| v)
    }
    fn set(&mut self, k: &str, v: Vec<i64>) {
        match self.0.iter_mut().find(|(n, _)| n == k) {
            Some(slot) => slot.1 = v,
            None => self.0.push((k.to_string(), v)),
        }
    }
    /// The attribute as StableHLO prints it (empty lists left out).
    fn print(&self, names: &Names) -> String {
        let fields: Vec<String> = struct_field_order(names.prefix)
            .iter()
            .filter_map(|k| {
                let v = self.get(k);
                match *k {
                    "index_vector_dim" => {
                        v.first().filter(|&&d| d != 0).map(|d| format!("{k} = {d}"))
                    }
                    _ if v.is_empty() => None,
                    _ => Some(format!("{k} = {}", list(v))),
                }
            })
            .collect();
        format!("{}{}>", names.prefix, fields.join(", "))
    }
}

fn list(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// MLIR's `getDimSize`: dynamic dimensions are `i64::MIN`.
fn shape(rw: &Rewriter, v: ValueId) -> Option<Vec<i64>> {
    match ValueType::parse(rw.ir.ty(v)?) {
        ValueType::Ranked(d) => Some(d.into_iter().map(|x| x.unwrap_or(i64::MIN)).collect()),
        _ => None,
    }
}

/// Shardy's `ExplicitGatherBatchingPattern` / `ExplicitScatterBatchingPattern`.
fn rewrite(rw: &mut Rewriter, op: OpRef, names: &Names) -> bool {
    let o = rw.ir.op(op);
    let Some(Attr::Raw(text)) = o.prop(names.attr) else { return false };
    let Some(mut dims) = DimNumbers::parse(text, names.prefix) else { return false };
    // The operand (gather) or first input (scatter), and the indices.
    let n = o.operands.len();
    let (operand, indices_at) = match names.attr {
        "dimension_numbers" if n == 2 => (o.operands[0], 1),
        "scatter_dimension_numbers" if n >= 3 && n % 2 == 1 => (o.operands[0], n / 2),
        _ => return false,
    };
    let indices = o.operands[indices_at];
    if !dims.get(names.operand_batching).is_empty() {
        return false;
    }
    let (Some(operand_shape), Some(indices_shape)) = (shape(rw, operand), shape(rw, indices))
    else {
        return false;
    };
    if operand_shape.is_empty() || indices_shape.is_empty() {
        return false;
    }
    let index_vector_dim = dims.get("index_vector_dim").first().copied().unwrap_or(0);
    let Ok(ivd) = usize::try_from(index_vector_dim) else { return false };
    if ivd >= indices_shape.len() || indices_shape[ivd] <= 1 {
        return false;
    }
    if indices_shape[0] != operand_shape[0] {
        return false;
    }
    let mut index_map = dims.get(names.index_map).to_vec();
    let Some(removed) = index_map.iter().position(|&d| d == 0) else { return false };
    if !iota_origin(rw, indices, index_vector_dim, removed) {
        return false;
    }
    index_map.remove(removed);
    let mut collapsed = dims.get(names.collapsed).to_vec();
    let Some(c) = collapsed.iter().position(|&d| d == 0) else { return false };
    collapsed.remove(c);
    let new_indices = cut_component(rw, op, indices, &indices_shape, ivd, removed);
    dims.set(names.index_map, index_map);
    dims.set(names.collapsed, collapsed);
    dims.set(names.operand_batching, vec![0]);
    dims.set(names.indices_batching, vec![0]);
    // The op is rebuilt in place: same attributes, new dimension numbers and indices.
    let printed = dims.print(names);
    let node = &mut rw.ir.ops[op].op;
    if let Some(a) = node.props.iter_mut().find(|a| a.name == names.attr) {
        a.value = Attr::Raw(printed);
    }
    // The new op's builder sets its flags, defaults included.
    for flag in names.flags {
        if node.prop(flag).is_none() {
            node.set_prop(flag, Attr::Bool(false));
        }
    }
    rw.ir.set_operand(op, indices_at, new_indices);
    rw.add_to_worklist(op);
    // The old indices may be left dead.
    if let Some(d) = rw.ir.def_op(indices) {
        rw.add_to_worklist(d);
    }
    true
}

/// Shardy's `verifyIotaOrigin`: index component `removed` of `indices` comes from an
/// `iota` along dimension 0, through a concatenate along the index vector dimension and
/// reshapes, broadcasts, clamps and selects.
fn iota_origin(rw: &Rewriter, indices: ValueId, index_vector_dim: i64, removed: usize) -> bool {
    let mut v = indices;
    if let Some(c) = rw.ir.def_op_named(indices, "stablehlo.concatenate") {
        let cat = rw.ir.op(c);
        if dim_prop(cat, "dimension") != Some(index_vector_dim) || removed >= cat.operands.len() {
            return false;
        }
        v = cat.operands[removed];
    }
    // Unwrap reshapes, broadcasts, clamps (their operand) and selects (an iota on the
    // false side, else the true side).
    while let Some(d) = rw.ir.def_op(v) {
        let o = rw.ir.op(d);
        let next = match (o.name.as_str(), o.operands.as_slice()) {
            ("stablehlo.reshape" | "stablehlo.broadcast_in_dim", [x, ..]) => *x,
            ("stablehlo.clamp", [_, x, _]) => *x,
            ("stablehlo.select", [_, t, f]) => {
                if rw.ir.def_op_named(*f, "stablehlo.iota").is_some() {
                    *f
                } else {
                    *t
                }
            }
            _ => break,
        };
        v = next;
    }
    rw.ir
        .def_op_named(v, "stablehlo.iota")
        .is_some_and(|i| dim_prop(rw.ir.op(i), "iota_dimension") == Some(0))
}

/// An integer property; the custom form (`dim = 0`) names it `dim`.
fn dim_prop(op: &Op, name: &str) -> Option<i64> {
    match op.prop(name).or_else(|| op.prop("dim")) {
        Some(Attr::Int { value, .. }) => i64::try_from(*value).ok(),
        _ => None,
    }
}

/// Shardy's `sliceAndConcatenateIndices`: `indices` without component `removed` of
/// dimension `ivd`, built before `at`.
fn cut_component(
    rw: &mut Rewriter,
    at: OpRef,
    indices: ValueId,
    shape: &[i64],
    ivd: usize,
    removed: usize,
) -> ValueId {
    let elem = element_type(rw.ir.ty(indices).unwrap_or("")).to_string();
    let ty_with = |size: i64| {
        let mut s = shape.to_vec();
        s[ivd] = size;
        crate::types::tensor_text(&s, &elem)
    };
    let total = shape[ivd];
    // A concatenate of every component: concatenate the others.
    if let Some(c) = rw.ir.def_op_named(indices, "stablehlo.concatenate") {
        let cat = rw.ir.op(c);
        if usize::try_from(dim_prop(cat, "dimension").unwrap_or(-1)) == Ok(ivd)
            && i64::try_from(cat.operands.len()) == Ok(total)
        {
            let mut inputs = cat.operands.clone();
            inputs.remove(removed);
            if inputs.len() == 1 {
                return inputs[0];
            }
            return concatenate(rw, at, inputs, ivd, ty_with(total - 1));
        }
    }
    let removed = removed as i64;
    let mut parts = Vec::new();
    for (start, end) in [(0, removed), (removed + 1, total)] {
        if start >= end {
            continue;
        }
        let mut starts = vec![0; shape.len()];
        let mut limits = shape.to_vec();
        starts[ivd] = start;
        limits[ivd] = end;
        let strides = vec![1; shape.len()];
        let result = rw.ir.new_value(Some(ty_with(end - start)));
        let props = vec![
            NamedAttr::new("start_indices", i64_array(&starts)),
            NamedAttr::new("limit_indices", i64_array(&limits)),
            NamedAttr::new("strides", i64_array(&strides)),
        ];
        let slice = generic("stablehlo.slice", vec![indices], result, props);
        rw.insert_before(at, slice);
        parts.push(result);
    }
    if parts.len() == 1 {
        return parts[0];
    }
    concatenate(rw, at, parts, ivd, ty_with(total - 1))
}

fn concatenate(
    rw: &mut Rewriter,
    at: OpRef,
    inputs: Vec<ValueId>,
    dim: usize,
    ty: String,
) -> ValueId {
    let result = rw.ir.new_value(Some(ty));
    let props =
        vec![NamedAttr::new("dimension", Attr::Int { value: dim as i128, ty: "i64".into() })];
    rw.insert_before(at, generic("stablehlo.concatenate", inputs, result, props));
    result
}

/// A new op, printed in its custom form.
fn generic(name: &str, operands: Vec<ValueId>, result: ValueId, props: Vec<NamedAttr>) -> Op {
    Op::pretty(name, operands, vec![result], props)
}

fn i64_array(v: &[i64]) -> Attr {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    match items.is_empty() {
        true => Attr::Raw("array<i64>".into()),
        false => Attr::Raw(format!("array<i64: {}>", items.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim_numbers_round_trip_in_stablehlo_order() {
        let text = "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], \
                    start_index_map = [0, 1], index_vector_dim = 1>";
        let mut d = DimNumbers::parse(text, GATHER.prefix).unwrap();
        d.set("operand_batching_dims", vec![0]);
        d.set("collapsed_slice_dims", vec![]);
        assert_eq!(
            d.print(&GATHER),
            "#stablehlo.gather<offset_dims = [1], operand_batching_dims = [0], \
             start_index_map = [0, 1], index_vector_dim = 1>"
        );
    }
}
