//! Propagation for the editor: one `// -----` chunk through the same pass `opt` runs
//! for a strategy, with the result mapped back onto the source (per function
//! argument, function result and op result: the sharding `opt` prints for it, where its
//! axes came from, what a conflict dropped). What the result costs (the collectives
//! Shardy's export inserts, memory) is [`crate::cost`].
//!
//! ```text
//! let p = propagate(src, &chunk, &model, &diagnostics, Strategy::Pipeline);
//! p.printed()            // the module exactly as `opt -sdy-propagation-pipeline` prints it
//! p.values[i].inferred   // per source value: the sharding(s) opt prints for it
//! hints::propagated(&model, src, &p)   // inlay hints, chunk-relative offsets
//! ```
//!
//! The passes run are the ones behind `opt`'s flags ([`Strategy::flag`]): the pipeline
//! is [`super::pipeline`]'s, a strategy is [`super::run_strategy`] with the pass's
//! default options; only a tracer is added to the propagation step. A front end steers
//! a run through a [`Control`] ([`propagate_with`]): it may pause it, or stop it.

pub mod hints;
pub mod reshards;
pub mod sites;

pub use super::control::{Control, Flow, RunToEnd, Stopped};
use super::driver::Warning;
use super::graph::Graph;
use super::inference::{explain_strategy, AxisOrigin, Blocked, Clash, Conflict, Explained};
use super::Options;
pub use super::Strategy;
use crate::diag::{Diagnostic, DiagnosticCode, Note, Origin, Severity};
use crate::ir::Module;
use crate::model::Model;
use crate::sharding::{Mesh, TensorSharding};
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A value of the source, by where it is defined (offsets relative to the chunk, like
/// the model the chunk was analysed into).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Site {
    /// Argument `index` of the function starting at `func`.
    Arg { func: u32, index: usize },
    /// Result `index` of the function starting at `func`.
    Result { func: u32, index: usize },
    /// Result `index` of the op starting at `op`.
    OpResult { op: u32, index: usize },
}

/// The sharding `opt` prints for one copy of a source value: a function the pipeline
/// cloned for a second call site, or a constant split per user, has several.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    pub sharding: Option<TensorSharding>,
    /// The function of the printed module it is in.
    pub func: String,
}

/// What propagation did to one source value.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueResult {
    pub site: Site,
    /// The value in the chunk's model (for positions), when the site has one.
    pub value: Option<crate::model::ValueId>,
    /// The sharding written in the source.
    pub written: Option<TensorSharding>,
    /// What the printed module has for it: one entry per copy, distinct shardings
    /// only (empty when the value is gone from the printed module).
    pub inferred: Vec<Variant>,
    /// The printed value of the first copy (what the explanation is keyed by).
    pub printed: Option<crate::ir::ValueId>,
}

impl ValueResult {
    /// The inferred sharding when all copies agree.
    pub fn single(&self) -> Option<&TensorSharding> {
        match self.inferred.as_slice() {
            [v] => v.sharding.as_ref(),
            _ => None,
        }
    }
}

/// The propagation of one chunk.
pub struct ChunkPropagation {
    pub strategy: Strategy,
    /// The pass failed (or the chunk has errors): nothing is printed, like `opt`.
    pub failed: bool,
    /// Errors and warnings, chunk-relative, as `opt` reports them.
    pub diagnostics: Vec<Diagnostic>,
    /// Per source value, in source order.
    pub values: Vec<ValueResult>,
    /// The meshes of the module, by name.
    pub meshes: HashMap<String, Mesh>,
    /// What the run recorded about origins and conflicts, read on demand (a hover, a
    /// tooltip): copying it out per value would cost more than most runs' hovers.
    explained: Explained,
    module: Option<Module>,
    /// The index of `module` the results were read from, kept by unexplained runs for
    /// the cost (which would build it again); an editor's run does not hold it.
    graph: Option<Graph>,
    /// The registry's rules of the model's ops, kept with `graph` for the cost (taken
    /// by its first run).
    rules: std::sync::Mutex<Option<crate::rules::memo::Kept>>,
    printed: OnceLock<String>,
}

impl ChunkPropagation {
    /// The module after the pass, exactly as `opt` prints it (empty when it failed).
    pub fn printed(&self) -> &str {
        self.printed.get_or_init(|| match &self.module {
            Some(m) if !self.failed => crate::print::print_module(m),
            _ => String::new(),
        })
    }

    /// The propagated module (`None` when the pass failed).
    pub fn module(&self) -> Option<&Module> {
        self.module.as_ref().filter(|_| !self.failed)
    }

    /// The index of [`ChunkPropagation::module`] (`None` when the pass failed).
    pub(crate) fn graph(&self) -> Option<&Graph> {
        self.graph.as_ref().filter(|_| !self.failed)
    }

    /// The rules the run built, for a scope of the same model and text (once).
    pub(crate) fn take_rules(&self) -> Option<crate::rules::memo::Kept> {
        self.rules.lock().ok()?.take()
    }

    /// The result for `site`.
    pub fn value(&self, site: Site) -> Option<&ValueResult> {
        let i = self.values.binary_search_by(|v| v.site.cmp(&site)).ok()?;
        self.values.get(i)
    }

    /// Where the axes of the (first) inferred sharding of `v` come from.
    pub fn origins(&self, v: &ValueResult) -> Vec<AxisOrigin> {
        v.printed.map_or_else(Vec::new, |p| self.explained.origins(p))
    }

    /// The conflicts that kept axes away from `v`.
    pub fn conflicts(&self, v: &ValueResult) -> Vec<Conflict> {
        v.printed.map_or_else(Vec::new, |p| self.explained.conflicts(p))
    }

    /// The axes `v`'s own sharding or an op (a barrier) kept away from it.
    pub fn blocked(&self, v: &ValueResult) -> Vec<Blocked> {
        v.printed.map_or_else(Vec::new, |p| self.explained.blocked(p))
    }

    /// The axes two factors of the op starting at `op` both have.
    pub fn clashes_at_op(&self, op: u32) -> &[Clash] {
        self.explained.explainer.clashes_at_op(op)
    }

    /// Every conflict recorded at the op starting at `op` (chunk-relative).
    pub fn conflicts_at_op(&self, op: u32) -> Vec<&Conflict> {
        self.explained.explainer.conflicts_at_op(op)
    }

    /// The sharding of argument (`result == false`) or result `index` of `func` before
    /// the pipeline's last export passes (pipeline runs only).
    pub fn io_before_export(
        &self,
        func: &str,
        result: bool,
        index: usize,
    ) -> Option<&TensorSharding> {
        self.explained
            .io_before_export
            .iter()
            .find(|x| x.func == func && x.result == result && x.index == index)
            .map(|x| &x.sharding)
    }

    fn failure(strategy: Strategy, diagnostics: Vec<Diagnostic>) -> ChunkPropagation {
        ChunkPropagation {
            strategy,
            failed: true,
            diagnostics,
            values: Vec::new(),
            meshes: HashMap::new(),
            explained: Explained::default(),
            module: None,
            graph: None,
            rules: Default::default(),
            printed: OnceLock::new(),
        }
    }
}

/// Runs `strategy` on a chunk: `src` is the text the chunk's spans and `model` refer
/// to, `diagnostics` the chunk's analysis diagnostics (a chunk with errors is not run,
/// as `opt` does not run passes on it).
pub fn propagate(
    src: &str,
    chunk: &Chunk,
    model: &Model,
    diagnostics: &[Diagnostic],
    strategy: Strategy,
) -> ChunkPropagation {
    run_to_end(src, chunk, model, diagnostics, strategy, Some(&RunToEnd))
}

/// [`propagate`], asking `control` at the pause points (between passes and between the
/// ops of the propagation): where it says stop, the run returns [`Stopped`] at once.
pub fn propagate_with(
    src: &str,
    chunk: &Chunk,
    model: &Model,
    diagnostics: &[Diagnostic],
    strategy: Strategy,
    control: &dyn Control,
) -> Result<ChunkPropagation, Stopped> {
    run_chunk(src, chunk, model, diagnostics, strategy, Some(control))
}

/// [`propagate`] without recording the explanation (origins, conflicts, the io before
/// export all come back empty): for a front end that only reads the shardings and the
/// printed module (`cost`), the recording is most of the run's allocations.
pub fn propagate_unexplained(
    src: &str,
    chunk: &Chunk,
    model: &Model,
    diagnostics: &[Diagnostic],
    strategy: Strategy,
) -> ChunkPropagation {
    run_to_end(src, chunk, model, diagnostics, strategy, None)
}

/// [`run_chunk`] by a caller that never stops it (a stop still ends as a failed run).
fn run_to_end(
    src: &str,
    chunk: &Chunk,
    model: &Model,
    diagnostics: &[Diagnostic],
    strategy: Strategy,
    control: Option<&dyn Control>,
) -> ChunkPropagation {
    match run_chunk(src, chunk, model, diagnostics, strategy, control) {
        Ok(p) => p,
        Err(Stopped) => ChunkPropagation::failure(strategy, Vec::new()),
    }
}

/// The run behind [`propagate_with`] (explained, steered by `control`) and
/// [`propagate_unexplained`] (`control` `None`: runs to the end, records nothing).
fn run_chunk(
    src: &str,
    chunk: &Chunk,
    model: &Model,
    diagnostics: &[Diagnostic],
    strategy: Strategy,
    control: Option<&dyn Control>,
) -> Result<ChunkPropagation, Stopped> {
    let errors: Vec<Diagnostic> = crate::verify::mlir_view(diagnostics, model)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if !errors.is_empty() {
        return Ok(ChunkPropagation::failure(strategy, errors));
    }
    // The registry's rules of the model's ops, built once for all passes.
    let rules = crate::rules::memo::scope(model, src);
    let mut m = crate::ir::build_module(src, chunk);
    let written = sites::written(&m);
    let (outcome, explained) = match (strategy, control) {
        (Strategy::Pipeline, Some(control)) => {
            let (o, e) =
                super::pipeline::run_pipeline_explained(&mut m, model, src, false, control);
            (o, e.unwrap_or_default())
        }
        (Strategy::Pipeline, None) => {
            (super::pipeline::run_pipeline(&mut m, model, src, false), Explained::default())
        }
        (s, Some(control)) => explain_strategy(&mut m, model, src, &Options::new(s), control),
        (s, None) => {
            (super::run_strategy(&mut m, model, src, &Options::new(s)), Explained::default())
        }
    };
    if outcome.stopped {
        return Err(Stopped);
    }
    let code = DiagnosticCode::Pass(strategy.flag());
    let mut diags = warnings(outcome.warnings, code);
    if let Some(f) = outcome.failure {
        let span = Span::new(f.at, f.at);
        diags.push(Diagnostic {
            span,
            focus: span,
            severity: Severity::Error,
            message: f.message,
            code,
            notes: Vec::new(),
            origin: Origin::Pass,
            stage: None,
        });
        return Ok(ChunkPropagation::failure(strategy, diags));
    }
    let g = Graph::build(&m);
    let values = sites::results(model, &m, &g, &written);
    Ok(ChunkPropagation {
        strategy,
        failed: false,
        diagnostics: diags,
        values,
        meshes: g.meshes.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        explained,
        module: Some(m),
        graph: control.is_none().then_some(g),
        rules: std::sync::Mutex::new(rules.keep().filter(|_| control.is_none())),
        printed: OnceLock::new(),
    })
}

/// The pass warnings, each once-per-process warning once.
fn warnings(ws: Vec<Warning>, code: DiagnosticCode) -> Vec<Diagnostic> {
    let mut seen: Vec<&'static str> = Vec::new();
    let mut out = Vec::new();
    for w in ws {
        if let Some(k) = w.once_key {
            if seen.contains(&k) {
                continue;
            }
            seen.push(k);
        }
        let span = Span::new(w.at, w.at);
        out.push(Diagnostic {
            span,
            focus: span,
            severity: Severity::Warning,
            message: w.message,
            code,
            notes: Vec::<Note>::new(),
            origin: Origin::Pass,
            stage: None,
        });
    }
    out
}

#[cfg(test)]
mod tests;
