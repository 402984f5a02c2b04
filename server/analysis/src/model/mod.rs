//! The semantic model of one module (one `// -----` chunk): ops in a flat table with
//! absolute positions and parent links, SSA values with their types and def-use links,
//! and the symbol table (meshes, functions).

pub mod sharding;

use rustc_hash::FxHashMap;
use sdy_syntax::tree::{Chunk, Custom, Op, SigForm, StmtKind, Str, Type};
use sdy_syntax::Span;
use sharding::Mesh;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

pub type OpId = u32;
pub type ValueId = u32;

#[derive(Clone, Debug)]
pub struct OpInfo {
    /// Absolute start of the op statement.
    pub start: u32,
    pub node: Arc<Op>,
    pub parent: Option<OpId>,
    /// Which region of the parent holds this op.
    pub region: u32,
    /// Operands, resolved (`None` when the name is undefined).
    pub operands: SmallVec<[Option<ValueId>; 2]>,
    pub results: SmallVec<[ValueId; 2]>,
    /// Block arguments of each region (entry block first), for region ops.
    pub region_args: Vec<Vec<ValueId>>,
}

impl OpInfo {
    /// The absolute span of the whole op statement.
    pub fn span(&self) -> Span {
        Span::new(self.start, self.start + self.node.len)
    }
    /// The absolute span of the op name (where MLIR reports op errors).
    pub fn name_span(&self) -> Span {
        self.node.name.span.shift(self.start)
    }
    /// Where MLIR locates the op: its name (`stablehlo.add` of `%0 = stablehlo.add`, the
    /// quoted name of the generic form).
    pub fn loc(&self) -> u32 {
        self.name_span().start
    }
    pub fn name(&self) -> &str {
        self.node.full_name()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueDef {
    Result {
        op: OpId,
        index: u32,
    },
    /// A block argument of `op`'s region `region` (function arguments included).
    BlockArg {
        op: OpId,
        region: u32,
        block: u32,
        index: u32,
    },
}

#[derive(Clone, Debug)]
pub struct ValueInfo {
    /// The name as written: `%0`, `%arg1`, `%5#1` for the second value of `%5:2`.
    pub name: Str,
    pub def: ValueDef,
    /// Absolute span of the defining name (`%0` of `%0:2`, `%arg0`).
    pub span: Span,
    pub ty: Option<Type>,
    /// Most values have one use: kept inline.
    pub uses: SmallVec<[Use; 1]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Use {
    pub op: OpId,
    pub operand: u32,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct MeshSymbol {
    pub name: String,
    pub op: OpId,
    /// Absolute span of `@name` in `sdy.mesh @name`.
    pub name_span: Span,
    pub mesh: Option<Mesh>,
}

#[derive(Clone, Debug, Default)]
pub struct Model {
    pub ops: Vec<OpInfo>,
    pub values: Vec<ValueInfo>,
    /// Top-level ops of the module body.
    pub top: Vec<OpId>,
    pub meshes: Vec<MeshSymbol>,
    pub mesh_by_name: HashMap<String, usize>,
    pub funcs: HashMap<String, OpId>,
    /// Uses of undefined SSA names: (using op, operand index, name span).
    pub undefined_uses: Vec<Use>,
    /// Uses of names defined only later outside their scope (MLIR's parser resolves such
    /// forward references by the next definition of the name, even in another region).
    pub forward_references: Vec<Use>,
    /// Names defined again while an earlier definition is in scope (MLIR's parser
    /// rejects them): (the new value, the value it shadows), in source order.
    pub redefinitions: Vec<(ValueId, ValueId)>,
    /// `children(op)` is `child_list[child_start[op]..child_start[op + 1]]`.
    child_start: Vec<u32>,
    child_list: Vec<OpId>,
}

impl Model {
    pub fn build(chunk: &Chunk) -> Model {
        let (offset, body) = chunk.module_body();
        let base = chunk.span.start + offset;
        // Real modules have an op and a value per ~100 bytes; untouched capacity costs
        // no memory (the pages of a big table are only mapped when written).
        let estimate = chunk.span.len() as usize / 64 + 8;
        let (ops, values) = (estimate, estimate);
        let mut b = Builder {
            m: Model::default(),
            names: Names::default(),
            pending: Vec::new(),
            deferred: Vec::new(),
        };
        b.m.ops.reserve_exact(ops);
        b.m.values.reserve_exact(values);
        let mut top = Vec::new();
        for c in body {
            if c.op.kind != StmtKind::Op {
                continue;
            }
            let start = base + c.offset;
            let id = b.add_op(&c.op, start, None, 0);
            b.m.top.push(id);
            top.push((id, &*c.op, start));
        }
        // Results of top-level ops first, then bodies (functions are isolated scopes).
        for &(id, node, start) in &top {
            b.define_results(id, node, start);
        }
        for &(id, node, start) in &top {
            b.resolve_operands(id, node, start);
        }
        b.resolve_deferred(0);
        for &(id, node, start) in &top {
            b.walk_regions(id, node, start);
        }
        b.resolve_forward();
        b.m.index_children();
        b.m.index_symbols();
        // A name bound again is a redefinition only if the earlier definition came
        // first in the text (results of an outer op after this region are defined later).
        let mut redefinitions = std::mem::take(&mut b.m.redefinitions);
        redefinitions.retain(|&(new, old)| b.m.def_time(old) < b.m.def_time(new));
        redefinitions.sort_by_key(|&(new, _)| b.m.def_time(new));
        b.m.redefinitions = redefinitions;
        b.m
    }

    pub fn op(&self, id: OpId) -> &OpInfo {
        &self.ops[id as usize]
    }
    pub fn value(&self, id: ValueId) -> &ValueInfo {
        &self.values[id as usize]
    }
    pub fn mesh(&self, name: &str) -> Option<&MeshSymbol> {
        self.mesh_by_name.get(name).map(|&i| &self.meshes[i])
    }

    /// The ops nested directly in `op`'s regions, in region and source order.
    pub fn children(&self, op: OpId) -> &[OpId] {
        match (self.child_start.get(op as usize), self.child_start.get(op as usize + 1)) {
            (Some(&a), Some(&b)) => &self.child_list[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The chain of enclosing ops, innermost first.
    pub fn ancestors(&self, id: OpId) -> impl Iterator<Item = OpId> + '_ {
        std::iter::successors(self.op(id).parent, move |&p| self.op(p).parent)
    }

    /// Type of an operand of `op`, from its definition or, failing that, as written.
    pub fn operand_type(&self, op: OpId, index: usize) -> Option<&Type> {
        let info = self.op(op);
        if let Some(Some(v)) = info.operands.get(index) {
            if let Some(t) = &self.value(*v).ty {
                return Some(t);
            }
        }
        written_operand_type(&info.node, index)
    }

    /// Where MLIR's parser resolves the operands of `op`: after the types written for
    /// them (the signature, which some ops write before their regions), else at the end.
    pub fn use_time(&self, op: OpId) -> u32 {
        let info = self.op(op);
        match info.node.sig.span {
            Some(sig) => info.start + sig.end,
            None => info.span().end,
        }
    }

    /// Where MLIR's parser defines `v`: at the end of its op for a result (after the
    /// op's operands are resolved), where its region starts for a block argument (also
    /// when the op writes its arguments before, as `stablehlo.while` and functions do).
    pub fn def_time(&self, v: ValueId) -> u32 {
        match self.value(v).def {
            ValueDef::Result { op, .. } => self.op(op).span().end,
            ValueDef::BlockArg { op, region, .. } => {
                let info = self.op(op);
                match info.node.regions.get(region as usize) {
                    Some(r) => info.start + r.span.start,
                    None => self.value(v).span.start,
                }
            }
        }
    }

    pub fn result_type(&self, op: OpId, index: usize) -> Option<&Type> {
        let info = self.op(op);
        info.results.get(index).and_then(|&v| self.value(v).ty.as_ref())
    }

    /// Lays out the children of every op in one array: counts, offsets, then ids in
    /// id order (which is region and source order: the builder numbers the ops of a
    /// region before anything nested in them, and region by region).
    fn index_children(&mut self) {
        let n = self.ops.len();
        let mut start = vec![0u32; n + 1];
        for op in &self.ops {
            if let Some(p) = op.parent {
                start[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0 as OpId; start[n] as usize];
        for (id, op) in self.ops.iter().enumerate() {
            if let Some(p) = op.parent {
                list[fill[p as usize] as usize] = id as OpId;
                fill[p as usize] += 1;
            }
        }
        self.child_start = start;
        self.child_list = list;
    }

    fn index_symbols(&mut self) {
        for &id in &self.top {
            let info = &self.ops[id as usize];
            // `sdy.mesh @m = <...>`, or the generic `"sdy.mesh"() <{mesh = ..., sym_name = "m"}>`.
            let mesh_sym = match &info.node.custom {
                Custom::Mesh { sym } => Some((sym.text.to_string(), sym.span)),
                _ if info.node.generic && info.node.full_name() == "sdy.mesh" => info
                    .node
                    .inherent_attr("sym_name")
                    .and_then(|a| match a.value.as_ref().map(|v| &v.kind) {
                        Some(sdy_syntax::tree::AttrKind::String { raw }) => {
                            Some((raw.to_string(), a.value.as_ref().map_or(a.span, |v| v.span)))
                        }
                        _ => None,
                    }),
                _ => None,
            };
            if let Some((name, span)) = mesh_sym {
                let mesh =
                    info.node.inherent_attr("mesh").and_then(|a| a.value.as_ref()).and_then(|v| {
                        match &v.kind {
                            sdy_syntax::tree::AttrKind::Sdy(s) => match &**s {
                                sdy_syntax::sdy::SdyAttr::Mesh(m) => {
                                    Some(Mesh::from_ast(m, info.start))
                                }
                                _ => None,
                            },
                            _ => None,
                        }
                    });
                let idx = self.meshes.len();
                self.meshes.push(MeshSymbol {
                    name: name.clone(),
                    op: id,
                    name_span: span.shift(info.start),
                    mesh,
                });
                self.mesh_by_name.entry(name).or_insert(idx);
            }
            if let Custom::Func(f) = &info.node.custom {
                self.funcs.entry(f.sym.text.to_string()).or_insert(id);
            }
        }
    }
}

/// The type written for operand `index` in the op's signature.
pub fn written_operand_type(op: &Op, index: usize) -> Option<&Type> {
    match op.sig.form {
        SigForm::Function => op.sig.inputs.get(index),
        SigForm::List if op.sig.inputs.len() == 1 => op.sig.inputs.first(),
        SigForm::List if op.sig.inputs.len() == op.operands.len() => op.sig.inputs.get(index),
        _ => None,
    }
}

/// The type of a pretty constant's value (`stablehlo.constant dense<1> : tensor<i32>`),
/// which is its result's type.
fn elements_type(op: &Op) -> Option<&Type> {
    let value = op.inherent_attr("value").or_else(|| op.attr("value"))?.value.as_ref()?;
    match &value.kind {
        sdy_syntax::tree::AttrKind::Elements { ty: Some(ty) } => Some(ty),
        _ => None,
    }
}

/// The type written for result `index` in the op's signature.
pub fn written_result_type(op: &Op, index: usize) -> Option<&Type> {
    match op.sig.form {
        SigForm::Function => op.sig.outputs.get(index),
        SigForm::List if op.sig.inputs.len() == 1 => op.sig.inputs.first(),
        SigForm::List if op.sig.inputs.len() == op.num_results() as usize => {
            op.sig.inputs.get(index)
        }
        _ => None,
    }
}

/// Builds the model in one walk over the tree.
struct Builder<'a> {
    m: Model,
    names: Names<'a>,
    /// Ops with regions of the regions being walked (a stack shared by the recursion).
    pending: Vec<(OpId, &'a Op, u32)>,
    /// Operands whose names were not in scope where their op was read: resolved when
    /// their region is complete (forward references), else undefined.
    deferred: Vec<(&'a str, u32, Use)>,
}

/// The SSA names in scope: a stack of per-region scopes searched innermost first, kept
/// as one table plus an undo log (entering a region notes the log's length; each new
/// binding logs what it shadowed; leaving the region restores that). Names are the
/// tree's own strings, never copied. `%N` names (most of them: MLIR numbers values)
/// index an array, which is also cache friendly as values are used soon after their
/// definition; other names go through a hash map.
#[derive(Default)]
struct Names<'a> {
    numbered: Vec<ValueId>,
    hashed: FxHashMap<Key<'a>, ValueId>,
    undo: Vec<(Key<'a>, Option<ValueId>)>,
}

/// Not a value in `Names::numbered`.
const UNBOUND: ValueId = ValueId::MAX;
/// `%N` names above this are hashed (no huge arrays for odd names).
const MAX_NUMBERED: u32 = 1 << 22;

impl<'a> Names<'a> {
    fn get(&self, name: &str) -> Option<ValueId> {
        match key(name) {
            Key::Number(n) => self.numbered.get(n as usize).copied().filter(|&v| v != UNBOUND),
            k => self.hashed.get(&k).copied(),
        }
    }

    /// Binds `name` to `v`; the value it shadows, if any.
    fn bind(&mut self, name: &'a str, v: ValueId) -> Option<ValueId> {
        let k = key(name);
        let shadowed = self.set(k, Some(v));
        self.undo.push((k, shadowed));
        shadowed
    }

    /// Binds or unbinds `k`; what it was bound to.
    fn set(&mut self, k: Key<'a>, v: Option<ValueId>) -> Option<ValueId> {
        match (k, v) {
            (Key::Number(n), _) => {
                let n = n as usize;
                if n >= self.numbered.len() {
                    self.numbered.resize((n + 1).max(2 * self.numbered.len()), UNBOUND);
                }
                let old = std::mem::replace(&mut self.numbered[n], v.unwrap_or(UNBOUND));
                (old != UNBOUND).then_some(old)
            }
            (k, Some(v)) => self.hashed.insert(k, v),
            (k, None) => self.hashed.remove(&k),
        }
    }

    /// A mark to leave a region with.
    fn mark(&self) -> usize {
        self.undo.len()
    }

    /// Leaves the scopes entered since `mark`.
    fn unbind_to(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let (k, shadowed) = self.undo.pop().expect("undo entry");
            self.set(k, shadowed);
        }
    }
}

/// A name as a key: `%N` (decimal, no leading zero) as its number; other names of up
/// to 7 bytes (`%arg12`, `%cst_1`) packed with their length into an integer, so that
/// hashing and comparing them is one machine word; longer names as strings.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key<'a> {
    Number(u32),
    Short(u64),
    Long(&'a str),
}

fn key(name: &str) -> Key<'_> {
    let b = name.as_bytes();
    if let [b'%', digits @ ..] = b {
        if !digits.is_empty()
            && digits.len() <= 7
            && (digits[0] != b'0' || digits.len() == 1)
            && digits.iter().all(u8::is_ascii_digit)
        {
            let n = digits.iter().fold(0u32, |n, d| n * 10 + (d - b'0') as u32);
            if n < MAX_NUMBERED {
                return Key::Number(n);
            }
        }
    }
    if b.len() <= 7 {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        w[7] = b.len() as u8;
        Key::Short(u64::from_le_bytes(w))
    } else {
        Key::Long(name)
    }
}

impl<'a> Builder<'a> {
    fn add_op(&mut self, node: &'a Arc<Op>, start: u32, parent: Option<OpId>, region: u32) -> OpId {
        let id = self.m.ops.len() as OpId;
        self.m.ops.push(OpInfo {
            start,
            node: node.clone(),
            parent,
            region,
            operands: SmallVec::new(),
            results: SmallVec::new(),
            region_args: Vec::new(),
        });
        id
    }

    fn new_value(&mut self, name: Str, def: ValueDef, span: Span, ty: Option<Type>) -> ValueId {
        let id = self.m.values.len() as ValueId;
        self.m.values.push(ValueInfo { name, def, span, ty, uses: SmallVec::new() });
        id
    }

    /// Uses of names not in scope where they are used: MLIR's parser makes them forward
    /// references, resolved by the next definition of the name in the text (even in a
    /// nested region); the ones never defined stay undefined.
    fn resolve_forward(&mut self) {
        if self.m.undefined_uses.is_empty() {
            return;
        }
        let m = &mut self.m;
        // The written name of each undefined use: (`%x`, `#k` index).
        let wanted: Vec<(String, u32)> = m
            .undefined_uses
            .iter()
            .map(|u| {
                let r = &m.ops[u.op as usize].node.operands[u.operand as usize];
                (r.name.to_string(), r.index.unwrap_or(0))
            })
            .collect();
        let names: std::collections::HashSet<&str> =
            wanted.iter().map(|(n, _)| n.as_str()).collect();
        // Every definition of those names: the group's first value, by definition time.
        let mut defs: HashMap<&str, Vec<(u32, ValueId)>> = HashMap::new();
        for (v, info) in m.values.iter().enumerate() {
            let (base, first) = match info.name.split_once('#') {
                Some((base, k)) => (base, k == "0"),
                None => (info.name.as_str(), true),
            };
            if first {
                if let Some(&n) = names.get(base) {
                    defs.entry(n).or_default().push((m.def_time(v as ValueId), v as ValueId));
                }
            }
        }
        let mut still_undefined = Vec::new();
        for (u, (name, index)) in std::mem::take(&mut m.undefined_uses).into_iter().zip(&wanted) {
            let at = m.use_time(u.op);
            let def = defs
                .get(name.as_str())
                .and_then(|d| d.iter().filter(|(t, _)| *t >= at).min_by_key(|(t, _)| *t))
                .and_then(|&(_, first)| Self::value_at(m, first, *index));
            match def {
                Some(v) => {
                    m.values[v as usize].uses.push(u);
                    m.ops[u.op as usize].operands[u.operand as usize] = Some(v);
                    m.forward_references.push(u);
                }
                None => still_undefined.push(u),
            }
        }
        m.undefined_uses = still_undefined;
    }

    fn value_at(m: &Model, first: ValueId, idx: u32) -> Option<ValueId> {
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

    /// Binds `name` in the innermost scope, noting a shadowed definition.
    fn bind(&mut self, name: &'a str, v: ValueId) {
        if let Some(previous) = self.names.bind(name, v) {
            self.m.redefinitions.push((v, previous));
        }
    }

    /// Creates the op's result values and binds their names in the current scope.
    fn define_results(&mut self, id: OpId, node: &'a Op, start: u32) {
        let mut index = 0u32;
        let mut results = SmallVec::new();
        for g in &node.results {
            let first = self.m.values.len() as ValueId;
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
                let v = self.new_value(
                    name,
                    ValueDef::Result { op: id, index },
                    g.span.shift(start),
                    ty,
                );
                results.push(v);
                index += 1;
            }
            if g.count > 0 {
                self.bind(&g.name, first);
            }
        }
        self.m.ops[id as usize].results = results;
    }

    /// Resolves the op's operands against the names defined so far; the others wait
    /// for the end of the region (`resolve_deferred`).
    fn resolve_operands(&mut self, id: OpId, node: &'a Op, start: u32) {
        let mut operands = SmallVec::with_capacity(node.operands.len());
        for (i, r) in node.operands.iter().enumerate() {
            let span = r.span.shift(start);
            let u = Use { op: id, operand: i as u32, span };
            let found = self
                .names
                .get(&r.name)
                .and_then(|first| self.result_at(first, r.index.unwrap_or(0)));
            match found {
                Some(v) => {
                    self.m.values[v as usize].uses.push(u);
                    operands.push(Some(v));
                }
                None => {
                    self.deferred.push((&r.name, r.index.unwrap_or(0), u));
                    operands.push(None);
                }
            }
        }
        self.m.ops[id as usize].operands = operands;
    }

    /// The operands deferred since `base`, with every name of their region defined:
    /// forward references within the region, or undefined (for now: see
    /// `resolve_forward`).
    fn resolve_deferred(&mut self, base: usize) {
        for k in base..self.deferred.len() {
            let (name, index, u) = self.deferred[k];
            match self.names.get(name).and_then(|first| self.result_at(first, index)) {
                Some(v) => {
                    self.m.values[v as usize].uses.push(u);
                    self.m.ops[u.op as usize].operands[u.operand as usize] = Some(v);
                }
                None => self.m.undefined_uses.push(u),
            }
        }
        self.deferred.truncate(base);
    }

    /// The value `#idx` of the group whose first value is `first`.
    fn result_at(&self, first: ValueId, idx: u32) -> Option<ValueId> {
        Self::value_at(&self.m, first, idx)
    }

    /// Builds the op's regions: block arguments, nested ops, their values and uses.
    fn walk_regions(&mut self, id: OpId, node: &'a Op, start: u32) {
        if node.regions.is_empty() {
            return;
        }
        let mut all_args = Vec::with_capacity(node.regions.len());
        for (ri, region) in node.regions.iter().enumerate() {
            let mark = self.names.mark();
            let mut region_args = Vec::new();
            for (bi, block) in region.blocks.iter().enumerate() {
                let def = |index: usize| ValueDef::BlockArg {
                    op: id,
                    region: ri as u32,
                    block: bi as u32,
                    index: index as u32,
                };
                // Function arguments live in the func header; other block args in the block.
                match (&node.custom, ri, bi) {
                    (Custom::Func(f), 0, 0) => {
                        for (ai, a) in f.args.iter().enumerate() {
                            let v = self.new_value(
                                a.name.clone(),
                                def(ai),
                                a.span.shift(start),
                                Some(a.ty.clone()),
                            );
                            self.bind(&a.name, v);
                            region_args.push(v);
                        }
                    }
                    _ => {
                        for (ai, a) in block.args.iter().enumerate() {
                            let v = self.new_value(
                                a.name.clone(),
                                def(ai),
                                a.span.shift(start),
                                a.ty.clone(),
                            );
                            self.bind(&a.name, v);
                            if bi == 0 {
                                region_args.push(v);
                            }
                        }
                    }
                }
            }
            all_args.push(region_args);
            // One pass over the ops, as MLIR's parser reads them (each node is read
            // once while it is in cache): operands against the names defined so far,
            // then results. Names used before their definition in the region are
            // resolved at its end (forward references are legal in MLIR's parser);
            // nested regions come after that, seeing every name of this region.
            let base = self.pending.len();
            let deferred = self.deferred.len();
            for block in &region.blocks {
                for c in &block.ops {
                    if c.op.kind != StmtKind::Op {
                        continue;
                    }
                    let child_start = start + c.offset;
                    let child = self.add_op(&c.op, child_start, Some(id), ri as u32);
                    self.resolve_operands(child, &c.op, child_start);
                    self.define_results(child, &c.op, child_start);
                    if !c.op.regions.is_empty() {
                        self.pending.push((child, &c.op, child_start));
                    }
                }
            }
            self.resolve_deferred(deferred);
            let end = self.pending.len();
            for k in base..end {
                let (child, child_node, child_start) = self.pending[k];
                self.walk_regions(child, child_node, child_start);
            }
            self.pending.truncate(base);
            self.names.unbind_to(mark);
        }
        self.m.ops[id as usize].region_args = all_args;
    }
}
