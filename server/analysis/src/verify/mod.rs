//! Shardy's verifier rules as diagnostics, with Shardy's messages (see `messages`).
//!
//! Each rule runs where MLIR runs it (see `Stage`): parse-time attribute verifiers
//! become parse errors, op verification (`Stage::Entry`/`Exit`) reports the first
//! failing check of each op, and the checks Shardy runs in `verifySymbolUses`
//! (`Stage::SymbolUse`) come after. [`mlir_view`] keeps what `sdy_opt` would print.

pub mod attrs;
pub mod axes;
mod collective;
mod constraint;
mod data_flow;
mod edges;
mod generic;
mod lints;
mod manual_computation;
pub mod messages;
mod named_computation;
mod op_names;
mod parse_time;
mod rule;
pub mod sharding;
mod unreduced;
pub mod values;
mod view;

use crate::diag::{Diagnostic, Note, Origin, Stage};
use crate::model::{Model, OpId};
use messages as msg;
use sdy_syntax::Span;

pub use view::mlir_view;

/// What the rules need: the model and the source text.
pub struct Ctx<'a> {
    pub model: &'a Model,
    pub src: &'a str,
}

impl<'a> Ctx<'a> {
    pub fn new(model: &'a Model, src: &'a str) -> Ctx<'a> {
        Ctx { model, src }
    }
    /// The ops nested directly in `op`'s regions, in order.
    pub fn children(&self, op: OpId) -> &'a [OpId] {
        self.model.children(op)
    }
    /// The ops of each region of `op`, in order.
    pub fn regions(&self, op: OpId) -> Vec<Vec<OpId>> {
        let mut out: Vec<Vec<OpId>> = vec![Vec::new(); self.model.op(op).node.regions.len()];
        for &c in self.children(op) {
            if let Some(r) = out.get_mut(self.model.op(c).region as usize) {
                r.push(c);
            }
        }
        out
    }
}

/// A rule violation: the message without the `'op' op ` prefix, the precise offending
/// range, notes, and where it is reported when not at the verified op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub message: String,
    pub focus: Span,
    pub notes: Vec<(Span, String)>,
    /// Reported with MLIR's plain `emitError`: no `'op' op ` prefix.
    pub plain: bool,
    /// Reported at (and prefixed with) this op instead of the verified one.
    pub at_op: Option<OpId>,
    /// Further errors MLIR emits for the same failure, at the same place.
    pub follow_ups: Vec<String>,
}

impl Violation {
    pub fn new(message: String, focus: Span) -> Violation {
        Violation {
            message,
            focus,
            notes: Vec::new(),
            plain: false,
            at_op: None,
            follow_ups: Vec::new(),
        }
    }
    pub fn with_note(mut self, at: Span, message: impl Into<String>) -> Violation {
        self.notes.push((at, message.into()));
        self
    }
    /// Puts `prefix` before the message (value-indexed prefixes).
    pub fn prefixed(mut self, prefix: &str) -> Violation {
        self.message = format!("{prefix}{}", self.message);
        self
    }
    pub fn plain(mut self) -> Violation {
        self.plain = true;
        self
    }
}

/// Every diagnostic of the verifier for a module: parse-time attribute rules, op
/// verification, symbol uses, then our own hints.
pub fn verify_chunk(model: &Model, src: &str) -> Vec<Diagnostic> {
    let cx = Ctx::new(model, src);
    let mut out = parse_time::check(&cx);
    let mut failed_entry = vec![false; model.ops.len()];
    for id in 0..model.ops.len() as OpId {
        if let Err(v) = entry_checks(&cx, id) {
            failed_entry[id as usize] = true;
            report(&cx, id, Stage::Entry(id), v, &mut out);
        }
        if let Err(v) = exit_checks(&cx, id) {
            report(&cx, id, Stage::Exit(id), v, &mut out);
        }
        if generic::is_isolated(model.op(id).name()) {
            if let Some((user, v)) = generic::dominance_failure(&cx, id) {
                report(&cx, user, Stage::Dominance(id), v, &mut out);
            }
        }
        // `func.return` against its function's signature: MLIR reports it after the
        // function's nested isolated ops (as a check of the function on exit).
        if model.op(id).name() == "func.return" {
            if let (Err(v), Some(func)) =
                (generic::verify_func_return(&cx, id), model.op(id).parent)
            {
                report(&cx, id, Stage::Exit(func), v, &mut out);
            }
        }
    }
    for (op, v) in generic::symbol_redefinitions(&cx) {
        report(&cx, op, Stage::SymbolTable, v, &mut out);
    }
    for id in 0..model.ops.len() as OpId {
        if failed_entry[id as usize] {
            continue;
        }
        if let Err(v) = symbol_use_checks(&cx, id) {
            report(&cx, id, Stage::SymbolUse(id), v, &mut out);
        }
    }
    out.extend(lints::check(&cx));
    out
}

/// Turns a violation found while verifying `op` into diagnostics.
fn report(cx: &Ctx, op: OpId, stage: Stage, v: Violation, out: &mut Vec<Diagnostic>) {
    let info = cx.model.op(v.at_op.unwrap_or(op));
    let at = Span::empty(info.loc());
    let text = |m: &str| if v.plain { m.to_string() } else { msg::op_error(info.name(), m) };
    let mut d = Diagnostic::error(at, text(&v.message), Origin::Verifier);
    d.focus = if v.focus == Span::default() { info.name_span() } else { v.focus };
    d.stage = Some(stage);
    d.notes = v.notes.iter().map(|(span, m)| Note { span: *span, message: m.clone() }).collect();
    out.push(d);
    for m in &v.follow_ups {
        let mut f = Diagnostic::error(at, text(m), Origin::Verifier);
        f.focus = info.name_span();
        f.stage = Some(stage);
        out.push(f);
    }
}

/// Op verification on the way in: attribute hooks, then the op's own invariants.
fn entry_checks(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    attrs::verify_discardable(cx, id)?;
    let name = cx.model.op(id).name();
    match name {
        "func.func" => attrs::verify_func_attrs(cx, id),
        "sdy.mesh" => generic::verify_parent_is_module(cx, id),
        "sdy.manual_computation" => manual_computation::verify_nested_manual_axes(cx, id),
        "sdy.named_computation" => named_computation::verify_inferred_types(cx, id),
        "sdy.constant" => generic::verify_constant_type(cx, id),
        "sdy.propagation_barrier" => {
            generic::verify_same_operand_and_result_type(cx, id)?;
            data_flow::verify_barrier_direction(cx, id)
        }
        "sdy.sharding_constraint"
        | "sdy.reshard"
        | "sdy.data_flow_edge"
        | "sdy.func_data_flow_edge" => generic::verify_same_operand_and_result_type(cx, id),
        n if values::is_collective(n) => {
            generic::verify_same_operand_and_result_type(cx, id)?;
            collective::verify_interface(cx, id)
        }
        _ => Ok(()),
    }
}

/// Op verification after the op's regions: isolation from above.
fn exit_checks(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    match cx.model.op(id).name() {
        "sdy.manual_computation" | "sdy.named_computation" => {
            generic::verify_isolated_from_above(cx, id)
        }
        // A function body sees only its own names, unless a forward reference was
        // resolved by a later definition (in another function).
        "func.func" if !cx.model.forward_references.is_empty() => {
            generic::verify_isolated_from_above(cx, id)
        }
        _ => Ok(()),
    }
}

/// The checks Shardy runs in `verifySymbolUses`, after the whole module verified.
fn symbol_use_checks(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    match cx.model.op(id).name() {
        "sdy.sharding_constraint" | "sdy.reshard" => constraint::verify(cx, id),
        "sdy.data_flow_edge" => data_flow::verify_data_flow_edge(cx, id),
        "sdy.func_data_flow_edge" => data_flow::verify_func_data_flow_edge(cx, id),
        "sdy.manual_computation" => manual_computation::verify_symbol_uses(cx, id),
        "sdy.named_computation" => named_computation::verify_symbol_uses(cx, id),
        n if values::is_collective(n) => collective::verify_symbol_uses(cx, id),
        _ => Ok(()),
    }
}
