//! The JAX `PartitionSpec` equivalent of a sharding, with what it cannot express.

use crate::model::sharding::{AxisRef, TensorSharding};
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
            a.display()
        ));
    }
    let mut parts: Vec<String> = Vec::new();
    let mut caveats = Vec::new();
    for (i, d) in s.dims.iter().enumerate() {
        parts.push(match (d.axes.as_slice(), d.closed) {
            ([], true) => "None".into(),
            ([], false) => "P.UNCONSTRAINED".into(),
            ([a], _) => py_str(&a.name),
            (axes, _) => {
                format!("({})", axes.iter().map(|a| py_str(&a.name)).collect::<Vec<_>>().join(", "))
            }
        });
        if !d.closed && !d.axes.is_empty() {
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
        if s.dims.iter().any(|d| !d.closed && d.axes.is_empty()) {
            caveats.push("`P.UNCONSTRAINED` also needs an `Auto` axis in the JAX mesh".into());
        }
        if s.unreduced_op != Reduction::Sum {
            caveats.push(format!(
                "the `{}` reduction of the unreduced axes is not part of a `PartitionSpec`",
                s.unreduced_op.as_str()
            ));
        }
    }
    Ok(PartitionSpec { text: format!("P({})", parts.join(", ")), caveats })
}

fn list(axes: &[AxisRef]) -> String {
    axes.iter().map(|a| format!("`{}`", a.display())).collect::<Vec<_>>().join(", ")
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
