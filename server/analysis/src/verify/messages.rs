//! Every Shardy (and MLIR) verifier message, worded once. The wording is Shardy's,
//! byte for byte; callers only fill in the blanks. Types are quoted (`'tensor<8xf32>'`)
//! as MLIR diagnostics print them; attributes are not. The hints at the end are our own.

use std::fmt::Display;

/// `'op' op <msg>` — MLIR's `emitOpError` prefix.
pub fn op_error(op: &str, msg: &str) -> String {
    format!("'{op}' op {msg}")
}

/// `custom op 'op' ` — MLIR's prefix for errors raised while parsing an op's custom syntax.
pub fn custom_op_prefix(op: &str) -> String {
    format!("custom op '{op}' ")
}

/// The value-indexed prefix: `result - ` for the only value, else `result 1 - ` (a
/// zero-value op uses the indexed form).
pub fn value_prefix(kind: &str, index: usize, count: usize) -> String {
    if count == 1 {
        format!("{kind} - ")
    } else {
        indexed_prefix(kind, index)
    }
}

/// `arg 0 - `: function arguments and results always use the indexed form.
pub fn indexed_prefix(kind: &str, index: usize) -> String {
    format!("{kind} {index} - ")
}

// ----- MLIR's parser -----

pub const UNDECLARED_VALUE: &str = "use of undeclared SSA value name";

// ----- operation names (MLIR's parser) -----

pub const UNREGISTERED_DIALECT_GENERIC: &str = "operation being parsed with an unregistered dialect. If this is intended, please use -allow-unregistered-dialect with the MLIR tool used";
pub fn unregistered_generic_op(name: &str, dialect: &str) -> String {
    format!("unregistered operation '{name}' found in dialect ('{dialect}') that does not allow unknown operations")
}
/// MLIR ends this message with a space.
pub fn dialect_not_found(dialect: &str, name: &str) -> String {
    format!("Dialect `{dialect}' not found for custom op '{name}' ")
}
/// An unprefixed name in a region without a default dialect.
pub fn dialect_not_found_tried(name: &str) -> String {
    format!("Dialect `' not found for custom op '{name}'  (tried '.{name}' as well)")
}
pub fn unknown_custom_op(name: &str) -> String {
    format!("custom op '{name}' is unknown")
}
pub fn unknown_custom_op_tried(name: &str, full: &str) -> String {
    format!("custom op '{name}' is unknown (tried '{full}' as well)")
}
/// `*`: dialects loaded but not registered in JAX's context.
pub fn available_dialects(dialects: &[&str]) -> String {
    let list: Vec<String> = dialects
        .iter()
        .map(|d| {
            if matches!(*d, "affine" | "complex" | "ub") {
                format!("{d} (*)")
            } else {
                d.to_string()
            }
        })
        .collect();
    format!(
        "Available dialects: {} (* corresponding to loaded but unregistered dialects); for more info on dialect registration see https://mlir.llvm.org/getting_started/Faq/#registered-loaded-dependent-whats-up-with-dialects-management",
        list.join(", ")
    )
}
pub const ELEMENTS_STATIC_SHAPE: &str = "elements literal type must have static shape";
pub const INVALID_TYPE_KIND: &str = "invalid kind of type specified";
pub fn invalid_type_kind_expected(expected: &str, found: &str) -> String {
    format!("invalid kind of type specified: expected {expected}, but found '{found}'")
}

pub fn value_type_mismatch(name: &str, written: &str, prior: &str) -> String {
    format!(
        "use of value '{name}' expects different type than prior uses: '{written}' vs '{prior}'"
    )
}
pub const PRIOR_USE_HERE: &str = "prior use here";
pub fn invalid_properties(dict: &str, op: &str, name: &str, value: &str) -> String {
    format!(
        "invalid properties {dict} for op {op}: Invalid attribute `{name}` in property conversion: {value}"
    )
}
pub fn definition_type_mismatch(name: &str, ty: &str) -> String {
    format!("definition of SSA value '{name}' has type '{ty}'")
}
pub fn previously_used_with_type(ty: &str) -> String {
    format!("previously used here with type '{ty}'")
}
pub fn redefinition(name: &str) -> String {
    format!("redefinition of SSA value '{name}'")
}
pub const PREVIOUSLY_DEFINED_HERE: &str = "previously defined here";
pub fn region_argument_in_use(name: &str) -> String {
    format!("region entry argument '{name}' is already in use")
}
pub const PREVIOUSLY_REFERENCED_HERE: &str = "previously referenced here";
pub fn operand_does_not_dominate(index: usize) -> String {
    format!("operand #{index} does not dominate this use")
}
pub fn operand_defined_here(place: &str) -> String {
    format!("operand defined here ({place})")
}

// ----- meshes (parse time) -----

pub fn axis_size_at_least_one(size: i64) -> String {
    format!("axis size must be at least 1, got: {size}")
}
pub const FAILED_TO_PARSE_MESH_AXES: &str =
    "failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`";
pub const FAILED_TO_PARSE_MESH_ATTR: &str = "failed to parse MeshAttr";
pub fn device_id_negative(id: i64) -> String {
    format!("device id must be non-negative, got: {id}")
}
pub const AXES_EMPTY_MANY_DEVICE_IDS: &str =
    "axes is empty and device_ids has more than one element";
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

// ----- MLIR's generic verifiers -----

pub fn expects_parent(parent: &str) -> String {
    format!("expects parent op '{parent}'")
}
pub fn symbol_redefinition(name: &str) -> String {
    format!("redefinition of symbol named '{name}'")
}
pub const SEE_EXISTING_SYMBOL: &str = "see existing symbol definition here";
pub const SAME_OPERANDS_AND_RESULT_TYPE: &str =
    "requires the same type for all operands and results";
pub const USING_VALUE_OUTSIDE_REGION: &str = "using value defined outside the region";
pub const REQUIRED_BY_ISOLATION: &str = "required by region isolation constraints";
pub fn inferred_types_incompatible(inferred: &str, actual: &str) -> String {
    format!(
        "inferred type(s) {inferred} are incompatible with return type(s) of operation {actual}"
    )
}
pub const FAILED_TO_INFER_TYPES: &str = "failed to infer returned types";
pub fn return_count_mismatch(operands: usize, func: &str, results: usize) -> String {
    format!("has {operands} operands, but enclosing function (@{func}) returns {results}")
}
pub fn return_type_mismatch(index: usize, ty: &str, result: &str, func: &str) -> String {
    format!("type of return operand {index} ('{ty}') doesn't match function result type ('{result}') in function @{func}")
}

// ----- tensor shardings -----

pub fn unknown_mesh(name: &str) -> String {
    format!("unknown mesh: @{name}")
}
pub const MAXIMAL_SHARDING: &str =
    "a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes.";
pub fn tuple_of_size_one(ty: &str) -> String {
    format!("ops can only have a sharding for a tuple of size 1: '{ty}'")
}
pub fn non_shaped(ty: &str, sharding: &str) -> String {
    format!(
        "non-shaped tensors can only have a sharding with rank 0 and no replicated or unreduced axes. type: '{ty}', sharding: {sharding}"
    )
}
pub fn only_ranked(ty: &str) -> String {
    format!("only ranked tensors can have a sharding. type: '{ty}'")
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
/// `replicated`, `unreduced`, `reduction` or `r2u` axes out of mesh order.
pub fn axes_not_ordered(kind: &str) -> String {
    format!("{kind} axes are not ordered w.r.t. mesh")
}
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
    format!(
        "operates on axis \"{name}\" which is already bound by a parent sdy.manual_computation op"
    )
}
pub const PARENT_BOUNDING_AXIS: &str = "parent bounding this axis as manual";

// ----- attributes on ops and functions -----

pub const EXPECTED_PER_VALUE: &str =
    "should have a sharding attribute of type TensorShardingPerValueAttr";
pub const EXPECTED_TENSOR_SHARDING: &str =
    "should have a sharding attribute of type TensorShardingAttr";
pub fn shardings_count_mismatch(kind: &str, shardings: usize, values: usize) -> String {
    format!(
        "{kind} shardings don't match number of values: {shardings} shardings vs {values} values"
    )
}

// ----- unreduced-axes transitions -----

pub fn cannot_add_unreduced_axis(name: &str) -> String {
    format!("cannot add new unreduced axis '{name}'.")
}
pub fn cannot_introduce_reduction(actual: impl Display, expected: impl Display) -> String {
    format!("cannot introduce '{actual}' unreduced axes. Expected '{expected}'.")
}
pub fn cannot_reduce_reduction(actual: impl Display, expected: impl Display) -> String {
    format!("cannot reduce '{actual}' unreduced axes. Expected '{expected}'.")
}
pub fn dropped_unreduced_axis(name: &str) -> String {
    format!(
        "dropped unreduced axis '{name}' without a blessed operation (e.g., sdy.reshard). This is an invalid transition from unreduced to reduced."
    )
}
pub fn cannot_change_kept_reduction(from: impl Display, to: impl Display) -> String {
    format!("cannot change the reduction operator of kept unreduced axes from {from} to {to}.")
}

// ----- data-flow edges and barriers -----

pub fn data_flow_edge_static_shape(ty: &str) -> String {
    format!("expected sdy.data_flow_edge to have a static-shaped result. type: '{ty}'")
}
pub const DATA_FLOW_EDGE_SINGLE_USER: &str =
    "expected input of sdy.data_flow_edge to have a single user";
pub const DATA_FLOW_EDGE_SDY_INPUT: &str = "expected input of sdy.data_flow_edge to not be defined by an SdyDialect op (other than an sdy.named_computation).";
pub const DATA_FLOW_EDGE_SDY_INPUT_NOTE: &str =
    "sdy op defining the input of the sdy.data_flow_edge";
pub fn func_data_flow_edge_static_shape(ty: &str) -> String {
    format!("expected sdy.func_data_flow_edge to have a static-shaped result. type: '{ty}'")
}
pub const FUNC_DATA_FLOW_EDGE_SINGLE_USER: &str =
    "expected operand of sdy.func_data_flow_edge to have a single user";
pub const FUNC_DATA_FLOW_EDGE_FUNC_ARG: &str =
    "expected operand of sdy.func_data_flow_edge to be a block argument of a func op.";
pub const FUNC_DATA_FLOW_EDGE_CALL_RESULT: &str =
    "expected operand of sdy.func_data_flow_edge to be a result of call op.";
pub const BARRIER_BOTH: &str =
    "cannot specify `BOTH` as the direction. Not blocking propagation direction makes the op redundant.";

// ----- named and manual computations -----

pub fn block_args_count(args: usize, operands: usize) -> String {
    format!("number of block arguments must match the number of operands: {args} != {operands}")
}
pub fn block_arg_type(index: usize, inner: &str, outer: &str) -> String {
    format!(
        "expected the type of the {index}'th block argument to match the type of the corresponding operand: '{inner}' vs '{outer}'"
    )
}
pub fn region_values_count(kind: &str, global: usize, local: usize) -> String {
    format!(
        "number of op {kind}s and region {kind}s must match. Op has {global} op {kind}s and {local} region {kind}s"
    )
}
pub fn manual_axis_after_free(
    kind: &str,
    value: usize,
    dim: usize,
    manual: &str,
    free: &str,
) -> String {
    format!(
        "{kind} sharding at index {value} must have all manual axes come before free axes in its dimension sharding at index {dim}. Saw manual axis {manual} after free axis {free}"
    )
}
pub fn manual_axes_not_dividing(kind: &str, size: i64, manual_size: i64) -> String {
    format!("{kind} dimension size {size} is not divisible by the manual axes size {manual_size}")
}
pub fn local_shape_mismatch(kind: &str, index: usize, expected: &str, actual: &str) -> String {
    format!(
        "{kind} shape, corresponding sharding, and region {kind} shape at index {index} must match. Expected local shape '{expected}', actual local shape '{actual}'"
    )
}
pub const MANUAL_COMMON_MESH: &str =
    "all in and out shardings must be bound to the same mesh or an empty mesh.";
pub fn unknown_manual_axis(name: &str) -> String {
    format!("unknown manual axis: \"{name}\"")
}

// ----- collectives -----

pub const COLLECTIVE_WITHOUT_SHARDING: &str = "collective on operand without sharding";
pub const RESULT_MESH_MISMATCH: &str = "result mesh does not match operand mesh";
pub fn operand_mesh_note(mesh: &str) -> String {
    format!("operand mesh: #sdy.mesh{mesh}")
}
pub fn result_operand_rank(result: usize, operand: usize) -> String {
    format!("result sharding has rank {result} but operand sharding has rank {operand}")
}
pub fn result_collective_rank(result: usize, collective: usize) -> String {
    format!("result sharding has rank {result} but collective axes has rank {collective}")
}
/// `kind`: gathering, shard-to-unreduce, all-to-all.
pub fn cannot_apply_axis(kind: &str, axis: &str, dim: usize) -> String {
    format!("can't apply {kind} axis {axis} to operand sharding on dimension {dim}")
}
pub fn result_dim_mismatch(expected: &str, dim: usize) -> String {
    format!("result sharding doesn't match expected sharding {expected} on dimension {dim}")
}
pub const EMPTY_PARAMETER_LIST: &str = "parameter list is empty";
/// `which`: source, target.
pub fn dim_out_of_range(which: &str, dim: i64, rank: usize) -> String {
    format!("{which} dimension {dim} is out of range [0, {rank})")
}
pub fn overlapping_all_to_all_dims(dim: i64) -> String {
    format!("overlapping source/target dimensions in all-to-all params: {dim}")
}
pub fn source_dims_not_sorted(dim: i64, prev: i64) -> String {
    format!("source dimensions are not sorted in ascending order: {dim} appears after {prev}")
}
pub const PERMUTE_DIFFERENT_AXES: &str = "result mesh has different axes than operand mesh";
pub const PERMUTE_SAME_DEVICE_IDS: &str =
    "result mesh name is different but same device ids as operand";
pub fn permute_sharded_size(dim: usize, result: i64, operand: i64) -> String {
    format!(
        "sharded size of result doesn't match operand on dimension {dim}: {result} != {operand}"
    )
}
pub const SHARDINGS_NOT_EQUIVALENT: &str = "operand and result shardings are not equivalent";
pub fn reduction_axis_overlaps_operand(axis: &str) -> String {
    format!("reduction axis {axis} overlaps with operand dimension sharding or replicated axes")
}
pub fn reduction_axis_overlaps_result_unreduced(axis: &str) -> String {
    format!("reduction axis {axis} overlaps with result unreduced axes")
}
pub const OUT_REDUCTION_MUST_BE_SUM: &str = "out_sharding reduction_op must be SUM";
pub const SHARDED_TO_UNREDUCED_AXES: &str =
    "out_unreduced_axes should be in_unreduced_axes + sharded_to_unreduced_axes";
pub const SAME_DIMENSION_SHARDINGS: &str =
    "input and output must share the same dimension shardings";
pub const EMPTY_R2U_AXES: &str = "r2u axes must not be empty";
pub fn r2u_axis_overlaps_dims(axis: &str) -> String {
    format!("r2u axis {axis} overlaps with operand dimension sharding")
}
pub fn r2u_axis_overlaps_unreduced(axis: &str) -> String {
    format!("r2u axis {axis} overlaps with operand unreduced axes")
}
pub const REPLICATED_TO_UNREDUCED_AXES: &str =
    "out_unreduced_axes should be in_unreduced_axes + r2u_axes";

// ----- op sharding rules -----

pub const EXPECTED_SHARDING_RULE: &str =
    "should have a sharding rule attribute of type OpShardingRuleAttr for attr named 'sdy.sharding_rule'";
/// `kind`: operand, result.
pub fn mappings_count(kind: &str, values: usize, mappings: usize) -> String {
    format!("number of {kind}s and mappings must match: {values} != {mappings}")
}
pub fn no_mappings(kind: &str) -> String {
    format!(
        "number of {kind}s mappings cannot be 0. Op sharding rules can only be defined on operations with at least one operand and result."
    )
}
pub fn rule_needs_static_tensor(ty: &str) -> String {
    format!("expected a ranked tensor with a static shape. type: '{ty}'")
}
pub fn mapping_rank(mapping: usize, rank: usize) -> String {
    format!("mapping rank must match: {mapping} != {rank}")
}
pub const EMPTY_DIM_MAPPING: &str = "dim mapping must have at least one factor";
pub fn factor_index_out_of_range(factor: i64, count: usize) -> String {
    format!("expecting factor indices to be within 0<=...<num_factors; received: {factor}, num_factors: {count}")
}
pub const REUSED_FACTOR: &str = "cannot reuse factors for the same tensor value";
pub const SIZE_ONE_FACTOR: &str =
    "dim mapping can't have a factor of size 1 if there are multiple factors";
pub fn unused_factor(symbol: &str, size: i64) -> String {
    format!("has factor {symbol}={size} that isn't used in operand and result mappings")
}
pub const SPECIAL_FACTORS_NOT_SORTED: &str = "indices of special factors must be sorted";
pub const SPECIAL_FACTORS_NOT_UNIQUE: &str = "indices of special factors must be unique";
pub const SPECIAL_FACTOR_NEGATIVE: &str = "index must be non-negative";
pub fn special_factor_too_large(count: usize, index: i64) -> String {
    format!("index must be less than {count}, got: {index}")
}
pub const SPECIAL_FACTOR_IN_TWO_SETS: &str =
    "a factor can only be in one of the reduction, need replication, or permutation factor sets";
pub const REDUCTION_FACTOR_IN_RESULTS: &str = "reduction factor cannot be in result mappings";

// ----- propagation edges -----

pub fn edges_negative_step(step: i64) -> String {
    format!("propagation edges have negative step index: {step}")
}
pub fn edges_duplicate_step(step: i64) -> String {
    format!("propagation edges have duplicate step index: {step}")
}
pub const EDGES_SOURCE_IS_TARGET: &str =
    "propagation edges have a source that is the same as a target";
pub fn edges_duplicate_target(step: i64, axis: &str) -> String {
    format!("propagation edges have duplicate targets for step index: {step} and axis: {axis}")
}
pub const EXPECTED_EDGES_ATTR: &str =
    "should have a propagation edges attribute of type PropagationEdgesAttr for attr named 'sdy.propagation_edges'";
pub const EXPECTED_EDGES_ARRAY: &str = "should have a propagation edges attribute of type ArrayAttr<PropagationEdgesAttr> for attr named 'sdy.result_propagation_edges' or 'sdy.block_arg_propagation_edges'";
pub const EDGES_WITHOUT_SHARDING: &str = "expected propagation edges attr to reference a sharding.";
pub const EDGES_WITHOUT_COMMON_MESH: &str = "expected a common mesh for propagation edges attr.";
pub const EDGES_AXIS_NOT_IN_MESH: &str = "expected axis ref to be in one of the meshes";
/// `kind`: operand, result.
pub fn edge_index_out_of_range(kind: &str, count: usize, index: i64) -> String {
    let article = if kind == "operand" { "an" } else { "a" };
    format!(
        "expected a value ref to have {article} {kind} index in range [0, {count}), got: {index}"
    )
}

// ----- hints (ours, not Shardy's) -----

/// `None`: a number past `i64` (the hover says `?` too).
fn count(n: Option<i64>) -> String {
    n.map_or("?".into(), |n| n.to_string())
}
pub fn padded_dimension(dim: usize, size: i64, shards: Option<i64>, padded: Option<i64>) -> String {
    let padding = count(padded.map(|p| p - size));
    let (shards, padded) = (count(shards), count(padded));
    format!(
        "dimension {dim} of size {size} is not divisible by its {shards} shards: it will be padded to {padded} ({padding} padding elements)"
    )
}
pub fn mesh_device_count_differs(
    name: &str,
    count: Option<i64>,
    other: &str,
    other_count: Option<i64>,
) -> String {
    let (count, other_count) = (self::count(count), self::count(other_count));
    format!(
        "mesh @{name} has {count} devices but mesh @{other} has {other_count}; meshes of one module are expected to have the same number of devices"
    )
}
pub fn manual_axes_unsorted(sorted: &str) -> String {
    format!("manual axes are not in mesh order; Shardy sorts them to {{{sorted}}}")
}
pub fn unused_mesh(name: &str) -> String {
    format!("mesh @{name} is never used")
}

// ----- sdy and GSPMD text inside string attributes (ours; MLIR's where noted) -----

/// MLIR's `parseAttribute` on text left after the attribute.
pub const ENCOUNTERED_UNEXPECTED_TOKEN: &str = "encountered unexpected token";
/// `what`: `a #sdy.sharding`, `a #sdy.sharding_per_value`, ...
pub fn string_attr_kind(key: &str, what: &str) -> String {
    format!("{key} should hold {what}")
}
pub fn gspmd_expected(what: &str) -> String {
    format!("expected {what} in the GSPMD sharding")
}
pub fn gspmd_tile_dim(dim: i64) -> String {
    format!("tile dimensions must be at least 1, got: {dim}")
}
pub fn gspmd_too_few_dims(dims: usize, subgroups: usize) -> String {
    format!("{subgroups} subgroup dimensions but only {dims} tile dimensions")
}
pub fn gspmd_device_count(ids: usize, tiles: i64) -> String {
    format!("the tile assignment lists {ids} devices but its dimensions hold {tiles}")
}
pub fn gspmd_duplicate_device(id: i64) -> String {
    format!("device {id} appears more than once in the tile assignment")
}
pub fn gspmd_iota_count(iota: i64, tiles: i64) -> String {
    format!("the iota device order has {iota} devices but the tile dimensions hold {tiles}")
}
pub fn gspmd_bad_transpose(rank: usize) -> String {
    format!("the transpose is not a permutation of the {rank} reshape dimensions")
}
pub fn gspmd_rank(tiled: usize, rank: usize) -> String {
    format!("the sharding tiles {tiled} dimensions but the value has rank {rank}")
}
pub fn gspmd_tuple_count(elements: usize, values: usize) -> String {
    format!("the tuple sharding has {elements} elements for {values} values")
}
pub fn gspmd_differs(exported: &str) -> String {
    format!("this GSPMD sharding does not match xla.sdy.sharding, which exports to {exported}")
}

// ----- sdy-verify-unreduced-axes -----

/// `names` are the mismatching axis names, sorted, joined with `, `; `place` is
/// `at call argument 0`, `at call result 0` or `at return value 0`.
pub fn unreduced_axes_mismatch(names: &str, place: &str) -> String {
    format!("has unreduced axes mismatch for '{names}' {place}.")
}
pub fn return_value_without_blessed_op(index: usize) -> String {
    format!(
        "at return value {index} without a blessed operation (e.g., sdy.reshard). This is an invalid transition from unreduced to reduced"
    )
}
pub const OPERAND_MUST_BE_SHARDED: &str = "operand must be sharded.";

// ----- -sdy-insert-explicit-reshards -----

pub const CONFLICTING_SINGLE_DEVICE_RESULTS: &str =
    "has conflicting single-device result shardings";

/// A function argument or result (`kind`) with a maximal-mesh sharding.
pub fn single_device_func_io(kind: &str, index: usize) -> String {
    format!("function {kind} {index} cannot have a single-device (maximal) sharding attribute")
}

// ----- StableHLO's traits, type inference and verifiers (`verify::stablehlo`) -----

pub const COMPATIBLE_ELEMENT_TYPES_OPERANDS_RESULTS: &str =
    "requires compatible element types for all operands and results";
pub const COMPATIBLE_ELEMENT_TYPES_OPERANDS: &str =
    "requires compatible element types for all operands";
pub const SAME_ELEMENT_TYPE_OPERANDS_RESULTS: &str =
    "requires the same element type for all operands and results";
pub const SAME_SHAPE_AND_BASE_TYPE: &str =
    "all non-scalar operands/results must have the same shape and base type";
pub fn compare_result_not_bool(ty: &str) -> String {
    format!("result #0 must be ranked tensor of bool values, but got {ty}")
}
pub fn broadcast_dims_size(size: usize, rank: usize) -> String {
    format!("broadcast_dimensions size ({size}) does not match operand rank ({rank})")
}
pub const BROADCAST_DIMS_DUPLICATES: &str = "broadcast_dimensions should not have duplicates";
pub fn broadcast_dims_invalid(dim: i64, rank: usize) -> String {
    format!("broadcast_dimensions contains invalid value {dim} for result with rank {rank}")
}
pub fn broadcast_operand_dim(i: usize, size: i64, dim: i64, result_size: i64) -> String {
    format!(
        "size of operand dimension {i} ({size}) is not equal to 1 or size of result dimension {dim} ({result_size})"
    )
}
pub fn transpose_rank(rank: usize, size: usize) -> String {
    format!("TransposeOp operand rank {rank} does not match permutation size {size}")
}
pub fn not_a_permutation(range: &str, got: &str) -> String {
    format!("attribute permutation must be a permutation of [{range}] but got {got}")
}
pub fn reshape_elements(result: i64, operand: i64) -> String {
    format!(
        "number of output elements ({result}) doesn't match expected number of elements ({operand})"
    )
}
pub const CONCAT_RANK_0: &str = "rank-0 values cannot be concatenated";
pub fn concat_dim_out_of_bounds(dim: i64, rank: usize) -> String {
    format!("dimension {dim} is out-of-bounds for input rank {rank}")
}
pub fn concat_rank_mismatch(i: usize) -> String {
    format!("operands (0) and ({i}) do not match rank")
}
pub fn concat_shape_mismatch(i: usize, d: usize, first: &str, other: &str) -> String {
    format!(
        "shapes of operand (0) and ({i}) are not compatible at non-concat index {d}: ({first}) != ({other})"
    )
}
pub fn slice_start_count(count: usize, rank: usize) -> String {
    format!(
        "the number of elements in start_indices ({count}) does not match the rank of the operand ({rank})"
    )
}
pub fn slice_limit_too_large(limit: i64, size: i64, dim: usize) -> String {
    format!("limit index {limit} is larger than dimension size {size} in dimension {dim}")
}
pub const DOT_BATCHING_COUNT: &str =
    "lhs and rhs should have the same number of batching dimensions";
pub const DOT_CONTRACTING_COUNT: &str =
    "lhs and rhs should have the same number of contracting dimensions";
pub fn dot_duplicated_dim(side: &str, dim: i64) -> String {
    format!(
        "has duplicated dimension from {side}_batching_dimensions and {side}_contracting_dimensions: {dim}"
    )
}
pub fn dot_dim_out_of_range(name: &str, dim: i64, rank: usize) -> String {
    format!("{name} value: {dim} is out of range: [0, {rank})")
}
pub const DOT_BATCHING_SIZES: &str = "batching dimension sizes must match for lhs/rhs";
pub const DOT_CONTRACTING_SIZES: &str = "contracting dimension sizes must match for lhs/rhs";
pub const DOT_RANKS: &str = "expected both lhs/rhs ranks to be either 1 or 2";
pub fn inferred_shape_incompatible(shape: &str, ty: &str) -> String {
    format!("inferred shape '[{shape}]' is incompatible with return type of operation {ty}")
}
pub fn pad_low_length(len: usize, rank: usize) -> String {
    format!("edge_padding_low length ({len}) must match operand rank ({rank})")
}
pub fn reduce_dim_out_of_bounds(dim: i64, rank: usize) -> String {
    format!("Out-of-bounds dimension {dim}, expected to be in range [0, {rank})")
}
pub fn reduce_duplicate_dim(dim: i64) -> String {
    format!("Duplicate reduction dimension: {dim}")
}
pub fn reduce_init_shape(region: &str, init: &str) -> String {
    format!(
        "The shape of reduction-region's result type at index 0 differs from the op's corresponding init-value type: '{region}' vs {init}"
    )
}
pub fn reduce_not_promotable(region: &str, init: &str) -> String {
    format!(
        "The element-type of reduction-region's result type at index 0 is expected to be promotable from the op's corresponding init-value element-type: '{region}' vs '{init}'"
    )
}
pub const FLOAT_OR_COMPLEX_TENSOR: &str = "4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized values";
pub const INT_FLOAT_OR_COMPLEX_TENSOR: &str = "2/4/8/16/32/64-bit integer or 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized values";
pub const SIGNLESS_INT_FLOAT_OR_COMPLEX_TENSOR: &str = "2/4/8/16/32/64-bit signless integer or 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized values";
pub const BOOL_OR_INT_TENSOR: &str = "bool or 2/4/8/16/32/64-bit integer values";
pub const INT_TENSOR: &str = "2/4/8/16/32/64-bit integer values";
pub const FLOAT_TENSOR: &str = "4/6/8/16/32/64-bit float or per-tensor integer quantized values";
pub const FLOAT_OR_COMPLEX_NOT_QUANTIZED_TENSOR: &str =
    "4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements values";
pub fn bitcast_real_complex(operand: &str, result: &str) -> String {
    format!("cannot convert between real and complex types, but got: {operand} and {result}")
}
pub fn bitcast_rank(smaller: usize, larger: usize) -> String {
    format!(
        "rank of smaller element type ({smaller}) should be 1 more than rank of larger element type ({larger}), but {smaller} != {larger} + 1."
    )
}
pub fn bitcast_widths(operand: &str, result: &str, small: i64, last: i64, big: i64) -> String {
    format!(
        "requires compatible bit widths. Got: {operand} and {result}, but {small} * {last} != {big}."
    )
}
pub fn bitcast_shapes(operand: &str, result: &str) -> String {
    format!(
        "operand and result shapes must match except for the innermost dimension of the shape with the smaller element type. Got: {operand} and {result}."
    )
}
pub fn operand_must_be(i: usize, what: &str, ty: &str) -> String {
    format!("operand #{i} must be ranked tensor of {what}, but got {ty}")
}
pub fn pad_negative_interior(v: i64) -> String {
    format!("Interior padding cannot be negative: {v}")
}
pub const PAD_SIZES_DIFFER: &str = "failed to verify that all of {edge_padding_low, edge_padding_high, interior_padding} have same size";
pub const IOTA_SCALAR: &str = "does not support scalars.";
pub const IOTA_DIM_TOO_LARGE: &str = "iota dimension cannot go beyond the output rank.";
pub fn dynamic_slice_rank(indices: usize, rank: usize) -> String {
    format!("has mismatched number of start indices ({indices}) and the rank of operand ({rank})")
}
pub const DYNAMIC_SLICE_INDEX_TYPES: &str = "start indices must have same element type";
pub fn start_index_not_scalar_int(i: usize, ty: &str) -> String {
    format!("operand #{i} must be variadic of 0D tensor of 2/4/8/16/32/64-bit integer values, but got {ty}")
}
pub fn dynamic_slice_count(sizes: usize, starts: usize) -> String {
    format!("has mismatched number of slice sizes ({sizes}) and number of start indices ({starts})")
}
pub fn dynamic_slice_too_large(size: i64, dim_size: i64, i: usize) -> String {
    format!(
        "has slice size {size} greater than dimension size {dim_size} in dimension {i} of operand"
    )
}
pub fn cholesky_minor_dims(shape: &str) -> String {
    format!("minor dimensions of 'a' must have equal size, got shape {shape}.")
}
pub fn reverse_not_unique(dims: &str) -> String {
    format!("dimensions should be unique. Got: {dims}")
}
pub fn reverse_negative(dim: i64) -> String {
    format!("all dimensions should be non-negative. Got dimension: {dim}.")
}
pub fn reverse_out_of_range(rank: usize, dim: i64) -> String {
    format!("all dimensions should be between [0, {rank}). Got dimension: {dim}.")
}
pub fn result_must_be_ui32(ty: &str) -> String {
    format!("result #0 must be ranked tensor of 32-bit unsigned integer values, but got {ty}")
}

// ----- -sdy-convert-global-to-local -----

pub const G2L_REPLICAS_AND_PARTITIONS: &str = "Shardy partitioner convert_global_to_local does not support both replica_count > 1 and partition_count > 1 yet.";
pub const G2L_NON_DIVISIBLE: &str = "Failed to compute local type due to non-divisible sharding";
pub const G2L_NO_MESH: &str = "failed to resolve mesh";
pub const G2L_NO_AXES: &str = "failed to resolve axes";
pub const G2L_ALL_TO_ALL_NOT_DIVISIBLE: &str = "dimension not divisible by num devices per group";
pub const G2L_ALL_TO_ALL_PARAM_NOT_DIVISIBLE: &str =
    "dynamic shape or dimension not divisible by num devices per param";
pub const G2L_SCATTER_NOT_DIVISIBLE: &str = "dimension not divisible by scattering factor";
/// A Shardy check (it aborts there): meshes of one collective permute differ in size.
pub const G2L_PERMUTE_MESH_SIZES: &str =
    "collective-permute between meshes of different sizes is not supported.";
/// A Shardy check: a gather slices part of a sharded dimension.
pub const G2L_GATHER_PARTIAL_SLICE: &str =
    "gather slice of a sharded dimension must be a full slice divisible by its shards";
/// `emitError` (not an op error) of the scatter pattern.
pub const G2L_SCATTER_NO_MESH: &str = "failed to resolve mesh.";
pub const G2L_SCATTER_NO_IDENTITY: &str = "failed to get scatter reduction identity.";
pub fn scatter_unindexed_inserted_dim(dim: usize) -> String {
    format!("sharding operand dimension {dim} that is not indexed but in inserted window dimension is not supported.")
}
/// MLIR's dialect conversion, after a pattern failed on an op it must convert.
pub fn failed_to_legalize(op: &str) -> String {
    format!("failed to legalize operation '{op}' that was explicitly marked illegal")
}
pub fn concat_on_sharded_dim(dim: i64) -> String {
    format!("dimension {dim} is sharded but the concatenation is on this dimension.")
}
pub fn concat_operand_sharded(index: usize, dim: i64) -> String {
    format!("operand {index} is sharded on concatenation dimension {dim}. This is not supported.")
}
/// `axes_in`/`axes_out`: `["x", "y":(1)2]`.
pub fn mismatched_sharding_axes(dim: usize, axes_in: &str, axes_out: &str) -> String {
    format!("dimension {dim} has mismatched sharding axes ({axes_in} vs {axes_out}). This requires a reshard which should have been handled by previous passes.")
}
pub fn slice_needs_communication(dim: usize) -> String {
    format!("dimension {dim} is sharded but the slice is not a full slice and requires device communication.")
}
pub fn not_pass_through(op: &str, dim: usize) -> String {
    format!("In op {op} dimension {dim} is sharded but is not a pass-through dimension.")
}
