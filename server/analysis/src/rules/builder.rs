//! Incremental construction of a rule, with the semantics of Shardy's
//! `OpShardingRuleBuilder`: factors are numbered in creation order, the special factor
//! sets follow that order, and every dimension left without a factor gets a size-1
//! factor of its own when the rule is built.

use super::rule::{Factor, FactorType, OpShardingRule, TensorMapping};

/// "This tensor does not have the factor" in per-tensor dimension lists.
pub const NULL: i64 = -1;

pub struct Builder {
    factor_sizes: Vec<i64>,
    operands: Vec<TensorMapping>,
    results: Vec<TensorMapping>,
    reduction: Vec<Factor>,
    need_replication: Vec<Factor>,
    permutation: Vec<Factor>,
    blocked: Vec<Factor>,
}

impl Builder {
    /// A builder for tensors of the given ranks (non-shaped values have rank 0).
    pub fn new(operand_ranks: &[usize], result_ranks: &[usize]) -> Builder {
        Builder {
            factor_sizes: Vec::new(),
            operands: operand_ranks.iter().map(|&r| vec![Vec::new(); r]).collect(),
            results: result_ranks.iter().map(|&r| vec![Vec::new(); r]).collect(),
            reduction: Vec::new(),
            need_replication: Vec::new(),
            permutation: Vec::new(),
            blocked: Vec::new(),
        }
    }

    fn reserve(&mut self, size: i64, ty: FactorType, blocked: bool) -> Factor {
        let f = self.factor_sizes.len();
        self.factor_sizes.push(size);
        if blocked {
            self.blocked.push(f);
        }
        match ty {
            FactorType::Reduction => self.reduction.push(f),
            FactorType::NeedReplication => self.need_replication.push(f),
            FactorType::Permutation => self.permutation.push(f),
            FactorType::PassThrough => {}
        }
        f
    }

    /// A factor mapped to dimension `dims[t]` of tensor `t` (skipping [`NULL`]); a size-1
    /// factor is not added to a dimension that already has factors. Lists shorter than
    /// the tensor count leave the remaining tensors out.
    pub fn factor(
        &mut self,
        operand_dims: &[i64],
        result_dims: &[i64],
        size: i64,
        ty: FactorType,
        blocked: bool,
    ) -> &mut Self {
        let f = self.reserve(size, ty, blocked);
        map_dims(&mut self.operands, operand_dims, f, size);
        map_dims(&mut self.results, result_dims, f, size);
        self
    }

    /// A pass-through factor on `operand_dims` / `result_dims`.
    pub fn pass(&mut self, operand_dims: &[i64], result_dims: &[i64], size: i64) -> &mut Self {
        self.factor(operand_dims, result_dims, size, FactorType::PassThrough, false)
    }

    /// A factor on dimension `dim` of every operand and result of rank > 0.
    pub fn factor_all(
        &mut self,
        dim: usize,
        size: i64,
        ty: FactorType,
        blocked: bool,
    ) -> &mut Self {
        let f = self.reserve(size, ty, blocked);
        map_dim_everywhere(&mut self.operands, dim, f);
        map_dim_everywhere(&mut self.results, dim, f);
        self
    }

    /// A factor on dimension `dim` of every operand of rank > 0.
    pub fn factor_all_operands(&mut self, dim: usize, size: i64, ty: FactorType) -> &mut Self {
        let f = self.reserve(size, ty, false);
        map_dim_everywhere(&mut self.operands, dim, f);
        self
    }

    /// A factor on dimension `dim` of every result of rank > 0.
    pub fn factor_all_results(&mut self, dim: usize, size: i64, ty: FactorType) -> &mut Self {
        let f = self.reserve(size, ty, false);
        map_dim_everywhere(&mut self.results, dim, f);
        self
    }

    /// One factor per dimension of `shape`, on that dimension of every tensor of rank > 0,
    /// typed by `ty(dim)` and blocked when `blocked(type)`.
    pub fn pointwise_with(
        &mut self,
        shape: &[i64],
        ty: impl Fn(usize) -> FactorType,
        blocked: impl Fn(FactorType) -> bool,
    ) -> &mut Self {
        for (dim, &size) in shape.iter().enumerate() {
            let t = ty(dim);
            self.factor_all(dim, size, t, blocked(t));
        }
        self
    }

    /// Pass-through pointwise factors over `shape`.
    pub fn pointwise(&mut self, shape: &[i64]) -> &mut Self {
        self.pointwise_with(shape, |_| FactorType::PassThrough, |_| false)
    }

    /// Pointwise factors over the dimensions of `shape` that satisfy `pred`.
    pub fn pointwise_if(
        &mut self,
        shape: &[i64],
        pred: impl Fn(usize) -> bool,
        ty: impl Fn(usize) -> FactorType,
    ) -> &mut Self {
        for (dim, &size) in shape.iter().enumerate() {
            if pred(dim) {
                self.factor_all(dim, size, ty(dim), false);
            }
        }
        self
    }

    /// Pointwise over `in_shape`; dimensions whose size differs between `in_shape` and
    /// `out_shape` get `mismatch` (and are blocked when `mismatch_blocked`).
    pub fn pointwise_with_mismatch(
        &mut self,
        in_shape: &[i64],
        out_shape: &[i64],
        mismatch: FactorType,
        mismatch_blocked: bool,
    ) -> &mut Self {
        for (dim, (&a, &b)) in in_shape.iter().zip(out_shape).enumerate() {
            if a == b {
                self.factor_all(dim, a, FactorType::PassThrough, false);
            } else {
                self.factor_all(dim, a, mismatch, mismatch_blocked);
            }
        }
        self
    }

    /// The rule; dimensions without a factor get a fresh size-1 factor (operands
    /// first, then results, in dimension order).
    pub fn build(&self) -> OpShardingRule {
        let mut sizes = self.factor_sizes.clone();
        let mut fill = |ms: &[TensorMapping]| -> Vec<TensorMapping> {
            ms.iter()
                .map(|m| {
                    m.iter()
                        .map(|d| {
                            if d.is_empty() {
                                sizes.push(1);
                                vec![sizes.len() - 1]
                            } else {
                                d.clone()
                            }
                        })
                        .collect()
                })
                .collect()
        };
        let operands = fill(&self.operands);
        let results = fill(&self.results);
        OpShardingRule {
            factor_sizes: sizes,
            operands,
            results,
            reduction: self.reduction.clone(),
            need_replication: self.need_replication.clone(),
            permutation: self.permutation.clone(),
            blocked_propagation: self.blocked.clone(),
            is_custom: false,
        }
    }
}

fn map_dims(tensors: &mut [TensorMapping], dims: &[i64], f: Factor, size: i64) {
    for (m, &d) in tensors.iter_mut().zip(dims) {
        let Some(slot) = usize::try_from(d).ok().and_then(|d| m.get_mut(d)) else { continue };
        if size == 1 && !slot.is_empty() {
            continue;
        }
        slot.push(f);
    }
}

fn map_dim_everywhere(tensors: &mut [TensorMapping], dim: usize, f: Factor) {
    for m in tensors.iter_mut() {
        // Rank-0 tensors (and, defensively, tensors too small) are left out.
        if let Some(slot) = m.get_mut(dim) {
            slot.push(f);
        }
    }
}
