//! Syntax trees of the sdy attributes (`#sdy.mesh`, `#sdy.sharding`,
//! `#sdy.sharding_per_value`, `#sdy.op_sharding_rule`, axis lists, ...), as written.
//! Spans are relative to the enclosing op, like every span in an op.

use crate::span::Span;
use crate::tree::Str;

#[derive(Clone, Debug, PartialEq)]
pub enum SdyAttr {
    Mesh(MeshAst),
    Sharding(ShardingAst),
    PerValue(PerValueAst),
    Rule(RuleAst),
    /// `{"a", "b"}`: manual axes (full axes only).
    ManualAxes(Vec<AxisRefAst>),
    /// `{"y", "x":(1)2}`: an axis-ref list (all_reduce reduction axes, r2u axes).
    AxisList(Vec<AxisRefAst>),
    /// `[{}, {"x"}]`: per-dimension axis lists of collectives.
    AxisListPerDim(Vec<AxisListAst>),
    /// `[{"x"}: 0->2, ...]`: all-to-all parameters.
    AllToAllParams(Vec<AllToAllParamAst>),
    /// `#sdy.propagation_edges<...>` and other sdy attributes we keep by span.
    Opaque,
}

/// `<["a"=2, "b"=4], device_ids=[...]>`
#[derive(Clone, Debug, PartialEq)]
pub struct MeshAst {
    pub span: Span,
    pub axes: Vec<MeshAxisAst>,
    pub device_ids: Option<DeviceIdsAst>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MeshAxisAst {
    pub span: Span,
    pub name: Str,
    pub name_span: Span,
    pub size: i64,
    pub size_span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DeviceIdsAst {
    pub span: Span,
    pub ids: Vec<(i64, Span)>,
}

/// `@mesh` or `mesh<...>`
#[derive(Clone, Debug, PartialEq)]
pub enum MeshRefAst {
    Symbol { name: Str, span: Span },
    Inline(MeshAst),
}

/// The body of `#sdy.sharding<...>` (also the stripped `<...>` form in op syntax).
#[derive(Clone, Debug, PartialEq)]
pub struct ShardingAst {
    pub span: Span,
    pub mesh: MeshRefAst,
    pub dims: Vec<DimShardingAst>,
    pub dims_span: Span,
    pub replicated: Option<AxisListAst>,
    pub unreduced: Option<UnreducedAst>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DimShardingAst {
    pub span: Span,
    pub axes: Vec<AxisRefAst>,
    /// The `?` of an open dimension.
    pub open: Option<Span>,
    /// `p<N>`
    pub priority: Option<(i64, Span)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AxisRefAst {
    pub span: Span,
    /// The axis name, unquoted (escapes undecoded).
    pub name: Str,
    pub name_span: Span,
    /// `:(pre)size`
    pub sub: Option<SubAxisAst>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubAxisAst {
    pub span: Span,
    pub pre_size: i64,
    pub size: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AxisListAst {
    pub span: Span,
    pub axes: Vec<AxisRefAst>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Max,
    Min,
}

impl Reduction {
    pub fn as_str(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Max => "max",
            Reduction::Min => "min",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct UnreducedAst {
    pub span: Span,
    /// The reduction keyword after `=`, when written.
    pub reduction: Option<(Reduction, Span)>,
    pub list: AxisListAst,
}

/// `#sdy.sharding_per_value<[...]>` or the op-syntax `[<...>, ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct PerValueAst {
    pub span: Span,
    pub shardings: Vec<ShardingAst>,
}

/// `#sdy.op_sharding_rule<...>`
#[derive(Clone, Debug, PartialEq)]
pub struct RuleAst {
    pub span: Span,
    pub operands: Vec<TensorMappingAst>,
    pub results: Vec<TensorMappingAst>,
    /// Factor sizes in factor order (`{i=8, j=4}`).
    pub factor_sizes: Vec<(i64, Span)>,
    pub reduction: Option<FactorListAst>,
    pub need_replication: Option<FactorListAst>,
    pub permutation: Option<FactorListAst>,
    pub blocked_propagation: Option<FactorListAst>,
    pub custom: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TensorMappingAst {
    pub span: Span,
    pub dims: Vec<DimMappingAst>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DimMappingAst {
    pub span: Span,
    pub factors: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FactorListAst {
    pub span: Span,
    pub factors: Vec<(i64, Span)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AllToAllParamAst {
    pub span: Span,
    pub axes: AxisListAst,
    pub src_dim: (i64, Span),
    pub tgt_dim: (i64, Span),
}
