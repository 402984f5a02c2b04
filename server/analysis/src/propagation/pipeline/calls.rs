//! Function calls in the pipeline: flattening the call graph, importing calls as named
//! computations and exporting them back, unflattening, and the reshards at calls.

use super::super::edges::{add_data_flow_edges, post_order, replace_all_uses_except};
use super::super::graph::*;
use super::super::irutil::*;
use super::import::{call_graph_post_order, func_arg_shardings, func_result_shardings};
use crate::ir::attr::NamedAttr;
use crate::ir::OpKind;
use crate::ir::{Attr, Module, Op, Region, Syntax, ValueId};
use crate::print::printer::print_op_at;
use crate::sharding::{Mesh, TensorSharding};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Paths of the `func.call` ops inside the op at `path`, in post-order.
fn calls_in(m: &Module, g: &Graph, f: OpIdx) -> Vec<Path> {
    let mut out = Vec::new();
    for i in g.post_order_from(f) {
        if g.nodes[i].kind == OpKind::FuncCall && i != f {
            out.push(g.nodes[i].path.clone());
        }
    }
    let _ = m;
    out
}

/// `cloneFuncRecursively` + `SymbolTable::insert`: returns the clone's name.
pub(super) fn clone_func_recursively(
    m: &mut Module,
    sym: &str,
    table: &mut SymbolTable,
) -> Option<String> {
    let idx = func_index(m, sym)?;
    let original = m.body()[idx].clone();
    let orig_name = original_func_name(&original)?;
    let mut map = HashMap::default();
    let mut clone = clone_op(m, &original, &mut map);
    set_fn_attr(&mut clone, "sdy.original_func_name", Attr::Str(orig_name.into_bytes()));
    // Calls inside the clone get clones of their callees (post-order).
    let mut call_paths: Vec<Vec<usize>> = Vec::new();
    fn collect(op: &Op, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        let mut k = 0;
        for r in &op.regions {
            for b in &r.blocks {
                for c in &b.ops {
                    path.push(k);
                    collect(c, path, out);
                    path.pop();
                    k += 1;
                }
            }
        }
        if op.kind == OpKind::FuncCall {
            out.push(path.clone());
        }
    }
    collect(&clone, &mut Vec::new(), &mut call_paths);
    for p in call_paths {
        let Some(c) = nth_op(&clone, &p).and_then(callee) else { continue };
        if let Some(new) = clone_func_recursively(m, &c, table) {
            if let Some(op) = nth_op_mut(&mut clone, &p) {
                set_callee(op, &new);
            }
        }
    }
    let name = table.insert(sym);
    if let Some(f) = clone.func_mut() {
        f.sym = name.clone();
    }
    m.body_mut()?.push(clone);
    Some(name)
}

/// The op reached by flat child indices (all regions and blocks concatenated).
fn nth_op<'a>(op: &'a Op, path: &[usize]) -> Option<&'a Op> {
    let mut cur = op;
    for &k in path {
        cur = cur.regions.iter().flat_map(|r| r.blocks.iter()).flat_map(|b| b.ops.iter()).nth(k)?;
    }
    Some(cur)
}
fn nth_op_mut<'a>(op: &'a mut Op, path: &[usize]) -> Option<&'a mut Op> {
    let mut cur = op;
    for &k in path {
        cur = cur
            .regions
            .iter_mut()
            .flat_map(|r| r.blocks.iter_mut())
            .flat_map(|b| b.ops.iter_mut())
            .nth(k)?;
    }
    Some(cur)
}

/// `sdy-flatten-call-graph`: a second call to a function calls a recursive clone.
pub fn flatten_call_graph(m: &mut Module) {
    let g = Graph::shared(m);
    let order: Vec<String> = call_graph_post_order(m, &g)
        .into_iter()
        .filter_map(|f| func_sym(g.op(m, f)).map(str::to_string))
        .collect();
    let mut seen: HashSet<String> = HashSet::default();
    let mut table = SymbolTable::new(m);
    // Clones go to the end of the module and calls are only renamed, so the paths of
    // this index stay valid for the functions it lists.
    for sym in order {
        let Some(&f) = g.funcs.get(&sym) else { continue };
        for p in calls_in(m, &g, f) {
            let Some(c) = callee(op_at_path(m, &p)) else { continue };
            if seen.insert(c.clone()) {
                continue;
            }
            if let Some(new) = clone_func_recursively(m, &c, &mut table) {
                set_callee(op_at_path_mut(m, &p), &new);
            }
        }
    }
}

/// A warning of [`import_func_calls`].
pub struct CallWarning {
    /// The origin of the call it is about.
    pub origin: Option<u32>,
    pub message: String,
    /// The call as printed when the warning was raised (MLIR's note shows the op as it
    /// was then, not as the pass leaves it); only for the first warning, the one shown
    /// (Shardy emits it once per process).
    pub op_text: Option<String>,
}

/// `sdy-import-func-calls{add-data-flow-edges-on-named-computations=true}`. Returns
/// the warnings it emits.
pub fn import_func_calls(m: &mut Module, add_edges: bool) -> Vec<CallWarning> {
    let mut warnings = Vec::new();
    let ms = super::import::meshes(m);
    let g = Graph::shared(m);
    let order: Vec<String> = call_graph_post_order(m, &g)
        .into_iter()
        .filter_map(|f| func_sym(g.op(m, f)).map(str::to_string))
        .collect();
    let mut moved: HashMap<String, Option<Region>> = HashMap::default();
    let mut moved_order: Vec<String> = Vec::new();
    // A call is replaced in place (by an op at the same path), callees come first in
    // the order (their bodies have no calls left when they move into a caller), and an
    // emptied callee has been processed already: the paths of this one index stay
    // valid for every call.
    for sym in order {
        let Some(&f) = g.funcs.get(&sym) else { continue };
        let calls: Vec<Path> = calls_in(m, &g, f);
        for p in calls {
            if op_at_path(m, &p).name != "func.call" {
                continue;
            }
            let call = op_at_path(m, &p).clone();
            let Some(c) = callee(&call) else { break };
            let Some(fidx) = func_index(m, &c) else { break };
            let callee_op = &m.body()[fidx];
            let mut props = vec![NamedAttr::new(
                "name",
                Attr::Str(original_func_name(callee_op).unwrap_or(c.clone()).into_bytes()),
            )];
            if let Some(ins) = func_arg_shardings(&ms, callee_op) {
                props.push(NamedAttr::new("in_shardings", Attr::PerValue(ins)));
            }
            if let Some(Attr::PerValue(outs)) = call.attr("sdy.sharding") {
                props.push(NamedAttr::new("out_shardings", Attr::PerValue(outs.clone())));
            }
            let region = if let Some(Some(r)) = moved.get(&c) {
                let op_text = match warnings.is_empty() {
                    true => call_as_warned(m, &p, &call),
                    false => None,
                };
                warnings.push(CallWarning {
                    origin: call.origin,
                    message: format!("function @{c} has multiple call ops, we need to clone the function body for each call"),
                    op_text,
                });
                let holder = Op {
                    regions: vec![r.clone()],
                    ..Op::pretty("builtin.module", vec![], vec![], vec![])
                };
                let mut map = HashMap::default();
                let cloned = clone_op(m, &holder, &mut map);
                cloned.regions.into_iter().next().unwrap_or_default()
            } else {
                // The callee body is moved: the original function keeps an empty body.
                let regions = std::mem::replace(
                    &mut m.body_mut().expect("body")[fidx].regions,
                    vec![Region::default()],
                );
                let mut r = regions.into_iter().next().unwrap_or_default();
                if let Some(b) = r.blocks.first_mut() {
                    if let Some(last) = b.ops.last_mut() {
                        if last.kind == OpKind::FuncReturn {
                            last.set_name("sdy.return");
                            last.syntax = Syntax::Pretty;
                        }
                    }
                }
                // A copy only for a function called more than once (the calls of this
                // index are all the calls there are).
                let more_calls = g.callers.get(&c).is_some_and(|l| l.len() > 1);
                moved.insert(c.clone(), more_calls.then(|| r.clone()));
                moved_order.push(c.clone());
                r
            };
            let mut nc = Op::pretty(
                "sdy.named_computation",
                call.operands.clone(),
                call.results.clone(),
                props,
            );
            nc.attrs = call.attrs.iter().filter(|a| a.name != "sdy.sharding").cloned().collect();
            nc.regions = vec![region];
            nc.origin = call.origin;
            *op_at_path_mut(m, &p) = nc;
        }
    }
    // Erase the imported functions.
    if let Some(b) = m.body_mut() {
        b.retain(|o| !func_sym(o).is_some_and(|s| moved.contains_key(s)));
    }
    // Data-flow edges on every named computation.
    if add_edges {
        add_edges_on(m, "sdy.named_computation");
    }
    warnings
}

/// The call at `p` printed as MLIR's note shows it: Shardy warns after it has put the
/// new `sdy.named_computation` (results not yet used) right before the call, so the
/// call's results are numbered after that op's.
fn call_as_warned(m: &mut Module, p: &Path, call: &Op) -> Option<String> {
    let values = m.values.len();
    let types: Vec<Option<String>> =
        call.results.iter().map(|&r| m.ty(r).map(str::to_string)).collect();
    let results = types.into_iter().map(|t| m.new_value(t)).collect();
    let (block, i) = parent_block_mut(m, p)?;
    block.ops.insert(i, Op::pretty("sdy.named_computation", vec![], results, vec![]));
    let text = call.origin.and_then(|o| print_op_at(m, o));
    if let Some((block, i)) = parent_block_mut(m, p) {
        block.ops.remove(i);
    }
    m.values.truncate(values);
    text
}

fn add_edges_on(m: &mut Module, name: &str) {
    // Reuse the generic pass, restricted to one op kind.
    let g = Graph::shared(m);
    let mut work: Vec<(Vec<ValueId>, Vec<ValueId>)> = Vec::new();
    for i in post_order(&g) {
        if g.nodes[i].name == name {
            work.push(super::super::edges::edge_owners(&g, i));
        }
    }
    super::super::edges::add_edges_for(m, work);
    let _ = add_data_flow_edges;
}

/// `sdy-pre-order-funcs`: functions in call-graph pre-order at the end of the module.
pub fn pre_order_funcs(m: &mut Module) {
    let g = Graph::shared(m);
    let mut order: Vec<String> = call_graph_post_order(m, &g)
        .into_iter()
        .filter_map(|f| func_sym(g.op(m, f)).map(str::to_string))
        .collect();
    order.reverse();
    let Some(body) = m.body_mut() else { return };
    for sym in order {
        if let Some(i) = body.iter().position(|o| func_sym(o) == Some(sym.as_str())) {
            let f = body.remove(i);
            body.push(f);
        }
    }
}

/// The shardings of the data-flow edges of `owners` (fully open where missing), or
/// `None` when none has one.
fn shardings_from_edges(m: &Module, g: &Graph, owners: &[ValueId]) -> Option<Vec<TensorSharding>> {
    let mut out = Vec::new();
    let mut mesh = None;
    for &o in owners {
        let s = g.edge_user(o).and_then(|e| sharding_of(g.op(m, e).prop("sharding")));
        if mesh.is_none() {
            mesh = s.as_ref().map(|s| s.mesh.clone());
        }
        out.push(s);
    }
    let mesh = mesh?;
    Some(
        out.into_iter()
            .zip(owners)
            .map(|(s, &o)| s.unwrap_or_else(|| open_sharding(&mesh, g.ty(m, o).rank())))
            .collect(),
    )
}

/// Replaces the single data-flow edge user of each value by the value (one index,
/// one rewiring walk; the edges are removed last to first).
fn remove_data_flow_edges(m: &mut Module, values: &[ValueId]) {
    let g = Graph::shared(m);
    let mut map: HashMap<ValueId, ValueId> = HashMap::default();
    let mut paths: Vec<Path> = Vec::new();
    let mut seen: HashSet<OpIdx> = HashSet::default();
    for &v in values {
        let Some((u, _)) = g.live_uses(v).next() else { continue };
        if g.nodes[u].kind != OpKind::SdyDataFlowEdge || !seen.insert(u) {
            continue;
        }
        map.insert(g.nodes[u].results[0], v);
        paths.push(g.nodes[u].path.clone());
    }
    super::super::edges::replace_uses_through(m, &map);
    remove_ops(m, paths);
}

/// `sdy-export-named-computations`.
pub fn export_named_computations(m: &mut Module) {
    let mut table = SymbolTable::new(m);
    // One index for all: a named computation is replaced in place by a call (inner ones
    // first, in post-order), its body goes to a new function at the end of the module,
    // and the edges are removed at the end, so the paths and uses of the computations
    // still to export do not change.
    let g = Graph::shared(m);
    let list: Vec<OpIdx> = post_order(&g)
        .into_iter()
        .filter(|&i| g.nodes[i].kind == OpKind::SdyNamedComputation)
        .collect();
    let mut call_results: Vec<ValueId> = Vec::new();
    let mut edge_owners: Vec<ValueId> = Vec::new();
    for i in list {
        let args = g.nodes[i].args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
        let results = g.nodes[i].results.clone();
        if let Some(list) = shardings_from_edges(m, &g, &args) {
            g.op_mut(m, i).set_prop("in_shardings", Attr::PerValue(list));
        }
        if let Some(list) = shardings_from_edges(m, &g, &results) {
            g.op_mut(m, i).set_prop("out_shardings", Attr::PerValue(list));
        }
        // Taken out (its place gets the call below): the body moves to the function.
        let placeholder = Op::pretty("func.call", Vec::new(), Vec::new(), Vec::new());
        let mut nc = std::mem::replace(g.op_mut(m, i), placeholder);
        let name = str_attr(nc.prop("name")).unwrap_or_default();
        let ins = per_value(nc.prop("in_shardings"));
        let outs = per_value(nc.prop("out_shardings"));
        let mut region = std::mem::take(&mut nc.regions).into_iter().next().unwrap_or_default();
        if let Some(b) = region.blocks.first_mut() {
            if let Some(last) = b.ops.last_mut() {
                if last.kind == OpKind::SdyReturn {
                    last.set_name("func.return");
                    last.syntax = Syntax::Pretty;
                }
            }
        }
        let arg_tys: Vec<(ValueId, String)> =
            args.iter().map(|&a| (a, m.ty(a).unwrap_or("").to_string())).collect();
        let res_tys: Vec<String> =
            results.iter().map(|&r| m.ty(r).unwrap_or("").to_string()).collect();
        let mut f = make_func(&name, arg_tys, res_tys, Vec::new());
        f.regions = vec![region];
        set_fn_attr(&mut f, "sdy.original_func_name", Attr::Str(name.clone().into_bytes()));
        if let (Some(ins), Some(fi)) = (&ins, f.func_mut()) {
            for (slot, s) in fi.args.iter_mut().zip(ins) {
                slot.set_attr("sdy.sharding", Attr::Sharding(s.clone()));
            }
        }
        let sym = table.insert(&name);
        if let Some(fi) = f.func_mut() {
            fi.sym = sym.clone();
        }
        let mut call = make_call(&sym, std::mem::take(&mut nc.operands), results.to_vec());
        call.attrs = std::mem::take(&mut nc.attrs);
        call.origin = nc.origin;
        if let Some(o) = outs {
            call.set_attr("sdy.sharding", Attr::PerValue(o));
        }
        *g.op_mut(m, i) = call;
        if let Some(b) = m.body_mut() {
            b.push(f);
        }
        edge_owners.extend(args);
        call_results.extend(results);
    }
    edge_owners.extend(call_results);
    remove_data_flow_edges(m, &edge_owners);
}

/// `sdy-propagate-to-func-results`: every function but main takes its returned values'
/// shardings as result shardings.
pub fn propagate_to_func_results(m: &mut Module) {
    let g = Graph::shared(m);
    let main = g.main_func(m);
    let funcs: Vec<OpIdx> = g.funcs.values().copied().collect();
    for f in funcs {
        if Some(f) == main {
            continue;
        }
        let Some(t) = g.terminator(f, 0) else { continue };
        if g.nodes[t].kind != OpKind::FuncReturn {
            continue;
        }
        let operands = g.nodes[t].operands.clone();
        for (i, v) in operands.into_iter().enumerate() {
            match g.sharding(m, v) {
                Some(s) => g.set_func_result_sharding(m, f, i, s),
                None => {
                    if let Some(slot) =
                        g.op_mut(m, f).func_mut().and_then(|fi| fi.results.get_mut(i))
                    {
                        slot.remove_attr("sdy.sharding");
                    }
                }
            }
        }
    }
}

type Key = (String, Option<Attr>, Option<Vec<TensorSharding>>, Option<Vec<TensorSharding>>);

fn computation_key(ms: &HashMap<String, Mesh>, f: &Op, ignore: bool) -> Key {
    let manual = f.func().and_then(|fi| {
        fi.fn_attrs.iter().find(|a| a.name == "sdy.func_manual_axes").map(|a| a.value.clone())
    });
    (
        original_func_name(f).unwrap_or_default(),
        manual,
        if ignore { None } else { func_arg_shardings(ms, f) },
        if ignore { None } else { func_result_shardings(ms, f) },
    )
}

/// Distinct computation keys, each function's computed once (keys only grow).
struct Keys<'m> {
    body: &'m [Op],
    ms: &'m HashMap<String, Mesh>,
    ignore: bool,
    keys: Vec<Key>,
    of_func: HashMap<usize, usize>,
}

impl<'m> Keys<'m> {
    fn new(body: &'m [Op], ms: &'m HashMap<String, Mesh>, ignore: bool) -> Self {
        Keys { body, ms, ignore, keys: Vec::new(), of_func: HashMap::default() }
    }

    /// The index of the key of the function at body index `fi`.
    fn id(&mut self, fi: usize) -> usize {
        if let Some(&k) = self.of_func.get(&fi) {
            return k;
        }
        let key = computation_key(self.ms, &self.body[fi], self.ignore);
        let k = match self.keys.iter().position(|x| *x == key) {
            Some(k) => k,
            None => {
                self.keys.push(key);
                self.keys.len() - 1
            }
        };
        self.of_func.insert(fi, k);
        k
    }
}

/// `sdy-unflatten-call-graph`.
pub fn unflatten_call_graph(m: &mut Module, dedup_fully: bool) {
    let mut call_paths = Vec::new();
    let g = Graph::shared(m);
    for i in post_order(&g) {
        if g.nodes[i].kind == OpKind::FuncCall {
            call_paths.push(g.nodes[i].path.clone());
        }
    }
    let ms = super::import::meshes(m);
    let body = m.body();
    // The first function of each name, as `func_index` finds it.
    let mut by_name: HashMap<&str, usize> = HashMap::default();
    for (i, o) in body.iter().enumerate() {
        if let Some(s) = func_sym(o) {
            by_name.entry(s).or_insert(i);
        }
    }
    // The callee of the call at `p` (borrowed: a copy would copy its body).
    let func_of = |p: &[(usize, usize, usize)]| -> Option<usize> {
        by_name.get(callee_ref(op_at_path(m, p))?.as_ref()).copied()
    };
    let callees: Vec<Option<usize>> = call_paths.iter().map(|p| func_of(p)).collect();
    // Per cache key, the function its calls go to.
    let mut cache = Keys::new(body, &ms, dedup_fully);
    let mut target: Vec<&str> = Vec::new();
    for &fi in callees.iter().flatten() {
        if cache.id(fi) == target.len() {
            target.push(func_sym(&body[fi]).unwrap_or(""));
        }
    }
    if dedup_fully {
        let mut funcs = Keys::new(body, &ms, false);
        let mut counts: Vec<i64> = Vec::new();
        for &fi in callees.iter().flatten() {
            let k = funcs.id(fi);
            counts.resize(funcs.keys.len(), 0);
            counts[k] += 1;
            let c = counts[k];
            let slot = cache.id(fi);
            let cached_count = by_name.get(target[slot]).map_or(0, |&i| {
                let ck = funcs.id(i);
                counts.get(ck).copied().unwrap_or(0)
            });
            if c > cached_count {
                target[slot] = func_sym(&body[fi]).unwrap_or("");
            }
        }
    }
    let names: Vec<Option<String>> =
        callees.iter().map(|fi| fi.map(|fi| target[cache.id(fi)].to_string())).collect();
    for (p, name) in call_paths.iter().zip(names) {
        let Some(name) = name else { continue };
        let op = op_at_path_mut(m, p);
        if callee_ref(op).as_deref() != Some(name.as_str()) {
            set_callee(op, &name);
        }
    }
    if let Some(b) = m.body_mut() {
        for op in b.iter_mut() {
            remove_fn_attr(op, "sdy.original_func_name");
            remove_fn_attr(op, "sdy.func_manual_axes");
        }
    }
}

/// `TensorShardingAttr::isEquivalent`.
pub fn is_equivalent(a: Option<&TensorSharding>, b: Option<&TensorSharding>) -> bool {
    let replicated = |s: Option<&TensorSharding>| match s {
        None => true,
        Some(s) => s.unreduced.is_empty() && s.dims.iter().all(|d| d.axes.is_empty()),
    };
    if replicated(a) {
        return replicated(b);
    }
    let (Some(a), Some(b)) = (a, b) else { return false };
    a.mesh == b.mesh
        && a.unreduced == b.unreduced
        && a.dims.len() == b.dims.len()
        && a.dims.iter().zip(&b.dims).all(|(x, y)| x.axes == y.axes)
}

pub fn fully_closed_like(s: &TensorSharding) -> TensorSharding {
    replicated_sharding(&s.mesh, s.dims.len(), true)
}

fn new_reshard(m: &mut Module, input: ValueId, s: TensorSharding) -> (Op, ValueId) {
    let ty = m.ty(input).map(str::to_string);
    let nv = m.new_value(ty);
    let mut op = Op::pretty("sdy.reshard", vec![input], vec![nv], Vec::new());
    op.set_prop("sharding", Attr::Sharding(s));
    (op, nv)
}

/// `sdy-insert-func-call-reshards`.
pub fn insert_func_call_reshards(m: &mut Module) {
    let ms = super::import::meshes(m);
    let g = Graph::shared(m);
    let mut list: Vec<Path> = Vec::new();
    for i in post_order(&g) {
        if g.nodes[i].kind == OpKind::FuncCall {
            list.push(g.nodes[i].path.clone());
        }
    }
    // Process in reverse so earlier paths stay valid while ops are inserted after calls.
    for p in list.into_iter().rev() {
        let call = op_at_path(m, &p).clone();
        let Some(c) = callee(&call) else { continue };
        let Some(fi) = func_index(m, &c) else { continue };
        let func_res = match func_result_shardings(&ms, &m.body()[fi]) {
            Some(l) => l,
            None => match per_value(call.attr("sdy.sharding")) {
                Some(l) => l.iter().map(fully_closed_like).collect(),
                None => continue,
            },
        };
        let call_sh = per_value(call.attr("sdy.sharding"));
        let mut inserted = Vec::new();
        for (k, (fs, &r)) in func_res.iter().zip(&call.results).enumerate() {
            let cs = call_sh.as_ref().and_then(|l| l.get(k));
            if !is_equivalent(Some(fs), cs) {
                let target = cs.cloned().unwrap_or_else(|| fully_closed_like(fs));
                let (op, nv) = new_reshard(m, r, target);
                replace_all_uses_except(m, r, nv, nv);
                inserted.push(op);
            }
        }
        // Each reshard goes right after the call (MLIR's insertion point after the
        // result), so later results' reshards come first.
        if let Some((block, i)) = parent_block_mut(m, &p) {
            for op in inserted {
                block.ops.insert(i + 1, op);
            }
        }
        op_at_path_mut(m, &p).set_attr("sdy.sharding", Attr::PerValue(func_res));
    }
}

/// `sdy-add-func-data-flow-edges`: an `sdy.func_data_flow_edge` after every argument
/// of every non-main function and every call result (taking its sharding).
pub fn add_func_data_flow_edges(m: &mut Module) {
    let g = Graph::shared(m);
    let main = g.main_func(m);
    // (value, insertion block owner path, region, block, index)
    let mut work: Vec<ValueId> = Vec::new();
    for i in post_order(&g) {
        if g.nodes[i].kind == OpKind::FuncFunc && Some(i) != main {
            if let Some(args) = g.nodes[i].args.first().and_then(|r| r.first()) {
                work.extend(args.iter());
            }
        }
    }
    let arg_count = work.len();
    for i in post_order(&g) {
        if g.nodes[i].kind == OpKind::FuncCall {
            work.extend(g.nodes[i].results.iter());
        }
    }
    // Arguments: in order at the start of the entry block; results: in order after
    // the call. Track how many edges went to each insertion point.
    let mut placed: HashMap<InsertPoint, usize> = HashMap::default();
    for (k, v) in work.into_iter().enumerate() {
        let g = Graph::shared(m);
        if g.ty(m, v).static_shape().is_none() {
            continue;
        }
        let Some((p, r, b, at)) = super::super::edges::insertion_after(&g, v) else { continue };
        // Block arguments all start at index 0; results right after the call.
        let base = if k < arg_count {
            (p.clone(), r, b, 0)
        } else {
            let Some(Def::Result { op, .. }) = g.def(v) else { continue };
            let Some(after) = point_after(&g.nodes[op].path) else { continue };
            after
        };
        let _ = at;
        let n = placed.entry(base.clone()).or_insert(0);
        let index = base.3 + *n;
        *n += 1;
        let s = g.sharding(m, v);
        let ty = m.ty(v).map(str::to_string);
        let nv = m.new_value(ty);
        replace_all_uses_except(m, v, nv, nv);
        let mut op = Op::pretty("sdy.func_data_flow_edge", vec![v], vec![nv], Vec::new());
        if let Some(s) = s {
            op.set_attr("sdy.sharding", Attr::PerValue(vec![s]));
        }
        super::super::edges::insert_op(m, &base.0, base.1, base.2, index, op);
    }
}

/// `sdy-sink-func-data-flow-edges`: each edge's sharding goes to its operand (a
/// function argument or call result); the edges are removed.
pub fn sink_func_data_flow_edges(m: &mut Module) {
    loop {
        let g = Graph::shared(m);
        let Some(e) =
            g.pre_order().into_iter().find(|&i| g.nodes[i].kind == OpKind::SdyFuncDataFlowEdge)
        else {
            break;
        };
        let input = g.nodes[e].operands[0];
        let res = g.nodes[e].results[0];
        let operand_sharding = g.sharding(m, input);
        match g.sharding(m, res) {
            Some(s) => g.set_sharding(m, input, s),
            None => {
                if let Some(os) = operand_sharding {
                    g.set_sharding(m, input, open_sharding(&os.mesh, os.dims.len()));
                }
            }
        }
        let p = g.nodes[e].path.clone();
        m.top.replace_uses(res, input);
        remove_op_at(m, &p);
    }
}
