//! Document symbols (nested and flat) and folding ranges, on split files with non-ASCII
//! text before names (UTF-16 columns).
mod lsp_common;

use expect_test::expect;
use lsp_common::{capabilities, fixture, range, TestServer, URI};
use serde_json::{json, Value};

async fn server(hierarchical: bool, text: &str) -> TestServer {
    let mut caps = capabilities(&[]);
    caps["textDocument"]["documentSymbol"] =
        json!({"hierarchicalDocumentSymbolSupport": hierarchical});
    let mut s = TestServer::new();
    s.initialize(caps).await;
    let d = s.open_and_wait(text).await;
    assert_eq!(d["diagnostics"], json!([]), "the fixture has diagnostics: {d}");
    s
}

fn doc() -> Value {
    json!({"textDocument": {"uri": URI}})
}

fn render(symbols: &Value, depth: usize, out: &mut String) {
    for s in symbols.as_array().expect("symbols") {
        out.push_str(&format!(
            "{}{} ({}) {} [{}] selects {}\n",
            "  ".repeat(depth),
            s["name"].as_str().unwrap(),
            s["kind"],
            range(&s["range"]),
            s["detail"].as_str().unwrap_or(""),
            range(&s["selectionRange"]),
        ));
        if let Some(children) = s.get("children") {
            render(children, depth + 1, out);
        }
    }
}

#[tokio::test]
async fn nested_symbols_per_chunk() {
    let text = fixture("outline.mlir");
    let mut s = server(true, &text).await;
    let r = s.request("textDocument/documentSymbol", doc()).await.unwrap();
    let mut out = String::new();
    render(&r, 0, &mut out);
    expect![[r#"
        chunk 1 (3) 0:0-17:0 [// ----- split, line 1] selects 1:7-1:13
          @jit_f (2) 1:0-15:1 [builtin.module] selects 1:7-1:13
            @mesh (23) 3:2-3:42 [<["data"=2, "model"=4]>] selects 3:11-3:16
              "data" (8) 3:21-3:29 [size 2] selects 3:21-3:27
              "model" (8) 3:31-3:40 [size 4] selects 3:31-3:38
            @main (12) 4:2-14:3 [public 1 argument, 1 result] selects 4:19-4:24
              "blöck😀" (6) 5:4-10:46 [%0 = sdy.named_computation] selects 5:31-5:40
                %1 = sdy.manual_computation (19) 6:6-8:48 [manual_axes={"data"}] selects 6:11-6:33
        chunk 2 (3) 17:8-31:0 [// ----- split, line 18] selects 19:9-19:11
          @m (23) 19:0-19:23 [<["x"=2]>] selects 19:9-19:11
            "x" (8) 19:16-19:21 [size 2] selects 19:16-19:19
          @f (12) 20:0-22:1 [1 argument, 1 result] selects 20:10-20:12
    "#]]
    .assert_eq(&out);
}

#[tokio::test]
async fn flat_symbols_name_their_container() {
    let text = fixture("outline.mlir");
    let mut s = server(false, &text).await;
    let r = s.request("textDocument/documentSymbol", doc()).await.unwrap();
    let out: Vec<String> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert!(s.get("children").is_none());
            format!(
                "{} in {} at {}",
                s["name"].as_str().unwrap(),
                s["containerName"].as_str().unwrap_or("-"),
                range(&s["location"]["range"])
            )
        })
        .collect();
    expect![[r#"
        chunk 1 in - at 0:0-17:0
        @jit_f in chunk 1 at 1:0-15:1
        @mesh in @jit_f at 3:2-3:42
        "data" in @mesh at 3:21-3:29
        "model" in @mesh at 3:31-3:40
        @main in @jit_f at 4:2-14:3
        "blöck😀" in @main at 5:4-10:46
        %1 = sdy.manual_computation in "blöck😀" at 6:6-8:48
        chunk 2 in - at 17:8-31:0
        @m in chunk 2 at 19:0-19:23
        "x" in @m at 19:16-19:21
        @f in chunk 2 at 20:0-22:1"#]]
    .assert_eq(&out.join("\n"));
}

#[tokio::test]
async fn folding_ranges() {
    let text = fixture("outline.mlir");
    let mut s = server(true, &text).await;
    let r = s.request("textDocument/foldingRange", doc()).await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let out: Vec<String> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let (a, b) = (f["startLine"].as_u64().unwrap(), f["endLine"].as_u64().unwrap());
            assert!(a < b);
            format!("{a}-{b} {}: {}", f["kind"], lines[a as usize].trim())
        })
        .collect();
    expect![[r#"
        0-16 "region": // Outline and folding: two chunks, "é😀" in strings before names.
        1-2 "region": module @jit_f attributes {mhlo.frontend_attributes = {note = "é😀"},
        2-14 "region": mhlo.num_partitions = 8 : i32} {
        4-13 "region": func.func public @main(%arg0: tensor<8x16xf32> {jax.name = "é😀", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<8x16xf32> {
        5-9 "region": %0 = sdy.named_computation<"blöck😀">(%arg0) (%a: tensor<8x16xf32>) {
        6-7 "region": %1 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%b: tensor<4x16xf32>) {
        11-12 "region": %2 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [
        17-30 "region": // -----
        20-21 "region": func.func @f(%x: tensor<2xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}]>}) -> tensor<2xf32> {
        24-29 "region": {-#"#]].assert_eq(&out.join("\n"));
}
