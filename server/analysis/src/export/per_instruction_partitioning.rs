//! `sdy-per-instruction-partitioning`: selected ops of function bodies (by name
//! substring and/or by their index among the sharded ops) are partitioned one by one:
//! the op is outlined into a module of its own, the partitioner's export passes turn it
//! into device-local code, and that code replaces the op inside an
//! `sdy.manual_computation` over every axis the op's shardings use. Operands that do
//! not divide evenly are padded before, results sliced back after.

use super::hlo_ops::{constant, splice_op, zero_of};
use crate::ir::attr::NamedAttr;
use crate::ir::OpKind;
use crate::ir::{Attr, Block, Module, Op, Region, ValueId};
use crate::pass::{PassContext, PassFailed, PassOptions};
use crate::passes::{parse_pass_flag, Pipeline};
use crate::propagation::graph::{is_terminator, replicated_sharding, Graph, OpIdx, ValueType};
use crate::propagation::irutil::{clone_op, make_func, SymbolTable};
use crate::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};
use crate::types::element_type;
use rustc_hash::FxHashMap as HashMap;

/// Which ops the `filter` option selects.
#[derive(Debug, Default, PartialEq)]
pub struct Filter {
    low: Option<i64>,
    high: Option<i64>,
    names: Vec<String>,
    all: bool,
}

impl Filter {
    /// `dot, pad`, `selectLow=0, selectHigh=10`, or empty for every candidate.
    pub fn parse(text: &str) -> Filter {
        let mut text = text.trim();
        if text.is_empty() {
            return Filter { all: true, ..Filter::default() };
        }
        for q in ['\'', '"'] {
            if text.len() >= 2 && text.starts_with(q) && text.ends_with(q) {
                text = text[1..text.len() - 1].trim();
            }
        }
        let mut f = Filter::default();
        for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if let Some(v) = token.strip_prefix("selectLow=") {
                f.low = v.trim().parse().ok().or(f.low);
            } else if let Some(v) = token.strip_prefix("selectHigh=") {
                f.high = v.trim().parse().ok().or(f.high);
            } else {
                f.names.push(token.to_string());
            }
        }
        f
    }

    fn matches(&self, name: &str, seq: i64) -> bool {
        if self.all {
            return true;
        }
        if self.low.is_some_and(|l| l >= 0 && seq < l)
            || self.high.is_some_and(|h| h >= 0 && seq > h)
        {
            return false;
        }
        self.names.is_empty() || self.names.iter().any(|n| name.contains(n.as_str()))
    }
}

/// Ops never partitioned on their own (collectives, sdy structure).
fn skipped(op: &Op) -> bool {
    let name = op.name.as_str();
    if is_terminator(name)
        || op.kind.is_collective()
        || matches!(
            name,
            "sdy.data_flow_edge"
                | "sdy.manual_computation"
                | "sdy.mesh"
                | "sdy.propagation_barrier"
                | "sdy.return"
                | "sdy.sharding_constraint"
                | "sdy.sharding_group"
                | "sdy.replicated_to_unreduced"
                | "sdy.sharded_to_unreduced"
        )
    {
        return true;
    }
    name == "stablehlo.custom_call"
        && matches!(
            crate::propagation::graph::str_attr(op.prop("call_target_name")).as_deref(),
            Some("Sharding" | "mhlo.sharding")
        )
}

fn fully_replicated(s: &TensorSharding) -> bool {
    s.dims.iter().all(|d| d.axes.is_empty()) && s.unreduced.is_empty()
}

pub fn per_instruction_partitioning(
    cx: &mut PassContext<'_>,
    o: &PassOptions,
) -> Result<(), PassFailed> {
    let filter = Filter::parse(o.get("filter").unwrap_or(""));
    let g = Graph::build(cx.module);
    let mut selected: Vec<ValueId> = Vec::new();
    let mut seq = 0i64;
    for &f in g.funcs.values().collect::<std::collections::BTreeSet<_>>() {
        let Some(blocks) = g.node(f).children.first() else { continue };
        for &i in blocks.iter().flatten() {
            let op = g.op(cx.module, i);
            if skipped(op) {
                continue;
            }
            let n = g.node(i);
            let sharded = n
                .results
                .iter()
                .chain(&n.operands)
                .any(|&v| g.sharding_ref(cx.module, v).is_some_and(|s| !fully_replicated(&s)));
            if !sharded {
                continue;
            }
            let id = seq;
            seq += 1;
            // Ops are found again by their first result, which the rewrites keep.
            if filter.matches(&n.name, id) {
                if let Some(&r) = n.results.first() {
                    selected.push(r);
                }
            }
        }
    }
    for r in selected {
        let g = Graph::build(cx.module);
        let Some(crate::propagation::graph::Def::Result { op, .. }) = g.def(r) else { continue };
        partition_one(cx, &g, op, o)?;
    }
    Ok(())
}

/// The mesh every sharding of the op uses (`getCommonMeshOrRef`).
fn common_mesh(shardings: &[Option<TensorSharding>], g: &Graph) -> Option<MeshRef> {
    let mut found: Option<(MeshRef, Mesh)> = None;
    for s in shardings.iter().flatten() {
        let mesh = g.mesh(&s.mesh)?;
        match &found {
            None => found = Some((s.mesh.clone(), mesh)),
            Some((_, m)) if *m == mesh => {}
            Some(_) => return None,
        }
    }
    found.map(|(r, _)| r)
}

/// `getOrCreateMeshSymbol`: the symbol of an inline mesh (a new `@mesh` when no mesh
/// op has it).
fn mesh_symbol(m: &mut Module, r: &MeshRef) -> String {
    let mesh = match r {
        MeshRef::Symbol(s) => return s.clone(),
        MeshRef::Inline(mesh) => mesh.clone(),
    };
    let global = m.body().iter().find_map(|op| match (op.prop("sym_name"), op.prop("mesh")) {
        (Some(Attr::Str(n)), Some(Attr::Mesh(x))) if !x.axes.is_empty() => {
            Some((String::from_utf8_lossy(n).into_owned(), x.clone()))
        }
        _ => None,
    });
    if let Some((name, x)) = global {
        if x == mesh && !(mesh.axes.is_empty() && mesh.device_ids.len() == 1) {
            return name;
        }
    }
    for op in m.body() {
        if let (Some(Attr::Str(n)), Some(Attr::Mesh(x))) = (op.prop("sym_name"), op.prop("mesh")) {
            if *x == mesh {
                return String::from_utf8_lossy(n).into_owned();
            }
        }
    }
    let name = SymbolTable::new(m).insert("mesh");
    let mut op = Op::pretty("sdy.mesh", Vec::new(), Vec::new(), Vec::new());
    op.set_prop("sym_name", Attr::Str(name.as_bytes().to_vec()));
    op.set_prop("mesh", Attr::Mesh(mesh));
    if let Some(body) = m.body_mut() {
        body.insert(0, op);
    }
    name
}

fn shape(ty: &str) -> Option<Vec<i64>> {
    ValueType::parse(ty).static_shape()
}

/// `getDivisiblePaddedType` with the manual axes as the allowed ones.
fn padded_shape(ty: &str, s: &TensorSharding, mesh: &Mesh, manual: &[String]) -> Option<Vec<i64>> {
    let dims = shape(ty)?;
    if fully_replicated(s) {
        return None;
    }
    let mut out = dims.clone();
    for (d, dim) in out.iter_mut().zip(&s.dims) {
        let count: i64 = dim
            .axes
            .iter()
            .filter(|a| manual.iter().any(|m| *m == a.name.as_str()))
            .map(|a| crate::sharding::axis::size(a, mesh))
            .product();
        if count > 1 && *d % count != 0 {
            *d += count - *d % count;
        }
    }
    (out != dims).then_some(out)
}

/// The values of an `array<i64: ...>` property.
fn i64_list(a: Option<&Attr>) -> Vec<i64> {
    let Some(Attr::Raw(text)) = a else { return Vec::new() };
    let inner = text.strip_prefix("array<i64").and_then(|t| t.strip_suffix('>')).unwrap_or("");
    let list = inner.strip_prefix(':').unwrap_or("");
    list.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn array(v: &[i64]) -> Attr {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    Attr::Raw(format!("array<i64: {}>", items.join(", ")))
}

fn partition_one(
    cx: &mut PassContext<'_>,
    g: &Graph,
    i: OpIdx,
    o: &PassOptions,
) -> Result<(), PassFailed> {
    let m = &mut *cx.module;
    let original = g.op(m, i).clone();
    let n = g.node(i);
    let ins: Vec<Option<TensorSharding>> = n.operands.iter().map(|&v| g.sharding(m, v)).collect();
    let outs: Vec<Option<TensorSharding>> = n.results.iter().map(|&v| g.sharding(m, v)).collect();
    let all: Vec<Option<TensorSharding>> = ins.iter().chain(&outs).cloned().collect();
    let Some(mesh_ref) = common_mesh(&all, g) else { return Err(PassFailed) };
    let Some(mesh) = g.mesh(&mesh_ref) else { return Err(PassFailed) };
    let sym = mesh_symbol(m, &mesh_ref);
    let target = MeshRef::Symbol(sym);
    let fill = |v: ValueId, s: &Option<TensorSharding>, clear_unreduced: bool| {
        let rank = ValueType::parse(m.ty(v).unwrap_or("")).rank();
        let mut s = s.clone().unwrap_or_else(|| replicated_sharding(&target, rank, true));
        s.mesh = target.clone();
        if clear_unreduced {
            s.unreduced.clear();
        }
        s
    };
    let in_shardings: Vec<TensorSharding> =
        n.operands.iter().zip(&ins).map(|(&v, s)| fill(v, s, false)).collect();
    let out_shardings: Vec<TensorSharding> =
        n.results.iter().zip(&outs).map(|(&v, s)| fill(v, s, true)).collect();
    let mut manual: Vec<String> = Vec::new();
    for s in in_shardings.iter().chain(&out_shardings) {
        let axes = s.dims.iter().flat_map(|d| &d.axes).chain(&s.replicated).chain(&s.unreduced);
        for a in axes {
            if !manual.iter().any(|x| *x == a.name.as_str()) {
                manual.push(a.name.to_string());
            }
        }
    }

    // A reshard's operand and result share one padded type.
    let unified: Option<Vec<i64>> = (original.kind == OpKind::SdyReshard)
        .then(|| {
            let ty = m.ty(*n.operands.first()?)?.to_string();
            let base = shape(&ty)?;
            let a = padded_shape(&ty, &in_shardings[0], &mesh, &manual);
            let b = padded_shape(&ty, out_shardings.first()?, &mesh, &manual);
            if a.is_none() && b.is_none() {
                return None;
            }
            let mut out = base;
            for p in [a, b].into_iter().flatten() {
                for (x, y) in out.iter_mut().zip(p) {
                    *x = (*x).max(y);
                }
            }
            Some(out)
        })
        .flatten();
    let padded_of = |ty: &str, s: &TensorSharding| -> Option<Vec<i64>> {
        match &unified {
            Some(u) => (shape(ty).as_deref() != Some(u)).then(|| u.clone()),
            None => padded_shape(ty, s, &mesh, &manual),
        }
    };

    let mut before: Vec<Op> = Vec::new();
    let mut operands = Vec::new();
    let mut arg_types = Vec::new();
    for (&v, s) in n.operands.iter().zip(&in_shardings) {
        let ty = m.ty(v).unwrap_or("").to_string();
        let Some(p) = padded_of(&ty, s) else {
            operands.push(v);
            arg_types.push(ty);
            continue;
        };
        let base = shape(&ty).unwrap_or_default();
        let elem = element_type(&ty).to_string();
        let scalar = format!("tensor<{elem}>");
        let (c, zero) = constant(m, &zero_of(&scalar), &scalar);
        before.push(c);
        let pty = crate::types::tensor_text(&p, &elem);
        let pv = m.new_value(Some(pty.clone()));
        let mut pad = Op::pretty("stablehlo.pad", vec![v, zero], vec![pv], Vec::new());
        let high: Vec<i64> = p.iter().zip(&base).map(|(a, b)| a - b).collect();
        pad.props = vec![
            NamedAttr::new("edge_padding_low", array(&vec![0; p.len()])),
            NamedAttr::new("edge_padding_high", array(&high)),
            NamedAttr::new("interior_padding", array(&vec![0; p.len()])),
        ];
        pad.set_attr("sdy.sharding", Attr::PerValue(vec![s.clone()]));
        before.push(pad);
        operands.push(pv);
        arg_types.push(pty);
    }
    let result_types: Vec<String> = n
        .results
        .iter()
        .zip(&out_shardings)
        .map(|(&r, s)| {
            let ty = m.ty(r).unwrap_or("").to_string();
            match padded_of(&ty, s) {
                Some(p) => crate::types::tensor_text(&p, element_type(&ty)),
                None => ty,
            }
        })
        .collect();

    // The outlined function.
    let args: Vec<ValueId> = arg_types.iter().map(|t| m.new_value(Some(t.clone()))).collect();
    let mut map: HashMap<ValueId, ValueId> = HashMap::default();
    let mut clone = clone_op(m, &original, &mut map);
    clone.operands.clone_from(&args);
    for (k, (&r, pty)) in clone.results.clone().iter().zip(&result_types).enumerate() {
        let oty = m.ty(n.results[k]).unwrap_or("").to_string();
        if *pty == oty {
            continue;
        }
        let grow: Vec<i64> = shape(pty)
            .unwrap_or_default()
            .iter()
            .zip(shape(&oty).unwrap_or_default())
            .map(|(a, b)| a - b)
            .collect();
        let key = match clone.name.as_str() {
            "stablehlo.slice" => Some("limit_indices"),
            "stablehlo.pad" => Some("edge_padding_high"),
            _ => None,
        };
        if let Some(key) = key {
            let cur = i64_list(clone.prop(key));
            let new: Vec<i64> = cur
                .iter()
                .zip(grow.iter().chain(std::iter::repeat(&0)))
                .map(|(a, b)| a + b)
                .collect();
            clone.set_prop(key, array(&new));
        }
        m.values[r as usize].ty = Some(pty.clone());
    }
    let ret = Op::pretty("func.return", clone.results.clone(), Vec::new(), Vec::new());
    let typed_args: Vec<(ValueId, String)> = args.into_iter().zip(arg_types.clone()).collect();
    let mut func = make_func("outlined_op", typed_args, result_types.clone(), vec![clone, ret]);
    if let Some(f) = func.func_mut() {
        let slots =
            f.args.iter_mut().zip(&in_shardings).chain(f.results.iter_mut().zip(&out_shardings));
        for (slot, s) in slots {
            slot.set_attr("sdy.sharding", Attr::Sharding(s.clone()));
        }
    }
    let mut body: Vec<Op> =
        m.body().iter().filter(|o| o.kind == OpKind::SdyMesh).cloned().collect();
    body.push(func);
    let mut temp = Module {
        values: m.values.clone(),
        top: Op {
            origin: None,
            name: m.top.name.clone(),
            kind: m.top.kind,
            results: Vec::new(),
            operands: Vec::new(),
            props: Vec::new(),
            attrs: Vec::new(),
            regions: vec![Region { blocks: vec![Block { args: Vec::new(), ops: body }] }],
            syntax: m.top.syntax.clone(),
        },
    };
    let permutation = has_permutation_factors(cx, &original);
    run_partitioner(cx, &mut temp, o, permutation)?;
    let m = &mut *cx.module;
    m.values = std::mem::take(&mut temp.values);
    let Some(mut block) = temp
        .body_mut()
        .and_then(|b| b.pop())
        .and_then(|f| f.regions.into_iter().next())
        .and_then(|r| r.blocks.into_iter().next())
    else {
        return Err(PassFailed);
    };
    if let Some(term) = block.ops.last_mut() {
        if term.kind != OpKind::SdyReturn {
            *term = Op::pretty("sdy.return", term.operands.clone(), Vec::new(), Vec::new());
        }
    }
    let mc_results: Vec<ValueId> =
        result_types.iter().map(|t| m.new_value(Some(t.clone()))).collect();
    let mut mc = Op::pretty("sdy.manual_computation", operands, mc_results.clone(), Vec::new());
    mc.props = vec![
        NamedAttr::new("in_shardings", Attr::PerValue(in_shardings)),
        NamedAttr::new("out_shardings", Attr::PerValue(out_shardings.clone())),
        NamedAttr::new(
            "manual_axes",
            Attr::AxisList(manual.iter().map(|a| AxisRef::full(a.as_str())).collect()),
        ),
    ];
    mc.regions = vec![Region { blocks: vec![block] }];
    before.push(mc);

    // Slice padded results back.
    let mut replace = Vec::new();
    for (k, &r) in original.results.iter().enumerate() {
        let oty = m.ty(r).unwrap_or("").to_string();
        if result_types[k] == oty {
            replace.push((r, mc_results[k]));
            continue;
        }
        let base = shape(&oty).unwrap_or_default();
        let sv = m.new_value(Some(oty.clone()));
        let mut slice = Op::pretty("stablehlo.slice", vec![mc_results[k]], vec![sv], Vec::new());
        slice.props = vec![
            NamedAttr::new("start_indices", array(&vec![0; base.len()])),
            NamedAttr::new("limit_indices", array(&base)),
            NamedAttr::new("strides", array(&vec![1; base.len()])),
        ];
        slice.set_attr("sdy.sharding", Attr::PerValue(vec![out_shardings[k].clone()]));
        before.push(slice);
        replace.push((r, sv));
    }
    let first = original.results.first().copied();
    splice_op(m, first, before);
    for (from, to) in replace {
        m.top.replace_uses(from, to);
    }
    Ok(())
}

/// Whether `-sdy-resolve-permutation-factors` has work on the op: a reshape, or an op
/// whose (non-custom) sharding rule has a permutation factor.
fn has_permutation_factors(cx: &PassContext<'_>, op: &Op) -> bool {
    if op.kind == OpKind::StablehloReshape {
        return true;
    }
    if !op.name.starts_with("stablehlo.") {
        return false;
    }
    let Some(id) = op.origin.and_then(|o| cx.model.ops.iter().position(|x| x.start == o)) else {
        return false;
    };
    let opts = crate::rules::RuleOptions { conservative: false };
    match crate::rules::rule_for(cx.model, id as crate::model::OpId, cx.src, &opts) {
        crate::rules::RuleLookup::Existing(r) | crate::rules::RuleLookup::Created(r) => {
            !r.is_custom && !r.permutation.is_empty()
        }
        _ => false,
    }
}

/// The partitioner's export passes, run on the outlined module (the permutation pass
/// only when the op has permutation factors: it does nothing otherwise).
fn run_partitioner(
    cx: &mut PassContext<'_>,
    temp: &mut Module,
    o: &PassOptions,
    permutation: bool,
) -> Result<(), PassFailed> {
    let halo = o.get("enable-halo-exchange").unwrap_or("true");
    let replicas = o.get("replica-count").unwrap_or("1");
    let partitions = o.get("partition-count").unwrap_or("1");
    let flags = [
        format!(
            "-sdy-resolve-permutation-factors=enable-halo-exchange={halo} replica-count={replicas} partition-count={partitions}"
        ),
        "-sdy-insert-explicit-reshards=enable-full-version=true".to_string(),
        "-sdy-reshard-to-collectives".to_string(),
        "-sdy-pad-for-divisibility".to_string(),
        format!("-sdy-convert-global-to-local=replica-count={replicas} partition-count={partitions}"),
        "-sdy-drop-sharding-and-mesh".to_string(),
    ];
    let mut pipeline = Pipeline::new();
    for f in flags.iter().skip(usize::from(!permutation)) {
        let added = parse_pass_flag(f).and_then(|spec| pipeline.add(&spec));
        if let Err(message) = added {
            cx.error(0, message, None);
            return Err(PassFailed);
        }
    }
    pipeline.run_on(cx, temp)
}

#[cfg(test)]
mod tests {
    use super::Filter;

    #[test]
    fn filters() {
        let range = Filter::parse("'selectHigh=2, selectLow=1'");
        let picked: Vec<i64> = (0..4).filter(|&i| range.matches("stablehlo.add", i)).collect();
        assert_eq!(picked, [1, 2]);
        let names = Filter::parse("dot, pad");
        assert!(names.matches("stablehlo.dot_general", 7) && names.matches("stablehlo.pad", 0));
        assert!(!names.matches("stablehlo.add", 0));
        let both = Filter::parse("add,selectLow=3");
        assert!(!both.matches("stablehlo.add", 2) && both.matches("stablehlo.add", 3));
        assert!(Filter::parse("  ").matches("sdy.reshard", 99));
    }
}
