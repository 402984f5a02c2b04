//! Halo exchange of `-sdy-resolve-permutation-factors` (`enable-halo-exchange=true`,
//! Shardy's `handlePadOp`, `handleSliceOp`, `handleReverseOp` and
//! `handleReshapeHaloExchange`): instead of replicating a sharded dimension that needs
//! data of other devices, each device fetches its neighbours' shards with collective
//! permutes inside an `sdy.manual_computation`, assembles them into a buffer and cuts
//! out its own window at an offset computed from its device id.
//!
//! The ops are made in Shardy's order (it matters to the printed names), in the
//! printable IR, by a [`Builder`]; the caller splices them in place of the op.

use super::ops::{i64_array, Builder};
use super::shapes::TensorTy;
use crate::ir::attr::attr_to_string;
use crate::ir::{Attr, Block, Module, NamedAttr, Op, Region, Syntax, ValueId};
use crate::propagation::editor::reshards::axis_size;
use crate::shape::ceil_div;
use crate::sharding::{AxisRef, Mesh, MeshRef, Reduction, TensorSharding};

/// Meshes with more devices are not exchanged over (the device tables would be too
/// large): such ops are replicated instead.
const MAX_DEVICES: i64 = 1 << 16;

/// What is kept across the ops of one run (Shardy's `ResolutionState`).
pub struct HaloState {
    /// `replica-count`: the device id is the replica id when above 1.
    pub replicas: i64,
    /// The next collective permute's channel (one above the module's highest).
    next_channel: i64,
    /// The module's meshes and the ones made, by value (Shardy's mesh cache).
    meshes: Vec<(Mesh, String)>,
    /// Every symbol name of the module (the symbol table a new mesh is renamed in).
    symbols: Vec<String>,
    /// MLIR's symbol-table uniquing counter: `_0`, `_1`, ... over the whole run.
    uniquing: u64,
    /// Meshes made since the last [`HaloState::take_new_meshes`].
    new_meshes: Vec<Op>,
}

impl HaloState {
    pub fn new(m: &Module, replicas: i64) -> HaloState {
        let mut highest = 0i64;
        m.top.walk(&mut |op| {
            for a in op.props.iter().chain(&op.attrs).filter(|a| a.name == "channel_handle") {
                if let Some(h) = channel_handle(&attr_to_string(&a.value)) {
                    highest = highest.max(h);
                }
            }
            if let Syntax::Custom(t) = &op.syntax {
                let text = t.joined_text();
                if let Some(at) = text.find("channel_handle") {
                    if let Some(h) = channel_handle(&text[at..]) {
                        highest = highest.max(h);
                    }
                }
            }
        });
        let mut meshes = Vec::new();
        let mut symbols = Vec::new();
        for op in m.body() {
            if let Some(f) = op.func() {
                symbols.push(f.sym.clone());
            }
            let Some(Attr::Str(n)) = op.prop("sym_name") else { continue };
            let name = String::from_utf8_lossy(n).into_owned();
            if let Some(Attr::Mesh(mesh)) = op.prop("mesh") {
                meshes.push((mesh.clone(), name.clone()));
            }
            symbols.push(name);
        }
        HaloState {
            replicas,
            next_channel: highest.saturating_add(1),
            meshes,
            symbols,
            uniquing: 0,
            new_meshes: Vec::new(),
        }
    }

    /// The `sdy.mesh` ops made since the last call, in the order they were made.
    pub fn take_new_meshes(&mut self) -> Vec<Op> {
        std::mem::take(&mut self.new_meshes)
    }

    /// `getOrCreateMesh`: the name of a mesh equal to `mesh`, or of a new one named
    /// `base` (renamed as MLIR's symbol table does when the name is taken).
    fn mesh_named(&mut self, mesh: &Mesh, base: &str) -> String {
        if let Some((_, n)) = self.meshes.iter().rev().find(|(x, _)| x == mesh) {
            return n.clone();
        }
        let mut name = base.to_string();
        while self.symbols.contains(&name) {
            name = format!("{base}_{}", self.uniquing);
            self.uniquing += 1;
        }
        self.symbols.push(name.clone());
        self.meshes.push((mesh.clone(), name.clone()));
        let mut op = Op::pretty("sdy.mesh", Vec::new(), Vec::new(), Vec::new());
        op.set_prop("sym_name", Attr::Str(name.as_bytes().to_vec()));
        op.set_prop("mesh", Attr::Mesh(mesh.clone()));
        self.new_meshes.push(op);
        name
    }

    fn channel(&mut self) -> i64 {
        let c = self.next_channel;
        self.next_channel = c.saturating_add(1);
        c
    }
}

/// `N` of `... handle = N ...`.
fn channel_handle(text: &str) -> Option<i64> {
    text.match_indices("handle").find_map(|(at, w)| {
        let rest = text[at + w.len()..].trim_start().strip_prefix('=')?.trim_start();
        let end = rest
            .char_indices()
            .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
            .map_or(rest.len(), |(i, _)| i);
        rest[..end].parse().ok()
    })
}

// ----------------------------------------------------------------------------------
// Which shards each device needs.
// ----------------------------------------------------------------------------------

/// `DimExchangeInfo`: where each of the `k` target shards of one dimension reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DimEx {
    /// Per target shard: the first source shard (-1: none) and the offset in it.
    pub exchanges: Vec<(i64, i64)>,
    pub s_out: i64,
    /// Elements of the input a device needs (its window in the undilated input).
    pub footprint: i64,
    pub left: i64,
    pub right: i64,
    pub needs_comm: bool,
    pub usable: bool,
    /// For a reshape: the axes of the group's output dimensions (the shard order).
    pub target: Option<Vec<AxisRef>>,
}

/// `DataExchangeInfo`: the sharded dimensions of an operand.
#[derive(Clone, Debug, Default)]
pub struct DataEx {
    /// The input shape padded to divisibility along its sharded dimensions.
    pub divisible: Vec<i64>,
    /// The names of the axes of the sharded dimensions.
    pub manual: Vec<String>,
    /// One per dimension with more than one shard.
    pub dims: Vec<DimEx>,
}

impl DimEx {
    /// Target shard `t` reads from shard `source` (-1: none) at `offset` up to shard
    /// `last` (-1: none): how far it reaches left and right.
    fn record(&mut self, t: i64, source: i64, offset: i64, last: i64) {
        if source != -1 && source < t {
            self.left = self.left.max(t - source);
        }
        if last != -1 && last > t {
            self.right = self.right.max(last - t);
        }
        self.exchanges.push((source, offset));
    }
}

impl DataEx {
    pub fn needs_comm(&self) -> bool {
        self.dims.iter().any(|d| d.needs_comm)
    }
    pub fn usable(&self) -> bool {
        self.dims.iter().all(|d| d.usable)
    }
    fn is_manual(&self, name: &str) -> bool {
        self.manual.iter().any(|n| n == name)
    }
}

/// `n` padded up to a multiple of `k` (shapes here are static, never negative).
fn padded(n: i64, k: i64) -> i64 {
    ceil_div(n, k).saturating_mul(k.max(1))
}

/// `getDimExchangeInfo`: target shard `t` reads `footprint` elements from
/// `(t * s_out * stride - pad_low) / dilation` of an input of `dim` elements in shards
/// of `s_in`.
#[allow(clippy::too_many_arguments)]
pub fn dim_exchange(
    k: i64,
    s_in: i64,
    s_out: i64,
    footprint: i64,
    pad_low: i64,
    stride: i64,
    dilation: i64,
    dim: i64,
) -> DimEx {
    let mut e = DimEx { s_out, footprint, usable: true, ..DimEx::default() };
    let dilation = dilation.max(1);
    for t in 0..k {
        let start =
            t.saturating_mul(s_out).saturating_mul(stride).saturating_sub(pad_low) / dilation;
        let limit = start.saturating_add(footprint).saturating_sub(1);
        let (lo, hi) = (start.max(0), limit.min(dim.saturating_sub(1)));
        let (mut source, mut offset, mut last) = (-1, 0, -1);
        if lo <= hi && s_in > 0 {
            source = lo / s_in;
            offset = start.saturating_sub(source.saturating_mul(s_in));
            last = hi / s_in;
        }
        // No source at all (a window of padding only) counts as communication too.
        if source != t || (last != -1 && last != t) {
            e.needs_comm = true;
        }
        e.record(t, source, offset, last);
    }
    if e.left.saturating_add(e.right).saturating_add(1) >= k && (e.left > 1 || e.right > 1) {
        e.usable = false;
    }
    e
}

/// `buildDataExchangeInfo`: `per_dim(d, s_in, k)` for each dimension of more than one
/// shard, whose axes become manual. `None` when the mesh is too large to exchange on.
fn data_exchange(
    s: &TensorSharding,
    mesh: &Mesh,
    shape: &[i64],
    mut per_dim: impl FnMut(usize, i64, i64) -> DimEx,
) -> Option<DataEx> {
    if total_devices(mesh) > MAX_DEVICES || s.dims.len() != shape.len() {
        return None;
    }
    let mut info = DataEx { divisible: shape.to_vec(), ..DataEx::default() };
    for (d, ds) in s.dims.iter().enumerate() {
        let k = axes_size(&ds.axes, mesh);
        if k <= 1 {
            continue;
        }
        for a in &ds.axes {
            if !info.is_manual(&a.name) {
                info.manual.push(a.name.to_string());
            }
        }
        info.divisible[d] = padded(info.divisible[d], k);
        let s_in = info.divisible[d] / k;
        info.dims.push(per_dim(d, s_in, k));
    }
    Some(info)
}

// ----------------------------------------------------------------------------------
// Device coordinates.
// ----------------------------------------------------------------------------------

fn total_devices(mesh: &Mesh) -> i64 {
    mesh.axes.iter().fold(1i64, |p, a| p.saturating_mul(a.1.max(1)))
}

fn axes_size(axes: &[AxisRef], mesh: &Mesh) -> i64 {
    axes.iter().map(|a| axis_size(a, mesh).unwrap_or(1)).fold(1, i64::saturating_mul)
}

/// `getShardedSize` of dimension `d` of `s`.
fn dim_shards(s: &TensorSharding, d: usize, mesh: &Mesh) -> i64 {
    s.dims.get(d).map_or(1, |ds| axes_size(&ds.axes, mesh))
}

/// The product of the sizes of the axes of `axes` named in `manual`.
fn manual_shards(axes: &[AxisRef], mesh: &Mesh, manual: &[String]) -> i64 {
    let manual: Vec<AxisRef> =
        axes.iter().filter(|a| manual.iter().any(|n| *n == *a.name)).cloned().collect();
    axes_size(&manual, mesh)
}

/// Index, full size, and the size of the mesh axes after it, of axis `a`.
struct AxisPlace {
    index: usize,
    size: i64,
    /// The stride of the sub-axis inside its axis.
    post: i64,
}

fn place(a: &AxisRef, mesh: &Mesh) -> Option<AxisPlace> {
    let index = mesh.axes.iter().position(|(n, _)| *n == a.name)?;
    let full = mesh.axes[index].1.max(1);
    let (pre, size) = a.sub.unwrap_or((1, full));
    let (pre, size) = (pre.max(1), size.max(1));
    let post = (full / pre.saturating_mul(size)).max(1);
    Some(AxisPlace { index, size, post })
}

fn coords(mut i: i64, mesh: &Mesh) -> Vec<i64> {
    let mut c = vec![0; mesh.axes.len()];
    for j in (0..mesh.axes.len()).rev() {
        let n = mesh.axes[j].1.max(1);
        c[j] = i % n;
        i /= n;
    }
    c
}

fn linear(c: &[i64], mesh: &Mesh) -> i64 {
    let (mut index, mut mult) = (0i64, 1i64);
    for j in (0..mesh.axes.len()).rev() {
        index = index.saturating_add(c[j].saturating_mul(mult));
        mult = mult.saturating_mul(mesh.axes[j].1.max(1));
    }
    index
}

/// `getShardIndex`: the shard of device `device` along `axes`.
fn shard_index(device: i64, mesh: &Mesh, axes: &[AxisRef]) -> i64 {
    let logical = if mesh.device_ids.is_empty() {
        device
    } else {
        mesh.device_ids.iter().position(|&d| d == device).map_or(0, |p| p as i64)
    };
    let mut index = 0i64;
    for a in axes {
        let Some(p) = place(a, mesh) else { continue };
        let suffix: i64 = mesh.axes[p.index + 1..].iter().map(|x| x.1.max(1)).product();
        let coord = (logical / suffix.saturating_mul(p.post).max(1)) % p.size;
        index = index.saturating_mul(p.size).saturating_add(coord);
    }
    index
}

/// `getDataShiftSourceTargetPairs`: every (device, device `offset` shards further
/// along `axes`) pair that stays inside the dimension.
fn shift_pairs(mesh: &Mesh, axes: &[AxisRef], offset: i64) -> Vec<(i64, i64)> {
    let mut pairs = Vec::new();
    for i in 0..total_devices(mesh) {
        let c = coords(i, mesh);
        let mut next = c.clone();
        let mut carry = offset;
        for a in axes.iter().rev() {
            if carry == 0 {
                break;
            }
            let Some(p) = place(a, mesh) else { continue };
            let sub = (c[p.index] / p.post) % p.size;
            let moved = sub.saturating_add(carry);
            carry = moved.div_euclid(p.size);
            let wrapped = moved.rem_euclid(p.size);
            next[p.index] += (wrapped - sub) * p.post;
        }
        if carry == 0 {
            let j = linear(&next, mesh);
            let id = |x: i64| mesh.device_ids.get(x as usize).copied().unwrap_or(x);
            pairs.push((id(i), id(j)));
        }
    }
    pairs
}

/// `getMeshWithReversedAxes`: the device order with each of `axes` reversed.
fn reversed_mesh(mesh: &Mesh, axes: &[AxisRef]) -> Mesh {
    let total = total_devices(mesh);
    let ids: Vec<i64> =
        if mesh.device_ids.is_empty() { (0..total).collect() } else { mesh.device_ids.clone() };
    let mut new_ids = Vec::with_capacity(total as usize);
    for i in 0..total {
        let c = coords(i, mesh);
        let mut n = c.clone();
        for a in axes {
            let Some(p) = place(a, mesh) else { continue };
            let sub = (c[p.index] / p.post) % p.size;
            n[p.index] += (p.size - 1 - 2 * sub) * p.post;
        }
        new_ids.push(ids.get(linear(&n, mesh) as usize).copied().unwrap_or(i));
    }
    Mesh { axes: mesh.axes.clone(), device_ids: new_ids }
}

// ----------------------------------------------------------------------------------
// Making ops.
// ----------------------------------------------------------------------------------

fn ty_of(b: &Builder, v: ValueId) -> TensorTy {
    b.m.ty(v).and_then(TensorTy::parse).unwrap_or_else(|| TensorTy::scalar("i64"))
}

fn int_attr(v: i64) -> Attr {
    Attr::Int { value: v.into(), ty: "i64".into() }
}

/// `dense<...>` of integers: a splat when all are equal.
fn dense(values: &[i64], shape: &[i64]) -> String {
    let ty = TensorTy { shape: shape.to_vec(), elem: "i64".into() };
    let body = match values.first() {
        Some(&v) if values.iter().all(|&x| x == v) => v.to_string(),
        _ if shape.len() == 2 => {
            let w = shape[1].max(1) as usize;
            let rows: Vec<String> = values
                .chunks(w)
                .map(|r| {
                    format!("[{}]", r.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
                })
                .collect();
            format!("[{}]", rows.join(", "))
        }
        _ => format!("[{}]", values.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
    };
    format!("dense<{body}> : {}", ty.text())
}

fn const_i64(b: &mut Builder, v: i64) -> ValueId {
    b.splat(&TensorTy::scalar("i64"), &v.to_string())
}

fn const_i64s(b: &mut Builder, values: &[i64]) -> ValueId {
    let ty = TensorTy { shape: vec![values.len() as i64], elem: "i64".into() };
    let attr = Attr::Raw(dense(values, &ty.shape));
    b.op("stablehlo.constant", Vec::new(), vec![NamedAttr::new("value", attr)], &ty, None)
}

/// A scalar `i64` op of two operands (`stablehlo.multiply`, ...).
fn arith(b: &mut Builder, name: &str, x: ValueId, y: ValueId) -> ValueId {
    b.op(name, vec![x, y], Vec::new(), &TensorTy::scalar("i64"), None)
}

/// `getDeviceId`: the partition (or replica) id as a scalar `i64`.
fn device_id(b: &mut Builder, st: &HaloState) -> ValueId {
    let name = if st.replicas > 1 { "stablehlo.replica_id" } else { "stablehlo.partition_id" };
    let id = b.op(name, Vec::new(), Vec::new(), &TensorTy::scalar("ui32"), None);
    b.op("stablehlo.convert", vec![id], Vec::new(), &TensorTy::scalar("i64"), None)
}

/// `stablehlo.dynamic_slice` of `input` at `offsets`, `sizes` elements.
fn dynamic_slice(
    b: &mut Builder,
    input: ValueId,
    offsets: Vec<ValueId>,
    ty: &TensorTy,
    s: Option<&TensorSharding>,
) -> ValueId {
    let mut operands = vec![input];
    operands.extend(offsets);
    let props = vec![NamedAttr::new("slice_sizes", i64_array(&ty.shape))];
    b.op("stablehlo.dynamic_slice", operands, props, ty, s)
}

/// `convertPartitionIdToIdInGroup`: the device's shard index along `axes`, from a
/// table for meshes with explicit device ids, else by arithmetic on the id.
fn id_in_group(b: &mut Builder, pid: ValueId, mesh: &Mesh, axes: &[AxisRef]) -> ValueId {
    if !mesh.device_ids.is_empty() {
        let table: Vec<i64> =
            (0..total_devices(mesh)).map(|d| shard_index(d, mesh, axes)).collect();
        let t = const_i64s(b, &table);
        let one = TensorTy { shape: vec![1], elem: "i64".into() };
        let s = dynamic_slice(b, t, vec![pid], &one, None);
        return b.op("stablehlo.reshape", vec![s], Vec::new(), &TensorTy::scalar("i64"), None);
    }
    let total = total_devices(mesh);
    let mut id: Option<ValueId> = None;
    for a in axes {
        let Some(p) = place(a, mesh) else { continue };
        let suffix: i64 = mesh.axes[p.index + 1..].iter().map(|x| x.1.max(1)).product();
        let divisor = suffix.saturating_mul(p.post);
        let mut coord = pid;
        if divisor > 1 {
            let c = const_i64(b, divisor);
            coord = arith(b, "stablehlo.divide", coord, c);
        }
        if p.size < total {
            let c = const_i64(b, p.size);
            coord = arith(b, "stablehlo.remainder", coord, c);
        }
        id = Some(match id {
            None => coord,
            Some(prev) => {
                let c = const_i64(b, p.size);
                let mul = arith(b, "stablehlo.multiply", prev, c);
                arith(b, "stablehlo.add", mul, coord)
            }
        });
    }
    id.unwrap_or_else(|| const_i64(b, 0))
}

/// A `stablehlo.collective_permute` of `input` over `pairs` (generic form, with a
/// new channel).
fn collective_permute(
    b: &mut Builder,
    st: &mut HaloState,
    input: ValueId,
    pairs: &[(i64, i64)],
    s: Option<&TensorSharding>,
) -> ValueId {
    let flat: Vec<i64> = pairs.iter().flat_map(|&(a, c)| [a, c]).collect();
    let props = vec![
        NamedAttr::new(
            "channel_handle",
            Attr::Raw(format!("#stablehlo.channel_handle<handle = {}, type = 1>", st.channel())),
        ),
        NamedAttr::new("source_target_pairs", Attr::Raw(dense(&flat, &[pairs.len() as i64, 2]))),
    ];
    let ty = ty_of(b, input);
    let r = b.op("stablehlo.collective_permute", vec![input], props, &ty, s);
    if let Some(op) = b.ops.last_mut() {
        op.syntax = Syntax::Generic;
    }
    r
}

fn concatenate(b: &mut Builder, parts: Vec<ValueId>, dim: usize, s: &TensorSharding) -> ValueId {
    let mut ty = ty_of(b, parts[0]);
    ty.shape[dim] = parts.iter().map(|&p| ty_of(b, p).shape[dim]).fold(0, i64::saturating_add);
    let props = vec![NamedAttr::new("dimension", int_attr(dim as i64))];
    b.op("stablehlo.concatenate", parts, props, &ty, Some(s))
}

/// `removeAxesFromSharding`: `s` without the axes named in `manual`.
fn without_axes(s: &TensorSharding, manual: &[String]) -> TensorSharding {
    let mut s = s.clone();
    for d in &mut s.dims {
        d.axes.retain(|a| !manual.iter().any(|n| *n == *a.name));
    }
    s
}

/// `padHighSideToShape`: pads `input` at the high end to `shape` (with `value`, or a
/// new zero).
fn pad_high(
    b: &mut Builder,
    input: ValueId,
    shape: &[i64],
    s: &TensorSharding,
    value: Option<ValueId>,
) -> ValueId {
    let ty = ty_of(b, input);
    if ty.shape == shape {
        return input;
    }
    let value = value.unwrap_or_else(|| b.scalar(&ty.elem, false));
    let high: Vec<i64> = shape.iter().zip(&ty.shape).map(|(a, c)| a.saturating_sub(*c)).collect();
    let zeros = vec![0; shape.len()];
    b.pad(input, value, [&zeros, &high, &zeros], &ty.with_shape(shape.to_vec()), Some(s))
}

/// `sliceHighSideToShape`: slices `input` down to `shape`.
fn slice_high(b: &mut Builder, input: ValueId, shape: &[i64], s: &TensorSharding) -> ValueId {
    let ty = ty_of(b, input);
    if ty.shape == shape {
        return input;
    }
    let bounds: Vec<(i64, i64, i64)> = shape.iter().map(|&n| (0, n, 1)).collect();
    b.slice(input, &bounds, &ty.with_shape(shape.to_vec()), Some(s))
}

/// The manual axes in mesh order (`getManualAxesAttrs`).
fn manual_axes_attr(mesh: &Mesh, manual: &[String]) -> Attr {
    Attr::AxisList(
        mesh.axes
            .iter()
            .filter(|(n, _)| manual.iter().any(|m| m == n))
            .map(|(n, _)| AxisRef::full(n.as_str()))
            .collect(),
    )
}

/// An `sdy.manual_computation` of `operands` whose body `body` builds from its block
/// arguments (of types `arg_types`) and returns one value.
#[allow(clippy::too_many_arguments)]
fn manual_computation(
    b: &mut Builder,
    operands: Vec<ValueId>,
    in_shardings: Vec<TensorSharding>,
    out: &TensorSharding,
    manual: Attr,
    arg_types: &[TensorTy],
    result_ty: &TensorTy,
    body: impl FnOnce(&mut Builder, &[ValueId]) -> ValueId,
) -> ValueId {
    let args: Vec<ValueId> = arg_types.iter().map(|t| b.m.new_value(Some(t.text()))).collect();
    let outer = std::mem::take(&mut b.ops);
    let ret = body(b, &args);
    let ret_op = Op::pretty("sdy.return", vec![ret], Vec::new(), Vec::new());
    let mut ops = std::mem::replace(&mut b.ops, outer);
    ops.push(ret_op);
    let props = vec![
        NamedAttr::new("in_shardings", Attr::PerValue(in_shardings)),
        NamedAttr::new("out_shardings", Attr::PerValue(vec![out.clone()])),
        NamedAttr::new("manual_axes", manual),
    ];
    let r = b.op("sdy.manual_computation", operands, props, result_ty, None);
    if let Some(op) = b.ops.last_mut() {
        op.regions = vec![Region { blocks: vec![Block { args, ops }] }];
    }
    r
}

// ----------------------------------------------------------------------------------
// The exchange.
// ----------------------------------------------------------------------------------

/// What the exchange of one dimension needs besides its [`DimEx`].
struct DimCx<'a> {
    s: &'a TensorSharding,
    mesh: &'a Mesh,
    manual: &'a [String],
    local: &'a TensorSharding,
    pad_value: ValueId,
}

#[allow(clippy::too_many_arguments)]
/// `assembleHaloExchangeBuffer`: the left neighbours' shards, this one, the right
/// neighbours', concatenated along `dim` and padded by `edge` on both sides (dilated
/// by `interior`).
fn assemble_buffer(
    b: &mut Builder,
    st: &mut HaloState,
    cx: &DimCx,
    input: ValueId,
    dim: usize,
    e: &DimEx,
    edge: i64,
    interior: i64,
) -> ValueId {
    let axes = e.target.clone().unwrap_or_else(|| cx.s.dims[dim].axes.clone());
    let axes: Vec<AxisRef> =
        axes.into_iter().filter(|a| cx.manual.iter().any(|n| *n == *a.name)).collect();
    // `mayCollectivePermute`: no pairs, no permute.
    let fetch = |b: &mut Builder, st: &mut HaloState, offset: i64| {
        let pairs = shift_pairs(cx.mesh, &axes, offset);
        if pairs.is_empty() {
            input
        } else {
            collective_permute(b, st, input, &pairs, None)
        }
    };
    let mut parts = Vec::new();
    for offset in (1..=e.left).rev() {
        parts.push(fetch(b, st, offset));
    }
    parts.push(input);
    for offset in 1..=e.right {
        parts.push(fetch(b, st, -offset));
    }
    let concat = concatenate(b, parts, dim, cx.local);
    let mut ty = ty_of(b, concat);
    let rank = ty.shape.len();
    let (mut low, mut interiors) = (vec![0; rank], vec![0; rank]);
    low[dim] = edge;
    interiors[dim] = interior;
    let n = ty.shape[dim];
    let dilated = n.saturating_sub(1).saturating_mul(interior.saturating_add(1)).saturating_add(1);
    ty.shape[dim] = dilated.saturating_add(edge.saturating_mul(2));
    b.pad(concat, cx.pad_value, [&low, &low, &interiors], &ty, Some(cx.local))
}

/// `exchangeDimWithDynamicOffset` (dilated buffer, stride 1): the device's window of
/// dimension `dim` after the exchange.
#[allow(clippy::too_many_arguments)]
fn exchange_dim(
    b: &mut Builder,
    st: &mut HaloState,
    cx: &DimCx,
    input: ValueId,
    dim: usize,
    e: &DimEx,
    pad_low: i64,
    dilation: i64,
) -> ValueId {
    let edge = e.footprint.saturating_mul(dilation);
    let buffer = assemble_buffer(b, st, cx, input, dim, e, edge, dilation - 1);
    let pid = device_id(b, st);
    let s_in = ty_of(b, input).shape[dim];
    let s_in_dilated = s_in.saturating_mul(dilation);
    let s_out = if e.s_out == 0 { e.footprint } else { e.s_out };
    let diff = s_out.saturating_sub(s_in_dilated);
    let base = pad_low
        .saturating_neg()
        .saturating_add(e.left.saturating_mul(s_in_dilated))
        .saturating_add(e.footprint.saturating_mul(dilation));
    let axes = e.target.clone().unwrap_or_else(|| cx.s.dims[dim].axes.clone());
    let id = id_in_group(b, pid, cx.mesh, &axes);
    let (offset, zero) = if e.target.is_some() {
        // A reshape: a table of the offsets, by shard.
        let offsets: Vec<i64> = e
            .exchanges
            .iter()
            .enumerate()
            .map(|(t, &(source, local))| {
                let t = t as i64;
                let source = if source != -1 { source } else { t };
                let hop = e.left.saturating_add(source).saturating_sub(t);
                pad_low
                    .saturating_neg()
                    .saturating_add(e.footprint)
                    .saturating_add(hop.saturating_mul(s_in))
                    .saturating_add(local)
            })
            .collect();
        let table = const_i64s(b, &offsets);
        let one = TensorTy { shape: vec![1], elem: "i64".into() };
        let s = dynamic_slice(b, table, vec![id], &one, None);
        let offset = b.op("stablehlo.reshape", vec![s], Vec::new(), &TensorTy::scalar("i64"), None);
        (offset, const_i64(b, 0))
    } else {
        // `getDeviceOffsetInfo`: max(id * diff + base, 0).
        let d = const_i64(b, diff);
        let c = const_i64(b, base);
        let mul = arith(b, "stablehlo.multiply", id, d);
        let add = arith(b, "stablehlo.add", mul, c);
        let zero = const_i64(b, 0);
        (arith(b, "stablehlo.maximum", add, zero), zero)
    };
    let mut ty = ty_of(b, buffer);
    ty.shape[dim] = e.footprint;
    let mut offsets = vec![zero; ty.shape.len()];
    offsets[dim] = offset;
    dynamic_slice(b, buffer, offsets, &ty, Some(cx.local))
}

/// What an op's exchange is made of.
pub struct Exchange<'a> {
    pub input: ValueId,
    pub in_s: &'a TensorSharding,
    pub out_s: &'a TensorSharding,
    pub out_shape: &'a [i64],
    pub mesh: &'a Mesh,
    pub info: &'a DataEx,
    pub pad_value: ValueId,
    pub pad_low: &'a [i64],
    pub dilations: &'a [i64],
}

/// `haloDataExchange`: the manual computation that exchanges the sharded dimensions
/// of `x.input` (already divisible), then runs `post` on the local result (given the
/// local padding value and the padded global result shape).
fn halo_data_exchange(
    b: &mut Builder,
    st: &mut HaloState,
    x: &Exchange,
    post: impl FnOnce(&mut Builder, ValueId, ValueId, &[i64]) -> ValueId,
) -> ValueId {
    let info = x.info;
    let in_ty = ty_of(b, x.input);
    let local_shape: Vec<i64> = x
        .in_s
        .dims
        .iter()
        .enumerate()
        .map(|(d, ds)| {
            let k = manual_shards(&ds.axes, x.mesh, &info.manual).max(1);
            info.divisible.get(d).copied().unwrap_or(0) / k
        })
        .collect();
    let global: Vec<i64> = x
        .out_shape
        .iter()
        .enumerate()
        .map(|(d, &n)| padded(n, dim_shards(x.out_s, d, x.mesh)))
        .collect();
    let pad_ty = ty_of(b, x.pad_value);
    let replicated = TensorSharding {
        mesh: x.in_s.mesh.clone(),
        dims: Vec::new(),
        replicated: Vec::new(),
        unreduced: Vec::new(),
        reduction: Reduction::Sum,
    };
    let local = without_axes(x.in_s, &info.manual);
    let arg_types = [in_ty.with_shape(local_shape), pad_ty];
    let result_ty = in_ty.with_shape(global.clone());
    manual_computation(
        b,
        vec![x.input, x.pad_value],
        vec![x.in_s.clone(), replicated],
        x.out_s,
        manual_axes_attr(x.mesh, &info.manual),
        &arg_types,
        &result_ty,
        |b, args| {
            let (mut v, pad_value) = (args[0], args[1]);
            let cx =
                DimCx { s: x.in_s, mesh: x.mesh, manual: &info.manual, local: &local, pad_value };
            let mut k = 0;
            for d in 0..x.in_s.dims.len() {
                if dim_shards(x.in_s, d, x.mesh) <= 1 {
                    continue;
                }
                let Some(e) = info.dims.get(k) else { break };
                k += 1;
                if !e.needs_comm {
                    continue;
                }
                let low = x.pad_low.get(d).copied().unwrap_or(0);
                let dilation = x.dilations.get(d).copied().unwrap_or(1).max(1);
                v = exchange_dim(b, st, &cx, v, d, e, low, dilation);
            }
            post(b, v, pad_value, &global)
        },
    )
}

// ----------------------------------------------------------------------------------
// The ops.
// ----------------------------------------------------------------------------------

/// What the exchange made of an op.
pub enum Outcome {
    /// No device needs another's data: the op stays.
    Keep,
    /// Halo exchange cannot be used: the op is replicated.
    Replicate,
    /// The op's result is now this value (the ops are in the builder).
    Replaced(ValueId),
}

/// A pad or slice as the exchange sees it.
pub struct Windowed<'a> {
    pub input: ValueId,
    pub in_ty: &'a TensorTy,
    pub out_ty: &'a TensorTy,
    pub in_s: &'a TensorSharding,
    pub mesh: &'a Mesh,
}

impl Windowed<'_> {
    /// The exchange of the input, or what becomes of the op without one: kept when no
    /// device needs another's data, replicated when the exchange cannot be built.
    fn plan(&self, per_dim: impl FnMut(usize, i64, i64) -> DimEx) -> Result<DataEx, Outcome> {
        let info = data_exchange(self.in_s, self.mesh, &self.in_ty.shape, per_dim)
            .ok_or(Outcome::Replicate)?;
        if info.manual.is_empty() || !info.needs_comm() {
            return Err(Outcome::Keep);
        }
        if !info.usable() {
            return Err(Outcome::Replicate);
        }
        Ok(info)
    }
}

/// `handlePadOp`: `pad_value` and `[low, high, interior]` are the pad's.
pub fn pad(
    b: &mut Builder,
    st: &mut HaloState,
    w: &Windowed,
    pad_value: ValueId,
    [low, high, interior]: [&[i64]; 3],
) -> Outcome {
    let rank = w.in_ty.shape.len();
    if [low.len(), high.len(), interior.len(), w.out_ty.shape.len()].iter().any(|&n| n != rank) {
        return Outcome::Keep;
    }
    let info = match w.plan(|d, s_in, k| {
        let s_out = ceil_div(w.out_ty.shape[d], k);
        let dilation = interior[d].saturating_add(1);
        dim_exchange(k, s_in, s_out, s_out, low[d], 1, dilation, w.in_ty.shape[d])
    }) {
        Ok(info) => info,
        Err(outcome) => return outcome,
    };
    let input = pad_high(b, w.input, &info.divisible, w.in_s, Some(pad_value));
    let dilations: Vec<i64> = interior.iter().map(|i| i.saturating_add(1)).collect();
    let x = Exchange {
        input,
        in_s: w.in_s,
        out_s: w.in_s,
        out_shape: &w.out_ty.shape,
        mesh: w.mesh,
        info: &info,
        pad_value,
        pad_low: low,
        dilations: &dilations,
    };
    let r = halo_data_exchange(b, st, &x, |b, v, pad_value, global| {
        // `handleReplicatedPadDims`: the unsharded dimensions are padded locally.
        let local = without_axes(w.in_s, &info.manual);
        let mut shape = vec![0; rank];
        let (mut l, mut h, mut i) = (vec![0; rank], vec![0; rank], vec![0; rank]);
        let mut needed = false;
        for d in 0..rank {
            let k = manual_shards(&w.in_s.dims[d].axes, w.mesh, &info.manual).max(1);
            shape[d] = global[d] / k;
            if dim_shards(w.in_s, d, w.mesh) > 1 {
                continue;
            }
            (l[d], h[d], i[d]) = (low[d], high[d], interior[d]);
            needed |= low[d] != 0 || high[d] != 0 || interior[d] != 0;
        }
        if !needed {
            return v;
        }
        let ty = ty_of(b, v).with_shape(shape);
        b.pad(v, pad_value, [&l, &h, &i], &ty, Some(&local))
    });
    Outcome::Replaced(slice_high(b, r, &w.out_ty.shape, w.in_s))
}

/// `handleSliceOp`: `bounds` are the slice's `(start, limit, stride)`.
pub fn slice(
    b: &mut Builder,
    st: &mut HaloState,
    w: &Windowed,
    bounds: &[(i64, i64, i64)],
) -> Outcome {
    let rank = w.in_ty.shape.len();
    if bounds.len() != rank || w.out_ty.shape.len() != rank {
        return Outcome::Keep;
    }
    let info = match w.plan(|d, s_in, k| {
        let s_out = ceil_div(w.out_ty.shape[d], k);
        let low = bounds[d].0.saturating_neg();
        dim_exchange(k, s_in, s_out, s_out, low, 1, 1, w.in_ty.shape[d])
    }) {
        Ok(info) => info,
        Err(outcome) => return outcome,
    };
    let input = pad_high(b, w.input, &info.divisible, w.in_s, None);
    let pad_value = b.scalar(&w.in_ty.elem, false);
    let low: Vec<i64> = bounds.iter().map(|b| b.0.saturating_neg()).collect();
    let x = Exchange {
        input,
        in_s: w.in_s,
        out_s: w.in_s,
        out_shape: &w.out_ty.shape,
        mesh: w.mesh,
        info: &info,
        pad_value,
        pad_low: &low,
        dilations: &[],
    };
    let r = halo_data_exchange(b, st, &x, |b, v, _, _| {
        // `handleReplicatedSliceDims`: the unsharded dimensions are sliced locally.
        let ty = ty_of(b, v);
        let mut local_bounds: Vec<(i64, i64, i64)> = ty.shape.iter().map(|&n| (0, n, 1)).collect();
        let mut needed = false;
        for (d, lb) in local_bounds.iter_mut().enumerate() {
            if dim_shards(w.in_s, d, w.mesh) > 1 {
                continue;
            }
            let (start, limit, _) = bounds[d];
            if start != 0 || limit != ty.shape[d] {
                *lb = (start, limit, 1);
                needed = true;
            }
        }
        if !needed {
            return v;
        }
        let shape: Vec<i64> = local_bounds.iter().map(|&(s, l, _)| l.saturating_sub(s)).collect();
        let local = without_axes(w.in_s, &info.manual);
        b.slice(v, &local_bounds, &ty.with_shape(shape), Some(&local))
    });
    Outcome::Replaced(slice_high(b, r, &w.out_ty.shape, w.in_s))
}

#[allow(clippy::too_many_arguments)]
/// `rightShiftData`: moves the elements of `dim` `shift` places to the right across
/// the devices of its manual axes.
fn right_shift(
    b: &mut Builder,
    st: &mut HaloState,
    input: ValueId,
    dim: usize,
    shift: i64,
    s: &TensorSharding,
    mesh: &Mesh,
    manual: &[String],
) -> ValueId {
    let ty = ty_of(b, input);
    let shard = ty.shape[dim];
    let local = without_axes(s, manual);
    let axes: Vec<AxisRef> =
        s.dims[dim].axes.iter().filter(|a| manual.iter().any(|n| *n == *a.name)).cloned().collect();
    let (hops, fraction) = if shard > 0 { (shift / shard, shift % shard) } else { (0, 0) };
    let permute = |b: &mut Builder, st: &mut HaloState, offset: i64| {
        if offset == 0 {
            return input;
        }
        let pairs = shift_pairs(mesh, &axes, offset);
        if pairs.is_empty() {
            let zero = b.scalar(&ty.elem, false);
            let props = vec![NamedAttr::new("broadcast_dimensions", i64_array(&[]))];
            return b.op("stablehlo.broadcast_in_dim", vec![zero], props, &ty, Some(&local));
        }
        collective_permute(b, st, input, &pairs, Some(&local))
    };
    let head = permute(b, st, hops);
    let tail = permute(b, st, hops.saturating_add(1));
    let head_size = shard - fraction;
    let rank = ty.shape.len();
    let mut tail_bounds: Vec<(i64, i64, i64)> = ty.shape.iter().map(|&n| (0, n, 1)).collect();
    tail_bounds[dim].0 = head_size;
    let mut tail_ty = ty.clone();
    tail_ty.shape[dim] = fraction;
    let tail = b.slice(tail, &tail_bounds, &tail_ty, Some(&local));
    let mut head_bounds: Vec<(i64, i64, i64)> = ty.shape.iter().map(|&n| (0, n, 1)).collect();
    head_bounds[dim].1 = head_size;
    let mut head_ty = ty.clone();
    head_ty.shape[dim] = head_size;
    let head = b.slice(head, &head_bounds, &head_ty, Some(&local));
    debug_assert_eq!(head_bounds.len(), rank);
    concatenate(b, vec![tail, head], dim, &local)
}

/// A reverse as the exchange sees it.
pub struct Reverse<'a> {
    pub op: &'a Op,
    pub input: ValueId,
    pub in_ty: &'a TensorTy,
    pub in_s: &'a TensorSharding,
    pub out_s: &'a TensorSharding,
    pub mesh: &'a Mesh,
    pub dims: &'a [i64],
}

/// `handleReverseOp`: the reverse runs on a mesh whose reversed axes go the other way
/// (so each device keeps its shard), padded dimensions shifted first so that the
/// padding ends up at the low end, then a reshard back to the result's mesh.
pub fn reverse(b: &mut Builder, st: &mut HaloState, r: &Reverse) -> Outcome {
    let shape = &r.in_ty.shape;
    if r.in_s.dims.len() != shape.len() || total_devices(r.mesh) > MAX_DEVICES {
        return Outcome::Replicate;
    }
    let (mut reversed_axes, mut manual) = (Vec::new(), Vec::<String>::new());
    let mut padded_shape = shape.clone();
    for (d, ds) in r.in_s.dims.iter().enumerate() {
        let k = axes_size(&ds.axes, r.mesh);
        if !r.dims.contains(&(d as i64)) || k <= 1 {
            continue;
        }
        reversed_axes.extend(ds.axes.iter().cloned());
        if shape[d] % k != 0 {
            for a in &ds.axes {
                if !manual.iter().any(|n| *n == *a.name) {
                    manual.push(a.name.to_string());
                }
            }
            padded_shape[d] = padded(shape[d], k);
        }
    }
    if reversed_axes.is_empty() {
        return Outcome::Keep;
    }
    let mut input = r.input;
    if !manual.is_empty() {
        input = pad_high(b, input, &padded_shape, r.in_s, None);
        let local_shape: Vec<i64> = r
            .in_s
            .dims
            .iter()
            .enumerate()
            .map(|(d, ds)| padded_shape[d] / manual_shards(&ds.axes, r.mesh, &manual).max(1))
            .collect();
        let ty = r.in_ty.with_shape(padded_shape.clone());
        let manual_attr = manual_axes_attr(r.mesh, &manual);
        input = manual_computation(
            b,
            vec![input],
            vec![r.in_s.clone()],
            r.in_s,
            manual_attr,
            &[r.in_ty.with_shape(local_shape)],
            &ty,
            |b, args| {
                let mut v = args[0];
                for d in 0..shape.len() {
                    let padding = padded_shape[d] - shape[d];
                    if r.dims.contains(&(d as i64)) && padding > 0 {
                        v = right_shift(b, st, v, d, padding, r.in_s, r.mesh, &manual);
                    }
                }
                v
            },
        );
    }
    let new_mesh = reversed_mesh(r.mesh, &reversed_axes);
    let mesh_ref = match &r.in_s.mesh {
        MeshRef::Symbol(name) => {
            MeshRef::Symbol(st.mesh_named(&new_mesh, &format!("{name}_reversed")))
        }
        MeshRef::Inline(_) => MeshRef::Inline(new_mesh),
    };
    let reversed = TensorSharding { mesh: mesh_ref, ..r.in_s.clone() };
    let ty = ty_of(b, input);
    let result = b.m.new_value(Some(ty.text()));
    let mut op = r.op.clone();
    op.origin = None;
    if let Some(o) = op.operands.first_mut() {
        *o = input;
    }
    op.results = vec![result];
    op.set_attr("sdy.sharding", Attr::PerValue(vec![reversed]));
    super::ops::retype(b.m, &mut op);
    b.ops.push(op);
    let props = vec![NamedAttr::new("sharding", Attr::Sharding(r.out_s.clone()))];
    let back = b.m.new_value(Some(ty.text()));
    b.ops.push(Op::pretty("sdy.reshard", vec![result], vec![back], props));
    if manual.is_empty() {
        return Outcome::Replaced(back);
    }
    Outcome::Replaced(slice_high(b, back, shape, r.in_s))
}

/// A reshape halo exchange (`handleReshapeHaloExchange`).
pub struct Reshape<'a> {
    pub input: ValueId,
    pub in_ty: &'a TensorTy,
    pub out_ty: &'a TensorTy,
    pub in_s: &'a TensorSharding,
    pub out_s: &'a TensorSharding,
    pub mesh: &'a Mesh,
    pub padded_in: &'a [i64],
    pub padded_out: &'a [i64],
    pub info: &'a DataEx,
}

/// `getDimExchangeInfoForReshapeGroup`: input dimension `dim` (of `k` shards) split
/// into the output dimensions `outs`.
pub fn reshape_dim_exchange(
    x: &Reshape,
    dim: usize,
    outs: std::ops::Range<usize>,
    k: i64,
) -> DimEx {
    let s_out = x.padded_in[dim] / k.max(1);
    let target: Vec<AxisRef> =
        outs.clone().flat_map(|d| x.out_s.dims[d].axes.iter().cloned()).collect();
    let out_dims: Vec<usize> = outs.collect();
    let mut strides = vec![1i64; out_dims.len()];
    let mut stride = 1i64;
    for i in (0..out_dims.len()).rev() {
        strides[i] = stride;
        stride = stride.saturating_mul(x.out_ty.shape[out_dims[i]]);
    }
    let size = x.in_ty.shape[dim];
    let tile = ceil_div(size, k);
    let start = |s: i64| s.saturating_mul(tile);
    let count = |s: i64| 0.max(tile.min(size.saturating_sub(s.saturating_mul(tile))));
    let mut e =
        DimEx { s_out, footprint: s_out, usable: true, target: Some(target), ..DimEx::default() };
    for t in 0..k {
        // `getLinearDataStartOffsetForShardIdx`.
        let (mut first, mut rest) = (0i64, t);
        for (i, &od) in out_dims.iter().enumerate().rev() {
            let n = dim_shards(x.out_s, od, x.mesh).max(1);
            let c = rest % n;
            rest /= n;
            let tile = ceil_div(x.out_ty.shape[od], n);
            first = first.saturating_add(c.saturating_mul(tile).saturating_mul(strides[i]));
        }
        let last_elem = first.saturating_add(s_out).saturating_sub(1);
        let (mut source, mut offset, mut last) = (-1, 0, -1);
        for s in 0..k {
            if count(s) <= 0 {
                continue;
            }
            let range = start(s)..start(s).saturating_add(count(s));
            if range.contains(&first) {
                source = s;
                offset = first - start(s);
            }
            if range.contains(&last_elem) {
                last = s;
            }
        }
        if (source != -1 && source != t) || (last != -1 && last != t) {
            e.needs_comm = true;
        }
        e.record(t, source, offset, last);
    }
    if e.left > 1 || e.right > 1 {
        e.usable = false;
    }
    e
}

/// `handleReshapeHaloExchange` once the exchange is known usable.
pub fn reshape(b: &mut Builder, st: &mut HaloState, x: &Reshape) -> ValueId {
    let pad_value = b.scalar(&x.out_ty.elem, false);
    let low = vec![0; x.in_ty.shape.len()];
    let input = pad_high(b, x.input, x.padded_in, x.in_s, None);
    let ex = Exchange {
        input,
        in_s: x.in_s,
        out_s: x.out_s,
        out_shape: &x.out_ty.shape,
        mesh: x.mesh,
        info: x.info,
        pad_value,
        pad_low: &low,
        dilations: &[],
    };
    let r = halo_data_exchange(b, st, &ex, |b, v, _, _| {
        let shape: Vec<i64> = x
            .out_s
            .dims
            .iter()
            .enumerate()
            .map(|(d, ds)| {
                let n = x.padded_out.get(d).copied().unwrap_or(0);
                n / manual_shards(&ds.axes, x.mesh, &x.info.manual).max(1)
            })
            .collect();
        let local = without_axes(x.out_s, &x.info.manual);
        let ty = x.out_ty.with_shape(shape);
        b.op("stablehlo.reshape", vec![v], Vec::new(), &ty, Some(&local))
    });
    slice_high(b, r, &x.out_ty.shape, x.out_s)
}

/// The reshape's [`DataEx`] (`getReshapeDataExchangeInfo`): `active` are the input
/// dimension and output range of each group exchanged, in order.
pub fn reshape_data_exchange(
    x: &Reshape,
    manual: Vec<String>,
    active: &[(usize, std::ops::Range<usize>)],
) -> Option<DataEx> {
    if total_devices(x.mesh) > MAX_DEVICES {
        return None;
    }
    let mut info = DataEx { divisible: x.padded_in.to_vec(), manual, dims: Vec::new() };
    let mut next = active.iter().peekable();
    for d in 0..x.in_ty.shape.len() {
        let k = dim_shards(x.in_s, d, x.mesh);
        if k <= 1 {
            continue;
        }
        match next.peek() {
            Some((dim, outs)) if *dim == d => {
                info.dims.push(reshape_dim_exchange(x, d, outs.clone(), k));
                next.next();
            }
            _ => {
                let s = x.padded_in[d] / k;
                info.dims.push(DimEx { s_out: s, footprint: s, usable: true, ..DimEx::default() });
            }
        }
    }
    Some(info)
}

/// A sharding on `@mesh` with these axes per dimension (for tests).
#[cfg(test)]
fn sharding(mesh: &str, dims: &[&[&str]]) -> TensorSharding {
    TensorSharding {
        dims: dims
            .iter()
            .map(|d| crate::sharding::DimSharding {
                axes: d.iter().map(|a| AxisRef::full(*a)).collect(),
                open: false,
                priority: None,
            })
            .collect(),
        ..TensorSharding::replicated(mesh, 0, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(axes: &[(&str, i64)]) -> Mesh {
        Mesh {
            axes: axes.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            device_ids: Vec::new(),
        }
    }

    #[test]
    fn exchanges_of_shifted_windows() {
        // A pad of 4 on both sides of 8 over 2 shards: each shard keeps its own data.
        let e = dim_exchange(2, 4, 8, 8, 4, 1, 1, 8);
        assert!(!e.needs_comm && e.usable);
        // A slice starting at 1 of 8 over 4 shards reads one neighbour to the right.
        let e = dim_exchange(4, 2, 2, 2, -1, 1, 1, 8);
        assert!(e.needs_comm && e.usable && e.right == 1 && e.left == 0);
        // A slice of the last element over 4 shards: three hops.
        let e = dim_exchange(4, 2, 1, 1, -7, 1, 1, 8);
        assert!(e.needs_comm && !e.usable);
    }

    #[test]
    fn pairs_follow_sub_axes_and_device_ids() {
        let m = mesh(&[("a", 2), ("b", 2)]);
        assert_eq!(shift_pairs(&m, &[AxisRef::full("a")], -1), [(2, 0), (3, 1)]);
        assert_eq!(shift_pairs(&m, &[AxisRef::full("b")], 1), [(0, 1), (2, 3)]);
        let mut m4 = mesh(&[("a", 4)]);
        let sub = AxisRef { name: "a".into(), sub: Some((2, 2)) };
        assert_eq!(shift_pairs(&m4, std::slice::from_ref(&sub), 1), [(0, 1), (2, 3)]);
        m4.device_ids = vec![3, 2, 1, 0];
        assert_eq!(shift_pairs(&m4, &[sub], 1), [(3, 2), (1, 0)]);
        assert_eq!(shard_index(3, &m4, &[AxisRef::full("a")]), 0);
    }

    #[test]
    fn reversing_an_axis_reverses_its_devices() {
        let m = mesh(&[("a", 2), ("b", 2)]);
        assert_eq!(reversed_mesh(&m, &[AxisRef::full("a")]).device_ids, [2, 3, 0, 1]);
        let s = sharding("m", &[&["a"], &[]]);
        assert_eq!(dim_shards(&s, 0, &m), 2);
    }

    #[test]
    fn splat_and_nested_dense() {
        assert_eq!(dense(&[2, 2], &[2]), "dense<2> : tensor<2xi64>");
        assert_eq!(dense(&[1, 0, 3, 2], &[2, 2]), "dense<[[1, 0], [3, 2]]> : tensor<2x2xi64>");
        assert_eq!(channel_handle("#stablehlo.channel_handle<handle = 7, type = 1>"), Some(7));
    }
}
