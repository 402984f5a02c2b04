//! Operation names MLIR's parser knows: an op of an unloaded dialect, or an op its
//! dialect does not define, is a parse error. The dialects and their ops are those of
//! the MLIR context JAX builds (jaxlib, which the project's oracle runs); ops are listed
//! for the dialects sdy files use, the others' op names are not checked.

use super::messages as msg;
use crate::diag::{Diagnostic, DiagnosticCode, Note, Origin};
use crate::model::{Model, OpInfo};
use sdy_syntax::tree::{Custom, StmtKind};
use sdy_syntax::Span;

/// The dialects of the context, in MLIR's order (`*`: loaded but not registered).
const DIALECTS: &[&str] = &[
    "affine",
    "arith",
    "builtin",
    "cf",
    "chlo",
    "complex",
    "func",
    "gpu",
    "llvm",
    "math",
    "memref",
    "mhlo",
    "mpmd",
    "nvgpu",
    "nvvm",
    "scf",
    "sdy",
    "shape",
    "stablehlo",
    "tensor",
    "ub",
    "vector",
    "vhlo",
];

/// Dialects whose every op is listed in [`OPS`].
const LISTED: &[&str] = &["builtin", "chlo", "func", "mhlo", "sdy", "stablehlo"];

/// The registered ops of the [`LISTED`] dialects, sorted.
const OPS: &[&str] = &[
    "builtin.module",
    "builtin.unrealized_conversion_cast",
    "chlo._asin_acos_kernel",
    "chlo.acos",
    "chlo.acosh",
    "chlo.asin",
    "chlo.asinh",
    "chlo.atan",
    "chlo.atanh",
    "chlo.bessel_i1e",
    "chlo.broadcast_add",
    "chlo.broadcast_and",
    "chlo.broadcast_atan2",
    "chlo.broadcast_compare",
    "chlo.broadcast_complex",
    "chlo.broadcast_divide",
    "chlo.broadcast_maximum",
    "chlo.broadcast_minimum",
    "chlo.broadcast_multiply",
    "chlo.broadcast_next_after",
    "chlo.broadcast_or",
    "chlo.broadcast_polygamma",
    "chlo.broadcast_power",
    "chlo.broadcast_remainder",
    "chlo.broadcast_select",
    "chlo.broadcast_shift_left",
    "chlo.broadcast_shift_right_arithmetic",
    "chlo.broadcast_shift_right_logical",
    "chlo.broadcast_subtract",
    "chlo.broadcast_xor",
    "chlo.broadcast_zeta",
    "chlo.conj",
    "chlo.constant",
    "chlo.constant_like",
    "chlo.cosh",
    "chlo.digamma",
    "chlo.erf",
    "chlo.erf_inv",
    "chlo.erfc",
    "chlo.is_inf",
    "chlo.is_neg_inf",
    "chlo.is_pos_inf",
    "chlo.lgamma",
    "chlo.mulhi",
    "chlo.next_after",
    "chlo.polygamma",
    "chlo.ragged_dot",
    "chlo.scan",
    "chlo.sinh",
    "chlo.square",
    "chlo.tan",
    "chlo.top_k",
    "chlo.zeta",
    "func.call",
    "func.call_indirect",
    "func.constant",
    "func.func",
    "func.return",
    "mhlo.abs",
    "mhlo.acos",
    "mhlo.acosh",
    "mhlo.add",
    "mhlo.add_dependency",
    "mhlo.after_all",
    "mhlo.all_gather",
    "mhlo.all_reduce",
    "mhlo.all_to_all",
    "mhlo.and",
    "mhlo.asin",
    "mhlo.asinh",
    "mhlo.async_done",
    "mhlo.async_start",
    "mhlo.async_update",
    "mhlo.atan2",
    "mhlo.atanh",
    "mhlo.batch_norm_grad",
    "mhlo.batch_norm_inference",
    "mhlo.batch_norm_training",
    "mhlo.bitcast",
    "mhlo.bitcast_convert",
    "mhlo.broadcast",
    "mhlo.broadcast_in_dim",
    "mhlo.case",
    "mhlo.cbrt",
    "mhlo.ceil",
    "mhlo.cholesky",
    "mhlo.clamp",
    "mhlo.collective_broadcast",
    "mhlo.collective_permute",
    "mhlo.compare",
    "mhlo.complex",
    "mhlo.composite",
    "mhlo.concatenate",
    "mhlo.constant",
    "mhlo.convert",
    "mhlo.convolution",
    "mhlo.copy",
    "mhlo.cosh",
    "mhlo.cosine",
    "mhlo.count_leading_zeros",
    "mhlo.create_token",
    "mhlo.custom_call",
    "mhlo.divide",
    "mhlo.domain",
    "mhlo.dot",
    "mhlo.dot_general",
    "mhlo.dynamic_broadcast_in_dim",
    "mhlo.dynamic_conv",
    "mhlo.dynamic_gather",
    "mhlo.dynamic_iota",
    "mhlo.dynamic_pad",
    "mhlo.dynamic_reshape",
    "mhlo.dynamic_slice",
    "mhlo.dynamic_update_slice",
    "mhlo.einsum",
    "mhlo.erf",
    "mhlo.exponential",
    "mhlo.exponential_minus_one",
    "mhlo.fft",
    "mhlo.floor",
    "mhlo.fusion",
    "mhlo.gather",
    "mhlo.get_dimension_size",
    "mhlo.get_tuple_element",
    "mhlo.if",
    "mhlo.imag",
    "mhlo.infeed",
    "mhlo.iota",
    "mhlo.is_finite",
    "mhlo.log",
    "mhlo.log_plus_one",
    "mhlo.logistic",
    "mhlo.map",
    "mhlo.maximum",
    "mhlo.minimum",
    "mhlo.minimum_broadcast_shapes",
    "mhlo.mulhi",
    "mhlo.multiply",
    "mhlo.negate",
    "mhlo.not",
    "mhlo.optimization_barrier",
    "mhlo.or",
    "mhlo.outfeed",
    "mhlo.pad",
    "mhlo.partition_id",
    "mhlo.popcnt",
    "mhlo.power",
    "mhlo.ragged_dot",
    "mhlo.real",
    "mhlo.real_dynamic_slice",
    "mhlo.recv",
    "mhlo.reduce",
    "mhlo.reduce_precision",
    "mhlo.reduce_scatter",
    "mhlo.reduce_window",
    "mhlo.remainder",
    "mhlo.replica_id",
    "mhlo.reshape",
    "mhlo.return",
    "mhlo.reverse",
    "mhlo.rng",
    "mhlo.rng_bit_generator",
    "mhlo.round_nearest_afz",
    "mhlo.round_nearest_even",
    "mhlo.rsqrt",
    "mhlo.scan",
    "mhlo.scatter",
    "mhlo.select",
    "mhlo.select_and_scatter",
    "mhlo.send",
    "mhlo.set_dimension_size",
    "mhlo.shift_left",
    "mhlo.shift_right_arithmetic",
    "mhlo.shift_right_logical",
    "mhlo.sign",
    "mhlo.sine",
    "mhlo.sinh",
    "mhlo.slice",
    "mhlo.sort",
    "mhlo.sqrt",
    "mhlo.stochastic_convert",
    "mhlo.subtract",
    "mhlo.tan",
    "mhlo.tanh",
    "mhlo.topk",
    "mhlo.torch_index_select",
    "mhlo.trace",
    "mhlo.transpose",
    "mhlo.triangular_solve",
    "mhlo.tuple",
    "mhlo.uniform_dequantize",
    "mhlo.uniform_quantize",
    "mhlo.while",
    "mhlo.xor",
    "sdy.all_gather",
    "sdy.all_reduce",
    "sdy.all_slice",
    "sdy.all_to_all",
    "sdy.collective_permute",
    "sdy.constant",
    "sdy.data_flow_edge",
    "sdy.func_data_flow_edge",
    "sdy.manual_computation",
    "sdy.mesh",
    "sdy.named_computation",
    "sdy.propagation_barrier",
    "sdy.reduce_scatter",
    "sdy.replicated_to_unreduced",
    "sdy.reshard",
    "sdy.return",
    "sdy.sharded_to_unreduced",
    "sdy.sharding_constraint",
    "sdy.sharding_group",
    "stablehlo.abs",
    "stablehlo.add",
    "stablehlo.after_all",
    "stablehlo.all_gather",
    "stablehlo.all_reduce",
    "stablehlo.all_to_all",
    "stablehlo.and",
    "stablehlo.async_done",
    "stablehlo.async_start",
    "stablehlo.atan2",
    "stablehlo.batch_norm_grad",
    "stablehlo.batch_norm_inference",
    "stablehlo.batch_norm_training",
    "stablehlo.bitcast_convert",
    "stablehlo.broadcast",
    "stablehlo.broadcast_in_dim",
    "stablehlo.case",
    "stablehlo.cbrt",
    "stablehlo.ceil",
    "stablehlo.cholesky",
    "stablehlo.clamp",
    "stablehlo.collective_broadcast",
    "stablehlo.collective_permute",
    "stablehlo.compare",
    "stablehlo.complex",
    "stablehlo.composite",
    "stablehlo.concatenate",
    "stablehlo.constant",
    "stablehlo.convert",
    "stablehlo.convolution",
    "stablehlo.cosine",
    "stablehlo.count_leading_zeros",
    "stablehlo.create_token",
    "stablehlo.custom_call",
    "stablehlo.divide",
    "stablehlo.dot",
    "stablehlo.dot_general",
    "stablehlo.dynamic_broadcast_in_dim",
    "stablehlo.dynamic_conv",
    "stablehlo.dynamic_gather",
    "stablehlo.dynamic_iota",
    "stablehlo.dynamic_pad",
    "stablehlo.dynamic_reshape",
    "stablehlo.dynamic_slice",
    "stablehlo.dynamic_update_slice",
    "stablehlo.einsum",
    "stablehlo.exponential",
    "stablehlo.exponential_minus_one",
    "stablehlo.fft",
    "stablehlo.floor",
    "stablehlo.gather",
    "stablehlo.get_dimension_size",
    "stablehlo.get_tuple_element",
    "stablehlo.if",
    "stablehlo.imag",
    "stablehlo.infeed",
    "stablehlo.iota",
    "stablehlo.is_finite",
    "stablehlo.log",
    "stablehlo.log_plus_one",
    "stablehlo.logistic",
    "stablehlo.map",
    "stablehlo.maximum",
    "stablehlo.minimum",
    "stablehlo.multiply",
    "stablehlo.negate",
    "stablehlo.not",
    "stablehlo.optimization_barrier",
    "stablehlo.or",
    "stablehlo.outfeed",
    "stablehlo.pad",
    "stablehlo.partition_id",
    "stablehlo.popcnt",
    "stablehlo.power",
    "stablehlo.real",
    "stablehlo.real_dynamic_slice",
    "stablehlo.recv",
    "stablehlo.reduce",
    "stablehlo.reduce_precision",
    "stablehlo.reduce_scatter",
    "stablehlo.reduce_window",
    "stablehlo.remainder",
    "stablehlo.replica_id",
    "stablehlo.reshape",
    "stablehlo.return",
    "stablehlo.reverse",
    "stablehlo.rng",
    "stablehlo.rng_bit_generator",
    "stablehlo.round_nearest_afz",
    "stablehlo.round_nearest_even",
    "stablehlo.rsqrt",
    "stablehlo.scatter",
    "stablehlo.select",
    "stablehlo.select_and_scatter",
    "stablehlo.send",
    "stablehlo.set_dimension_size",
    "stablehlo.shift_left",
    "stablehlo.shift_right_arithmetic",
    "stablehlo.shift_right_logical",
    "stablehlo.sign",
    "stablehlo.sine",
    "stablehlo.slice",
    "stablehlo.sort",
    "stablehlo.sqrt",
    "stablehlo.subtract",
    "stablehlo.tan",
    "stablehlo.tanh",
    "stablehlo.torch_index_select",
    "stablehlo.transpose",
    "stablehlo.triangular_solve",
    "stablehlo.tuple",
    "stablehlo.unary_einsum",
    "stablehlo.uniform_dequantize",
    "stablehlo.uniform_quantize",
    "stablehlo.while",
    "stablehlo.xor",
];

fn is_op(name: &str) -> bool {
    OPS.binary_search(&name).is_ok()
}

/// MLIR's default dialect for unprefixed custom op names inside `op`'s parent: `func`
/// in a function body, `builtin` at the top level and in a module, none elsewhere (an op
/// with regions that does not name a default dialect).
fn default_dialect(model: &Model, op: &OpInfo) -> &'static str {
    let Some(parent) = op.parent else { return "builtin" };
    let parent = model.op(parent);
    if parent.node.generic {
        // The generic form keeps the enclosing default.
        return default_dialect(model, parent);
    }
    match parent.node.custom {
        Custom::Func(_) => "func",
        _ if parent.name() == "builtin.module" => "builtin",
        _ => "",
    }
}

/// The parse error for `op`'s name, if MLIR's parser would not know it.
pub fn check(model: &Model, op: &OpInfo, out: &mut Vec<Diagnostic>) {
    if op.node.kind != StmtKind::Op {
        return;
    }
    let written = &*op.node.name.text;
    if written.is_empty() {
        return;
    }
    let at = op.name_span();
    let (dialect, has_dot) = match written.split_once('.') {
        Some((d, _)) => (d, true),
        None => ("", false),
    };
    let message = if op.node.generic {
        if !DIALECTS.contains(&dialect) || !has_dot {
            // MLIR reports it after the quoted name.
            let d =
                Diagnostic::error(Span::empty(at.end), msg::UNREGISTERED_DIALECT_GENERIC, parse())
                    .with_code(DiagnosticCode::OpName);
            out.push(d);
            return;
        }
        if !LISTED.contains(&dialect) || is_op(written) {
            return;
        }
        msg::unregistered_generic_op(written, dialect)
    } else if has_dot {
        if !DIALECTS.contains(&dialect) {
            return out.push(with_dialects_note(
                Diagnostic::error(at, msg::dialect_not_found(dialect, written), parse())
                    .with_code(DiagnosticCode::OpName),
                at,
            ));
        }
        if !LISTED.contains(&dialect) || is_op(written) {
            return;
        }
        msg::unknown_custom_op(written)
    } else {
        let default = default_dialect(model, op);
        if default.is_empty() {
            return out.push(with_dialects_note(
                Diagnostic::error(at, msg::dialect_not_found_tried(written), parse())
                    .with_code(DiagnosticCode::OpName),
                at,
            ));
        }
        let full = format!("{default}.{written}");
        if !LISTED.contains(&default) || is_op(&full) {
            return;
        }
        msg::unknown_custom_op_tried(written, &full)
    };
    out.push(Diagnostic::error(at, message, parse()).with_code(DiagnosticCode::OpName));
}

fn parse() -> Origin {
    Origin::Parse { first_of_failure: true }
}

fn with_dialects_note(mut d: Diagnostic, at: Span) -> Diagnostic {
    d.notes.push(Note { span: at, message: msg::available_dialects(DIALECTS) });
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_cover_the_listed_dialects() {
        assert!(OPS.windows(2).all(|w| w[0] < w[1]));
        for d in LISTED {
            assert!(DIALECTS.contains(d));
            assert!(OPS.iter().any(|o| o.starts_with(&format!("{d}."))), "{d}");
        }
        for op in ["stablehlo.add", "sdy.manual_computation", "func.return", "builtin.module"] {
            assert!(is_op(op), "{op}");
        }
        assert!(!is_op("stablehlo.foo"));
    }
}
