//! Ops that move or reshape dimensions: broadcast_in_dim, transpose, reshape,
//! concatenate, slice.

use super::{
    inference, inferred_mismatch, list, plain, same_elements, tensor_text, Dims, Operands,
};
use crate::verify::messages as msg;
use crate::verify::Violation;
use sdy_syntax::Span;

pub(super) fn broadcast_in_dim(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(1, 1) else { return Ok(()) };
    let (operand, result) = (&ins[0], &outs[0]);
    same_elements(&[operand, result], msg::COMPATIBLE_ELEMENT_TYPES_OPERANDS_RESULTS)?;
    let Some(dims) = op.ints(&["broadcast_dimensions", "dims"]) else { return Ok(()) };
    if dims.len() != operand.rank() {
        return Err(plain(msg::broadcast_dims_size(dims.len(), operand.rank())));
    }
    let mut seen = dims.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != dims.len() {
        return Err(plain(msg::BROADCAST_DIMS_DUPLICATES.to_string()));
    }
    for (i, &d) in dims.iter().enumerate() {
        if d < 0 || d >= result.rank() as i64 {
            return Err(plain(msg::broadcast_dims_invalid(d, result.rank())));
        }
        let (size, result_size) = (operand.dims[i], result.dims[d as usize]);
        if size != 1 && size != result_size {
            return Err(plain(msg::broadcast_operand_dim(i, size, d, result_size)));
        }
    }
    Ok(())
}

pub(super) fn transpose(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(1, 1) else { return Ok(()) };
    let (operand, result) = (&ins[0], &outs[0]);
    same_elements(&[operand, result], msg::COMPATIBLE_ELEMENT_TYPES_OPERANDS_RESULTS)?;
    let Some(perm) = op.ints(&["permutation", "dims"]) else { return Ok(()) };
    if perm.len() != operand.rank() {
        return Err(inference(msg::transpose_rank(operand.rank(), perm.len())));
    }
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if sorted.iter().enumerate().any(|(i, &d)| d != i as i64) {
        let range: Vec<i64> = (0..operand.rank() as i64).collect();
        return Err(inference(msg::not_a_permutation(&list(&range), &list(&perm))));
    }
    let dims: Dims = perm.iter().map(|&d| operand.dims[d as usize]).collect();
    if dims != result.dims {
        return Err(inferred_mismatch(&tensor_text(&dims, operand.elem), result));
    }
    Ok(())
}

pub(super) fn reshape(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(1, 1) else { return Ok(()) };
    let (operand, result) = (&ins[0], &outs[0]);
    same_elements(&[operand, result], msg::COMPATIBLE_ELEMENT_TYPES_OPERANDS_RESULTS)?;
    let count = |dims: &[i64]| dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
    match (count(&result.dims), count(&operand.dims)) {
        (Some(r), Some(o)) if r != o => Err(plain(msg::reshape_elements(r, o))),
        _ => Ok(()),
    }
}

pub(super) fn concatenate(op: &Operands) -> Result<(), Violation> {
    let Some((ins, result)) = op.variadic() else { return Ok(()) };
    let all: Vec<_> = ins.iter().chain(std::iter::once(&result)).collect();
    same_elements(&all, msg::SAME_ELEMENT_TYPE_OPERANDS_RESULTS)?;
    let Some(first) = ins.first() else { return Ok(()) };
    let Some(dim) = op.attrs().dimension() else { return Ok(()) };
    let rank = first.rank();
    if rank == 0 {
        return Err(inference(msg::CONCAT_RANK_0.to_string()));
    }
    if dim < 0 {
        return Ok(()); // an attribute constraint, reported elsewhere by MLIR
    }
    if dim >= rank as i64 {
        return Err(inference(msg::concat_dim_out_of_bounds(dim, rank)));
    }
    let dim = dim as usize;
    for (i, t) in ins.iter().enumerate() {
        if t.rank() != rank {
            return Err(inference(msg::concat_rank_mismatch(i)));
        }
        if let Some(d) = (0..rank).find(|&d| d != dim && t.dims[d] != first.dims[d]) {
            return Err(inference(msg::concat_shape_mismatch(
                i,
                d,
                &list(&first.dims),
                &list(&t.dims),
            )));
        }
    }
    let mut dims = first.dims.clone();
    dims[dim] = ins.iter().map(|t| t.dims[dim]).sum();
    if dims != result.dims {
        return Err(inferred_mismatch(&tensor_text(&dims, first.elem), &result));
    }
    Ok(())
}

pub(super) fn slice(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(1, 1) else { return Ok(()) };
    let (operand, result) = (&ins[0], &outs[0]);
    same_elements(&[operand, result], msg::SAME_ELEMENT_TYPE_OPERANDS_RESULTS)?;
    let ranges = if op.generic() {
        let attrs = op.attrs();
        let (Some(start), Some(limit), Some(strides)) = (
            attrs.ints(&["start_indices"]),
            attrs.ints(&["limit_indices"]),
            attrs.ints(&["strides"]),
        ) else {
            return Ok(());
        };
        if limit.len() != start.len() || strides.len() != start.len() {
            return Ok(());
        }
        (0..start.len()).map(|i| (start[i], limit[i], strides[i])).collect()
    } else {
        match crate::shape::slice_ranges(op.text_after_name()) {
            Some(r) => r,
            None => return Ok(()),
        }
    };
    if ranges.len() != operand.rank() {
        return Err(inference(msg::slice_start_count(ranges.len(), operand.rank())));
    }
    let mut dims = Dims::new();
    for (i, &(start, limit, stride)) in ranges.iter().enumerate() {
        if start < 0 || stride <= 0 {
            return Ok(()); // further checks of MLIR's, not modelled
        }
        if limit > operand.dims[i] {
            return Err(inference(msg::slice_limit_too_large(limit, operand.dims[i], i)));
        }
        if start > limit {
            return Ok(());
        }
        dims.push((limit - start + stride - 1) / stride);
    }
    if dims != result.dims {
        return Err(inferred_mismatch(&tensor_text(&dims, operand.elem), result));
    }
    Ok(())
}

pub(super) fn pad(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(2, 1) else { return Ok(()) };
    let (operand, result) = (&ins[0], &outs[0]);
    same_elements(&[operand, &ins[1], result], msg::SAME_ELEMENT_TYPE_OPERANDS_RESULTS)?;
    let (Some(low), Some(high), Some(interior)) = (
        op.ints(&["low", "edge_padding_low"]),
        op.ints(&["high", "edge_padding_high"]),
        op.ints(&["interior", "interior_padding"]),
    ) else {
        return Ok(());
    };
    if high.len() != low.len() || interior.len() != low.len() {
        return Err(Violation::new(msg::PAD_SIZES_DIFFER.into(), sdy_syntax::Span::default()));
    }
    if low.len() != operand.rank() {
        return Err(inference(msg::pad_low_length(low.len(), operand.rank())));
    }
    if high.len() != low.len() || interior.len() != low.len() {
        return Ok(());
    }
    let mut dims = Dims::new();
    for (i, &d) in operand.dims.iter().enumerate() {
        if interior[i] < 0 {
            return Err(inference(msg::pad_negative_interior(interior[i])));
        }
        let size = d + low[i] + high[i] + (d - 1).max(0) * interior[i];
        if size < 0 {
            return Ok(()); // further checks of MLIR's, not modelled
        }
        dims.push(size);
    }
    if dims != result.dims {
        return Err(inferred_mismatch(&tensor_text(&dims, operand.elem), result));
    }
    Ok(())
}

/// A reduce of one input with one init value: dimensions in range and distinct, the
/// result the input without them (of the init value's element type).
pub(super) fn reduce(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(2, 1) else { return Ok(()) };
    let (input, init, result) = (&ins[0], &ins[1], &outs[0]);
    let Some(dims) = op.ints(&["dimensions", "dims"]) else { return Ok(()) };
    let mut seen = Vec::new();
    for &d in &dims {
        if d < 0 || d >= input.rank() as i64 {
            return Err(plain(msg::reduce_dim_out_of_bounds(d, input.rank())));
        }
        if seen.contains(&d) {
            return Err(plain(msg::reduce_duplicate_dim(d)));
        }
        seen.push(d);
    }
    // The body's values are scalars of the input's element type (the `applies` form
    // builds it so): the init value must have its shape and promote to it.
    if init.rank() != 0 {
        let compact = !op.generic() && op.text_after_name().contains(" applies ");
        if !compact {
            return Ok(()); // the body's own types, not modelled
        }
        let region = tensor_text(&[], input.elem);
        return Err(plain(msg::reduce_init_shape(&region, &init.quoted())));
    }
    if super::is_float(input.elem) != super::is_float(init.elem) {
        return Err(plain(msg::reduce_not_promotable(
            &tensor_text(&[], input.elem),
            &tensor_text(&[], init.elem),
        )));
    }
    let kept: Dims =
        (0..input.rank()).filter(|&i| !dims.contains(&(i as i64))).map(|i| input.dims[i]).collect();
    if kept != result.dims || input.elem != result.elem {
        return Err(inferred_mismatch(&tensor_text(&kept, input.elem), result));
    }
    Ok(())
}

/// cholesky's result has its operand's type.
pub(super) fn cholesky(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(1, 1) else { return Ok(()) };
    let a = &ins[0].dims;
    if a.len() >= 2 && a[a.len() - 1] != a[a.len() - 2] {
        return Err(inference(msg::cholesky_minor_dims(&list(a))));
    }
    if ins[0].dims != outs[0].dims || ins[0].elem != outs[0].elem {
        return Err(inferred_mismatch(&tensor_text(&ins[0].dims, ins[0].elem), &outs[0]));
    }
    Ok(())
}

pub(super) fn iota(op: &Operands) -> Result<(), Violation> {
    let Some(result) = op.result_written().or_else(|| op.iota_type()) else { return Ok(()) };
    if result.rank() == 0 {
        return Err(plain(msg::IOTA_SCALAR.into()));
    }
    match op.attrs().int(&["iota_dimension", "dim"]) {
        Some(d) if d >= result.rank() as i64 => Err(plain(msg::IOTA_DIM_TOO_LARGE.into())),
        _ => Ok(()),
    }
}

/// dynamic_slice: a size per start index, each within its dimension, the result of
/// those sizes.
pub(super) fn dynamic_slice(op: &Operands) -> Result<(), Violation> {
    let Some((ins, result)) = op.variadic() else { return Ok(()) };
    let Some(operand) = ins.first() else { return Ok(()) };
    let Some(sizes) = op.ints(&["slice_sizes", "sizes"]) else { return Ok(()) };
    let indices = &ins[1..];
    // The operand constraint (ODS, before inference): scalar integer start indices.
    if let Some((i, t)) = indices
        .iter()
        .enumerate()
        .find(|(_, t)| t.rank() != 0 || !super::is_int(t.elem) || t.elem == "i1")
    {
        return Err(Violation::new(
            msg::start_index_not_scalar_int(i + 1, &t.quoted()),
            Span::default(),
        ));
    }
    if sizes.len() != indices.len() {
        return Err(inference(msg::dynamic_slice_count(sizes.len(), indices.len())));
    }
    if indices.len() != operand.rank() {
        return Err(inference(msg::dynamic_slice_rank(indices.len(), operand.rank())));
    }
    if indices.iter().any(|t| t.elem != indices[0].elem) {
        return Err(inference(msg::DYNAMIC_SLICE_INDEX_TYPES.into()));
    }
    for (i, &s) in sizes.iter().enumerate() {
        if s < 0 {
            return Ok(());
        }
        if s > operand.dims[i] {
            return Err(inference(msg::dynamic_slice_too_large(s, operand.dims[i], i)));
        }
    }
    if sizes != result.dims {
        return Err(inferred_mismatch(&tensor_text(&sizes, operand.elem), &result));
    }
    Ok(())
}

pub(super) fn reverse(op: &Operands) -> Result<(), Violation> {
    let Some(operand) = op.result_written() else { return Ok(()) };
    let Some(dims) = op.ints(&["dimensions", "dims"]) else { return Ok(()) };
    let mut seen = dims.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != dims.len() {
        return Err(plain(msg::reverse_not_unique(&list(&dims))));
    }
    for &d in &dims {
        if d < 0 {
            return Err(plain(msg::reverse_negative(d)));
        }
        if d >= operand.rank() as i64 {
            return Err(plain(msg::reverse_out_of_range(operand.rank(), d)));
        }
    }
    Ok(())
}

/// partition_id / replica_id: a `tensor<ui32>`.
pub(super) fn id_result(op: &Operands) -> Result<(), Violation> {
    match op.result_written() {
        Some(t) if t.elem != "ui32" => {
            Err(Violation::new(msg::result_must_be_ui32(&t.quoted()), sdy_syntax::Span::default()))
        }
        _ => Ok(()),
    }
}
