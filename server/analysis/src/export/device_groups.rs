//! Which devices of a mesh communicate in a collective over some mesh axes: the
//! replica groups StableHLO collectives take (`getReplicaGroups`), and their
//! `ReplicaGroupMeshAxes` spelling.

use crate::propagation::editor::reshards::axis_size;
use crate::sharding::{AxisRef, Mesh, MeshRef};

/// The mesh's axes split where `axes` name sub-axes, in mesh order
/// (`getOrderedAxisRefs`).
pub fn ordered_axis_refs(axes: &[AxisRef], mesh: &Mesh) -> Vec<(AxisRef, i64)> {
    let mut out = Vec::new();
    for (name, size) in &mesh.axes {
        let mut pre: Vec<i64> = vec![1, *size];
        for a in axes.iter().filter(|a| a.name == name.as_str()) {
            if let Some((p, s)) = a.sub {
                pre.push(p);
                pre.push(p * s);
            }
        }
        if pre.len() == 2 {
            out.push((AxisRef::full(name.as_str()), *size));
            continue;
        }
        pre.sort_unstable();
        pre.dedup();
        for w in pre.windows(2) {
            if w[0] > 0 {
                let size = w[1] / w[0];
                out.push((AxisRef { name: name.as_str().into(), sub: Some((w[0], size)) }, size));
            }
        }
    }
    out
}

/// The device groups of a collective over `axes` (each group: the devices that differ
/// only in `axes`, ordered by `axes`), as `(groups, group size)`.
pub fn replica_groups(axes: &[AxisRef], mesh: &Mesh) -> Option<Vec<Vec<i64>>> {
    let refs = ordered_axis_refs(axes, mesh);
    let dims: Vec<i64> = refs.iter().map(|r| r.1).collect();
    let total: i64 = dims.iter().product();
    let group: i64 = axes.iter().map(|a| axis_size(a, mesh)).product::<Option<i64>>()?;
    if group <= 0 || total % group != 0 {
        return None;
    }
    // Non-reduction axes first (mesh order), then the reduction axes in their order.
    let mut perm: Vec<usize> = (0..refs.len()).filter(|&i| !axes.contains(&refs[i].0)).collect();
    for a in axes {
        perm.push(refs.iter().position(|r| r.0 == *a)?);
    }
    if perm.len() != refs.len() {
        return None;
    }
    let devices: Vec<i64> =
        if mesh.device_ids.is_empty() { (0..total).collect() } else { mesh.device_ids.clone() };
    if devices.len() as i64 != total {
        return None;
    }
    // Row-major strides of the mesh-ordered array, read in the permuted order.
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    let out_dims: Vec<i64> = perm.iter().map(|&p| dims[p]).collect();
    let mut flat = Vec::with_capacity(total as usize);
    let mut idx = vec![0i64; out_dims.len()];
    for _ in 0..total {
        let at: i64 = idx.iter().zip(&perm).map(|(&i, &p)| i * strides[p]).sum();
        flat.push(devices[at as usize]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < out_dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Some(flat.chunks(group as usize).map(<[i64]>::to_vec).collect())
}

/// `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`
pub fn groups_attr(groups: &[Vec<i64>]) -> String {
    let rows: Vec<String> = groups
        .iter()
        .map(|g| format!("[{}]", g.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")))
        .collect();
    let size = groups.first().map_or(0, Vec::len);
    format!("dense<[{}]> : tensor<{}x{}xi64>", rows.join(", "), groups.len(), size)
}

/// `#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>` (replica groups V3);
/// `None` for sub-axes, which it cannot name.
pub fn mesh_axes_attr(axes: &[AxisRef], mesh: &MeshRef) -> Option<String> {
    if axes.iter().any(|a| a.sub.is_some()) {
        return None;
    }
    let items: Vec<String> = axes
        .iter()
        .map(|a| {
            format!(
                "#stablehlo.axis_ref<name = {}>",
                sdy_syntax::escape::escape_string(a.name.as_bytes())
            )
        })
        .collect();
    Some(format!(
        "#stablehlo.replica_group_mesh_axes<mesh = {mesh}, axes = [{}]>",
        items.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(axes: &[(&str, i64)]) -> Mesh {
        Mesh { axes: axes.iter().map(|(n, s)| (n.to_string(), *s)).collect(), device_ids: vec![] }
    }

    #[test]
    fn groups() {
        let m = mesh(&[("x", 2), ("y", 4)]);
        let sub = AxisRef { name: "y".into(), sub: Some((1, 2)) };
        assert_eq!(
            replica_groups(&[sub], &m).unwrap(),
            vec![vec![0, 2], vec![1, 3], vec![4, 6], vec![5, 7]]
        );
        assert_eq!(
            replica_groups(&[AxisRef::full("x")], &m).unwrap(),
            vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]
        );
        let yx = [AxisRef::full("y"), AxisRef::full("x")];
        assert_eq!(replica_groups(&yx, &m).unwrap(), vec![vec![0, 4, 1, 5, 2, 6, 3, 7]]);
    }
}
