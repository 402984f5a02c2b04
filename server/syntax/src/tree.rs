//! The syntax tree.
//!
//! Everything is an [`Op`]: real operations, but also alias definitions, the trailing
//! resource section and unparseable statements, so a block is just a list of ops.
//! Spans inside an op are relative to the op's start; children sit at offsets relative
//! to their parent op's start. Ops are behind `Arc` so that unchanged statements are
//! shared between document versions and an incremental re-parse only rebuilds the path
//! from the edited statement to the root.

use crate::sdy::SdyAttr;

/// Names and keywords: 16 bytes, stored inline up to 15 bytes (`%38955`, `stablehlo.add`);
/// longer ones are shared, reference-counted (the parser interns them, so the thousands
/// of `stablehlo.broadcast_in_dim` of a file share one copy).
pub type Str = ecow::EcoString;
pub use crate::children::{ChildRef, Children};
use crate::span::Span;
use std::sync::Arc;

/// A vector that is one pointer wide and allocates nothing while empty: most ops have no
/// successors, inherent attributes, regions or errors, so these cost 8 bytes each.
pub use thin_vec::ThinVec;

/// A parse or lexing error. `chained` marks an error emitted as part of the same failure
/// as the previous error of its op (MLIR prints such chains, innermost first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub span: Span,
    pub message: String,
    pub chained: bool,
}

/// What kind of statement an [`Op`] node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// An operation, in generic or custom (pretty) form.
    Op,
    /// `#name = attr` or `!name = type` at the top level.
    AliasDef,
    /// The `{-# ... #-}` resource section.
    Resource,
    /// Text that could not be read as a statement (the error says why).
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub kind: StmtKind,
    /// Length of the statement text, trailing `loc(...)` included.
    pub len: u32,
    /// Result groups as written: `%0`, `%0:2`, `%a, %b`.
    pub results: smallvec::SmallVec<[ResultGroup; 1]>,
    /// The operation name as written (`stablehlo.add`, `return`, `"stablehlo.case"` unquoted).
    pub name: Name,
    /// Whether the op is written in generic form (`"dialect.op"(...)`).
    pub generic: bool,
    /// SSA operands in order, as written.
    pub operands: smallvec::SmallVec<[ValueRef; 2]>,
    /// Successor block references (`^bb1`), rare in sdy files.
    pub successors: ThinVec<Name>,
    /// Inherent attributes: generic `<{...}>` properties, or what the custom syntax of a
    /// known op spells (named as MLIR names them, e.g. `sharding`, `manual_axes`).
    pub inherent: ThinVec<NamedAttr>,
    /// The discardable attribute dictionary (`{sdy.sharding = ...}`), if written.
    pub attrs: Option<AttrDict>,
    pub regions: ThinVec<Region>,
    /// Types as written in the trailing signature.
    pub sig: Signature,
    /// The trailing `loc(...)`.
    pub loc: Option<Span>,
    /// Structured parts specific to some ops.
    pub custom: Custom,
    pub errors: ThinVec<SyntaxError>,
}

impl Op {
    pub fn empty(kind: StmtKind) -> Op {
        Op {
            kind,
            len: 0,
            results: Default::default(),
            name: Name::default(),
            generic: false,
            operands: Default::default(),
            successors: ThinVec::new(),
            inherent: ThinVec::new(),
            attrs: None,
            regions: ThinVec::new(),
            sig: Signature::default(),
            loc: None,
            custom: Custom::None,
            errors: ThinVec::new(),
        }
    }

    /// Number of SSA results the op defines.
    pub fn num_results(&self) -> u32 {
        self.results.iter().map(|r| r.count).sum()
    }

    /// The fully-qualified op name: `return` inside a function is `func.return`, etc.
    pub fn full_name(&self) -> &str {
        match &*self.name.text {
            "return" if !self.generic => "func.return",
            "call" if !self.generic => "func.call",
            "func" if !self.generic => "func.func",
            "module" if !self.generic => "builtin.module",
            n => n,
        }
    }

    pub fn inherent_attr(&self, name: &str) -> Option<&NamedAttr> {
        self.inherent.iter().find(|a| &*a.name == name)
    }

    /// A discardable attribute by name.
    pub fn attr(&self, name: &str) -> Option<&NamedAttr> {
        self.attrs.as_ref()?.get(name)
    }

    /// Whether the op or any op nested in it has a syntax error.
    pub fn has_errors_deep(&self) -> bool {
        !self.errors.is_empty()
            || self
                .regions
                .iter()
                .flat_map(|r| &r.blocks)
                .flat_map(|b| &b.ops)
                .any(|c| c.op.has_errors_deep())
    }
}

/// A name with its span: op names, symbols, block labels.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Name {
    pub text: Str,
    pub span: Span,
}

/// `%name` or `%name:count` in a result list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultGroup {
    pub name: Str,
    pub span: Span,
    pub count: u32,
}

/// A use of an SSA value: `%x` or `%x#2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueRef {
    pub name: Str,
    pub index: Option<u32>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub span: Span,
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// `^bb0` when written.
    pub label: Option<Name>,
    /// Block arguments: from `^bb0(%a: T)` or from op syntax such as
    /// `(%arg1: tensor<8xf32>) {` in `sdy.manual_computation`.
    pub args: Vec<BlockArg>,
    pub ops: Children,
}

/// A nested op and its offset relative to the parent op's start (or the chunk start at
/// the top level).
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    pub offset: u32,
    pub op: Arc<Op>,
}

impl Child {
    /// The statement as a [`Children`] list gives it.
    pub fn view(&self) -> ChildRef<'_> {
        ChildRef { offset: self.offset, op: &self.op }
    }

    pub fn span(&self) -> Span {
        Span::new(self.offset, self.offset + self.op.len)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BlockArg {
    pub name: Str,
    pub span: Span,
    pub ty: Option<Type>,
    pub attrs: Option<AttrDict>,
    pub loc: Option<Span>,
}

/// The types written in an op's trailing signature.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Signature {
    /// The span of everything after the `:`.
    pub span: Option<Span>,
    pub inputs: TypeList,
    pub outputs: TypeList,
    /// How the signature was written, which decides how types map onto values.
    pub form: SigForm,
}

/// Types of a signature; most ops have at most one per side, stored inline.
pub type TypeList = smallvec::SmallVec<[Type; 1]>;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SigForm {
    /// No signature.
    #[default]
    None,
    /// `: (A, B) -> R` or `: A -> R`.
    Function,
    /// `: T1, T2, ...` — the op's values are listed (same type for operands and results
    /// for one type, or one type per result/operand pair).
    List,
}

/// A type as written. The kind is interned per parse: identical spellings share one
/// `TypeKind`, so the many repeated tensor types of real files cost a pointer each.
#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub span: Span,
    pub kind: Arc<TypeKind>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `tensor<8x?xf32>`; `shape == None` for unranked `tensor<*xf32>`.
    Tensor { shape: Option<Shape>, elem: Str, encoding: Option<Str> },
    /// `!stablehlo.token`
    Token,
    /// `tuple<...>`
    Tuple(Vec<Type>),
    /// `!alias` defined by a type alias.
    Alias(Str),
    /// Anything else, by its text (`f32`, `i1`, `!quant.uniform<...>`, `complex<f32>`).
    Other(Str),
}

/// Tensor dimensions; up to 6 inline.
pub type Shape = smallvec::SmallVec<[Dim; 6]>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    Static(i64),
    Dynamic,
}

impl Type {
    pub fn rank(&self) -> Option<usize> {
        match &*self.kind {
            TypeKind::Tensor { shape: Some(s), .. } => Some(s.len()),
            _ => None,
        }
    }
    pub fn shape(&self) -> Option<&[Dim]> {
        match &*self.kind {
            TypeKind::Tensor { shape: Some(s), .. } => Some(s),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct AttrDict {
    pub span: Span,
    pub entries: ThinVec<NamedAttr>,
}

impl AttrDict {
    pub fn get(&self, name: &str) -> Option<&NamedAttr> {
        self.entries.iter().find(|a| &*a.name == name)
    }
}

/// `name = value`, or a unit attribute `name`.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedAttr {
    pub name: Str,
    pub name_span: Span,
    pub value: Option<Attr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub span: Span,
    pub kind: AttrKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrKind {
    /// An integer with its optional type: `1 : i64`, `-3`.
    Int {
        value: i64,
        ty: Option<Type>,
    },
    /// A float literal with its optional type; the text keeps the exact spelling.
    Float {
        text: Str,
        ty: Option<Type>,
    },
    Bool(bool),
    Unit,
    /// A string literal; `raw` is the text between the quotes, escapes undecoded.
    String {
        raw: Str,
    },
    /// `@sym`
    Symbol(Str),
    Array(Vec<Attr>),
    /// `array<i64: 1, 2>`
    DenseArray {
        elem: Str,
        values: Vec<i64>,
    },
    Dict(AttrDict),
    Type(Type),
    /// `dense<...> : T`, `dense_resource<...> : T`
    Elements {
        ty: Option<Type>,
    },
    /// An sdy attribute, parsed.
    Sdy(Box<SdyAttr>),
    /// `#alias` (not an sdy attribute).
    AliasRef(Str),
    /// A bare keyword used as a value (e.g. enum spellings like `FORWARD`).
    Keyword(Str),
    /// Anything else, kept by its span (e.g. `#stablehlo.gather<...>`).
    Opaque,
}

/// Structured parts specific to some ops.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Custom {
    #[default]
    None,
    Func(Arc<FuncHeader>),
    Module(Box<ModuleHeader>),
    /// `sdy.mesh @name = <...>`
    Mesh {
        sym: Box<Name>,
    },
    /// `#name = ...` / `!name = ...`
    Alias(Box<AliasDef>),
    /// dot_general's dimension numbers, as its custom form spells them.
    DotDims(Box<DotDims>),
}

/// `batching_dims = [0] x [0], contracting_dims = [2] x [1]`: kept by the parser so that
/// the verifier need not read them from the op's text again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DotDims {
    pub lhs_batching: smallvec::SmallVec<[i64; 2]>,
    pub rhs_batching: smallvec::SmallVec<[i64; 2]>,
    pub lhs_contracting: smallvec::SmallVec<[i64; 2]>,
    pub rhs_contracting: smallvec::SmallVec<[i64; 2]>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AliasDef {
    pub name: Name,
    pub value: AliasValue,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AliasValue {
    Attr(Attr),
    Type(Type),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncHeader {
    pub visibility: Option<Name>,
    pub sym: Name,
    pub args: Vec<FuncArg>,
    pub results: Vec<FuncResult>,
    /// `attributes {...}`
    pub fn_attrs: Option<AttrDict>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncArg {
    pub name: Str,
    pub span: Span,
    pub ty: Type,
    pub attrs: Option<AttrDict>,
    pub loc: Option<Span>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncResult {
    pub ty: Type,
    pub attrs: Option<AttrDict>,
    pub loc: Option<Span>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ModuleHeader {
    pub sym: Option<Name>,
    pub attrs: Option<AttrDict>,
}

/// One `// -----` chunk of a file (the whole file when not split).
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// Absolute range of the chunk's text in the document.
    pub span: Span,
    /// Top-level statements; offsets relative to `span.start`.
    pub top: Children,
}

impl Chunk {
    /// The ops that form the module body: the region of a lone explicit `module`, or the
    /// top-level ops of an implicit module.
    pub fn module_body(&self) -> (u32, &Children) {
        static EMPTY: Children = Children::new();
        let mut module = None;
        for c in &self.top {
            match c.op.kind {
                StmtKind::AliasDef | StmtKind::Resource => {}
                StmtKind::Op if c.op.full_name() == "builtin.module" && module.is_none() => {
                    module = Some(c)
                }
                _ => return (0, &self.top),
            }
        }
        match module {
            Some(m) => match m.op.regions.first().and_then(|r| r.blocks.first()) {
                Some(b) => (m.offset, &b.ops),
                None => (0, &EMPTY),
            },
            None => (0, &self.top),
        }
    }
}
