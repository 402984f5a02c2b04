//! Meshes and tensor shardings as semantic values (absolute spans kept for diagnostics).

use crate::sharding::axis::MeshAxes;
use sdy_syntax::escape::unescape;
use sdy_syntax::sdy::{AxisRefAst, MeshAst, MeshRefAst, PerValueAst, Reduction, ShardingAst};
use sdy_syntax::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshAxis {
    pub name: String,
    pub size: i64,
    pub span: Span,
}

/// A mesh: named axes with sizes, optional explicit device order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mesh {
    pub axes: Vec<MeshAxis>,
    /// Explicit device ids, `None` when absent or iota (MLIR drops iota ids).
    pub device_ids: Option<Vec<i64>>,
    pub span: Span,
}

impl Mesh {
    pub fn from_ast(ast: &MeshAst, base: u32) -> Mesh {
        let axes: Vec<MeshAxis> = ast
            .axes
            .iter()
            .map(|a| MeshAxis { name: a.name.to_string(), size: a.size, span: a.span.shift(base) })
            .collect();
        let ids: Option<Vec<i64>> =
            ast.device_ids.as_ref().map(|d| d.ids.iter().map(|(v, _)| *v).collect());
        let device_ids = match ids {
            // Iota ids are dropped while parsing, as MLIR does (a maximal mesh keeps its id).
            Some(ids) if crate::shape::is_iota_device_ids(axes.iter().map(|a| a.size), &ids) => {
                None
            }
            other => other,
        };
        Mesh { axes, device_ids, span: ast.span.shift(base) }
    }
    /// No axes and no device ids.
    pub fn is_empty(&self) -> bool {
        self.axes.is_empty() && self.device_ids.as_ref().is_none_or(|d| d.is_empty())
    }
    /// No axes and exactly one device id.
    pub fn is_maximal(&self) -> bool {
        self.axes.is_empty() && self.device_ids.as_ref().is_some_and(|d| d.len() == 1)
    }
    pub fn axis(&self, name: &str) -> Option<&MeshAxis> {
        self.axes.iter().find(|a| a.name == name)
    }
    pub fn axis_index(&self, name: &str) -> Option<usize> {
        self.axes.iter().position(|a| a.name == name)
    }
    /// The number of devices (1 for empty and maximal meshes); `None` when it does not
    /// fit an `i64` or an axis size is below 1.
    pub fn device_count(&self) -> Option<i64> {
        self.axes
            .iter()
            .try_fold(1i64, |acc, a| if a.size < 1 { None } else { acc.checked_mul(a.size) })
    }
}

/// A name as written (escapes undecoded) against a decoded one.
fn written_name_is(written: &str, name: &str) -> bool {
    decoded(written) == name
}

/// A name as written, decoded.
fn decoded(written: &str) -> std::borrow::Cow<'_, str> {
    if written.contains('\\') {
        unescape(written).into()
    } else {
        written.into()
    }
}

/// The algebra's view: names are decoded there, written here.
impl MeshAxes for Mesh {
    fn axis_size(&self, name: &str) -> i64 {
        self.axis_position(name).map_or(1, |i| self.axes[i].size)
    }
    fn axis_position(&self, name: &str) -> Option<usize> {
        self.axes.iter().position(|a| written_name_is(&a.name, name))
    }
}

/// `"x"` or `"x":(pre)size`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AxisRef {
    pub name: String,
    pub sub: Option<(i64, i64)>,
    pub span: Span,
}

impl AxisRef {
    pub fn from_ast(a: &AxisRefAst, base: u32) -> AxisRef {
        AxisRef {
            name: a.name.to_string(),
            sub: a.sub.map(|s| (s.pre_size, s.size)),
            span: a.span.shift(base),
        }
    }
    /// The value without its span, the name decoded: what the axis algebra and the
    /// printer take.
    pub fn value(&self) -> crate::sharding::AxisRef {
        crate::sharding::AxisRef { name: decoded(&self.name).into(), sub: self.sub }
    }
    /// Printed form, as Shardy prints it: `"x"` or `"x":(2)4`.
    pub fn display(&self) -> String {
        self.value().to_string()
    }
    /// Same axis and sub-axis info (spans ignored).
    pub fn same(&self, other: &AxisRef) -> bool {
        self.name == other.name && self.sub == other.sub
    }
}

/// The values of a list of refs (see [`AxisRef::value`]).
pub fn values(list: &[AxisRef]) -> Vec<crate::sharding::AxisRef> {
    list.iter().map(AxisRef::value).collect()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimSharding {
    pub axes: Vec<AxisRef>,
    pub closed: bool,
    pub priority: Option<i64>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MeshRef {
    Symbol { name: String, span: Span },
    Inline(Mesh),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSharding {
    pub mesh: MeshRef,
    pub dims: Vec<DimSharding>,
    pub replicated: Vec<AxisRef>,
    pub unreduced: Vec<AxisRef>,
    pub unreduced_op: Reduction,
    pub span: Span,
    /// The `[...]` of the dimension shardings.
    pub dims_span: Span,
}

impl TensorSharding {
    pub fn from_ast(s: &ShardingAst, base: u32) -> TensorSharding {
        let axes = |v: &[AxisRefAst]| v.iter().map(|a| AxisRef::from_ast(a, base)).collect();
        TensorSharding {
            mesh: match &s.mesh {
                MeshRefAst::Symbol { name, span } => {
                    MeshRef::Symbol { name: name.to_string(), span: span.shift(base) }
                }
                MeshRefAst::Inline(m) => MeshRef::Inline(Mesh::from_ast(m, base)),
            },
            dims: s
                .dims
                .iter()
                .map(|d| DimSharding {
                    axes: axes(&d.axes),
                    closed: d.open.is_none(),
                    priority: d.priority.map(|(p, _)| p),
                    span: d.span.shift(base),
                })
                .collect(),
            replicated: s.replicated.as_ref().map_or_else(Vec::new, |l| axes(&l.axes)),
            unreduced: s.unreduced.as_ref().map_or_else(Vec::new, |u| axes(&u.list.axes)),
            unreduced_op: s
                .unreduced
                .as_ref()
                .and_then(|u| u.reduction.map(|(r, _)| r))
                .unwrap_or(Reduction::Sum),
            span: s.span.shift(base),
            dims_span: s.dims_span.shift(base),
        }
    }

    pub fn per_value(p: &PerValueAst, base: u32) -> Vec<TensorSharding> {
        p.shardings.iter().map(|s| TensorSharding::from_ast(s, base)).collect()
    }

    pub fn mesh_name(&self) -> Option<&str> {
        match &self.mesh {
            MeshRef::Symbol { name, .. } => Some(name),
            MeshRef::Inline(_) => None,
        }
    }

    /// Every axis ref of the sharding: dimensions, then replicated, then unreduced.
    pub fn all_axes(&self) -> impl Iterator<Item = &AxisRef> {
        self.dims.iter().flat_map(|d| &d.axes).chain(&self.replicated).chain(&self.unreduced)
    }
}

impl Mesh {
    /// The value without spans, names decoded.
    pub fn value(&self) -> crate::sharding::Mesh {
        crate::sharding::Mesh {
            axes: self.axes.iter().map(|a| (decoded(&a.name).into(), a.size)).collect(),
            device_ids: self.device_ids.clone().unwrap_or_default(),
        }
    }
}

impl TensorSharding {
    /// The value without spans, names decoded.
    pub fn value(&self) -> crate::sharding::TensorSharding {
        use crate::sharding as v;
        v::TensorSharding {
            mesh: match &self.mesh {
                MeshRef::Symbol { name, .. } => v::MeshRef::Symbol(decoded(name).into()),
                MeshRef::Inline(m) => v::MeshRef::Inline(m.value()),
            },
            dims: self
                .dims
                .iter()
                .map(|d| v::DimSharding {
                    axes: values(&d.axes),
                    open: !d.closed,
                    priority: d.priority,
                })
                .collect(),
            replicated: values(&self.replicated),
            unreduced: values(&self.unreduced),
            reduction: self.unreduced_op,
        }
    }
    /// The body `<@mesh, [...], replicated={...}, unreduced={...}>` as MLIR prints it.
    pub fn body(&self) -> String {
        self.value().to_string()
    }
}

impl std::fmt::Display for Mesh {
    /// MLIR's printed form of the mesh body: `<["a"=2, "b"=4], device_ids=[...]>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.value())
    }
}

impl std::fmt::Display for TensorSharding {
    /// `#sdy.sharding<...>`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#sdy.sharding{}", self.value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Axis names print with MLIR's escapes, whatever escapes they were written with.
    #[test]
    fn mesh_names_print_escaped() {
        let axis = |name: &str| MeshAxis { name: name.into(), size: 2, span: Span::default() };
        let mesh = Mesh {
            axes: vec![axis("x"), axis(r#"a\"b\n"#), axis(r"c\\d")],
            device_ids: None,
            span: Span::default(),
        };
        assert_eq!(mesh.to_string(), r#"<["x"=2, "a\22b\0A"=2, "c\\d"=2]>"#);
        // The algebra finds an axis by its decoded name, whatever escapes it was written with.
        assert_eq!(mesh.axis_position("a\"b\n"), Some(1));
        assert_eq!(mesh.axis_size("c\\d"), 2);
    }

    /// Axis refs (in messages, hovers, quick fixes) print as Shardy prints them, as
    /// do the shardings they are in.
    #[test]
    fn axis_refs_print_escaped() {
        let r = AxisRef { name: r#"x\"q"#.into(), sub: Some((1, 2)), span: Span::default() };
        assert_eq!(r.display(), r#""x\22q":(1)2"#);
        let s = TensorSharding {
            mesh: MeshRef::Symbol { name: "m".into(), span: Span::default() },
            dims: vec![DimSharding {
                axes: vec![r],
                closed: false,
                priority: Some(0),
                span: Span::default(),
            }],
            replicated: vec![],
            unreduced: vec![],
            unreduced_op: Reduction::Sum,
            span: Span::default(),
            dims_span: Span::default(),
        };
        assert_eq!(s.to_string(), r#"#sdy.sharding<@m, [{"x\22q":(1)2, ?}p0]>"#);
    }
}
