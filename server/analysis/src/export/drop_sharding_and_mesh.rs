//! `sdy-drop-sharding-and-mesh`: removes every `sdy.sharding` (ops, function arguments
//! and results) and every `sdy.mesh`.

use crate::ir::Module;
use crate::ir::OpKind;

pub fn drop_sharding_and_mesh(m: &mut Module) {
    m.top.walk_mut(&mut |op| {
        op.remove_attr("sdy.sharding");
        if let Some(f) = op.func_mut() {
            for slot in f.args.iter_mut().chain(f.results.iter_mut()) {
                slot.remove_attr("sdy.sharding");
            }
        }
    });
    m.top.walk_mut(&mut |op| {
        for r in &mut op.regions {
            for b in &mut r.blocks {
                b.ops.retain(|o| o.kind != OpKind::SdyMesh);
            }
        }
    });
}
