//! `-sdy-convert-global-to-local`: the program rewritten from global (logical) shapes
//! to the shape each device holds. Every tensor value takes its local type under its
//! sharding (function arguments and results under theirs, the bodies of named and
//! manual computations under their edge shardings); manual computations are inlined;
//! `sdy.constant` becomes a `stablehlo.constant` of the local type.
//!
//! Written so far: the type conversion of every op Shardy converts generically
//! (StableHLO ops without a pattern of their own, ops of unknown dialects, returns,
//! named computations), manual computations and splat or unsharded constants. Ops
//! whose own pattern rewrites more than types (collectives, dense sharded constants,
//! concatenate, convolution, dot, gather, iota, pad, scatter, slice, windows) are
//! refused with an error when their shapes change, rather than given wrong shapes.

use super::ops::retype;
use super::shapes::{shard_count, TensorTy};
use crate::passes::{Pass, PassContext, PassFailed, PassOptions};
use crate::print::ir::{Attr, Module, Op, Syntax, ValueId};
use crate::print::sdy::{Mesh, MeshRef, TensorSharding};
use crate::propagation::editor::reshards::local_shape;
use crate::propagation::graph::{sharding_of, Graph};
use crate::propagation::pipeline::import::meshes;
use rustc_hash::FxHashMap as HashMap;

pub struct GlobalToLocal {
    replicas: i64,
    partitions: i64,
}

pub fn create(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(GlobalToLocal {
        replicas: o.int("replica-count").unwrap_or(1),
        partitions: o.int("partition-count").unwrap_or(1),
    })
}

/// Ops with a conversion pattern of their own that is not written yet.
const OWN_PATTERN: &[&str] = &[
    "sdy.all_gather",
    "sdy.all_reduce",
    "sdy.all_slice",
    "sdy.all_to_all",
    "sdy.collective_permute",
    "sdy.reduce_scatter",
    "stablehlo.concatenate",
    "stablehlo.convolution",
    "stablehlo.dot",
    "stablehlo.dot_general",
    "stablehlo.gather",
    "stablehlo.iota",
    "stablehlo.pad",
    "stablehlo.reduce_window",
    "stablehlo.scatter",
    "stablehlo.select_and_scatter",
    "stablehlo.slice",
];

impl Pass for GlobalToLocal {
    fn flag(&self) -> &'static str {
        "sdy-convert-global-to-local"
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        let at = cx.module.top.origin.unwrap_or(cx.chunk.span.start);
        if self.replicas > 1 && self.partitions > 1 {
            let msg = "Shardy partitioner convert_global_to_local does not support both replica_count > 1 and partition_count > 1 yet.";
            cx.error(at, msg.into(), None);
            return Err(PassFailed);
        }
        let ms = meshes(cx.module);
        let g = Graph::build(cx.module);
        let m = &*cx.module;
        let mut local: HashMap<ValueId, String> = HashMap::default();
        for v in 0..m.values.len() as ValueId {
            let Some(ty) = m.ty(v) else { continue };
            match local_type(&ms, ty, g.sharding(m, v).as_ref()) {
                Ok(Some(t)) => {
                    local.insert(v, t);
                }
                Ok(None) => {}
                Err(msg) => {
                    cx.error(at, msg, None);
                    return Err(PassFailed);
                }
            }
        }
        if let Some((at, msg)) = first_unsupported(m, &local) {
            cx.error(at, msg, None);
            return Err(PassFailed);
        }
        let mut funcs = Vec::new();
        for op in m.body() {
            let Some(f) = op.func() else {
                funcs.push(None);
                continue;
            };
            let mut tys = Vec::new();
            for r in &f.results {
                match local_type(&ms, &r.ty, sharding_of(r.attr("sdy.sharding")).as_ref()) {
                    Ok(t) => tys.push(t),
                    Err(msg) => {
                        cx.error(at, msg, None);
                        return Err(PassFailed);
                    }
                }
            }
            funcs.push(Some(tys));
        }

        let m = &mut *cx.module;
        for (v, t) in &local {
            if let Some(info) = m.values.get_mut(*v as usize) {
                info.ty = Some(t.clone());
            }
        }
        let mut top =
            std::mem::replace(&mut m.top, Op::pretty("builtin.module", vec![], vec![], vec![]));
        let mut replaced: Vec<(ValueId, ValueId)> = Vec::new();
        if let Some(body) = top.regions.first_mut().and_then(|r| r.blocks.first_mut()) {
            for (op, results) in body.ops.iter_mut().zip(&funcs) {
                let Some(f) = op.func_mut() else { continue };
                let args = f.args.len();
                let _ = args;
                if let Some(results) = results {
                    for (slot, t) in f.results.iter_mut().zip(results) {
                        if let Some(t) = t {
                            slot.ty = t.clone();
                        }
                    }
                }
            }
        }
        localize(m, &mut top, &mut replaced);
        for (from, to) in replaced {
            top.replace_uses(from, to);
        }
        // Function argument types follow their (converted) entry block arguments.
        if let Some(body) = top.regions.first_mut().and_then(|r| r.blocks.first_mut()) {
            for op in &mut body.ops {
                let entry: Vec<ValueId> = op
                    .regions
                    .first()
                    .and_then(|r| r.blocks.first())
                    .map(|b| b.args.clone())
                    .unwrap_or_default();
                let Some(f) = op.func_mut() else { continue };
                for (slot, v) in f.args.iter_mut().zip(entry) {
                    if let Some(t) = m.ty(v) {
                        slot.ty = t.to_string();
                    }
                }
            }
        }
        m.top = top;
        Ok(())
    }
}

/// The local type of a tensor of type `ty` sharded by `s`; `None` when it is the same.
fn local_type(
    ms: &HashMap<String, Mesh>,
    ty: &str,
    s: Option<&TensorSharding>,
) -> Result<Option<String>, String> {
    let (Some(t), Some(s)) = (TensorTy::parse(ty), s) else { return Ok(None) };
    let mesh = match &s.mesh {
        MeshRef::Symbol(n) => ms.get(n),
        MeshRef::Inline(m) => Some(m),
    };
    let Some(mesh) = mesh else { return Ok(None) };
    let Some(shape) = local_shape(&t.shape, s, mesh) else { return Ok(None) };
    if (0..t.shape.len()).any(|d| t.shape[d] % shard_count(s, d, mesh).max(1) != 0) {
        return Err("Failed to compute local type due to non-divisible sharding".into());
    }
    Ok((shape != t.shape).then(|| t.with_shape(shape).text()))
}

/// The first op this pass cannot convert yet whose shapes change.
fn first_unsupported(m: &Module, local: &HashMap<ValueId, String>) -> Option<(u32, String)> {
    let mut found = None;
    m.top.walk(&mut |op| {
        if found.is_some() {
            return;
        }
        let changes = op.operands.iter().chain(&op.results).any(|v| local.contains_key(v));
        let dense_constant = op.name == "sdy.constant"
            && op.results.first().is_some_and(|r| local.contains_key(r))
            && !matches!(op.prop("value"), Some(Attr::Raw(t)) if is_splat(t));
        if (changes && OWN_PATTERN.contains(&op.name.as_str())) || dense_constant {
            let msg = format!(
                "sdy-convert-global-to-local: converting '{}' to local shapes is not supported yet",
                op.name
            );
            found = Some((op.origin.unwrap_or(0), msg));
        }
    });
    found
}

/// `dense<1.0> : T` (one value for every element).
fn is_splat(text: &str) -> bool {
    text.strip_prefix("dense<").is_some_and(|r| !r.starts_with('['))
}

/// Converts the ops nested in `op`: types of custom-form ops, manual computations
/// inlined (their block arguments and results recorded in `replaced`), constants.
fn localize(m: &Module, op: &mut Op, replaced: &mut Vec<(ValueId, ValueId)>) {
    for r in &mut op.regions {
        for b in &mut r.blocks {
            let ops = std::mem::take(&mut b.ops);
            for mut child in ops {
                localize(m, &mut child, replaced);
                if child.name == "sdy.manual_computation" {
                    inline_manual(child, &mut b.ops, replaced);
                    continue;
                }
                if child.name == "sdy.constant" {
                    child = constant(m, child);
                }
                retype(m, &mut child);
                b.ops.push(child);
            }
        }
    }
}

/// `ManualComputationOpPattern`: the body takes the op's place.
fn inline_manual(op: Op, out: &mut Vec<Op>, replaced: &mut Vec<(ValueId, ValueId)>) {
    let Some(body) = op.regions.into_iter().next().and_then(|r| r.blocks.into_iter().next()) else {
        return;
    };
    for (&arg, &operand) in body.args.iter().zip(&op.operands) {
        replaced.push((arg, operand));
    }
    for inner in body.ops {
        if inner.name == "sdy.return" {
            for (&r, &v) in op.results.iter().zip(&inner.operands) {
                replaced.push((r, v));
            }
            continue;
        }
        out.push(inner);
    }
}

/// `ConstantOpPattern` (unsharded or splat values): a `stablehlo.constant` of the
/// local type.
fn constant(m: &Module, op: Op) -> Op {
    let Some(&r) = op.results.first() else { return op };
    let ty = m.ty(r).unwrap_or_default().to_string();
    let value = match op.prop("value") {
        Some(Attr::Raw(t)) => match t.rsplit_once(" : ") {
            Some((v, _)) => format!("{v} : {ty}"),
            None => t.clone(),
        },
        _ => return op,
    };
    let mut new = Op::pretty(
        "stablehlo.constant",
        vec![],
        vec![r],
        vec![crate::print::ir::NamedAttr::new("value", Attr::Raw(value))],
    );
    new.origin = op.origin;
    new.syntax = Syntax::Pretty;
    new
}
