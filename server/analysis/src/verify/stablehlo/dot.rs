//! dot and dot_general: dimension numbers and the inferred shape.

use super::{plain, Dims, Operands};
use crate::verify::messages as msg;
use crate::verify::Violation;

pub(super) fn dot_general(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(2, 1) else { return Ok(()) };
    let (lhs, rhs, result) = (&ins[0], &ins[1], &outs[0]);
    // The custom form's numbers as the parser kept them; other spellings from the text.
    let read;
    let (lb, rb, lc, rc): (&[i64], &[i64], &[i64], &[i64]) = match op.kept_dot_dims() {
        Some(d) => (&d.lhs_batching, &d.rhs_batching, &d.lhs_contracting, &d.rhs_contracting),
        None => {
            read = op.attrs().dot_dims();
            let Some(d) = &read else { return Ok(()) };
            (&d.lhs_batching, &d.rhs_batching, &d.lhs_contracting, &d.rhs_contracting)
        }
    };
    if lb.len() != rb.len() {
        return Err(plain(msg::DOT_BATCHING_COUNT.to_string()));
    }
    if lc.len() != rc.len() {
        return Err(plain(msg::DOT_CONTRACTING_COUNT.to_string()));
    }
    for (side, batching, contracting) in [("lhs", lb, lc), ("rhs", rb, rc)] {
        let all = || batching.iter().chain(contracting);
        if let Some(&x) =
            all().enumerate().find_map(|(i, x)| all().take(i).any(|y| y == x).then_some(x))
        {
            return Err(plain(msg::dot_duplicated_dim(side, x)));
        }
    }
    for (name, rank, dims) in [
        ("lhs_batching_dimensions", lhs.rank(), lb),
        ("lhs_contracting_dimensions", lhs.rank(), lc),
        ("rhs_batching_dimensions", rhs.rank(), rb),
        ("rhs_contracting_dimensions", rhs.rank(), rc),
    ] {
        if let Some(&x) = dims.iter().find(|&&x| x < 0 || x >= rank as i64) {
            return Err(plain(msg::dot_dim_out_of_range(name, x, rank)));
        }
    }
    let size = |t: &super::Tensor, i: i64| t.dims[i as usize];
    if lb.iter().zip(rb).any(|(&l, &r)| size(lhs, l) != size(rhs, r)) {
        return Err(plain(msg::DOT_BATCHING_SIZES.to_string()));
    }
    if lc.iter().zip(rc).any(|(&l, &r)| size(lhs, l) != size(rhs, r)) {
        return Err(plain(msg::DOT_CONTRACTING_SIZES.to_string()));
    }
    // The batching dimensions, then the free ones of each side.
    let mut dims: Dims = lb.iter().map(|&b| size(lhs, b)).collect();
    for (t, batching, contracting) in [(lhs, lb, lc), (rhs, rb, rc)] {
        let free =
            (0..t.rank() as i64).filter(|i| !batching.contains(i) && !contracting.contains(i));
        dims.extend(free.map(|i| size(t, i)));
    }
    shape_matches(&dims, result)
}

pub(super) fn dot(op: &Operands) -> Result<(), Violation> {
    let Some((ins, outs)) = op.tensors(2, 1) else { return Ok(()) };
    let (lhs, rhs, result) = (&ins[0], &ins[1], &outs[0]);
    let dims: &[i64] = match (lhs.dims.as_slice(), rhs.dims.as_slice()) {
        ([a], [b]) if a == b => &[],
        ([m, k], [b]) if k == b => &[*m],
        ([a], [k, n]) if a == k => &[*n],
        ([m, k], [k2, n]) if k == k2 => &[*m, *n],
        _ => return Err(plain(msg::DOT_RANKS.to_string())),
    };
    shape_matches(dims, result)
}

fn shape_matches(dims: &[i64], result: &super::Tensor) -> Result<(), Violation> {
    if dims != result.dims.as_slice() {
        let shape = dims.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        return Err(plain(msg::inferred_shape_incompatible(&shape, &result.quoted())));
    }
    Ok(())
}
