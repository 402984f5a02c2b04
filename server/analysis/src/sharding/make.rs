//! Shardings made from a mesh or from other shardings: open, replicated, with the
//! manual axes of a `sdy.manual_computation` erased or kept.

use super::{AxisRef, DimSharding, MeshRef, TensorSharding};

/// A fully open sharding of rank `rank`.
pub fn open_sharding(mesh: &MeshRef, rank: usize) -> TensorSharding {
    TensorSharding {
        mesh: mesh.clone(),
        dims: vec![DimSharding { axes: vec![], open: true, priority: None }; rank],
        replicated: vec![],
        unreduced: vec![],
        reduction: crate::sharding::Reduction::Sum,
    }
}

/// A fully replicated sharding, closed or open.
pub fn replicated_sharding(mesh: &MeshRef, rank: usize, closed: bool) -> TensorSharding {
    let mut s = open_sharding(mesh, rank);
    for d in &mut s.dims {
        d.open = !closed;
    }
    s
}

fn first_free(axes: &[AxisRef], manual: &[String]) -> usize {
    axes.iter().position(|a| !manual.iter().any(|m| *m == a.name)).unwrap_or(axes.len())
}

fn filter_free(axes: &[AxisRef], manual: &[String]) -> Vec<AxisRef> {
    axes.iter().filter(|a| !manual.iter().any(|m| *m == a.name)).cloned().collect()
}

/// Removes the manual axes (the leading axes of each dimension, and from the
/// replicated/unreduced lists).
pub fn erase_manual_axes(s: &TensorSharding, manual: &[String]) -> TensorSharding {
    if manual.is_empty() {
        return s.clone();
    }
    let mut out = s.clone();
    for d in &mut out.dims {
        let k = first_free(&d.axes, manual);
        d.axes.drain(..k);
    }
    out.replicated = filter_free(&s.replicated, manual);
    out.unreduced = filter_free(&s.unreduced, manual);
    out
}

/// Keeps only the manual axes of each dimension (and the free replicated/unreduced
/// axes, as Shardy does).
pub fn erase_free_axes(s: &TensorSharding, manual: &[String]) -> TensorSharding {
    let mut out = s.clone();
    for d in &mut out.dims {
        let k = first_free(&d.axes, manual);
        d.axes.truncate(k);
    }
    out.replicated = filter_free(&s.replicated, manual);
    out.unreduced = filter_free(&s.unreduced, manual);
    out
}
