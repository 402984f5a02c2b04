//! The mesh an op is resharded on (Shardy's `getMesh` in explicit reshards).

use crate::propagation::graph::Graph;
use crate::sharding::{Mesh, MeshRef, TensorSharding};

/// An empty mesh: no axes, no device ids (it goes with any other).
fn is_empty(m: &Mesh) -> bool {
    m.axes.is_empty() && m.device_ids.is_empty()
}

/// A single-device (maximal) mesh.
pub fn is_maximal(m: &Mesh) -> bool {
    m.axes.is_empty() && m.device_ids.len() == 1
}

/// `isSingleDeviceSharding`.
pub fn is_single_device(g: &Graph, s: Option<&TensorSharding>) -> bool {
    s.and_then(|s| g.mesh_ref(&s.mesh)).is_some_and(is_maximal)
}

/// `isFullyReplicated`: no sharding, or no dimension sharded.
pub fn is_fully_replicated(s: Option<&TensorSharding>) -> bool {
    s.is_none_or(|s| s.dims.iter().all(|d| d.axes.is_empty()))
}

/// `getCommonMeshOrRef` ignoring device ids: the one mesh (up to device order) of the
/// shardings, preferring one with the default device order; `None` when they differ.
/// Meshes are borrowed from the index: only the chosen one is copied, by the caller.
fn common_mesh<'a>(
    g: &'a Graph,
    shardings: impl Iterator<Item = &'a TensorSharding>,
) -> Option<(&'a MeshRef, &'a Mesh)> {
    let mut chosen: Option<(&MeshRef, &Mesh)> = None;
    for s in shardings {
        let Some(other) = g.mesh_ref(&s.mesh) else { continue };
        match chosen {
            Some((_, cur)) if !is_empty(cur) => {
                if is_empty(other) {
                    continue;
                }
                if is_maximal(other) != is_maximal(cur) || other.axes != cur.axes {
                    return None;
                }
                if other.device_ids.is_empty() {
                    chosen = Some((&s.mesh, other));
                }
            }
            _ => chosen = Some((&s.mesh, other)),
        }
    }
    chosen
}

/// `getMesh`: the common mesh (ignoring device order) of the op's shardings, not a
/// maximal one; among meshes differing only in device order, the one most of the
/// sharded tensors use.
pub fn op_mesh(
    g: &Graph,
    ins: &[Option<TensorSharding>],
    outs: &[Option<TensorSharding>],
) -> Option<(MeshRef, Mesh)> {
    let all = || ins.iter().chain(outs).flatten();
    let (common_ref, common) = common_mesh(g, all())?;
    if is_maximal(common) {
        return None;
    }
    let mut counts: Vec<(&MeshRef, usize)> = Vec::new();
    let mut best: Option<(&MeshRef, usize)> = None;
    for s in all().filter(|s| !is_fully_replicated(Some(s))) {
        let n = match counts.iter_mut().find(|(r, _)| **r == s.mesh) {
            Some(c) => {
                c.1 += 1;
                c.1
            }
            None => {
                counts.push((&s.mesh, 1));
                1
            }
        };
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((&s.mesh, n));
        }
    }
    match best {
        Some((r, _)) => Some((r.clone(), g.mesh(r)?)),
        None => Some((common_ref.clone(), common.clone())),
    }
}
