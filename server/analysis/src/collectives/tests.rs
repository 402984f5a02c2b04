use super::*;
use crate::sharding::{DimSharding, MeshRef, Reduction};
use expect_test::{expect, Expect};

fn mesh(axes: &[(&str, i64)], ids: &[i64]) -> Mesh {
    Mesh { axes: axes.iter().map(|(n, s)| (n.to_string(), *s)).collect(), device_ids: ids.to_vec() }
}

fn sharding(dims: &[&[&str]]) -> TensorSharding {
    TensorSharding {
        mesh: MeshRef::Symbol("mesh".into()),
        dims: dims
            .iter()
            .map(|d| DimSharding {
                axes: d.iter().map(|a| AxisRef::full(*a)).collect(),
                open: false,
                priority: None,
            })
            .collect(),
        replicated: vec![],
        unreduced: vec![],
        reduction: Reduction::Sum,
    }
}

fn render(cs: &[Collective]) -> String {
    let mut out = String::new();
    for c in cs {
        let axes: Vec<String> = c
            .axes
            .iter()
            .map(|d| {
                let a: Vec<String> = d.axes.iter().map(|a| a.to_string()).collect();
                format!("{:?}:{{{}}}", d.dim, a.join(","))
            })
            .collect();
        out.push_str(&format!(
            "{} axes=[{}] tgt={:?} groups={:?} pairs={:?} local {:?} -> {:?} sent={:?} recv={:?}\n",
            c.kind.op_name(),
            axes.join(" "),
            c.target_dim,
            c.groups,
            c.pairs,
            c.local_before,
            c.local_after,
            c.bytes_sent,
            c.bytes_received
        ));
    }
    out
}

fn check(m: &Mesh, from: &[&[&str]], to: &[&[&str]], ty: &str, expect: Expect) {
    expect.assert_eq(&render(&describe_reshard(&sharding(from), &sharding(to), ty, m)));
}

#[test]
fn all_gather_groups_follow_the_gathered_axes() {
    let m = mesh(&[("x", 2), ("y", 2), ("z", 2)], &[]);
    check(
        &m,
        &[&["x", "y", "z"], &[]],
        &[&["x"], &[]],
        "tensor<16x8xf32>",
        expect![[r#"
            sdy.all_gather axes=[Some(0):{"y","z"}] tgt=None groups=[[0, 1, 2, 3], [4, 5, 6, 7]] pairs=[] local Some([2, 8]) -> Some([8, 8]) sent=Some(192) recv=Some(192)
        "#]],
    );
    // Gathering the major axis: devices 4 apart.
    check(
        &m,
        &[&["x"], &[]],
        &[&[], &[]],
        "tensor<16x8xf32>",
        expect![[r#"
            sdy.all_gather axes=[Some(0):{"x"}] tgt=None groups=[[0, 4], [1, 5], [2, 6], [3, 7]] pairs=[] local Some([8, 8]) -> Some([16, 8]) sent=Some(256) recv=Some(256)
        "#]],
    );
}

#[test]
fn all_slice_and_all_to_all() {
    let m = mesh(&[("x", 2), ("y", 2), ("z", 2)], &[]);
    check(
        &m,
        &[&[], &[]],
        &[&["x"], &["y", "z"]],
        "tensor<16x8xf32>",
        expect![[r#"
            sdy.all_slice axes=[Some(0):{"x"} Some(1):{"y","z"}] tgt=None groups=[[0, 1, 2, 3, 4, 5, 6, 7]] pairs=[] local Some([16, 8]) -> Some([8, 2]) sent=Some(0) recv=Some(0)
        "#]],
    );
    check(
        &m,
        &[&["x"], &[], &["y", "z"]],
        &[&["x"], &["y", "z"], &[]],
        "tensor<16x8x8xf32>",
        expect![[r#"
            sdy.all_to_all axes=[Some(2):{"y","z"}] tgt=Some(1) groups=[[0, 1, 2, 3], [4, 5, 6, 7]] pairs=[] local Some([8, 8, 2]) -> Some([8, 2, 8]) sent=Some(384) recv=Some(384)
        "#]],
    );
}

#[test]
fn collective_permute_pairs_and_device_ids() {
    let m = mesh(&[("x", 2), ("y", 2)], &[3, 2, 1, 0]);
    check(
        &m,
        &[&["x"], &["y"]],
        &[&["y"], &["x"]],
        "tensor<8x8xf32>",
        expect![[r#"
            sdy.collective_permute axes=[] tgt=None groups=[] pairs=[(1, 2), (2, 1)] local Some([4, 4]) -> Some([4, 4]) sent=Some(64) recv=Some(64)
        "#]],
    );
    // Sub-axes: "x":(1)2 of an axis of 4 strides over the minor half.
    assert_eq!(
        device_groups(&mesh(&[("x", 4)], &[]), &[AxisRef { name: "x".into(), sub: Some((1, 2)) }]),
        vec![vec![0, 2], vec![1, 3]]
    );
    assert_eq!(
        device_groups(&mesh(&[("x", 4)], &[]), &[AxisRef { name: "x".into(), sub: Some((2, 2)) }]),
        vec![vec![0, 1], vec![2, 3]]
    );
}

#[test]
fn redundant_reshard_has_no_collectives() {
    let m = mesh(&[("x", 2)], &[]);
    check(&m, &[&["x"]], &[&["x"]], "tensor<8xf32>", expect![[""]]);
}
