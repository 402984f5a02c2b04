//! Collectives as plain data: for each `sdy` collective op, and for each `sdy.reshard`
//! (as the collectives `-sdy-reshard-to-collectives` would make of it), which axes
//! it gathers, slices, exchanges, reduces or permutes on which dimension, over which
//! groups of devices, the per-device shapes before and after, and the bytes each device
//! sends and receives. A cost view reads only this; nothing here knows LSP or I/O.
//!
//! Bytes per device, with `B` the local (per-device) size of the operand in bytes and
//! `G` the number of devices in a group (the product of the collective's axis sizes):
//!
//! * all-gather: sends its shard to the `G - 1` others and receives theirs:
//!   sent = received = `(G - 1) · B`;
//! * all-slice: each device keeps a slice of what it has: no communication;
//! * all-to-all: keeps `1/G` of its data and exchanges the rest:
//!   sent = received = `(G - 1) / G · B`;
//! * collective-permute: a device whose shard moves sends all of it to one device:
//!   sent = received = `B` for a device that takes part, 0 otherwise (the figures are
//!   the maximum over devices);
//! * reduce-scatter: sent = received = `(G - 1) / G · B` (each device ends with the
//!   reduced `1/G` it owns);
//! * all-reduce: a reduce-scatter then an all-gather of the result:
//!   sent = received = `2 · (G - 1) / G · B`.
//!
//! Device groups are those XLA uses as replica groups: the devices that differ only in
//! their coordinates along the collective's axes, each group ordered by those axes as
//! listed (major first), groups ordered by the remaining coordinates; device ids come
//! from the mesh's `device_ids` (iota when absent).

use crate::ir::{Attr, Module};
use crate::propagation::editor::reshards::{elem_bytes, local_shape, tensor_shape};
use crate::propagation::graph::{replicated_sharding, sharding_of_ref, Graph, OpIdx};
use crate::sharding::axis::{mesh_axis_size, pre_size, size};
use crate::sharding::{AxisRef, Mesh, TensorSharding};

/// The kind of a collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    AllGather,
    AllSlice,
    AllToAll,
    CollectivePermute,
    AllReduce,
    ReduceScatter,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::AllGather,
        Kind::AllSlice,
        Kind::AllToAll,
        Kind::CollectivePermute,
        Kind::AllReduce,
        Kind::ReduceScatter,
    ];

    /// The kind of an sdy collective op (`sdy.all_gather`), or of a StableHLO one a
    /// user wrote (`stablehlo.all_gather`, inside a manual computation).
    pub fn of_op(name: &str) -> Option<Kind> {
        let short = name.strip_prefix("sdy.").or_else(|| name.strip_prefix("stablehlo."))?;
        Kind::ALL.into_iter().find(|k| k.op_name().strip_prefix("sdy.") == Some(short))
    }

    /// The name used in reports and XLA's HLO (`all-gather`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::AllGather => "all-gather",
            Kind::AllSlice => "all-slice",
            Kind::AllToAll => "all-to-all",
            Kind::CollectivePermute => "collective-permute",
            Kind::AllReduce => "all-reduce",
            Kind::ReduceScatter => "reduce-scatter",
        }
    }

    pub fn op_name(self) -> &'static str {
        match self {
            Kind::AllGather => "sdy.all_gather",
            Kind::AllSlice => "sdy.all_slice",
            Kind::AllToAll => "sdy.all_to_all",
            Kind::CollectivePermute => "sdy.collective_permute",
            Kind::AllReduce => "sdy.all_reduce",
            Kind::ReduceScatter => "sdy.reduce_scatter",
        }
    }
}

/// Axes a collective works on along one tensor dimension (`dim` is `None` for the
/// reduction axes of an all-reduce, which are not tied to a dimension).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimAxes {
    pub dim: Option<usize>,
    pub axes: Vec<AxisRef>,
}

/// One collective, described.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collective {
    pub kind: Kind,
    /// Gathered, sliced, reduced or reduce-scattered axes per dimension (non-empty
    /// lists only); for an all-to-all, the exchanged axes at the source dimension.
    pub axes: Vec<DimAxes>,
    /// An all-to-all's target dimension.
    pub target_dim: Option<usize>,
    /// Device groups (device ids) that communicate together; for a collective
    /// permute, the (source, target) pairs instead (see [`Collective::pairs`]).
    pub groups: Vec<Vec<i64>>,
    /// A collective permute's transfers, (source, target) device ids.
    pub pairs: Vec<(i64, i64)>,
    /// Per-device shapes before and after (`None` for dynamic or unknown types).
    pub local_before: Option<Vec<i64>>,
    pub local_after: Option<Vec<i64>>,
    /// Bytes one device sends and receives (see the module doc for the formulas).
    pub bytes_sent: Option<i64>,
    pub bytes_received: Option<i64>,
}

/// A device's coordinate along `axis` (a full axis or a sub-axis), from its position
/// `logical` in the mesh (row-major over the mesh axes).
fn coordinate(mesh: &Mesh, logical: i64, axis: &AxisRef) -> i64 {
    let mut stride = 1;
    let mut found = false;
    for (name, s) in mesh.axes.iter().rev() {
        if *name == *axis.name {
            found = true;
            break;
        }
        stride *= s;
    }
    if !found {
        return 0;
    }
    let full = mesh_axis_size(mesh, &axis.name);
    let c = (logical / stride) % full.max(1);
    let s = size(axis, mesh).max(1);
    let minor = full / (pre_size(axis) * s).max(1);
    (c / minor.max(1)) % s
}

fn device_count(mesh: &Mesh) -> i64 {
    mesh.axes.iter().map(|a| a.1).product::<i64>().max(1)
}

fn device_id(mesh: &Mesh, logical: i64) -> i64 {
    mesh.device_ids.get(logical as usize).copied().unwrap_or(logical)
}

/// The linear index of a device along `axes` (major first).
fn linear(mesh: &Mesh, logical: i64, axes: &[AxisRef]) -> i64 {
    axes.iter().fold(0, |acc, a| acc * size(a, mesh) + coordinate(mesh, logical, a))
}

/// A device's coordinates along every mesh axis with the parts `axes` cover taken
/// out: devices with equal keys differ only along `axes`.
fn rest_key(mesh: &Mesh, logical: i64, axes: &[AxisRef]) -> Vec<i64> {
    mesh.axes
        .iter()
        .map(|(name, full)| {
            let mut c = coordinate(mesh, logical, &AxisRef::full(name.as_str()));
            for a in axes.iter().filter(|a| *a.name == **name) {
                let s = size(a, mesh).max(1);
                let minor = (full / (pre_size(a) * s).max(1)).max(1);
                c -= ((c / minor) % s) * minor;
            }
            c
        })
        .collect()
}

/// The device groups of a collective over `axes` on `mesh`.
pub fn device_groups(mesh: &Mesh, axes: &[AxisRef]) -> Vec<Vec<i64>> {
    let n = device_count(mesh);
    // (the other coordinates, [(index along the axes, device id)])
    type Group = (Vec<i64>, Vec<(i64, i64)>);
    let mut groups: Vec<Group> = Vec::new();
    for logical in 0..n {
        let key = rest_key(mesh, logical, axes);
        let member = (linear(mesh, logical, axes), device_id(mesh, logical));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(member),
            None => groups.push((key, vec![member])),
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups
        .into_iter()
        .map(|(_, mut g)| {
            g.sort();
            g.into_iter().map(|(_, d)| d).collect()
        })
        .collect()
}

/// Which shard of a tensor sharded by `s` device `logical` holds, per dimension.
fn shard_of(mesh: &Mesh, logical: i64, s: &TensorSharding) -> Vec<i64> {
    s.dims.iter().map(|d| linear(mesh, logical, &d.axes)).collect()
}

/// A collective permute's transfers from `from` to `to`: each device whose shard
/// changes takes it from the first device that holds it.
pub fn permute_pairs(mesh: &Mesh, from: &TensorSharding, to: &TensorSharding) -> Vec<(i64, i64)> {
    let n = device_count(mesh);
    let held: Vec<Vec<i64>> = (0..n).map(|d| shard_of(mesh, d, from)).collect();
    let mut pairs = Vec::new();
    for t in 0..n {
        let want = shard_of(mesh, t, to);
        if held[t as usize] == want {
            continue;
        }
        if let Some(s) = held.iter().position(|h| *h == want) {
            pairs.push((device_id(mesh, s as i64), device_id(mesh, t)));
        }
    }
    pairs
}

/// The input of [`describe`]: one collective op, read from the IR or planned.
#[derive(Clone, Debug)]
pub struct CollectiveOp<'a> {
    pub kind: Kind,
    /// Per-dimension axes (all-gather, all-slice, reduce-scatter); for an all-reduce a
    /// single list (its reduction axes); for an all-to-all the exchanged axes.
    pub axes: Vec<Vec<AxisRef>>,
    /// An all-to-all's (source, target) dimensions.
    pub all_to_all_dims: Option<(usize, usize)>,
    /// The operand's sharding and the op's `out_sharding`.
    pub input: &'a TensorSharding,
    pub output: &'a TensorSharding,
    /// The tensor type (`tensor<8x16xf32>`).
    pub ty: &'a str,
}

/// Describes one collective on `mesh`.
pub fn describe(op: &CollectiveOp<'_>, mesh: &Mesh) -> Collective {
    let (dims, elem) = match tensor_shape(op.ty) {
        Some((d, e)) => (Some(d), e),
        None => (None, ""),
    };
    let before = dims.as_ref().and_then(|d| local_shape(d, op.input, mesh));
    let after = dims.as_ref().and_then(|d| local_shape(d, op.output, mesh));
    let local_bytes =
        before.as_ref().and_then(|b| Some(b.iter().product::<i64>() * elem_bytes(elem)?));
    let all_axes: Vec<AxisRef> = op.axes.iter().flatten().cloned().collect();
    let g = all_axes.iter().map(|a| size(a, mesh)).product::<i64>().max(1);
    let axes = match op.kind {
        Kind::AllReduce => vec![DimAxes { dim: None, axes: all_axes.clone() }],
        Kind::AllToAll => {
            vec![DimAxes { dim: op.all_to_all_dims.map(|d| d.0), axes: all_axes.clone() }]
        }
        _ => op
            .axes
            .iter()
            .enumerate()
            .filter(|(_, a)| !a.is_empty())
            .map(|(d, a)| DimAxes { dim: Some(d), axes: a.clone() })
            .collect(),
    };
    let (groups, pairs) = match op.kind {
        Kind::CollectivePermute => (Vec::new(), permute_pairs(mesh, op.input, op.output)),
        _ => (device_groups(mesh, &all_axes), Vec::new()),
    };
    let bytes = local_bytes.map(|b| bytes_moved(op.kind, g, b, !pairs.is_empty()));
    Collective {
        kind: op.kind,
        axes,
        target_dim: op.all_to_all_dims.map(|d| d.1),
        groups,
        pairs,
        local_before: before,
        local_after: after,
        bytes_sent: bytes,
        bytes_received: bytes,
    }
}

/// Bytes one device sends (= receives) in a collective of `kind` over groups of `g`
/// devices, `b` its local operand bytes; `moves`: a collective permute transfers data
/// (see the module doc).
pub fn bytes_moved(kind: Kind, g: i64, b: i64, moves: bool) -> i64 {
    match kind {
        Kind::AllGather => (g - 1) * b,
        Kind::AllSlice => 0,
        Kind::AllToAll | Kind::ReduceScatter => (g - 1) * b / g,
        Kind::AllReduce => 2 * (g - 1) * b / g,
        Kind::CollectivePermute if moves => b,
        Kind::CollectivePermute => 0,
    }
}

/// The collectives a `sdy.reshard` of a tensor of type `ty` from `from` to `to` turns
/// into (what `-sdy-reshard-to-collectives` inserts), described.
pub fn describe_reshard(
    from: &TensorSharding,
    to: &TensorSharding,
    ty: &str,
    mesh: &Mesh,
) -> Vec<Collective> {
    use crate::export::reshard_to_collectives::inserter::{plan, Step};
    let shape = tensor_shape(ty).map(|(d, _)| d).unwrap_or_default();
    let mut input = from.clone();
    let mut out = Vec::new();
    for step in plan(from, to, &shape, mesh) {
        let (kind, axes, dims) = match &step.step {
            Step::AllGather(a) => (Kind::AllGather, a.clone(), None),
            Step::AllSlice(a) => (Kind::AllSlice, a.clone(), None),
            Step::AllToAll(p) => (
                Kind::AllToAll,
                vec![p.axes.clone()],
                Some((p.src_dim.max(0) as usize, p.tgt_dim.max(0) as usize)),
            ),
            Step::Permute => (Kind::CollectivePermute, Vec::new(), None),
        };
        let op = CollectiveOp {
            kind,
            axes,
            all_to_all_dims: dims,
            input: &input,
            output: &step.out,
            ty,
        };
        out.push(describe(&op, mesh));
        input = step.out;
    }
    out
}

/// Describes the sdy collective op `i` of `g` (an index of `m`): its axes from its
/// properties, its input sharding from its operand, its `out_sharding`. `None` for other
/// ops and for collectives whose sharding or mesh cannot be read.
pub fn describe_ir(m: &Module, g: &Graph, i: OpIdx) -> Option<Collective> {
    let node = g.node(i);
    if !node.name.starts_with("sdy.") {
        return None;
    }
    let kind = Kind::of_op(&node.name)?;
    let op = g.op(m, i);
    let &input_value = node.operands.first()?;
    let output = sharding_of_ref(op.prop("out_sharding"))?.clone();
    let mesh = g.mesh(&output.mesh)?;
    let input = g
        .sharding(m, input_value)
        .unwrap_or_else(|| replicated_sharding(&output.mesh, output.dims.len(), true));
    let lists = |name: &str| match op.prop(name) {
        Some(Attr::AxisLists(v)) => v.clone(),
        _ => Vec::new(),
    };
    let (axes, dims) = match kind {
        Kind::AllGather => (lists("gathering_axes"), None),
        Kind::AllSlice => (lists("slicing_axes"), None),
        Kind::ReduceScatter => (lists("reduce_scatter_axes"), None),
        Kind::AllReduce => match op.prop("reduction_axes") {
            Some(Attr::AxisList(v)) => (vec![v.clone()], None),
            _ => (Vec::new(), None),
        },
        Kind::AllToAll => match op.prop("params") {
            Some(Attr::AllToAll(ps)) => (
                ps.iter().map(|p| p.axes.clone()).collect(),
                ps.first().map(|p| (p.src_dim.max(0) as usize, p.tgt_dim.max(0) as usize)),
            ),
            _ => (Vec::new(), None),
        },
        Kind::CollectivePermute => (Vec::new(), None),
    };
    let ty = m.ty(input_value).unwrap_or("");
    let cop =
        CollectiveOp { kind, axes, all_to_all_dims: dims, input: &input, output: &output, ty };
    Some(describe(&cop, &mesh))
}

/// Describes a StableHLO collective a user wrote (in a manual computation, on local
/// shapes): the group size is read from its `replica_groups` (a collective permute's
/// transfers from `source_target_pairs`); axes are unknown.
pub fn describe_stablehlo(m: &Module, g: &Graph, i: OpIdx) -> Option<Collective> {
    let node = g.node(i);
    if !node.name.starts_with("stablehlo.") {
        return None;
    }
    let op = g.op(m, i);
    let mut text: String = op
        .props
        .iter()
        .chain(&op.attrs)
        .map(|p| format!("{} = {} ", p.name, crate::ir::attr::attr_to_string(&p.value)))
        .collect();
    if let crate::ir::Syntax::Custom(t) = &op.syntax {
        text.push_str(&t.joined_text());
    }
    let kind = Kind::of_op(&node.name)?;
    let &input = node.operands.first()?;
    let (dims, elem) = tensor_shape(m.ty(input)?)?;
    let b = dims.iter().product::<i64>() * elem_bytes(elem)?;
    // `replica_groups = dense<...> : tensor<GxNxi64>`: N devices per group.
    let group = text.split("replica_groups").nth(1).and_then(|t| {
        let t = &t[t.find("tensor<")? + 7..];
        let mut parts = t.split('x');
        parts.next()?;
        parts.next()?.parse::<i64>().ok()
    });
    let pairs = kind == Kind::CollectivePermute;
    let bytes = bytes_moved(kind, group.unwrap_or(1).max(1), b, true);
    Some(Collective {
        kind,
        axes: Vec::new(),
        target_dim: None,
        groups: Vec::new(),
        pairs: Vec::new(),
        local_before: Some(dims),
        local_after: None,
        bytes_sent: Some(if pairs || group.is_some() { bytes } else { 0 }),
        bytes_received: Some(if pairs || group.is_some() { bytes } else { 0 }),
    })
}

#[cfg(test)]
mod tests;
