//! Shardy's export passes that run after propagation (explicit reshards, collectives,
//! padding, global-to-local, ...): one module per pass. The passes of the propagation
//! pipeline's own export stage live in `propagation::pipeline::export`.
pub mod axis_lists;
pub mod device_groups;
pub mod drop_sharding_and_mesh;
pub mod explicit_reshards;
pub mod global_to_local;
pub mod halo;
pub mod hlo_ops;
pub mod inline_meshes;
pub mod ops;
pub mod pad_for_divisibility;
pub mod per_instruction_partitioning;
pub mod pipeline;
pub mod remove_ag_rs_for_cmv1;
pub mod reshard_to_collectives;
pub mod resolve_permutation_factors;
pub mod resolve_single_device_sharding;
pub mod shapes;
pub mod small_export_passes;
pub mod verify_unreduced_axes;
