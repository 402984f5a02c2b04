//! `-sdy-convert-global-to-local`: the program rewritten from global (logical) shapes
//! to the shape each device holds. Every tensor value takes its local type under its
//! sharding (function arguments and results under theirs, the bodies of named and
//! manual computations under their edge shardings); manual computations are inlined;
//! `sdy.constant` becomes a `stablehlo.constant` of the local type.
//!
//! Ops with a pattern of their own, one module per family: the collectives
//! (`collectives`: all_reduce, all_gather, all_slice; `all_to_all`,
//! `reduce_scatter`, `collective_permute`), values that depend on the device
//! (`per_device`: pad, iota, dense constants), ops converted as they are once their
//! shardings are checked (`checked`: concatenate, slice, reduce_window,
//! select_and_scatter, convolution), `gather` and `scatter`. An op a pattern refuses
//! fails the pass with Shardy's message at the op.

use super::device_groups;
use super::ops::{i64_array, retype, Builder};
use super::shapes::{shard_count, TensorTy};
use crate::ir::OpKind;
use crate::ir::{Attr, Block, Module, NamedAttr, Op, Region, Syntax, ValueId};
use crate::pass::{Pass, PassContext, PassFailed, PassOptions};
use crate::propagation::editor::reshards::{axis_size, local_shape};
use crate::propagation::graph::{per_value_ref, sharding_of, Graph};
use crate::propagation::pipeline::import::meshes;
use crate::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};
use crate::verify::messages;
use rustc_hash::FxHashMap as HashMap;

mod all_to_all;
mod checked;
mod collective_permute;
mod collectives;
mod gather;
mod per_device;
mod reduce_scatter;
mod scatter;

pub struct GlobalToLocal {
    replicas: i64,
    partitions: i64,
    rgv3: bool,
    per_dim: bool,
    combine_reduce_scatter: bool,
}

pub fn create(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(GlobalToLocal {
        replicas: o.int("replica-count").unwrap_or(1),
        partitions: o.int("partition-count").unwrap_or(1),
        rgv3: o.bool("enable-rgv3"),
        per_dim: o.bool("per-dim-all-gather"),
        combine_reduce_scatter: o.bool("combine-multi-dimension-reduce-scatter"),
    })
}

impl Pass for GlobalToLocal {
    fn flag(&self) -> &'static str {
        "sdy-convert-global-to-local"
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        let at = cx.module.top.origin.unwrap_or(cx.chunk.span.start);
        if self.replicas > 1 && self.partitions > 1 {
            cx.error(at, messages::G2L_REPLICAS_AND_PARTITIONS.into(), None);
            return Err(PassFailed);
        }
        let ms = meshes(cx.module);
        let g = Graph::build(cx.module);
        let m = &*cx.module;
        let mut local: HashMap<ValueId, String> = HashMap::default();
        let mut sh: HashMap<ValueId, TensorSharding> = HashMap::default();
        let mut global: HashMap<ValueId, String> = HashMap::default();
        for v in 0..m.values.len() as ValueId {
            let Some(ty) = m.ty(v) else { continue };
            let s = g.sharding(m, v);
            let converted = local_type(&ms, ty, s.as_ref());
            if let Some(s) = s {
                sh.insert(v, s);
            }
            global.insert(v, ty.to_string());
            match converted {
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
        let mut lz = Localizer {
            meshes: &ms,
            next_channel: next_channel(&top),
            rgv3: self.rgv3,
            replicas: self.replicas,
            per_dim: self.per_dim,
            combine_reduce_scatter: self.combine_reduce_scatter,
            sh,
            global,
        };
        if let Err(f) = lz.localize(m, &mut top, &mut replaced) {
            m.top = top;
            cx.error(f.at, f.msg, None);
            if let Some(op) = f.illegal {
                cx.error(f.at, messages::failed_to_legalize(&op), None);
            }
            return Err(PassFailed);
        }
        // Inlined values may chain (a nested computation's result returned by the
        // outer one): each use takes the end of its chain.
        let map: HashMap<ValueId, ValueId> = replaced.into_iter().collect();
        let resolve = |mut v: ValueId| {
            for _ in 0..=map.len() {
                match map.get(&v) {
                    Some(&to) => v = to,
                    None => break,
                }
            }
            v
        };
        top.walk_mut(&mut |op| {
            for v in &mut op.operands {
                *v = resolve(*v);
            }
        });
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
        return Err(messages::G2L_NON_DIVISIBLE.into());
    }
    Ok((shape != t.shape).then(|| t.with_shape(shape).text()))
}

/// `ops` with the last one's result renamed to `r`, the value they replace.
fn ending_in(mut ops: Vec<Op>, r: ValueId) -> Vec<Op> {
    if let Some(last) = ops.last_mut() {
        last.results = vec![r];
    }
    ops
}

/// `dense<1.0> : T` (one value for every element).
fn is_splat(text: &str) -> bool {
    text.strip_prefix("dense<").is_some_and(|r| !r.starts_with('['))
}

/// A conversion that failed: where, Shardy's message, and the op the conversion then
/// reports as illegal (`None` where Shardy stops with a check instead).
pub(super) struct Failure {
    at: u32,
    msg: String,
    illegal: Option<String>,
}

impl Failure {
    /// `emitOpError` from an op's pattern, which then leaves the op illegal.
    fn op(op: &Op, msg: &str) -> Failure {
        Failure {
            at: op.origin.unwrap_or(0),
            msg: messages::op_error(&op.name, msg),
            illegal: Some(op.name.to_string()),
        }
    }
    /// `emitError` from an op's pattern (no op prefix), which then leaves it illegal.
    fn error(op: &Op, msg: &str) -> Failure {
        Failure { at: op.origin.unwrap_or(0), msg: msg.into(), illegal: Some(op.name.to_string()) }
    }
    /// A broken invariant Shardy checks (and aborts on).
    fn check(op: &Op, msg: String) -> Failure {
        Failure { at: op.origin.unwrap_or(0), msg, illegal: None }
    }
}

struct Localizer<'a> {
    meshes: &'a HashMap<String, Mesh>,
    /// The channel handle of the next collective made.
    next_channel: i64,
    rgv3: bool,
    replicas: i64,
    per_dim: bool,
    combine_reduce_scatter: bool,
    /// Every value's sharding, and its global type, as written.
    sh: HashMap<ValueId, TensorSharding>,
    global: HashMap<ValueId, String>,
}

impl Localizer<'_> {
    /// Converts the ops nested in `op`: types of custom-form ops, manual computations
    /// inlined (their block arguments and results recorded in `replaced`), and every
    /// op with a pattern of its own; the first op that cannot be converted fails.
    fn localize(
        &mut self,
        m: &mut Module,
        op: &mut Op,
        replaced: &mut Vec<(ValueId, ValueId)>,
    ) -> Result<(), Failure> {
        for r in &mut op.regions {
            for b in &mut r.blocks {
                let ops = std::mem::take(&mut b.ops);
                for mut child in ops {
                    if let Some(ops) = self.convert(m, &child)? {
                        b.ops.extend(ops);
                        continue;
                    }
                    self.localize(m, &mut child, replaced)?;
                    if child.kind == OpKind::SdyManualComputation {
                        inline_manual(child, &mut b.ops, replaced);
                        continue;
                    }
                    if child.kind == OpKind::SdyConstant {
                        child = constant(m, child);
                    }
                    retype(m, &mut child);
                    b.ops.push(child);
                }
            }
        }
        Ok(())
    }

    /// The ops that replace `op` when it has a pattern of its own; `None` when it is
    /// converted generically (its regions localized, its types rewritten).
    fn convert(&mut self, m: &mut Module, op: &Op) -> Result<Option<Vec<Op>>, Failure> {
        Ok(match op.name.as_str() {
            "sdy.all_reduce" => self.all_reduce(m, op),
            "sdy.all_slice" => self.all_slice(m, op),
            "sdy.all_gather" => self.all_gather(m, op),
            "sdy.all_to_all" => self.all_to_all(m, op)?,
            "sdy.reduce_scatter" => self.reduce_scatter(m, op)?,
            "sdy.collective_permute" => self.collective_permute(m, op)?,
            "stablehlo.pad" => self.pad(m, op),
            "stablehlo.iota" => self.iota(m, op),
            "sdy.constant" => self.dense_constant(m, op),
            "stablehlo.concatenate" => self.concatenate(op)?,
            "stablehlo.slice" => self.slice(m, op)?,
            "stablehlo.reduce_window" | "stablehlo.select_and_scatter" => self.windowed(op)?,
            "stablehlo.convolution" => self.convolution(m, op)?,
            "stablehlo.gather" => self.gather(m, op)?,
            "stablehlo.scatter" => self.scatter(m, op)?,
            _ => None,
        })
    }

    fn mesh(&self, r: &MeshRef) -> Option<Mesh> {
        match r {
            MeshRef::Symbol(n) => self.meshes.get(n).cloned(),
            MeshRef::Inline(m) => Some(m.clone()),
        }
    }

    /// `replica_groups = ...` of a collective over `axes` of the mesh `r`.
    fn replica_groups(&self, axes: &[AxisRef], r: &MeshRef) -> Option<Attr> {
        if self.rgv3 {
            if let Some(a) = device_groups::mesh_axes_attr(axes, r) {
                return Some(Attr::Raw(a));
            }
        }
        let groups = device_groups::replica_groups(axes, &self.mesh(r)?)?;
        Some(Attr::Raw(device_groups::groups_attr(&groups)))
    }

    /// `emitDynamicSliceForAxes`: this device's part of `global` (sliced along
    /// `axes[d]` in each dimension), which becomes value `result` of type `local`.
    fn dynamic_slice_for_axes(
        &self,
        b: &mut Builder<'_>,
        global: ValueId,
        mesh: &Mesh,
        axes: &[Vec<AxisRef>],
        local: &TensorTy,
        result: ValueId,
    ) {
        let index = TensorTy::scalar("i64");
        let mut starts = Vec::new();
        for (d, dim_axes) in axes.iter().enumerate() {
            if dim_axes.is_empty() {
                starts.push(b.splat(&index, "0"));
                continue;
            }
            let size = local.shape.get(d).copied().unwrap_or(1);
            starts.push(self.dimension_offset(b, mesh, dim_axes, size));
        }
        let mut operands = vec![global];
        operands.extend(starts);
        let sizes = NamedAttr::new("slice_sizes", i64_array(&local.shape));
        b.op("stablehlo.dynamic_slice", operands, vec![sizes], local, None);
        if let Some(last) = b.ops.last_mut() {
            last.results = vec![result];
        }
    }

    /// `getDimensionOffset`: this device's start along axes `axes` (a table of every
    /// device's offset, read at the device id).
    fn dimension_offset(
        &self,
        b: &mut Builder<'_>,
        mesh: &Mesh,
        axes: &[AxisRef],
        size: i64,
    ) -> ValueId {
        let total: i64 = mesh.axes.iter().map(|a| a.1).product();
        let table: Vec<String> =
            (0..total).map(|id| (shard_index(id, mesh, axes) * size).to_string()).collect();
        let id = self.device_id(b);
        let table_ty = TensorTy { shape: vec![total], elem: "i64".into() };
        let table = b.splat(&table_ty, &format!("[{}]", table.join(", ")));
        let one = TensorTy { shape: vec![1], elem: "i64".into() };
        let sizes = NamedAttr::new("slice_sizes", i64_array(&[1]));
        let slice = b.op("stablehlo.dynamic_slice", vec![table, id], vec![sizes], &one, None);
        b.op("stablehlo.reshape", vec![slice], vec![], &TensorTy::scalar("i64"), None)
    }

    /// `getDeviceId`: the replica id with replicas, else the partition id, as i64.
    fn device_id(&self, b: &mut Builder<'_>) -> ValueId {
        let name =
            if self.replicas > 1 { "stablehlo.replica_id" } else { "stablehlo.partition_id" };
        let id = b.op(name, vec![], vec![], &TensorTy::scalar("ui32"), None);
        b.op("stablehlo.convert", vec![id], vec![], &TensorTy::scalar("i64"), None)
    }
}

/// The index of device `id`'s shard along `axes` (`getShardIndex`).
fn shard_index(id: i64, mesh: &Mesh, axes: &[AxisRef]) -> i64 {
    let logical = match mesh.device_ids.iter().position(|&d| d == id) {
        Some(p) => p as i64,
        None => id,
    };
    let mut index = 0;
    for a in axes {
        let Some(pos) = mesh.axes.iter().position(|(n, _)| *n == a.name.as_str()) else { continue };
        let full = mesh.axes[pos].1;
        let suffix: i64 = mesh.axes[pos + 1..].iter().map(|x| x.1).product();
        let (pre, size) = a.sub.unwrap_or((1, full));
        let stride = (full / (pre * size).max(1)).max(1);
        index = index * size + (logical / (suffix * stride)) % size.max(1);
    }
    index
}

/// One more than the largest `channel_handle` in the module (`getNextChannelId`).
fn next_channel(top: &Op) -> i64 {
    let mut max = 0;
    top.walk(&mut |op| {
        for a in op.props.iter().chain(&op.attrs).filter(|a| a.name == "channel_handle") {
            if let Attr::Raw(t) = &a.value {
                let h = t.split("handle = ").nth(1).and_then(|r| {
                    r.split(|c: char| !c.is_ascii_digit() && c != '-').next()?.parse::<i64>().ok()
                });
                max = max.max(h.unwrap_or(0));
            }
        }
    });
    max + 1
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
        if inner.kind == OpKind::SdyReturn {
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
        vec![NamedAttr::new("value", Attr::Raw(value))],
    );
    new.origin = op.origin;
    new.syntax = Syntax::Pretty;
    new
}
