//! Building the model from a chunk's tree, in two passes.
//!
//! 1. **Layout** ([`Layout`]): every op in pre-order (so an op's subtree is the id range
//!    right after it, and ids follow the text), each followed by its values (results,
//!    then the block arguments of its regions), so the values of a subtree are a range
//!    too. That is what lets an edit be patched in as a range replacement
//!    (`crate::incremental`).
//! 2. **Resolution** ([`Resolver`]): operands against the names in scope, in the order
//!    MLIR's parser reads them.

use super::names::Names;
use super::{
    elements_type, written_result_type, Model, OpId, OpInfo, Use, ValueDef, ValueId, ValueInfo,
};
use sdy_syntax::tree::{Children, Chunk, Custom, Op, StmtKind, Str, Type};
use sdy_syntax::Span;
use smallvec::SmallVec;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

impl Model {
    pub fn build(chunk: &Chunk) -> Model {
        let (offset, body) = chunk.module_body();
        let base = chunk.span.start + offset;
        // Real modules have an op and a value per ~100 bytes; untouched capacity costs
        // no memory (the pages of a big table are only mapped when written).
        let estimate = chunk.span.len() as usize / 64 + 8;
        let mut m = Model::default();
        m.ops.reserve_exact(estimate);
        m.values.reserve_exact(estimate);
        let mut layout =
            Layout { ops: &mut m.ops, values: &mut m.values, op_base: 0, value_base: 0 };
        layout.block(body, base, None, 0);
        m.top =
            (0..m.ops.len() as OpId).filter(|&id| m.ops[id as usize].parent.is_none()).collect();
        m.index_children();
        let resolve = |m: &Model| {
            let mut r = Resolver::new(m);
            // Sized up front: growing these tables copies them and faults in fresh pages.
            r.names.reserve(m.values.len());
            r.out.links.reserve(m.values.len() * 2);
            r.module_body();
            r.out
        };
        // A big module's keys are computed on another core while names are resolved.
        let (keys, resolved) = if m.values.len() >= 1 << 14 {
            std::thread::scope(|s| {
                let keys = s.spawn(|| group_keys(&m.values));
                let resolved = resolve(&m);
                (keys.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), resolved)
            })
        } else {
            (group_keys(&m.values), resolve(&m))
        };
        m.group_keys = keys;
        m.apply(resolved);
        resolve_forward(&mut m, None);
        m.canonicalize();
        m.index_symbols();
        m.sdy_aliases = sdy_aliases(chunk);
        m
    }

    /// Links operands to the values found for them.
    pub(super) fn apply(&mut self, r: Resolved) {
        for (u, v) in r.links {
            self.values[v as usize].uses.push(u);
            self.ops[u.op as usize].operands[u.operand as usize] = Some(v);
        }
        self.undefined_uses.extend(r.undefined);
        self.redefinitions.extend(r.redefinitions);
    }
}

/// The chunk's top-level aliases of sdy attributes (MLIR defines aliases before their
/// uses, so these come before the module).
pub(crate) fn sdy_aliases(chunk: &Chunk) -> HashMap<String, (u32, std::sync::Arc<Op>)> {
    chunk
        .top
        .iter()
        .filter(|c| is_sdy_alias(c.op))
        .filter_map(|c| match &c.op.custom {
            Custom::Alias(def) => {
                let name = def.name.text.strip_prefix('#')?.to_string();
                Some((name, (chunk.span.start + c.offset, c.op.clone())))
            }
            _ => None,
        })
        .collect()
}

/// Whether `op` defines an alias of an sdy attribute.
pub fn is_sdy_alias(op: &Op) -> bool {
    matches!(&op.custom, Custom::Alias(def) if matches!(&def.value,
        sdy_syntax::tree::AliasValue::Attr(a) if matches!(a.kind, sdy_syntax::tree::AttrKind::Sdy(_))))
}

/// Appends ops and their values in pre-order; ids are the position in the tables plus
/// the bases (a patch lays out the ops of an edit into tables of their own).
pub(super) struct Layout<'t> {
    pub(super) ops: &'t mut Vec<OpInfo>,
    pub(super) values: &'t mut Vec<ValueInfo>,
    pub(super) op_base: OpId,
    pub(super) value_base: ValueId,
}

impl Layout<'_> {
    /// The ops of `kids` (and everything nested in them); operands are left unresolved.
    pub(super) fn block(&mut self, kids: &Children, base: u32, parent: Option<OpId>, region: u32) {
        for c in kids {
            if c.op.kind != StmtKind::Op {
                continue;
            }
            let start = base + c.offset;
            let id = self.op_base + self.ops.len() as OpId;
            let node = &c.op;
            let results = self.results(id, node, start);
            let region_args = self.block_args(id, node, start);
            self.ops.push(OpInfo {
                start,
                node: std::sync::Arc::clone(node),
                parent,
                region,
                operands: SmallVec::from_elem(None, node.operands.len()),
                results,
                region_args,
            });
            for (ri, r) in node.regions.iter().enumerate() {
                for b in &r.blocks {
                    self.block(&b.ops, start, Some(id), ri as u32);
                }
            }
        }
    }

    fn value(&mut self, name: Str, def: ValueDef, span: Span, ty: Option<Type>) -> ValueId {
        let id = self.value_base + self.values.len() as ValueId;
        self.values.push(ValueInfo { name, def, span, ty, uses: SmallVec::new() });
        id
    }

    /// The op's result values: `%0`, or `%0#0`, `%0#1` for a group `%0:2`.
    fn results(&mut self, id: OpId, node: &Op, start: u32) -> SmallVec<[ValueId; 2]> {
        let mut index = 0u32;
        let mut results = SmallVec::new();
        for g in &node.results {
            for k in 0..g.count {
                let ty = written_result_type(node, index as usize)
                    .or_else(|| if index == 0 { elements_type(node) } else { None })
                    .cloned();
                let name = if g.count == 1 {
                    g.name.clone()
                } else {
                    let mut n = Str::default();
                    let _ = write!(n, "{}#{k}", g.name);
                    n
                };
                let def = ValueDef::Result { op: id, index };
                results.push(self.value(name, def, g.span.shift(start), ty));
                index += 1;
            }
        }
        results
    }

    /// The block arguments of every region (function arguments live in the header); the
    /// entry block's of each region are returned.
    fn block_args(&mut self, id: OpId, node: &Op, start: u32) -> Vec<Vec<ValueId>> {
        let mut all = Vec::with_capacity(node.regions.len());
        for (ri, region) in node.regions.iter().enumerate() {
            let mut entry = Vec::new();
            for (bi, block) in region.blocks.iter().enumerate() {
                let def = |index: usize| ValueDef::BlockArg {
                    op: id,
                    region: ri as u32,
                    block: bi as u32,
                    index: index as u32,
                };
                match (&node.custom, ri, bi) {
                    (Custom::Func(f), 0, 0) => {
                        for (ai, a) in f.args.iter().enumerate() {
                            let span = a.span.shift(start);
                            entry.push(self.value(
                                a.name.clone(),
                                def(ai),
                                span,
                                Some(a.ty.clone()),
                            ));
                        }
                    }
                    _ => {
                        for (ai, a) in block.args.iter().enumerate() {
                            let v = self.value(
                                a.name.clone(),
                                def(ai),
                                a.span.shift(start),
                                a.ty.clone(),
                            );
                            if bi == 0 {
                                entry.push(v);
                            }
                        }
                    }
                }
            }
            all.push(entry);
        }
        all
    }
}

/// The types of an op's values as its node writes them, in the order of the values:
/// results, then block arguments (see [`Layout`]).
pub(super) fn value_types(node: &Op) -> Vec<Option<Type>> {
    let mut out: Vec<Option<Type>> = (0..node.num_results() as usize)
        .map(|i| {
            written_result_type(node, i)
                .or_else(|| if i == 0 { elements_type(node) } else { None })
                .cloned()
        })
        .collect();
    for (ri, region) in node.regions.iter().enumerate() {
        for (bi, block) in region.blocks.iter().enumerate() {
            match (&node.custom, ri, bi) {
                (Custom::Func(f), 0, 0) => out.extend(f.args.iter().map(|a| Some(a.ty.clone()))),
                _ => out.extend(block.args.iter().map(|a| a.ty.clone())),
            }
        }
    }
    out
}

/// What the resolution found: operand links, uses left undefined, redefinitions (the
/// new value, the one it shadows).
#[derive(Default)]
pub(super) struct Resolved {
    pub(super) links: Vec<(Use, ValueId)>,
    pub(super) undefined: Vec<Use>,
    pub(super) redefinitions: Vec<(ValueId, ValueId)>,
}

/// Resolves operands against the names in scope, reading the ops as MLIR's parser does:
/// the results of top-level ops are all visible to each other; in a region, operands
/// against the names defined so far (block arguments, earlier results), results after,
/// and names used before their definition in the region are looked up again at its end
/// (forward references are legal in MLIR's parser); nested regions come after that,
/// seeing every name of the enclosing regions. Names still unknown are resolved by the
/// next definition of the name anywhere ([`resolve_forward`]), else undefined.
///
/// Names are borrowed from the model's values and the ops' operands.
pub(super) struct Resolver<'a> {
    m: &'a Model,
    names: Names<'a>,
    /// Ops with regions of the regions being walked (a stack shared by the recursion).
    pending: Vec<OpId>,
    /// Operands whose names were not in scope where their op was read.
    deferred: Vec<(&'a str, u32, Use)>,
    /// Whether new bindings are recorded as redefinitions when they shadow another
    /// (off while a patch replays the scopes around an edit: the model has those).
    pub(super) record: bool,
    /// While a patch replays scopes: the only names that matter (those its new ops use
    /// or define), with their [`fingerprint`]s; the others are not bound.
    pub(super) only: Option<Vec<(u64, &'a str)>>,
    pub(super) out: Resolved,
}

impl<'a> Resolver<'a> {
    /// Hashes every name in scope (a patch binds few names; see `Names::sparse`).
    pub(super) fn sparse_names(&mut self) {
        self.names = Names::sparse();
    }

    pub(super) fn new(m: &'a Model) -> Resolver<'a> {
        Resolver {
            m,
            names: Names::default(),
            pending: Vec::new(),
            deferred: Vec::new(),
            record: true,
            only: None,
            out: Resolved::default(),
        }
    }

    /// The module body: results of all top-level ops first, then their operands, then
    /// their regions (functions are isolated scopes).
    fn module_body(&mut self) {
        let top = &self.m.top;
        for &id in top {
            self.bind_results(id);
        }
        for &id in top {
            self.resolve_operands(id);
        }
        self.resolve_deferred(0);
        for &id in top {
            self.walk_regions(id);
        }
    }

    /// The name value `value_name` binds, if it binds one that matters (see `only`).
    pub(super) fn binds(&self, value_name: &'a str) -> Option<&'a str> {
        let Some(only) = &self.only else { return group_name(value_name) };
        // The group's name for `%x#0`, else the name itself (other `%x#k` never match:
        // bound names have no `#`).
        let b = value_name.as_bytes();
        let name = match b {
            [.., b'#', b'0'] => &value_name[..b.len() - 2],
            _ => value_name,
        };
        let f = fingerprint(name);
        only.iter().find(|(g, u)| *g == f && *u == name).map(|&(_, u)| u)
    }

    /// Binds `name` in the innermost scope, noting a shadowed definition.
    pub(super) fn bind(&mut self, name: &'a str, v: ValueId) {
        if let Some(previous) = self.names.bind(name, v) {
            if self.record {
                self.out.redefinitions.push((v, previous));
            }
        }
    }

    /// Binds the op's result groups (each name to the group's first value).
    pub(super) fn bind_results(&mut self, id: OpId) {
        let m = self.m;
        for &v in &m.ops[id as usize].results {
            if let Some(group) = self.binds(&m.values[v as usize].name) {
                self.bind(group, v);
            }
        }
    }

    /// Binds the block arguments of region `region` of `id` (every block).
    pub(super) fn bind_region_args(&mut self, id: OpId, region: u32) {
        let m = self.m;
        let mut v = args_start(m, id);
        while let Some(info) = m.values.get(v as usize) {
            match info.def {
                ValueDef::BlockArg { op, region: r, .. } if op == id && r <= region => {
                    if r == region && (self.only.is_none() || self.binds(&info.name).is_some()) {
                        self.bind(&info.name, v);
                    }
                }
                _ => break,
            }
            v += 1;
        }
    }

    /// Resolves the op's operands against the names defined so far; the others wait
    /// for the end of the region (`resolve_deferred`).
    pub(super) fn resolve_operands(&mut self, id: OpId) {
        let m = self.m;
        let info = &m.ops[id as usize];
        for (i, r) in info.node.operands.iter().enumerate() {
            let u = Use { op: id, operand: i as u32 };
            let index = r.index.unwrap_or(0);
            match self.names.get(&r.name).and_then(|first| value_at(m, first, index)) {
                Some(v) => self.out.links.push((u, v)),
                None => self.deferred.push((&r.name, index, u)),
            }
        }
    }

    /// A mark for `resolve_deferred`.
    pub(super) fn deferred_mark(&self) -> usize {
        self.deferred.len()
    }

    /// The operands deferred since `base`, with every name of their region defined:
    /// forward references within the region, or undefined (for now: see
    /// [`resolve_forward`]).
    pub(super) fn resolve_deferred(&mut self, base: usize) {
        for k in base..self.deferred.len() {
            let (name, index, u) = self.deferred[k];
            match self.names.get(name).and_then(|first| value_at(self.m, first, index)) {
                Some(v) => self.out.links.push((u, v)),
                None => self.out.undefined.push(u),
            }
        }
        self.deferred.truncate(base);
    }

    /// Reads one op of a region: operands, then results; its regions are queued.
    pub(super) fn read_op(&mut self, id: OpId) {
        self.resolve_operands(id);
        self.bind_results(id);
        if !self.m.ops[id as usize].node.regions.is_empty() {
            self.pending.push(id);
        }
    }

    /// A mark for `walk_pending`.
    pub(super) fn pending_mark(&self) -> usize {
        self.pending.len()
    }

    /// Walks the regions of the ops queued since `base`.
    pub(super) fn walk_pending(&mut self, base: usize) {
        let end = self.pending.len();
        for k in base..end {
            let id = self.pending[k];
            self.walk_regions(id);
        }
        self.pending.truncate(base);
    }

    /// A mark to leave a scope with.
    pub(super) fn scope_mark(&self) -> usize {
        self.names.mark()
    }

    /// Leaves the scopes entered since `mark`.
    pub(super) fn leave_scope(&mut self, mark: usize) {
        self.names.unbind_to(mark);
    }

    /// Resolves the op's regions: block arguments, nested ops, their uses.
    pub(super) fn walk_regions(&mut self, id: OpId) {
        let m = self.m;
        let regions = m.ops[id as usize].node.regions.len() as u32;
        let children = m.children_untracked(id);
        let mut k = 0;
        for ri in 0..regions {
            let mark = self.scope_mark();
            self.bind_region_args(id, ri);
            let base = self.pending_mark();
            let deferred = self.deferred_mark();
            while let Some(&c) = children.get(k).filter(|&&c| m.ops[c as usize].region == ri) {
                self.read_op(c);
                k += 1;
            }
            self.resolve_deferred(deferred);
            self.walk_pending(base);
            self.leave_scope(mark);
        }
    }
}

/// The fingerprints of the names `values` bind (0 for those that bind none).
pub(super) fn group_keys(values: &[ValueInfo]) -> Vec<u64> {
    values.iter().map(|v| group_name(&v.name).map_or(0, fingerprint)).collect()
}

/// A name's first 8 bytes and its length in one word: names compare by it first.
pub(super) fn fingerprint(name: &str) -> u64 {
    let b = name.as_bytes();
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    // Never 0 (the key of values that bind nothing).
    (u64::from_le_bytes(w) ^ ((b.len() as u64) << 56)) | 1 << 63
}

/// The name a value binds: its own for a lone result or an argument, the group's for
/// the first value of a group (`%0` for `%0#0`); `None` for the others of a group.
pub(super) fn group_name(value_name: &str) -> Option<&str> {
    match value_name.split_once('#') {
        None => Some(value_name),
        Some((base, "0")) => Some(base),
        Some(_) => None,
    }
}

/// Resolves undefined uses (all of them, or those in `only`) by the next definition of
/// their name anywhere: MLIR's parser makes names not in scope forward references,
/// resolved by the next definition in the text (even in a nested region); the ones
/// never defined stay undefined.
pub(super) fn resolve_forward(m: &mut Model, only: Option<&HashSet<(OpId, u32)>>) {
    if m.undefined_uses.is_empty() {
        return;
    }
    let considered = |u: &Use| only.is_none_or(|o| o.contains(&(u.op, u.operand)));
    // The written name of each undefined use: (`%x`, `#k` index).
    let written = |m: &Model, u: &Use| {
        let r = &m.ops[u.op as usize].node.operands[u.operand as usize];
        (r.name.to_string(), r.index.unwrap_or(0))
    };
    let wanted: Vec<Option<(String, u32)>> =
        m.undefined_uses.iter().map(|u| considered(u).then(|| written(m, u))).collect();
    let names: HashSet<&str> = wanted.iter().flatten().map(|(n, _)| n.as_str()).collect();
    if names.is_empty() {
        return;
    }
    // Every definition of those names: the group's first value, by definition time.
    let mut defs: HashMap<&str, Vec<(u32, ValueId)>> = HashMap::new();
    for (v, info) in m.values.iter().enumerate() {
        if let Some(&n) = group_name(&info.name).and_then(|g| names.get(g)) {
            defs.entry(n).or_default().push((m.def_time(v as ValueId), v as ValueId));
        }
    }
    let mut still_undefined = Vec::new();
    let mut resolved = Vec::new();
    for (u, w) in m.undefined_uses.iter().zip(&wanted) {
        let def = w.as_ref().and_then(|(name, index)| {
            let at = m.use_time(u.op);
            let (_, first) = defs.get(name.as_str())?.iter().filter(|(t, _)| *t >= at).min()?;
            value_at(m, *first, *index)
        });
        match def {
            Some(v) => resolved.push((*u, v)),
            None => still_undefined.push(*u),
        }
    }
    for (u, v) in resolved {
        m.values[v as usize].uses.push(u);
        m.ops[u.op as usize].operands[u.operand as usize] = Some(v);
        m.forward_references.push(u);
    }
    m.undefined_uses = still_undefined;
}

/// The value `#idx` of the group whose first value is `first`.
pub(super) fn value_at(m: &Model, first: ValueId, idx: u32) -> Option<ValueId> {
    if idx == 0 {
        return Some(first);
    }
    match m.values[first as usize].def {
        ValueDef::Result { op, index } => {
            m.ops[op as usize].results.get((index + idx) as usize).copied()
        }
        ValueDef::BlockArg { .. } => None,
    }
}

/// The id of the first block argument of `id` (values are laid out by op, results
/// first, then the arguments of each region).
pub(super) fn args_start(m: &Model, id: OpId) -> ValueId {
    match m.ops[id as usize].results.last() {
        Some(&last) => last + 1,
        None => m.values.partition_point(|v| v.def.op() < id) as ValueId,
    }
}
