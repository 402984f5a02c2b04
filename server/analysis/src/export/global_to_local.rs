//! `-sdy-convert-global-to-local`: the program rewritten from global (logical) shapes
//! to the shape each device holds. Every tensor value takes its local type under its
//! sharding (function arguments and results under theirs, the bodies of named and
//! manual computations under their edge shardings); manual computations are inlined;
//! `sdy.constant` becomes a `stablehlo.constant` of the local type.
//!
//! Written so far: the type conversion of every op Shardy converts generically
//! (StableHLO ops without a pattern of their own, dot and dot_general, ops of unknown
//! dialects, returns, named computations), manual computations, constants, iota, pad,
//! and the collectives all_reduce, all_gather (per dimension or combined) and
//! all_slice. Ops whose own pattern is not written yet (all_to_all,
//! collective_permute, reduce_scatter, concatenate, convolution, gather, scatter,
//! slice, reduce_window, select_and_scatter) are refused with an error when their
//! shapes change, rather than given wrong shapes.

use super::device_groups;
use super::ops::{i64_array, retype, Builder};
use super::shapes::{shard_count, TensorTy};
use crate::pass::{Pass, PassContext, PassFailed, PassOptions};
use crate::print::ir::{Attr, Block, Module, NamedAttr, Op, Region, Syntax, ValueId};
use crate::print::sdy::{AxisRef, Mesh, MeshRef, TensorSharding};
use crate::propagation::editor::reshards::{axis_size, local_shape};
use crate::propagation::graph::{per_value_ref, sharding_of, Graph};
use crate::propagation::pipeline::import::meshes;
use rustc_hash::FxHashMap as HashMap;

pub struct GlobalToLocal {
    replicas: i64,
    partitions: i64,
    rgv3: bool,
    per_dim: bool,
}

pub fn create(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(GlobalToLocal {
        replicas: o.int("replica-count").unwrap_or(1),
        partitions: o.int("partition-count").unwrap_or(1),
        rgv3: o.bool("enable-rgv3"),
        per_dim: o.bool("per-dim-all-gather"),
    })
}

/// Ops with a conversion pattern of their own that is not written yet.
const OWN_PATTERN: &[&str] = &[
    "sdy.all_to_all",
    "sdy.collective_permute",
    "sdy.reduce_scatter",
    "stablehlo.concatenate",
    "stablehlo.convolution",
    "stablehlo.gather",
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
        let mut lz = Localizer {
            meshes: &ms,
            next_channel: next_channel(&top),
            rgv3: self.rgv3,
            replicas: self.replicas,
            per_dim: self.per_dim,
            sh,
            global,
        };
        lz.localize(m, &mut top, &mut replaced);
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
        if changes && OWN_PATTERN.contains(&op.name.as_str()) {
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

struct Localizer<'a> {
    meshes: &'a HashMap<String, Mesh>,
    /// The channel handle of the next collective made.
    next_channel: i64,
    rgv3: bool,
    replicas: i64,
    per_dim: bool,
    /// Every value's sharding, and its global type, as written.
    sh: HashMap<ValueId, TensorSharding>,
    global: HashMap<ValueId, String>,
}

impl Localizer<'_> {
    /// Converts the ops nested in `op`: types of custom-form ops, manual computations
    /// inlined (their block arguments and results recorded in `replaced`), constants,
    /// collectives.
    fn localize(&mut self, m: &mut Module, op: &mut Op, replaced: &mut Vec<(ValueId, ValueId)>) {
        for r in &mut op.regions {
            for b in &mut r.blocks {
                let ops = std::mem::take(&mut b.ops);
                for mut child in ops {
                    if child.name == "sdy.all_reduce" {
                        child = self.all_reduce(m, child);
                    }
                    if child.name == "sdy.all_slice" {
                        if let Some(ops) = self.all_slice(m, &child) {
                            b.ops.extend(ops);
                            continue;
                        }
                    }
                    if child.name == "sdy.all_gather" {
                        if let Some(ops) = self.all_gather(m, &child) {
                            b.ops.extend(ops);
                            continue;
                        }
                    }
                    if child.name == "stablehlo.pad" {
                        if let Some(ops) = self.pad(m, &child) {
                            b.ops.extend(ops);
                            continue;
                        }
                    }
                    if child.name == "stablehlo.iota" {
                        if let Some(ops) = self.iota(m, &child) {
                            b.ops.extend(ops);
                            continue;
                        }
                    }
                    if child.name == "sdy.constant" {
                        if let Some(ops) = self.dense_constant(m, &child) {
                            b.ops.extend(ops);
                            continue;
                        }
                    }
                    self.localize(m, &mut child, replaced);
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

    /// `AllSliceOpPattern`: this device's slice of the operand.
    fn all_slice(&self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let (Some(Attr::AxisLists(axes)), Some(out)) =
            (op.prop("slicing_axes"), sharding_of(op.prop("out_sharding")))
        else {
            return None;
        };
        let mesh = self.mesh(&out.mesh)?;
        let (&input, &r) = (op.operands.first()?, op.results.first()?);
        let local = TensorTy::parse(m.ty(r)?)?;
        let mut b = Builder::new(m);
        self.dynamic_slice_for_axes(&mut b, input, &mesh, axes, &local, r);
        Some(b.ops)
    }

    /// `AllGatherOpPattern`: a `stablehlo.all_gather` per gathered dimension (last
    /// first), or one over all their axes on a new leading dimension that is then
    /// split and moved next to the dimensions it grows.
    fn all_gather(&mut self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let (Some(Attr::AxisLists(axes)), Some(out)) =
            (op.prop("gathering_axes"), sharding_of(op.prop("out_sharding")))
        else {
            return None;
        };
        let mesh = self.mesh(&out.mesh)?;
        let (&input, &r) = (op.operands.first()?, op.results.first()?);
        let local = TensorTy::parse(m.ty(input)?)?;
        let dims: Vec<usize> = (0..axes.len()).filter(|&d| !axes[d].is_empty()).collect();
        let size = |a: &[AxisRef]| a.iter().map(|x| axis_size(x, &mesh)).product::<Option<i64>>();
        let mut b = Builder::new(m);
        if self.per_dim || dims.len() == 1 {
            let mut cur = input;
            let mut shape = local.shape.clone();
            for &d in dims.iter().rev() {
                *shape.get_mut(d)? *= size(&axes[d])?;
                cur = self.stablehlo_all_gather(
                    &mut b,
                    cur,
                    d,
                    &axes[d],
                    &out.mesh,
                    &local.with_shape(shape.clone()),
                )?;
            }
            b.ops.last_mut()?.results = vec![r];
            return Some(b.ops);
        }
        let factors: Vec<i64> = dims.iter().map(|&d| size(&axes[d])).collect::<Option<_>>()?;
        let all: Vec<AxisRef> = dims.iter().flat_map(|&d| axes[d].iter().cloned()).collect();
        let with =
            |lead: &[i64]| local.with_shape(lead.iter().chain(&local.shape).copied().collect());
        let one = b.op("stablehlo.reshape", vec![input], vec![], &with(&[1]), None);
        let group: i64 = factors.iter().product();
        let gathered =
            self.stablehlo_all_gather(&mut b, one, 0, &all, &out.mesh, &with(&[group]))?;
        let split = b.op("stablehlo.reshape", vec![gathered], vec![], &with(&factors), None);
        let n = dims.len();
        let mut perm = Vec::new();
        let mut next = 0;
        for i in 0..local.shape.len() {
            if dims.contains(&i) {
                perm.push(next);
                next += 1;
            }
            perm.push(i + n);
        }
        let split_shape: Vec<i64> = factors.iter().chain(&local.shape).copied().collect();
        let moved = local.with_shape(perm.iter().map(|&p| split_shape[p]).collect());
        let props = vec![NamedAttr::new(
            "permutation",
            i64_array(&perm.iter().map(|&p| p as i64).collect::<Vec<_>>()),
        )];
        let xposed = b.op("stablehlo.transpose", vec![split], props, &moved, None);
        let mut fin = local.shape.clone();
        for (j, &d) in dims.iter().enumerate() {
            fin[d] *= factors[j];
        }
        b.op("stablehlo.reshape", vec![xposed], vec![], &local.with_shape(fin), None);
        b.ops.last_mut()?.results = vec![r];
        Some(b.ops)
    }

    /// A `stablehlo.all_gather` of `v` along `dim` over `axes`, of type `ty`.
    fn stablehlo_all_gather(
        &mut self,
        b: &mut Builder<'_>,
        v: ValueId,
        dim: usize,
        axes: &[AxisRef],
        mesh: &MeshRef,
        ty: &TensorTy,
    ) -> Option<ValueId> {
        let groups = self.replica_groups(axes, mesh)?;
        let props = vec![
            NamedAttr::new("all_gather_dim", Attr::Int { value: dim as i128, ty: "i64".into() }),
            NamedAttr::new("channel_handle", self.channel()),
            NamedAttr::new("replica_groups", groups),
            NamedAttr::new("use_global_device_ids", Attr::Unit),
        ];
        let r = b.op("stablehlo.all_gather", vec![v], props, ty, None);
        if let Some(last) = b.ops.last_mut() {
            last.syntax = Syntax::Generic;
        }
        Some(r)
    }

    /// `StablehloPadOpPattern` for a sharded operand: a local pad when every device
    /// pads alike, else a pad wide enough for every device and this device's slice
    /// of it.
    fn pad(&self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let (&[input, value], &r) = (&op.operands[..], op.results.first()?) else { return None };
        let (in_s, out_s) = (self.sh.get(&input)?, self.sh.get(&r)?);
        if in_s.dims.iter().all(|d| d.axes.is_empty()) {
            return None;
        }
        let mesh = self.mesh(&in_s.mesh)?;
        let gin = TensorTy::parse(self.global.get(&input)?)?;
        let gout = TensorTy::parse(self.global.get(&r)?)?;
        let [low, _, interior] = super::ops::pad_amounts(op)?;
        let rank = gin.shape.len();
        let devices: i64 = mesh.axes.iter().map(|a| a.1).product();
        let mut offsets = vec![vec![0i64; devices as usize]; rank];
        for i in 0..rank {
            let (ia, oa) = (&in_s.dims.get(i)?.axes, &out_s.dims.get(i)?.axes);
            if ia != oa {
                return None;
            }
            let k: i64 = ia.iter().map(|a| axis_size(a, &mesh)).product::<Option<i64>>()?.max(1);
            let (s_in, s_out) = (gin.shape[i] / k, gout.shape[i] / k);
            for (dev, o) in offsets[i].iter_mut().enumerate() {
                let (k_in, k_out) =
                    (shard_index(dev as i64, &mesh, ia), shard_index(dev as i64, &mesh, oa));
                *o = k_in * s_in * (interior[i] + 1) + low[i] - k_out * s_out;
            }
        }
        let lres = TensorTy::parse(m.ty(r)?)?;
        let lin = TensorTy::parse(m.ty(input)?)?;
        let expanded = |i: usize| (lin.shape[i] - 1) * (interior[i] + 1) + 1;
        let uniform: Vec<bool> = offsets.iter().map(|o| o.iter().all(|x| *x == o[0])).collect();
        let mut b = Builder::new(m);
        if uniform.iter().all(|u| *u) {
            let l: Vec<i64> = (0..rank).map(|i| offsets[i][0]).collect();
            let h: Vec<i64> = (0..rank).map(|i| lres.shape[i] - (expanded(i) + l[i])).collect();
            b.pad(input, value, [&l, &h, &interior], &lres, None);
            b.ops.last_mut()?.results = vec![r];
            return Some(b.ops);
        }
        let mut k_low = Vec::new();
        let mut k_high = Vec::new();
        let mut safe = Vec::new();
        for (i, dim_offsets) in offsets.iter().enumerate() {
            let max = *dim_offsets.iter().max()?;
            let min = *dim_offsets.iter().min()?;
            let lo = max.max(0);
            let hi = (lres.shape[i] - min - expanded(i)).max(0);
            k_low.push(lo);
            k_high.push(hi);
            safe.push(lo + expanded(i) + hi);
        }
        let padded =
            b.pad(input, value, [&k_low, &k_high, &interior], &lres.with_shape(safe), None);
        let id = self.device_id(&mut b);
        let index = TensorTy::scalar("i64");
        let mut starts = Vec::new();
        for i in 0..rank {
            let table: Vec<i64> = offsets[i].iter().map(|o| k_low[i] - o).collect();
            if uniform[i] {
                starts.push(b.splat(&index, &table[0].to_string()));
                continue;
            }
            let text: Vec<String> = table.iter().map(i64::to_string).collect();
            let table_ty = TensorTy { shape: vec![devices], elem: "i64".into() };
            let t = b.splat(&table_ty, &format!("[{}]", text.join(", ")));
            let one = TensorTy { shape: vec![1], elem: "i64".into() };
            let sizes = NamedAttr::new("slice_sizes", i64_array(&[1]));
            let sl = b.op("stablehlo.dynamic_slice", vec![t, id], vec![sizes], &one, None);
            starts.push(b.op("stablehlo.reshape", vec![sl], vec![], &index, None));
        }
        let mut operands = vec![padded];
        operands.extend(starts);
        let sizes = NamedAttr::new("slice_sizes", i64_array(&lres.shape));
        b.op("stablehlo.dynamic_slice", operands, vec![sizes], &lres, None);
        b.ops.last_mut()?.results = vec![r];
        Some(b.ops)
    }

    /// `StablehloIotaOpPattern`: a local iota, plus this device's offset along a
    /// sharded iota dimension.
    fn iota(&self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let &r = op.results.first()?;
        let s = per_value_ref(op.attr("sdy.sharding"), 0)?.clone();
        if s.dims.iter().all(|d| d.axes.is_empty()) {
            return None;
        }
        let mesh = self.mesh(&s.mesh)?;
        let dim = super::ops::inherent(op).int(&["dim", "iota_dimension"])?;
        let local = TensorTy::parse(m.ty(r)?)?;
        let axes = s.dims.get(dim as usize)?.axes.clone();
        let mut b = Builder::new(m);
        let iota_dim = Attr::Int { value: dim as i128, ty: "i64".into() };
        let props = vec![NamedAttr::new("iota_dimension", iota_dim)];
        let iota = b.op("stablehlo.iota", vec![], props, &local, None);
        if axes.is_empty() {
            b.ops.last_mut()?.results = vec![r];
            return Some(b.ops);
        }
        let size = *local.shape.get(dim as usize)?;
        let offset = self.dimension_offset(&mut b, &mesh, &axes, size);
        let elem = TensorTy::scalar(&local.elem);
        let offset = b.op("stablehlo.convert", vec![offset], vec![], &elem, None);
        let dims = NamedAttr::new("broadcast_dimensions", i64_array(&[]));
        let bcast = b.op("stablehlo.broadcast_in_dim", vec![offset], vec![dims], &local, None);
        b.op("stablehlo.add", vec![iota, bcast], vec![], &local, None);
        b.ops.last_mut()?.results = vec![r];
        Some(b.ops)
    }

    /// `ConstantOpPattern` for a sharded dense value: the global constant, sliced.
    fn dense_constant(&self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let &r = op.results.first()?;
        let Some(Attr::Raw(value)) = op.prop("value") else { return None };
        let (body, global) = value.rsplit_once(" : ")?;
        if is_splat(value) || m.ty(r) == Some(global) {
            return None;
        }
        let s = per_value_ref(op.attr("sdy.sharding"), 0)?.clone();
        let mesh = self.mesh(&s.mesh)?;
        let local = TensorTy::parse(m.ty(r)?)?;
        let global_ty = TensorTy::parse(global)?;
        let axes: Vec<Vec<AxisRef>> = s.dims.iter().map(|d| d.axes.clone()).collect();
        let body = body.strip_prefix("dense<")?.strip_suffix('>')?.to_string();
        let mut b = Builder::new(m);
        let g = b.splat(&global_ty, &body);
        self.dynamic_slice_for_axes(&mut b, g, &mesh, &axes, &local, r);
        Some(b.ops)
    }

    fn channel(&mut self) -> Attr {
        let h = self.next_channel;
        self.next_channel += 1;
        Attr::Raw(format!("#stablehlo.channel_handle<handle = {h}, type = 1>"))
    }

    /// `AllReduceOpPattern`: a `stablehlo.all_reduce` over the reduction axes' device
    /// groups, reducing with the op's reduction.
    fn all_reduce(&mut self, m: &mut Module, op: Op) -> Op {
        let (Some(Attr::AxisList(axes)), Some(out)) =
            (op.prop("reduction_axes"), sharding_of(op.prop("out_sharding")))
        else {
            return op;
        };
        let Some(groups) = self.replica_groups(axes, &out.mesh) else { return op };
        let reducer = match op.prop("reduction_op").map(crate::print::attr::attr_to_string) {
            Some(r) if r == "max" => "stablehlo.maximum",
            Some(r) if r == "min" => "stablehlo.minimum",
            _ => "stablehlo.add",
        };
        let props = vec![
            NamedAttr::new("channel_handle", self.channel()),
            NamedAttr::new("replica_groups", groups),
            NamedAttr::new("use_global_device_ids", Attr::Unit),
        ];
        let elem = op.results.first().and_then(|&r| TensorTy::parse(m.ty(r)?)).map(|t| t.elem);
        let scalar = TensorTy::scalar(&elem.unwrap_or_else(|| "f32".into())).text();
        let (a, b) = (m.new_value(Some(scalar.clone())), m.new_value(Some(scalar.clone())));
        let sum = m.new_value(Some(scalar));
        let body = Block {
            args: vec![a, b],
            ops: vec![
                Op::pretty(reducer, vec![a, b], vec![sum], vec![]),
                Op::pretty("stablehlo.return", vec![sum], vec![], vec![]),
            ],
        };
        let mut new = Op::pretty("stablehlo.all_reduce", op.operands, op.results, props);
        new.regions = vec![Region { blocks: vec![body] }];
        new.origin = op.origin;
        new.syntax = Syntax::Generic;
        new
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
        vec![NamedAttr::new("value", Attr::Raw(value))],
    );
    new.origin = op.origin;
    new.syntax = Syntax::Pretty;
    new
}
