//! The `opt` passes of this module, behind `crate::passes::PASSES`.

use super::{run_strategy, Options, Strategy, StrategyOption};
use crate::pass::{Pass, PassContext, PassFailed, PassOptions};

fn strategy_options(level: Strategy, o: &PassOptions) -> Options {
    let mut opts = Options::new(level);
    opts.keep_sharding_rules = o.bool("keep-sharding-rules");
    opts.conservative = o.bool("conservative-propagation");
    opts.debug_sharding_origins = o.bool("debug-sharding-origins");
    opts.debug_edge_sharding = o.bool("debug-propagation-edge-sharding");
    opts.strategy = match o.get("propagation-strategy") {
        Some("basic") => StrategyOption::Basic,
        Some("basic-then-aggressive") => StrategyOption::BasicThenAggressive,
        _ => StrategyOption::Aggressive,
    };
    opts.run_op_priority =
        o.get("run-op-priority-propagation").is_none_or(|_| o.bool("run-op-priority-propagation"));
    opts
}

/// Emits the warnings of a propagation run (once-per-process ones through the session).
pub fn emit_warnings(cx: &mut PassContext<'_>, warnings: Vec<super::driver::Warning>) {
    for w in warnings {
        if let Some(k) = w.once_key {
            if !cx.session.first_time(k) {
                continue;
            }
        }
        match w.op_text {
            Some(text) => cx.warn_showing(w.at, w.message, text),
            None => cx.warn(w.at, w.message, w.origin),
        }
    }
}

pub struct StrategyPass {
    flag: &'static str,
    opts: Options,
}

impl Pass for StrategyPass {
    fn flag(&self) -> &'static str {
        self.flag
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        let out = run_strategy(cx.module, cx.model, cx.src, &self.opts);
        emit_warnings(cx, out.warnings);
        if let Some(f) = out.failure {
            cx.error(f.at, f.message, f.origin);
            return Err(PassFailed);
        }
        Ok(())
    }
}

pub fn create_basic(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(StrategyPass {
        flag: "sdy-basic-propagate",
        opts: strategy_options(Strategy::Basic, o),
    })
}
pub fn create_aggressive(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(StrategyPass {
        flag: "sdy-aggressive-propagate",
        opts: strategy_options(Strategy::Aggressive, o),
    })
}
pub fn create_op_priority(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(StrategyPass {
        flag: "sdy-op-priority-propagate",
        opts: strategy_options(Strategy::OpPriority, o),
    })
}
pub fn create_user_priority(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(StrategyPass {
        flag: "sdy-user-priority-propagate",
        opts: strategy_options(Strategy::UserPriority, o),
    })
}

pub struct AddDataFlowEdges;
impl Pass for AddDataFlowEdges {
    fn flag(&self) -> &'static str {
        "sdy-add-data-flow-edges"
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        super::edges::add_data_flow_edges(cx.module);
        Ok(())
    }
}
pub fn create_add_data_flow_edges(_: &PassOptions) -> Box<dyn Pass> {
    Box::new(AddDataFlowEdges)
}

pub struct SinkDataFlowEdges {
    origins: bool,
    edges: bool,
}
impl Pass for SinkDataFlowEdges {
    fn flag(&self) -> &'static str {
        "sdy-sink-data-flow-edges"
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        super::edges::sink_data_flow_edges(cx.module, self.origins, self.edges);
        Ok(())
    }
}
pub fn create_sink_data_flow_edges(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(SinkDataFlowEdges {
        origins: o.bool("sink-debug-sharding-origins"),
        edges: o.bool("sink-debug-propagation-edge-sharding"),
    })
}

pub struct ApplyShardingConstraints {
    origins: bool,
    edges: bool,
}
impl Pass for ApplyShardingConstraints {
    fn flag(&self) -> &'static str {
        "sdy-apply-sharding-constraints"
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        if self.origins || self.edges {
            let mut dbg = super::origins::Debug::new(self.origins, self.edges);
            dbg.prepare(cx.module);
            super::constraints::apply_sharding_constraints_debug(cx.module, Some(&mut dbg));
            dbg.save(cx.module);
        } else {
            super::constraints::apply_sharding_constraints(cx.module);
        }
        Ok(())
    }
}
pub fn create_apply_sharding_constraints(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(ApplyShardingConstraints {
        origins: o.bool("debug-sharding-origins"),
        edges: o.bool("debug-propagation-edge-sharding"),
    })
}

pub struct PropagationPipeline {
    dedup: bool,
}
impl Pass for PropagationPipeline {
    fn flag(&self) -> &'static str {
        "sdy-propagation-pipeline"
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        let out = super::pipeline::run_pipeline(cx.module, cx.model, cx.src, self.dedup);
        emit_warnings(cx, out.warnings);
        if let Some(f) = out.failure {
            cx.error(f.at, f.message, f.origin);
            return Err(PassFailed);
        }
        Ok(())
    }
}
pub fn create_pipeline(o: &PassOptions) -> Box<dyn Pass> {
    Box::new(PropagationPipeline { dedup: o.bool("dedup-functions-fully") })
}

pub(crate) use crate::pass::{fn_pass, info, FnPass};

use super::pipeline::{calls, export, import};
use crate::pass::{OptKind, OptionInfo, PassInfo};

pub(crate) fn fail(
    cx: &mut PassContext<'_>,
    r: Result<(), (Option<u32>, String)>,
) -> Result<(), PassFailed> {
    match r {
        Ok(()) => Ok(()),
        Err((origin, msg)) => {
            let at = origin
                .and_then(|o| cx.model.ops.iter().find(|op| op.start == o).map(|op| op.loc()))
                .unwrap_or(0);
            cx.error(at, msg, origin);
            Err(PassFailed)
        }
    }
}

fn_pass!(c_symbol_dce, "symbol-dce", |cx, _| {
    import::symbol_dce(cx.module);
    Ok(())
});
fn_pass!(c_lift, "sdy-lift-inlined-meshes", |cx, _| {
    import::lift_inlined_meshes(cx.module);
    Ok(())
});
fn_pass!(c_size_one, "sdy-remove-size-one-axes", |cx, _| {
    import::remove_size_one_axes(cx.module);
    Ok(())
});
fn_pass!(c_func_to_call, "sdy-propagate-sharding-from-func-to-call", |cx, _| {
    import::propagate_sharding_from_func_to_call(cx.module);
    Ok(())
});
fn_pass!(c_splitter, "sdy-constant-or-scalar-splitter", |cx, _| {
    import::constant_or_scalar_splitter(cx.module);
    Ok(())
});
fn_pass!(c_manual_cleanup, "sdy-manual-axes-cleanup", |cx, _| {
    let r = import::manual_axes_cleanup(cx.module);
    fail(cx, r)
});
fn_pass!(c_flatten, "sdy-flatten-call-graph", |cx, _| {
    calls::flatten_call_graph(cx.module);
    Ok(())
});
fn_pass!(c_import_calls, "sdy-import-func-calls", |cx, o| {
    let w =
        calls::import_func_calls(cx.module, o.bool("add-data-flow-edges-on-named-computations"));
    for w in w {
        if cx.session.first_time("import-func-calls/multiple-calls") {
            let at = w
                .origin
                .and_then(|o| cx.model.ops.iter().find(|op| op.start == o).map(|op| op.loc()))
                .unwrap_or(0);
            match w.op_text {
                Some(text) => cx.warn_showing(at, w.message, text),
                None => cx.warn(at, w.message, w.origin),
            }
        }
    }
    Ok(())
});
fn_pass!(c_group_import, "sdy-sharding-group-import", |cx, _| {
    let r = import::sharding_group_import(cx.module);
    fail(cx, r)
});
fn_pass!(c_import_pipeline, "sdy-import-pipeline", |cx, o| {
    // Shardy's `addImportPipeline` with default propagation options.
    let m = &mut *cx.module;
    import::symbol_dce(m);
    import::lift_inlined_meshes(m);
    import::remove_size_one_axes(m);
    import::propagate_sharding_from_func_to_call(m);
    import::constant_or_scalar_splitter(m);
    import::symbol_dce(m);
    let r = import::manual_axes_cleanup(m);
    fail(cx, r)?;
    super::edges::add_data_flow_edges(cx.module);
    if o.bool("dedup-functions-fully") {
        super::constraints::apply_sharding_constraints(cx.module);
        let r = import::sharding_group_import(cx.module);
        fail(cx, r)?;
    }
    Ok(())
});
fn_pass!(c_batching, "sdy-explicit-gather-scatter-batching", |cx, _| {
    super::pipeline::batching::explicit_gather_scatter_batching(cx.module);
    Ok(())
});
fn_pass!(c_pre_order, "sdy-pre-order-funcs", |cx, _| {
    calls::pre_order_funcs(cx.module);
    Ok(())
});
fn_pass!(c_export_named, "sdy-export-named-computations", |cx, _| {
    calls::export_named_computations(cx.module);
    Ok(())
});
fn_pass!(c_to_func_results, "sdy-propagate-to-func-results", |cx, _| {
    calls::propagate_to_func_results(cx.module);
    Ok(())
});
fn_pass!(c_unflatten, "sdy-unflatten-call-graph", |cx, o| {
    calls::unflatten_call_graph(cx.module, o.bool("dedup-functions-fully"));
    Ok(())
});
fn_pass!(c_call_reshards, "sdy-insert-func-call-reshards", |cx, _| {
    calls::insert_func_call_reshards(cx.module);
    Ok(())
});
fn_pass!(c_add_func_edges, "sdy-add-func-data-flow-edges", |cx, _| {
    calls::add_func_data_flow_edges(cx.module);
    Ok(())
});
fn_pass!(c_sink_func_edges, "sdy-sink-func-data-flow-edges", |cx, _| {
    calls::sink_func_data_flow_edges(cx.module);
    Ok(())
});
fn_pass!(c_merger, "sdy-constant-or-scalar-merger", |cx, _| {
    export::constant_or_scalar_merger(cx.module);
    Ok(())
});
fn_pass!(c_remove_groups, "sdy-remove-sharding-groups", |cx, _| {
    export::remove_sharding_groups(cx.module);
    Ok(())
});
fn_pass!(c_to_reshard, "sdy-sharding-constraint-to-reshard", |cx, _| {
    export::sharding_constraint_to_reshard(cx.module);
    Ok(())
});
fn_pass!(c_non_div, "sdy-update-non-divisible-input-output-shardings", |cx, _| {
    export::update_non_divisible_io(cx.module);
    Ok(())
});
fn_pass!(c_sub_axes, "sdy-remove-sub-axes-in-input-output-shardings", |cx, _| {
    export::remove_sub_axes_in_io(cx.module);
    Ok(())
});
fn_pass!(c_close, "sdy-close-shardings", |cx, _| {
    export::close_shardings(cx.module);
    Ok(())
});
fn_pass!(c_explicit_reshards, "sdy-insert-explicit-reshards", |cx, o| {
    let full = o.bool("enable-full-version");
    let r = crate::export::explicit_reshards::insert_explicit_reshards(
        cx.module, cx.model, cx.src, full,
    );
    fail(cx, r)
});
fn_pass!(c_drop_rules, "sdy-drop-sharding-rules", |cx, _| {
    export::drop_sharding_rules(cx.module);
    Ok(())
});

const DEDUP: &[OptionInfo] =
    &[OptionInfo { name: "dedup-functions-fully", kind: OptKind::Bool, default: "false" }];
const IMPORT_CALLS: &[OptionInfo] = &[OptionInfo {
    name: "add-data-flow-edges-on-named-computations",
    kind: OptKind::Bool,
    default: "true",
}];
const FULL: &[OptionInfo] =
    &[OptionInfo { name: "enable-full-version", kind: OptKind::Bool, default: "false" }];

/// The individual import/export passes of the propagation pipeline (each also a flag of
/// `sdy_opt`).
pub static EXTRA: &[PassInfo] = &[
    info("symbol-dce", "removes unreferenced private functions", &[], c_symbol_dce),
    info("sdy-lift-inlined-meshes", "inline meshes become sdy.mesh symbols", &[], c_lift),
    info("sdy-remove-size-one-axes", "drops size-1 axes from shardings", &[], c_size_one),
    info(
        "sdy-propagate-sharding-from-func-to-call",
        "call results take callee result shardings",
        &[],
        c_func_to_call,
    ),
    info(
        "sdy-constant-or-scalar-splitter",
        "one copy of each constant sub-computation per use",
        &[],
        c_splitter,
    ),
    info(
        "sdy-manual-axes-cleanup",
        "sorts manual axes, replicates unused ones",
        &[],
        c_manual_cleanup,
    ),
    info("sdy-flatten-call-graph", "one function per call", &[], c_flatten),
    info("sdy-import-func-calls", "calls become named computations", IMPORT_CALLS, c_import_calls),
    info("sdy-sharding-group-import", "unifies and renumbers sharding groups", &[], c_group_import),
    info(
        "sdy-explicit-gather-scatter-batching",
        "implicit gather/scatter batch dimensions made explicit",
        &[],
        c_batching,
    ),
    info("sdy-import-pipeline", "the import passes before propagation", DEDUP, c_import_pipeline),
    info("sdy-pre-order-funcs", "functions in call-graph pre-order", &[], c_pre_order),
    info("sdy-export-named-computations", "named computations become calls", &[], c_export_named),
    info(
        "sdy-propagate-to-func-results",
        "function results take returned shardings",
        &[],
        c_to_func_results,
    ),
    info("sdy-unflatten-call-graph", "dedups identical functions", DEDUP, c_unflatten),
    info(
        "sdy-insert-func-call-reshards",
        "reshards call results to callee results",
        &[],
        c_call_reshards,
    ),
    info(
        "sdy-add-func-data-flow-edges",
        "func data-flow edges on arguments and call results",
        &[],
        c_add_func_edges,
    ),
    info("sdy-sink-func-data-flow-edges", "removes func data-flow edges", &[], c_sink_func_edges),
    info("sdy-constant-or-scalar-merger", "merges identical constants", &[], c_merger),
    info("sdy-remove-sharding-groups", "removes sharding groups", &[], c_remove_groups),
    info("sdy-sharding-constraint-to-reshard", "constraints become reshards", &[], c_to_reshard),
    info(
        "sdy-update-non-divisible-input-output-shardings",
        "evenly divisible I/O shardings",
        &[],
        c_non_div,
    ),
    info(
        "sdy-remove-sub-axes-in-input-output-shardings",
        "no sub-axes in main's I/O",
        &[],
        c_sub_axes,
    ),
    info("sdy-close-shardings", "closes every sharding", &[], c_close),
    info(
        "sdy-insert-explicit-reshards",
        "reshards ops to their sharding rules",
        FULL,
        c_explicit_reshards,
    ),
    info("sdy-drop-sharding-rules", "removes non-custom sharding rules", &[], c_drop_rules),
];
