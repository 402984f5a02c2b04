//! Conversions checked against JAX 0.10.2: for each case, `NamedSharding(mesh,
//! P(...))._to_xla_hlo_sharding(rank)` printed the expected `HloSharding` (sub-axes via
//! a JAX mesh with the axis split into separate axes, explicit device orders via
//! `_logical_device_ids`, unreduced axes on `Explicit` mesh axes), and the expected
//! `PartitionSpec` gives that same `HloSharding` in JAX (`-`: no `PartitionSpec`).

use super::Subject;

/// (mesh, sharding body after `@mesh, `, type, PartitionSpec, HloSharding)
const CASES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2]>",
        "[{\"x\"}, {}, {\"z\"}]",
        "tensor<8x8x8xf32>",
        "P('x', None, 'z')",
        "{devices=[2,1,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2]>",
        "[{\"x\", \"y\"}]",
        "tensor<8xf32>",
        "P(('x', 'y'))",
        "{devices=[4,2]<=[8] last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2]>",
        "[{\"y\"}, {\"x\"}]",
        "tensor<8x8xf32>",
        "P('y', 'x')",
        "{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2]>",
        "[{\"z\"}, {}]",
        "tensor<8x8xf32>",
        "P('z', None)",
        "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2]>",
        "[{\"x\"}, {\"y\"}, {\"z\"}]",
        "tensor<8x8x8xf32>",
        "P('x', 'y', 'z')",
        "{devices=[2,2,2]<=[8]}",
    ),
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2]>",
        "[{\"z\", \"y\", \"x\"}]",
        "tensor<8xf32>",
        "P(('z', 'y', 'x'))",
        "{devices=[8]<=[2,2,2]T(2,1,0)}",
    ),
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2]>",
        "[{?}, {}], replicated={\"y\"}",
        "tensor<8x8xf32>",
        "P(P.UNCONSTRAINED, None)",
        "{replicated}",
    ),
    ("<[\"x\"=2, \"y\"=2, \"z\"=2]>", "[]", "tensor<f32>", "P()", "{replicated}"),
    (
        "<[\"x\"=8]>",
        "[{\"x\":(2)2}, {\"x\":(1)2}]",
        "tensor<8x8xf32>",
        "-",
        "{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=8, \"y\"=2]>",
        "[{\"y\"}, {\"x\":(2)2}], replicated={\"x\":(1)2}",
        "tensor<4x8xf32>",
        "-",
        "{devices=[2,2,4]<=[2,2,2,2]T(3,1,0,2) last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=8, \"y\"=2]>",
        "[{\"x\":(1)2, \"y\"}, {\"x\":(4)2}]",
        "tensor<4x8xf32>",
        "-",
        "{devices=[4,2,2]<=[2,2,2,2]T(0,3,2,1) last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=4]>",
        "[{\"x\":(2)2}]",
        "tensor<8xf32>",
        "-",
        "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=2, \"y\"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>",
        "[{\"y\"}, {\"x\"}]",
        "tensor<8x8xf32>",
        "P('y', 'x')",
        "{devices=[4,2]7,3,6,2,5,1,4,0}",
    ),
    (
        "<[\"x\"=2, \"y\"=4], device_ids=[3, 1, 0, 2, 7, 6, 5, 4]>",
        "[{\"x\"}]",
        "tensor<8xf32>",
        "P('x')",
        "{devices=[2,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=2, \"y\"=4], device_ids=[3, 1, 0, 2, 7, 6, 5, 4]>",
        "[{\"y\"}, {}]",
        "tensor<8x8xf32>",
        "P('y', None)",
        "{devices=[4,1,2]3,7,1,6,0,5,2,4 last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2]>",
        "[{\"x\"}, {}], unreduced={\"y\"}",
        "tensor<8x8xf32>",
        "P('x', None, unreduced={'y'})",
        "{devices=[2,1,2,2]<=[8] last_tile_dims={unreduced, replicated}}",
    ),
    (
        "<[\"x\"=2, \"y\"=2]>",
        "[{\"x\"}], unreduced={\"y\"}",
        "tensor<8xf32>",
        "P('x', unreduced={'y'})",
        "{devices=[2,2]<=[4] last_tile_dims={unreduced}}",
    ),
    ("<[\"x\"=4]>", "[], unreduced={\"x\"}", "tensor<f32>", "P(unreduced={'x'})", "{unreduced}"),
    (
        "<[\"x\"=2, \"y\"=1, \"z\"=4]>",
        "[{\"y\", \"x\"}]",
        "tensor<8xf32>",
        "P(('y', 'x'))",
        "{devices=[2,4]<=[8] last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=3, \"y\"=2]>",
        "[{\"y\"}, {\"x\"}]",
        "tensor<6x6xf32>",
        "P('y', 'x')",
        "{devices=[2,3]<=[3,2]T(1,0)}",
    ),
    (
        "<[\"x\"=2, \"y\"=2, \"z\"=2, \"w\"=2]>",
        "[{\"w\", \"y\"}, {}]",
        "tensor<8x8xf32>",
        "P(('w', 'y'), None)",
        "{devices=[4,1,4]<=[2,2,2,2]T(3,1,0,2) last_tile_dim_replicate}",
    ),
    (
        "<[\"x\"=2, \"y\"=4]>",
        "[{\"y\", ?}, {}]",
        "tensor<10x3xf32>",
        "P('y', None)",
        "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    ),
];

#[test]
fn conversions_match_jax() {
    for &(mesh, sharding, ty, pspec, hlo) in CASES {
        let src = format!(
            "sdy.mesh @mesh = {mesh}\nfunc.func @f(%arg0: {ty} {{sdy.sharding = \
             #sdy.sharding<@mesh, {sharding}>}}) {{\n  return\n}}\n"
        );
        let chunk = &crate::parse_chunks(&src, false)[0];
        let model = crate::model::Model::build(chunk);
        let offset = src.find("#sdy.sharding").unwrap() as u32;
        let e = super::at(&model, &src, offset).expect("an explanation");
        let Subject::Sharding(f) = &e.subject else { panic!("not a sharding: {sharding}") };
        assert_eq!(f.hlo_sharding.as_deref(), Ok(hlo), "{mesh} {sharding}");
        match pspec {
            "-" => assert!(f.partition_spec.is_err(), "{mesh} {sharding}"),
            p => assert_eq!(f.partition_spec.as_deref(), Ok(p), "{mesh} {sharding}"),
        }
    }
}

#[test]
fn maximal_and_empty_meshes() {
    let src = "sdy.mesh @max = <[], device_ids=[3]>\nsdy.mesh @empty = <[]>\n\
               func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@max, [{}]>},\n\
               %b: tensor<8xf32> {sdy.sharding = #sdy.sharding<@empty, [{}]>}) {\n  return\n}\n";
    let chunk = &crate::parse_chunks(src, false)[0];
    let model = crate::model::Model::build(chunk);
    let facts = |needle: &str| {
        let e = super::at(&model, src, src.find(needle).unwrap() as u32 + 1).unwrap();
        match e.subject {
            Subject::Sharding(f) => f,
            _ => panic!("not a sharding"),
        }
    };
    let max = facts("#sdy.sharding<@max");
    assert_eq!(max.hlo_sharding.as_deref(), Ok("{maximal device=3}"));
    assert!(max.partition_spec.is_err());
    let empty = facts("#sdy.sharding<@empty");
    assert_eq!(empty.hlo_sharding.as_deref(), Ok("{replicated}"));
    assert_eq!(empty.partition_spec.as_deref(), Ok("P(None)"));
}
