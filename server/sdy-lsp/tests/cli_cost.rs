//! `sdy-lsp cost --bandwidth AXIS=GBPS`: estimated seconds next to the bytes (JSON
//! `"seconds"` per collective and per function; the text lines), bad values refused.

use expect_test::expect;
use std::process::Command;

fn cost(args: &[&str]) -> (bool, String, String) {
    let path = format!("{}/tests/lsp_fixtures/propagation.mlir", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_sdy-lsp"))
        .args(["cost", "--split-input-file"])
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn bandwidth_adds_seconds() {
    let (ok, out, err) = cost(&["--format", "json", "--bandwidth", "y=2", "--bandwidth=*=0.5"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows: Vec<String> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| {
            let head = format!("{} {} {}", f["name"], f["bytes_per_device"], f["seconds"]);
            let cs = f["collectives"].as_array().unwrap().iter().map(|c| {
                format!("  {} {} {} {}", c["kind"], c["axes"], c["bytes_per_device"], c["seconds"])
            });
            std::iter::once(head).chain(cs).collect::<Vec<_>>()
        })
        .collect();
    expect![[r#"
        "main" 0 0.0
        "conflict" 256 2.24e-7
          "all-slice" ["y:(1)2"] 0 0.0
          "collective-permute" [] 64 1.28e-7
          "all-gather" ["y"] 192 9.6e-8"#]]
    .assert_eq(&rows.join("\n"));

    let (ok, out, _) = cost(&["--bandwidth", "y=2"]);
    assert!(ok);
    expect![[r#"
        @main: no communication · memory per device: arguments 768 B, results 128 B, peak ≈ 1.0 KiB
        @conflict: 2 collectives, 256 B per device · memory per device: arguments 192 B, results 256 B, peak ≈ 512 B
          line 15: all-slice{"y":(1)2} of `tensor<8x8xf32>`: operand 0 of `stablehlo.add` is sharded `[{"x"}, {}]`, the op computes with `[{"y"}, {}]`; dimension 0 (factor i): {"x"} → {"y"}
          line 15: collective-permute 64 B of `tensor<8x8xf32>`: operand 0 of `stablehlo.add` is sharded `[{"x"}, {}]`, the op computes with `[{"y"}, {}]`; dimension 0 (factor i): {"x"} → {"y"}
          line 15: all-gather{"y"} 192 B ≈ 96.0 ns of `tensor<8x8xf32>`: `stablehlo.add` computes result 0 sharded `[{"y"}, {}]`, its sharding is `[{}, {}]`; dimension 0 (factor i): {"y"} → {}
    "#]].assert_eq(&out);

    // Without the option: no "seconds" at all.
    let (_, out, _) = cost(&["--format", "json"]);
    assert!(!out.contains("seconds"), "{out}");
    for bad in ["y", "y=0", "y=fast"] {
        let (ok, _, err) = cost(&["--bandwidth", bad]);
        assert!(!ok && err.contains("--bandwidth"), "{bad}: {err}");
    }
}
