//! Shardy's verifier rules as diagnostics, with Shardy's messages (see `messages`).

pub mod messages;
pub mod sharding;

use crate::diag::{Diagnostic, Note, Origin};
use crate::model::sharding::TensorSharding;
use crate::model::{Model, OpId, OpInfo};
use messages as msg;
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{Attr, AttrKind, Custom};
use sharding::{verify_sharding, Violation};

/// Every verifier diagnostic of a module.
pub fn verify_chunk(model: &Model, src: &str) -> Vec<Diagnostic> {
    let mut v = Verifier { model, src, out: Vec::new() };
    for use_ in &model.undefined_uses {
        let name = model.op(use_.op).node.operands[use_.operand as usize].name.clone();
        v.out.push(Diagnostic::error(
            use_.span,
            msg::undeclared_value(&name),
            Origin::Parse { first_of_failure: true },
        ));
    }
    for id in 0..model.ops.len() as OpId {
        v.op(id);
    }
    v.out
}

/// The manual axes of a `sdy.manual_computation`.
pub fn manual_axes(op: &OpInfo) -> Vec<String> {
    match op.node.inherent_attr("manual_axes").and_then(|a| a.value.as_ref()).map(|v| &v.kind) {
        Some(AttrKind::Sdy(s)) => match &**s {
            SdyAttr::ManualAxes(axes) => axes.iter().map(|a| a.name.to_string()).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

struct Verifier<'a> {
    model: &'a Model,
    src: &'a str,
    out: Vec<Diagnostic>,
}

impl Verifier<'_> {
    fn error(&mut self, op: &OpInfo, message: String, v: Option<Violation>) {
        let at = sdy_syntax::Span::empty(op.loc());
        let mut d = Diagnostic::error(at, message, Origin::Verifier);
        if let Some(v) = v {
            d.focus = v.focus;
            if let Some((span, text)) = v.note {
                d.notes.push(Note { span, message: text });
            }
        }
        self.out.push(d);
    }

    fn op(&mut self, id: OpId) {
        let op = self.model.op(id);
        if let Custom::Func(f) = &op.node.custom {
            self.func_attrs(id, f);
        }
        if let Some(attr) = op.node.attr("sdy.sharding") {
            self.op_sharding(id, attr.value.as_ref());
        }
    }

    /// P1–P4: the op-level `sdy.sharding` (one sharding per result).
    fn op_sharding(&mut self, id: OpId, value: Option<&Attr>) {
        let op = self.model.op(id);
        let name = op.name().to_string();
        let per_value = match value.map(|v| &v.kind) {
            Some(AttrKind::Sdy(s)) => match &**s {
                SdyAttr::PerValue(p) => TensorSharding::per_value(p, op.start),
                _ => return self.error(op, msg::op_error(&name, msg::EXPECTED_PER_VALUE), None),
            },
            _ => return self.error(op, msg::op_error(&name, msg::EXPECTED_PER_VALUE), None),
        };
        let results = op.results.len();
        // P2: a zero-result op may carry one rank-0 or maximal sharding.
        if results == 0 && per_value.len() == 1 {
            let s = &per_value[0];
            let maximal = sharding::resolve_mesh(self.model, s).is_some_and(|m| m.is_maximal());
            if maximal || s.dims.iter().all(|d| d.axes.is_empty()) {
                if let Err(v) = verify_sharding(self.model, s, None, id, self.src) {
                    let m = format!("{}{}", msg::value_prefix("result", 0, 0, false), v.message);
                    self.error(op, msg::op_error(&name, &m), Some(v));
                }
                return;
            }
        }
        if per_value.len() != results {
            let m = msg::shardings_count_mismatch("result", per_value.len(), results);
            return self.error(op, msg::op_error(&name, &m), None);
        }
        for (i, s) in per_value.iter().enumerate() {
            let ty = self.model.result_type(id, i);
            if let Err(v) = verify_sharding(self.model, s, ty, id, self.src) {
                let m = format!("{}{}", msg::value_prefix("result", i, results, false), v.message);
                return self.error(op, msg::op_error(&name, &m), Some(v));
            }
        }
    }

    /// F1–F2: `sdy.sharding` on function arguments and results.
    fn func_attrs(&mut self, id: OpId, f: &sdy_syntax::tree::FuncHeader) {
        let op = self.model.op(id);
        let entries = f
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| ("arg", i, &a.ty, a.attrs.as_ref()))
            .chain(f.results.iter().enumerate().map(|(i, r)| ("result", i, &r.ty, r.attrs.as_ref())));
        for (kind, i, ty, attrs) in entries {
            let Some(attr) = attrs.and_then(|d| d.get("sdy.sharding")) else { continue };
            let prefix = msg::value_prefix(kind, i, 0, true);
            let s = match attr.value.as_ref().map(|v| &v.kind) {
                Some(AttrKind::Sdy(s)) => match &**s {
                    SdyAttr::Sharding(s) => Some(TensorSharding::from_ast(s, op.start)),
                    _ => None,
                },
                _ => None,
            };
            let Some(s) = s else {
                let m = format!("{prefix}{}", msg::EXPECTED_TENSOR_SHARDING);
                return self.error(op, msg::op_error("func.func", &m), None);
            };
            if let Err(v) = verify_sharding(self.model, &s, Some(ty), id, self.src) {
                let m = format!("{prefix}{}", v.message);
                return self.error(op, msg::op_error("func.func", &m), Some(v));
            }
        }
    }
}
