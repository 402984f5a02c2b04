//! Projecting dimension shardings onto the factors of an op sharding rule and back
//! (Shardy's `ShardingProjection`): a dimension sharded by `{"x", "y"}` over factors
//! `i, j` gives each factor its (sub-)axes, major to minor; after propagation the
//! factor axes are concatenated back into dimension shardings.

use crate::rules::{OpShardingRule, TensorMapping};
use crate::sharding::axis::{self, add_axis_or_merge, sub_axis};
use crate::sharding::{AxisRef, DimSharding, Mesh, MeshRef, Reduction, TensorSharding};

/// How one factor of one tensor is sharded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FactorSharding {
    pub axes: Vec<AxisRef>,
    /// The dimension is closed: the factor may not be sharded further.
    pub closed: bool,
    /// The factor is the minor-most one of its dimension (it may take axes whose size
    /// does not divide it).
    pub minor_most: bool,
    /// Axes of the dimension that did not fit this (non-minor-most) factor: they are
    /// kept so the dimension sharding can be rebuilt.
    pub overflow: Vec<AxisRef>,
}

/// The factor shardings of one tensor, with its replicated and unreduced axes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorFactorShardings {
    /// Indexed by factor; `None` when the tensor does not have the factor.
    pub factors: Vec<Option<FactorSharding>>,
    pub replicated: Vec<AxisRef>,
    pub unreduced: Vec<AxisRef>,
    pub reduction: Reduction,
}

impl TensorFactorShardings {
    pub fn factor(&self, f: usize) -> Option<&FactorSharding> {
        self.factors.get(f).and_then(Option::as_ref)
    }

    /// Replaces the axes of factor `f` by `new_axes` when the current ones are a strict
    /// prefix of them. Returns whether it changed.
    pub fn expand(&mut self, f: usize, new_axes: &[AxisRef]) -> bool {
        let Some(Some(fs)) = self.factors.get_mut(f) else { return false };
        if !axis::is_strict_prefix(&fs.axes, new_axes) {
            return false;
        }
        fs.axes = new_axes.to_vec();
        true
    }

    /// The product of the sizes of the factors this tensor has.
    pub fn tensor_size(&self, factor_sizes: &[i64]) -> i64 {
        self.factors
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_some())
            .map(|(i, _)| factor_sizes[i])
            .fold(1i64, |a, b| a.saturating_mul(b))
    }

    /// Rebuilds the tensor sharding on mesh `mesh_ref` (Shardy's
    /// `createTensorShardingAttr`): per dimension, the axes of its factors in order,
    /// stopping after a factor with overflow axes or one that is not fully sharded.
    pub fn to_sharding(
        &self,
        mapping: &TensorMapping,
        factor_sizes: &[i64],
        mesh_ref: &MeshRef,
        mesh: &Mesh,
    ) -> TensorSharding {
        let mut dims = Vec::with_capacity(mapping.len());
        for dim in mapping {
            let mut closed = false;
            let mut axes: Vec<AxisRef> = Vec::new();
            for &f in dim {
                let Some(fs) = self.factor(f) else { continue };
                closed |= fs.closed;
                let sharded = add_axes(&mut axes, &fs.axes, mesh);
                if !fs.overflow.is_empty() {
                    add_axes(&mut axes, &fs.overflow, mesh);
                    break;
                }
                if sharded < factor_sizes[f] {
                    break;
                }
            }
            dims.push(DimSharding { axes, open: !closed, priority: None });
        }
        TensorSharding {
            mesh: mesh_ref.clone(),
            dims,
            replicated: self.replicated.clone(),
            unreduced: self.unreduced.clone(),
            reduction: self.reduction,
        }
    }
}

/// Adds `axes` to a dimension, merging the first with the last one already there.
/// Returns the product of the sizes of `axes`.
fn add_axes(dim: &mut Vec<AxisRef>, axes: &[AxisRef], mesh: &Mesh) -> i64 {
    let mut total = 1i64;
    for (i, a) in axes.iter().enumerate() {
        total = total.saturating_mul(axis::size(a, mesh));
        if i == 0 {
            add_axis_or_merge(dim, a.clone(), mesh);
        } else {
            dim.push(a.clone());
        }
    }
    total
}

/// The remaining part of the axis being projected: its size and pre-size when split.
#[derive(Clone, Copy)]
pub(crate) struct Remaining {
    pub size: i64,
    pub pre: Option<i64>,
}

pub(crate) fn remaining_at(axes: &[AxisRef], i: usize, mesh: &Mesh) -> Option<Remaining> {
    let a = axes.get(i)?;
    Some(Remaining { size: axis::size(a, mesh), pre: a.sub.map(|s| s.0) })
}

pub(crate) fn remaining_ref(name: &str, r: Remaining) -> AxisRef {
    match r.pre {
        Some(p) => sub_axis(name, p, r.size),
        None => AxisRef::full(name),
    }
}

/// Adds the remaining piece `rem` of `axes[i]` and every later axis to `out`.
pub(crate) fn add_remaining(
    out: &mut Vec<AxisRef>,
    mut rem: Option<Remaining>,
    axes: &[AxisRef],
    mut i: usize,
    mesh: &Mesh,
) {
    while let Some(r) = rem {
        add_axis_or_merge(out, remaining_ref(&axes[i].name, r), mesh);
        i += 1;
        rem = remaining_at(axes, i, mesh);
    }
}

pub(crate) fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Projects one tensor's sharding (`None`: no sharding, fully open or closed per
/// `closed_if_missing`) onto the factors of `mapping`.
pub fn project_tensor(
    mapping: &TensorMapping,
    sharding: Option<&TensorSharding>,
    factor_sizes: &[i64],
    mesh: &Mesh,
    closed_if_missing: bool,
) -> TensorFactorShardings {
    let mut factors: Vec<Option<FactorSharding>> = vec![None; factor_sizes.len()];
    for (d, dim) in mapping.iter().enumerate() {
        let ds = sharding.and_then(|s| s.dims.get(d));
        let axes: &[AxisRef] = ds.map_or(&[], |d| d.axes.as_slice());
        let dim_closed = match (sharding, ds) {
            (Some(_), Some(d)) => !d.open,
            (Some(_), None) => false,
            (None, _) => closed_if_missing,
        };
        let mut i = 0usize;
        let mut rem = remaining_at(axes, i, mesh);
        let mut has_overflow = false;
        for (k, &f) in dim.iter().enumerate() {
            if f >= factors.len() {
                continue;
            }
            let minor_most = k + 1 == dim.len();
            let fs = factors[f].get_or_insert_with(FactorSharding::default);
            fs.minor_most = minor_most;
            if has_overflow {
                fs.closed = true;
                break;
            }
            fs.closed = dim_closed;
            let mut remaining_factor = factor_sizes[f];
            if minor_most {
                add_remaining(&mut fs.axes, rem, axes, i, mesh);
                break;
            }
            while let Some(r) = rem {
                let g = if r.size == 1 { 1 } else { gcd(remaining_factor, r.size) };
                if r.size != 1 && g <= 1 {
                    break;
                }
                let name = &axes[i].name;
                if r.size > g {
                    let pre = r.pre.unwrap_or(1);
                    fs.axes.push(sub_axis(name, pre, g));
                    rem = Some(Remaining { size: r.size / g, pre: Some(pre * g) });
                    remaining_factor /= g;
                } else {
                    fs.axes.push(remaining_ref(name, r));
                    remaining_factor /= r.size.max(1);
                    i += 1;
                    rem = remaining_at(axes, i, mesh);
                }
            }
            if remaining_factor > 1 && rem.is_some() {
                has_overflow = true;
                add_remaining(&mut fs.overflow, rem, axes, i, mesh);
            }
        }
    }
    let (replicated, unreduced, reduction) = match sharding {
        Some(s) => (s.replicated.clone(), s.unreduced.clone(), s.reduction),
        None => (Vec::new(), Vec::new(), Reduction::Sum),
    };
    TensorFactorShardings { factors, replicated, unreduced, reduction }
}

/// The factor shardings of all operands and results of an op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projection {
    pub operands: Vec<TensorFactorShardings>,
    pub results: Vec<TensorFactorShardings>,
}

impl Projection {
    pub fn build(
        operands: &[Option<TensorSharding>],
        results: &[Option<TensorSharding>],
        rule: &OpShardingRule,
        mesh: &Mesh,
        closed_if_missing: bool,
    ) -> Projection {
        fn refs(ss: &[Option<TensorSharding>]) -> Vec<Option<&TensorSharding>> {
            ss.iter().map(Option::as_ref).collect()
        }
        Projection::build_refs(&refs(operands), &refs(results), rule, mesh, closed_if_missing)
    }

    /// [`Projection::build`] from borrowed shardings.
    pub fn build_refs(
        operands: &[Option<&TensorSharding>],
        results: &[Option<&TensorSharding>],
        rule: &OpShardingRule,
        mesh: &Mesh,
        closed_if_missing: bool,
    ) -> Projection {
        let proj = |ms: &[TensorMapping], ss: &[Option<&TensorSharding>]| {
            ms.iter()
                .enumerate()
                .map(|(i, m)| {
                    project_tensor(
                        m,
                        ss.get(i).copied().flatten(),
                        &rule.factor_sizes,
                        mesh,
                        closed_if_missing,
                    )
                })
                .collect::<Vec<_>>()
        };
        Projection {
            operands: proj(&rule.operands, operands),
            results: proj(&rule.results, results),
        }
    }

    pub fn num_operands(&self) -> usize {
        self.operands.len()
    }
    pub fn tensors(&self) -> impl Iterator<Item = &TensorFactorShardings> {
        self.operands.iter().chain(self.results.iter())
    }
    pub fn tensor(&self, i: usize) -> &TensorFactorShardings {
        if i < self.operands.len() {
            &self.operands[i]
        } else {
            &self.results[i - self.operands.len()]
        }
    }
    pub fn tensor_mut(&mut self, i: usize) -> &mut TensorFactorShardings {
        let n = self.operands.len();
        if i < n {
            &mut self.operands[i]
        } else {
            &mut self.results[i - n]
        }
    }
    pub fn num_tensors(&self) -> usize {
        self.operands.len() + self.results.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_and_back() {
        let mesh = Mesh { axes: vec![("x".into(), 4), ("y".into(), 2)], device_ids: vec![] };
        let rule = OpShardingRule {
            factor_sizes: vec![2, 4],
            operands: vec![vec![vec![0, 1]]],
            results: vec![vec![vec![0], vec![1]]],
            ..Default::default()
        };
        let s = TensorSharding {
            mesh: MeshRef::Symbol("m".into()),
            dims: vec![DimSharding {
                axes: vec![AxisRef::full("x"), AxisRef::full("y")],
                open: false,
                priority: None,
            }],
            replicated: vec![],
            unreduced: vec![],
            reduction: Reduction::Sum,
        };
        let p = Projection::build(&[Some(s.clone())], &[None], &rule, &mesh, false);
        let op = &p.operands[0];
        assert_eq!(op.factor(0).unwrap().axes, vec![sub_axis("x", 1, 2)]);
        assert_eq!(op.factor(1).unwrap().axes, vec![sub_axis("x", 2, 2), AxisRef::full("y")]);
        let back = op.to_sharding(&rule.operands[0], &rule.factor_sizes, &s.mesh, &mesh);
        assert_eq!(back, s);
        let mut r = p.results[0].clone();
        r.expand(0, &[sub_axis("x", 1, 2)]);
        r.expand(1, &[sub_axis("x", 2, 2), AxisRef::full("y")]);
        let back = r.to_sharding(&rule.results[0], &rule.factor_sizes, &s.mesh, &mesh);
        assert_eq!(back.attr(), r#"#sdy.sharding<@m, [{"x":(1)2, ?}, {"x":(2)2, "y", ?}]>"#);
    }
}
