//! Hover and go-to-definition, in UTF-16 and UTF-8 positions.
mod lsp_common;

use expect_test::expect;
use lsp_common::{capabilities, fixture, pos16, pos8, range, render_hover, TestServer};
use serde_json::{json, Value};

/// (needle, occurrence, bytes into it) for each probe.
const PROBES: &[(&str, usize, usize)] = &[
    ("%0:2", 0, 1),     // result group definition
    ("%0#0", 0, 2),     // use of one result of the group
    ("%arg0:", 0, 3),   // function argument definition
    ("%arg0 :", 0, 1),  // its use
    ("%1 =", 0, 1),     // single result
    ("%c :", 0, 1),     // a value whose type is not written in the signature
    ("@mesh,", 0, 2),   // mesh reference after "é😀" on the same line
    ("@mesh =", 0, 0),  // mesh definition
    ("@helper(", 0, 3), // function reference
    ("@helper(", 1, 3), // function definition
    ("@m2,", 0, 1),     // mesh of the second `// -----` chunk
    ("%b :", 0, 1),     // value in the second chunk
    ("@nowhere", 0, 1), // inside a comment: nothing
    ("stablehlo.add", 0, 2),
];

async fn probe_all(s: &mut TestServer, text: &str, utf8: bool) -> String {
    let mut out = String::new();
    for &(needle, nth, delta) in PROBES {
        let (line, col) =
            if utf8 { pos8(text, needle, nth, delta) } else { pos16(text, needle, nth, delta) };
        let h = s.hover(line, col).await.expect("hover failed");
        let d = s.definition(line, col).await.expect("definition failed");
        let def = if d.is_null() { "null".to_string() } else { range(&d["range"]) };
        out.push_str(&format!(
            "== {needle} @{line}:{col}  definition: {def}\n{}\n",
            render_hover(&h)
        ));
    }
    out
}

#[tokio::test]
async fn hover_and_definition_utf16() {
    let mut s = TestServer::start().await;
    let text = fixture("nav.mlir");
    let d = s.open_and_wait(&text).await;
    assert_eq!(d["diagnostics"], Value::Array(vec![]), "fixture has diagnostics: {d}");
    expect![[r#"
        == %0:2 @3:3  definition: 3:2-3:4
        3:2-3:4 "markdown"
        **`%0#0`** : `tensor<8x8xf32>` — result 0 of `func.call`

        No sharding written: propagation treats it as fully open (any dimension may be sharded).

        1 use.

        == %0#0 @4:23  definition: 3:2-3:4
        4:21-4:25 "markdown"
        **`%0#0`** : `tensor<8x8xf32>` — result 0 of `func.call`

        No sharding written: propagation treats it as fully open (any dimension may be sharded).

        1 use.

        == %arg0: @2:19  definition: 2:16-2:21
        2:16-2:21 "markdown"
        **`%arg0`** : `tensor<8x8xf32>` — argument 0 of `@main`

        Sharding, from the function argument's `sdy.sharding`:

        ```mlir
        #sdy.sharding<@mesh, [{"x"}, {}]>
        ```

        - mesh `@mesh`: `"x"=2`, `"y"=4` · 8 devices · iota device order
        - shards per dimension: 2 × 1
        - per-device shape: `tensor<4x8xf32>`
        - JAX: `P('x', None)`
        - GSPMD: `{devices=[2,1,4]<=[8] last_tile_dim_replicate}`

        2 uses.

        == %arg0 : @4:28  definition: 2:16-2:21
        4:27-4:32 "markdown"
        **`%arg0`** : `tensor<8x8xf32>` — argument 0 of `@main`

        Sharding, from the function argument's `sdy.sharding`:

        ```mlir
        #sdy.sharding<@mesh, [{"x"}, {}]>
        ```

        - mesh `@mesh`: `"x"=2`, `"y"=4` · 8 devices · iota device order
        - shards per dimension: 2 × 1
        - per-device shape: `tensor<4x8xf32>`
        - JAX: `P('x', None)`
        - GSPMD: `{devices=[2,1,4]<=[8] last_tile_dim_replicate}`

        2 uses.

        == %1 = @4:3  definition: 4:2-4:4
        4:2-4:4 "markdown"
        **`%1`** : `tensor<8x8xf32>` — the result of `stablehlo.add`

        No sharding written: propagation treats it as fully open (any dimension may be sharded).

        1 use.

        == %c : @9:14  definition: 8:2-8:4
        9:13-9:15 "markdown"
        **`%c`** : `tensor<8xf32>` — the result of `stablehlo.constant`

        No sharding written: propagation treats it as fully open (any dimension may be sharded).

        1 use.

        == @mesh, @2:89  definition: 1:9-1:14
        2:87-2:92 "markdown"
        **mesh `@mesh`** = `<["x"=2, "y"=4]>`

        | axis | size | stride |
        |---|---:|---:|
        | `"x"` | 2 | 4 |
        | `"y"` | 4 | 1 |

        - 8 devices; the mesh position of a device is Σ index × stride (the last axis is minor-most).
        - device order: iota (the device id is the mesh position).

        | device | "x" | "y" |
        |---:|---:|---:|
        | 0 | 0 | 0 |
        | 1 | 0 | 1 |
        | 2 | 0 | 2 |
        | 3 | 0 | 3 |
        | 4 | 1 | 0 |
        | 5 | 1 | 1 |
        | 6 | 1 | 2 |
        | 7 | 1 | 3 |

        == @mesh = @1:9  definition: 1:9-1:14
        1:9-1:14 "markdown"
        **mesh `@mesh`** = `<["x"=2, "y"=4]>`

        | axis | size | stride |
        |---|---:|---:|
        | `"x"` | 2 | 4 |
        | `"y"` | 4 | 1 |

        - 8 devices; the mesh position of a device is Σ index × stride (the last axis is minor-most).
        - device order: iota (the device id is the mesh position).

        | device | "x" | "y" |
        |---:|---:|---:|
        | 0 | 0 | 0 |
        | 1 | 0 | 1 |
        | 2 | 0 | 2 |
        | 3 | 0 | 3 |
        | 4 | 1 | 0 |
        | 5 | 1 | 1 |
        | 6 | 1 | 2 |
        | 7 | 1 | 3 |

        == @helper( @3:17  definition: 7:18-7:25
        3:14-3:21 "markdown"
        ```mlir
        func.func private @helper
        ```

        1 argument, 2 results
        == @helper( @7:21  definition: 7:18-7:25
        7:18-7:25 "markdown"
        ```mlir
        func.func private @helper
        ```

        1 argument, 2 results
        == @m2, @15:67  definition: 14:9-14:12
        15:66-15:69 "markdown"
        **mesh `@m2`** = `<["z"=2]>`

        | axis | size | stride |
        |---|---:|---:|
        | `"z"` | 2 | 1 |

        - 2 devices; the mesh position of a device is Σ index × stride (the last axis is minor-most).
        - device order: iota (the device id is the mesh position).

        | device | "z" |
        |---:|---:|
        | 0 | 0 |
        | 1 | 1 |

        == %b : @16:10  definition: 15:18-15:20
        16:9-16:11 "markdown"
        **`%b`** : `tensor<4xf32>` — argument 0 of `@second`

        Sharding, from the function argument's `sdy.sharding`:

        ```mlir
        #sdy.sharding<@m2, [{"z"}]>
        ```

        - mesh `@m2`: `"z"=2` · 2 devices · iota device order
        - shards per dimension: 2
        - per-device shape: `tensor<2xf32>`
        - JAX: `P('z')`
        - GSPMD: `{devices=[2]<=[2]}`

        1 use.

        == @nowhere @16:35  definition: null
        null
        == stablehlo.add @4:9  definition: null
        4:7-4:20 "markdown"
        **`stablehlo.add`** · 2 operands · 1 result

        **Sharding rule** (Shardy's registry):

        `#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=8}>`

        | factor | size | operand 0 | operand 1 | result 0 | kind |
        |---|---:|---|---|---|---|
        | `i` | 8 | dim 0 | dim 0 | dim 0 | pass-through |
        | `j` | 8 | dim 1 | dim 1 | dim 1 | pass-through |

        - *pass-through* (`i`, `j`): sharded alike in every tensor that has it: no communication.

    "#]]
    .assert_eq(&probe_all(&mut s, &text, false).await);
}

/// With UTF-8 positions the same probes give the same answers, columns in bytes.
#[tokio::test]
async fn hover_and_definition_utf8() {
    let mut s = TestServer::new();
    let r = s.initialize(capabilities(&["utf-8", "utf-16"])).await;
    assert_eq!(r["capabilities"]["positionEncoding"], "utf-8");
    let text = fixture("nav.mlir");
    s.open_and_wait(&text).await;
    let utf8 = probe_all(&mut s, &text, true).await;

    let mut s16 = TestServer::start().await;
    s16.open_and_wait(&text).await;
    let utf16 = probe_all(&mut s16, &text, false).await;
    // Only the columns on lines with non-ASCII text before them differ.
    let differing = utf8.lines().zip(utf16.lines()).filter(|(a, b)| a != b).count();
    assert!(differing > 0);
    for (a, b) in utf8.lines().zip(utf16.lines()) {
        if a != b {
            assert!(a.starts_with("==") || a.starts_with(char::is_numeric), "{a}\n{b}");
        }
    }
}

#[tokio::test]
async fn plain_text_hover_without_markdown() {
    let mut s = TestServer::new();
    s.initialize(serde_json::json!({})).await;
    let text = fixture("nav.mlir");
    s.open_and_wait(&text).await;
    let (line, col) = pos16(&text, "%1 =", 0, 1);
    let h = s.hover(line, col).await.unwrap();
    expect![[r#"
        4:2-4:4 "plaintext"
        %1 : tensor<8x8xf32> — the result of stablehlo.add

        No sharding written: propagation treats it as fully open (any dimension may be sharded).

        1 use.
    "#]]
    .assert_eq(&render_hover(&h));
}

/// From an op or value whose `loc(...)` names a file position (a JAX export), to that
/// line of that file when it exists (relative to the document's directory); nothing
/// when it does not.
#[tokio::test]
async fn definition_into_the_python_source() {
    let dir = std::env::temp_dir().join(format!("sdy-nav-loc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.py"), "import jax\n\ndef f(x):\n    return -x\n").unwrap();
    let uri = format!("file://{}/a.mlir", dir.display());
    let text = "func.func @main(%arg0: tensor<8xf32> loc(\"x\")) -> tensor<8xf32> {\n  \
                %0 = stablehlo.negate %arg0 : tensor<8xf32> loc(#loc2)\n  \
                %1 = stablehlo.abs %0 : tensor<8xf32> loc(\"gone.py\":3:1)\n  \
                return %1 : tensor<8xf32>\n}\n\
                #loc1 = loc(\"model.py\":4:12)\n\
                #loc2 = loc(\"jit(f)/neg\"(#loc1))\n";
    let mut s = TestServer::start().await;
    s.open(&uri, 1, text).await;
    s.diagnostics_for(&uri, 1).await;
    let at = |line: u32, character: u32| json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
    let neg = s.request("textDocument/definition", at(1, 20)).await.unwrap();
    assert!(neg["uri"].as_str().unwrap().ends_with("/model.py"), "{neg}");
    assert_eq!(range(&neg["range"]), "3:11-3:11");
    // The op's result at its definition leads there too.
    let v = s.request("textDocument/definition", at(1, 3)).await.unwrap();
    assert!(v["uri"].as_str().unwrap().ends_with("/model.py"), "{v}");
    // A file that does not exist: no jump.
    let gone = s.request("textDocument/definition", at(2, 20)).await.unwrap();
    assert!(gone.is_null(), "{gone}");
    let _ = std::fs::remove_dir_all(&dir);
}
