//! The JAX `PartitionSpec` equivalent of a sharding, with what it cannot express.

use super::gspmd::{split_axes, AxisPart};
use crate::model::sharding::{AxisRef, Mesh, TensorSharding};
use sdy_syntax::sdy::Reduction;

/// A `PartitionSpec` and the parts of the sharding it leaves out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionSpec {
    /// `P(('data', 'fsdp'), None, 'tensor')`
    pub text: String,
    /// What the spec does not express (open dimensions with axes, priorities, ...).
    pub caveats: Vec<String>,
}

/// The `PartitionSpec` of `s`, or why it has none (sub-axes).
pub fn partition_spec(s: &TensorSharding) -> Result<PartitionSpec, String> {
    if let Some(a) =
        s.dims.iter().flat_map(|d| &d.axes).chain(&s.unreduced).find(|a| a.sub.is_some())
    {
        return Err(format!(
            "sub-axes such as `{}` have no `PartitionSpec` equivalent (a JAX mesh would need \
             the axis split into separate axes)",
            a
        ));
    }
    let mut parts: Vec<String> = Vec::new();
    let mut caveats = Vec::new();
    for (i, d) in s.dims.iter().enumerate() {
        parts.push(match (d.axes.as_slice(), !d.open) {
            ([], true) => "None".into(),
            ([], false) => "P.UNCONSTRAINED".into(),
            ([a], _) => py_str(&a.name),
            (axes, _) => {
                format!("({})", axes.iter().map(|a| py_str(&a.name)).collect::<Vec<_>>().join(", "))
            }
        });
        if d.open && !d.axes.is_empty() {
            caveats.push(format!(
                "dimension {i} is open: a `PartitionSpec` cannot keep a sharded dimension open \
                 for further sharding"
            ));
        }
    }
    if s.dims.iter().any(|d| d.priority.is_some()) {
        caveats.push("priorities have no `PartitionSpec` equivalent".into());
    }
    if !s.replicated.is_empty() {
        caveats.push(format!(
            "explicitly replicated axes ({}) are not part of a `PartitionSpec`",
            list(&s.replicated)
        ));
    }
    if !s.unreduced.is_empty() {
        let names: Vec<String> = s.unreduced.iter().map(|a| py_str(&a.name)).collect();
        parts.push(format!("unreduced={{{}}}", names.join(", ")));
        caveats.push("JAX allows unreduced axes only on `Explicit` mesh axes".into());
        if s.dims.iter().any(|d| d.open && d.axes.is_empty()) {
            caveats.push("`P.UNCONSTRAINED` also needs an `Auto` axis in the JAX mesh".into());
        }
        if s.reduction != Reduction::Sum {
            caveats.push(format!(
                "the `{}` reduction of the unreduced axes is not part of a `PartitionSpec`",
                s.reduction.as_str()
            ));
        }
    }
    Ok(PartitionSpec { text: format!("P({})", parts.join(", ")), caveats })
}

fn list(axes: &[AxisRef]) -> String {
    axes.iter().map(|a| format!("`{}`", a)).collect::<Vec<_>>().join(", ")
}

/// A Python string literal for an axis name.
fn py_str(name: &str) -> String {
    let mut out = String::from("'");
    for c in name.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A JAX mesh with each axis the sharding uses sub-axes of split into separate axes
/// (major to minor), and the `PartitionSpec` of the sharding on it: the same devices
/// hold the same shards, since `mesh.devices.reshape(...)` splits an axis of size `n`
/// into `m × k × n/(m·k)` exactly as `"x":(m)k` views it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitSpec {
    /// `Mesh(mesh.devices.reshape(2, 2, 2, 2), ('x_0', 'x_1', 'x_2', 'y'))`
    pub mesh: String,
    pub spec: PartitionSpec,
}

/// The split-mesh equivalent of a sharding with sub-axes (`None` without sub-axes, or
/// when the sub-axes do not split their axes consistently).
pub fn split_partition_spec(mesh: &Mesh, s: &TensorSharding) -> Option<SplitSpec> {
    if !s.all_axes().any(|a| a.sub.is_some()) {
        return None;
    }
    let parts = split_axes(mesh, || s.all_axes());
    let taken = |n: &str, names: &[String]| {
        mesh.axes.iter().any(|a| a.0 == n) || names.iter().any(|x| x == n)
    };
    // A name per part: the axis name for an unsplit axis, else `x_0`, `x_1`, ...
    let mut names: Vec<String> = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        let split = parts.iter().filter(|q| q.name == p.name).count() > 1;
        if !split {
            names.push(p.name.clone());
            continue;
        }
        let k = parts[..i].iter().filter(|q| q.name == p.name).count();
        let mut name = format!("{}_{k}", p.name);
        while taken(&name, &names) {
            name.push('_');
        }
        names.push(name);
    }
    let rename = |a: &AxisRef| -> Option<Vec<AxisRef>> {
        let full = mesh.axis(&a.name)?.1;
        let (lo, hi) = super::devices::axis_range(a, full);
        let covered: Vec<AxisRef> = parts
            .iter()
            .zip(&names)
            .filter(|(p, _)| p.name == a.name && lo <= p.lo && p.hi <= hi)
            .map(|(_, n)| AxisRef::full(n.as_str()))
            .collect();
        (!covered.is_empty()).then_some(covered)
    };
    let mut split = s.clone();
    for d in &mut split.dims {
        d.axes = d.axes.iter().map(rename).collect::<Option<Vec<_>>>()?.concat();
    }
    split.replicated = s.replicated.iter().map(rename).collect::<Option<Vec<_>>>()?.concat();
    split.unreduced = s.unreduced.iter().map(rename).collect::<Option<Vec<_>>>()?.concat();
    let sizes: Vec<String> = parts.iter().map(|p| AxisPart::size(p).to_string()).collect();
    let quoted: Vec<String> = names.iter().map(|n| py_str(n)).collect();
    let tuple = match quoted.as_slice() {
        [one] => format!("({one},)"),
        many => format!("({})", many.join(", ")),
    };
    let spec = partition_spec(&split).ok()?;
    Some(SplitSpec {
        mesh: format!("Mesh(mesh.devices.reshape({}), {tuple})", sizes.join(", ")),
        spec,
    })
}
