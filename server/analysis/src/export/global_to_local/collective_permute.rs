//! `sdy.collective_permute`: a `stablehlo.collective_permute` that sends each device's
//! shard to the device holding the same shard under the output sharding (the meshes
//! may differ in device order).

use super::*;

impl Localizer<'_> {
    pub(super) fn collective_permute(
        &mut self,
        _m: &mut Module,
        op: &Op,
    ) -> Result<Option<Vec<Op>>, Failure> {
        let (Some(out), Some(&input), Some(&r)) =
            (sharding_of(op.prop("out_sharding")), op.operands.first(), op.results.first())
        else {
            return Ok(None);
        };
        let in_s = self.sh.get(&input).cloned();
        let in_mesh = match &in_s {
            Some(s) => self.mesh(&s.mesh),
            None => None,
        };
        let (Some(out_mesh), Some(in_mesh)) = (self.mesh(&out.mesh), in_mesh) else {
            return Err(Failure::op(op, messages::G2L_NO_MESH));
        };
        let total = |mesh: &Mesh| mesh.axes.iter().map(|a| a.1).product::<i64>();
        let devices = total(&out_mesh);
        if devices != total(&in_mesh) {
            return Err(Failure::check(op, messages::G2L_PERMUTE_MESH_SIZES.into()));
        }
        let dims = |s: Option<&TensorSharding>| -> Vec<AxisRef> {
            s.map(|s| s.dims.iter().flat_map(|d| d.axes.iter().cloned()).collect())
                .unwrap_or_default()
        };
        let mut every = dims(in_s.as_ref());
        every.extend(dims(Some(&out)));
        let atoms: Vec<AxisRef> =
            device_groups::ordered_axis_refs(&every, &out_mesh).into_iter().map(|a| a.0).collect();
        // Each sharding's axes as atoms, in dimension order, then the atoms it does not
        // use: a device's index along them is a unique id of its position.
        let order = |s: Option<&TensorSharding>| -> Vec<AxisRef> {
            let mut axes: Vec<AxisRef> = Vec::new();
            for a in dims(s) {
                for atom in &atoms {
                    if contains(&a, atom, &out_mesh) && !axes.contains(atom) {
                        axes.push(atom.clone());
                    }
                }
            }
            for atom in &atoms {
                if !axes.contains(atom) {
                    axes.push(atom.clone());
                }
            }
            axes
        };
        let out_axes = order(Some(&out));
        let mut by_position: HashMap<i64, i64> = HashMap::default();
        for d in 0..devices {
            by_position.insert(shard_index(d, &out_mesh, &out_axes), d);
        }
        let in_axes = order(in_s.as_ref());
        let mut pairs = Vec::new();
        for d in 0..devices {
            let to = by_position.get(&shard_index(d, &in_mesh, &in_axes)).copied().unwrap_or(0);
            pairs.push(format!("[{d}, {to}]"));
        }
        let pairs = format!("dense<[{}]> : tensor<{devices}x2xi64>", pairs.join(", "));
        let props = vec![
            NamedAttr::new("channel_handle", self.channel()),
            NamedAttr::new("source_target_pairs", Attr::Raw(pairs)),
        ];
        let mut new = Op::pretty("stablehlo.collective_permute", vec![input], vec![r], props);
        new.origin = op.origin;
        new.syntax = Syntax::Generic;
        Ok(Some(vec![new]))
    }
}

/// Whether axis `a` covers all of `atom` (`AxisRefAttr::contains`).
fn contains(a: &AxisRef, atom: &AxisRef, mesh: &Mesh) -> bool {
    if a.name != atom.name {
        return false;
    }
    let full = mesh.axes.iter().find(|x| *x.0 == *a.name.as_str()).map_or(1, |x| x.1);
    let (p, s) = a.sub.unwrap_or((1, full));
    let (q, t) = atom.sub.unwrap_or((1, full));
    p <= q && q * t <= p * s
}
