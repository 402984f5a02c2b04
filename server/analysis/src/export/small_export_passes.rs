//! The registry entries of the small export passes of this folder (mesh inlining,
//! sharding dropping, per-instruction partitioning, ...), chained into
//! `crate::passes::pass_info`.

use crate::pass::{fn_pass, info, FnPass};
use crate::pass::{OptKind, OptionInfo, Pass, PassInfo, PassOptions};

fn_pass!(c_inline_meshes, "sdy-inline-meshes", |cx, _| {
    super::inline_meshes::inline_meshes(cx.module);
    Ok(())
});
fn_pass!(c_drop, "sdy-drop-sharding-and-mesh", |cx, _| {
    super::drop_sharding_and_mesh::drop_sharding_and_mesh(cx.module);
    Ok(())
});
fn_pass!(c_cmv1, "sdy-remove-all-gather-reduce-scatter-for-cmv1", |cx, _| {
    super::remove_ag_rs_for_cmv1::remove_ag_rs_for_cmv1(cx.module);
    Ok(())
});
fn_pass!(c_verify_unreduced, "sdy-verify-unreduced-axes", |cx, _| {
    super::verify_unreduced_axes::verify_unreduced_axes(cx)
});
fn_pass!(c_single_device, "sdy-resolve-single-device-sharding", |cx, o| {
    let replicas = o.int("replica-count").unwrap_or(1);
    super::resolve_single_device_sharding::resolve_single_device_sharding(cx.module, replicas);
    Ok(())
});
fn_pass!(c_permutation, "sdy-resolve-permutation-factors", |cx, o| {
    let halo = o.bool("enable-halo-exchange");
    let replicas = o.int("replica-count").unwrap_or(1);
    let r = super::resolve_permutation_factors::resolve_permutation_factors(
        cx.module, cx.model, cx.src, halo, replicas,
    );
    crate::propagation::passes::fail(cx, r)
});
fn_pass!(c_per_instruction, "sdy-per-instruction-partitioning", |cx, o| {
    super::per_instruction_partitioning::per_instruction_partitioning(cx, o)
});

const fn opt(name: &'static str, kind: OptKind, default: &'static str) -> OptionInfo {
    OptionInfo { name, kind, default }
}

const DEVICE_COUNTS: &[OptionInfo] =
    &[opt("replica-count", OptKind::Int, "1"), opt("partition-count", OptKind::Int, "1")];

const PERMUTATION: &[OptionInfo] = &[
    opt("enable-halo-exchange", OptKind::Bool, "true"),
    opt("replica-count", OptKind::Int, "1"),
    opt("partition-count", OptKind::Int, "1"),
];

const PER_INSTRUCTION: &[OptionInfo] = &[
    opt("filter", OptKind::Str, ""),
    opt("enable-halo-exchange", OptKind::Bool, "true"),
    opt("replica-count", OptKind::Int, "1"),
    opt("partition-count", OptKind::Int, "1"),
];

/// The passes, with Shardy's flags and options.
pub static SMALL_EXPORT_PASSES: &[PassInfo] = &[
    info("sdy-inline-meshes", "mesh symbols become inline meshes", &[], c_inline_meshes),
    info("sdy-drop-sharding-and-mesh", "removes every sharding and mesh", &[], c_drop),
    info(
        "sdy-remove-all-gather-reduce-scatter-for-cmv1",
        "drops all-gathers feeding dots and reduce-scatters after them",
        &[],
        c_cmv1,
    ),
    info(
        "sdy-verify-unreduced-axes",
        "no unreduced axis becomes reduced without a reshard",
        &[],
        c_verify_unreduced,
    ),
    info(
        "sdy-resolve-single-device-sharding",
        "single-device ops run under a stablehlo.if on their device",
        DEVICE_COUNTS,
        c_single_device,
    ),
    info(
        "sdy-resolve-permutation-factors",
        "replicates sharded permutation factors (padded, sliced, reversed dimensions)",
        PERMUTATION,
        c_permutation,
    ),
    info(
        "sdy-per-instruction-partitioning",
        "partitions selected ops one by one into manual computations",
        PER_INSTRUCTION,
        c_per_instruction,
    ),
];
