//! The semantic model of one module (one `// -----` chunk): ops in a flat table with
//! absolute positions and parent links, SSA values with their types and def-use links,
//! and the symbol table (meshes, functions).

pub mod sharding;

use rustc_hash::FxHashMap;
use sdy_syntax::tree::{Child, Chunk, Custom, Op, SigForm, StmtKind, Str, Type};
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
    /// `children(op)` is `child_list[child_start[op]..child_start[op + 1]]`.
    child_start: Vec<u32>,
    child_list: Vec<OpId>,
}

impl Model {
    pub fn build(chunk: &Chunk) -> Model {
        let (offset, body) = chunk.module_body();
        let base = chunk.span.start + offset;
        let (mut ops, mut values) = (0, 0);
        count(body, &mut ops, &mut values);
        let mut b = Builder {
            m: Model::default(),
            names: FxHashMap::default(),
            undo: Vec::new(),
            pending: Vec::new(),
        };
        b.m.ops.reserve_exact(ops);
        b.m.values.reserve_exact(values);
        b.names.reserve(values.min(1 << 16));
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
            b.walk_regions(id, node, start);
        }
        b.m.index_children();
        b.m.index_symbols();
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

/// Builds the model in one walk over the tree. Names are bound in one hash map keyed by
/// the names as written in the tree (no copies); entering a region records what each
/// new binding shadowed and leaving it restores that, which is exactly a stack of
/// per-region scopes searched innermost first, without a map per region.
struct Builder<'a> {
    m: Model,
    names: FxHashMap<&'a str, ValueId>,
    /// Bindings made since the start of the build: the name and what it shadowed.
    undo: Vec<(&'a str, Option<ValueId>)>,
    /// Ops of the regions being walked (a stack shared by the recursion).
    pending: Vec<(OpId, &'a Op, u32)>,
}

/// How many ops and values a tree holds, to size the tables once.
fn count(children: &[Child], ops: &mut usize, values: &mut usize) {
    for c in children {
        if c.op.kind != StmtKind::Op {
            continue;
        }
        *ops += 1;
        *values += c.op.num_results() as usize;
        if let Custom::Func(f) = &c.op.custom {
            *values += f.args.len();
        }
        for r in &c.op.regions {
            for b in &r.blocks {
                *values += b.args.len();
                count(&b.ops, ops, values);
            }
        }
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

    /// Binds `name` in the innermost scope.
    fn bind(&mut self, name: &'a str, v: ValueId) {
        let shadowed = self.names.insert(name, v);
        self.undo.push((name, shadowed));
    }

    /// Leaves the scopes entered since the undo log had `mark` entries.
    fn unbind_to(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let (name, shadowed) = self.undo.pop().expect("undo entry");
            match shadowed {
                Some(v) => {
                    self.names.insert(name, v);
                }
                None => {
                    self.names.remove(name);
                }
            }
        }
    }

    /// Creates the op's result values and binds their names in the current scope.
    fn define_results(&mut self, id: OpId, node: &'a Op, start: u32) {
        let mut index = 0u32;
        let mut results = SmallVec::new();
        for g in &node.results {
            let first = self.m.values.len() as ValueId;
            for k in 0..g.count {
                let ty = written_result_type(node, index as usize).cloned();
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

    fn resolve_operands(&mut self, id: OpId, node: &'a Op, start: u32) {
        let mut operands = SmallVec::with_capacity(node.operands.len());
        for (i, r) in node.operands.iter().enumerate() {
            let span = r.span.shift(start);
            let u = Use { op: id, operand: i as u32, span };
            let found = self
                .names
                .get(r.name.as_str())
                .and_then(|&first| self.result_at(first, r.index.unwrap_or(0)));
            match found {
                Some(v) => {
                    self.m.values[v as usize].uses.push(u);
                    operands.push(Some(v));
                }
                None => {
                    self.m.undefined_uses.push(u);
                    operands.push(None);
                }
            }
        }
        self.m.ops[id as usize].operands = operands;
    }

    /// The value `#idx` of the group whose first value is `first`.
    fn result_at(&self, first: ValueId, idx: u32) -> Option<ValueId> {
        if idx == 0 {
            return Some(first);
        }
        match self.m.values[first as usize].def {
            ValueDef::Result { op, index } => {
                self.m.ops[op as usize].results.get((index + idx) as usize).copied()
            }
            ValueDef::BlockArg { .. } => None,
        }
    }

    /// Builds the op's regions: block arguments, nested ops, their values and uses.
    fn walk_regions(&mut self, id: OpId, node: &'a Op, start: u32) {
        if node.regions.is_empty() {
            return;
        }
        let mut all_args = Vec::with_capacity(node.regions.len());
        for (ri, region) in node.regions.iter().enumerate() {
            let mark = self.undo.len();
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
            // All results of the region first (forward references within a region are
            // legal in MLIR's parser), then operands and nested regions.
            let base = self.pending.len();
            for block in &region.blocks {
                for c in &block.ops {
                    if c.op.kind != StmtKind::Op {
                        continue;
                    }
                    let child_start = start + c.offset;
                    let child = self.add_op(&c.op, child_start, Some(id), ri as u32);
                    self.define_results(child, &c.op, child_start);
                    self.pending.push((child, &c.op, child_start));
                }
            }
            let end = self.pending.len();
            for k in base..end {
                let (child, child_node, child_start) = self.pending[k];
                self.resolve_operands(child, child_node, child_start);
                self.walk_regions(child, child_node, child_start);
            }
            self.pending.truncate(base);
            self.unbind_to(mark);
        }
        self.m.ops[id as usize].region_args = all_args;
    }
}
