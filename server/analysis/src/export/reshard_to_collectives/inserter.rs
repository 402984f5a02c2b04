//! Shardy's `CollectiveInserter`: the sequence of collectives that turns one sharding
//! into another. Works on axis lists only (no IR), so the cost view and tests can use it.
//!
//! State: `ins`/`outs` are the current and the wanted axes per dimension with their
//! common prefix removed (the diff still to do); `current` is the current sharding's
//! axes, prefix included. Each round tries, in this order, an all-slice (shrinks the
//! tensor), a collective permute (same size, one peer per device), all-to-alls (same
//! size; first only those landing at the right place in the target dimension), and an
//! all-gather (grows it); two rounds always suffice (one when axis sizes divide each
//! other). Each collective's out sharding is the current sharding after it.

use super::super::axis_lists::{align_both, align_sub_axes_per_dim};
use crate::ir::sdy::AllToAllParam;
use crate::sharding::axis::prefix_without_overlap;
use crate::sharding::axis::{add_axis_or_merge, next_pre_or_full, pre_size, size, sub_axis};
use crate::sharding::{AxisRef, DimSharding, Mesh, MeshRef, TensorSharding};

/// What a collective does, per kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `sdy.all_slice`: the slicing axes per dimension.
    AllSlice(Vec<Vec<AxisRef>>),
    /// `sdy.collective_permute`.
    Permute,
    /// `sdy.all_to_all` with one parameter.
    AllToAll(AllToAllParam),
    /// `sdy.all_gather`: the gathering axes per dimension.
    AllGather(Vec<Vec<AxisRef>>),
}

/// One collective of a reshard: its step and its `out_sharding`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub step: Step,
    pub out: TensorSharding,
}

type Axes = Vec<AxisRef>;

struct Inserter<'a> {
    mesh: &'a Mesh,
    shape: &'a [i64],
    cur_mesh: MeshRef,
    out_mesh: MeshRef,
    unreduced: Axes,
    ins: Vec<Axes>,
    outs: Vec<Axes>,
    current: Vec<Axes>,
    capacity: Vec<i64>,
    /// The axes of `ins`, kept up to date where Shardy keeps its set up to date.
    in_set: Axes,
    /// Where each out axis was (dimension, index) when last recomputed: Shardy's map
    /// goes stale between recomputations, and its answers are what decide.
    out_at: Vec<(AxisRef, usize, usize)>,
    steps: Vec<Planned>,
}

/// `getAxisWithinCapacity`: the part of `axis` that fits in `capacity` and the rest.
fn within_capacity(
    axis: &AxisRef,
    capacity: &mut i64,
    mesh: &Mesh,
) -> Option<(AxisRef, Option<AxisRef>)> {
    let s = size(axis, mesh);
    if *capacity <= 1 || !(s % *capacity == 0 || *capacity % s == 0) {
        return None;
    }
    if *capacity >= s {
        *capacity /= s;
        return Some((axis.clone(), None));
    }
    let within = sub_axis(&axis.name, pre_size(axis), *capacity);
    let rest = sub_axis(&axis.name, next_pre_or_full(&within, mesh), s / *capacity);
    *capacity = 1;
    Some((within, Some(rest)))
}

fn divisible(a: i64, b: i64) -> bool {
    a != 0 && b != 0 && (a % b == 0 || b % a == 0)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs().max(1)
    } else {
        gcd(b, a % b)
    }
}

/// Removes `to_pop` (the back of the in axes, possibly sub-axes of the current ones)
/// from the back of `current`.
fn pop_back(current: &mut Axes, to_pop: &[AxisRef]) {
    for a in to_pop.iter().rev() {
        let Some(back) = current.last_mut() else { return };
        match prefix_without_overlap(back, a) {
            Some(p) => *back = p,
            None => {
                current.pop();
            }
        }
    }
}

fn sharded_size(axes: &[AxisRef], mesh: &Mesh) -> i64 {
    axes.iter().map(|a| size(a, mesh)).product()
}

/// Where the available axes of [`Inserter::distribute`] come from.
enum Available<'l> {
    /// One list for every dimension.
    Shared(&'l mut Axes),
    /// A list per dimension.
    PerDim(&'l mut [Axes]),
}

impl Inserter<'_> {
    fn rank(&self) -> usize {
        self.ins.len()
    }

    fn out_pos(&self, a: &AxisRef) -> Option<(usize, usize)> {
        self.out_at.iter().find(|(x, _, _)| x == a).map(|&(_, d, i)| (d, i))
    }

    fn rebuild_out_at(&mut self) {
        self.out_at.clear();
        for (d, axes) in self.outs.iter().enumerate() {
            for (i, a) in axes.iter().enumerate() {
                if self.out_pos(a).is_none() {
                    self.out_at.push((a.clone(), d, i));
                }
            }
        }
    }

    fn in_set_has(&self, a: &AxisRef) -> bool {
        self.in_set.contains(a)
    }
    fn in_set_add(&mut self, a: &AxisRef) {
        if !self.in_set_has(a) {
            self.in_set.push(a.clone());
        }
    }
    fn in_set_remove(&mut self, a: &AxisRef) {
        self.in_set.retain(|x| x != a);
    }

    fn done(&self) -> bool {
        self.cur_mesh == self.out_mesh
            && self.ins.iter().all(Vec::is_empty)
            && self.outs.iter().all(Vec::is_empty)
    }

    fn current_sharding(&self) -> TensorSharding {
        TensorSharding {
            mesh: self.cur_mesh.clone(),
            dims: self
                .current
                .iter()
                .map(|axes| DimSharding { axes: axes.clone(), open: false, priority: None })
                .collect(),
            replicated: Vec::new(),
            unreduced: self.unreduced.clone(),
            reduction: crate::sharding::Reduction::Sum,
        }
    }

    fn emit(&mut self, step: Step) {
        let out = self.current_sharding();
        self.steps.push(Planned { step, out });
    }

    fn run(&mut self) {
        for _ in 0..2 {
            if self.done() {
                break;
            }
            self.try_all_slice();
            self.try_collective_permute();
            self.try_all_to_alls(false);
            self.try_all_to_alls(true);
            self.try_all_gather();
        }
    }

    // ----- all-gather -----

    /// The axes to gather on `dim`. Shardy steps its reverse iterator the wrong way
    /// here: when the last in axis is not an out axis it gathers *every* in axis of the
    /// dimension (forgetting only the last in its set), otherwise none.
    fn gathering_axes(&mut self, dim: usize) -> Axes {
        let Some(last) = self.ins[dim].last().cloned() else { return Vec::new() };
        if self.out_pos(&last).is_some() {
            return Vec::new();
        }
        self.in_set_remove(&last);
        let gathered = std::mem::take(&mut self.ins[dim]);
        pop_back(&mut self.current[dim], &gathered);
        let mut axes = Vec::new();
        for a in gathered {
            add_axis_or_merge(&mut axes, a, self.mesh);
        }
        axes
    }

    fn try_all_gather(&mut self) {
        let per_dim: Vec<Axes> = (0..self.rank()).map(|d| self.gathering_axes(d)).collect();
        if per_dim.iter().any(|a| !a.is_empty()) {
            self.emit(Step::AllGather(per_dim));
        }
    }

    // ----- distributing axes within capacity -----

    /// `distributeInAxesWithinCapacity`: per dimension, while it has capacity, takes
    /// available axes that fit (splitting one that is bigger than the capacity) into
    /// its in axes, at the front or the back. Returns the axes taken, per dimension.
    fn distribute(
        &mut self,
        mut available: Available<'_>,
        to_front: bool,
    ) -> Vec<(AxisRef, usize)> {
        let mut taken = Vec::new();
        let mut split = Vec::new();
        for d in 0..self.rank() {
            let mut at = if to_front { 0 } else { self.ins[d].len() };
            let list: &mut Axes = match &mut available {
                Available::Shared(l) => l,
                Available::PerDim(ls) => &mut ls[d],
            };
            let mut k = 0;
            while k < list.len() && self.capacity[d] > 1 {
                let Some((within, rest)) =
                    within_capacity(&list[k], &mut self.capacity[d], self.mesh)
                else {
                    k += 1;
                    continue;
                };
                list.remove(k);
                self.ins[d].insert(at, within.clone());
                at += 1;
                if !self.in_set.contains(&within) {
                    self.in_set.push(within.clone());
                }
                taken.push((within.clone(), d));
                if let Some(rest) = rest {
                    split.push(within);
                    list.insert(0, rest);
                    k += 1;
                }
            }
        }
        // An axis split for capacity: the out axes must be split alike.
        split.sort_by(crate::sharding::axis::axis_cmp);
        align_sub_axes_per_dim(&mut self.outs, &split, self.mesh);
        taken
    }

    // ----- all-slice -----

    /// For a later all-to-all from `src` to the dimension where its last in axis is
    /// wanted, the range of that dimension's out axes to slice at `src` now (which
    /// avoids a collective permute); borrows the target's capacity
    /// (`getAxesToSliceForAllToAll`).
    fn slice_for_all_to_all(&mut self, src: usize) -> Option<(usize, usize, usize)> {
        let src_in = &self.ins[src];
        let back = src_in.last()?;
        if !self.outs[src].is_empty() {
            return None;
        }
        let (tgt, _) = self.out_pos(back)?;
        if !self.ins[tgt].is_empty() {
            return None;
        }
        let tgt_out = &self.outs[tgt];
        // `++find(...)`: past the end of the list wraps to its front.
        let start = tgt_out.iter().position(|a| a == back).map_or(0, |p| p + 1);
        if start >= tgt_out.len() || self.in_set_has(&tgt_out[start]) {
            return None;
        }
        let (mut i, mut o, mut common) = (src_in.len(), start, 1);
        while i > 0 && o > 0 && src_in[i - 1] == tgt_out[o - 1] {
            common *= size(&src_in[i - 1], self.mesh);
            i -= 1;
            o -= 1;
        }
        if src_in[..i].iter().any(|a| self.out_pos(a).is_some_and(|(d, _)| d == tgt)) {
            return None;
        }
        let (mut end, mut added) = (start, 1);
        while end < tgt_out.len() && !self.in_set_has(&tgt_out[end]) {
            added *= size(&tgt_out[end], self.mesh);
            end += 1;
        }
        let new_size = sharded_size(&self.current[src], self.mesh) * added;
        let dim = self.shape.get(src).copied().unwrap_or(0);
        if new_size == 0 || dim % new_size != 0 {
            return None;
        }
        self.capacity[tgt] /= (common * added).max(1);
        Some((tgt, start, end))
    }

    /// `getSlicingAxesPerDim`.
    // Indexed loops: Shardy's zips over several per-dimension lists of `self`.
    #[allow(clippy::needless_range_loop)]
    fn slicing_axes(&mut self) -> Option<Vec<Axes>> {
        let rank = self.rank();
        let mut slicing: Vec<Axes> = vec![Vec::new(); rank];
        let mut any = false;
        for d in 0..rank {
            let (i, o) =
                (sharded_size(&self.ins[d], self.mesh), sharded_size(&self.outs[d], self.mesh));
            self.capacity[d] = o / gcd(i, o);
        }
        // 1. Slice at a source dimension for a later all-to-all.
        for src in 0..rank {
            let Some((tgt, start, end)) = self.slice_for_all_to_all(src) else { continue };
            any = true;
            let sliced: Axes = self.outs[tgt][start..end].to_vec();
            for a in sliced {
                self.ins[src].push(a.clone());
                self.in_set_add(&a);
                add_axis_or_merge(&mut slicing[src], a.clone(), self.mesh);
                add_axis_or_merge(&mut self.current[src], a, self.mesh);
            }
        }
        // 2. Slice out axes in their own dimension, within its capacity.
        let mut available: Axes = Vec::new();
        for d in 0..rank {
            let mut k = 0;
            while k < self.outs[d].len() {
                let a = self.outs[d][k].clone();
                if self.in_set_has(&a) {
                    k += 1;
                    continue;
                }
                let Some((within, rest)) = within_capacity(&a, &mut self.capacity[d], self.mesh)
                else {
                    available.push(a);
                    k += 1;
                    continue;
                };
                any = true;
                add_axis_or_merge(&mut slicing[d], within.clone(), self.mesh);
                add_axis_or_merge(&mut self.current[d], within.clone(), self.mesh);
                if self.ins[d].is_empty() && k == 0 {
                    // Already where it belongs.
                    self.outs[d].remove(0);
                } else {
                    self.in_set_add(&within);
                    self.ins[d].push(within.clone());
                    self.outs[d][k] = within;
                    k += 1;
                }
                if let Some(rest) = rest {
                    self.outs[d].insert(k, rest.clone());
                    available.push(rest);
                    k += 1;
                }
            }
        }
        // 3. The rest in the first dimension with capacity.
        for (a, d) in self.distribute(Available::Shared(&mut available), false) {
            any = true;
            add_axis_or_merge(&mut slicing[d], a.clone(), self.mesh);
            add_axis_or_merge(&mut self.current[d], a, self.mesh);
        }
        self.rebuild_out_at();
        any.then_some(slicing)
    }

    fn try_all_slice(&mut self) {
        if let Some(slicing) = self.slicing_axes() {
            self.emit(Step::AllSlice(slicing));
        }
    }

    // ----- collective permute -----

    /// `shouldCollectivePermute`: in and out axes that can replace each other, or in
    /// axes out of order / not contiguous for where they go.
    fn should_permute(&self) -> bool {
        let mut avail_in: Option<&AxisRef> = None;
        let mut avail_out: Option<&AxisRef> = None;
        for d in 0..self.rank() {
            let (ins, outs) = (&self.ins[d], &self.outs[d]);
            if let (Some(i), Some(o)) = (ins.first(), outs.first()) {
                if divisible(size(i, self.mesh), size(o, self.mesh)) {
                    return true;
                }
            }
            for o in outs {
                if !self.in_set_has(o) {
                    avail_out = Some(o);
                }
            }
            let mut last_dim: Option<usize> = None;
            let mut last_index = 0usize;
            let mut seen = vec![false; self.rank()];
            for a in ins {
                let mut cur_dim = None;
                if let Some((od, oi)) = self.out_pos(a) {
                    cur_dim = Some(od);
                    if (od == d || seen[od]) && (last_dim != Some(od) || oi != last_index + 1) {
                        return true;
                    }
                    seen[od] = true;
                    last_index = oi;
                } else if last_dim.is_some() && outs.is_empty() {
                    return true;
                } else {
                    avail_in = Some(a);
                }
                last_dim = cur_dim;
            }
        }
        match (avail_out, avail_in) {
            (Some(o), Some(i)) => divisible(size(o, self.mesh), size(i, self.mesh)),
            _ => false,
        }
    }

    /// `performCollectivePermute`: per dimension, keeps its sharded size and fills it
    /// with out axes at their place first, then other out axes, then the in axes to be
    /// gathered later (at the front, where they were).
    #[allow(clippy::needless_range_loop)]
    fn perform_permute(&mut self) {
        let rank = self.rank();
        let mut available_out: Axes = Vec::new();
        let mut available_in: Vec<Axes> = vec![Vec::new(); rank];
        self.in_set.clear();
        for d in 0..rank {
            self.capacity[d] = sharded_size(&self.ins[d], self.mesh);
            let mut used = self.capacity[d];
            let ins = self.ins[d].clone();
            pop_back(&mut self.current[d], &ins);
            while self.capacity[d] > 1 && !self.outs[d].is_empty() {
                let Some((within, rest)) =
                    within_capacity(&self.outs[d][0], &mut self.capacity[d], self.mesh)
                else {
                    break;
                };
                self.outs[d].remove(0);
                add_axis_or_merge(&mut self.current[d], within, self.mesh);
                if let Some(rest) = rest {
                    self.outs[d].insert(0, rest);
                }
            }
            available_out.extend(self.outs[d].iter().cloned());
            used /= self.capacity[d].max(1);
            let mut ins: Axes = std::mem::take(&mut self.ins[d])
                .into_iter()
                .filter(|a| self.out_pos(a).is_none())
                .collect();
            while used > 1 && !ins.is_empty() {
                let Some((within, rest)) = within_capacity(&ins[0], &mut used, self.mesh) else {
                    break;
                };
                ins.remove(0);
                available_in[d].push(within);
                if let Some(rest) = rest {
                    ins.insert(0, rest);
                }
            }
            ins.append(&mut available_in[d]);
            available_in[d] = ins;
        }
        self.distribute(Available::Shared(&mut available_out), false);
        self.distribute(Available::PerDim(&mut available_in), true);
        let mut rest: Axes = available_in.into_iter().flatten().collect();
        self.distribute(Available::Shared(&mut rest), true);
        self.rebuild_out_at();
        for d in 0..rank {
            for a in self.ins[d].clone() {
                add_axis_or_merge(&mut self.current[d], a, self.mesh);
            }
        }
    }

    fn try_collective_permute(&mut self) {
        if self.should_permute() {
            self.perform_permute();
        } else if self.cur_mesh == self.out_mesh {
            return;
        }
        // Also when only the device order of the mesh changes.
        self.cur_mesh = self.out_mesh.clone();
        self.emit(Step::Permute);
    }

    // ----- all-to-all -----

    /// `getAllToAllInfo`: the suffix of `src`'s in axes that are all wanted in one
    /// other dimension moves there (only to their exact place unless `out_of_order`).
    fn all_to_all_info(&mut self, src: usize, out_of_order: bool) -> Option<AllToAllParam> {
        let src_in = &self.ins[src];
        let mut k = src_in.len();
        let mut tgt: Option<usize> = None;
        while k > 0 {
            let Some((od, _)) = self.out_pos(&src_in[k - 1]) else { break };
            if od == src || tgt.is_some_and(|t| t != od) {
                break;
            }
            tgt = Some(od);
            k -= 1;
        }
        let tgt = tgt?;
        let moved = &src_in[k..];
        let tgt_out = &self.outs[tgt];
        if !(out_of_order || (tgt_out.len() >= moved.len() && tgt_out[..moved.len()] == *moved)) {
            return None;
        }
        let moved: Axes = self.ins[src].split_off(k);
        pop_back(&mut self.current[src], &moved);
        let mut axes = Vec::new();
        for a in moved {
            add_axis_or_merge(&mut axes, a.clone(), self.mesh);
            add_axis_or_merge(&mut self.current[tgt], a.clone(), self.mesh);
            self.in_set_remove(&a);
            if self.ins[tgt].is_empty() && self.outs[tgt].first() == Some(&a) {
                self.outs[tgt].remove(0);
            } else {
                self.ins[tgt].push(a.clone());
                self.in_set_add(&a);
            }
        }
        Some(AllToAllParam { axes, src_dim: src as i64, tgt_dim: tgt as i64 })
    }

    fn try_all_to_alls(&mut self, out_of_order: bool) {
        for src in 0..self.rank() {
            // Each step removes axes from `src`; the bound only guards against bugs.
            for _ in 0..64 {
                let Some(param) = self.all_to_all_info(src, out_of_order) else { break };
                self.emit(Step::AllToAll(param));
            }
        }
    }
}

/// The collectives that reshard a tensor of `shape` from `from` to `to` (both on
/// `mesh` up to device order; same rank; `to`'s unreduced axes are kept). Empty when
/// the two shardings agree.
pub fn plan(
    from: &TensorSharding,
    to: &TensorSharding,
    shape: &[i64],
    mesh: &Mesh,
) -> Vec<Planned> {
    let axes =
        |s: &TensorSharding| -> Vec<Axes> { s.dims.iter().map(|d| d.axes.clone()).collect() };
    let (mut ins, mut outs) = (axes(from), axes(to));
    align_both(&mut ins, &mut outs, mesh);
    for (i, o) in ins.iter_mut().zip(outs.iter_mut()) {
        let common = i.iter().zip(o.iter()).take_while(|(a, b)| a == b).count();
        i.drain(..common);
        o.drain(..common);
    }
    let mut inserter = Inserter {
        mesh,
        shape,
        cur_mesh: from.mesh.clone(),
        out_mesh: to.mesh.clone(),
        unreduced: to.unreduced.clone(),
        in_set: ins.iter().flatten().cloned().fold(Vec::new(), |mut v, a| {
            if !v.contains(&a) {
                v.push(a);
            }
            v
        }),
        capacity: vec![1; ins.len()],
        current: axes(from),
        ins,
        outs,
        out_at: Vec::new(),
        steps: Vec::new(),
    };
    inserter.rebuild_out_at();
    inserter.run();
    inserter.steps
}
