//! Reading and making the StableHLO ops the export passes rewrite, over the printable
//! IR: new ops are made in the generic form with their properties, which the printer
//! shows in MLIR's custom form; ops read from the source in their custom form keep
//! their tokens, so their attributes are read from those and their types rewritten.

use super::shapes::TensorTy;
use crate::ir::attr::attr_to_string;
use crate::ir::{Attr, Module, NamedAttr, Op, Piece, PieceKind, Syntax, ValueId};
use crate::rules::InherentAttrs;
use crate::sharding::TensorSharding;

/// The op's inherent attributes, whichever form it was written in.
pub fn inherent(op: &Op) -> InherentAttrs {
    let mut text: Vec<String> =
        op.props.iter().map(|p| format!("{} = {}", p.name, attr_to_string(&p.value))).collect();
    if let Syntax::Custom(t) = &op.syntax {
        text.extend(t.pieces.iter().filter_map(|p| match &p.kind {
            PieceKind::Text(s) => Some(s.to_string()),
            _ => None,
        }));
    }
    InherentAttrs::from_text(&text.join(" "), &[])
}

/// `array<i64: 1, 2>`
pub fn i64_array(v: &[i64]) -> Attr {
    if v.is_empty() {
        return Attr::Raw("array<i64>".into());
    }
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    Attr::Raw(format!("array<i64: {}>", items.join(", ")))
}

/// A slice's `(start, limit, stride)` per dimension: its properties, or the custom
/// form's `[a:b, c:d:s]`.
pub fn slice_bounds(op: &Op) -> Option<Vec<(i64, i64, i64)>> {
    use crate::ir::stablehlo::i64_array as read;
    if let (Some(s), Some(l), Some(t)) =
        (read(op.prop("start_indices")), read(op.prop("limit_indices")), read(op.prop("strides")))
    {
        return (s.len() == l.len() && l.len() == t.len())
            .then(|| s.iter().zip(&l).zip(&t).map(|((&a, &b), &c)| (a, b, c)).collect());
    }
    let Syntax::Custom(t) = &op.syntax else { return None };
    crate::shape::slice_ranges(&t.joined_text())
}

/// `low`, `high` and `interior` of a pad.
pub fn pad_amounts(op: &Op) -> Option<[Vec<i64>; 3]> {
    let a = inherent(op);
    Some([
        a.ints(&["low", "edge_padding_low"])?,
        a.ints(&["high", "edge_padding_high"])?,
        a.ints(&["interior", "interior_padding"])?,
    ])
}

/// Makes ops at one place of a block: each new op gets fresh result values.
pub struct Builder<'m> {
    pub m: &'m mut Module,
    pub ops: Vec<Op>,
}

impl<'m> Builder<'m> {
    pub fn new(m: &'m mut Module) -> Builder<'m> {
        Builder { m, ops: Vec::new() }
    }

    /// Adds an op in the generic form with `props` (printed in its custom form when
    /// the printer knows it) and one result of type `ty`; returns the result.
    pub fn op(
        &mut self,
        name: &str,
        operands: Vec<ValueId>,
        props: Vec<NamedAttr>,
        ty: &TensorTy,
        sharding: Option<&TensorSharding>,
    ) -> ValueId {
        let r = self.m.new_value(Some(ty.text()));
        let mut op = Op::pretty(name, operands, vec![r], props);
        if let Some(s) = sharding {
            op.set_attr("sdy.sharding", Attr::PerValue(vec![s.clone()]));
        }
        self.ops.push(op);
        r
    }

    /// A scalar constant of element type `elem`: zero, or one.
    pub fn scalar(&mut self, elem: &str, one: bool) -> ValueId {
        let ty = TensorTy::scalar(elem);
        self.splat(&ty, &scalar_text(elem, one))
    }

    /// `stablehlo.constant dense<VALUE> : TY`.
    pub fn splat(&mut self, ty: &TensorTy, value: &str) -> ValueId {
        let attr = Attr::Raw(format!("dense<{value}> : {}", ty.text()));
        self.op("stablehlo.constant", Vec::new(), vec![NamedAttr::new("value", attr)], ty, None)
    }

    pub fn pad(
        &mut self,
        input: ValueId,
        value: ValueId,
        [low, high, interior]: [&[i64]; 3],
        ty: &TensorTy,
        sharding: Option<&TensorSharding>,
    ) -> ValueId {
        let props = vec![
            NamedAttr::new("edge_padding_low", i64_array(low)),
            NamedAttr::new("edge_padding_high", i64_array(high)),
            NamedAttr::new("interior_padding", i64_array(interior)),
        ];
        self.op("stablehlo.pad", vec![input, value], props, ty, sharding)
    }

    pub fn slice(
        &mut self,
        input: ValueId,
        bounds: &[(i64, i64, i64)],
        ty: &TensorTy,
        sharding: Option<&TensorSharding>,
    ) -> ValueId {
        let col = |f: fn(&(i64, i64, i64)) -> i64| bounds.iter().map(f).collect::<Vec<_>>();
        let props = vec![
            NamedAttr::new("start_indices", i64_array(&col(|b| b.0))),
            NamedAttr::new("limit_indices", i64_array(&col(|b| b.1))),
            NamedAttr::new("strides", i64_array(&col(|b| b.2))),
        ];
        self.op("stablehlo.slice", vec![input], props, ty, sharding)
    }
}

/// The text of zero or one of an element type inside `dense<...>`.
pub fn scalar_text(elem: &str, one: bool) -> String {
    let float = elem.starts_with('f') || elem.starts_with("bf") || elem.starts_with("tf32");
    match (elem, float, one) {
        ("i1", _, false) => "false".into(),
        ("i1", _, true) => "true".into(),
        (_, true, false) => "0.000000e+00".into(),
        (_, true, true) => "1.000000e+00".into(),
        (_, false, false) => "0".into(),
        (_, false, true) => "1".into(),
    }
}

/// Rewrites the trailing types of an op kept in its custom form (`: (A, B) -> R` or
/// `: T`) to the types its operands and results have now.
pub fn retype(m: &Module, op: &mut Op) {
    let Syntax::Custom(t) = &mut op.syntax else { return };
    let last_hole = t.pieces.iter().rposition(|p| !matches!(p.kind, PieceKind::Text(_)));
    let from = last_hole.map_or(0, |i| i + 1);
    let Some(colon) = t.pieces[from..]
        .iter()
        .position(|p| matches!(&p.kind, PieceKind::Text(s) if s == ":"))
        .map(|i| i + from)
    else {
        return;
    };
    let function =
        t.pieces[colon..].iter().any(|p| matches!(&p.kind, PieceKind::Text(s) if s == "->"));
    let ty = |v: &ValueId| m.ty(*v).unwrap_or("<<unknown type>>").to_string();
    let outs: Vec<String> = op.results.iter().map(ty).collect();
    let sig = if function {
        let ins: Vec<String> = op.operands.iter().map(ty).collect();
        let out = if outs.len() == 1 && !outs[0].starts_with('(') {
            outs[0].clone()
        } else {
            format!("({})", outs.join(", "))
        };
        format!("({}) -> {out}", ins.join(", "))
    } else {
        outs.join(", ")
    };
    t.pieces.truncate(colon + 1);
    t.pieces.push(Piece { space_before: true, kind: PieceKind::Text(sig.as_str().into()) });
}

/// A convolution written in its custom form, as an op with properties (what MLIR
/// builds when it recreates one; the printer then prints its canonical custom form).
/// `None` when it already has its properties or they cannot be read.
pub fn conv_with_props(op: &Op) -> Option<Op> {
    use crate::rules::stablehlo_attrs::Value;
    if !matches!(op.syntax, Syntax::Custom(_)) {
        return None;
    }
    let a = inherent(op);
    let d = a.conv_dims()?;
    let n = d.input_spatial.len();
    let layout = |first: (i64, &str), second: (i64, &str), spatial: &[i64]| {
        let mut items = vec![String::new(); n + 2];
        for (pos, word) in [first, second] {
            *items.get_mut(pos as usize)? = word.to_string();
        }
        for (i, &pos) in spatial.iter().enumerate() {
            *items.get_mut(pos as usize)? = i.to_string();
        }
        Some(format!("[{}]", items.join(", ")))
    };
    let dims = format!(
        "#stablehlo.conv<{}x{}->{}>",
        layout((d.input_batch, "b"), (d.input_feature, "f"), &d.input_spatial)?,
        layout((d.kernel_input_feature, "i"), (d.kernel_output_feature, "o"), &d.kernel_spatial)?,
        layout((d.output_batch, "b"), (d.output_feature, "f"), &d.output_spatial)?,
    );
    let mut props = vec![NamedAttr::new("dimension_numbers", Attr::Raw(dims))];
    let window = a.get("window");
    let field = |custom: &str, generic: &str| {
        window.and_then(|w| w.field(custom)).or_else(|| a.get(generic))
    };
    let ints = |v: &Value| -> Option<Vec<i64>> {
        match v {
            Value::List(items) => {
                items.iter().map(|x| x.as_int().or_else(|| x.as_bool().map(i64::from))).collect()
            }
            _ => None,
        }
    };
    for (custom, generic) in [
        ("stride", "window_strides"),
        ("lhs_dilate", "lhs_dilation"),
        ("rhs_dilate", "rhs_dilation"),
    ] {
        if let Some(v) = field(custom, generic) {
            props.push(NamedAttr::new(generic, i64_array(&ints(v)?)));
        }
    }
    if let Some(Value::List(rows)) = field("pad", "padding") {
        let rows: Vec<Vec<i64>> = rows.iter().map(ints).collect::<Option<_>>()?;
        let text: Vec<String> = rows
            .iter()
            .map(|r| format!("[{}]", r.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")))
            .collect();
        let raw = format!("dense<[{}]> : tensor<{}x2xi64>", text.join(", "), rows.len());
        props.push(NamedAttr::new("padding", Attr::Raw(raw)));
    }
    if let Some(v) = field("reverse", "window_reversal") {
        let bools: Vec<String> = ints(v)?.iter().map(|&x| (x != 0).to_string()).collect();
        props.push(NamedAttr::new(
            "window_reversal",
            Attr::Raw(format!("array<i1: {}>", bools.join(", "))),
        ));
    }
    // The printer orders the window by its own table; keep the property order MLIR uses.
    props.sort_by_key(|p| {
        [
            "dimension_numbers",
            "lhs_dilation",
            "padding",
            "rhs_dilation",
            "window_reversal",
            "window_strides",
        ]
        .iter()
        .position(|k| *k == p.name)
    });
    let mut new = Op::pretty(&op.name, op.operands.clone(), op.results.clone(), props);
    new.origin = op.origin;
    new.attrs = op.attrs.clone();
    Some(new)
}
