//! Incremental analysis: after an edit, patch the model and redo only the checks the
//! edit can affect, with a result equal to a fresh analysis of the new text.
//!
//! * [`diff::find`] locates the edit in the tree from what the syntax layer shares
//!   between versions: a run of statements of one block.
//! * `Model::patch` replaces that run's ops and values (one id range each in the
//!   model's canonical order), moves what follows, and resolves the new operands in the
//!   scopes around them.
//! * Each op's checks recorded the model facts they read (`model::track`); the checks
//!   redone are the new ops' and those that read a fact the patch changed (a replaced op
//!   or value, a value whose uses changed, a relinked user, the children of the edited
//!   block's op, a mesh defined differently). The region checks of the isolated ops
//!   around them and the module-wide checks are redone from facts the ops keep. All other
//!   diagnostics stay, moved with the text.
//!
//! Anything the patch cannot express falls back to a fresh analysis.

pub mod diff;

use crate::diag::{Diagnostic, Stage};
use crate::model::patch::{Edit, Patched};
use crate::model::track::{self, Fact};
use crate::model::{Model, OpId};
use crate::verify::lints::ends_symbol;
use crate::verify::parse_time::ForwardUse;
use crate::verify::{self, sort_key, step, Ctx, Order, Ordered, Phase};
use crate::{syntax_diags, ChunkAnalysis};
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;
use std::sync::Arc;

/// What an analysis keeps to be updated after an edit.
#[derive(Clone, Debug)]
pub struct State {
    /// The tree analysed.
    chunk: Chunk,
    /// How many of the diagnostics are syntax errors (they come first).
    syntax: usize,
    /// Where the statements with errors of their own start (`syntax_diags::error_sites`).
    sites: Vec<u32>,
    /// The index of the chunk's explicit `module` (see `diff`).
    module: Option<usize>,
    /// Whether the chunk's top level has aliases of sdy attributes (see `diff::find`:
    /// an update that changes that is done afresh, so it stays true or false).
    sdy_alias: bool,
    /// The place of each verifier diagnostic (those after the syntax errors).
    orders: Vec<Order>,
    /// Typed forward uses, by op.
    forward: Vec<(OpId, ForwardUse)>,
    /// Ops with the `dominance` and `outside_use` facts (see `verify::OpUnit`).
    dominance: Vec<OpId>,
    outside: Vec<OpId>,
    /// The facts read by each op's checks, per block of [`BLOCK`] ops (by id): an
    /// update that keeps the ids rebuilds only the blocks of the ops it checked again,
    /// the others are shared with the previous version.
    facts: Vec<Arc<FactBlock>>,
    /// Per mesh name, where the text refers to `@name`.
    mesh_refs: Vec<(String, Vec<u32>)>,
    /// Where the text names attributes that may hold shardings in strings (one list per
    /// [`STRING_MARKERS`] entry): without any, there are no in-string diagnostics.
    strings: Vec<Vec<u32>>,
    /// What the last update replaced, not freed yet (see [`Garbage`]).
    garbage: Garbage,
}

/// Old versions of the tree an update replaced: freeing them walks big child lists, so
/// the caller may do it after publishing ([`ChunkAnalysis::take_garbage`]); otherwise
/// it happens with the next update.
#[derive(Default)]
pub struct Garbage(Vec<Box<dyn std::any::Any + Send + Sync>>);

impl Clone for Garbage {
    fn clone(&self) -> Garbage {
        Garbage::default()
    }
}

impl std::fmt::Debug for Garbage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Garbage({} items)", self.0.len())
    }
}

/// See [`ChunkAnalysis::take_garbage`].
pub fn take_garbage(a: &mut ChunkAnalysis) -> Garbage {
    a.state.as_mut().map(|s| std::mem::take(&mut s.garbage)).unwrap_or_default()
}

/// What `ide::strings` looks for before reading any string.
const STRING_MARKERS: [&str; 2] = ["xla.sdy.", "mhlo.sharding"];

/// How an update went (for tests and benchmarks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateStats {
    /// Whether the analysis was redone from scratch, and why.
    pub fresh: Option<&'static str>,
    /// Ops replaced (old, new) and ops whose checks were redone besides the new ones.
    pub replaced: (usize, usize),
    pub rechecked: usize,
}

/// A fresh analysis; `keep`: with what updates need.
pub fn analyze(src: &str, chunk: &Chunk, keep: bool) -> ChunkAnalysis {
    if !keep {
        // A big chunk's syntax diagnostics are collected on another core while its
        // model is built, and its strings checked while it is verified.
        let big = chunk.span.len() >= 1 << 20;
        let (model, mut diagnostics) = if big {
            std::thread::scope(|s| {
                let syntax = s.spawn(|| syntax_diags::syntax_diagnostics(chunk));
                let model = Model::build(chunk);
                (model, join(syntax))
            })
        } else {
            (Model::build(chunk), syntax_diags::syntax_diagnostics(chunk))
        };
        let mut verifier = if big {
            std::thread::scope(|s| {
                let strings = s.spawn(|| crate::ide::strings::diagnostics(&model, src, chunk));
                let mut verifier = verify::verify_chunk(&model, src);
                verifier.extend(join(strings));
                verifier
            })
        } else {
            let mut verifier = verify::verify_chunk(&model, src);
            verifier.extend(crate::ide::strings::diagnostics(&model, src, chunk));
            verifier
        };
        verifier.sort_by_key(|d| d.span.start);
        diagnostics.extend(verifier);
        return ChunkAnalysis { model, diagnostics, state: None };
    }
    with_state(Model::build(chunk), src, chunk)
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// `a` with what updates need (see [`ChunkAnalysis::with_incremental_state`]).
pub fn keep_state(a: ChunkAnalysis, src: &str, chunk: &Chunk) -> ChunkAnalysis {
    match a.state {
        Some(_) => a,
        None => with_state(a.model, src, chunk),
    }
}

/// The diagnostics of `model` (of `chunk`) and what updates need: the checks run
/// recording what they read.
fn with_state(model: Model, src: &str, chunk: &Chunk) -> ChunkAnalysis {
    let mut diagnostics = syntax_diags::syntax_diagnostics(chunk);
    let mut sites = Vec::new();
    syntax_diags::error_sites(&chunk.top, chunk.span.start, &mut sites);
    let mut state = State {
        chunk: chunk.clone(),
        syntax: diagnostics.len(),
        sites,
        module: diff::explicit_module(chunk),
        sdy_alias: diff::has_sdy_alias(&chunk.top),
        orders: Vec::new(),
        forward: Vec::new(),
        dominance: Vec::new(),
        outside: Vec::new(),
        facts: Vec::new(),
        mesh_refs: Vec::new(),
        strings: Vec::new(),
        garbage: Garbage::default(),
    };
    state.mesh_refs = model
        .meshes
        .iter()
        .map(|m| (m.name.clone(), references(src, &m.name, 0, src.len())))
        .collect();
    state.mesh_refs.sort_by(|a, b| a.0.cmp(&b.0));
    state.mesh_refs.dedup_by(|a, b| a.0 == b.0);
    let (units, fact_start, facts) = verify_recorded(&model, src, 0..model.ops.len() as OpId);
    state.facts = fact_blocks(&fact_start, &facts);
    drop((fact_start, facts));
    let mut verified = Vec::new();
    for (id, unit) in units {
        state.add_unit(id, unit, &mut verified);
    }
    let roots: Vec<OpId> =
        (0..model.ops.len() as OpId).filter(|&id| verify::is_root(&model, id)).collect();
    state.finish(&model, src, &roots, &mut verified);
    state.strings = STRING_MARKERS.iter().map(|m| marker_positions(src, m, 0, src.len())).collect();
    state.add_strings(&model, src, chunk, &mut verified);
    state.store(verified, &mut diagnostics);
    ChunkAnalysis { model, diagnostics, state: Some(Box::new(state)) }
}

/// See [`ChunkAnalysis::tree`].
pub fn tree(a: &ChunkAnalysis) -> Option<&Chunk> {
    a.state.as_ref().map(|s| &s.chunk)
}

/// The analysis of `chunk` (text `src`), an edited version of the chunk `old` analysed.
pub fn update(old: ChunkAnalysis, src: &str, chunk: Chunk) -> (ChunkAnalysis, UpdateStats) {
    let fresh =
        |why| (analyze(src, &chunk, true), UpdateStats { fresh: Some(why), ..Default::default() });
    let ChunkAnalysis { mut model, mut diagnostics, state } = old;
    let Some(mut state) = state else { return fresh("no incremental state") };
    if same_tree(&state.chunk, &chunk) {
        let stats = UpdateStats::default();
        return (ChunkAnalysis { model, diagnostics, state: Some(state) }, stats);
    }
    let Some(edit) = diff::find(&state.chunk, state.module, state.sdy_alias, &chunk, &model) else {
        return fresh("trees differ");
    };
    let patch = Edit {
        path: &edit.path,
        path_nodes: &edit.path_nodes,
        region: edit.region,
        new: &edit.new,
        base: edit.base,
        from: edit.from,
        to: edit.to,
        delta: edit.delta,
    };
    let mut p = match model.patch(&patch) {
        Ok(p) => p,
        Err(why) => return fresh(why),
    };
    let mut stats =
        UpdateStats { fresh: None, replaced: (p.old_ops.len(), p.new_ops.len()), rechecked: 0 };
    // Verifier diagnostics with their places; syntax errors are found again.
    let verified: Vec<Ordered> =
        state.orders.drain(..).zip(diagnostics.drain(state.syntax..)).collect();
    let mut sites: Vec<u32> = std::mem::take(&mut state.sites)
        .into_iter()
        .filter(|&s| s < edit.from || s >= edit.to)
        .map(|s| edit.moved(s))
        .collect();
    let mut new_sites = Vec::new();
    syntax_diags::error_sites(&edit.new, edit.base, &mut new_sites);
    let at = sites.partition_point(|&s| s < edit.from);
    sites.splice(at..at, new_sites);
    let mut diagnostics = syntax_diags::syntax_diagnostics_at(&chunk, &sites);
    state.sites = sites;
    state.syntax = diagnostics.len();
    state.module = edit.module;
    let old_chunk = std::mem::replace(&mut state.chunk, chunk);
    state.garbage = Garbage(vec![Box::new(old_chunk), Box::new(std::mem::take(&mut p.old_nodes))]);
    let mut verified = state.reverify(&model, src, &p, &edit, verified, &mut stats);
    state.add_strings(&model, src, &state.chunk, &mut verified);
    state.store(verified, &mut diagnostics);
    (ChunkAnalysis { model, diagnostics, state: Some(state) }, stats)
}

/// What the incremental state holds, for benchmarks: table sizes in entries.
pub fn sizes(a: &ChunkAnalysis) -> Vec<(&'static str, usize)> {
    let mut out = vec![
        ("ops", a.model.ops.len()),
        ("values", a.model.values.len()),
        ("diagnostics", a.diagnostics.len()),
    ];
    if let Some(s) = &a.state {
        out.extend([
            ("facts", s.facts.iter().map(|b| b.facts.len()).sum()),
            ("fact blocks", s.facts.len()),
            ("forward uses", s.forward.len()),
            ("error sites", s.sites.len()),
            ("mesh references", s.mesh_refs.iter().map(|(_, v)| v.len()).sum()),
        ]);
    }
    out
}

/// See [`ChunkAnalysis::changed_text`].
pub fn changed_text(a: &ChunkAnalysis, chunk: &Chunk) -> Option<(u32, u32, i64)> {
    let state = a.state.as_ref()?;
    if same_tree(&state.chunk, chunk) {
        return Some((0, 0, 0));
    }
    let e = diff::find(&state.chunk, state.module, state.sdy_alias, chunk, &a.model)?;
    Some((e.from, e.to, e.delta))
}

/// Whether two trees are the same text (the same statements at the same places).
fn same_tree(a: &Chunk, b: &Chunk) -> bool {
    a.span == b.span
        && a.top.len() == b.top.len()
        && a.top
            .iter()
            .zip(&b.top)
            .all(|(x, y)| x.offset == y.offset && std::sync::Arc::ptr_eq(x.op, y.op))
}

/// [`verify::verify_op`] of `id`, appending the facts it read to `facts`. Its own op
/// is left out: it changes only when the op is replaced or relinked, which redoes the
/// checks anyway.
fn verify_op_recorded(cx: &Ctx, id: OpId, facts: &mut Vec<Fact>) -> verify::OpUnit {
    let start = facts.len();
    let unit = track::recording(facts, || verify::verify_op(cx, id));
    if let Ok(i) = facts[start..].binary_search(&(track::OP | id)) {
        facts.remove(start + i);
    }
    unit
}

/// [`verify::verify_op`] for the ops in `ids`, recording what each reads; on two
/// threads for many ops. The units that found something, and the facts as a table.
fn verify_recorded(
    model: &Model,
    src: &str,
    ids: std::ops::Range<OpId>,
) -> (Vec<(OpId, verify::OpUnit)>, Vec<u32>, Vec<Fact>) {
    let run = |range: std::ops::Range<OpId>| {
        let cx = Ctx::new(model, src);
        let mut units = Vec::new();
        let mut start = Vec::with_capacity(range.len());
        let mut facts = Vec::new();
        for id in range {
            start.push(facts.len() as u32);
            let unit = verify_op_recorded(&cx, id, &mut facts);
            if !unit.is_empty() {
                units.push((id, unit));
            }
        }
        (units, start, facts)
    };
    let n = ids.len() as OpId;
    let (mut units, mut start, mut facts) = if n < 4096 {
        run(ids.clone())
    } else {
        let mid = ids.start + n / 2;
        let (first, second) = std::thread::scope(|s| {
            let second = s.spawn(|| run(mid..ids.end));
            let first = run(ids.start..mid);
            (first, second.join())
        });
        let second = match second {
            Ok(s) => s,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let (mut units, mut start, mut facts) = first;
        let offset = facts.len() as u32;
        units.extend(second.0);
        start.extend(second.1.iter().map(|s| s + offset));
        facts.extend(second.2);
        (units, start, facts)
    };
    start.push(facts.len() as u32);
    units.shrink_to_fit();
    facts.shrink_to_fit();
    (units, start, facts)
}

impl State {
    /// Takes in what op `id`'s checks found.
    fn add_unit(&mut self, id: OpId, unit: verify::OpUnit, verified: &mut Vec<Ordered>) {
        verified.extend(unit.diags);
        self.forward.extend(unit.forward.into_iter().map(|f| (id, f)));
        if unit.dominance {
            self.dominance.push(id);
        }
        if unit.outside_use {
            self.outside.push(id);
        }
    }

    /// Adds the region checks of `roots` and the module-wide checks.
    fn finish(&mut self, model: &Model, src: &str, roots: &[OpId], verified: &mut Vec<Ordered>) {
        let cx = Ctx::new(model, src);
        let (dominance, outside) = (&self.dominance, &self.outside);
        let flagged = |dom: bool, range: std::ops::Range<OpId>| {
            let set = if dom { dominance } else { outside };
            let i = set.partition_point(|&o| o < range.start);
            set.get(i).is_some_and(|&o| o < range.end)
        };
        for &r in roots {
            verified.extend(verify::verify_root(&cx, r, flagged));
        }
        let forward: Vec<ForwardUse> = self.forward.iter().map(|(_, f)| f.clone()).collect();
        let refs = &self.mesh_refs;
        verified.extend(verify::verify_module(&cx, forward, |m| {
            refs.iter()
                .find(|(n, _)| *n == m.name)
                .is_some_and(|(_, at)| at.iter().any(|&p| !m.name_span.contains(p)))
        }));
    }

    /// Sorts the verifier's diagnostics after the syntax errors in `diagnostics`.
    fn store(&mut self, mut verified: Vec<Ordered>, diagnostics: &mut Vec<Diagnostic>) {
        verified.sort_by_key(sort_key);
        self.orders = verified.iter().map(|(o, _)| *o).collect();
        diagnostics.extend(verified.into_iter().map(|(_, d)| d));
    }

    /// Redoes the checks the patch can affect; moves the other results.
    fn reverify(
        &mut self,
        model: &Model,
        src: &str,
        p: &Patched,
        edit: &diff::TreeEdit,
        verified: Vec<Ordered>,
        stats: &mut UpdateStats,
    ) -> Vec<Ordered> {
        let changed_children = edit.path.last().copied();
        let mesh_facts: Vec<Fact> = {
            let mut f: Vec<Fact> = p.changed_meshes.iter().map(|n| track::symbol(n)).collect();
            f.sort_unstable();
            f
        };
        let changed = |f: Fact| -> bool {
            let id = track::id(f);
            match track::kind(f) {
                track::OP => p.old_ops.contains(&id) || p.relinked_ops.binary_search(&id).is_ok(),
                track::CHILDREN => p.old_ops.contains(&id) || changed_children == Some(id),
                track::VALUE => {
                    p.old_values.contains(&id) || p.touched_values.binary_search(&id).is_ok()
                }
                _ => mesh_facts.binary_search(&f).is_ok(),
            }
        };
        // The ops to check again (new ids): the new ones, and those that read a fact
        // that changed. Most facts are rejected by the id ranges and a one-word filter
        // of the few other changed ids.
        let bit = |id: u32| 1u64 << (id.wrapping_mul(0x9E37_79B1) >> 26);
        let mut filter = [0u64; 4];
        for &o in &p.relinked_ops {
            filter[0] |= bit(o);
        }
        if let Some(c) = changed_children {
            filter[1] |= bit(c);
        }
        for &v in &p.touched_values {
            filter[2] |= bit(v);
        }
        for &f in &mesh_facts {
            filter[3] |= bit(track::id(f));
        }
        // Per kind, the replaced id range (start, length).
        let ops_range = (p.old_ops.start, p.old_ops.len() as u32);
        let values_range = (p.old_values.start, p.old_values.len() as u32);
        let ranges = [ops_range, ops_range, values_range, (0, 0)];
        let hit = |f: Fact| -> bool {
            let (k, id) = ((f >> 30) as usize, track::id(f));
            let (lo, len) = ranges[k];
            id.wrapping_sub(lo) < len || (filter[k] & bit(id) != 0 && changed(f))
        };
        let mut dirty: Vec<OpId> = p.new_ops.clone().collect();
        let mut redo_old: Vec<OpId> = Vec::new();
        // Only the blocks whose summary may hold a changed fact are read (all of them
        // when too many facts changed to list).
        let changed_list = changed_facts(p, changed_children, &mesh_facts);
        let block_may_hit = |block: &FactBlock| match &changed_list {
            Some(list) => list.iter().any(|&f| block.summary.may_hold(f)),
            None => true,
        };
        for (b, block) in self.facts.iter().enumerate().filter(|(_, blk)| block_may_hit(blk)) {
            for k in 0..block.len() {
                let o = b as OpId * BLOCK + k as OpId;
                if block.of(k).iter().any(|&f| hit(f)) && !p.old_ops.contains(&o) {
                    redo_old.push(o);
                    if let Some(n) = p.op(o) {
                        dirty.push(n);
                    }
                }
            }
        }
        // Relinked ops (their own op is not among their facts).
        for &o in &p.relinked_ops {
            if let (Err(i), Some(n)) = (redo_old.binary_search(&o), p.op(o)) {
                redo_old.insert(i, o);
                dirty.push(n);
            }
        }
        dirty.sort_unstable();
        dirty.dedup();
        stats.rechecked = dirty.len() - p.new_ops.len();
        let is_dirty = |n: OpId| dirty.binary_search(&n).is_ok();

        // Isolated ops whose region checks are redone (new ids).
        let mut roots: Vec<OpId> = Vec::new();
        for &d in dirty.iter().chain(&edit.path) {
            let mut at = Some(d);
            while let Some(o) = at {
                if verify::is_root(model, o) {
                    roots.push(o);
                }
                at = model.ops[o as usize].parent;
            }
        }
        if p.forward_references_flipped {
            roots.extend(
                (0..model.ops.len() as OpId)
                    .filter(|&o| model.ops[o as usize].name() == "func.func"),
            );
        }
        roots.sort_unstable();
        roots.dedup();
        let is_root_redone = |n: OpId| roots.binary_search(&n).is_ok();

        // Keep the rest, moved.
        let mut kept: Vec<Ordered> = Vec::with_capacity(verified.len());
        for (mut o, mut d) in verified {
            let module_wide = matches!(
                o.phase,
                Phase::Undefined
                    | Phase::Forward
                    | Phase::Redefinition
                    | Phase::ArgumentInUse
                    | Phase::SymbolTable
                    | Phase::LintModule
                    | Phase::Strings
            );
            if module_wide {
                continue;
            }
            let Some(op) = p.op(o.op) else { continue };
            let root_unit = o.phase == Phase::Op && matches!(o.step, step::EXIT | step::DOMINANCE);
            if (root_unit && is_root_redone(op)) || (!root_unit && is_dirty(op)) {
                continue;
            }
            o.op = op;
            move_diagnostic(&mut d, p);
            kept.push((o, d));
        }

        // Per-op facts and records, moved; the dirty ops' dropped.
        let keep_op = |o: OpId| !p.old_ops.contains(&o) && redo_old.binary_search(&o).is_err();
        self.forward.retain(|(o, _)| keep_op(*o));
        for (o, f) in &mut self.forward {
            *o = p.op(*o).unwrap_or(*o);
            f.value = p.value(f.value).unwrap_or(f.value);
            f.at = p.pos(f.at);
            f.span = move_span(f.span, p);
        }
        for list in [&mut self.dominance, &mut self.outside] {
            list.retain(|&o| keep_op(o));
            for o in list.iter_mut() {
                *o = p.op(*o).unwrap_or(*o);
            }
        }
        let (units, new_start, new_facts) = {
            // Facts of the dirty ops, recorded anew.
            let cx = Ctx::new(model, src);
            let mut units = Vec::new();
            let mut start = Vec::with_capacity(dirty.len());
            let mut facts = Vec::new();
            for &id in &dirty {
                start.push(facts.len() as u32);
                let unit = verify_op_recorded(&cx, id, &mut facts);
                units.push((id, unit));
            }
            start.push(facts.len() as u32);
            (units, start, facts)
        };
        self.rebuild_facts(model.ops.len(), p, &dirty, &new_start, &new_facts);
        for (id, unit) in units {
            self.add_unit(id, unit, &mut kept);
        }
        self.forward.sort_by_key(|(o, _)| *o);
        self.dominance.sort_unstable();
        self.outside.sort_unstable();
        self.update_mesh_refs(model, src, edit);
        self.finish(model, src, &roots, &mut kept);
        for (list, marker) in self.strings.iter_mut().zip(STRING_MARKERS) {
            let lo = edit.from.saturating_sub(marker.len() as u32);
            let found = marker_positions(src, marker, lo as usize, edit.new_to() as usize);
            *list = moved_positions(std::mem::take(list), lo, edit, found);
        }
        kept
    }

    /// The in-string diagnostics (module-wide; none without a string marker).
    fn add_strings(&self, model: &Model, src: &str, chunk: &Chunk, verified: &mut Vec<Ordered>) {
        if self.strings.iter().all(Vec::is_empty) {
            return;
        }
        let found = crate::ide::strings::diagnostics(model, src, chunk);
        verified.extend(
            found
                .into_iter()
                .enumerate()
                .map(|(i, d)| (Order { phase: Phase::Strings, op: 0, step: 0, seq: i as u32 }, d)),
        );
    }

    /// The facts table of the new model: the kept ops' facts with ids moved, the dirty
    /// ops' new ones. Without moved ids, the blocks without a dirty op are kept.
    fn rebuild_facts(
        &mut self,
        n: usize,
        p: &Patched,
        dirty: &[OpId],
        new_start: &[u32],
        new_facts: &[Fact],
    ) {
        let move_fact = |f: Fact| -> Fact {
            let id = track::id(f);
            let kind = track::kind(f);
            match kind {
                track::OP | track::CHILDREN => kind | p.op(id).unwrap_or(id),
                track::VALUE => kind | p.value(id).unwrap_or(id),
                _ => f,
            }
        };
        let moved = p.new_ops.end != p.old_ops.end || p.new_values.end != p.old_values.end;
        // The old id of kept op `id` (kept ops are outside the replaced range).
        let old_of = |id: OpId| {
            if id < p.new_ops.start {
                id
            } else {
                (id as i64 - p.new_ops.end as i64 + p.old_ops.end as i64) as OpId
            }
        };
        let old = std::mem::take(&mut self.facts);
        let old_facts = |o: OpId| old[(o / BLOCK) as usize].of((o % BLOCK) as usize);
        let mut out = Vec::with_capacity(n.div_ceil(BLOCK as usize));
        let mut d = 0;
        for b in 0..n.div_ceil(BLOCK as usize) {
            let (lo, hi) = (b as OpId * BLOCK, ((b as OpId + 1) * BLOCK).min(n as OpId));
            let has_dirty = dirty.get(d).is_some_and(|&x| x < hi);
            match old.get(b) {
                Some(kept) if !moved && !has_dirty && kept.len() == (hi - lo) as usize => {
                    out.push(kept.clone());
                    continue;
                }
                _ => {}
            }
            let mut start = Vec::with_capacity((hi - lo) as usize + 1);
            let mut facts = Vec::new();
            for id in lo..hi {
                start.push(facts.len() as u32);
                if dirty.get(d) == Some(&id) {
                    facts.extend_from_slice(
                        &new_facts[new_start[d] as usize..new_start[d + 1] as usize],
                    );
                    d += 1;
                } else if moved {
                    facts.extend(old_facts(old_of(id)).iter().map(|&f| move_fact(f)));
                } else {
                    facts.extend_from_slice(old_facts(old_of(id)));
                }
            }
            start.push(facts.len() as u32);
            out.push(Arc::new(FactBlock::new(start, facts)));
        }
        self.facts = out;
    }

    /// Moves the references to meshes with the text, finds them again in the edited
    /// text, and finds those of meshes that are new.
    fn update_mesh_refs(&mut self, model: &Model, src: &str, edit: &diff::TreeEdit) {
        let mut names: Vec<&str> = model.meshes.iter().map(|m| m.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let mut refs: Vec<(String, Vec<u32>)> = Vec::with_capacity(names.len());
        for name in names {
            let at = match self.mesh_refs.iter_mut().find(|(n, _)| n == name) {
                Some((_, old)) => {
                    // `@name` and the byte after it: an occurrence reads `len` bytes.
                    let len = name.len() as u32 + 1;
                    let lo = edit.from.saturating_sub(len);
                    moved_positions(
                        std::mem::take(old),
                        lo,
                        edit,
                        references(src, name, lo as usize, edit.new_to() as usize),
                    )
                }
                None => references(src, name, 0, src.len()),
            };
            refs.push((name.to_string(), at));
        }
        self.mesh_refs = refs;
    }
}

/// Ops per block summary.
const BLOCK: OpId = 64;

/// A Bloom filter of the facts a block of ops read (two bits per fact of 4096): one
/// edit changes a handful of facts, and most blocks hold none of them.
#[derive(Clone, Debug)]
struct Summary([u64; 64]);

impl Summary {
    fn bits(f: Fact) -> [u32; 2] {
        [f.wrapping_mul(0x9E37_79B1) >> 20, f.wrapping_mul(0x85EB_CA77).rotate_left(7) >> 20]
    }
    fn add(&mut self, f: Fact) {
        for b in Summary::bits(f) {
            self.0[(b / 64) as usize] |= 1 << (b % 64);
        }
    }
    fn may_hold(&self, f: Fact) -> bool {
        Summary::bits(f).iter().all(|&b| self.0[(b / 64) as usize] & (1 << (b % 64)) != 0)
    }
}

/// The facts read by the checks of up to [`BLOCK`] consecutive ops.
#[derive(Debug)]
struct FactBlock {
    /// Op `k`'s facts are `facts[start[k]..start[k + 1]]`.
    start: Vec<u32>,
    facts: Vec<Fact>,
    summary: Summary,
}

impl FactBlock {
    fn new(start: Vec<u32>, facts: Vec<Fact>) -> FactBlock {
        let mut summary = Summary([0; 64]);
        for &f in &facts {
            summary.add(f);
        }
        FactBlock { start, facts, summary }
    }
    /// How many ops.
    fn len(&self) -> usize {
        self.start.len() - 1
    }
    /// The facts of the block's op `k`.
    fn of(&self, k: usize) -> &[Fact] {
        &self.facts[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

/// A flat facts table (op `o`'s facts are `facts[start[o]..start[o + 1]]`) in blocks.
fn fact_blocks(start: &[u32], facts: &[Fact]) -> Vec<Arc<FactBlock>> {
    let n = start.len().saturating_sub(1);
    (0..n.div_ceil(BLOCK as usize))
        .map(|b| {
            let (lo, hi) = (b * BLOCK as usize, ((b + 1) * BLOCK as usize).min(n));
            let base = start[lo];
            let starts = start[lo..=hi].iter().map(|&s| s - base).collect();
            let block = facts[base as usize..start[hi] as usize].to_vec();
            Arc::new(FactBlock::new(starts, block))
        })
        .collect()
}

/// Every fact a patch changed (as `reverify`'s `changed` tells them), or `None` when
/// there are too many to list.
fn changed_facts(p: &Patched, children: Option<OpId>, meshes: &[Fact]) -> Option<Vec<Fact>> {
    const MAX: usize = 256;
    if p.old_ops.len() > MAX || p.old_values.len() > MAX {
        return None;
    }
    let mut out: Vec<Fact> = Vec::new();
    out.extend(p.old_ops.clone().flat_map(|o| [track::OP | o, track::CHILDREN | o]));
    out.extend(p.relinked_ops.iter().map(|&o| track::OP | o));
    out.extend(children.map(|c| track::CHILDREN | c));
    out.extend(p.old_values.clone().map(|v| track::VALUE | v));
    out.extend(p.touched_values.iter().map(|&v| track::VALUE | v));
    out.extend_from_slice(meshes);
    (out.len() <= 4 * MAX).then_some(out)
}

/// Sorted positions after an edit: those before `lo` kept, those of the edited text
/// replaced by `found` (sorted, in `[lo, new end)`), those after it moved.
fn moved_positions(old: Vec<u32>, lo: u32, edit: &diff::TreeEdit, found: Vec<u32>) -> Vec<u32> {
    let before = old.partition_point(|&p| p < lo);
    let after = old.partition_point(|&p| p < edit.to);
    let mut out = Vec::with_capacity(before + found.len() + old.len() - after);
    out.extend_from_slice(&old[..before]);
    out.extend(found);
    out.extend(old[after..].iter().map(|&p| edit.moved(p)));
    out
}

/// Where `@name` starts in `src` as a whole symbol, for starts in `[lo, hi)`.
fn references(src: &str, name: &str, lo: usize, hi: usize) -> Vec<u32> {
    let needle = format!("@{name}");
    let bytes = src.as_bytes();
    let hi = hi.min(bytes.len());
    let end = (hi + needle.len()).min(bytes.len());
    if lo >= end {
        return Vec::new();
    }
    memchr::memmem::find_iter(&bytes[lo..end], needle.as_bytes())
        .map(|i| lo + i)
        .filter(|&at| at < hi && ends_symbol(bytes.get(at + needle.len()).copied()))
        .map(|at| at as u32)
        .collect()
}

/// Where `marker` starts in `src`, for starts in `[lo, hi)`.
fn marker_positions(src: &str, marker: &str, lo: usize, hi: usize) -> Vec<u32> {
    let bytes = src.as_bytes();
    let hi = hi.min(bytes.len());
    let end = (hi + marker.len()).min(bytes.len());
    if lo >= end {
        return Vec::new();
    }
    memchr::memmem::find_iter(&bytes[lo..end], marker.as_bytes())
        .map(|i| lo + i)
        .filter(|&at| at < hi)
        .map(|at| at as u32)
        .collect()
}

fn move_span(s: Span, p: &Patched) -> Span {
    Span::new(p.pos(s.start), p.pos(s.end))
}

/// Moves a kept diagnostic's positions and op ids to the new model.
fn move_diagnostic(d: &mut Diagnostic, p: &Patched) {
    d.span = move_span(d.span, p);
    d.focus = move_span(d.focus, p);
    for n in &mut d.notes {
        n.span = move_span(n.span, p);
    }
    let op = |o: &mut u32| *o = p.op(*o).unwrap_or(*o);
    match &mut d.stage {
        Some(Stage::Entry(o) | Stage::Exit(o) | Stage::SymbolUse(o) | Stage::Dominance(o)) => op(o),
        Some(Stage::ParseAt(at)) => *at = p.pos(*at),
        Some(Stage::SymbolTable) | None => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::{analyze_chunk, analyze_chunk_incremental, parse_chunks};

    /// A plain analysis given the incremental state later is an incremental analysis:
    /// the same diagnostics, and the same after an update.
    #[test]
    fn state_given_later_equals_state_kept() {
        let text = "sdy.mesh @m = <[\"x\"=2]>\nfunc.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}]>}) -> tensor<4xf32> {\n  %0 = stablehlo.add %a, %b : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n";
        let chunk = &parse_chunks(text, false)[0];
        let kept = analyze_chunk_incremental(text, chunk);
        let later = analyze_chunk(text, chunk).with_incremental_state(text, chunk);
        assert!(kept.diagnostics.len() >= 2, "{:?}", kept.diagnostics);
        assert_eq!(later.diagnostics, kept.diagnostics);
        assert!(later.tree().is_some());

        let edited = text.replace("%a, %b", "%a, %a");
        let chunk = &parse_chunks(&edited, false)[0];
        let (a, _) = kept.update(&edited, chunk);
        let (b, stats) = later.update(&edited, chunk);
        assert_eq!(a.diagnostics, b.diagnostics);
        assert_eq!(b.diagnostics, analyze_chunk(&edited, chunk).diagnostics);
        assert!(stats.fresh.is_none() || stats.fresh == Some("trees differ"), "{stats:?}");
    }

    /// Shardings written through an alias are verified, and an edit of the alias
    /// re-checks the ops using it; edits elsewhere still give a fresh analysis's result.
    #[test]
    fn edits_of_sharding_aliases_recheck_their_users() {
        let text = "#s = #sdy.sharding<@m, [{\"x\"}]>\nmodule {\n  sdy.mesh @m = <[\"x\"=2]>\n  func.func @f(%a: tensor<4xf32> {sdy.sharding = #s}) -> tensor<4xf32> {\n    %0 = stablehlo.add %a, %a : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n";
        let chunk = &parse_chunks(text, false)[0];
        let mut state = analyze_chunk_incremental(text, chunk);
        assert!(state.diagnostics.is_empty(), "{:?}", state.diagnostics);
        let steps = [
            text.replace("[{\"x\"}]>\nmodule", "[{\"y\"}]>\nmodule"),
            text.replace("[{\"x\"}]>\nmodule", "[{\"y\"}]>\nmodule").replace("%a, %a", "%a, %a "),
            text.to_string(),
        ];
        let mut errors = Vec::new();
        for edited in steps {
            let chunk = &parse_chunks(&edited, false)[0];
            let (next, _) = state.update(&edited, chunk);
            assert_eq!(next.diagnostics, analyze_chunk(&edited, chunk).diagnostics, "{edited}");
            errors.push(next.diagnostics.len());
            state = next;
        }
        assert_eq!(errors, [1, 1, 0]);
    }
}
