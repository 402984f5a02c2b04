//! Fixtures: a module, its propagation, and the cost rendered as text.

use super::time::Bandwidth;
use super::{analyze, function_hover, of_propagation, text, Cost};
use crate::propagation::editor::{propagate, Strategy};
use expect_test::{expect, Expect};

/// The cost of `src` (propagated with the pipeline, or as written).
fn cost_of(src: &str, propagated: bool) -> (crate::ChunkAnalysis, Cost) {
    let chunk = crate::parse_chunks(src, false).remove(0);
    let a = crate::analyze_chunk(src, &chunk);
    let cost = if propagated {
        let p = propagate(src, &chunk, &a.model, &a.diagnostics, Strategy::Pipeline);
        assert!(!p.failed, "{:?}", p.diagnostics);
        of_propagation(src, &a.model, &p).unwrap()
    } else {
        analyze(src, &a.model, &crate::ir::build_module(src, &chunk), &[])
    };
    (a, cost)
}

/// Renders the cost of `src`; times with bandwidth `bw`.
fn render_with(src: &str, propagated: bool, bw: &Bandwidth) -> String {
    let (a, cost) = cost_of(src, propagated);
    let mut s = String::new();
    if let Some((at, m)) = &cost.failure {
        s.push_str(&format!("failure at {at}: {m}\n"));
    }
    let name = |o: Option<u32>| {
        o.and_then(|o| a.model.ops.iter().find(|x| x.start == o))
            .map_or("?".to_string(), |x| x.name().to_string())
    };
    for f in &cost.functions {
        s.push_str(&format!("@{}: {}\n", f.name, text::function_lens(f, bw)));
        for c in &f.collectives {
            let line = c.op.map_or(0, |o| src[..o as usize].matches('\n').count() + 1);
            s.push_str(&format!("  line {line}: {}\n", text::line(c, &name(c.op), bw)));
        }
    }
    for v in &cost.values {
        s.push_str(&format!("{:?}: {}\n", v.site, text::value_memory(v)));
    }
    s
}

fn render(src: &str, propagated: bool) -> String {
    render_with(src, propagated, &Bandwidth::default())
}

fn check(src: &str, propagated: bool, want: Expect) {
    want.assert_eq(&render(src, propagated));
}

#[test]
fn contraction_sharded_like_the_batch_is_resharded_then_reduced() {
    check(
        r#"sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<256x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}
"#,
        true,
        expect![[r#"
            @main: 2 collectives, 60.0 KiB per device · memory per device: arguments 48.0 KiB, results 8.0 KiB, peak ≈ 112.0 KiB
              line 3: all-to-all{"x"} 12.0 KiB of `tensor<64x256xf32>`: operand 0 of `stablehlo.dot_general` is sharded `[{"x"}, {}]`, the op computes with `[{}, {"x"}]`; dimension 0 (factor i): {"x"} → {}, dimension 1 (factor k): {} → {"x"}
              line 3: all-reduce{"x"} 48.0 KiB of `tensor<64x128xf32>`: result 0 of `stablehlo.dot_general` is a partial sum on each device (a reduction dimension is sharded on {"x"}): all-reduced
              line 4: all-slice{"x"} of `tensor<64x128xf32>`: the function returns result 0 sharded `[{"x"}, {}]`, the value is sharded `[{}, {}]`; dimension 0: {} → {"x"}
            Arg { func: 27, index: 0 }: 16.0 KiB per device (local shape 16x256)
            Arg { func: 27, index: 1 }: 32.0 KiB per device (local shape 64x128)
            Result { func: 27, index: 0 }: 8.0 KiB per device (local shape 16x128)
            OpResult { op: 279, index: 0 }: 8.0 KiB per device (local shape 16x128)
        "#]],
    );
}

#[test]
fn sharded_contraction_is_all_reduced() {
    check(
        r#"sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg1: tensor<256x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  %1 = stablehlo.tanh %0 : tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}
"#,
        true,
        expect![[r#"
            @main: 1 collective, 48.0 KiB per device · memory per device: arguments 48.0 KiB, results 32.0 KiB, peak ≈ 112.0 KiB
              line 3: all-reduce{"y"} 48.0 KiB of `tensor<64x128xf32>`: result 0 of `stablehlo.dot_general` is a partial sum on each device (a reduction dimension is sharded on {"y"}): all-reduced
            Arg { func: 34, index: 0 }: 16.0 KiB per device (local shape 64x64)
            Arg { func: 34, index: 1 }: 32.0 KiB per device (local shape 64x128)
            Result { func: 34, index: 0 }: 32.0 KiB per device (local shape 64x128)
            OpResult { op: 283, index: 0 }: 32.0 KiB per device (local shape 64x128)
            OpResult { op: 421, index: 0 }: 32.0 KiB per device (local shape 64x128)
        "#]],
    );
}

#[test]
fn written_collectives_and_reshards_as_written() {
    check(
        r#"sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = sdy.all_gather [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x8xf32>
  %1 = sdy.reshard %0 <@mesh, [{"y"}, {}]> : tensor<8x8xf32>
  %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
"#,
        false,
        expect![[r#"
            @main: 3 collectives, 256 B per device · memory per device: arguments 64 B, results 256 B, peak ≈ 448 B
              line 3: all-gather{"x"} 64 B of `tensor<8x8xf32>`: `sdy.all_gather` is a collective written in the source
              line 4: all-to-all{"y"} 64 B of `tensor<8x8xf32>`: a step of the `sdy.reshard` written here, from `[{}, {"y"}]` to `[{"y"}, {}]`; dimension 0: {} → {"y"}, dimension 1: {"y"} → {}
              line 6: all-gather{"y"} 128 B of `tensor<8x8xf32>`: the function returns result 0 sharded `[{}, {}]`, the value is sharded `[{"y"}, {}]`; dimension 0: {"y"} → {}
        "#]],
    );
}

#[test]
fn padded_values_and_peak() {
    check(
        r#"sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<10x7xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<10x7xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.exponential %arg0 : tensor<10x7xf32>
  %1 = stablehlo.add %0, %arg0 : tensor<10x7xf32>
  %2 = stablehlo.multiply %1, %0 : tensor<10x7xf32>
  return %2 : tensor<10x7xf32>
}
"#,
        true,
        expect![[r#"
            @main: 1 collective, 84 B per device · memory per device: arguments 140 B, results 140 B, peak ≈ 392 B
              line 3: all-slice{"x":(2)2} of `tensor<10x7xf32>`: operand 0 of `stablehlo.exponential` is sharded `[{"x":(1)2}, {}]`, the op computes with `[{"x"}, {}]`; dimension 0 (factor i): {"x":(1)2} → {"x"}
              line 4: all-slice{"x":(2)2} of `tensor<10x7xf32>`: operand 1 of `stablehlo.add` is sharded `[{"x":(1)2}, {}]`, the op computes with `[{"x"}, {}]`; dimension 0 (factor i): {"x":(1)2} → {"x"}
              line 6: all-gather{"x":(2)2} 84 B of `tensor<10x7xf32>`: the function returns result 0 sharded `[{"x":(1)2}, {}]`, the value is sharded `[{"x"}, {}]`; dimension 0: {"x"} → {"x":(1)2}
            Arg { func: 27, index: 0 }: 140 B per device (local shape 5x7)
            Result { func: 27, index: 0 }: 84 B per device (local shape 3x7)
            OpResult { op: 196, index: 0 }: 84 B per device (local shape 3x7)
            OpResult { op: 250, index: 0 }: 84 B per device (local shape 3x7)
            OpResult { op: 300, index: 0 }: 84 B per device (local shape 3x7)
        "#]],
    );
}

#[test]
fn no_panic_on_failing_or_empty_modules() {
    for src in ["", "func.func @f() {\n  return\n}\n", "sdy.mesh @m = <[\"x\"=2]>\n"] {
        render(src, true);
        render(src, false);
    }
}

const TWO_COLLECTIVES: &str = r#"sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<256x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}
"#;

/// Bytes per device over the slowest axis's GB/s; `"*"` for the axes not named.
#[test]
fn bandwidth_turns_bytes_into_time() {
    let mut bw = Bandwidth::default();
    bw.parse_assignment("y=100").unwrap();
    bw.parse_assignment("*=25").unwrap();
    expect![[r#"
        @main: 2 collectives, 40.0 KiB per device ≈ 901.1 ns · memory per device: arguments 40.0 KiB, results 32.0 KiB, peak ≈ 88.0 KiB
          line 3: all-reduce{"y"} 24.0 KiB ≈ 245.8 ns of `tensor<64x128xf32>`: result 0 of `stablehlo.dot_general` is a partial sum on each device (a reduction dimension is sharded on {"y"}): all-reduced
          line 4: all-gather{"x"} 16.0 KiB ≈ 655.4 ns of `tensor<64x128xf32>`: the function returns result 0 sharded `[{}, {}]`, the value is sharded `[{"x"}, {}]`; dimension 0: {"x"} → {}"#]]
    .assert_eq(render_with(TWO_COLLECTIVES, true, &bw).lines().take(3).collect::<Vec<_>>().join("\n").as_str());
    for bad in ["y", "y=0", "=3", "y=fast", "y=-1"] {
        assert!(Bandwidth::default().parse_assignment(bad).is_err(), "{bad}");
    }
}

/// The hover of `func.func` and `@main`: collectives by kind, memory per slot.
#[test]
fn function_hover_details_the_lens() {
    let (a, cost) = cost_of(TWO_COLLECTIVES, true);
    let mut bw = Bandwidth::default();
    bw.set("*", 10.0);
    let on_name = TWO_COLLECTIVES.find("func.func").unwrap() as u32 + 2;
    let on_sym = TWO_COLLECTIVES.find("@main").unwrap() as u32 + 1;
    let (span, md) = function_hover::at(&a.model, &cost, on_name, &bw).unwrap();
    assert_eq!(&TWO_COLLECTIVES[span.start as usize..span.end as usize], "func.func");
    let (span, again) = function_hover::at(&a.model, &cost, on_sym, &bw).unwrap();
    assert_eq!(&TWO_COLLECTIVES[span.start as usize..span.end as usize], "@main");
    assert_eq!(md, again);
    expect![[r#"
        **Cost of `@main`** (per device, after Shardy's export)

        Communication: 2 collectives, 40.0 KiB ≈ 4.1 µs
        - 1 × all-reduce: 24.0 KiB ≈ 2.5 µs
        - 1 × all-gather: 16.0 KiB ≈ 1.6 µs

        Memory:
        - arguments: 40.0 KiB (`%arg0` 8.0 KiB, `%arg1` 32.0 KiB)
        - results: 32.0 KiB (result 0 32.0 KiB)
        - peak ≈ 88.0 KiB (arguments, and each value from its definition to its last use over the op order; no buffer reuse)
    "#]]
    .assert_eq(&md);
    let in_body = TWO_COLLECTIVES.find("stablehlo.dot_general").unwrap() as u32;
    assert_eq!(function_hover::at(&a.model, &cost, in_body, &bw), None);

    // Each result as the function returns it: sharded, then replicated.
    let two = r#"sdy.mesh @mesh = <["x"=2]>
func.func @f(%arg0: tensor<64xf32>) -> (tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, tensor<64xf32>) {
  return %arg0, %arg0 : tensor<64xf32>, tensor<64xf32>
}
"#;
    let (a, cost) = cost_of(two, false);
    let (_, md) = function_hover::at(&a.model, &cost, two.find("@f").unwrap() as u32, &bw).unwrap();
    assert!(md.contains("- results: 384 B (result 0 128 B, result 1 256 B)\n"), "{md}");
}
