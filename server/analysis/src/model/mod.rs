//! The semantic model of one module (one `// -----` chunk): ops in a flat table with
//! absolute positions and parent links, SSA values with their types and def-use links,
//! and the symbol table (meshes, functions).
//!
//! The tables are in a canonical order that depends only on the text: ops in pre-order
//! (= by start), values by their op (results, then block arguments), uses by using op.
//! So a model patched after an edit (`crate::incremental`) equals a fresh build.

mod build;
pub use build::is_sdy_alias;
mod names;
pub mod patch;
pub mod sharding;
pub mod track;

use sdy_syntax::tree::{Custom, Op, SigForm, Str, Type};
use sdy_syntax::Span;
use sharding::SpannedMesh;
use smallvec::SmallVec;
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
    /// quoted name of the generic form). StableHLO's parser of the custom
    /// `stablehlo.reduce(%x init: %i) ...` locates the op at the `(` after its name.
    pub fn loc(&self) -> u32 {
        let name = self.name_span();
        if !self.node.generic && self.name() == "stablehlo.reduce" {
            return name.end;
        }
        name.start
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

impl ValueDef {
    /// The op defining the value, or owning the block it is an argument of.
    pub fn op(&self) -> OpId {
        match *self {
            ValueDef::Result { op, .. } | ValueDef::BlockArg { op, .. } => op,
        }
    }
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
}

#[derive(Clone, Debug, PartialEq)]
pub struct MeshSymbol {
    pub name: String,
    pub op: OpId,
    /// Absolute span of `@name` in `sdy.mesh @name`.
    pub name_span: Span,
    pub mesh: Option<SpannedMesh>,
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
    /// Top-level attribute aliases whose value is an sdy attribute (`#s = #sdy.sharding<...>`),
    /// by name without the `#`: the absolute start of the definition and its statement.
    pub sdy_aliases: HashMap<String, (u32, Arc<Op>)>,
    /// `children(op)` is `child_list[child_start[op]..child_start[op + 1]]`.
    child_start: Vec<u32>,
    child_list: Vec<OpId>,
    /// Per value, a fingerprint of the name it binds (`build::fingerprint`; 0 for the
    /// values of a group after its first): what a patch looks names up by.
    group_keys: Vec<u64>,
    /// Whether two top-level ops may define the same symbol (see [`Model::symbol_clash`]).
    symbol_clash: bool,
    /// The alias lines of the model's text, indexed on the first lookup
    /// ([`Model::loc_alias`]); a patch drops them.
    alias_lines: std::sync::OnceLock<crate::mlir_loc::AliasLines>,
}

impl Model {
    // The accessors note what they read (see `track`). Inlined: the verifier calls them
    // per fact, and whether they inline otherwise depends on how codegen units split.

    #[inline]
    pub fn op(&self, id: OpId) -> &OpInfo {
        track::note(track::OP | id);
        &self.ops[id as usize]
    }
    #[inline]
    pub fn value(&self, id: ValueId) -> &ValueInfo {
        track::note(track::VALUE | id);
        &self.values[id as usize]
    }
    /// Where use `u` is written (`%name` or `%name#k`): read from its op, so an edit
    /// moves it with the op instead of every value's use list.
    pub fn use_span(&self, u: &Use) -> Span {
        let op = &self.ops[u.op as usize];
        op.node.operands.get(u.operand as usize).map_or(op.span(), |r| r.span.shift(op.start))
    }
    /// The value of the sdy attribute alias `#name` and the absolute start its spans are
    /// relative to.
    pub fn sdy_alias(&self, name: &str) -> Option<(u32, &sdy_syntax::tree::Attr)> {
        let (start, op) = self.sdy_aliases.get(name)?;
        match &op.custom {
            Custom::Alias(def) => match &def.value {
                sdy_syntax::tree::AliasValue::Attr(a) => Some((*start, a)),
                _ => None,
            },
            _ => None,
        }
    }
    /// Whether two top-level symbol definitions (meshes, functions) may share a name;
    /// `false`: they certainly do not (the symbol table has nothing to report).
    pub fn symbol_clash(&self) -> bool {
        self.symbol_clash
    }

    pub fn mesh(&self, name: &str) -> Option<&MeshSymbol> {
        track::note(track::symbol(name));
        self.mesh_by_name.get(name).map(|&i| &self.meshes[i])
    }

    /// The definition of the location alias `name` in `src`, the text of the model
    /// ([`crate::mlir_loc::alias_in`], without a scan of the text per lookup).
    pub fn loc_alias<'a>(&self, src: &'a str, name: &str) -> Option<&'a str> {
        self.alias_lines.get_or_init(|| crate::mlir_loc::AliasLines::new(src)).find(src, name)
    }

    /// The ops nested directly in `op`'s regions, in region and source order.
    pub fn children(&self, op: OpId) -> &[OpId] {
        track::note(track::CHILDREN | op);
        self.children_untracked(op)
    }

    /// The end of `op`'s subtree: ops `op + 1 .. subtree_end(op)` are nested in it (ids
    /// are in pre-order).
    pub fn subtree_end(&self, op: OpId) -> OpId {
        let mut at = op;
        while let Some(&last) = self.children_untracked(at).last() {
            at = last;
        }
        at + 1
    }

    /// `children` without noting the read (see `track`).
    pub(crate) fn children_untracked(&self, op: OpId) -> &[OpId] {
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
    /// id order (which is region and source order: ids are in pre-order).
    fn index_children(&mut self) {
        // Counts, offsets, then ids filled from the back (each cursor ends at its list's
        // start), reusing the tables' memory.
        let n = self.ops.len();
        let mut start = std::mem::take(&mut self.child_start);
        start.clear();
        start.resize(n + 1, 0);
        for op in &self.ops {
            if let Some(p) = op.parent {
                start[p as usize] += 1;
            }
        }
        let mut total = 0;
        for s in start.iter_mut() {
            total += *s;
            *s = total;
        }
        let mut list = std::mem::take(&mut self.child_list);
        list.clear();
        list.resize(total as usize, 0);
        for (id, op) in self.ops.iter().enumerate().rev() {
            if let Some(p) = op.parent {
                let s = &mut start[p as usize];
                *s -= 1;
                list[*s as usize] = id as OpId;
            }
        }
        self.child_start = start;
        self.child_list = list;
    }

    /// The first difference between two models, described (`None`: equal). Ops are
    /// compared by their node's identity: both models must come from the same tree.
    #[doc(hidden)]
    pub fn difference(&self, other: &Model) -> Option<String> {
        if self.ops.len() != other.ops.len() {
            return Some(format!("{} ops vs {}", self.ops.len(), other.ops.len()));
        }
        for (i, (a, b)) in self.ops.iter().zip(&other.ops).enumerate() {
            let same = a.start == b.start
                && Arc::ptr_eq(&a.node, &b.node)
                && a.parent == b.parent
                && a.region == b.region
                && a.operands == b.operands
                && a.results == b.results
                && a.region_args == b.region_args;
            if !same {
                return Some(format!("op {i}: {a:?}\nvs {b:?}").chars().take(2000).collect());
            }
        }
        if self.values.len() != other.values.len() {
            return Some(format!("{} values vs {}", self.values.len(), other.values.len()));
        }
        for (i, (a, b)) in self.values.iter().zip(&other.values).enumerate() {
            if a.name != b.name
                || a.def != b.def
                || a.span != b.span
                || a.ty != b.ty
                || a.uses != b.uses
            {
                return Some(format!("value {i}: {a:?}\nvs {b:?}"));
            }
        }
        let lists = [
            ("top", format!("{:?}", self.top), format!("{:?}", other.top)),
            ("meshes", format!("{:?}", self.meshes), format!("{:?}", other.meshes)),
            ("funcs", format!("{:?}", sorted(&self.funcs)), format!("{:?}", sorted(&other.funcs))),
            (
                "mesh_by_name",
                format!("{:?}", sorted(&self.mesh_by_name)),
                format!("{:?}", sorted(&other.mesh_by_name)),
            ),
            (
                "undefined",
                format!("{:?}", self.undefined_uses),
                format!("{:?}", other.undefined_uses),
            ),
            (
                "forward",
                format!("{:?}", self.forward_references),
                format!("{:?}", other.forward_references),
            ),
            (
                "redefinitions",
                format!("{:?}", self.redefinitions),
                format!("{:?}", other.redefinitions),
            ),
            ("symbol clash", format!("{}", self.symbol_clash), format!("{}", other.symbol_clash)),
            ("children", format!("{:?}", self.child_start), format!("{:?}", other.child_start)),
            ("child list", format!("{:?}", self.child_list), format!("{:?}", other.child_list)),
        ];
        if self.group_keys != other.group_keys {
            return Some("group keys differ".into());
        }
        lists
            .into_iter()
            .find(|(_, a, b)| a != b)
            .map(|(what, a, b)| format!("{what}: {a}\nvs {b}"))
    }

    /// The canonical order of the lists the resolution fills in whatever order it meets
    /// them: uses by using op and operand; undefined and forward uses likewise;
    /// redefinitions (kept only when the earlier definition comes first in the text:
    /// results of an outer op after a region are defined later) by definition time.
    fn canonicalize(&mut self) {
        for v in &mut self.values {
            if v.uses.len() > 1 {
                v.uses.sort_unstable_by_key(|u| (u.op, u.operand));
            }
        }
        self.undefined_uses.sort_unstable_by_key(|u| (u.op, u.operand));
        self.forward_references.sort_unstable_by_key(|u| (u.op, u.operand));
        let mut redefinitions = std::mem::take(&mut self.redefinitions);
        redefinitions.retain(|&(new, old)| self.def_time(old) < self.def_time(new));
        redefinitions.sort_unstable_by_key(|&(new, old)| (self.def_time(new), new, old));
        self.redefinitions = redefinitions;
    }

    fn index_symbols(&mut self) {
        self.funcs.clear();
        self.symbol_clash = false;
        self.index_meshes(true);
        for &id in &self.top {
            let info = &self.ops[id as usize];
            if let Custom::Func(f) = &info.node.custom {
                let name = f.sym.text.as_str();
                self.symbol_clash |= self.mesh_by_name.contains_key(name);
                if self.funcs.contains_key(name) {
                    self.symbol_clash = true;
                } else {
                    self.funcs.insert(name.to_string(), id);
                }
            }
        }
    }

    /// The mesh symbols (`clash`: noting a mesh name defined twice; functions are
    /// checked against them in `index_symbols`).
    fn index_meshes(&mut self, clash: bool) {
        self.meshes.clear();
        self.mesh_by_name.clear();
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
                                    Some(SpannedMesh::from_ast(m, info.start))
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
                if clash && self.mesh_by_name.contains_key(&name) {
                    self.symbol_clash = true;
                }
                self.mesh_by_name.entry(name).or_insert(idx);
            }
        }
    }
}

fn sorted<V: std::fmt::Debug>(map: &HashMap<String, V>) -> Vec<(&String, &V)> {
    let mut v: Vec<_> = map.iter().collect();
    v.sort_by(|a, b| a.0.cmp(b.0));
    v
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
pub(crate) fn elements_type(op: &Op) -> Option<&Type> {
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
