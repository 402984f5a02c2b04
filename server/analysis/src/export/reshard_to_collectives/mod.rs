//! `-sdy-reshard-to-collectives`: every `sdy.reshard` becomes the sequence of
//! `sdy.all_slice` / `sdy.collective_permute` / `sdy.all_to_all` / `sdy.all_gather`
//! that [`inserter::plan`] computes from its input's sharding (looking through
//! propagation barriers) to its own.
//!
//! Kept as they are: reshards from or to a single-device mesh, reshards between meshes
//! that differ in more than device order, and with `keep-redundant-reshards` the
//! reshards whose input already has an equivalent sharding. A reshard to a fully
//! replicated sharding from a fully replicated one is dropped; from a sharded one it
//! gathers everything on the input's mesh.

pub mod inserter;

use crate::ir::OpKind;
use crate::ir::{Attr, Module, Op, ValueId};
use crate::propagation::graph::{replicated_sharding, sharding_of_ref, Def, Graph};
use crate::sharding::{Mesh, TensorSharding};
use inserter::{plan, Planned, Step};
use rustc_hash::FxHashMap as HashMap;

/// What becomes of one reshard.
enum Outcome {
    Keep,
    /// Its uses take this value; the reshard goes.
    Forward(ValueId),
    /// Replaced by these collectives, applied to `input` in turn.
    Collectives {
        input: ValueId,
        steps: Vec<Planned>,
    },
}

/// Runs the pass on `m`.
pub fn reshard_to_collectives(m: &mut Module, keep_redundant: bool) {
    let g = Graph::shared(m);
    let mut reshards: Vec<(ValueId, ValueId, TensorSharding)> = Vec::new();
    m.top.walk(&mut |op: &Op| {
        if op.kind == OpKind::SdyReshard {
            if let (Some(&i), Some(&r), Some(s)) =
                (op.operands.first(), op.results.first(), sharding_of_ref(op.prop("sharding")))
            {
                reshards.push((i, r, s.clone()));
            }
        }
    });
    if reshards.is_empty() {
        return;
    }
    // A reshard already planned: its result's sharding and the value it became.
    let mut planned: HashMap<ValueId, TensorSharding> = HashMap::default();
    let mut forward: HashMap<ValueId, ValueId> = HashMap::default();
    let mut outcomes = Vec::with_capacity(reshards.len());
    for (input, result, out) in reshards {
        let input = *forward.get(&input).unwrap_or(&input);
        let outcome = decide(m, &g, &planned, input, &out, keep_redundant);
        match &outcome {
            Outcome::Keep => {
                planned.insert(result, out);
            }
            Outcome::Forward(v) => {
                forward.insert(result, *v);
            }
            Outcome::Collectives { steps, .. } => {
                if let Some(last) = steps.last() {
                    planned.insert(result, last.out.clone());
                }
            }
        }
        outcomes.push(outcome);
    }
    drop(g);
    apply(m, &mut outcomes.into_iter(), &forward);
}

/// The input's sharding through propagation barriers (`getShardingBypassingBarriers`)
/// and the value it belongs to.
fn bypass_barriers(
    m: &Module,
    g: &Graph,
    planned: &HashMap<ValueId, TensorSharding>,
    mut v: ValueId,
) -> (ValueId, Option<TensorSharding>) {
    loop {
        if let Some(s) = planned.get(&v) {
            return (v, Some(s.clone()));
        }
        match g.def(v) {
            Some(Def::Result { op, .. }) if g.nodes[op].kind == OpKind::SdyPropagationBarrier => {
                match g.nodes[op].operands.first() {
                    Some(&x) => v = x,
                    None => return (v, None),
                }
            }
            _ => return (v, g.sharding(m, v)),
        }
    }
}

fn is_maximal(mesh: Option<&Mesh>) -> bool {
    mesh.is_some_and(|m| m.axes.is_empty() && m.device_ids.len() == 1)
}

fn fully_replicated(s: &TensorSharding) -> bool {
    s.dims.iter().all(|d| d.axes.is_empty())
}

/// `TensorShardingAttr::isEquivalent` (a missing sharding is fully replicated).
fn equivalent(a: Option<&TensorSharding>, b: &TensorSharding) -> bool {
    let replicated = |s: &TensorSharding| s.unreduced.is_empty() && fully_replicated(s);
    match a {
        None => replicated(b),
        Some(a) if replicated(a) => replicated(b),
        Some(a) => {
            a.mesh == b.mesh
                && a.unreduced == b.unreduced
                && a.dims.len() == b.dims.len()
                && a.dims.iter().zip(&b.dims).all(|(x, y)| x.axes == y.axes)
        }
    }
}

/// Same mesh, or meshes with the same axes that differ only in device order.
fn equivalent_on_mesh(g: &Graph, a: &TensorSharding, b: &TensorSharding) -> bool {
    if a.mesh == b.mesh {
        return true;
    }
    match (g.mesh_ref(&a.mesh), g.mesh_ref(&b.mesh)) {
        (Some(x), Some(y)) => is_maximal(Some(x)) == is_maximal(Some(y)) && x.axes == y.axes,
        _ => false,
    }
}

fn decide(
    m: &Module,
    g: &Graph,
    planned: &HashMap<ValueId, TensorSharding>,
    input: ValueId,
    out: &TensorSharding,
    keep_redundant: bool,
) -> Outcome {
    let (source, found) = bypass_barriers(m, g, planned, input);
    if keep_redundant && equivalent(found.as_ref(), out) {
        return Outcome::Keep;
    }
    let ty = g.ty(m, source);
    let in_sharding = found.unwrap_or_else(|| replicated_sharding(&out.mesh, ty.rank(), false));
    let (in_mesh, out_mesh) = (g.mesh_ref(&in_sharding.mesh), g.mesh_ref(&out.mesh));
    if is_maximal(in_mesh) || is_maximal(out_mesh) || in_sharding.dims.len() != out.dims.len() {
        return Outcome::Keep;
    }
    let mut out = out.clone();
    if fully_replicated(&out) {
        if fully_replicated(&in_sharding) {
            return Outcome::Forward(input);
        }
        out = replicated_sharding(&in_sharding.mesh, in_sharding.dims.len(), true);
    } else if !equivalent_on_mesh(g, &in_sharding, &out) {
        return Outcome::Keep;
    }
    let Some(mesh) = in_mesh else { return Outcome::Keep };
    let shape = ty.static_shape().unwrap_or_default();
    let steps = plan(&in_sharding, &out, &shape, mesh);
    if steps.is_empty() {
        return Outcome::Forward(source);
    }
    Outcome::Collectives { input: source, steps }
}

/// The op of one collective.
fn collective_op(step: &Planned, input: ValueId, result: ValueId) -> Op {
    let (name, props) = match &step.step {
        Step::AllSlice(axes) => {
            ("sdy.all_slice", vec![("slicing_axes", Attr::AxisLists(axes.clone()))])
        }
        Step::AllGather(axes) => {
            ("sdy.all_gather", vec![("gathering_axes", Attr::AxisLists(axes.clone()))])
        }
        Step::AllToAll(p) => ("sdy.all_to_all", vec![("params", Attr::AllToAll(vec![p.clone()]))]),
        Step::Permute => ("sdy.collective_permute", vec![]),
    };
    let mut op = Op::pretty(name, vec![input], vec![result], Vec::new());
    for (k, v) in props {
        op.set_prop(k, v);
    }
    op.set_prop("out_sharding", Attr::Sharding(step.out.clone()));
    op
}

/// Replaces the reshards (in walk order) by their outcomes and forwards uses.
fn apply(
    m: &mut Module,
    outcomes: &mut impl Iterator<Item = Outcome>,
    forward: &HashMap<ValueId, ValueId>,
) {
    fn go(
        op: &mut Op,
        values: &mut Vec<crate::ir::ValueInfo>,
        outcomes: &mut dyn Iterator<Item = Outcome>,
    ) {
        for r in &mut op.regions {
            for b in &mut r.blocks {
                let old = std::mem::take(&mut b.ops);
                let mut ops = Vec::with_capacity(old.len());
                for mut o in old {
                    if o.kind != OpKind::SdyReshard || o.operands.is_empty() || o.results.is_empty()
                    {
                        go(&mut o, values, outcomes);
                        ops.push(o);
                        continue;
                    }
                    if o.prop("sharding").and_then(|a| sharding_of_ref(Some(a))).is_none() {
                        ops.push(o);
                        continue;
                    }
                    match outcomes.next() {
                        None | Some(Outcome::Keep) => ops.push(o),
                        Some(Outcome::Forward(_)) => {}
                        Some(Outcome::Collectives { input, steps }) => {
                            let ty = values.get(o.results[0] as usize).and_then(|v| v.ty.clone());
                            let mut v = input;
                            for (k, step) in steps.iter().enumerate() {
                                // The last collective defines the reshard's own result.
                                let result = if k + 1 == steps.len() {
                                    o.results[0]
                                } else {
                                    values.push(crate::ir::ValueInfo { ty: ty.clone() });
                                    (values.len() - 1) as ValueId
                                };
                                let mut c = collective_op(step, v, result);
                                c.origin = o.origin;
                                ops.push(c);
                                v = result;
                            }
                        }
                    }
                }
                b.ops = ops;
            }
        }
    }
    go(&mut m.top, &mut m.values, outcomes);
    if forward.is_empty() {
        return;
    }
    let resolve = |mut v: ValueId| {
        while let Some(&w) = forward.get(&v) {
            v = w;
        }
        v
    };
    m.top.walk_mut(&mut |op: &mut Op| {
        for v in &mut op.operands {
            *v = resolve(*v);
        }
    });
}

struct ReshardToCollectives {
    keep_redundant: bool,
}

impl crate::pass::Pass for ReshardToCollectives {
    fn flag(&self) -> &'static str {
        "sdy-reshard-to-collectives"
    }
    fn run(
        &mut self,
        cx: &mut crate::pass::PassContext<'_>,
    ) -> Result<(), crate::pass::PassFailed> {
        reshard_to_collectives(cx.module, self.keep_redundant);
        Ok(())
    }
}

/// The pass of `-sdy-reshard-to-collectives`.
pub fn create(o: &crate::pass::PassOptions) -> Box<dyn crate::pass::Pass> {
    Box::new(ReshardToCollectives { keep_redundant: o.bool("keep-redundant-reshards") })
}
