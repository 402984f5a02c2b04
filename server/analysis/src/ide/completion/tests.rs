//! Completion tests: the items at a `$$` cursor, one line each.
use super::*;
use crate::parse_chunks;
use expect_test::expect;

const MESHES: &str =
    "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4, \"z\"=2]>\nsdy.mesh @other = <[\"a\"=8]>\n";

/// The completions at `$$` in `text` (after the meshes), one line per item:
/// `label (kind) detail | replaced text -> insert`.
fn at(text: &str) -> String {
    let text = format!("{MESHES}{text}");
    let offset = text.find("$$").expect("no $$ marker") as u32;
    let src = text.replacen("$$", "", 1);
    let chunk = &parse_chunks(&src, false)[0];
    let model = Model::build(chunk);
    let index = Index::new(&model);
    let c = complete(&model, &index, &src, offset);
    let mut out = String::new();
    if c.incomplete {
        out.push_str("(incomplete)\n");
    }
    for i in &c.items {
        assert!(i.replace.start <= offset && offset <= i.replace.end, "{i:?}");
        let replaced = i.replace.text(&src);
        let detail = i.detail.as_deref().unwrap_or("-");
        let insert = i.insert.replace('\n', "⏎");
        out.push_str(&format!("{} ({:?}) {detail} | {replaced:?} -> {insert}\n", i.label, i.kind));
    }
    out
}

fn func(body: &str) -> String {
    format!("func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8xf32>) -> tensor<8x8xf32> {{\n{body}\n}}\n")
}

#[test]
fn mesh_names_after_at() {
    let arg = |s: &str| {
        format!("func.func @f(%a: tensor<8xf32> {{sdy.sharding = #sdy.sharding<{s}>}}) {{\n  return\n}}\n")
    };
    expect![[r#"
            @mesh (Mesh) <["x"=2, "y"=4, "z"=2]> · 16 devices | "@" -> @mesh
            @other (Mesh) <["a"=8]> · 8 devices | "@" -> @other
        "#]]
    .assert_eq(&at(&arg("@$$")));
    expect![[r#"
            @mesh (Mesh) <["x"=2, "y"=4, "z"=2]> · 16 devices | "@me" -> @mesh
            @other (Mesh) <["a"=8]> · 8 devices | "@me" -> @other
        "#]]
    .assert_eq(&at(&arg("@me$$, [{}]")));
    // Nothing typed yet; half-typed text after the cursor.
    expect![[r#"
            @mesh (Mesh) <["x"=2, "y"=4, "z"=2]> · 16 devices | "" -> @mesh
            @other (Mesh) <["a"=8]> · 8 devices | "" -> @other
        "#]]
    .assert_eq(&at(&arg("$$")));
    // The entries of in_shardings, sharding_per_value, out_sharding=, constraints.
    let mc =
        func("  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"x\"}, {}]>, <@$$");
    assert!(at(&mc).starts_with("@mesh (Mesh)"), "{}", at(&mc));
    let pv =
        func("  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@o$$");
    assert!(at(&pv).contains("\"@o\" -> @other"), "{}", at(&pv));
    let sc = func("  %0 = sdy.sharding_constraint %arg0 <$$");
    assert!(at(&sc).contains("\"\" -> @mesh"), "{}", at(&sc));
    let ag = func("  %0 = sdy.all_gather [{\"x\"}, {}] %arg0 out_sharding=<@$$");
    assert!(at(&ag).contains("\"@\" -> @mesh"), "{}", at(&ag));
}

#[test]
fn axes_of_the_sharding_mesh() {
    let sc = |s: &str| {
        func(&format!("  %0 = sdy.sharding_constraint %arg0 <@mesh, {s}> : tensor<8x8xf32>"))
    };
    expect![[r#"
            "y" (Axis) size 4 · @mesh | "" -> "y"
            "z" (Axis) size 2 · @mesh | "" -> "z"
            ? (Operator) open dimension | "" -> ?
        "#]]
    .assert_eq(&at(&sc("[{\"x\", $$}, {}]")));
    // Auto-closed quotes: the whole `""` is replaced; axes used in any dimension
    // or list are left out, sub-axes do not use up their axis.
    expect![[r#"
            "x" (Axis) size 2 · @mesh | "\"\"" -> "x"
            "z" (Axis) size 2 · @mesh | "\"\"" -> "z"
            ? (Operator) open dimension | "\"\"" -> ?
        "#]]
    .assert_eq(&at(&sc("[{\"$$\"}, {\"y\"}], replicated={\"z\":(1)2}")));
    // A bare word typed: matched without the quote.
    expect![[r#"
            "x" (Axis) size 2 · @mesh | "y" -> "x"
            "y" (Axis) size 4 · @mesh | "y" -> "y"
            "z" (Axis) size 2 · @mesh | "y" -> "z"
            ? (Operator) open dimension | "y" -> ?
        "#]]
    .assert_eq(&at(&sc("[{}, {y$$")));
    // After `?` nothing more goes in the dimension.
    expect![[r#""#]].assert_eq(&at(&sc("[{?, $$")));
    // replicated={...}
    expect![[r#"
            "y" (Axis) size 4 · @mesh | "" -> "y"
            "z" (Axis) size 2 · @mesh | "" -> "z"
        "#]]
    .assert_eq(&at(&sc("[{\"x\"}, {}], replicated={$$")));
    // An inline mesh.
    let inline =
        func("  %0 = sdy.sharding_constraint %arg0 <mesh<[\"i\"=2, \"j\"=2]>, [{\"j\", $$");
    expect![[r#"
            "i" (Axis) size 2 | "" -> "i"
            ? (Operator) open dimension | "" -> ?
        "#]]
    .assert_eq(&at(&inline));
    // An unknown mesh: no axes (the diagnostic tells why), `?` still.
    let unknown = func("  %0 = sdy.sharding_constraint %arg0 <@nope, [{$$");
    expect![[r#"
            ? (Operator) open dimension | "" -> ?
        "#]]
    .assert_eq(&at(&unknown));
}

#[test]
fn priorities_and_lists() {
    let sc = |s: &str| func(&format!("  %0 = sdy.reshard %arg0 <@mesh, {s}> : tensor<8x8xf32>"));
    expect![[r#"
            p0 (Priority) priority 0 | "" -> p0
            p1 (Priority) priority 1 | "" -> p1
            p2 (Priority) priority 2 | "" -> p2
            p3 (Priority) priority 3 | "" -> p3
        "#]]
    .assert_eq(&at(&sc("[{\"x\"}$$, {}]")));
    expect![[r#"
            p0 (Priority) priority 0 | "p" -> p0
            p1 (Priority) priority 1 | "p" -> p1
            p2 (Priority) priority 2 | "p" -> p2
            p3 (Priority) priority 3 | "p" -> p3
        "#]]
    .assert_eq(&at(&sc("[{\"x\"}p$$, {}]")));
    expect![[r#"
            replicated={} (Keyword) axes the tensor is explicitly replicated on | "" -> replicated={$1}
            unreduced={} (Keyword) axes along which the tensor holds partial results (not reduced yet) | "" -> unreduced={$1}
        "#]].assert_eq(&at(&sc("[{\"x\"}, {}], $$")));
    expect![[r#"
            unreduced={} (Keyword) axes along which the tensor holds partial results (not reduced yet) | "unr" -> unreduced={$1}
        "#]].assert_eq(&at(&sc("[{\"x\"}, {}], replicated={\"y\"}, unr$$")));
    // Before the dimension list is closed: nothing.
    expect![[r#""#]].assert_eq(&at(&sc("[{\"x\"}, $$")));
}

#[test]
fn axis_lists_of_ops() {
    let mc = func("  %0 = sdy.manual_computation(%arg0) in_shardings=[<@other, [{\"a\"}, {}]>] out_shardings=[<@other, [{\"a\"}, {}]>] manual_axes={$$");
    expect![[r#"
            "a" (Axis) size 8 · @other | "" -> "a"
        "#]]
    .assert_eq(&at(&mc));
    let ag = func("  %0 = sdy.all_gather [{\"y\"}, {$$}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>");
    expect![[r#"
            "x" (Axis) size 2 · @mesh | "" -> "x"
            "z" (Axis) size 2 · @mesh | "" -> "z"
        "#]]
    .assert_eq(&at(&ag));
}

#[test]
fn values_in_scope_at_the_cursor() {
    let body = "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  %1:2 = stablehlo.while(%it = %arg1) : tensor<8xf32> cond {
    %inner = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %inner : tensor<i1>
  } do {
    %2 = stablehlo.add %it, $$
    stablehlo.return %2 : tensor<8xf32>
  }
  %3 = stablehlo.add %0, %0 : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>";
    // Not %inner (sibling region), not %2 (the op being typed), not %3 (later),
    // not %1 (the enclosing op's results).
    expect![[r#"
            %it (Value) tensor<8xf32> | "%" -> %it
            %0 (Value) tensor<8x8xf32> | "%" -> %0
            %arg1 (Value) tensor<8xf32> | "%" -> %arg1
            %arg0 (Value) tensor<8x8xf32> | "%" -> %arg0
        "#]]
    .assert_eq(&at(&func(&body.replace("$$", "%$$"))));
    expect![[r#"
            %it (Value) tensor<8xf32> | "%a" -> %it
            %0 (Value) tensor<8x8xf32> | "%a" -> %0
            %arg1 (Value) tensor<8xf32> | "%a" -> %arg1
            %arg0 (Value) tensor<8x8xf32> | "%a" -> %arg0
        "#]]
    .assert_eq(&at(&func(&body.replace("$$", "%a$$"))));
    // Isolated regions: values outside a manual computation are not visible.
    let mc = func("  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{\"x\"}, {}]>] out_shardings=[<@mesh, [{\"x\"}, {}]>] manual_axes={\"x\"} (%l: tensor<4x8xf32>) {
    %2 = stablehlo.negate %l : tensor<4x8xf32>
    sdy.return %$$
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>");
    expect![[r#"
            %2 (Value) tensor<4x8xf32> | "%" -> %2
            %l (Value) tensor<4x8xf32> | "%" -> %l
        "#]]
    .assert_eq(&at(&mc));
    // A result being defined: nothing.
    expect![[r#""#]].assert_eq(&at(&func("  %$$")));
}

/// Beyond `MAX_VALUES` values in scope: only those starting with the prefix, nearest
/// first, and the list says it is incomplete.
#[test]
fn many_values_are_filtered_by_the_prefix() {
    let mut body = String::new();
    for i in 0..MAX_VALUES + 100 {
        body.push_str(&format!("  %{i} = stablehlo.add %arg1, %arg1 : tensor<8xf32>\n"));
    }
    body.push_str("  %x = stablehlo.add %9$$");
    let got = at(&func(&body));
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines[0], "(incomplete)");
    assert_eq!(lines[1], "%99 (Value) tensor<8xf32> | \"%9\" -> %99");
    assert!(lines[1..].iter().all(|l| l.starts_with("%9")), "{got}");
    assert_eq!(lines.len() - 1, 11, "%9 and %90..%99");
}

#[test]
fn op_names_and_symbols() {
    let ops = at(&func("  %r = sdy.$$"));
    expect![[r#"
            sdy.sharding_constraint (Op) sdy.sharding_constraint %x <@mesh, [...]> : type | "sdy." -> sdy.sharding_constraint ${1:%x} <@${2:mesh}, [$3]> : ${4:type}
            sdy.reshard (Op) sdy.reshard %x <@mesh, [...]> : type | "sdy." -> sdy.reshard ${1:%x} <@${2:mesh}, [$3]> : ${4:type}
            sdy.manual_computation (Op) sdy.manual_computation(%x) in_shardings=[...] out_shardings=[...] manual_axes={...} (%arg: local type) { ... } : (type) -> type | "sdy." -> sdy.manual_computation(${1:%x}) in_shardings=[<@${2:mesh}, [$3]>] out_shardings=[<@${2:mesh}, [$4]>] manual_axes={$5} (${6:%arg0}: ${7:local_type}) {⏎  $0⏎  sdy.return ${6:%arg0} : ${7:local_type}⏎} : (${8:type}) -> ${9:type}
            sdy.named_computation (Op) sdy.named_computation<"name">(%x) (%arg: type) { ... } : (type) -> type | "sdy." -> sdy.named_computation<"${1:name}">(${2:%x}) (${3:%arg0}: ${4:type}) {⏎  $0⏎  sdy.return ${3:%arg0} : ${4:type}⏎} : (${4:type}) -> ${4:type}
            sdy.all_gather (Op) sdy.all_gather [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | "sdy." -> sdy.all_gather [$1] ${2:%x} out_sharding=<@${3:mesh}, [$4]> : ${5:type}
            sdy.all_slice (Op) sdy.all_slice [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | "sdy." -> sdy.all_slice [$1] ${2:%x} out_sharding=<@${3:mesh}, [$4]> : ${5:type}
            sdy.all_to_all (Op) sdy.all_to_all [{axes}: src->tgt, ...] %x out_sharding=<@mesh, [...]> : type | "sdy." -> sdy.all_to_all [{$1}: ${2:0}->${3:1}] ${4:%x} out_sharding=<@${5:mesh}, [$6]> : ${7:type}
            sdy.all_reduce (Op) sdy.all_reduce {axes} %x out_sharding=<@mesh, [...]> : type | "sdy." -> sdy.all_reduce {$1} ${2:%x} out_sharding=<@${3:mesh}, [$4]> : ${5:type}
            sdy.reduce_scatter (Op) sdy.reduce_scatter [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | "sdy." -> sdy.reduce_scatter [$1] ${2:%x} out_sharding=<@${3:mesh}, [$4]> : ${5:type}
            sdy.collective_permute (Op) sdy.collective_permute %x out_sharding=<@mesh, [...]> : type | "sdy." -> sdy.collective_permute ${1:%x} out_sharding=<@${2:mesh}, [$3]> : ${4:type}
            sdy.sharded_to_unreduced (Op) sdy.sharded_to_unreduced [{axes}, ...] %x out_sharding=<@mesh, [...]> : type | "sdy." -> sdy.sharded_to_unreduced [$1] ${2:%x} out_sharding=<@${3:mesh}, [$4]> : ${5:type}
            sdy.replicated_to_unreduced (Op) sdy.replicated_to_unreduced {axes} %x out_sharding=<@mesh, [...]> : type | "sdy." -> sdy.replicated_to_unreduced {$1} ${2:%x} out_sharding=<@${3:mesh}, [$4]> : ${5:type}
            sdy.propagation_barrier (Op) sdy.propagation_barrier %x allowed_direction=FORWARD : type | "sdy." -> sdy.propagation_barrier ${1:%x} allowed_direction=${2|NONE,FORWARD,BACKWARD,BOTH|} : ${3:type}
            sdy.data_flow_edge (Op) sdy.data_flow_edge %x sharding=<@mesh, [...]> : type | "sdy." -> sdy.data_flow_edge ${1:%x} sharding=<@${2:mesh}, [$3]> : ${4:type}
            sdy.constant (Op) sdy.constant dense<...> : type | "sdy." -> sdy.constant dense<${1:0.0}> : ${2:tensor<f32>}
        "#]].assert_eq(&ops);
    // Without results: also the ops that have none; not sdy.mesh inside a function.
    let bare = at(&func("  $$"));
    assert!(bare.contains("sdy.return (Op)") && !bare.contains("sdy.mesh"), "{bare}");
    // At the module's top level: sdy.mesh only.
    expect![[r#"
            sdy.mesh (Op) sdy.mesh @name = <["axis"=size, ...]> | "sdy." -> sdy.mesh @${1:mesh} = <["${2:x}"=${3:2}]>
        "#]].assert_eq(&at("sdy.$$"));
    expect![[r#"
            @main (Function) (tensor<8x8xf32>, tensor<8xf32>) -> (tensor<8x8xf32>) | "@" -> @main
            @g (Function) (tensor<8xf32>) -> (tensor<8xf32>) | "@" -> @g
        "#]].assert_eq(&at(&format!("{}func.func private @g(%x: tensor<8xf32>) -> tensor<8xf32> {{\n  return %x : tensor<8xf32>\n}}\n", func("  %0 = call @$$"))));
    // Nothing in a comment, nothing after an op name's operands.
    expect![[r#""#]].assert_eq(&at(&func("  // %0 = sdy.$$")));
}

#[test]
fn sharding_attributes() {
    let f = "func.func @f(%a: tensor<8xf32> {$$}) {\n  return\n}\n";
    expect![[r#"
            sdy.sharding (Attribute) the argument's or result's sharding | "" -> sdy.sharding = #sdy.sharding<@${1:mesh}, [$2]>
        "#]].assert_eq(&at(f));
    let op = func("  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sd$$} : tensor<8x8xf32>");
    expect![[r##"
            #sdy.sharding (Attribute) a tensor's sharding | "#sd" -> #sdy.sharding<@${1:mesh}, [$2]>
            #sdy.sharding_per_value (Attribute) the shardings of an op's results | "#sd" -> #sdy.sharding_per_value<[<@${1:mesh}, [$2]>]>
        "##]].assert_eq(&at(&op));
}

#[test]
fn plain_snippets() {
    let s = "sdy.manual_computation(${1:%x}) manual_axes={$5} ${2|NONE,FORWARD|} {\n  $0\n} ${3:a\\}b} \\$";
    expect![[r#"
            sdy.manual_computation(%x) manual_axes={} NONE {
  
            } a}b $"#]]
    .assert_eq(&snippet_to_plain(s));
}

/// Any cursor in text cut anywhere (statements half typed): no panic, ranges hold
/// the cursor and stay on its line.
#[test]
fn every_offset_of_cut_text() {
    let full = format!(
            "{MESHES}{}",
            func("  %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"x\", ?}p1, {}], replicated={\"y\"}> : tensor<8x8xf32>\n  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{\"x\"}, {}]>] out_shardings=[<@mesh, [{\"x\"}, {}]>] manual_axes={\"x\"} (%l: tensor<4x8xf32>) {\n    sdy.return %l : tensor<4x8xf32>\n  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n  return %1 : tensor<8x8xf32>")
        );
    for cut in (0..full.len()).step_by(23) {
        let src = format!("{}{}", &full[..cut], &full[cut..].replacen(['}', '>', ']'], "", 2));
        let chunk = &parse_chunks(&src, false)[0];
        let model = Model::build(chunk);
        let index = Index::new(&model);
        for offset in (0..=src.len() as u32).step_by(3) {
            for i in complete(&model, &index, &src, offset).items {
                assert!(i.replace.start <= offset && offset <= i.replace.end, "{i:?}");
                assert!(!i.replace.text(&src).contains('\n'));
            }
        }
    }
}

/// Any cursor position in real text: no panic, ranges on the cursor.
#[test]
fn every_offset_of_a_module() {
    let src = format!(
            "{MESHES}{}",
            func("  %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"x\", ?}p1, {}], replicated={\"y\"}> : tensor<8x8xf32>\n  %1 = sdy.all_gather [{\"x\"}, {}] %0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32> // é\n  return %1 : tensor<8x8xf32>")
        );
    let chunk = &parse_chunks(&src, false)[0];
    let model = Model::build(chunk);
    let index = Index::new(&model);
    for offset in 0..=src.len() as u32 + 2 {
        let c = complete(&model, &index, &src, offset);
        for i in &c.items {
            assert!(i.replace.start <= offset.min(src.len() as u32));
            assert!(!i.replace.text(&src).contains('\n'));
        }
    }
}
