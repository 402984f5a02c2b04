//! Patching a model after an edit, so that it equals a fresh build of the new tree.
//!
//! The edit replaces a run of statements of one block (`incremental::TreeEdit`). In the
//! model's canonical order that run's ops are one id range and their values another,
//! so the patch replaces both ranges, moves the ids and positions after them, and
//! resolves the new ops' operands in the scopes around them (replayed from the model,
//! as the build walks them). Uses of the old ops' results from outside the run are
//! linked to the new results of the same names.
//!
//! Edits whose effect reaches beyond the run in other ways are refused (`None`; the
//! caller builds afresh): names defined by the run that change while something outside
//! uses or binds them, and names involved in forward references or undefined uses
//! elsewhere (resolved module-wide by the next definition of the name).

use super::build::{
    fingerprint, group_keys, group_name, resolve_forward, value_types, Layout, Resolver,
};
use super::{Model, OpId, Use, ValueId};
use sdy_syntax::tree::{Children, Str};
use sdy_syntax::Span;
use std::collections::HashSet;
use std::ops::Range;

/// Where a patch put things, and what outside the edit it touched.
#[derive(Clone, Debug, Default)]
pub struct Patched {
    /// Old op ids `old_ops` became `new_ops` (same start); later ids moved.
    pub old_ops: Range<OpId>,
    pub new_ops: Range<OpId>,
    /// Likewise for values.
    pub old_values: Range<ValueId>,
    pub new_values: Range<ValueId>,
    /// Old text positions from here on moved by `delta`.
    pub moved_from: u32,
    pub delta: i64,
    /// Values outside the edit whose uses changed (old ids).
    pub touched_values: Vec<ValueId>,
    /// Ops outside the edit whose operands were linked to the new values (old ids).
    pub relinked_ops: Vec<OpId>,
    /// Meshes whose definition changed, by name.
    pub changed_meshes: Vec<String>,
    /// Whether the module went from having forward references to none or back.
    pub forward_references_flipped: bool,
    /// The old versions of the ops around the edit, to be freed when convenient (they
    /// hold the old lists of all their children).
    pub old_nodes: Vec<std::sync::Arc<sdy_syntax::tree::Op>>,
}

impl Patched {
    /// The new id of old op `o`, unless it was replaced.
    pub fn op(&self, o: OpId) -> Option<OpId> {
        map(o, &self.old_ops, &self.new_ops)
    }
    /// The new id of old value `v`, unless it was replaced.
    pub fn value(&self, v: ValueId) -> Option<ValueId> {
        map(v, &self.old_values, &self.new_values)
    }
    /// Where old position `p` (outside the edit) is now.
    pub fn pos(&self, p: u32) -> u32 {
        shift(p, self.moved_from, self.delta)
    }
}

fn map(id: u32, old: &Range<u32>, new: &Range<u32>) -> Option<u32> {
    if id < old.start {
        Some(id)
    } else if id >= old.end {
        Some((id as i64 + new.end as i64 - old.end as i64) as u32)
    } else {
        None
    }
}

fn shift(p: u32, from: u32, delta: i64) -> u32 {
    if p >= from {
        (p as i64 + delta) as u32
    } else {
        p
    }
}

fn shift_span(s: &mut Span, from: u32, delta: i64) {
    s.start = shift(s.start, from, delta);
    s.end = shift(s.end, from, delta);
}

/// What `Model::patch` needs to know of the edit.
pub struct Edit<'e> {
    /// The ops whose regions hold the edit, outermost first; `region` of the last.
    pub path: &'e [OpId],
    /// Their new versions.
    pub path_nodes: &'e [std::sync::Arc<sdy_syntax::tree::Op>],
    pub region: u32,
    /// The new statements, at offsets relative to `base`.
    pub new: &'e Children,
    pub base: u32,
    /// The old text `[from, to)` became `[from, to + delta)`.
    pub from: u32,
    pub to: u32,
    pub delta: i64,
}

/// A result group as written: name and count.
type Group = (Str, u32);

impl Model {
    /// Replaces what the edit replaced; an error (why) when the edit cannot be patched in
    /// (the model is then left in an unspecified state).
    pub fn patch(&mut self, e: &Edit) -> Result<Patched, &'static str> {
        self.alias_lines.take(); // indexes the old text
        let parent = e.path.last().copied();
        let a = self.ops.partition_point(|o| o.start < e.from) as OpId;
        let b = self.ops.partition_point(|o| o.start < e.to) as OpId;
        let va = self.values.partition_point(|v| v.def.op() < a) as ValueId;
        let vb = self.values.partition_point(|v| v.def.op() < b) as ValueId;
        let in_run = |o: OpId| (a..b).contains(&o);
        let old_run_value = |v: ValueId| (va..vb).contains(&v);
        // The old run's ops must be the statements of that block.
        if (a..b).any(|o| {
            let p = self.ops[o as usize].parent;
            p != parent && !p.is_some_and(in_run)
        }) {
            return Err("the edited statements are not a block's");
        }

        // The new ops, laid out where the old ones were.
        let (mut ops, mut values) = (Vec::new(), Vec::new());
        Layout { ops: &mut ops, values: &mut values, op_base: a, value_base: va }
            .block(e.new, e.base, parent, e.region);
        let direct = |ops: &[super::OpInfo], base: OpId| -> Vec<OpId> {
            (0..ops.len() as OpId)
                .filter(|&i| ops[i as usize].parent == parent)
                .map(|i| base + i)
                .collect()
        };
        let old_direct: Vec<OpId> = direct(&self.ops[a as usize..b as usize], a);
        let new_direct: Vec<OpId> = direct(&ops, a);
        let groups = |ids: &[OpId], ops: &[super::OpInfo]| -> Vec<Group> {
            ids.iter()
                .flat_map(|&id| ops[(id - a) as usize].node.results.iter())
                .map(|g| (g.name.clone(), g.count))
                .collect()
        };
        let old_groups = groups(&old_direct, &self.ops[a as usize..b as usize]);
        let new_groups = groups(&new_direct, &ops);
        let same_names = old_groups == new_groups;

        // Names the run defines (at any depth), old and new: forward references and
        // undefined uses elsewhere are resolved by the next definition module-wide.
        let defined: HashSet<&str> = self.values[va as usize..vb as usize]
            .iter()
            .chain(&values)
            .filter_map(|v| group_name(&v.name))
            .collect();
        fn operand_name<'m>(m: &'m Model, u: &Use) -> Option<&'m str> {
            let op = m.ops.get(u.op as usize)?;
            op.node.operands.get(u.operand as usize).map(|r| r.name.as_str())
        }
        // Those uses are resolved again after the patch (the forward ones unlinked first).
        let elsewhere = self.undefined_uses.iter().chain(&self.forward_references);
        let again: Vec<Use> = elsewhere
            .filter(|u| !in_run(u.op) && operand_name(self, u).is_none_or(|n| defined.contains(n)))
            .copied()
            .collect();
        let scope = match parent {
            Some(p) => p + 1..self.subtree_end(p),
            None => 0..self.ops.len() as OpId,
        };
        if !same_names {
            // A changed name must not matter to anything else in the enclosing scope.
            let names: HashSet<&str> =
                old_groups.iter().chain(&new_groups).map(|(n, _)| n.as_str()).collect();
            for v in &self.values {
                let Some(g) = group_name(&v.name) else { continue };
                if !names.contains(g) {
                    continue;
                }
                let owner = v.def.op();
                if scope.contains(&owner) && !in_run(owner) {
                    return Err("a name the edit changes is defined around it");
                }
                if v.uses.iter().any(|u| scope.contains(&u.op) && !in_run(u.op)) {
                    return Err("a name the edit changes is used around it");
                }
            }
            let unresolved = self.undefined_uses.iter().chain(&self.forward_references);
            if unresolved
                .filter(|u| scope.contains(&u.op) && !in_run(u.op))
                .any(|u| operand_name(self, u).is_none_or(|n| names.contains(n)))
            {
                return Err("a name the edit changes is used undefined around it");
            }
        }
        // Outside uses of the old results, linked to the new results in order.
        let old_results: Vec<ValueId> =
            old_direct.iter().flat_map(|&o| self.ops[o as usize].results.iter().copied()).collect();
        let new_results: Vec<ValueId> = new_direct
            .iter()
            .flat_map(|&o| ops[(o - a) as usize].results.iter().copied())
            .collect();
        let mut relinks: Vec<(Use, ValueId)> = Vec::new();
        let is_again = |u: &Use| again.iter().any(|g| (g.op, g.operand) == (u.op, u.operand));
        for v in va..vb {
            for u in self.values[v as usize].uses.iter().filter(|u| !in_run(u.op) && !is_again(u)) {
                let k = old_results
                    .iter()
                    .position(|&r| r == v)
                    .ok_or("a nested value is used outside")?;
                if !same_names {
                    return Err("a changed name is used outside");
                }
                relinks.push((*u, *new_results.get(k).ok_or("results differ")?));
            }
        }
        let new_run_values: Range<ValueId> = va..va + values.len() as ValueId;
        for &(new, old) in &self.redefinitions {
            if old_run_value(old) && !old_run_value(new) && !old_results.contains(&old) {
                return Err("a nested value is shadowed outside");
            }
        }
        let had_forward = !self.forward_references.is_empty();
        let old_meshes: Vec<(String, Option<super::sharding::Mesh>, bool)> =
            self.mesh_snapshot(&(a..b));

        // ----- from here on the model changes -----
        // Forward references to resolve again: unlinked, undefined for now.
        let mut again_touched: Vec<ValueId> = Vec::new();
        for u in &again {
            let Some(k) =
                self.forward_references.iter().position(|f| (f.op, f.operand) == (u.op, u.operand))
            else {
                continue;
            };
            self.forward_references.remove(k);
            if let Some(t) = self.ops[u.op as usize].operands[u.operand as usize].take() {
                if !old_run_value(t) {
                    self.values[t as usize].uses.retain(|x| (x.op, x.operand) != (u.op, u.operand));
                    again_touched.push(t);
                }
            }
            self.undefined_uses.push(*u);
        }
        let patched = Patched {
            old_ops: a..b,
            new_ops: a..a + ops.len() as OpId,
            old_values: va..vb,
            new_values: new_run_values.clone(),
            moved_from: e.to,
            delta: e.delta,
            ..Patched::default()
        };
        let (from, delta) = (e.to, e.delta);
        // Uses by the old ops of values outside the run.
        let mut touched: Vec<ValueId> = (a..b)
            .flat_map(|o| self.ops[o as usize].operands.iter().flatten().copied())
            .filter(|&v| !old_run_value(v))
            .collect();
        touched.sort_unstable();
        touched.dedup();
        for &v in &touched {
            self.values[v as usize].uses.retain(|u| !in_run(u.op));
        }
        let result_map: Vec<(ValueId, ValueId)> =
            old_results.iter().copied().zip(new_results.iter().copied()).collect();
        let relinked_ops: Vec<OpId> = relinks.iter().map(|(u, _)| u.op).collect();

        // Ids and positions outside the run.
        let op_of = |o: OpId| patched.op(o).unwrap_or(o);
        let value_of = |v: ValueId| {
            patched
                .value(v)
                .unwrap_or_else(|| result_map.iter().find(|(o, _)| *o == v).map_or(v, |&(_, n)| n))
        };
        let moved_ids = patched.new_ops.end != patched.old_ops.end
            || patched.new_values.end != patched.old_values.end;
        if moved_ids {
            for (i, op) in self.ops.iter_mut().enumerate() {
                if in_run(i as OpId) {
                    continue;
                }
                op.start = shift(op.start, from, delta);
                if let Some(p) = &mut op.parent {
                    *p = op_of(*p);
                }
                for v in op.results.iter_mut().chain(op.region_args.iter_mut().flatten()) {
                    *v = value_of(*v);
                }
                for v in op.operands.iter_mut().flatten() {
                    *v = value_of(*v);
                }
            }
        } else {
            // Only the ops after the edit move (ids follow the text).
            for op in &mut self.ops[b as usize..] {
                op.start = shift(op.start, from, delta);
            }
            for (u, _) in &relinks {
                let slot = &mut self.ops[u.op as usize].operands[u.operand as usize];
                *slot = slot.map(value_of);
            }
        }
        // Values: before the edit's (positions move only for the values of the ops
        // around the edit, written after it), then after it (all move). Uses keep no
        // positions (`Model::use_span`), so they change only when ids move.
        let (before, rest) = self.values.split_at_mut(va as usize);
        let after = &mut rest[(vb - va) as usize..];
        if moved_ids {
            for v in before.iter_mut() {
                shift_span(&mut v.span, from, delta);
                for u in v.uses.iter_mut().filter(|u| u.op >= b) {
                    u.op = op_of(u.op);
                }
            }
        } else {
            // Ops before the edit end before it, unless they hold it.
            for &p in e.path {
                let lo = before.partition_point(|v| v.def.op() < p);
                let hi = before.partition_point(|v| v.def.op() <= p);
                for v in &mut before[lo..hi] {
                    shift_span(&mut v.span, from, delta);
                }
            }
        }
        let op_delta = patched.new_ops.end as i64 - patched.old_ops.end as i64;
        for v in after.iter_mut() {
            v.span.start = (v.span.start as i64 + delta) as u32;
            v.span.end = (v.span.end as i64 + delta) as u32;
            if moved_ids {
                match &mut v.def {
                    super::ValueDef::Result { op, .. } | super::ValueDef::BlockArg { op, .. } => {
                        *op = (*op as i64 + op_delta) as OpId
                    }
                }
                for u in v.uses.iter_mut().filter(|u| u.op >= b) {
                    u.op = (u.op as i64 + op_delta) as OpId;
                }
            }
        }
        let fix_uses = |list: &mut Vec<Use>| {
            list.retain(|u| !in_run(u.op));
            for u in list.iter_mut() {
                u.op = op_of(u.op);
            }
        };
        fix_uses(&mut self.undefined_uses);
        fix_uses(&mut self.forward_references);
        self.redefinitions.retain(|&(new, _)| !old_run_value(new));
        for (new, old) in &mut self.redefinitions {
            *new = value_of(*new);
            *old = value_of(*old);
        }

        // The new ops in place of the old.
        let mut old_nodes = Vec::with_capacity(e.path.len());
        for (&p, node) in e.path.iter().zip(e.path_nodes) {
            // A path op's types moved inside it with the edit: its values' types anew.
            old_nodes.push(std::mem::replace(&mut self.ops[p as usize].node, node.clone()));
            let first = self.values.partition_point(|v| v.def.op() < p);
            for (k, ty) in value_types(node).into_iter().enumerate() {
                match self.values.get_mut(first + k) {
                    Some(v) if v.def.op() == p => v.ty = ty,
                    _ => return Err("the values of an enclosing op changed"),
                }
            }
        }
        let n_new = ops.len() as OpId;
        // Same ids and the same parents: the children index stays as it is.
        let same_shape = !moved_ids
            && self.ops[a as usize..b as usize].iter().zip(&ops).all(|(o, n)| o.parent == n.parent);
        self.ops.splice(a as usize..b as usize, ops);
        let keys = group_keys(&values);
        self.values.splice(va as usize..vb as usize, values);
        self.group_keys.splice(va as usize..vb as usize, keys);
        // Top-level ops: the kept ones moved, the new ones in their place.
        let mut top: Vec<OpId> = self.top.iter().copied().filter(|&t| t < a).collect();
        if parent.is_none() {
            top.extend((a..a + n_new).filter(|&o| self.ops[o as usize].parent.is_none()));
        }
        top.extend(self.top.iter().copied().filter(|&t| t >= b).map(op_of));
        self.top = top;
        if !same_shape {
            self.index_children();
        }
        let mut sort_uses: Vec<ValueId> = new_run_values.clone().collect();
        for (u, v) in relinks {
            // (The relinked operand already names `v`: `value_of` above.)
            self.values[v as usize].uses.push(Use { op: op_of(u.op), operand: u.operand });
        }

        // Resolve the new ops in the scopes around them.
        let resolved = {
            let mut r = Resolver::new(self);
            r.record = false;
            let top = self.top.clone();
            let new_ids = a..a + n_new;
            let is_new = |o: OpId| new_ids.contains(&o);
            match parent {
                None => {
                    for &t in &top {
                        r.record = is_new(t);
                        r.bind_results(t);
                    }
                    r.record = true;
                    let mark = r.deferred_mark();
                    for &t in top.iter().filter(|&&t| is_new(t)) {
                        r.resolve_operands(t);
                    }
                    r.resolve_deferred(mark);
                    for &t in top.iter().filter(|&&t| is_new(t)) {
                        r.walk_regions(t);
                    }
                }
                Some(innermost) => {
                    // Only the names the new ops use or define matter: only those
                    // bindings around them are replayed (few: hashed).
                    r.sparse_names();
                    let only: Vec<(u64, &str)> = self
                        .names_of(a..a + n_new)
                        .into_iter()
                        .map(|n| (fingerprint(n), n))
                        .collect();
                    r.only = Some(only.clone());
                    for &t in &top {
                        r.bind_results(t);
                    }
                    for (i, &p) in e.path.iter().enumerate() {
                        let region = match e.path.get(i + 1) {
                            Some(&next) => self.ops[next as usize].region,
                            None => e.region,
                        };
                        r.bind_region_args(p, region);
                        if p != innermost {
                            replay(&mut r, self, p, region, 0..OpId::MAX);
                            continue;
                        }
                        replay(&mut r, self, p, region, 0..a);
                        r.record = true;
                        r.only = None;
                        let pending = r.pending_mark();
                        let deferred = r.deferred_mark();
                        for c in (a..a + n_new).filter(|&c| self.ops[c as usize].parent == Some(p))
                        {
                            r.read_op(c);
                        }
                        r.record = false;
                        r.only = Some(only.clone());
                        replay(&mut r, self, p, region, a + n_new..OpId::MAX);
                        r.resolve_deferred(deferred);
                        r.record = true;
                        r.only = None;
                        r.walk_pending(pending);
                    }
                }
            }
            r.out
        };
        let mut new_undefined: HashSet<(OpId, u32)> =
            resolved.undefined.iter().map(|u| (u.op, u.operand)).collect();
        let again_new: Vec<(OpId, u32)> = again.iter().map(|u| (op_of(u.op), u.operand)).collect();
        new_undefined.extend(again_new.iter().copied());
        for (u, v) in &resolved.links {
            if !new_run_values.contains(v) {
                sort_uses.push(*v);
            }
            let _ = u;
        }
        let mut redefinitions = resolved.redefinitions.clone();
        redefinitions.retain(|&(new, old)| self.def_time(old) < self.def_time(new));
        let resolved = super::build::Resolved { redefinitions, ..resolved };
        self.apply(resolved);
        let before_forward = self.forward_references.len();
        resolve_forward(self, Some(&new_undefined));
        sort_uses.extend(
            self.forward_references[before_forward..]
                .iter()
                .filter_map(|u| self.ops[u.op as usize].operands[u.operand as usize]),
        );
        sort_uses.sort_unstable();
        sort_uses.dedup();
        for v in sort_uses {
            let uses = &mut self.values[v as usize].uses;
            if uses.len() > 1 {
                uses.sort_unstable_by_key(|u| (u.op, u.operand));
            }
        }
        self.undefined_uses.sort_unstable_by_key(|u| (u.op, u.operand));
        self.forward_references.sort_unstable_by_key(|u| (u.op, u.operand));
        let mut redefinitions = std::mem::take(&mut self.redefinitions);
        redefinitions.sort_unstable_by_key(|&(new, old)| (self.def_time(new), new, old));
        self.redefinitions = redefinitions;
        // An edit inside a top-level op keeps the top-level ops and what they define
        // (the ops on the path are copies whose own parts are the old ones): the
        // functions stay (ids moved), the meshes are read again (positions moved).
        // So does an edit of top-level statements that are no ops (aliases).
        let headers_kept = match parent {
            Some(_) => e
                .path_nodes
                .first()
                .zip(old_nodes.first())
                .is_some_and(|(n, o)| symbol_defined(n) == symbol_defined(o)),
            None => a == b && n_new == 0,
        };
        if headers_kept {
            if moved_ids {
                for id in self.funcs.values_mut() {
                    *id = op_of(*id);
                }
            }
            self.index_meshes(false);
        } else {
            self.index_symbols();
        }

        let mut patched = patched;
        patched.old_nodes = old_nodes;
        patched.touched_values = touched;
        // Values outside the run the new ops use (old ids).
        for op in &self.ops[a as usize..(a + n_new) as usize] {
            for &v in op.operands.iter().flatten() {
                if !new_run_values.contains(&v) {
                    let old = if v < va {
                        v
                    } else {
                        (v as i64 - patched.new_values.end as i64 + vb as i64) as ValueId
                    };
                    patched.touched_values.push(old);
                }
            }
        }
        // Uses resolved again: their old and new values.
        patched.touched_values.extend(again_touched);
        for &(op, operand) in &again_new {
            if let Some(v) = self.ops[op as usize].operands[operand as usize] {
                if !new_run_values.contains(&v) {
                    let old = if v < va {
                        v
                    } else {
                        (v as i64 - patched.new_values.end as i64 + vb as i64) as ValueId
                    };
                    patched.touched_values.push(old);
                }
            }
        }
        patched.touched_values.sort_unstable();
        patched.touched_values.dedup();
        let mut relinked_ops = relinked_ops;
        relinked_ops.extend(again.iter().map(|u| u.op));
        patched.relinked_ops = relinked_ops;
        patched.relinked_ops.sort_unstable();
        patched.relinked_ops.dedup();
        patched.changed_meshes = self.changed_meshes(&old_meshes, &patched.new_ops);
        patched.forward_references_flipped = had_forward == self.forward_references.is_empty();
        Ok(patched)
    }

    /// The names the ops in `ops` use (operands) or define (values), as bound.
    fn names_of(&self, ops: Range<OpId>) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for o in ops.clone() {
            names.extend(self.ops[o as usize].node.operands.iter().map(|r| r.name.as_str()));
        }
        let lo = self.values.partition_point(|v| v.def.op() < ops.start);
        let hi = self.values.partition_point(|v| v.def.op() < ops.end);
        names.extend(self.values[lo..hi].iter().filter_map(|v| group_name(&v.name)));
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The meshes by name: their content, and whether their op is in `ops`.
    fn mesh_snapshot(
        &self,
        ops: &Range<OpId>,
    ) -> Vec<(String, Option<super::sharding::Mesh>, bool)> {
        let mut out: Vec<_> = self
            .meshes
            .iter()
            .map(|m| {
                (m.name.clone(), m.mesh.as_ref().map(|x| x.value.clone()), ops.contains(&m.op))
            })
            .collect();
        out.sort_by(|x, y| x.0.cmp(&y.0));
        out
    }

    /// The names of meshes that differ between `old` (a snapshot) and now, or whose op is
    /// in the edit (`new_ops`) either time.
    fn changed_meshes(
        &self,
        old: &[(String, Option<super::sharding::Mesh>, bool)],
        new_ops: &Range<OpId>,
    ) -> Vec<String> {
        let new = self.mesh_snapshot(new_ops);
        let mut names: Vec<String> = Vec::new();
        let of = |list: &[(String, Option<super::sharding::Mesh>, bool)], name: &str| {
            list.iter()
                .filter(|(n, _, _)| n == name)
                .map(|(_, m, e)| (m.clone(), *e))
                .collect::<Vec<_>>()
        };
        for (name, _, _) in old.iter().chain(&new) {
            let (o, n) = (of(old, name), of(&new, name));
            if o != n || o.iter().chain(&n).any(|(_, edited)| *edited) {
                names.push(name.clone());
            }
        }
        names.sort();
        names.dedup();
        names
    }
}

/// Replays the bindings of the results of the ops of region `region` of `p` whose ids
/// are in `ids`, in order (their values are in `p`'s subtree's range, by op: only the
/// values of `ids` are read).
fn replay<'a>(r: &mut Resolver<'a>, m: &'a Model, p: OpId, region: u32, ids: Range<OpId>) {
    let lo = m.values.partition_point(|v| v.def.op() <= p.max(ids.start.saturating_sub(1)));
    let end = m.subtree_end(p).min(ids.end);
    let hi = m.values.partition_point(|v| v.def.op() < end).max(lo);
    let keys: Vec<u64> = r.only.iter().flatten().map(|&(k, _)| k).collect();
    // Most values are rejected by one bit of a 4096-bit filter of the keys (hashed:
    // a key's low bits are those of the `%` every name starts with).
    let bit = |k: u64| (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize;
    let mut filter = [0u64; 64];
    for &k in &keys {
        filter[bit(k) / 64] |= 1 << (bit(k) % 64);
    }
    for (v, key) in m.group_keys[lo..hi].iter().enumerate().map(|(i, k)| (lo + i, k)) {
        let b = bit(*key);
        if filter[b / 64] & 1 << (b % 64) == 0 || *key == 0 || !keys.contains(key) {
            continue;
        }
        let info = &m.values[v];
        let Some(group) = r.binds(&info.name) else { continue };
        let super::ValueDef::Result { op, .. } = info.def else { continue };
        let o = &m.ops[op as usize];
        if o.parent == Some(p) && o.region == region && ids.contains(&op) {
            r.bind(group, v as ValueId);
        }
    }
}

/// The symbol a top-level op defines, and its kind.
fn symbol_defined(op: &sdy_syntax::tree::Op) -> Option<(bool, &str)> {
    match &op.custom {
        sdy_syntax::tree::Custom::Func(f) => Some((true, f.sym.text.as_str())),
        sdy_syntax::tree::Custom::Mesh { sym } => Some((false, sym.text.as_str())),
        _ => None,
    }
}
