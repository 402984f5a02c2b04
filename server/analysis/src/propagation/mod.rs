//! Sharding propagation: Shardy's factor-based propagation (basic and aggressive
//! strategies, op and user priorities) over the printable IR, the passes around it
//! (data-flow edges, sharding constraints, the import/export parts of
//! `-sdy-propagation-pipeline`) and the editor's view of where each inferred sharding
//! comes from.
//!
//! * [`axis`], [`projection`], [`factor`]: the factor algorithm on one op.
//! * [`graph`]: the IR index (ops, values, uses) and where shardings live.
//! * [`driver`]: the worklist driver; [`priority`]: user priorities; [`control`]: what
//!   a run asks at its pause points (pause, stop).
//! * [`run_strategy`]: one strategy pass (`-sdy-basic-propagate`, ...).
//! * [`passes`]: the `opt` passes; [`pipeline`]: `-sdy-propagation-pipeline`.
//! * [`trace`], [`origins`]: update events, the debug attributes and the editor API;
//!   [`inference`]: the editor's origins and conflicts, their walks shared ([`hops`]).
//! * [`editor`]: a chunk propagated for the editor, mapped back onto the source.

pub mod constraints;
pub mod control;
pub mod deferred_shift;
pub mod driver;
pub mod edges;
pub mod editor;
pub mod factor;
pub mod graph;
pub mod hops;
pub mod inference;
pub mod irutil;
pub mod ops;
pub mod origins;
pub mod passes;
pub mod pipeline;
pub mod priority;
pub mod projection;
pub mod trace;

use crate::ir::Module;
use crate::model::Model;
use driver::{DirFn, Driver, Failure, Warning};
use factor::FactorPropagation;

/// Which strategy pass runs (the editor's `propagation.strategy` setting); in
/// [`Options`], `Pipeline` stands for its propagation, `UserPriority`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// `-sdy-propagation-pipeline`: import passes, user-priority propagation, export.
    #[default]
    Pipeline,
    Basic,
    Aggressive,
    OpPriority,
    UserPriority,
}

impl Strategy {
    pub const ALL: [Strategy; 5] = [
        Strategy::Pipeline,
        Strategy::Basic,
        Strategy::Aggressive,
        Strategy::OpPriority,
        Strategy::UserPriority,
    ];

    /// The setting's spelling (`pipeline`, `basic`, `aggressive`, `op-priority`,
    /// `user-priority`).
    pub fn parse(s: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|x| x.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Pipeline => "pipeline",
            Strategy::Basic => "basic",
            Strategy::Aggressive => "aggressive",
            Strategy::OpPriority => "op-priority",
            Strategy::UserPriority => "user-priority",
        }
    }

    /// The `opt` pass flag (without the dash).
    pub fn flag(self) -> &'static str {
        match self {
            Strategy::Pipeline => "sdy-propagation-pipeline",
            Strategy::Basic => "sdy-basic-propagate",
            Strategy::Aggressive => "sdy-aggressive-propagate",
            Strategy::OpPriority => "sdy-op-priority-propagate",
            Strategy::UserPriority => "sdy-user-priority-propagate",
        }
    }
}

/// `propagation-strategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyOption {
    Basic,
    Aggressive,
    BasicThenAggressive,
}

/// The options of the strategy passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub level: Strategy,
    pub keep_sharding_rules: bool,
    pub conservative: bool,
    pub debug_sharding_origins: bool,
    pub debug_edge_sharding: bool,
    pub strategy: StrategyOption,
    pub run_op_priority: bool,
}

impl Options {
    pub fn new(level: Strategy) -> Options {
        Options {
            level,
            keep_sharding_rules: false,
            conservative: false,
            debug_sharding_origins: false,
            debug_edge_sharding: false,
            strategy: StrategyOption::Aggressive,
            run_op_priority: true,
        }
    }
}

/// What a strategy pass reports.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub warnings: Vec<Warning>,
    pub failure: Option<Failure>,
    /// Its [`control::Control`] stopped it: the module is half propagated.
    pub stopped: bool,
}

fn run_aggressive(d: &mut Driver<'_>, opts: &Options, dir: DirFn) {
    let strategies: &[FactorPropagation] = match opts.strategy {
        StrategyOption::Aggressive => &[FactorPropagation::Aggressive],
        StrategyOption::Basic => &[FactorPropagation::Basic],
        StrategyOption::BasicThenAggressive => {
            &[FactorPropagation::Basic, FactorPropagation::Aggressive]
        }
    };
    for &s in strategies {
        d.propagate(s, dir);
    }
}

fn run_op_priority(d: &mut Driver<'_>, opts: &Options) {
    if !opts.run_op_priority {
        run_aggressive(d, opts, DirFn::Any);
        return;
    }
    for p in 0..5 {
        run_aggressive(d, opts, DirFn::OpPriority(p));
    }
}

/// Runs the propagation of `opts.level` on the driver's module (after the shape check
/// and the sharding group sync).
pub fn propagate_with(d: &mut Driver<'_>, opts: &Options) {
    match opts.level {
        Strategy::Basic => d.propagate(FactorPropagation::Basic, DirFn::Any),
        Strategy::Aggressive => run_aggressive(d, opts, DirFn::Any),
        Strategy::OpPriority => run_op_priority(d, opts),
        Strategy::UserPriority | Strategy::Pipeline => {
            let refs = priority::initialize(d);
            d.phase.user_priority = 0;
            run_op_priority(d, opts);
            for (p, r) in refs {
                priority::update_for_priority(d, &r, p);
                d.phase.user_priority = p;
                run_op_priority(d, opts);
            }
        }
    }
}

/// One strategy pass over `m` (`-sdy-basic-propagate` and the others).
pub fn run_strategy(m: &mut Module, model: &Model, src: &str, opts: &Options) -> Outcome {
    run_strategy_traced(m, model, src, opts, None, &control::RunToEnd).0
}

/// [`run_strategy`] with a tracer (returned after the run) and a control asked between
/// the ops of the worklist. The debug options of `opts` install their own tracer and
/// write their attributes.
pub fn run_strategy_traced(
    m: &mut Module,
    model: &Model,
    src: &str,
    opts: &Options,
    tracer: Option<Box<dyn trace::Tracer>>,
    control: &dyn control::Control,
) -> (Outcome, Option<Box<dyn trace::Tracer>>) {
    let debug = opts.debug_sharding_origins || opts.debug_edge_sharding;
    let mut tracer = tracer;
    if debug {
        let mut dbg = origins::Debug::new(opts.debug_sharding_origins, opts.debug_edge_sharding);
        dbg.prepare(m);
        tracer = Some(Box::new(dbg));
    }
    let mut d = Driver::new(m, model, src, opts.conservative);
    if let Err(f) = d.check_shapes() {
        return (Outcome { failure: Some(f), ..Outcome::default() }, None);
    }
    d.tracer = tracer;
    d.control = control;
    d.sync_groups();
    propagate_with(&mut d, opts);
    if d.stopped {
        return (Outcome { stopped: true, ..Outcome::default() }, None);
    }
    d.finish_rules(opts.keep_sharding_rules);
    d.remove_erased();
    let warnings = std::mem::take(&mut d.warnings);
    let tracer = d.tracer.take();
    drop(d);
    let tracer = match tracer {
        Some(t) if debug => {
            if let Ok(dbg) = t.as_any().downcast::<origins::Debug>() {
                dbg.save(m);
            }
            None
        }
        other => other,
    };
    (Outcome { warnings, ..Outcome::default() }, tracer)
}
