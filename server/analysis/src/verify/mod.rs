//! Shardy's verifier rules as diagnostics, with Shardy's messages (see `messages`).
//!
//! Each rule runs where MLIR runs it (see `Stage`): parse-time attribute verifiers
//! become parse errors, op verification (`Stage::Entry`/`Exit`) reports the first
//! failing check of each op, and the checks Shardy runs in `verifySymbolUses`
//! (`Stage::SymbolUse`) come after. [`mlir_view`] keeps what `sdy_opt` would print.
//!
//! The checks come in units that can be redone on their own after an edit
//! (`crate::incremental`): each op's own checks ([`verify_op`]), the region checks of
//! each isolated op ([`verify_root`], from facts its ops' units record), and the
//! module-wide ones ([`verify_module`]). The output is sorted by position, then by
//! [`Order`] (the order the checks run in), so it does not depend on how it was made.

pub(crate) mod attrs;
mod collective;
mod constraint;
mod data_flow;
mod edges;
mod generic;
pub mod lints;
mod manual_computation;
pub mod messages;
mod named_computation;
mod op_names;
pub(crate) mod parse_time;
mod rule;
pub(crate) mod sharding;
mod stablehlo;
mod unreduced;
pub(crate) mod values;
mod view;

use crate::diag::{Diagnostic, DiagnosticCode, Note, Origin, Stage};
use crate::model::{MeshSymbol, Model, OpId};
use messages as msg;
use parse_time::{ForwardUse, ModulePart};
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
    /// Further errors MLIR emits for the same failure, at the same place (with the
    /// `'op' op ` prefix even when the first is plain).
    pub follow_ups: Vec<String>,
    /// The rule broken (`None`: [`DiagnosticCode::Verifier`]).
    pub code: Option<DiagnosticCode>,
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
            code: None,
        }
    }
    /// A violation of a rule with code `code`.
    pub fn of(code: DiagnosticCode, message: String, focus: Span) -> Violation {
        Violation { code: Some(code), ..Violation::new(message, focus) }
    }
    /// `code` unless the violation has a code already (a more precise rule's).
    pub fn coded(mut self, code: DiagnosticCode) -> Violation {
        self.code.get_or_insert(code);
        self
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

/// Which checks found a diagnostic, in the order they run: module-wide parse-time
/// checks around the per-op ones, op verification, the symbol table, symbol uses, hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    Undefined,
    ParseOp,
    Forward,
    Redefinition,
    ArgumentInUse,
    /// Op verification: `Step` tells entry, exit, dominance and the return check apart.
    Op,
    SymbolTable,
    SymbolUse,
    LintOp,
    LintModule,
    /// Shardings and meshes written inside strings (`crate::ide::strings`).
    Strings,
}

/// Within [`Phase::Op`], for one op: what MLIR checks first.
pub(crate) mod step {
    pub const ENTRY: u8 = 0;
    pub const EXIT: u8 = 1;
    pub const DOMINANCE: u8 = 2;
    pub const RETURN: u8 = 3;
}

/// Where a verifier diagnostic comes among those at the same position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Order {
    pub phase: Phase,
    /// The op whose check found it (0 for module-wide checks).
    pub op: OpId,
    pub step: u8,
    /// Its place among what that check found.
    pub seq: u32,
}

/// A diagnostic with its place in the output: sorted by `(span.start, order)`.
pub type Ordered = (Order, Diagnostic);

/// The sort key of the verifier's output.
pub fn sort_key(d: &Ordered) -> (u32, Order) {
    (d.1.span.start, d.0)
}

/// What the checks of one op found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpUnit {
    pub diags: Vec<Ordered>,
    /// Its typed uses of values defined later (checked module-wide).
    pub forward: Vec<ForwardUse>,
    /// An operand is defined by an op that does not dominate it: the dominance check of
    /// the isolated op around it fails.
    pub dominance: bool,
    /// It uses a value defined outside the isolated op around it.
    pub outside_use: bool,
}

impl OpUnit {
    pub fn is_empty(&self) -> bool {
        self.diags.is_empty() && self.forward.is_empty() && !self.dominance && !self.outside_use
    }
}

/// The checks of op `id` on its own: parse-time checks, op verification on the way in,
/// a `func.return` against its function, symbol uses (unless the op failed), hints.
pub fn verify_op(cx: &Ctx, id: OpId) -> OpUnit {
    let mut unit = OpUnit::default();
    let push = |phase: Phase, step: u8, ds: Vec<Diagnostic>, unit: &mut OpUnit| {
        for d in ds {
            let seq = unit.diags.len() as u32;
            unit.diags.push((Order { phase, op: id, step, seq }, d));
        }
    };
    let mut ds = Vec::new();
    parse_time::check_op(cx, id, &mut unit.forward, &mut ds);
    push(Phase::ParseOp, 0, std::mem::take(&mut ds), &mut unit);
    let failed_entry = match entry_checks(cx, id) {
        Err(v) => {
            report(cx, id, Stage::Entry(id), v, &mut ds);
            true
        }
        Ok(()) => false,
    };
    push(Phase::Op, step::ENTRY, std::mem::take(&mut ds), &mut unit);
    // `func.return` against its function's signature: MLIR reports it after the
    // function's nested isolated ops (as a check of the function on exit).
    if cx.model.op(id).name() == "func.return" {
        if let (Err(v), Some(func)) = (generic::verify_func_return(cx, id), cx.model.op(id).parent)
        {
            report(cx, id, Stage::Exit(func), v, &mut ds);
        }
    }
    push(Phase::Op, step::RETURN, std::mem::take(&mut ds), &mut unit);
    if !failed_entry {
        if let Err(v) = symbol_use_checks(cx, id) {
            report(cx, id, Stage::SymbolUse(id), v, &mut ds);
        }
    }
    push(Phase::SymbolUse, 0, std::mem::take(&mut ds), &mut unit);
    lints::check_op(cx, id, &mut ds);
    push(Phase::LintOp, 0, ds, &mut unit);
    unit.dominance = generic::dominance_violation(cx, id).is_some();
    unit.outside_use = generic::uses_value_from_outside(cx, id);
    unit
}

/// Whether op `id` is isolated from above: [`verify_root`] checks its regions.
pub fn is_root(model: &Model, id: OpId) -> bool {
    generic::is_isolated(model.op(id).name())
}

/// The region checks of isolated op `id`, after everything in it verified: isolation
/// from above, then dominance. `flagged(dominance, range)` tells whether an op with ids
/// in `range` has its [`OpUnit::dominance`] (or, `false`, `outside_use`) fact; the
/// regions are only walked when one does.
pub fn verify_root(
    cx: &Ctx,
    id: OpId,
    flagged: impl Fn(bool, std::ops::Range<OpId>) -> bool,
) -> Vec<Ordered> {
    let mut out = Vec::new();
    let inside = id + 1..cx.model.subtree_end(id);
    let mut ds = Vec::new();
    let exit_checked = match cx.model.op(id).name() {
        "sdy.manual_computation" | "sdy.named_computation" => true,
        // A function body sees only its own names, unless a forward reference was
        // resolved by a later definition (in another function).
        "func.func" => !cx.model.forward_references.is_empty(),
        _ => false,
    };
    if exit_checked && flagged(false, inside.clone()) {
        if let Err(v) = generic::verify_isolated_from_above(cx, id) {
            report(cx, id, Stage::Exit(id), v, &mut ds);
        }
    }
    let order = |step, seq| Order { phase: Phase::Op, op: id, step, seq };
    out.extend(ds.drain(..).enumerate().map(|(i, d)| (order(step::EXIT, i as u32), d)));
    if flagged(true, inside) {
        if let Some((user, v)) = generic::dominance_failure(cx, id) {
            report(cx, user, Stage::Dominance(id), v, &mut ds);
        }
    }
    out.extend(ds.drain(..).enumerate().map(|(i, d)| (order(step::DOMINANCE, i as u32), d)));
    out
}

/// The module-wide checks: undeclared names, forward uses (`forward`: every op's),
/// redefinitions, symbol redefinitions, hints about meshes (`referenced` tells whether
/// a mesh is used).
pub fn verify_module(
    cx: &Ctx,
    forward: Vec<ForwardUse>,
    referenced: impl FnMut(&MeshSymbol) -> bool,
) -> Vec<Ordered> {
    let mut out = Vec::new();
    let mut seq = 0u32;
    let mut push = |phase: Phase, d: Diagnostic, out: &mut Vec<Ordered>| {
        out.push((Order { phase, op: 0, step: 0, seq }, d));
        seq += 1;
    };
    for (part, d) in parse_time::check_module(cx, forward) {
        let phase = match part {
            ModulePart::Undefined => Phase::Undefined,
            ModulePart::Forward => Phase::Forward,
            ModulePart::Redefinition => Phase::Redefinition,
            ModulePart::ArgumentInUse => Phase::ArgumentInUse,
        };
        push(phase, d, &mut out);
    }
    let mut ds = Vec::new();
    for (op, v) in generic::symbol_redefinitions(cx) {
        report(cx, op, Stage::SymbolTable, v, &mut ds);
    }
    for d in ds.drain(..) {
        push(Phase::SymbolTable, d, &mut out);
    }
    lints::mesh_device_counts(cx, &mut ds);
    ds.extend(lints::unused_meshes(cx, referenced));
    for d in ds {
        push(Phase::LintModule, d, &mut out);
    }
    out
}

/// Every diagnostic of the verifier for a module: parse-time attribute rules, op
/// verification, symbol uses, then our own hints; sorted by position, then [`Order`].
pub fn verify_chunk(model: &Model, src: &str) -> Vec<Diagnostic> {
    let cx = Ctx::new(model, src);
    let units = verify_ops(model, src);
    let mut out: Vec<Ordered> = Vec::new();
    let mut forward = Vec::new();
    let mut dominance = Vec::new();
    let mut outside = Vec::new();
    for (id, unit) in units {
        if unit.dominance {
            dominance.push(id);
        }
        if unit.outside_use {
            outside.push(id);
        }
        forward.extend(unit.forward);
        out.extend(unit.diags);
    }
    let flagged = |dom: bool, range: std::ops::Range<OpId>| {
        let set = if dom { &dominance } else { &outside };
        let i = set.partition_point(|&o| o < range.start);
        set.get(i).is_some_and(|&o| o < range.end)
    };
    for id in 0..model.ops.len() as OpId {
        if is_root(model, id) {
            out.extend(verify_root(&cx, id, flagged));
        }
    }
    out.extend(verify_module(&cx, forward, |m| lints::is_referenced(src, m)));
    out.sort_by_key(sort_key);
    out.into_iter().map(|(_, d)| d).collect()
}

/// [`verify_op`] for every op, on two threads for big modules.
/// Only the units that found something are kept: most ops' are empty, and a table of all
/// of them was megabytes of fresh memory on a big file.
fn verify_ops(model: &Model, src: &str) -> Vec<(OpId, OpUnit)> {
    let n = model.ops.len() as OpId;
    let run = |range: std::ops::Range<OpId>| {
        let cx = Ctx::new(model, src);
        range
            .map(|id| (id, verify_op(&cx, id)))
            .filter(|(_, unit)| !unit.is_empty())
            .collect::<Vec<_>>()
    };
    if n < 4096 {
        return run(0..n);
    }
    let half = n / 2;
    std::thread::scope(|s| {
        let second = s.spawn(|| run(half..n));
        let mut out = run(0..half);
        match second.join() {
            Ok(rest) => out.extend(rest),
            Err(panic) => std::panic::resume_unwind(panic),
        }
        out
    })
}

/// Turns a violation found while verifying `op` into diagnostics.
fn report(cx: &Ctx, op: OpId, stage: Stage, v: Violation, out: &mut Vec<Diagnostic>) {
    let info = cx.model.op(v.at_op.unwrap_or(op));
    let at = Span::empty(info.loc());
    let text = |m: &str| if v.plain { m.to_string() } else { msg::op_error(info.name(), m) };
    let code = v.code.unwrap_or(DiagnosticCode::Verifier);
    let mut d = Diagnostic::error(at, text(&v.message), Origin::Verifier).with_code(code);
    d.focus = if v.focus == Span::default() { info.name_span() } else { v.focus };
    d.stage = Some(stage);
    d.notes = v.notes.iter().map(|(span, m)| Note { span: *span, message: m.clone() }).collect();
    out.push(d);
    // A follow-up is always the op's own error (`'op' op failed to infer ...`).
    for m in &v.follow_ups {
        let mut f = Diagnostic::error(at, msg::op_error(info.name(), m), Origin::Verifier);
        f.focus = info.name_span();
        f.code = code;
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
        n => match n.strip_prefix("stablehlo.") {
            Some(op) => stablehlo::verify(cx, id, op),
            None => Ok(()),
        },
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
