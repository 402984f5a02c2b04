//! Every Shardy (and MLIR) verifier message, worded once. The wording is Shardy's,
//! byte for byte; callers only fill in the blanks.

/// `'op' op <msg>` — MLIR's `emitOpError` prefix.
pub fn op_error(op: &str, msg: &str) -> String {
    format!("'{op}' op {msg}")
}

/// The value-indexed prefix: `result - `, `result 1 - `, `arg 0 - `. Function
/// arguments and results always use the indexed form.
pub fn value_prefix(kind: &str, index: usize, count: usize, always_indexed: bool) -> String {
    if count == 1 && !always_indexed {
        format!("{kind} - ")
    } else {
        format!("{kind} {index} - ")
    }
}

// ----- meshes (parse time) -----

pub fn axis_size_at_least_one(size: i64) -> String {
    format!("axis size must be at least 1, got: {size}")
}
pub const FAILED_TO_PARSE_MESH_AXES: &str =
    "failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`";
pub fn device_id_negative(id: i64) -> String {
    format!("device id must be non-negative, got: {id}")
}
pub const AXES_EMPTY_MANY_DEVICE_IDS: &str = "axes is empty and device_ids has more than one element";
pub fn duplicate_axis_name(name: &str) -> String {
    format!("duplicate axis name: \"{name}\"")
}
pub fn device_count_mismatch(product: i64, ids: usize) -> String {
    format!("total product of axis sizes must match total number of device ids, got: {product} != {ids}")
}
pub fn device_ids_not_permutation(sorted: &[i64]) -> String {
    let list: Vec<String> = sorted.iter().map(i64::to_string).collect();
    format!("sorted device ids must be iota(product(axes)), got: {}", list.join(", "))
}

// ----- tensor shardings -----

pub fn unknown_mesh(name: &str) -> String {
    format!("unknown mesh: @{name}")
}
pub const MAXIMAL_SHARDING: &str =
    "a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes.";
pub fn tuple_of_size_one(ty: &str) -> String {
    format!("ops can only have a sharding for a tuple of size 1: {ty}")
}
pub fn non_shaped(ty: &str, sharding: &str) -> String {
    format!(
        "non-shaped tensors can only have a sharding with rank 0 and no replicated or unreduced axes. type: {ty}, sharding: {sharding}"
    )
}
pub fn only_ranked(ty: &str) -> String {
    format!("only ranked tensors can have a sharding. type: {ty}")
}
pub fn rank_mismatch(sharding_rank: usize, rank: usize) -> String {
    format!("sharding doesn't match tensor rank: {sharding_rank} != {rank}")
}
pub fn negative_priority(dim: usize) -> String {
    format!("dim {dim} has a negative priority")
}
pub fn empty_closed_with_priority(dim: usize) -> String {
    format!("dim {dim} is empty and closed but has a priority")
}
pub fn unknown_axis(name: &str) -> String {
    format!("unknown axis name: \"{name}\"")
}
pub fn duplicate_axis_ref(axis: &str) -> String {
    format!("duplicate axis ref: {axis}")
}
pub fn mergeable_sub_axes(a: &str, b: &str) -> String {
    format!("two consecutive sub-axes can be merged: {a}, {b}")
}
pub const REPLICATED_NOT_ORDERED: &str = "replicated axes are not ordered w.r.t. mesh";
pub const UNREDUCED_NOT_ORDERED: &str = "unreduced axes are not ordered w.r.t. mesh";
pub fn sub_and_full_axis(name: &str) -> String {
    format!("both sub-axis and full-axis are used for axis name: \"{name}\"")
}
pub fn sub_axis_pre_size(axis: &str) -> String {
    format!("sub-axis pre-size must be at least 1: {axis}")
}
pub fn sub_axis_size(axis: &str) -> String {
    format!("sub-axis sizes must be greater than 1: {axis}")
}
pub fn sub_axis_next_pre_size(next: i64, full: i64, axis: &str) -> String {
    format!("sub-axis next pre-size {next} doesn't divide the size of the full axis {full}: {axis}")
}
pub fn sub_axis_full_size(axis: &str) -> String {
    format!("sub-axis size is equal to the full axis size: {axis}")
}
pub fn overlapping_sub_axes(a: &str, b: &str) -> String {
    format!("overlapping sub-axes: {a}, {b}")
}
pub fn bound_manual_axis(name: &str) -> String {
    format!("operates on axis \"{name}\" which is already bound by a parent sdy.manual_computation op")
}
pub const PARENT_BOUNDING_AXIS: &str = "parent bounding this axis as manual";

// ----- attributes on ops and functions -----

pub const EXPECTED_PER_VALUE: &str =
    "should have a sharding attribute of type TensorShardingPerValueAttr";
pub const EXPECTED_TENSOR_SHARDING: &str =
    "should have a sharding attribute of type TensorShardingAttr";
pub fn shardings_count_mismatch(kind: &str, shardings: usize, values: usize) -> String {
    format!("{kind} shardings don't match number of values: {shardings} shardings vs {values} values")
}

// ----- MLIR parser -----

pub fn undeclared_value(name: &str) -> String {
    format!("use of undeclared SSA value name '{name}'")
}
