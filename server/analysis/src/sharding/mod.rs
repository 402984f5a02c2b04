//! Meshes, axis refs and tensor shardings as values: what Shardy's attribute classes
//! hold, built from the syntax trees or by passes, printed in Shardy's canonical form
//! (`#sdy.sharding<@m, [{"a", ?}, {}p1], replicated={"b"}, unreduced=max{"c"}>`), with
//! the axis algebra of `AxisRefAttr` in [`axis`]. The semantic model keeps these values
//! with their spans beside them (`model::sharding`).

pub(crate) mod axis;
pub(crate) mod make;

use sdy_syntax::escape::{symbol_ref, unescape, write_escaped};
use sdy_syntax::sdy::{AxisRefAst, MeshAst, MeshRefAst, ShardingAst};
use sdy_syntax::tree::Str;
use std::fmt::{self, Write};

pub use sdy_syntax::sdy::Reduction;

/// `"a"` or `"a":(2)4`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisRef {
    /// The axis name (escapes decoded; inline when short, so copies do not allocate).
    pub name: Str,
    /// `(pre_size, size)` of a sub-axis.
    pub sub: Option<(i64, i64)>,
}

impl AxisRef {
    pub fn full(name: impl Into<Str>) -> AxisRef {
        AxisRef { name: name.into(), sub: None }
    }
}

impl fmt::Display for AxisRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(f, self.name.as_bytes())?;
        if let Some((pre, size)) = self.sub {
            write!(f, ":({pre}){size}")?;
        }
        Ok(())
    }
}

/// `{"a", "b", ?}p1`
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DimSharding {
    pub axes: Vec<AxisRef>,
    /// Open (`?`) rather than closed.
    pub open: bool,
    pub priority: Option<i64>,
}

impl fmt::Display for DimSharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('{')?;
        for (i, a) in self.axes.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{a}")?;
        }
        if self.open {
            if !self.axes.is_empty() {
                f.write_str(", ")?;
            }
            f.write_char('?')?;
        }
        f.write_char('}')?;
        if let Some(p) = self.priority {
            write!(f, "p{p}")?;
        }
        Ok(())
    }
}

impl DimSharding {
    /// The number of shards: the product of the axes' sizes; `None` when an axis is not
    /// in `mesh`, or the product overflows or is below 1.
    pub fn shard_count(&self, mesh: &Mesh) -> Option<i64> {
        let n = self.axes.iter().try_fold(1i64, |acc, a| {
            let full = mesh.axis(&a.name)?.1;
            acc.checked_mul(a.sub.map_or(full, |(_, k)| k))
        })?;
        (n >= 1).then_some(n)
    }
    /// The per-device size of a dimension of `size` elements: divided by the number of
    /// shards, rounded up (devices hold padded shards).
    pub fn local_size(&self, size: i64, mesh: &Mesh) -> Option<i64> {
        Some(crate::shape::ceil_div(size, self.shard_count(mesh)?))
    }
}

/// The per-device shape of `dims` under `s` (see [`DimSharding::local_size`]); `None`
/// when the ranks differ or a dimension's number of shards is unknown.
pub fn local_shape(dims: &[i64], s: &TensorSharding, mesh: &Mesh) -> Option<Vec<i64>> {
    if s.dims.len() != dims.len() {
        return None;
    }
    dims.iter().zip(&s.dims).map(|(&d, ds)| ds.local_size(d, mesh)).collect()
}

/// The body of a mesh: `<["a"=2, "b"=4], device_ids=[...]>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mesh {
    pub axes: Vec<(String, i64)>,
    /// Explicit device ids; empty means iota (Shardy drops iota ids when there are axes).
    pub device_ids: Vec<i64>,
}

impl Mesh {
    /// No axes and no device ids.
    pub fn is_empty(&self) -> bool {
        self.axes.is_empty() && self.device_ids.is_empty()
    }
    /// No axes and exactly one device id.
    pub fn is_maximal(&self) -> bool {
        self.axes.is_empty() && self.device_ids.len() == 1
    }
    /// Explicit device ids, `None` for iota order.
    pub fn explicit_device_ids(&self) -> Option<&[i64]> {
        (!self.device_ids.is_empty()).then_some(&self.device_ids[..])
    }
    /// The axis `name` and its size.
    pub fn axis(&self, name: &str) -> Option<&(String, i64)> {
        self.axes.iter().find(|a| a.0 == name)
    }
    /// The number of devices (1 for empty and maximal meshes); `None` when it does not
    /// fit an `i64` or an axis size is below 1.
    pub fn device_count(&self) -> Option<i64> {
        self.axes.iter().try_fold(1i64, |acc, a| if a.1 < 1 { None } else { acc.checked_mul(a.1) })
    }
    /// Drops `device_ids` equal to iota of the device count when the mesh has axes,
    /// as Shardy's mesh builder does while parsing.
    pub fn canonicalize(&mut self) {
        if crate::shape::is_iota_device_ids(self.axes.iter().map(|a| a.1), &self.device_ids) {
            self.device_ids.clear();
        }
    }
}

impl fmt::Display for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<[")?;
        for (i, (name, size)) in self.axes.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write_escaped(f, name.as_bytes())?;
            write!(f, "={size}")?;
        }
        f.write_char(']')?;
        if !self.device_ids.is_empty() {
            f.write_str(", device_ids=[")?;
            for (i, d) in self.device_ids.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{d}")?;
            }
            f.write_char(']')?;
        }
        f.write_char('>')
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MeshRef {
    /// `@name` of an `sdy.mesh`.
    Symbol(String),
    /// `mesh<[...]>`
    Inline(Mesh),
}

impl fmt::Display for MeshRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MeshRef::Symbol(s) => f.write_str(&symbol_ref(s)),
            MeshRef::Inline(m) => write!(f, "mesh{m}"),
        }
    }
}

/// A tensor sharding; `Display` prints the stripped body `<@m, [...]>` used inside
/// per-value lists and op syntax (use [`TensorSharding::attr`] for `#sdy.sharding<...>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSharding {
    pub mesh: MeshRef,
    pub dims: Vec<DimSharding>,
    pub replicated: Vec<AxisRef>,
    pub unreduced: Vec<AxisRef>,
    /// The reduction of the unreduced axes (printed only when not `sum`).
    pub reduction: Reduction,
}

impl TensorSharding {
    /// A fully open or closed sharding of rank `rank` on mesh `@mesh`.
    pub fn replicated(mesh: &str, rank: usize, open: bool) -> TensorSharding {
        TensorSharding {
            mesh: MeshRef::Symbol(mesh.to_string()),
            dims: vec![DimSharding { axes: Vec::new(), open, priority: None }; rank],
            replicated: Vec::new(),
            unreduced: Vec::new(),
            reduction: Reduction::Sum,
        }
    }
    /// `#sdy.sharding<...>`
    pub fn attr(&self) -> String {
        format!("#sdy.sharding{self}")
    }
    /// The name of a symbol mesh.
    pub fn mesh_name(&self) -> Option<&str> {
        match &self.mesh {
            MeshRef::Symbol(name) => Some(name),
            MeshRef::Inline(_) => None,
        }
    }
    /// Every axis ref of the sharding: dimensions, then replicated, then unreduced.
    pub fn all_axes(&self) -> impl Iterator<Item = &AxisRef> {
        self.dims.iter().flat_map(|d| &d.axes).chain(&self.replicated).chain(&self.unreduced)
    }
}

pub(crate) fn axis_list(f: &mut fmt::Formatter<'_>, axes: &[AxisRef]) -> fmt::Result {
    f.write_char('{')?;
    for (i, a) in axes.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{a}")?;
    }
    f.write_char('}')
}

impl fmt::Display for TensorSharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{}, {}>", self.mesh, WithoutMesh(self))
    }
}

impl AsRef<TensorSharding> for TensorSharding {
    fn as_ref(&self) -> &TensorSharding {
        self
    }
}

/// The sharding after its mesh: `[{"x"}, {?}], replicated={"y"}` (compact hints).
pub struct WithoutMesh<'a>(pub &'a TensorSharding);

impl fmt::Display for WithoutMesh<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        f.write_char('[')?;
        for (i, d) in s.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_char(']')?;
        if !s.replicated.is_empty() {
            f.write_str(", replicated=")?;
            axis_list(f, &s.replicated)?;
        }
        if !s.unreduced.is_empty() {
            f.write_str(", unreduced=")?;
            if s.reduction != Reduction::Sum {
                f.write_str(s.reduction.as_str())?;
            }
            axis_list(f, &s.unreduced)?;
        }
        Ok(())
    }
}

// ----- from the syntax trees -----

impl AxisRef {
    pub fn from_ast(a: &AxisRefAst) -> AxisRef {
        let name = if a.name.contains('\\') { unescape(&a.name).into() } else { a.name.clone() };
        AxisRef { name, sub: a.sub.map(|s| (s.pre_size, s.size)) }
    }
    pub fn list_from_ast(v: &[AxisRefAst]) -> Vec<AxisRef> {
        v.iter().map(AxisRef::from_ast).collect()
    }
}

impl Mesh {
    pub fn from_ast(m: &MeshAst) -> Mesh {
        let mut out = Mesh {
            axes: m.axes.iter().map(|a| (decoded(&a.name), a.size)).collect(),
            device_ids: m
                .device_ids
                .as_ref()
                .map(|d| d.ids.iter().map(|x| x.0).collect())
                .unwrap_or_default(),
        };
        out.canonicalize();
        out
    }
}

/// A name as written, decoded (without a second pass when it has no escapes).
fn decoded(written: &str) -> String {
    if written.contains('\\') {
        unescape(written)
    } else {
        written.to_string()
    }
}

impl TensorSharding {
    pub fn from_ast(s: &ShardingAst) -> TensorSharding {
        TensorSharding {
            mesh: match &s.mesh {
                MeshRefAst::Symbol { name, .. } => {
                    MeshRef::Symbol(name.trim_start_matches('@').trim_matches('"').to_string())
                }
                MeshRefAst::Inline(m) => MeshRef::Inline(Mesh::from_ast(m)),
            },
            dims: s
                .dims
                .iter()
                .map(|d| DimSharding {
                    axes: AxisRef::list_from_ast(&d.axes),
                    open: d.open.is_some(),
                    priority: d.priority.map(|p| p.0),
                })
                .collect(),
            replicated: s
                .replicated
                .as_ref()
                .map(|r| AxisRef::list_from_ast(&r.axes))
                .unwrap_or_default(),
            unreduced: s
                .unreduced
                .as_ref()
                .map(|u| AxisRef::list_from_ast(&u.list.axes))
                .unwrap_or_default(),
            reduction: s
                .unreduced
                .as_ref()
                .and_then(|u| u.reduction.map(|r| r.0))
                .unwrap_or(Reduction::Sum),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing() {
        let s = TensorSharding {
            mesh: MeshRef::Symbol("m".into()),
            dims: vec![
                DimSharding { axes: vec![AxisRef::full("a")], open: true, priority: None },
                DimSharding { axes: vec![], open: false, priority: Some(1) },
                DimSharding {
                    axes: vec![AxisRef { name: "b".into(), sub: Some((2, 4)) }],
                    open: false,
                    priority: None,
                },
            ],
            replicated: vec![AxisRef::full("c")],
            unreduced: vec![AxisRef::full("d")],
            reduction: Reduction::Max,
        };
        assert_eq!(
            s.attr(),
            r#"#sdy.sharding<@m, [{"a", ?}, {}p1, {"b":(2)4}], replicated={"c"}, unreduced=max{"d"}>"#
        );
        let mut m =
            Mesh { axes: vec![("a".into(), 2), ("b".into(), 2)], device_ids: vec![0, 1, 2, 3] };
        m.canonicalize();
        assert_eq!(m.to_string(), r#"<["a"=2, "b"=2]>"#);
        let mut m = Mesh { axes: vec![], device_ids: vec![0] };
        m.canonicalize();
        assert_eq!(m.to_string(), "<[], device_ids=[0]>");
    }
}
