//! StableHLO's own verifiers and type inference (`StablehloOps.cpp`,
//! `TypeInference.cpp`) for the ops the rule registry knows, one module per op family.
//! Each check reads only the op's operand and result types and its inherent
//! attributes, so it runs per op. Checks run in MLIR's order: the traits (element
//! types), then type inference or the op's `verify`. Only static shapes are checked.

mod dot;
mod elementwise;
mod shape;

use super::messages as msg;
use super::values::type_string;
use super::{Ctx, Violation};
use crate::model::OpId;
use crate::rules::InherentAttrs;
use sdy_syntax::tree::{Custom, Dim, DotDims, Type, TypeKind};
use sdy_syntax::Span;
use smallvec::SmallVec;

/// The checks of StableHLO op `id` (`name` without the dialect prefix).
pub fn verify(cx: &Ctx, id: OpId, name: &str) -> Result<(), Violation> {
    let op = Operands { cx, id };
    match name {
        "broadcast_in_dim" => shape::broadcast_in_dim(&op),
        "transpose" => shape::transpose(&op),
        "reshape" => shape::reshape(&op),
        "concatenate" => shape::concatenate(&op),
        "slice" => shape::slice(&op),
        "pad" => shape::pad(&op),
        "reduce" => shape::reduce(&op),
        "cholesky" => shape::cholesky(&op),
        "dot_general" => dot::dot_general(&op),
        "dot" => dot::dot(&op),
        "compare" => elementwise::compare(&op),
        "bitcast_convert" => elementwise::bitcast_convert(&op),
        "iota" => shape::iota(&op),
        "reverse" => shape::reverse(&op),
        "partition_id" | "replica_id" => shape::id_result(&op),
        "dynamic_slice" => shape::dynamic_slice(&op),
        _ => elementwise::operand_elements(&op, name),
    }
}

/// Dimension sizes, inline for the usual ranks: the checks of valid ops allocate nothing.
pub(super) type Dims = SmallVec<[i64; 6]>;

/// A ranked tensor with a static shape.
pub(super) struct Tensor<'a> {
    pub ty: &'a Type,
    pub dims: Dims,
    pub elem: &'a str,
}

/// An op's operand or result tensors.
pub(super) type Tensors<'a> = SmallVec<[Tensor<'a>; 2]>;

impl Tensor<'_> {
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
    /// As MLIR quotes it in a message.
    pub fn quoted(&self) -> String {
        format!("'{}'", type_string(self.ty))
    }
}

fn tensor(ty: &Type) -> Option<Tensor<'_>> {
    match &*ty.kind {
        TypeKind::Tensor { shape: Some(shape), elem, encoding: None } => {
            let dims = shape
                .iter()
                .map(|d| match d {
                    Dim::Static(n) => Some(*n),
                    Dim::Dynamic => None,
                })
                .collect::<Option<Dims>>()?;
            Some(Tensor { ty, dims, elem })
        }
        _ => None,
    }
}

/// One op's operand and result types and attributes.
pub(super) struct Operands<'c, 'a> {
    cx: &'c Ctx<'a>,
    id: OpId,
}

impl<'c, 'a> Operands<'c, 'a> {
    /// Every operand, then every result, as a static tensor (`None` when one is not).
    pub fn tensors(&self, operands: usize, results: usize) -> Option<(Tensors<'a>, Tensors<'a>)> {
        let info = self.cx.model.op(self.id);
        if info.operands.len() != operands || info.results.len() != results {
            return None;
        }
        let ins = (0..operands)
            .map(|i| self.cx.model.operand_type(self.id, i).and_then(tensor))
            .collect::<Option<Tensors>>()?;
        let outs = (0..results)
            .map(|i| self.cx.model.result_type(self.id, i).and_then(tensor))
            .collect::<Option<Tensors>>()?;
        Some((ins, outs))
    }
    /// Every operand (any number) and the one result.
    pub fn variadic(&self) -> Option<(Tensors<'a>, Tensor<'a>)> {
        let n = self.cx.model.op(self.id).operands.len();
        let (ins, mut outs) = self.tensors(n, 1)?;
        Some((ins, outs.pop()?))
    }
    /// The one result's type: known, or as written (`: T` of an op without operands).
    pub fn result_written(&self) -> Option<Tensor<'a>> {
        let info = self.cx.model.op(self.id);
        let ty = self.cx.model.result_type(self.id, 0).or_else(|| {
            let sig = &info.node.sig;
            sig.outputs.first().or(sig.inputs.last())
        })?;
        tensor(ty)
    }
    /// iota's type: the tolerant parser reads `dim = 0 : tensor<4xi32>` as a typed
    /// integer attribute.
    pub fn iota_type(&self) -> Option<Tensor<'a>> {
        let attr = self.cx.model.op(self.id).node.inherent_attr("dim")?;
        match &attr.value.as_ref()?.kind {
            sdy_syntax::tree::AttrKind::Int { ty: Some(ty), .. } => tensor(ty),
            _ => None,
        }
    }
    /// The operand types known (any kind of type).
    pub fn operand_types(&self) -> impl Iterator<Item = &'a Type> + '_ {
        let n = self.cx.model.op(self.id).operands.len();
        (0..n).filter_map(|i| self.cx.model.operand_type(self.id, i))
    }
    pub fn generic(&self) -> bool {
        self.cx.model.op(self.id).node.generic
    }
    /// The op's text from its name on.
    pub fn text_after_name(&self) -> &'a str {
        let info = self.cx.model.op(self.id);
        let (name, span) = (info.name_span(), info.span());
        self.cx.src.get(name.end as usize..span.end as usize).unwrap_or("")
    }
    /// An integer list attribute under one of `keys`: read from the syntax tree when
    /// the parser kept it (`dims = [0, 1]`, `array<i64: ...>`), else from the op's text.
    pub fn ints(&self, keys: &[&str]) -> Option<Dims> {
        use sdy_syntax::tree::AttrKind;
        let node = &self.cx.model.op(self.id).node;
        for key in keys {
            let Some(value) = node.inherent_attr(key).and_then(|a| a.value.as_ref()) else {
                continue;
            };
            match &value.kind {
                AttrKind::DenseArray { values, .. } => {
                    return Some(values.iter().copied().collect())
                }
                AttrKind::Array(items) => {
                    let ints = items
                        .iter()
                        .map(|a| match a.kind {
                            AttrKind::Int { value, .. } => Some(value),
                            _ => None,
                        })
                        .collect::<Option<Dims>>();
                    if ints.is_some() {
                        return ints;
                    }
                }
                _ => {}
            }
        }
        self.attrs().ints(keys).map(Dims::from_vec)
    }
    /// dot_general's dimension numbers as the parser kept them from the custom form.
    /// Not with an attribute dictionary, whose entries the text reading (`attrs`) would
    /// see as well.
    pub fn kept_dot_dims(&self) -> Option<&'a DotDims> {
        let node = &self.cx.model.op(self.id).node;
        match &node.custom {
            Custom::DotDims(d) if node.attrs.is_none() => Some(d),
            _ => None,
        }
    }
    pub fn attrs(&self) -> InherentAttrs {
        let info = self.cx.model.op(self.id);
        let span = info.span();
        let text = self.cx.src.get(span.start as usize..span.end as usize).unwrap_or("");
        InherentAttrs::of_op(&info.node, text)
    }
}

/// MLIR's `emitOptionalError` from type inference or `verify`: no op prefix.
fn plain(message: String) -> Violation {
    Violation::new(message, Span::default()).plain()
}

/// An error of type inference: MLIR then says the op failed to infer its types.
fn inference(message: String) -> Violation {
    let mut v = plain(message);
    v.follow_ups.push(msg::FAILED_TO_INFER_TYPES.to_string());
    v
}

/// The inferred result type differs from the written one.
fn inferred_mismatch(inferred: &str, actual: &Tensor) -> Violation {
    let mut v = Violation::new(
        msg::inferred_types_incompatible(&format!("'{inferred}'"), &actual.quoted()),
        Span::default(),
    );
    v.follow_ups.push(msg::FAILED_TO_INFER_TYPES.to_string());
    v
}

/// `tensor<AxBxelem>` as MLIR prints it.
fn tensor_text(dims: &[i64], elem: &str) -> String {
    let mut s = String::from("tensor<");
    for d in dims {
        s.push_str(&d.to_string());
        s.push('x');
    }
    s.push_str(elem);
    s.push('>');
    s
}

/// `requires compatible element types for all operands and results` (and its kin):
/// every element type the same.
fn same_elements(ts: &[&Tensor], message: &str) -> Result<(), Violation> {
    match ts.first() {
        Some(first) if ts.iter().any(|t| t.elem != first.elem) => {
            Err(Violation::new(message.to_string(), Span::default()))
        }
        _ => Ok(()),
    }
}

/// A floating-point element type (the rest here: integers).
fn is_float(elem: &str) -> bool {
    elem.starts_with('f') || elem == "bf16"
}

/// An integer element type (`i1` included).
fn is_int(elem: &str) -> bool {
    elem.starts_with('i') || elem.starts_with("si") || elem.starts_with("ui")
}

/// `1, 2, 3`: MLIR's list printing in messages.
fn list(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}
