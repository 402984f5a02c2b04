//! `sdy-inline-meshes`: every mesh reference becomes the mesh itself (`@mesh` ->
//! `mesh<[...]>`), in shardings and in StableHLO's `replica_group_mesh_axes`, and the
//! `sdy.mesh` ops go away.

use crate::ir::OpKind;
use crate::ir::{Attr, Module};
use crate::propagation::irutil::transform_shardings;
use crate::propagation::pipeline::import::meshes;
use crate::sharding::{Mesh, MeshRef, TensorSharding};

pub fn inline_meshes(m: &mut Module) {
    let table = meshes(m);
    transform_shardings(m, &mut |s: &mut TensorSharding| {
        if let MeshRef::Symbol(name) = &s.mesh {
            if let Some(mesh) = table.get(name) {
                s.mesh = MeshRef::Inline(mesh.clone());
            }
        }
    });
    m.top.walk_mut(&mut |op| {
        for p in op.props.iter_mut().chain(op.attrs.iter_mut()) {
            if p.name != "replica_groups" {
                continue;
            }
            let Attr::Raw(text) = &p.value else { continue };
            let inlined = inline_replica_group_mesh(text, &|n| table.get(n));
            if let Some(t) = inlined {
                p.value = Attr::Raw(t);
            }
        }
    });
    if let Some(body) = m.body_mut() {
        body.retain(|op| op.kind != OpKind::SdyMesh);
    }
}

const MESH_AXES: &str = "#stablehlo.replica_group_mesh_axes<mesh = @";

/// `#stablehlo.replica_group_mesh_axes<mesh = @m, ...>` with `@m` replaced by its
/// `#stablehlo.mesh<...>`; `None` when the text refers to no known mesh symbol.
fn inline_replica_group_mesh<'a>(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<&'a Mesh>,
) -> Option<String> {
    let rest = text.strip_prefix(MESH_AXES)?;
    let (name, tail) = match rest.strip_prefix('"') {
        Some(q) => {
            let end = q.find('"')?;
            (sdy_syntax::escape::unescape(&q[..end]), &q[end + 1..])
        }
        None => {
            let end = rest.find([',', '>', ' ']).unwrap_or(rest.len());
            (rest[..end].to_string(), &rest[end..])
        }
    };
    let mesh = lookup(&name)?;
    Some(format!("#stablehlo.replica_group_mesh_axes<mesh = {}{tail}", stablehlo_mesh(mesh)))
}

/// Shardy's `convertMeshAttr` as StableHLO prints it.
pub fn stablehlo_mesh(mesh: &Mesh) -> String {
    let axes: Vec<String> = mesh
        .axes
        .iter()
        .map(|(n, s)| {
            format!("<name = {}, size = {s}>", sdy_syntax::escape::escape_string(n.as_bytes()))
        })
        .collect();
    let mut out = format!("#stablehlo.mesh<axes=[{}]", axes.join(", "));
    let ids = &mesh.device_ids;
    if !ids.is_empty() {
        let body = if ids.iter().all(|&d| d == ids[0]) {
            ids[0].to_string()
        } else {
            format!("[{}]", ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
        };
        out.push_str(&format!(", device_ids=dense<{body}> : tensor<{}xi64>", ids.len()));
    }
    out.push('>');
    out
}
