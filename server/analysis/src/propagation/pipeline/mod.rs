//! `-sdy-propagation-pipeline`: the import passes, user-priority propagation and the
//! export passes, in the order Shardy's registered pipeline runs them
//! (`PassManager.parse("builtin.module(sdy-propagation-pipeline)")`).

pub mod batching;
pub mod calls;
pub mod export;
pub mod import;

use super::control::{Control, Flow, RunToEnd};
use super::driver::{Failure, Warning};
use super::inference::{explain_strategy, Explained};
use super::{constraints, edges, run_strategy, Options, Outcome, Strategy};
use crate::ir::Module;
use crate::model::Model;

/// Runs the pipeline on `m`.
pub fn run_pipeline(m: &mut Module, model: &Model, src: &str, dedup_fully: bool) -> Outcome {
    let out = pipeline_body(m, model, src, dedup_fully, None).0;
    super::graph::Graph::release_shared();
    out
}

/// [`run_pipeline`] with the editor's explanation of its propagation step, asking
/// `control` between passes and between the ops of the propagation (a stopped run
/// returns at once, [`Outcome::stopped`]).
pub fn run_pipeline_explained(
    m: &mut Module,
    model: &Model,
    src: &str,
    dedup_fully: bool,
    control: &dyn Control,
) -> (Outcome, Option<Explained>) {
    let out = pipeline_body(m, model, src, dedup_fully, Some(control));
    super::graph::Graph::release_shared();
    out
}

/// The pipeline; explained when a control is given.
fn pipeline_body(
    m: &mut Module,
    model: &Model,
    src: &str,
    dedup_fully: bool,
    explain: Option<&dyn Control>,
) -> (Outcome, Option<Explained>) {
    let mut explained = None;
    let mut warnings: Vec<Warning> = Vec::new();
    let fail = |at: Option<u32>, message: String, warnings: Vec<Warning>| Outcome {
        warnings,
        failure: Some(Failure { at: loc_of(model, at), origin: at, message }),
        stopped: false,
    };
    let control = explain.unwrap_or(&RunToEnd);
    let stopped = || (Outcome { stopped: true, ..Outcome::default() }, None);
    import::symbol_dce(m);
    import::lift_inlined_meshes(m);
    import::remove_size_one_axes(m);
    import::propagate_sharding_from_func_to_call(m);
    import::constant_or_scalar_splitter(m);
    if control.pause() == Flow::Stop {
        return stopped();
    }
    import::symbol_dce(m);
    if let Err((at, msg)) = import::manual_axes_cleanup(m) {
        return (fail(at, msg, warnings), explained);
    }
    edges::add_data_flow_edges(m);
    if !dedup_fully {
        calls::flatten_call_graph(m);
        import::symbol_dce(m);
        for w in calls::import_func_calls(m, true) {
            warnings.push(Warning {
                once_key: Some("import-func-calls/multiple-calls"),
                at: loc_of(model, w.origin),
                origin: w.origin,
                message: w.message,
                op_text: w.op_text,
            });
        }
        import::symbol_dce(m);
        constraints::apply_sharding_constraints(m);
        if let Err((at, msg)) = import::sharding_group_import(m) {
            return (fail(at, msg, warnings), explained);
        }
    } else {
        constraints::apply_sharding_constraints(m);
        if let Err((at, msg)) = import::sharding_group_import(m) {
            return (fail(at, msg, warnings), explained);
        }
        calls::add_func_data_flow_edges(m);
    }
    calls::pre_order_funcs(m);
    if control.pause() == Flow::Stop {
        return stopped();
    }
    let mut opts = Options::new(Strategy::UserPriority);
    opts.keep_sharding_rules = true;
    let out = if explain.is_some() {
        let (out, e) = explain_strategy(m, model, src, &opts, control);
        explained = Some(e);
        out
    } else {
        run_strategy(m, model, src, &opts)
    };
    if out.stopped {
        return stopped();
    }
    warnings.extend(out.warnings);
    if let Some(f) = out.failure {
        return (Outcome { warnings, failure: Some(f), stopped: false }, explained);
    }
    if !dedup_fully {
        calls::export_named_computations(m);
        calls::propagate_to_func_results(m);
    } else {
        calls::propagate_to_func_results(m);
        calls::sink_func_data_flow_edges(m);
    }
    if control.pause() == Flow::Stop {
        return stopped();
    }
    calls::unflatten_call_graph(m, dedup_fully);
    import::symbol_dce(m);
    calls::insert_func_call_reshards(m);
    export::constant_or_scalar_merger(m);
    edges::sink_data_flow_edges(m, false, false);
    export::remove_sharding_groups(m);
    export::sharding_constraint_to_reshard(m);
    if let Some(e) = explained.as_mut() {
        e.io_before_export = crate::propagation::inference::io_shardings(m);
    }
    export::update_non_divisible_io(m);
    export::remove_sub_axes_in_io(m);
    export::close_shardings(m);
    if control.pause() == Flow::Stop {
        return stopped();
    }
    if let Err((at, msg)) =
        crate::export::explicit_reshards::insert_explicit_reshards(m, model, src, false)
    {
        return (fail(at, msg, warnings), explained);
    }
    export::canonicalize(m);
    export::drop_sharding_rules(m);
    (Outcome { warnings, ..Outcome::default() }, explained)
}

fn loc_of(model: &Model, origin: Option<u32>) -> u32 {
    let Some(o) = origin else { return 0 };
    model.ops.iter().find(|op| op.start == o).map_or(o, |op| op.loc())
}
