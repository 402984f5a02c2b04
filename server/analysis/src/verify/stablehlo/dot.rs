//! dot and dot_general: dimension numbers and the inferred shape.

use super::{plain, Operands};
use crate::verify::messages as msg;
use crate::verify::Violation;

pub(super) fn dot_general(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(2, 1) else { return Ok(()) };
    let (lhs, rhs, result) = (&ins[0], &ins[1], &outs[0]);
    let Some(d) = op.attrs().dot_dims() else { return Ok(()) };
    if d.lhs_batching.len() != d.rhs_batching.len() {
        return Err(plain(msg::DOT_BATCHING_COUNT.to_string()));
    }
    if d.lhs_contracting.len() != d.rhs_contracting.len() {
        return Err(plain(msg::DOT_CONTRACTING_COUNT.to_string()));
    }
    for (side, batching, contracting) in
        [("lhs", &d.lhs_batching, &d.lhs_contracting), ("rhs", &d.rhs_batching, &d.rhs_contracting)]
    {
        let mut seen = Vec::new();
        for &x in batching.iter().chain(contracting) {
            if seen.contains(&x) {
                return Err(plain(msg::dot_duplicated_dim(side, x)));
            }
            seen.push(x);
        }
    }
    for (name, rank, dims) in [
        ("lhs_batching_dimensions", lhs.rank(), &d.lhs_batching),
        ("lhs_contracting_dimensions", lhs.rank(), &d.lhs_contracting),
        ("rhs_batching_dimensions", rhs.rank(), &d.rhs_batching),
        ("rhs_contracting_dimensions", rhs.rank(), &d.rhs_contracting),
    ] {
        if let Some(&x) = dims.iter().find(|&&x| x < 0 || x >= rank as i64) {
            return Err(plain(msg::dot_dim_out_of_range(name, x, rank)));
        }
    }
    let size = |t: &super::Tensor, i: i64| t.dims[i as usize];
    if d.lhs_batching.iter().zip(&d.rhs_batching).any(|(&l, &r)| size(lhs, l) != size(rhs, r)) {
        return Err(plain(msg::DOT_BATCHING_SIZES.to_string()));
    }
    if d.lhs_contracting.iter().zip(&d.rhs_contracting).any(|(&l, &r)| size(lhs, l) != size(rhs, r))
    {
        return Err(plain(msg::DOT_CONTRACTING_SIZES.to_string()));
    }
    let mut dims: Vec<i64> = d.lhs_batching.iter().map(|&b| size(lhs, b)).collect();
    let free = |t: &super::Tensor, batching: &[i64], contracting: &[i64]| -> Vec<i64> {
        (0..t.rank() as i64)
            .filter(|i| !batching.contains(i) && !contracting.contains(i))
            .map(|i| size(t, i))
            .collect()
    };
    dims.extend(free(lhs, &d.lhs_batching, &d.lhs_contracting));
    dims.extend(free(rhs, &d.rhs_batching, &d.rhs_contracting));
    shape_matches(&dims, result)
}

pub(super) fn dot(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(2, 1) else { return Ok(()) };
    let (lhs, rhs, result) = (&ins[0], &ins[1], &outs[0]);
    let dims = match (lhs.dims.as_slice(), rhs.dims.as_slice()) {
        ([a], [b]) if a == b => vec![],
        ([m, k], [b]) if k == b => vec![*m],
        ([a], [k, n]) if a == k => vec![*n],
        ([m, k], [k2, n]) if k == k2 => vec![*m, *n],
        _ => return Err(plain(msg::DOT_RANKS.to_string())),
    };
    shape_matches(&dims, result)
}

fn shape_matches(dims: &[i64], result: &super::Tensor) -> Result<(), Violation> {
    if dims != result.dims.as_slice() {
        let shape = dims.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        return Err(plain(msg::inferred_shape_incompatible(&shape, &result.quoted())));
    }
    Ok(())
}
