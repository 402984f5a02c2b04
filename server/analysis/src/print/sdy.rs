//! The sdy attributes as values (what Shardy's attribute classes hold), built from the
//! syntax trees of `sdy_syntax::sdy` or by passes, and printed in Shardy's canonical
//! form: `#sdy.sharding<@m, [{"a", ?}, {}p1], replicated={"b"}, unreduced=max{"c"}>`.

use super::attr::write_escaped;
use sdy_syntax::sdy::*;
use sdy_syntax::tree::Str;
use std::fmt::{self, Write};

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

/// The body of a mesh: `<["a"=2, "b"=4], device_ids=[...]>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mesh {
    pub axes: Vec<(String, i64)>,
    /// Explicit device ids; empty means iota (Shardy drops iota ids when there are axes).
    pub device_ids: Vec<i64>,
}

impl Mesh {
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
            MeshRef::Symbol(s) => f.write_str(&super::attr::symbol_ref(s)),
            MeshRef::Inline(m) => write!(f, "mesh{m}"),
        }
    }
}

pub use sdy_syntax::sdy::Reduction;

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
}

fn axis_list(f: &mut fmt::Formatter<'_>, axes: &[AxisRef]) -> fmt::Result {
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
        write!(f, "<{}, [", self.mesh)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_char(']')?;
        if !self.replicated.is_empty() {
            f.write_str(", replicated=")?;
            axis_list(f, &self.replicated)?;
        }
        if !self.unreduced.is_empty() {
            f.write_str(", unreduced=")?;
            if self.reduction != Reduction::Sum {
                f.write_str(self.reduction.as_str())?;
            }
            axis_list(f, &self.unreduced)?;
        }
        f.write_char('>')
    }
}

/// The op-syntax list `[<...>, <...>]` (`in_shardings=`); `#sdy.sharding_per_value<...>`
/// wraps it.
pub struct PerValueList<'a>(pub &'a [TensorSharding]);

impl fmt::Display for PerValueList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{s}")?;
        }
        f.write_char(']')
    }
}

/// `#sdy.op_sharding_rule<([i, j], [j])->([i]) {i=8, j=4} reduction={j}, custom>`
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpShardingRule {
    /// Per operand, per dimension: the factor indices.
    pub operands: Vec<Vec<Vec<i64>>>,
    pub results: Vec<Vec<Vec<i64>>>,
    pub factor_sizes: Vec<i64>,
    pub reduction: Vec<i64>,
    pub need_replication: Vec<i64>,
    pub permutation: Vec<i64>,
    pub blocked_propagation: Vec<i64>,
    pub custom: bool,
}

/// The symbol of factor `i`: `i`..`z`, then `z_1`, `z_2`, ...
pub fn factor_symbol(i: i64) -> String {
    if (0..18).contains(&i) {
        ((b'i' + i as u8) as char).to_string()
    } else {
        format!("z_{}", i - 17)
    }
}

impl fmt::Display for OpShardingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn mappings(f: &mut fmt::Formatter<'_>, ms: &[Vec<Vec<i64>>]) -> fmt::Result {
            f.write_char('(')?;
            for (i, m) in ms.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_char('[')?;
                for (j, d) in m.iter().enumerate() {
                    if j > 0 {
                        f.write_str(", ")?;
                    }
                    for &factor in d {
                        f.write_str(&factor_symbol(factor))?;
                    }
                }
                f.write_char(']')?;
            }
            f.write_char(')')
        }
        fn list(f: &mut fmt::Formatter<'_>, kw: &str, fs: &[i64]) -> fmt::Result {
            if fs.is_empty() {
                return Ok(());
            }
            write!(f, " {kw}={{")?;
            for (i, &x) in fs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(&factor_symbol(x))?;
            }
            f.write_char('}')
        }
        f.write_str("#sdy.op_sharding_rule<")?;
        mappings(f, &self.operands)?;
        f.write_str("->")?;
        mappings(f, &self.results)?;
        if !self.factor_sizes.is_empty() {
            f.write_str(" {")?;
            for (i, s) in self.factor_sizes.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}={s}", factor_symbol(i as i64))?;
            }
            f.write_char('}')?;
        }
        list(f, "reduction", &self.reduction)?;
        list(f, "need_replication", &self.need_replication)?;
        list(f, "permutation", &self.permutation)?;
        list(f, "blocked_propagation", &self.blocked_propagation)?;
        if self.custom {
            f.write_str(", custom")?;
        }
        f.write_char('>')
    }
}

/// `[{"x"}: 0->2, {"y"}: 1->3]` element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllToAllParam {
    pub axes: Vec<AxisRef>,
    pub src_dim: i64,
    pub tgt_dim: i64,
}

/// Writes `{"a", "b"}`.
pub struct AxisListDisplay<'a>(pub &'a [AxisRef]);

impl fmt::Display for AxisListDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        axis_list(f, self.0)
    }
}

/// Writes `[{}, {"x"}]`.
pub struct AxisListsDisplay<'a>(pub &'a [Vec<AxisRef>]);

impl fmt::Display for AxisListsDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        for (i, l) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            axis_list(f, l)?;
        }
        f.write_char(']')
    }
}

/// Writes `[{"x"}: 0->2, {"y"}: 1->3]`.
pub struct AllToAllDisplay<'a>(pub &'a [AllToAllParam]);

impl fmt::Display for AllToAllDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            axis_list(f, &p.axes)?;
            write!(f, ": {}->{}", p.src_dim, p.tgt_dim)?;
        }
        f.write_char(']')
    }
}

// ----- from the syntax trees -----

/// Decodes MLIR string escapes (`\n`, `\t`, `\"`, `\\`, `\XX`).
pub fn unescape(raw: &str) -> String {
    String::from_utf8_lossy(&super::attr::unescape_bytes(raw)).into_owned()
}

pub fn axis_ref(a: &AxisRefAst) -> AxisRef {
    AxisRef { name: unescape(&a.name).into(), sub: a.sub.map(|s| (s.pre_size, s.size)) }
}

pub fn axis_refs(v: &[AxisRefAst]) -> Vec<AxisRef> {
    v.iter().map(axis_ref).collect()
}

pub fn mesh(m: &MeshAst) -> Mesh {
    let mut out = Mesh {
        axes: m.axes.iter().map(|a| (unescape(&a.name), a.size)).collect(),
        device_ids: m
            .device_ids
            .as_ref()
            .map(|d| d.ids.iter().map(|x| x.0).collect())
            .unwrap_or_default(),
    };
    out.canonicalize();
    out
}

pub fn sharding(s: &ShardingAst) -> TensorSharding {
    TensorSharding {
        mesh: match &s.mesh {
            MeshRefAst::Symbol { name, .. } => {
                MeshRef::Symbol(name.trim_start_matches('@').trim_matches('"').to_string())
            }
            MeshRefAst::Inline(m) => MeshRef::Inline(mesh(m)),
        },
        dims: s
            .dims
            .iter()
            .map(|d| DimSharding {
                axes: axis_refs(&d.axes),
                open: d.open.is_some(),
                priority: d.priority.map(|p| p.0),
            })
            .collect(),
        replicated: s.replicated.as_ref().map(|r| axis_refs(&r.axes)).unwrap_or_default(),
        unreduced: s.unreduced.as_ref().map(|u| axis_refs(&u.list.axes)).unwrap_or_default(),
        reduction: s
            .unreduced
            .as_ref()
            .and_then(|u| u.reduction.map(|r| r.0))
            .unwrap_or(Reduction::Sum),
    }
}

pub fn rule(r: &RuleAst) -> OpShardingRule {
    let maps = |ms: &[TensorMappingAst]| -> Vec<Vec<Vec<i64>>> {
        ms.iter().map(|m| m.dims.iter().map(|d| d.factors.clone()).collect()).collect()
    };
    let list = |l: &Option<FactorListAst>| -> Vec<i64> {
        l.as_ref().map(|l| l.factors.iter().map(|f| f.0).collect()).unwrap_or_default()
    };
    OpShardingRule {
        operands: maps(&r.operands),
        results: maps(&r.results),
        factor_sizes: r.factor_sizes.iter().map(|f| f.0).collect(),
        reduction: list(&r.reduction),
        need_replication: list(&r.need_replication),
        permutation: list(&r.permutation),
        blocked_propagation: list(&r.blocked_propagation),
        custom: r.custom,
    }
}

pub fn all_to_all(ps: &[AllToAllParamAst]) -> Vec<AllToAllParam> {
    ps.iter()
        .map(|p| AllToAllParam {
            axes: axis_refs(&p.axes.axes),
            src_dim: p.src_dim.0,
            tgt_dim: p.tgt_dim.0,
        })
        .collect()
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
        let r = OpShardingRule {
            operands: vec![vec![vec![0], vec![1]], vec![vec![1]]],
            results: vec![vec![vec![0, 19]]],
            factor_sizes: vec![8, 4],
            reduction: vec![1],
            custom: true,
            ..Default::default()
        };
        assert_eq!(
            r.to_string(),
            "#sdy.op_sharding_rule<([i, j], [j])->([iz_2]) {i=8, j=4} reduction={j}, custom>"
        );
    }
}
