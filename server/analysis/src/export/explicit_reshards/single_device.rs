//! Ops with a single-device (maximal mesh) result: their operands are resharded to
//! that device through the global mesh's replicated sharding, and their results back
//! (Shardy's `processSingleDeviceOperation`).

use super::mesh::{is_fully_replicated, is_maximal, is_single_device};
use super::rewrite::{reshard_props, OpKey, Rewriter};
use crate::ir::ValueId;
use crate::propagation::graph::{replicated_sharding, Graph, ValueType};
use crate::propagation::pipeline::calls::is_equivalent;
use crate::sharding::{MeshRef, TensorSharding};
use crate::verify::messages as msg;

/// The global mesh: the first `sdy.mesh` with axes that is not maximal.
fn global_mesh(g: &Graph) -> Option<MeshRef> {
    g.mesh_list
        .iter()
        .find(|(_, mesh)| !is_maximal(mesh) && !mesh.axes.is_empty())
        .map(|(name, _)| MeshRef::Symbol(name.clone()))
}

/// Reshards op `key`'s operands to its single device and its results back to their
/// shardings (the global mesh's replicated one when they are single-device too).
/// Fails (with Shardy's message) when the results name different devices.
pub fn process(
    rw: &mut Rewriter,
    key: OpKey,
    outs: &[Option<TensorSharding>],
) -> Result<(), String> {
    let Some(i) = rw.find(key) else { return Ok(()) };
    let g = rw.graph();
    let mut device: Option<(i64, MeshRef)> = None;
    for s in outs.iter().flatten() {
        if !is_single_device(&g, Some(s)) {
            continue;
        }
        let Some(mesh) = g.mesh(&s.mesh) else { continue };
        let id = mesh.device_ids[0];
        if device.as_ref().is_some_and(|(d, _)| *d != id) {
            return Err(format!(
                "'{}' op {}",
                g.nodes[i].name,
                msg::CONFLICTING_SINGLE_DEVICE_RESULTS
            ));
        }
        device = Some((id, s.mesh.clone()));
    }
    let Some((_, single_mesh)) = device else { return Ok(()) };
    let Some(global) = global_mesh(&g) else { return Ok(()) };
    let single = replicated_sharding(&single_mesh, 0, true);
    let operands: Vec<(ValueId, ValueType)> =
        g.nodes[i].operands.iter().map(|&v| (v, g.ty(rw.m, v))).collect();
    let results: Vec<(ValueId, ValueType)> =
        g.nodes[i].results.iter().map(|&v| (v, g.ty(rw.m, v))).collect();
    // Operands: (global replicated ->) single device, right before the op.
    let Some(mut at) = rw.before(key) else { return Ok(()) };
    for (k, (v, ty)) in operands.iter().enumerate() {
        let ValueType::Ranked(dims) = ty else { continue };
        let rank = dims.len();
        let source = rw.sharding(*v).unwrap_or_else(|| replicated_sharding(&global, rank, true));
        if is_equivalent(Some(&source), Some(&single)) && source.mesh == single_mesh {
            continue;
        }
        if !(is_fully_replicated(Some(&source)) && source.mesh == global) {
            let repl = replicated_sharding(&global, rank, true);
            rw.insert_on_operand(key, k, &mut at, "sdy.reshard", reshard_props(repl));
        }
        rw.insert_on_operand(key, k, &mut at, "sdy.reshard", reshard_props(single.clone()));
    }
    // Results: single device -> global replicated (-> their sharding), right after.
    let Some(mut at) = rw.after(key) else { return Ok(()) };
    for (k, (r, ty)) in results.iter().enumerate() {
        let ValueType::Ranked(dims) = ty else { continue };
        let repl = replicated_sharding(&global, dims.len(), true);
        let target = match outs.get(k).cloned().flatten() {
            Some(s) if !is_single_device(&g, Some(&s)) => s,
            _ => repl.clone(),
        };
        let v = rw.insert_on_value(*r, &mut at, "sdy.reshard", reshard_props(repl.clone()));
        if target != repl {
            rw.insert_on_value(v, &mut at, "sdy.reshard", reshard_props(target));
        }
    }
    // The op itself is on the single device (a token result stays global).
    for (r, ty) in results {
        match ty {
            ValueType::Ranked(_) => rw.set_sharding(r, single.clone()),
            ValueType::Other(t) if t.contains("token") => {
                rw.set_sharding(r, replicated_sharding(&global, 0, true))
            }
            _ => {}
        }
    }
    Ok(())
}
