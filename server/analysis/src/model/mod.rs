//! The semantic model of one module (one `// -----` chunk): ops in a flat table with
//! absolute positions and parent links, SSA values with their types and def-use links,
//! and the symbol table (meshes, functions).

pub mod sharding;

use sdy_syntax::tree::{Chunk, Custom, Op, SigForm, StmtKind, Type};
use sdy_syntax::Span;
use sharding::Mesh;
use std::collections::HashMap;
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
    pub operands: Vec<Option<ValueId>>,
    pub results: Vec<ValueId>,
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
    pub name: String,
    pub def: ValueDef,
    /// Absolute span of the defining name (`%0` of `%0:2`, `%arg0`).
    pub span: Span,
    pub ty: Option<Type>,
    pub uses: Vec<Use>,
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
}

impl Model {
    pub fn build(chunk: &Chunk) -> Model {
        let mut b = Builder { m: Model::default(), scopes: Vec::new() };
        let (offset, body) = chunk.module_body();
        let base = chunk.span.start + offset;
        b.scopes.push(HashMap::new());
        for c in body {
            if c.op.kind != StmtKind::Op {
                continue;
            }
            let id = b.add_op(&c.op, base + c.offset, None, 0);
            b.m.top.push(id);
        }
        // Results of top-level ops first, then bodies (functions are isolated scopes).
        for &id in &b.m.top.clone() {
            b.define_results(id);
        }
        for &id in &b.m.top.clone() {
            b.resolve_operands(id);
            b.walk_regions(id);
        }
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

struct Builder {
    m: Model,
    /// Name scopes, innermost last.
    scopes: Vec<HashMap<String, ValueId>>,
}

impl Builder {
    fn add_op(&mut self, node: &Arc<Op>, start: u32, parent: Option<OpId>, region: u32) -> OpId {
        let id = self.m.ops.len() as OpId;
        self.m.ops.push(OpInfo {
            start,
            node: node.clone(),
            parent,
            region,
            operands: Vec::new(),
            results: Vec::new(),
            region_args: Vec::new(),
        });
        id
    }

    fn new_value(&mut self, name: String, def: ValueDef, span: Span, ty: Option<Type>) -> ValueId {
        let id = self.m.values.len() as ValueId;
        self.m.values.push(ValueInfo { name, def, span, ty, uses: Vec::new() });
        id
    }

    /// Creates the op's result values and binds their names in the current scope.
    fn define_results(&mut self, id: OpId) {
        let node = self.m.ops[id as usize].node.clone();
        let start = self.m.ops[id as usize].start;
        let mut index = 0u32;
        let mut results = Vec::new();
        for g in &node.results {
            for k in 0..g.count {
                let ty = written_result_type(&node, index as usize).cloned().or_else(|| {
                    // `func.call` and friends: fall back to nothing.
                    None
                });
                let name =
                    if g.count == 1 { g.name.to_string() } else { format!("{}#{k}", g.name) };
                let v = self.new_value(
                    name.clone(),
                    ValueDef::Result { op: id, index },
                    g.span.shift(start),
                    ty,
                );
                results.push(v);
                index += 1;
            }
            let first = results[results.len() - g.count as usize];
            self.scopes.last_mut().expect("scope").insert(g.name.to_string(), first);
        }
        self.m.ops[id as usize].results = results;
    }

    fn resolve_operands(&mut self, id: OpId) {
        let node = self.m.ops[id as usize].node.clone();
        let start = self.m.ops[id as usize].start;
        let mut operands = Vec::with_capacity(node.operands.len());
        for (i, r) in node.operands.iter().enumerate() {
            let span = r.span.shift(start);
            let u = Use { op: id, operand: i as u32, span };
            let found = self.lookup(&r.name).and_then(|first| {
                let idx = r.index.unwrap_or(0);
                self.result_at(first, idx)
            });
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

    fn lookup(&self, name: &str) -> Option<ValueId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// Builds the op's regions: block arguments, nested ops, their values and uses.
    fn walk_regions(&mut self, id: OpId) {
        let node = self.m.ops[id as usize].node.clone();
        let start = self.m.ops[id as usize].start;
        for (ri, region) in node.regions.iter().enumerate() {
            self.scopes.push(HashMap::new());
            let mut region_args = Vec::new();
            for (bi, block) in region.blocks.iter().enumerate() {
                // Function arguments live in the func header; other block args in the block.
                let args: Vec<(String, Span, Option<Type>)> = match (&node.custom, ri, bi) {
                    (Custom::Func(f), 0, 0) => f
                        .args
                        .iter()
                        .map(|a| (a.name.to_string(), a.span.shift(start), Some(a.ty.clone())))
                        .collect(),
                    _ => block
                        .args
                        .iter()
                        .map(|a| (a.name.to_string(), a.span.shift(start), a.ty.clone()))
                        .collect(),
                };
                for (ai, (name, span, ty)) in args.into_iter().enumerate() {
                    let def = ValueDef::BlockArg {
                        op: id,
                        region: ri as u32,
                        block: bi as u32,
                        index: ai as u32,
                    };
                    let v = self.new_value(name.clone(), def, span, ty);
                    self.scopes.last_mut().expect("scope").insert(name, v);
                    if bi == 0 {
                        region_args.push(v);
                    }
                }
            }
            self.m.ops[id as usize].region_args.push(region_args);
            // All results of the region first (forward references within a region are
            // legal in MLIR's parser), then operands and nested regions.
            let mut ids = Vec::new();
            for block in &region.blocks {
                for c in &block.ops {
                    if c.op.kind != StmtKind::Op {
                        continue;
                    }
                    let child = self.add_op(&c.op, start + c.offset, Some(id), ri as u32);
                    self.define_results(child);
                    ids.push(child);
                }
            }
            for child in ids {
                self.resolve_operands(child);
                self.walk_regions(child);
            }
            self.scopes.pop();
        }
    }
}
