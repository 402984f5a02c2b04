//! Propagating axes along factors (Shardy's `BasicFactorPropagation` and
//! `AggressiveFactorPropagation`), on a [`Projection`].

use super::projection::{FactorSharding, Projection, TensorFactorShardings};
use crate::sharding::axis::{self, is_strict_prefix, list_prefix_status, PrefixStatus};
use crate::sharding::{AxisRef, Mesh};

/// In which direction a factor may propagate: forward lets operands extend results,
/// backward lets results extend operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    None = 0,
    Forward = 1,
    Backward = 2,
    Both = 3,
}

impl Direction {
    fn forward_and_backward(a: Direction, b: Direction) -> bool {
        matches!(
            (a, b),
            (Direction::Forward, Direction::Backward) | (Direction::Backward, Direction::Forward)
        )
    }
    pub fn union(self, other: Direction) -> Direction {
        if Self::forward_and_backward(self, other) {
            Direction::Both
        } else {
            self.max(other)
        }
    }
    pub fn intersect(self, other: Direction) -> Direction {
        if Self::forward_and_backward(self, other) {
            Direction::None
        } else {
            self.min(other)
        }
    }
    /// `FORWARD`, `BACKWARD`, `BOTH`, `NONE` (the `allowed_direction` spelling).
    pub fn parse(s: &str) -> Option<Direction> {
        Some(match s {
            "NONE" => Direction::None,
            "FORWARD" => Direction::Forward,
            "BACKWARD" => Direction::Backward,
            "BOTH" => Direction::Both,
            _ => return None,
        })
    }
}

/// The factor propagation strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactorPropagation {
    Basic,
    Aggressive,
}

/// Which tensors changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Updated {
    pub operands: Vec<bool>,
    pub results: Vec<bool>,
}

impl Updated {
    fn new(p: &Projection) -> Updated {
        Updated { operands: vec![false; p.operands.len()], results: vec![false; p.results.len()] }
    }
    pub fn any(&self) -> bool {
        self.operands.iter().chain(&self.results).any(|&b| b)
    }
}

/// Combines the running compatible axes `acc` with a tensor's `new` axes, in place;
/// returns whether later tensors may still extend them.
fn compatible_major_axes_internal(
    acc: &mut Vec<AxisRef>,
    new: &[AxisRef],
    can_expand: bool,
) -> bool {
    let common = acc.len().min(new.len());
    for k in 0..common {
        let (o, n) = (&acc[k], &new[k]);
        if n.name != o.name {
            acc.truncate(k);
            return false;
        }
        if n.sub == o.sub {
            continue;
        }
        if axis::prefix_of(n, o) {
            if k + 1 < new.len() {
                acc[k] = n.clone();
                acc.truncate(k + 1);
                return false;
            }
        } else if axis::prefix_of(o, n) {
            if !can_expand || k + 1 < acc.len() {
                acc.truncate(k + 1);
                return false;
            }
            acc[k] = n.clone();
        } else {
            acc.truncate(k);
            return false;
        }
    }
    if can_expand {
        acc.extend_from_slice(&new[common..]);
    }
    can_expand
}

/// The longest compatible prefix of axes of factor `f` across tensors, ignoring
/// conflicts with other factors and replicated axes (`getCompatibleMajorAxes`).
pub fn compatible_major_axes(p: &Projection, f: usize, dir: Direction) -> Vec<AxisRef> {
    let (first, second) = match dir {
        Direction::None => return Vec::new(),
        Direction::Both | Direction::Forward => (&p.operands, &p.results),
        Direction::Backward => (&p.results, &p.operands),
    };
    let mut result: Vec<AxisRef> = Vec::new();
    let mut can_expand = true;
    let fold = |tensors: &Vec<TensorFactorShardings>, result: &mut Vec<AxisRef>, ce: &mut bool| {
        for t in tensors {
            if let Some(fs) = t.factor(f) {
                *ce = compatible_major_axes_internal(result, &fs.axes, *ce);
            }
        }
    };
    fold(first, &mut result, &mut can_expand);
    if dir != Direction::Both {
        can_expand = false;
    }
    fold(second, &mut result, &mut can_expand);
    result
}

/// The largest prefix of `a` that overlaps no axis (or overflow axis) of the other
/// factors of the tensor.
pub fn prefix_no_conflicts_across_factors(
    a: &AxisRef,
    factors: &[Option<FactorSharding>],
    f: usize,
) -> Option<AxisRef> {
    let mut r = a.clone();
    for (g, fs) in factors.iter().enumerate() {
        let Some(fs) = fs else { continue };
        if g == f {
            continue;
        }
        r = axis::prefix_without_overlap_all(&r, &fs.overflow)?;
        r = axis::prefix_without_overlap_all(&r, &fs.axes)?;
    }
    Some(r)
}

/// The largest prefix of `a` compatible with factor `fs` of a tensor: not replicated
/// or unreduced, and either already in the factor or allowed to extend it (open, no
/// overflow, minor-most or dividing the factor size).
#[allow(clippy::too_many_arguments)]
pub fn prefix_no_conflicts_within_factor(
    a: &AxisRef,
    replicated: &[AxisRef],
    unreduced: &[AxisRef],
    fs: &FactorSharding,
    prev_sharded: i64,
    factor_size: i64,
    mesh: &Mesh,
) -> Option<AxisRef> {
    let mut r = axis::prefix_without_overlap_all(a, replicated)?;
    r = axis::prefix_without_overlap_all(&r, unreduced)?;
    if fs.axes.iter().any(|x| axis::contains(x, &r)) {
        return Some(r);
    }
    if !fs.closed && fs.overflow.is_empty() {
        if fs.minor_most {
            return Some(r);
        }
        if prev_sharded != 0 && factor_size % prev_sharded == 0 {
            let size = axis::size(&r, mesh);
            let g = gcd(factor_size / prev_sharded, size);
            if g == size {
                return Some(r);
            }
            if g != 1 {
                return Some(axis::sub_axis(&r.name, axis::pre_size(&r), g));
            }
        }
    }
    match fs.axes.last() {
        Some(last) if axis::prefix_of(last, &r) => Some(last.clone()),
        _ => None,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Cuts `axes` at the first axis `remove` changes (Shardy's
/// `truncateAxesByRemovingConflicts`).
pub fn truncate_by_removing_conflicts(
    axes: &mut Vec<AxisRef>,
    mut remove: impl FnMut(&AxisRef, i64) -> Option<AxisRef>,
    mesh: &Mesh,
    conservative: bool,
) {
    let mut prev = 1i64;
    for i in 0..axes.len() {
        let new = remove(&axes[i], prev);
        let Some(new) = new.filter(|n| !(conservative && n.sub.is_some())) else {
            axes.truncate(i);
            return;
        };
        if axes[i] != new {
            axes[i] = new;
            axes.truncate(i + 1);
            return;
        }
        prev = prev.saturating_mul(axis::size(&axes[i], mesh));
    }
}

fn compatible_prefix_tensor(
    a: &AxisRef,
    t: &TensorFactorShardings,
    f: usize,
    prev: i64,
    factor_size: i64,
    mesh: &Mesh,
) -> Option<AxisRef> {
    let r = prefix_no_conflicts_across_factors(a, &t.factors, f)?;
    match t.factor(f) {
        None => Some(r),
        Some(fs) => prefix_no_conflicts_within_factor(
            &r,
            &t.replicated,
            &t.unreduced,
            fs,
            prev,
            factor_size,
            mesh,
        ),
    }
}

/// Basic strategy step 1 + 2: the compatible axes of factor `f`, cut at the first
/// conflict with any tensor.
pub fn compatible_major_sharding_axes(
    p: &Projection,
    f: usize,
    dir: Direction,
    factor_size: i64,
    mesh: &Mesh,
    conservative: bool,
) -> Vec<AxisRef> {
    let mut axes = compatible_major_axes(p, f, dir);
    truncate_by_removing_conflicts(
        &mut axes,
        |a, prev| {
            let mut r = a.clone();
            for t in p.tensors() {
                r = compatible_prefix_tensor(&r, t, f, prev, factor_size, mesh)?;
            }
            Some(r)
        },
        mesh,
        conservative,
    );
    axes
}

/// Basic strategy: every factor independently; all tensors get the same axes.
pub fn propagate_basic(
    p: &mut Projection,
    dir: &dyn Fn(usize) -> Direction,
    factor_sizes: &[i64],
    mesh: &Mesh,
    conservative: bool,
) -> Updated {
    let mut up = Updated::new(p);
    for (f, &size) in factor_sizes.iter().enumerate() {
        let axes = compatible_major_sharding_axes(p, f, dir(f), size, mesh, conservative);
        for (i, t) in p.operands.iter_mut().enumerate() {
            up.operands[i] |= t.expand(f, &axes);
        }
        for (i, t) in p.results.iter_mut().enumerate() {
            up.results[i] |= t.expand(f, &axes);
        }
    }
    up
}

/// For each factor with candidate axes: the source tensor (index, size) — a tensor
/// whose axes are a prefix of the candidates; the largest such tensor.
fn factor_sources(p: &Projection, factor_sizes: &[i64], axes: &[Vec<AxisRef>]) -> Vec<(i64, i64)> {
    let mut src = vec![(-1i64, -1i64); factor_sizes.len()];
    for (ti, t) in p.tensors().enumerate() {
        let size = t.tensor_size(factor_sizes);
        for (f, fs) in t.factors.iter().enumerate() {
            let Some(fs) = fs else { continue };
            let is_source = !axes[f].is_empty()
                && list_prefix_status(&axes[f], &fs.axes) != PrefixStatus::NotAPrefix;
            if is_source && size > src[f].1 {
                src[f] = (ti as i64, size);
            }
        }
    }
    src
}

/// What the aggressive strategy gives factor `f` of tensor `t` (in its current state).
fn propagated_factor_sharding(
    f: usize,
    t: &TensorFactorShardings,
    candidates: &[AxisRef],
    mesh: &Mesh,
    conservative: bool,
    factor_size: i64,
) -> Vec<AxisRef> {
    let Some(fs) = t.factor(f) else { return Vec::new() };
    // Truncating only shortens the candidates or cuts their last axis to a prefix, so
    // the factor's axes can end up a strict prefix only if they already are one of the
    // candidates: the common case of a converged factor is decided without copies.
    if !is_strict_prefix(&fs.axes, candidates) {
        return Vec::new();
    }
    let mut new = candidates.to_vec();
    truncate_by_removing_conflicts(
        &mut new,
        |a, prev| {
            prefix_no_conflicts_within_factor(
                a,
                &t.replicated,
                &t.unreduced,
                fs,
                prev,
                factor_size,
                mesh,
            )
        },
        mesh,
        conservative,
    );
    if !is_strict_prefix(&fs.axes, &new) {
        return Vec::new();
    }
    truncate_by_removing_conflicts(
        &mut new,
        |a, _| prefix_no_conflicts_across_factors(a, &t.factors, f),
        mesh,
        conservative,
    );
    new
}

/// Aggressive strategy: conflicts are resolved per tensor, factors ordered by the size
/// of their source tensor (then, for element-wise ops, by sharding size).
pub fn propagate_aggressive(
    p: &mut Projection,
    dir: &dyn Fn(usize) -> Direction,
    factor_sizes: &[i64],
    mesh: &Mesh,
    conservative: bool,
    elementwise: bool,
) -> Updated {
    let mut up = Updated::new(p);
    let n = factor_sizes.len();
    let axes: Vec<Vec<AxisRef>> = (0..n).map(|f| compatible_major_axes(p, f, dir(f))).collect();
    if axes.iter().all(Vec::is_empty) {
        return up;
    }
    // Only a factor whose axes are a strict prefix of its candidates can grow (see
    // `propagated_factor_sharding`); a factor grows only by its own candidates.
    let can_grow = |t: &TensorFactorShardings| {
        t.factors
            .iter()
            .zip(&axes)
            .any(|(fs, a)| fs.as_ref().is_some_and(|fs| is_strict_prefix(&fs.axes, a)))
    };
    if !p.tensors().any(can_grow) {
        return up;
    }
    let sources = factor_sources(p, factor_sizes, &axes);
    let mut order: Vec<usize> = (0..n).collect();
    let key = |f: usize| {
        let sharding = if elementwise { axis::total_size(&axes[f], mesh) } else { 0 };
        (-sources[f].1, -sharding, sources[f].0, f as i64)
    };
    order.sort_by_key(|&f| key(f));

    for ri in 0..p.results.len() {
        let mut updated = false;
        for &f in &order {
            let new = propagated_factor_sharding(
                f,
                &p.results[ri],
                &axes[f],
                mesh,
                conservative,
                factor_sizes[f],
            );
            if new.is_empty() {
                continue;
            }
            updated |= p.results[ri].expand(f, &new);
        }
        up.results[ri] = updated;
    }
    for oi in 0..p.operands.len() {
        let mut updated = false;
        for &f in &order {
            let mut new = propagated_factor_sharding(
                f,
                &p.operands[oi],
                &axes[f],
                mesh,
                conservative,
                factor_sizes[f],
            );
            if new.is_empty() {
                continue;
            }
            if elementwise {
                for r in &p.results {
                    if let Some(rf) = r.factor(f) {
                        if list_prefix_status(&rf.axes, &new) == PrefixStatus::StrictPrefix {
                            new = rf.axes.clone();
                        }
                    }
                }
            }
            updated |= p.operands[oi].expand(f, &new);
        }
        up.operands[oi] = updated;
    }
    up
}
