//! The import passes of `-sdy-propagation-pipeline` that change what users see.

use super::super::edges::{add_data_flow_edges, post_order};
use super::super::graph::*;
use super::super::irutil::*;
use super::super::ops::is_elementwise_op;
use crate::ir::attr::NamedAttr;
use crate::ir::{Attr, Module, Op, OpKind, Syntax, ValueId};
use crate::sharding::axis;
use crate::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// `symbol-dce`: removes private functions nothing (live) refers to.
pub fn symbol_dce(m: &mut Module) {
    fn refs(a: &Attr, out: &mut impl FnMut(&str)) {
        match a {
            Attr::Symbol(s) => out(s),
            Attr::Array(v) => v.iter().for_each(|x| refs(x, out)),
            Attr::Dict(d) => d.iter().for_each(|x| refs(&x.value, out)),
            _ => {}
        }
    }
    let body = m.body();
    // Only private functions can go: without one, nothing to look for.
    if !body.iter().any(|o| func_sym(o).is_some() && is_private(o)) {
        return;
    }
    // Liveness is transitive from the roots (public functions and other top-level
    // ops), so one sweep suffices: what it removes refers to nothing left alive.
    let by_name: HashMap<&str, usize> =
        body.iter().enumerate().filter_map(|(i, o)| func_sym(o).map(|s| (s, i))).collect();
    let mut live: HashSet<&str> = HashSet::default();
    let mut work: Vec<usize> = Vec::new();
    for (i, op) in body.iter().enumerate() {
        match func_sym(op) {
            Some(s) if !is_private(op) => {
                live.insert(s);
                work.push(i);
            }
            Some(_) => {}
            None => work.push(i),
        }
    }
    while let Some(i) = work.pop() {
        body[i].walk(&mut |op: &Op| {
            let mut mark = |s: &str| {
                if let Some((&k, &j)) = by_name.get_key_value(s) {
                    if live.insert(k) {
                        work.push(j);
                    }
                }
            };
            if let Some(c) = callee_ref(op) {
                mark(&c);
            }
            for a in op.props.iter().chain(op.attrs.iter()) {
                refs(&a.value, &mut mark);
            }
        });
    }
    let keep: Vec<bool> = body
        .iter()
        .map(|o| func_sym(o).is_none_or(|s| !is_private(o) || live.contains(s)))
        .collect();
    if let Some(b) = m.body_mut() {
        let mut i = 0;
        b.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }
}

fn mesh_op(name: &str, mesh: Mesh) -> Op {
    let mut op = Op::pretty("sdy.mesh", Vec::new(), Vec::new(), Vec::new());
    op.set_prop("sym_name", Attr::Str(name.as_bytes().to_vec()));
    op.set_prop("mesh", Attr::Mesh(mesh));
    op
}

fn stablehlo_mesh_dict(mesh: &Mesh) -> Attr {
    let axes = mesh
        .axes
        .iter()
        .map(|(n, s)| {
            Attr::Dict(vec![
                NamedAttr::new("name", Attr::Str(n.as_bytes().to_vec())),
                NamedAttr::new("size", Attr::Int { value: *s as i128, ty: "i64".into() }),
            ])
        })
        .collect();
    let mut d = vec![NamedAttr::new("axes", Attr::Array(axes))];
    if !mesh.device_ids.is_empty() {
        let ids = &mesh.device_ids;
        let body = if ids.iter().all(|&x| x == ids[0]) {
            ids[0].to_string()
        } else {
            format!("[{}]", ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
        };
        d.push(NamedAttr::new(
            "device_ids",
            Attr::Raw(format!("dense<{body}> : tensor<{}xi64>", ids.len())),
        ));
    }
    Attr::Dict(d)
}

/// `sdy-lift-inlined-meshes`: dedups identical meshes, turns inline meshes into
/// `sdy.mesh` symbols and adds the `stablehlo.mesh` attribute to every mesh.
pub fn lift_inlined_meshes(m: &mut Module) {
    let mut by_mesh: Vec<(Mesh, String)> = Vec::new();
    let mut rename: HashMap<String, String> = HashMap::default();
    let mut last_mesh: Option<usize> = None;
    let body = std::mem::take(m.body_mut().expect("module body"));
    let mut kept = Vec::with_capacity(body.len());
    for op in body {
        if op.kind == OpKind::SdyMesh {
            if let (Some(Attr::Str(n)), Some(Attr::Mesh(mesh))) =
                (op.prop("sym_name"), op.prop("mesh"))
            {
                let name = String::from_utf8_lossy(n).into_owned();
                if let Some((_, first)) = by_mesh.iter().find(|(x, _)| x == mesh) {
                    rename.insert(name, first.clone());
                    continue;
                }
                by_mesh.push((mesh.clone(), name));
                last_mesh = Some(kept.len());
            }
        }
        kept.push(op);
    }
    *m.body_mut().expect("module body") = kept;
    let mut table = SymbolTable::new(m);
    let mut new_meshes: Vec<Op> = Vec::new();
    transform_shardings(m, &mut |s: &mut TensorSharding| match &s.mesh {
        MeshRef::Symbol(n) => {
            if let Some(r) = rename.get(n) {
                s.mesh = MeshRef::Symbol(r.clone());
            }
        }
        MeshRef::Inline(mesh) => {
            if let Some((_, n)) = by_mesh.iter().find(|(x, _)| x == mesh) {
                s.mesh = MeshRef::Symbol(n.clone());
            } else {
                let base = if mesh.axes.is_empty() && mesh.device_ids.len() == 1 {
                    format!("maximal_mesh_{}", mesh.device_ids[0])
                } else if mesh.axes.is_empty() && mesh.device_ids.is_empty() {
                    "empty_mesh".to_string()
                } else {
                    "mesh".to_string()
                };
                let name = table.insert(&base);
                by_mesh.push((mesh.clone(), name.clone()));
                new_meshes.push(mesh_op(&name, mesh.clone()));
                s.mesh = MeshRef::Symbol(name);
            }
        }
    });
    // Meshes of StableHLO collectives' `replica_groups`, op kind by op kind.
    let mut shlo_meshes: HashMap<String, String> = HashMap::default();
    for kind in REPLICA_GROUP_OPS {
        m.top.walk_mut(&mut |op: &mut Op| {
            if op.name != kind {
                return;
            }
            let slot =
                op.props.iter_mut().chain(op.attrs.iter_mut()).find(|a| a.name == "replica_groups");
            let Some(NamedAttr { value: Attr::Raw(text), .. }) = slot else { return };
            let Some((mesh, rest)) = replica_group_mesh(text) else { return };
            let name = match mesh {
                MeshOrRef::Symbol(n) => match rename.get(n) {
                    Some(r) => r.clone(),
                    None => return,
                },
                MeshOrRef::Stablehlo(key, mesh) => match shlo_meshes.get(key) {
                    Some(n) => n.clone(),
                    None => {
                        let name = table.insert("mesh");
                        shlo_meshes.insert(key.to_string(), name.clone());
                        new_meshes.push(mesh_op(&name, mesh));
                        name
                    }
                },
            };
            *text = format!("{REPLICA_GROUP_PREFIX}@{name}{rest}");
        });
    }
    let at = last_mesh.map_or(0, |i| i + 1);
    if let Some(b) = m.body_mut() {
        for (k, op) in new_meshes.into_iter().enumerate() {
            b.insert(at + k, op);
        }
        for op in b.iter_mut() {
            if op.kind == OpKind::SdyMesh && op.attr("stablehlo.mesh").is_none() {
                if let Some(Attr::Mesh(mesh)) = op.prop("mesh") {
                    let d = stablehlo_mesh_dict(mesh);
                    op.set_attr("stablehlo.mesh", d);
                }
            }
        }
    }
}

/// The collectives whose `replica_groups` may name a mesh, in the order Shardy lifts
/// them.
const REPLICA_GROUP_OPS: [&str; 5] = [
    "stablehlo.all_gather",
    "stablehlo.all_reduce",
    "stablehlo.reduce_scatter",
    "stablehlo.all_to_all",
    "stablehlo.collective_broadcast",
];
const REPLICA_GROUP_PREFIX: &str = "#stablehlo.replica_group_mesh_axes<mesh = ";

enum MeshOrRef<'a> {
    Symbol(&'a str),
    /// An inlined `#stablehlo.mesh<...>` (its text, as the key) and its axes.
    Stablehlo(&'a str, Mesh),
}

/// The mesh of a `#stablehlo.replica_group_mesh_axes<mesh = M, ...>` and the text after
/// it.
fn replica_group_mesh(text: &str) -> Option<(MeshOrRef<'_>, &str)> {
    let rest = text.strip_prefix(REPLICA_GROUP_PREFIX)?;
    if let Some(sym) = rest.strip_prefix('@') {
        let end = sym.find([',', '>'])?;
        return Some((MeshOrRef::Symbol(sym[..end].trim()), &sym[end..]));
    }
    let body = rest.strip_prefix("#stablehlo.mesh<")?;
    // The mesh attribute ends at its matching `>`.
    let mut depth = 1;
    let end = body.char_indices().find_map(|(i, c)| {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ => {}
        }
        (depth == 0).then_some(i)
    })?;
    let key = &rest[..end + "#stablehlo.mesh<".len() + 1];
    let mut axes = Vec::new();
    for axis in body[..end].split("#stablehlo.mesh_axis<").skip(1) {
        let name = axis.split_once("name = \"")?.1.split_once('"')?.0;
        let size = axis.split_once("size = ")?.1;
        let digits: String = size.chars().take_while(char::is_ascii_digit).collect();
        axes.push((name.to_string(), digits.parse().ok()?));
    }
    Some((MeshOrRef::Stablehlo(key, Mesh { axes, device_ids: Vec::new() }), &rest[key.len()..]))
}

/// The module's meshes by symbol name.
pub fn meshes(m: &Module) -> HashMap<String, Mesh> {
    let mut out = HashMap::default();
    for op in m.body() {
        if let (Some(Attr::Str(n)), Some(Attr::Mesh(mesh))) = (op.prop("sym_name"), op.prop("mesh"))
        {
            out.insert(String::from_utf8_lossy(n).into_owned(), mesh.clone());
        }
    }
    out
}

fn mesh_of(ms: &HashMap<String, Mesh>, r: &MeshRef) -> Option<Mesh> {
    match r {
        MeshRef::Symbol(s) => ms.get(s).cloned(),
        MeshRef::Inline(x) => Some(x.clone()),
    }
}

/// `sdy-remove-size-one-axes`.
pub fn remove_size_one_axes(m: &mut Module) {
    let ms = meshes(m);
    if !ms.values().any(|x| x.axes.iter().any(|a| a.1 == 1)) {
        return;
    }
    transform_shardings(m, &mut |out: &mut TensorSharding| {
        let Some(mesh) = mesh_of(&ms, &out.mesh) else { return };
        let keep = |a: &AxisRef| axis::size(a, &mesh) != 1;
        for d in &mut out.dims {
            d.axes.retain(keep);
            if d.axes.is_empty() && !d.open {
                d.priority = None;
            }
        }
        out.replicated.retain(keep);
        out.unreduced.retain(keep);
    });
}

/// `getFuncResultShardings`: the result shardings of a function when any is on a
/// non-maximal mesh (missing ones fully open).
pub fn func_result_shardings(ms: &HashMap<String, Mesh>, f: &Op) -> Option<Vec<TensorSharding>> {
    let fi = f.func()?;
    slot_shardings(
        ms,
        &fi.results.iter().map(|s| (s.attr("sdy.sharding"), s.ty.clone())).collect::<Vec<_>>(),
    )
}

/// `getFuncArgShardings`.
pub fn func_arg_shardings(ms: &HashMap<String, Mesh>, f: &Op) -> Option<Vec<TensorSharding>> {
    let fi = f.func()?;
    slot_shardings(
        ms,
        &fi.args.iter().map(|s| (s.attr("sdy.sharding"), s.ty.clone())).collect::<Vec<_>>(),
    )
}

fn slot_shardings(
    ms: &HashMap<String, Mesh>,
    slots: &[(Option<&Attr>, String)],
) -> Option<Vec<TensorSharding>> {
    let mesh_ref = slots.iter().find_map(|(a, _)| {
        let s = sharding_of(*a)?;
        let mesh = mesh_of(ms, &s.mesh)?;
        (!(mesh.axes.is_empty() && mesh.device_ids.len() == 1)).then_some(s.mesh)
    })?;
    Some(
        slots
            .iter()
            .map(|(a, ty)| {
                sharding_of(*a)
                    .unwrap_or_else(|| open_sharding(&mesh_ref, ValueType::parse(ty).rank()))
            })
            .collect(),
    )
}

/// `sdy-propagate-sharding-from-func-to-call`.
pub fn propagate_sharding_from_func_to_call(m: &mut Module) {
    let ms = meshes(m);
    let funcs: HashMap<String, Option<Vec<TensorSharding>>> = m
        .body()
        .iter()
        .filter_map(|o| func_sym(o).map(|s| (s.to_string(), func_result_shardings(&ms, o))))
        .collect();
    m.top.walk_mut(&mut |op: &mut Op| {
        if op.kind != OpKind::FuncCall || op.attr("sdy.sharding").is_some() {
            return;
        }
        if let Some(Some(list)) = callee(op).and_then(|c| funcs.get(&c)) {
            op.set_attr("sdy.sharding", Attr::PerValue(list.clone()));
        }
    });
}

/// `sdy-manual-axes-cleanup`. Returns an error (op origin, message) on failure.
pub fn manual_axes_cleanup(m: &mut Module) -> Result<(), (Option<u32>, String)> {
    let ms = meshes(m);
    let g = Graph::shared(m);
    for i in post_order(&g) {
        if g.nodes[i].kind != OpKind::SdyManualComputation {
            continue;
        }
        let op = g.op(m, i);
        let ins = per_value(op.prop("in_shardings")).unwrap_or_default();
        let outs = per_value(op.prop("out_shardings")).unwrap_or_default();
        let manual = manual_axes(op);
        if ins.is_empty() && outs.is_empty() {
            let body_empty = op
                .regions
                .first()
                .and_then(|r| r.blocks.first())
                .and_then(|b| b.ops.first())
                .is_none_or(|o| o.kind == OpKind::SdyReturn);
            if !manual.is_empty() && !body_empty {
                return Err((
                    op.origin,
                    "op has manual_axes when there are no in/out shardings and the body is not empty. This isn't allowed at this stage, please contact the Shardy team or file a bug.".to_string(),
                ));
            }
            continue;
        }
        let mut common: Option<(MeshRef, Mesh)> = None;
        for s in ins.iter().chain(&outs) {
            let Some(mesh) = mesh_of(&ms, &s.mesh) else { continue };
            match &common {
                None => common = Some((s.mesh.clone(), mesh)),
                Some((_, c)) if c.axes.is_empty() && c.device_ids.is_empty() => {
                    common = Some((s.mesh.clone(), mesh))
                }
                _ => {}
            }
        }
        let Some((mesh_ref, mesh)) = common else { continue };
        let index = |n: &str| mesh.axes.iter().position(|a| a.0 == n).unwrap_or(usize::MAX);
        let mut sorted = manual.clone();
        sorted.sort_by_key(|n| index(n));
        let manual_refs: Vec<AxisRef> = sorted.iter().map(|n| AxisRef::full(n.clone())).collect();
        let fix = |list: &[TensorSharding], vals: &[ValueId]| -> Option<Vec<TensorSharding>> {
            let mut modified = false;
            let out = list
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let shaped = vals
                        .get(k)
                        .is_some_and(|&v| m.ty(v).is_some_and(|t| t.starts_with("tensor<")));
                    if !shaped {
                        return s.clone();
                    }
                    let used: Vec<AxisRef> = s
                        .dims
                        .iter()
                        .flat_map(|d| d.axes.iter())
                        .chain(&s.replicated)
                        .chain(&s.unreduced)
                        .cloned()
                        .collect();
                    let unused = axis_set_diff(&manual_refs, &used, &mesh);
                    if unused.is_empty() {
                        return s.clone();
                    }
                    let mut r = s.clone();
                    r.replicated.extend(unused);
                    axis::sort_and_merge(&mut r.replicated, &mesh);
                    r.mesh = mesh_ref.clone();
                    modified = true;
                    r
                })
                .collect();
            modified.then_some(out)
        };
        let new_ins = fix(&ins, &g.nodes[i].operands);
        let new_outs = fix(&outs, &g.nodes[i].results);
        let op = g.op_mut(m, i);
        if sorted != manual {
            op.set_prop("manual_axes", Attr::AxisList(manual_refs.clone()));
        }
        if let Some(l) = new_ins {
            op.set_prop("in_shardings", Attr::PerValue(l));
        }
        if let Some(l) = new_outs {
            op.set_prop("out_shardings", Attr::PerValue(l));
        }
    }
    Ok(())
}

/// `getAxisSetDiff(a, b)`: the parts of the axes of `a` that are not in `b`.
pub fn axis_set_diff(a: &[AxisRef], b: &[AxisRef], mesh: &Mesh) -> Vec<AxisRef> {
    if a.is_empty() || a == b {
        return Vec::new();
    }
    if b.is_empty() {
        return a.to_vec();
    }
    let mut out = Vec::new();
    for x in a {
        // Remove every overlap with `b` from `x`, keeping the remaining pieces.
        let mut pieces = vec![x.clone()];
        for y in b {
            let mut next = Vec::new();
            for p in pieces {
                if !axis::overlaps(&p, y) {
                    next.push(p);
                    continue;
                }
                if let Some(pre) = axis::prefix_without_overlap(&p, y) {
                    next.push(pre);
                }
                if let Some(suf) = axis::suffix_without_overlap(&p, y, mesh) {
                    if !next.contains(&suf) {
                        next.push(suf);
                    }
                }
            }
            pieces = next;
        }
        out.extend(pieces);
    }
    out
}

fn is_scalar(m: &Module, v: ValueId) -> bool {
    ValueType::is_scalar_text(m.ty(v).unwrap_or(""))
}

/// `sdy-constant-or-scalar-splitter`.
pub fn constant_or_scalar_splitter(m: &mut Module) {
    // stablehlo.constant -> sdy.constant
    m.top.walk_mut(&mut |op: &mut Op| {
        if op.kind == OpKind::StablehloConstant {
            op.set_name("sdy.constant");
            if !matches!(op.syntax, Syntax::Pretty) {
                op.syntax = Syntax::Pretty;
            }
        }
    });
    let g = Graph::shared(m);
    let order = call_graph_post_order(m, &g);
    // Callee symbol -> its original name (the splitter renames nothing).
    let originals: HashMap<String, Option<String>> = m
        .body()
        .iter()
        .filter_map(|op| func_sym(op).map(|s| (s.to_string(), original_func_name(op))))
        .collect();
    let mut non_const_named: HashSet<String> = HashSet::default();
    let mut non_const_funcs: HashSet<String> = HashSet::default();
    let mut table = SymbolTable::new(m);
    // Splitting a region only changes ops inside it, so the paths of this index stay
    // valid for every region: named computations first (post-order), then the body.
    for f in order {
        let sym = original_func_name(g.op(m, f)).unwrap_or_default();
        let post = g.post_order_from(f);
        let mut cx = Splitter {
            func: &sym,
            originals: &originals,
            non_const_named: &mut non_const_named,
            non_const_funcs: &mut non_const_funcs,
            table: &mut table,
        };
        for i in post {
            if g.nodes[i].kind == OpKind::SdyNamedComputation {
                split_region(m, &g.nodes[i].path, 0, &mut cx);
            }
        }
        split_region(m, &g.nodes[f].path, 0, &mut cx);
    }
}

/// What the splitter carries from region to region.
struct Splitter<'a> {
    func: &'a str,
    originals: &'a HashMap<String, Option<String>>,
    non_const_named: &'a mut HashSet<String>,
    non_const_funcs: &'a mut HashSet<String>,
    /// Where cloned calls get the names of their callees' clones.
    table: &'a mut SymbolTable,
}

/// Functions in the call graph's post-order (callees first).
pub fn call_graph_post_order(m: &Module, g: &Graph) -> Vec<OpIdx> {
    let funcs: Vec<OpIdx> = g.nodes[0]
        .children
        .first()
        .and_then(|r| r.first())
        .map(|b| {
            b.iter()
                .copied()
                .filter(|&i| g.nodes[i].kind == OpKind::FuncFunc && !g.nodes[i].children.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let callees = |f: OpIdx| -> Vec<OpIdx> {
        let mut out: Vec<OpIdx> = Vec::new();
        let mut stack = vec![f];
        let mut pre = Vec::new();
        while let Some(i) = stack.pop() {
            pre.push(i);
            for r in g.nodes[i].children.iter().rev() {
                for b in r.iter().rev() {
                    for &c in b.iter().rev() {
                        stack.push(c);
                    }
                }
            }
        }
        for i in pre {
            if g.nodes[i].kind == OpKind::FuncCall {
                if let Some(c) = callee(g.op(m, i)).and_then(|c| g.funcs.get(&c).copied()) {
                    if !g.nodes[c].children.is_empty() && !out.contains(&c) {
                        out.push(c);
                    }
                }
            }
        }
        out
    };
    let mut visited: HashSet<OpIdx> = HashSet::default();
    let mut post: Vec<OpIdx> = Vec::new();
    fn dfs(
        f: OpIdx,
        callees: &dyn Fn(OpIdx) -> Vec<OpIdx>,
        visited: &mut HashSet<OpIdx>,
        post: &mut Vec<OpIdx>,
    ) {
        if !visited.insert(f) {
            return;
        }
        for c in callees(f) {
            dfs(c, callees, visited, post);
        }
        post.push(f);
    }
    for f in funcs {
        dfs(f, &callees, &mut visited, &mut post);
    }
    post
}

fn is_pure(kind: OpKind) -> bool {
    kind.purity() == Some(false)
}

/// One `walkOnRegion` of the splitter over region `r` of the op at `path`.
///
/// The walk reads one index of the module built up front: clones are only recorded
/// while walking (each one goes right before the op it copies, in creation order, as
/// MLIR's insertion point before the original op places them) and inserted at the
/// end, so op paths stay valid throughout and the region costs one index build
/// instead of one per op.
fn split_region(m: &mut Module, path: &[(usize, usize, usize)], r: usize, cx: &mut Splitter<'_>) {
    let g = Graph::build_sub(m, path);
    let owner = 0;
    let Some(region) = g.nodes[owner].children.get(r) else { return };
    // Pre-order list of ops of the region, not entering named computations.
    fn collect(g: &Graph, ops: &[OpIdx], out: &mut Vec<OpIdx>) {
        for &o in ops {
            out.push(o);
            if g.nodes[o].kind == OpKind::SdyNamedComputation {
                continue;
            }
            for r in &g.nodes[o].children {
                for b in r {
                    collect(g, b, out);
                }
            }
        }
    }
    let mut walk: Vec<OpIdx> = Vec::new();
    for b in region {
        collect(&g, b, &mut walk);
    }
    let mut constant_ops: Vec<OpIdx> = Vec::new();
    let mut constant_set: HashSet<OpIdx> = HashSet::default();
    let mut scalar_exp: Vec<OpIdx> = Vec::new();
    let mut scalar_set: HashSet<OpIdx> = HashSet::default();
    // Clones to insert right before an original op, in creation order.
    let mut before: HashMap<OpIdx, Vec<Op>> = HashMap::default();
    for &i in &walk {
        let n = &g.nodes[i];
        let name = n.name.as_str();
        if name == "func.func" || name == "sdy.sharding_group" {
            continue;
        }
        let const_of = |v: ValueId| -> bool {
            matches!(g.def(v), Some(Def::Result { op, .. }) if constant_set.contains(&op))
        };
        let preserving = constant_preserving(m, &g, i, cx);
        let is_const_expr = matches!(name, "sdy.constant" | "stablehlo.iota")
            || (preserving && n.operands.iter().all(|&v| const_of(v)));
        if is_const_expr {
            constant_ops.push(i);
            constant_set.insert(i);
            continue;
        }
        if !preserving && !is_terminator(name) {
            if let Some(nc) = enclosing_named(m, &g, i) {
                cx.non_const_named.insert(nc);
            }
            cx.non_const_funcs.insert(cx.func.to_string());
        }
        let scalar_expansion = name == "stablehlo.broadcast_in_dim"
            && n.operands.first().is_some_and(|&v| is_scalar(m, v));
        if scalar_expansion {
            scalar_exp.push(i);
            scalar_set.insert(i);
            continue;
        }
        // Clone constant sub-computations used by this op.
        for (k, &v) in n.operands.iter().enumerate() {
            let Some(Def::Result { op: d, .. }) = g.def(v) else { continue };
            if !constant_set.contains(&d) && !scalar_set.contains(&d) {
                continue;
            }
            let nv = clone_sub_computation(m, &g, v, &mut before, cx.table);
            let user_op = g.op_mut(m, i);
            // operand k in MLIR order -> written order
            if let Some(w) = written_index(user_op, k) {
                user_op.operands[w] = nv;
            }
        }
    }
    // Insert the clones, block by block, deepest first: an insertion shifts the paths
    // of what follows in its block, never those of the blocks above it.
    let mut blocks: Vec<(Path, usize, usize)> = Vec::new();
    for &d in before.keys() {
        let Some((last, parent)) = g.nodes[d].path.split_last() else { continue };
        blocks.push((Path::from(parent), last.0, last.1));
    }
    blocks.sort();
    blocks.dedup();
    blocks.sort_by_key(|b| std::cmp::Reverse(b.0.len()));
    // Originals to erase keep a mark through the insertion, to be found again.
    let mut erase_order: Vec<OpIdx> = scalar_exp.clone();
    erase_order.extend(constant_ops.iter().rev().copied());
    for (k, &i) in erase_order.iter().enumerate() {
        g.op_mut(m, i).set_attr("__split_id", Attr::Int { value: k as i128, ty: "i64".into() });
    }
    for (parent, ri, bi) in blocks {
        let children = &g.nodes[owner_at(&g, &parent[path.len()..])].children[ri][bi];
        let block = &mut op_at_path_mut(m, &parent).regions[ri].blocks[bi];
        let old = std::mem::take(&mut block.ops);
        let mut ops = Vec::with_capacity(old.len());
        for (op, &idx) in old.into_iter().zip(children) {
            if let Some(clones) = before.remove(&idx) {
                ops.extend(clones);
            }
            ops.push(op);
        }
        block.ops = ops;
    }
    // Erase the now unused constant ops (scalar expansions first, then constants in
    // reverse), with their sharding group users. Two walks find them and their users
    // in the edited region (an index of it would cost more than both).
    let root = op_at_path(m, path);
    let mut at: Vec<Option<(Path, &[ValueId])>> = vec![None; erase_order.len()];
    let mut users: HashMap<ValueId, Vec<(Path, bool)>> = HashMap::default();
    walk_paths(root, &mut Path::from(path), &mut |op, p| {
        if p.len() == path.len() {
            return;
        }
        if let Some(Attr::Int { value, .. }) = op.attr("__split_id") {
            if let Some(slot) = at.get_mut(*value as usize) {
                for &r in &op.results {
                    users.insert(r, Vec::new());
                }
                *slot = Some((p.clone(), &op.results));
            }
        }
    });
    walk_paths(root, &mut Path::from(path), &mut |op, p| {
        for v in &op.operands {
            if let Some(l) = users.get_mut(v) {
                l.push((p.clone(), op.kind == OpKind::SdyShardingGroup));
            }
        }
    });
    let mut erased: HashSet<Path> = HashSet::default();
    for (i, results) in at.into_iter().flatten() {
        let live: Vec<&(Path, bool)> = results
            .iter()
            .flat_map(|r| users.get(r).into_iter().flatten())
            .filter(|(u, _)| !erased.contains(u))
            .collect();
        if live.iter().any(|(_, group)| !group) {
            continue;
        }
        let live: Vec<Path> = live.into_iter().map(|(u, _)| u.clone()).collect();
        erased.insert(i);
        erased.extend(live);
    }
    remove_ops(m, erased);
    op_at_path_mut(m, path).walk_mut(&mut |op: &mut Op| {
        op.remove_attr("__split_id");
    });
}

/// The node at `path` relative to the root of `g`.
fn owner_at(g: &Graph, path: &[(usize, usize, usize)]) -> OpIdx {
    let mut i = 0;
    for &(r, b, k) in path {
        i = g.nodes[i].children[r][b][k];
    }
    i
}

/// Visits `op` (at module path `path`) and every op nested in it, parents first, with
/// their module paths.
fn walk_paths<'a>(op: &'a Op, path: &mut Path, f: &mut impl FnMut(&'a Op, &Path)) {
    f(op, path);
    for (ri, r) in op.regions.iter().enumerate() {
        for (bi, b) in r.blocks.iter().enumerate() {
            for (oi, c) in b.ops.iter().enumerate() {
                path.push((ri, bi, oi));
                walk_paths(c, path, f);
                path.pop();
            }
        }
    }
}

/// The written index of the `k`-th operand in MLIR's order.
fn written_index(op: &Op, k: usize) -> Option<usize> {
    let n = op.operands.len();
    if op.kind == OpKind::StablehloReduce
        && matches!(op.syntax, Syntax::Custom(_))
        && n.is_multiple_of(2)
    {
        let half = n / 2;
        Some(if k < half { 2 * k } else { 2 * (k - half) + 1 })
    } else {
        (k < n).then_some(k)
    }
}

fn enclosing_named(m: &Module, g: &Graph, mut i: OpIdx) -> Option<String> {
    while let Some(p) = g.nodes[i].parent {
        if g.nodes[p].kind == OpKind::SdyNamedComputation {
            return str_attr(g.op(m, p).prop("name"));
        }
        i = p;
    }
    None
}

fn constant_preserving(m: &Module, g: &Graph, i: OpIdx, cx: &Splitter<'_>) -> bool {
    let n = &g.nodes[i];
    match n.name.as_str() {
        "func.call" => {
            let c = callee(g.op(m, i));
            let orig = c.and_then(|c| cx.originals.get(&c).cloned().flatten());
            return !orig.is_some_and(|o| cx.non_const_funcs.contains(&o));
        }
        "sdy.named_computation" => {
            return !str_attr(g.op(m, i).prop("name"))
                .is_some_and(|x| cx.non_const_named.contains(&x));
        }
        _ => {}
    }
    if !is_pure(n.kind) {
        return false;
    }
    if matches!(
        n.name.as_str(),
        "stablehlo.broadcast_in_dim" | "stablehlo.reshape" | "stablehlo.slice"
    ) {
        return true;
    }
    // Only `bitcast_convert` is told apart by its types.
    if n.kind != OpKind::StablehloBitcastConvert {
        return is_elementwise_op(n.kind, None, None);
    }
    let o = n.operands.first().map(|&v| g.ty(m, v));
    let r = n.results.first().map(|&v| g.ty(m, v));
    is_elementwise_op(n.kind, o.as_ref(), r.as_ref())
}

/// Clones the sub-computation defining `v` (not cloning scalars), each clone to go
/// right before the op it copies (recorded in `before`); returns the clone of `v`.
fn clone_sub_computation(
    m: &mut Module,
    g: &Graph,
    v: ValueId,
    before: &mut HashMap<OpIdx, Vec<Op>>,
    table: &mut SymbolTable,
) -> ValueId {
    if is_scalar(m, v) {
        return v;
    }
    let mut map: HashMap<ValueId, ValueId> = HashMap::default();
    clone_rec(m, g, v, &mut map, before, table);
    *map.get(&v).unwrap_or(&v)
}

fn clone_rec(
    m: &mut Module,
    g: &Graph,
    v: ValueId,
    map: &mut HashMap<ValueId, ValueId>,
    before: &mut HashMap<OpIdx, Vec<Op>>,
    table: &mut SymbolTable,
) {
    if is_scalar(m, v) || map.contains_key(&v) {
        return;
    }
    let Some(Def::Result { op: d, .. }) = g.def(v) else { return };
    for &o in &g.nodes[d].operands {
        if matches!(g.def(o), Some(Def::Result { .. })) {
            clone_rec(m, g, o, map, before, table);
        }
    }
    let original = g.op(m, d).clone();
    let mut cloned = clone_op(m, &original, map);
    // A cloned call gets its own copy of the callee (appended to the module, which
    // leaves the paths of the index valid).
    if let Some(c) = callee(&cloned).filter(|_| cloned.kind == OpKind::FuncCall) {
        if let Some(new) = super::calls::clone_func_recursively(m, &c, table) {
            set_callee(&mut cloned, &new);
        }
    }
    let mut new_ops = vec![cloned];
    // Clone the sharding group users of `v` right before the original op too.
    let users: Vec<OpIdx> = g
        .live_uses(v)
        .map(|(u, _)| u)
        .filter(|&u| g.nodes[u].kind == OpKind::SdyShardingGroup)
        .collect();
    for u in users {
        let group = g.op(m, u).clone();
        new_ops.push(clone_op(m, &group, map));
    }
    before.entry(d).or_default().extend(new_ops);
}

/// `sdy-import-func-calls` is in `calls.rs`; this re-exports data-flow edges for it.
pub fn add_edges(m: &mut Module) {
    add_data_flow_edges(m);
}

/// `sdy-sharding-group-import`. Returns an error (origin of the op, message).
pub fn sharding_group_import(m: &mut Module) -> Result<(), (Option<u32>, String)> {
    let g = Graph::shared(m);
    let mut tensor_groups: Vec<(ValueId, Vec<OpIdx>)> = Vec::new();
    let mut group_manual: HashMap<i64, Option<OpIdx>> = HashMap::default();
    let mut group_shape: HashMap<i64, ValueType> = HashMap::default();
    let group_id = |i: OpIdx| -> i64 {
        match g.op(m, i).prop("group_id") {
            Some(Attr::Int { value, .. }) => *value as i64,
            _ => 0,
        }
    };
    for i in post_order(&g) {
        if g.nodes[i].kind != OpKind::SdyShardingGroup {
            continue;
        }
        let input = g.nodes[i].operands[0];
        match tensor_groups.iter_mut().find(|(v, _)| *v == input) {
            Some((_, l)) => l.push(i),
            None => tensor_groups.push((input, vec![i])),
        }
        let id = group_id(i);
        let mut p = g.nodes[i].parent;
        let mut manual = None;
        while let Some(x) = p {
            if g.nodes[x].kind == OpKind::SdyManualComputation {
                manual = Some(x);
                break;
            }
            p = g.nodes[x].parent;
        }
        match group_manual.get(&id) {
            Some(&prev) if prev != manual => {
                return Err((g.nodes[i].origin, format!("ShardingGroupOps values cannot cross ManualComputationOp boundaries for groupId: {id}")));
            }
            Some(_) => {}
            None => {
                group_manual.insert(id, manual);
            }
        }
        let shape = g.ty(m, input);
        match group_shape.get(&id) {
            Some(prev) if *prev != shape => {
                return Err((
                    g.nodes[i].origin,
                    format!("ShardingGroupOps values must have the same shape for groupId: {id}"),
                ));
            }
            Some(_) => {}
            None => {
                group_shape.insert(id, shape);
            }
        }
    }
    if tensor_groups.is_empty() {
        return Ok(());
    }
    // Union-find over group ids as LLVM's `EquivalenceClasses`: members in insertion
    // order, and a union keeps the leader of its first argument (each tensor's first
    // group). New ids follow the leaders in that order.
    let mut parent: HashMap<i64, i64> = HashMap::default();
    let mut members: Vec<i64> = Vec::new();
    fn find(p: &mut HashMap<i64, i64>, x: i64) -> i64 {
        let mut r = x;
        while let Some(&q) = p.get(&r) {
            if q == r {
                break;
            }
            r = q;
        }
        p.insert(x, r);
        r
    }
    for (_, ops) in &tensor_groups {
        let canon = group_id(ops[0]);
        for &o in ops {
            let id = group_id(o);
            for x in [canon, id] {
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(x) {
                    e.insert(x);
                    members.push(x);
                }
            }
            let (a, b) = (find(&mut parent, canon), find(&mut parent, id));
            if a != b {
                parent.insert(b, a);
            }
        }
    }
    let mut reindex: HashMap<i64, i64> = HashMap::default();
    let mut next = 0;
    for &l in &members {
        if find(&mut parent, l) == l {
            reindex.insert(l, next);
            next += 1;
        }
    }
    let mut new_ids: Vec<(OpIdx, i64)> = Vec::new();
    let mut per_group: HashMap<i64, Vec<(OpIdx, ValueId)>> = HashMap::default();
    for (v, ops) in &tensor_groups {
        for &o in ops {
            let leader = find(&mut parent, group_id(o));
            let id = reindex[&leader];
            new_ids.push((o, id));
            per_group.entry(id).or_default().push((o, *v));
        }
    }
    let mut erase: Vec<OpIdx> = Vec::new();
    for ops in per_group.values() {
        let mut seen = HashSet::default();
        for &(o, v) in ops {
            if !seen.insert(v) {
                erase.push(o);
            }
        }
    }
    for (o, id) in new_ids {
        g.op_mut(m, o).set_prop("group_id", Attr::Int { value: id as i128, ty: "i64".into() });
    }
    remove_ops(m, erase.iter().map(|&o| g.nodes[o].path.clone()));
    Ok(())
}
