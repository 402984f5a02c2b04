//! Ops that move or reshape dimensions: broadcast_in_dim, transpose, reshape,
//! concatenate, slice.

use super::{inference, inferred_mismatch, list, plain, same_elements, tensor_text, Operands};
use crate::verify::messages as msg;
use crate::verify::Violation;

pub(super) fn broadcast_in_dim(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(1, 1) else { return Ok(()) };
    let (operand, result) = (&ins[0], &outs[0]);
    same_elements(&[operand, result], msg::COMPATIBLE_ELEMENT_TYPES_OPERANDS_RESULTS)?;
    let Some(dims) = op.attrs().broadcast_dims() else { return Ok(()) };
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
    let Some(perm) = op.attrs().permutation() else { return Ok(()) };
    if perm.len() != operand.rank() {
        return Err(inference(msg::transpose_rank(operand.rank(), perm.len())));
    }
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if sorted.iter().enumerate().any(|(i, &d)| d != i as i64) {
        let range: Vec<i64> = (0..operand.rank() as i64).collect();
        return Err(inference(msg::not_a_permutation(&list(&range), &list(&perm))));
    }
    let dims: Vec<i64> = perm.iter().map(|&d| operand.dims[d as usize]).collect();
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
    let attrs = op.attrs();
    let (Some(start), Some(limit)) =
        (attrs.ints(&["start_indices"]), attrs.ints(&["limit_indices"]))
    else {
        return Ok(());
    };
    let strides = attrs.ints(&["strides"]).unwrap_or_else(|| vec![1; start.len()]);
    if start.len() != operand.rank() {
        return Err(inference(msg::slice_start_count(start.len(), operand.rank())));
    }
    if limit.len() != start.len() || strides.len() != start.len() {
        return Ok(());
    }
    let mut dims = Vec::with_capacity(start.len());
    for i in 0..start.len() {
        if start[i] < 0 || strides[i] <= 0 || start[i] > limit[i] {
            return Ok(()); // further checks of MLIR's, not modelled
        }
        if limit[i] > operand.dims[i] {
            return Err(inference(msg::slice_limit_too_large(limit[i], operand.dims[i], i)));
        }
        dims.push((limit[i] - start[i] + strides[i] - 1) / strides[i]);
    }
    if dims != result.dims {
        return Err(inferred_mismatch(&tensor_text(&dims, operand.elem), result));
    }
    Ok(())
}
