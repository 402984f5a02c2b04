//! Where propagation leaves a conflict: an op whose tensors end up sharded differently
//! on one dimension of its computation (a factor), because two user shardings (written
//! on the tensors, or propagated from further away) disagree there. Executing the op
//! then needs communication: one side is resharded. Found from the conflicts the
//! explainer recorded, kept only when the printed module still disagrees.

use super::{Site, ValueResult};
use crate::diag::Note;
use crate::model::{Model, OpId};
use crate::print::ir::{Module, ValueId};
use crate::print::sdy::{AxisRef, Mesh, TensorSharding};
use crate::propagation::axis;
use crate::propagation::graph::{Def, Graph, OpIdx};
use crate::propagation::inference::{Conflict, Explained, Source};
use crate::propagation::origins::Node;
use rustc_hash::FxHashMap as HashMap;
use sdy_syntax::tree::Custom;
use sdy_syntax::Span;

/// One op that needs a reshard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reshard {
    /// The op's start (chunk-relative).
    pub op: u32,
    /// The op's name, where the diagnostic goes.
    pub span: Span,
    pub message: String,
    /// Where the conflicting axes come from.
    pub notes: Vec<Note>,
    /// Roughly how many bytes each device receives to resolve it.
    pub bytes_per_device: Option<i64>,
}

/// The reshards left by the conflicts of `values` in the propagated module `m`: one per
/// op whose tensors still disagree there.
pub fn find(
    model: &Model,
    m: &Module,
    g: &Graph,
    values: &[ValueResult],
    explained: &Explained,
) -> Vec<Reshard> {
    let by_start: HashMap<u32, OpId> =
        model.ops.iter().enumerate().map(|(i, o)| (o.start, i as OpId)).collect();
    let mut first_at: HashMap<u32, OpIdx> = HashMap::default();
    for i in 1..g.nodes.len() {
        if let Some(o) = g.nodes[i].origin {
            first_at.entry(o).or_insert(i);
        }
    }
    // Per op: the tensors the conflicts involve, and the axes they fought over.
    let mut ops: Vec<(u32, Vec<Node>, Vec<AxisRef>)> = Vec::new();
    let conflicts: Vec<Conflict> =
        values.iter().filter_map(|v| v.printed).flat_map(|p| explained.conflicts(p)).collect();
    for c in &conflicts {
        let Some(o) = c.op else { continue };
        let k = match ops.iter().position(|(x, _, _)| *x == o) {
            Some(k) => k,
            None => {
                ops.push((o, Vec::new(), Vec::new()));
                ops.len() - 1
            }
        };
        let (_, nodes, axes) = &mut ops[k];
        for n in std::iter::once(c.node).chain(c.sources.iter().map(|(n, _)| *n)) {
            if !nodes.contains(&n) {
                nodes.push(n);
            }
        }
        for a in c.dropped.iter().chain(&c.kept) {
            if !axes.contains(a) {
                axes.push(a.clone());
            }
        }
    }
    let mut out = Vec::new();
    for (o, mut nodes, axes) in ops {
        let (Some(&i), Some(&model_op)) = (first_at.get(&o), by_start.get(&o)) else { continue };
        nodes.sort();
        let node = &g.nodes[i];
        // (position, value, its sharding now, the contested axes it has)
        let tensors: Vec<(Node, ValueId, Option<TensorSharding>, Vec<AxisRef>)> = nodes
            .iter()
            .filter_map(|&n| {
                let v =
                    *if n.result { node.results.get(n.index) } else { node.operands.get(n.index) }?;
                let s = g.sharding(m, v);
                let has: Vec<AxisRef> = axes.iter().filter(|a| has_axis(&s, a)).cloned().collect();
                Some((n, v, s, has))
            })
            .collect();
        // Still a disagreement: an axis one tensor has and another lacks.
        let disagree = tensors.iter().any(|(_, _, _, has)| {
            has.iter().any(|a| tensors.iter().any(|(_, _, _, h)| !h.contains(a)))
        });
        if !disagree {
            continue;
        }
        let op = model.op(model_op);
        let listed: Vec<String> = tensors
            .iter()
            .map(|(n, _, s, _)| match s {
                Some(s) => format!("{} `{}`", node_name(*n), compact(s)),
                None => format!("{} unsharded", node_name(*n)),
            })
            .collect();
        let mut message = format!(
            "`{}` needs a reshard: its tensors are sharded differently on the same dimension of the computation ({}), because user shardings conflict there",
            op.name(),
            listed.join(", ")
        );
        // An upper estimate: every tensor is all-gathered over the contested axes it
        // has (a reshard between two shardings moves at most that much).
        let gathers: Vec<(i64, String)> = tensors
            .iter()
            .filter(|(_, _, _, has)| !has.is_empty())
            .filter_map(|(n, v, s, has)| {
                let s = s.as_ref()?;
                let mesh = g.mesh(&s.mesh)?;
                let b = all_gather_bytes(m.ty(*v).unwrap_or(""), s, has, &mesh)?;
                Some((b, format!("{} over {}", node_name(*n), axes_text(has))))
            })
            .collect();
        let total: Option<i64> =
            (!gathers.is_empty()).then(|| gathers.iter().map(|(b, _)| *b).sum());
        if let Some(t) = total {
            let what: Vec<&str> = gathers.iter().map(|(_, w)| w.as_str()).collect();
            message.push_str(&format!(
                "; resolving it moves up to about {} per device (all-gather of {})",
                human_bytes(t),
                what.join(", ")
            ));
        }
        let mut notes: Vec<Note> = Vec::new();
        for (_, v, _, has) in &tensors {
            let Some(site) = site_of(g, model, &by_start, *v) else { continue };
            let Some(r) = values.iter().find(|x| x.site == site) else { continue };
            let origins = r.printed.map_or_else(Vec::new, |p| explained.origins(p));
            for a in has {
                let Some(orig) = origins.iter().find(|x| axis::overlaps(&x.axis, a)) else {
                    continue;
                };
                if let Some(span) = source_span(model, &orig.source) {
                    let msg = format!("{a} comes from {}", source_text(&orig.source));
                    if !notes.iter().any(|x| x.span == span && x.message == msg) {
                        notes.push(Note { span, message: msg });
                    }
                }
            }
        }
        out.push(Reshard { op: o, span: op.name_span(), message, notes, bytes_per_device: total });
    }
    out.sort_by_key(|r| r.op);
    out
}

fn has_axis(s: &Option<TensorSharding>, a: &AxisRef) -> bool {
    s.as_ref().is_some_and(|s| s.dims.iter().flat_map(|d| &d.axes).any(|x| axis::overlaps(x, a)))
}

/// `operand 0` / `result 1`.
pub fn node_name(n: Node) -> String {
    format!("{} {}", if n.result { "result" } else { "operand" }, n.index)
}

/// `"x", "y"`
pub fn axes_text(axes: &[AxisRef]) -> String {
    axes.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
}

/// The sharding without its mesh: `[{"x"}, {?}]`, then `replicated=`/`unreduced=`.
pub fn compact(s: &TensorSharding) -> String {
    let full = s.to_string();
    // `<@mesh, [...]...>` -> `[...]...`
    let body = full.strip_prefix('<').and_then(|b| b.strip_suffix('>')).unwrap_or(&full);
    match body.find(", [") {
        Some(i) => body[i + 2..].to_string(),
        None => body.to_string(),
    }
}

/// A user-written sharding, in words.
pub fn source_text(s: &Source) -> String {
    match s {
        Source::FuncArg { func, index } => format!("the sharding of argument {index} of `@{func}`"),
        Source::FuncResult { func, index } => {
            format!("the sharding of result {index} of `@{func}`")
        }
        Source::Constraint { .. } => "an `sdy.sharding_constraint`".to_string(),
        Source::ManualIn { index, .. } => {
            format!("in-sharding {index} of an `sdy.manual_computation`")
        }
        Source::ManualOut { index, .. } => {
            format!("out-sharding {index} of an `sdy.manual_computation`")
        }
        Source::OpSharding { index, .. } => format!("the `sdy.sharding` of an op (result {index})"),
    }
}

/// Where a user-written sharding is (chunk-relative): the attribute of a function
/// argument or result, else the op.
pub fn source_span(model: &Model, s: &Source) -> Option<Span> {
    let func_slot = |func: &str, index: usize, arg: bool| -> Option<Span> {
        let op = model.op(*model.funcs.get(func)?);
        let Custom::Func(f) = &op.node.custom else { return None };
        let (attrs, ty) = if arg {
            let a = f.args.get(index)?;
            (a.attrs.as_ref(), a.ty.span)
        } else {
            let r = f.results.get(index)?;
            (r.attrs.as_ref(), r.ty.span)
        };
        let span = attrs.and_then(|d| d.get("sdy.sharding")).map_or(ty, |a| a.span);
        Some(span.shift(op.start))
    };
    let op_span = |o: Option<u32>| -> Option<Span> {
        let o = o?;
        let id = model.ops.iter().position(|x| x.start == o)?;
        Some(model.ops[id].name_span())
    };
    match s {
        Source::FuncArg { func, index } => func_slot(func, *index, true),
        Source::FuncResult { func, index } => func_slot(func, *index, false),
        Source::Constraint { op }
        | Source::ManualIn { op, .. }
        | Source::ManualOut { op, .. }
        | Source::OpSharding { op, .. } => op_span(*op),
    }
}

/// The source site of a printed value (an op result or a function argument).
fn site_of(g: &Graph, model: &Model, by_start: &HashMap<u32, OpId>, v: ValueId) -> Option<Site> {
    match g.def(v)? {
        Def::Result { op, index } => Some(Site::OpResult { op: g.nodes[op].origin?, index }),
        Def::Arg { op, index, .. } => {
            let o = g.nodes[op].origin?;
            (model.op(*by_start.get(&o)?).name() == "func.func")
                .then_some(Site::Arg { func: o, index })
        }
    }
}

/// Bytes each device receives when `s` (of type `ty`) is all-gathered over `axes`:
/// its shard grows by the product of their sizes.
pub fn all_gather_bytes(
    ty: &str,
    s: &TensorSharding,
    axes: &[AxisRef],
    mesh: &Mesh,
) -> Option<i64> {
    let local = local_bytes(ty, s, mesh)?;
    let factor: i64 = axes.iter().map(|a| axis_size(a, mesh)).product::<Option<i64>>()?;
    local.checked_mul(factor - 1)
}

/// Bytes of one device's shard of a value of type `ty` sharded by `s`.
pub fn local_bytes(ty: &str, s: &TensorSharding, mesh: &Mesh) -> Option<i64> {
    let (dims, elem) = tensor_shape(ty)?;
    let shape = local_shape(&dims, s, mesh)?;
    let n = shape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d))?;
    n.checked_mul(elem_bytes(elem)?)
}

/// The per-device shape of `dims` under `s` (ceil division, as devices hold padded
/// shards).
pub fn local_shape(dims: &[i64], s: &TensorSharding, mesh: &Mesh) -> Option<Vec<i64>> {
    if s.dims.len() != dims.len() {
        return None;
    }
    dims.iter()
        .zip(&s.dims)
        .map(|(&d, ds)| {
            let n: i64 = ds.axes.iter().map(|a| axis_size(a, mesh)).product::<Option<i64>>()?;
            (n > 0).then(|| crate::shape::ceil_div(d, n))
        })
        .collect()
}

/// The size of an axis or sub-axis of `mesh`.
pub fn axis_size(a: &AxisRef, mesh: &Mesh) -> Option<i64> {
    match a.sub {
        Some((_, size)) => Some(size),
        None => mesh.axes.iter().find(|(n, _)| *n == a.name).map(|x| x.1),
    }
}

/// `tensor<8x16xf32>` -> ([8, 16], "f32"); static shapes only.
pub fn tensor_shape(ty: &str) -> Option<(Vec<i64>, &str)> {
    let inner = ty.trim().strip_prefix("tensor<")?.strip_suffix('>')?;
    let inner = inner.split(',').next()?.trim(); // drop an encoding
    let mut dims = Vec::new();
    let mut rest = inner;
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest.as_bytes().get(digits) == Some(&b'x') {
            dims.push(rest[..digits].parse().ok()?);
            rest = &rest[digits + 1..];
        } else {
            break;
        }
    }
    if rest.starts_with('?') || rest.starts_with('*') {
        return None;
    }
    Some((dims, rest))
}

/// The storage size of an element type.
pub fn elem_bytes(elem: &str) -> Option<i64> {
    if let Some(inner) = elem.strip_prefix("complex<").and_then(|e| e.strip_suffix('>')) {
        return elem_bytes(inner).map(|b| 2 * b);
    }
    if elem == "index" {
        return Some(8);
    }
    if elem.starts_with("f8") || elem.starts_with("f4") || elem.starts_with("f6") {
        return Some(1);
    }
    let bits: i64 = match elem {
        "bf16" | "f16" => 16,
        "tf32" | "f32" => 32,
        "f64" => 64,
        _ => elem.trim_start_matches(['s', 'u']).strip_prefix('i')?.parse().ok()?,
    };
    Some((bits + 7) / 8)
}

/// `1.5 KiB`, `300 B`.
pub fn human_bytes(b: i64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
