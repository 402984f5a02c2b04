//! "Explain this": what a sharding, mesh, axis, value or op under the cursor means, as
//! markdown text (for hovers and `sdy-lsp explain`) plus a few structured facts.
//!
//! Entry point: [`at`]. Pure: byte offsets in, plain data out.

mod axis;
pub(crate) mod devices;
pub(crate) mod gspmd;
pub(crate) mod jax;
pub(crate) mod layout;
pub mod locate;
mod mesh;
pub mod plain;
mod rule;
pub(crate) mod sharding;
pub(crate) mod site;
pub mod source;
mod tables;
#[cfg(test)]
mod tests;
mod value;
pub mod why;
pub mod why_not;

use crate::model::sharding::{Mesh, MeshRef, TensorSharding};
use crate::model::{Model, OpId, ValueId};
use sdy_syntax::tree::{Dim, Type, TypeKind};
use sdy_syntax::Span;

pub use locate::{Site, Target};
pub use value::value_sharding;

/// The explanation of what is under a position.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// What was hovered (absolute byte range).
    pub range: Span,
    /// The explanation, in markdown (tables, inline code, one fenced `mlir` block).
    pub markdown: String,
    /// What was explained, with the facts a client may want on its own.
    pub subject: Subject,
}

#[derive(Clone, Debug)]
pub enum Subject {
    Sharding(Box<ShardingFacts>),
    /// An axis or sub-axis (`"x":(2)2`) of a mesh.
    Axis {
        axis: String,
        mesh: Option<String>,
    },
    /// A mesh, by symbol name when it has one.
    Mesh {
        name: Option<String>,
    },
    Value(ValueId),
    Op(OpId),
}

/// Facts about a sharding of a value.
#[derive(Clone, Debug)]
pub struct ShardingFacts {
    pub sharding: TensorSharding,
    /// The sharded value's type, when known.
    pub value_type: Option<Type>,
    /// The per-device shape (`None` when the type or the mesh is unknown).
    pub local_shape: Option<Vec<Dim>>,
    /// `P(...)`, or why there is none.
    pub partition_spec: Result<String, String>,
    /// The GSPMD `HloSharding` string, or why there is none.
    pub hlo_sharding: Result<String, String>,
}

/// Explains what is under `offset` (absolute, in the coordinates of `src`, the text
/// the model was built from). `None` when there is nothing to explain there.
pub fn at(model: &Model, src: &str, offset: u32) -> Option<Explanation> {
    if offset as usize > src.len() {
        return None;
    }
    let target = locate::locate(model, offset)?;
    Some(explain_target(model, src, &[], &target))
}

/// A mesh known by name besides the module's `sdy.mesh` ops (one of an `xla.sdy.meshes`
/// string).
pub type NamedMesh = (String, Mesh);

/// Explains `target`; a mesh symbol the model does not define is looked up in `extra`.
pub fn explain_target(
    model: &Model,
    src: &str,
    extra: &[NamedMesh],
    target: &Target,
) -> Explanation {
    let range = target.range(model);
    let (markdown, subject) = match target {
        Target::Sharding { op, site, sharding, .. } => {
            let facts = sharding::facts(model, extra, *op, site, sharding);
            (sharding::explain(model, extra, *op, site, &facts), Subject::Sharding(Box::new(facts)))
        }
        Target::ShardingAxis { op, site, sharding, axis } => (
            axis::explain_axis(model, extra, *op, site, sharding, axis),
            Subject::Axis {
                axis: axis.to_string(),
                mesh: sharding.mesh_name().map(str::to_string),
            },
        ),
        Target::ListAxis { op, key, dim, axis } => (
            mesh::explain_list_axis(model, *op, key, *dim, axis),
            Subject::Axis { axis: axis.to_string(), mesh: mesh::op_mesh_name(model, *op) },
        ),
        Target::MeshSymbol { name, .. } => {
            let mesh = model
                .mesh(name)
                .and_then(|m| m.mesh.as_deref())
                .or_else(|| extra_mesh(extra, name));
            (mesh::explain_mesh(Some(name), mesh), Subject::Mesh { name: Some(name.clone()) })
        }
        Target::MeshBody { name, mesh, .. } => {
            (mesh::explain_mesh(name.as_deref(), Some(mesh)), Subject::Mesh { name: name.clone() })
        }
        Target::MeshAxis { name, mesh, index } => (
            mesh::explain_mesh_axis(name.as_deref(), mesh, *index),
            Subject::Axis { axis: format!("\"{}\"", mesh.axes[*index].0), mesh: name.clone() },
        ),
        Target::Value { value, .. } => {
            (value::explain_value(model, src, *value), Subject::Value(*value))
        }
        Target::OpName { op } => (value::explain_op(model, src, *op), Subject::Op(*op)),
        Target::PerValue { op, entries, .. } => {
            (value::explain_per_value(model, *op, entries), Subject::Op(*op))
        }
    };
    Explanation { range, markdown, subject }
}

fn extra_mesh<'a>(extra: &'a [NamedMesh], name: &str) -> Option<&'a Mesh> {
    extra.iter().find(|(n, _)| n == name).map(|(_, m)| m)
}

/// The mesh a sharding is bound to, resolved.
pub(crate) enum MeshOf<'a> {
    Symbol(&'a str, &'a Mesh),
    Inline(&'a Mesh),
    /// A symbol with no (readable) `sdy.mesh`.
    Missing(&'a str),
}

impl<'a> MeshOf<'a> {
    pub(crate) fn resolve(model: &'a Model, s: &'a TensorSharding) -> MeshOf<'a> {
        MeshOf::resolve_in(model, &[], s)
    }
    /// Resolves a symbol through the model, then `extra`.
    pub(crate) fn resolve_in(
        model: &'a Model,
        extra: &'a [NamedMesh],
        s: &'a TensorSharding,
    ) -> MeshOf<'a> {
        match &s.mesh {
            MeshRef::Inline(m) => MeshOf::Inline(m),
            MeshRef::Symbol(name) => {
                match model
                    .mesh(name)
                    .and_then(|m| m.mesh.as_deref())
                    .or_else(|| extra_mesh(extra, name))
                {
                    Some(m) => MeshOf::Symbol(name, m),
                    None => MeshOf::Missing(name),
                }
            }
        }
    }
    pub(crate) fn mesh(&self) -> Option<&'a Mesh> {
        match self {
            MeshOf::Symbol(_, m) | MeshOf::Inline(m) => Some(m),
            MeshOf::Missing(_) => None,
        }
    }
    /// `` mesh `@name` `` or `inline mesh`.
    pub(crate) fn label(&self) -> String {
        match self {
            MeshOf::Symbol(n, _) | MeshOf::Missing(n) => format!("mesh `@{n}`"),
            MeshOf::Inline(_) => "inline mesh".into(),
        }
    }
}

/// A type as MLIR prints it.
pub(crate) fn type_string(ty: &Type) -> String {
    match &*ty.kind {
        TypeKind::Tensor { shape: None, elem, .. } => format!("tensor<*x{elem}>"),
        TypeKind::Tensor { shape: Some(dims), elem, encoding } => {
            let enc = encoding.as_ref().map(|e| format!(", {e}")).unwrap_or_default();
            format!("tensor<{}{elem}{enc}>", dims_prefix(dims))
        }
        TypeKind::Token => "!stablehlo.token".into(),
        TypeKind::Tuple(items) => {
            format!("tuple<{}>", items.iter().map(type_string).collect::<Vec<_>>().join(", "))
        }
        TypeKind::Alias(name) => format!("!{}", name.trim_start_matches('!')),
        TypeKind::Other(text) => text.to_string(),
    }
}

/// `8x?x` for dims `[8, ?]`.
pub(crate) fn dims_prefix(dims: &[Dim]) -> String {
    dims.iter()
        .map(|d| match d {
            Dim::Static(n) => format!("{n}x"),
            Dim::Dynamic => "?x".into(),
        })
        .collect()
}

/// `tensor<...>` with the same element type and new dims.
pub(crate) fn with_dims(ty: &Type, dims: &[Dim]) -> Option<String> {
    match &*ty.kind {
        TypeKind::Tensor { elem, .. } => Some(format!("tensor<{}{elem}>", dims_prefix(dims))),
        _ => None,
    }
}

/// `"a"`, `"b"` as inline code, or `—` for none.
pub(crate) fn code_list<T: AsRef<str>>(items: &[T]) -> String {
    if items.is_empty() {
        return "—".into();
    }
    items.iter().map(|s| format!("`{}`", s.as_ref())).collect::<Vec<_>>().join(", ")
}

/// `1st`, `2nd`, ...
pub(crate) fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, x) if x != 11 => "st",
        (2, x) if x != 12 => "nd",
        (3, x) if x != 13 => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// `shard 3` or `shards 0–2`.
pub(crate) fn shard_range(lo: i64, hi: i64) -> String {
    if lo == hi {
        format!("shard {lo}")
    } else {
        format!("shards {lo}–{hi}")
    }
}

impl Subject {
    /// The sharding facts, for a sharding subject.
    pub fn sharding(&self) -> Option<&ShardingFacts> {
        match self {
            Subject::Sharding(f) => Some(f),
            _ => None,
        }
    }
}
