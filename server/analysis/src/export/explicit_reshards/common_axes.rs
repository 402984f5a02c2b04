//! Shardy's `findCommonAxes`: one sharding per factor that every operand and result
//! of an op is then resharded to (the full version of explicit reshards).

use crate::propagation::projection::Projection;
use crate::rules::{FactorType, OpShardingRule};
use crate::sharding::axis;
use crate::sharding::{AxisRef, Mesh};

type Axes = Vec<AxisRef>;

fn size(axes: &[AxisRef], mesh: &Mesh) -> i64 {
    axis::total_size(axes, mesh)
}

/// `AxisListRef::operator<`: by length, then lexicographic by `axis_lt`.
fn list_lt(a: &[AxisRef], b: &[AxisRef]) -> bool {
    if a.len() != b.len() {
        return a.len() < b.len();
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return axis::axis_lt(x, y);
        }
    }
    false
}

/// `AxisListRef::strictPrefixOf`.
fn strict_prefix(a: &[AxisRef], b: &[AxisRef]) -> bool {
    if a.is_empty() {
        return !b.is_empty();
    }
    if a.len() > b.len() {
        return false;
    }
    let n = a.len();
    if a[..n - 1] != b[..n - 1] {
        return false;
    }
    if a.len() == b.len() {
        return axis::strict_prefix_of(&a[n - 1], &b[n - 1]);
    }
    axis::prefix_of(&a[n - 1], &b[n - 1])
}

/// `AxisListRef::truncateWithoutOverlap`: returns whether `a` was cut.
fn truncate_without_overlap(a: &mut Axes, other: &[AxisRef]) -> bool {
    for i in 0..a.len() {
        let p = axis::prefix_without_overlap_all(&a[i], other);
        if p.as_ref() != Some(&a[i]) {
            match p {
                Some(p) => {
                    a.truncate(i);
                    a.push(p);
                }
                None => a.truncate(i),
            }
            return true;
        }
    }
    false
}

fn precedence(t: FactorType) -> i64 {
    match t {
        FactorType::PassThrough => 3,
        FactorType::Reduction => 2,
        FactorType::Permutation => 1,
        FactorType::NeedReplication => 0,
    }
}

#[derive(Clone, Debug)]
struct Candidate {
    factor: usize,
    axes: Axes,
    source_size: i64,
    sharding_size: i64,
    precedence: i64,
}

impl Candidate {
    /// Shardy's candidate order.
    fn lt(&self, o: &Candidate) -> bool {
        let a = (self.source_size, self.precedence, self.sharding_size);
        let b = (o.source_size, o.precedence, o.sharding_size);
        if a != b {
            return a < b;
        }
        if self.factor != o.factor {
            return self.factor < o.factor;
        }
        list_lt(&self.axes, &o.axes)
    }
}

/// The common axes when every factor is sharded the same way everywhere (and
/// need-replication factors are unsharded, no axis used twice).
fn compatible_factor_shardings(p: &Projection, rule: &OpShardingRule) -> Option<Vec<Axes>> {
    let mut out = vec![Vec::new(); rule.factor_sizes.len()];
    let mut seen: Axes = Vec::new();
    for (f, slot) in out.iter_mut().enumerate() {
        let c = compatible_factor_sharding(p, f)?;
        if rule.need_replication.contains(&f) {
            if !c.is_empty() {
                return None;
            }
            continue;
        }
        if c.iter().any(|a| seen.iter().any(|s| axis::overlaps(a, s))) {
            return None;
        }
        seen.extend(c.iter().cloned());
        *slot = c;
    }
    Some(out)
}

/// `getCompatibleFactorSharding`: the axes of factor `f` when every tensor that has
/// it is sharded alike along it (none when no tensor has it).
pub fn compatible_factor_sharding(p: &Projection, f: usize) -> Option<Axes> {
    let mut common: Option<&Axes> = None;
    for fs in p.tensors().filter_map(|t| t.factor(f)) {
        match common {
            None => common = Some(&fs.axes),
            Some(c) if *c != fs.axes => return None,
            _ => {}
        }
    }
    Some(common.cloned().unwrap_or_default())
}

fn in_all_non_scalar(rule: &OpShardingRule, f: usize) -> bool {
    rule.tensors().filter(|m| !m.is_empty()).all(|m| m.iter().any(|d| d.contains(&f)))
}

fn heuristic(p: &Projection, rule: &OpShardingRule, sizes: &[i64], mesh: &Mesh) -> Vec<Axes> {
    let n = rule.factor_sizes.len();
    let mut assigned: Vec<Axes> = vec![Vec::new(); n];
    // Candidates: every factor sharding and its non-empty prefixes.
    let mut cands: Vec<Candidate> = Vec::new();
    for t in p.tensors() {
        for (f, fs) in t.factors.iter().enumerate() {
            let Some(fs) = fs else { continue };
            let mut axes = fs.axes.clone();
            while !axes.is_empty() {
                if !cands.iter().any(|c| c.factor == f && c.axes == axes) {
                    cands.push(Candidate {
                        factor: f,
                        axes: axes.clone(),
                        source_size: 0,
                        sharding_size: size(&axes, mesh),
                        precedence: precedence(rule.factor_type(f)),
                    });
                }
                axes.pop();
            }
        }
    }
    for (t, &ts) in p.tensors().zip(sizes) {
        for (f, fs) in t.factors.iter().enumerate() {
            let Some(fs) = fs else { continue };
            for c in cands.iter_mut() {
                if c.factor == f && (fs.axes == c.axes || strict_prefix(&c.axes, &fs.axes)) {
                    c.source_size += ts;
                }
            }
        }
    }
    // Dependencies: a factor right after another in a dimension waits for it to be
    // fully sharded.
    let mut deps: Vec<Option<Vec<bool>>> = vec![None; n];
    for m in rule.tensors() {
        for d in m {
            for w in d.windows(2) {
                deps[w[1]].get_or_insert_with(|| vec![false; n])[w[0]] = true;
            }
        }
    }
    let valid = |c: &Candidate, deps: &Vec<Option<Vec<bool>>>| {
        deps[c.factor].as_ref().is_none_or(|d| d.iter().all(|x| !x))
    };
    while !cands.is_empty() {
        let mut best: Option<Candidate> = None;
        for c in &cands {
            if valid(c, &deps) && best.as_ref().is_none_or(|b| b.lt(c)) {
                best = Some(c.clone());
            }
        }
        let Some(best) = best else { break };
        assigned[best.factor] = best.axes.clone();
        if size(&best.axes, mesh) == rule.factor_sizes[best.factor] {
            for d in deps.iter_mut().flatten() {
                d[best.factor] = false;
            }
        }
        let mut i = 0;
        while i < cands.len() {
            if cands[i].factor == best.factor {
                if !strict_prefix(&best.axes, &cands[i].axes) {
                    let last = cands.pop().expect("non-empty");
                    if i < cands.len() {
                        cands[i] = last;
                    }
                } else {
                    cands[i].sharding_size =
                        size(&cands[i].axes, mesh) / size(&best.axes, mesh).max(1);
                    i += 1;
                }
                continue;
            }
            let mut axes = cands[i].axes.clone();
            if truncate_without_overlap(&mut axes, &best.axes) {
                cands[i].axes = axes;
                let f = cands[i].factor;
                if cands[i].axes == assigned[f] {
                    let last = cands.pop().expect("non-empty");
                    if i < cands.len() {
                        cands[i] = last;
                    }
                } else {
                    cands[i].sharding_size =
                        size(&cands[i].axes, mesh) / size(&assigned[f], mesh).max(1);
                    i += 1;
                }
                continue;
            }
            cands[i].sharding_size = size(&cands[i].axes, mesh);
            i += 1;
        }
    }
    assigned
}

fn unary(p: &Projection, rule: &OpShardingRule, sizes: &[i64], mesh: &Mesh) -> Vec<Axes> {
    let idx: Vec<usize> =
        rule.tensors().enumerate().filter(|(_, m)| !m.is_empty()).map(|(i, _)| i).collect();
    let (l, r) = (idx[0], idx[1]);
    let pref = |i: usize| {
        let t = p.tensor(i);
        let permuted = t.factors.iter().enumerate().any(|(f, fs)| {
            fs.as_ref().is_some_and(|fs| rule.permutation.contains(&f) && !fs.axes.is_empty())
        });
        let sharding: i64 = t
            .factors
            .iter()
            .flatten()
            .map(|fs| size(&fs.axes, mesh) * size(&fs.overflow, mesh))
            .product();
        (!permuted, sizes[i], sharding)
    };
    let (preferred, other) = if pref(l) >= pref(r) { (l, r) } else { (r, l) };
    let mut out = vec![Vec::new(); rule.factor_sizes.len()];
    let mut used: Axes = Vec::new();
    for (f, fs) in p.tensor(preferred).factors.iter().enumerate() {
        if let Some(fs) = fs {
            out[f] = fs.axes.clone();
            used.extend(fs.axes.iter().cloned());
        }
    }
    for (f, fs) in p.tensor(other).factors.iter().enumerate() {
        let Some(fs) = fs else { continue };
        if p.tensor(preferred).factor(f).is_some() {
            continue;
        }
        let mut axes = fs.axes.clone();
        for i in 0..axes.len() {
            match axis::prefix_without_overlap_all(&axes[i], &used) {
                None => {
                    axes.truncate(i);
                    break;
                }
                Some(x) if x != axes[i] => {
                    axes[i] = x;
                    axes.truncate(i + 1);
                    break;
                }
                _ => {}
            }
        }
        out[f] = axes;
    }
    out
}

fn distribute_to_batching(rule: &OpShardingRule, mesh: &Mesh, common: &mut [Axes]) {
    for &nr in &rule.need_replication {
        let mut to_distribute = std::mem::take(&mut common[nr]);
        if !in_all_non_scalar(rule, nr) || to_distribute.is_empty() {
            continue;
        }
        for (f, &fsize) in rule.factor_sizes.iter().enumerate() {
            if !(rule.is_pass_through(f) && in_all_non_scalar(rule, f)) {
                continue;
            }
            if fsize == 0 {
                continue;
            }
            let ssize = size(&common[f], mesh);
            if ssize == 0 || fsize % ssize != 0 {
                continue;
            }
            let mut capacity = fsize / ssize;
            while !to_distribute.is_empty() {
                let a = to_distribute[0].clone();
                let asz = axis::size(&a, mesh);
                if asz == 0 || capacity % asz != 0 {
                    break;
                }
                axis::add_axis_or_merge(&mut common[f], a, mesh);
                capacity /= asz;
                to_distribute.remove(0);
            }
            if to_distribute.is_empty() {
                break;
            }
        }
    }
}

/// `findCommonAxes`.
pub fn find_common_axes(
    p: &Projection,
    rule: &OpShardingRule,
    sizes: &[i64],
    mesh: &Mesh,
) -> Vec<Axes> {
    if let Some(c) = compatible_factor_shardings(p, rule) {
        return c;
    }
    let non_scalar = rule.tensors().filter(|m| !m.is_empty()).count();
    let multi = rule.tensors().any(|m| m.iter().any(|d| d.len() > 1));
    if non_scalar == 2 && rule.need_replication.is_empty() && !multi {
        return unary(p, rule, sizes, mesh);
    }
    let mut c = heuristic(p, rule, sizes, mesh);
    if !rule.need_replication.is_empty() {
        distribute_to_batching(rule, mesh, &mut c);
    }
    c
}

/// Applies the common axes to every tensor (`updateSharding`); returns which
/// operands and results changed.
pub fn update_projection(p: &mut Projection, common: &[Axes]) -> (Vec<bool>, Vec<bool>) {
    let mut ops = vec![false; p.operands.len()];
    let mut res = vec![false; p.results.len()];
    // Tensors with overflow axes are always updated.
    for (i, t) in p.operands.iter().enumerate() {
        ops[i] |= t.factors.iter().flatten().any(|fs| !fs.overflow.is_empty());
    }
    for (i, t) in p.results.iter().enumerate() {
        res[i] |= t.factors.iter().flatten().any(|fs| !fs.overflow.is_empty());
    }
    for (f, axes) in common.iter().enumerate() {
        for (i, t) in p.operands.iter_mut().enumerate() {
            if let Some(Some(fs)) = t.factors.get_mut(f) {
                if fs.axes != *axes || !fs.overflow.is_empty() {
                    fs.axes = axes.clone();
                    fs.overflow.clear();
                    ops[i] = true;
                }
            }
        }
        for (i, t) in p.results.iter_mut().enumerate() {
            if let Some(Some(fs)) = t.factors.get_mut(f) {
                if fs.axes != *axes || !fs.overflow.is_empty() {
                    fs.axes = axes.clone();
                    fs.overflow.clear();
                    res[i] = true;
                }
            }
        }
    }
    (ops, res)
}
