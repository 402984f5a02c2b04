//! What `sdy_opt` prints for a module, from everything we found: MLIR stops parsing at
//! the first failure, reports undeclared SSA names only after a successful parse, then
//! verifies each isolated-from-above op on its own (stopping at its first failing op,
//! nested isolated ops only when their parent's walk passed), and walks the symbol
//! users only when every op verified, in MLIR's order (a stack of regions: the last
//! function first), stopping at the first failing one.

use super::generic::is_isolated;
use super::messages as msg;
use crate::diag::{Diagnostic, Origin, Stage};
use crate::model::{Model, OpId};
use std::collections::HashMap;

/// The diagnostics `sdy_opt` would print for the module (`diags`: everything found
/// for it — syntax errors and verifier diagnostics; hints are never kept).
pub fn mlir_view(diags: &[Diagnostic], model: &Model) -> Vec<Diagnostic> {
    let parse = parse_failure(diags);
    if !parse.is_empty() {
        return parse;
    }
    let mut sim = Simulation { model, by_stage: HashMap::new(), out: Vec::new() };
    for d in diags.iter().filter(|d| d.origin == Origin::Verifier) {
        if let Some(stage) = d.stage {
            sim.by_stage.entry(stage).or_default().push(d);
        }
    }
    sim.module();
    sim.out
}

/// The parse failure MLIR reports: the earliest failure (an error and its chained
/// lines); undeclared SSA names only when nothing else failed, then all of them.
fn parse_failure(diags: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut groups: Vec<Vec<&Diagnostic>> = Vec::new();
    let mut undeclared: Vec<Diagnostic> = Vec::new();
    for d in diags {
        match d.origin {
            Origin::Parse { .. } if d.message == msg::UNDECLARED_VALUE => {
                undeclared.push(d.clone())
            }
            Origin::Parse { first_of_failure: true } => groups.push(vec![d]),
            Origin::Parse { first_of_failure: false } => match groups.last_mut() {
                Some(g) => g.push(d),
                None => groups.push(vec![d]),
            },
            _ => {}
        }
    }
    // Where the parser reports each failure (not always where it is located).
    let reported_at = |d: &Diagnostic| match d.stage {
        Some(Stage::ParseAt(at)) => at,
        _ => d.span.start,
    };
    match groups.into_iter().min_by_key(|g| reported_at(g[0])) {
        Some(g) => g.into_iter().cloned().collect(),
        None => {
            undeclared.sort_by_key(|d| d.span.start);
            undeclared
        }
    }
}

struct Simulation<'a> {
    model: &'a Model,
    by_stage: HashMap<Stage, Vec<&'a Diagnostic>>,
    out: Vec<Diagnostic>,
}

impl Simulation<'_> {
    /// Emits the diagnostics of `stage`, if any; whether there were.
    fn emit(&mut self, stage: Stage) -> bool {
        match self.by_stage.get(&stage) {
            Some(ds) => {
                self.out.extend(ds.iter().map(|d| (*d).clone()));
                true
            }
            None => false,
        }
    }

    fn isolated(&self, op: OpId) -> bool {
        is_isolated(self.model.op(op).name())
    }

    /// MLIR's verification of `op` and what it contains; whether it passed.
    fn verify(&mut self, op: OpId) -> bool {
        if self.emit(Stage::Entry(op)) {
            return false;
        }
        let model = self.model;
        let children = model.children(op);
        for &c in children {
            if !self.isolated(c) && !self.verify(c) {
                return false;
            }
        }
        let mut ok = true;
        for &c in children {
            if self.isolated(c) {
                ok &= self.verify(c);
            }
        }
        // The dominance check of an isolated op's regions comes after all of it verified.
        ok && !self.emit(Stage::Exit(op)) && !(self.isolated(op) && self.emit(Stage::Dominance(op)))
    }

    fn module(&mut self) {
        let top = self.model.top.clone();
        for &t in &top {
            if !self.isolated(t) && !self.verify(t) {
                return;
            }
        }
        let mut ok = true;
        for &t in &top {
            if self.isolated(t) {
                ok &= self.verify(t);
            }
        }
        if !ok {
            return;
        }
        if let Some(first) = self.by_stage.get(&Stage::SymbolTable).and_then(|ds| ds.first()) {
            self.out.push((*first).clone());
            return;
        }
        // MLIR's symbol table walk (`walkSymbolTable`): a stack of regions; the ops of the
        // region on top, in order, each pushing its regions (not into nested symbol
        // tables); then the region pushed last. So the last function's body comes first,
        // and a region's nested regions after all of its ops. It stops at the first
        // failure.
        let model = self.model;
        let mut regions: Vec<Vec<OpId>> = vec![top];
        while let Some(ops) = regions.pop() {
            for op in ops {
                if self.emit(Stage::SymbolUse(op)) {
                    return;
                }
                if model.op(op).name() == "builtin.module" {
                    continue;
                }
                let count = model.op(op).node.regions.len();
                let mut nested: Vec<Vec<OpId>> = vec![Vec::new(); count];
                for &c in model.children(op) {
                    if let Some(r) = nested.get_mut(model.op(c).region as usize) {
                        r.push(c);
                    }
                }
                regions.extend(nested);
            }
        }
    }
}
