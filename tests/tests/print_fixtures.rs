//! The printer on data-driven fixtures: every `tests/fixtures/print/NAME.mlir` is split
//! at `// -----`, each chunk is printed like `sdy_opt` prints it (a chunk that does not
//! parse shows its first parse failure instead), and the result is compared with
//! `NAME.out`. `UPDATE_EXPECT=1 cargo test -p sdy-tests --test print_fixtures` rewrites
//! the expectations.
//!
//! Also: `sdy-lsp opt` run as a process on a split file with a syntax error, and the
//! IR's modification API (what propagation uses) printing a changed module.
//!
//! Development aid: `PRINT_FILE=path.mlir cargo test -p sdy-tests --test print_fixtures
//! print_file -- --nocapture` prints any file (split when it contains `// -----`),
//! without the verifier.

use sdy_analysis::diag::LineIndex;
use sdy_analysis::ir::build_module;
use sdy_analysis::ir::{Attr, Op};
use sdy_analysis::print::{print_chunk, print_module};
use sdy_analysis::sharding::{AxisRef, DimSharding, MeshRef, Reduction, TensorSharding};
use sdy_analysis::syntax_diags::{first_parse_failure, syntax_diagnostics};
use sdy_tests::sdy_lsp;
use sdy_tests::{fixtures, mlir_files};
use std::path::Path;
use std::process::Command;

/// Each chunk printed, or its first parse failure as `error: LINE:COL: MESSAGE` lines;
/// joined with `// -----` lines like `sdy_opt -split-input-file`.
fn print_file(text: &str) -> String {
    let split = text.contains("// -----");
    let index = LineIndex::new(text);
    let mut outs = Vec::new();
    for chunk in sdy_analysis::parse_chunks(text, split) {
        let failure = first_parse_failure(&syntax_diagnostics(&chunk));
        if failure.is_empty() {
            outs.push(print_chunk(text, &chunk));
        } else {
            let mut s = String::new();
            for d in failure {
                let (l, c) = index.line_col(d.span.start);
                s.push_str(&format!("error: {l}:{c}: {}\n", d.message));
            }
            outs.push(s);
        }
    }
    outs.join("// -----\n")
}

#[test]
fn print_fixtures() {
    for input in mlir_files(&fixtures("print")) {
        let text = std::fs::read_to_string(&input).unwrap();
        let expected = input.with_extension("out");
        expect_test::expect_file![expected].assert_eq(&print_file(&text));
    }
}

/// Development aid (see the module docs); does nothing unless `PRINT_FILE` is set.
#[test]
fn print_file_from_env() {
    if let Some(path) = std::env::var_os("PRINT_FILE") {
        let text = std::fs::read_to_string(path).unwrap();
        print!("{}", print_file(&text));
    }
}

/// The printer copes with every chunk of the conformance corpus (when `../shared` is
/// there), including chunks that do not parse or verify.
#[test]
fn prints_every_conformance_chunk() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance");
    let Ok(folders) = std::fs::read_dir(&dir) else { return };
    let mut n = 0;
    for folder in folders.flatten() {
        let Ok(files) = std::fs::read_dir(folder.path()) else { continue };
        for f in files.flatten() {
            let Ok(text) = std::fs::read_to_string(f.path()) else { continue };
            for chunk in sdy_analysis::parse_chunks(&text, true) {
                let out = print_chunk(&text, &chunk);
                assert!(out.starts_with("module"), "{}", f.path().display());
                n += 1;
            }
        }
    }
    eprintln!("printed {n} chunks");
}

/// The IR can be changed and printed: a new result sharding, a changed function
/// argument sharding, and an inserted `sdy.reshard` whose result replaces the uses.
#[test]
fn modified_module() {
    let src = r#"sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"#;
    let chunk = &sdy_analysis::parse_chunks(src, false)[0];
    let mut m = build_module(src, chunk);
    let sharding = |dims: &[&[&str]]| TensorSharding {
        mesh: MeshRef::Symbol("mesh".into()),
        dims: dims
            .iter()
            .map(|d| DimSharding {
                axes: d.iter().map(|a| AxisRef::full(*a)).collect(),
                open: false,
                priority: None,
            })
            .collect(),
        replicated: Vec::new(),
        unreduced: Vec::new(),
        reduction: Reduction::Sum,
    };
    let add_at = src.find("%0 = stablehlo.add").unwrap() as u32;
    let add = m.op_at_mut(add_at).unwrap();
    add.set_attr("sdy.sharding", Attr::PerValue(vec![sharding(&[&["a"], &[]])]));
    let add_result = add.results[0];
    let func = &mut m.body_mut().unwrap()[1];
    func.func_mut().unwrap().args[0]
        .set_attr("sdy.sharding", Attr::Sharding(sharding(&[&[], &["b"]])));
    // %r = sdy.reshard %0 <@mesh, [{}, {"a"}]> right after the add; the multiply uses it.
    let ty = m.ty(add_result).map(str::to_string);
    let r = m.new_value(ty);
    let reshard = Op::pretty("sdy.reshard", vec![add_result], vec![r], Vec::new());
    let mut reshard = reshard;
    reshard.set_prop("sharding", Attr::Sharding(sharding(&[&[], &["a"]])));
    let body = &mut m.body_mut().unwrap()[1].regions[0].blocks[0].ops;
    body[1].replace_uses(add_result, r);
    body.insert(1, reshard);
    expect_test::expect![[r#"
        module {
          sdy.mesh @mesh = <["a"=2, "b"=2]>
          func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) -> tensor<8x8xf32> {
            %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<8x8xf32>
            %1 = sdy.reshard %0 <@mesh, [{}, {"a"}]> : tensor<8x8xf32>
            %2 = stablehlo.multiply %1, %1 : tensor<8x8xf32>
            return %2 : tensor<8x8xf32>
          }
        }
    "#]]
    .assert_eq(&print_module(&m));
}

#[test]
fn opt_binary_split_file_with_syntax_error() {
    let dir = std::env::temp_dir().join(format!("sdy-print-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("split.mlir");
    std::fs::write(
        &file,
        "func.func @ok(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n\
         // -----\n\
         sdy.mesh @bad = <[\"x\"=2, y=2]>\n\
         // -----\n\
         sdy.mesh @m = <[\"x\"=2,\"y\"=2], device_ids=[0,1,2,3]>\n",
    )
    .unwrap();
    let out =
        Command::new(sdy_lsp()).arg("opt").arg(&file).arg("-split-input-file").output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(
        stdout,
        "module {\n  func.func @ok(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    return %arg0 : tensor<4xf32>\n  }\n}\n\
         // -----\n\
         // -----\n\
         module {\n  sdy.mesh @m = <[\"x\"=2, \"y\"=2]>\n}\n"
    );
    let name = file.display().to_string();
    assert_eq!(
        stderr,
        format!(
            "{name}:5:26: error: custom op 'sdy.mesh' expected string\n\
             {name}:5:26: error: custom op 'sdy.mesh' failed to parse Sdy_MeshAxis parameter 'name' which is to be a `::llvm::StringRef`\n\
             {name}:5:26: error: custom op 'sdy.mesh' failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`\n"
        )
    );

    // Unknown passes are refused.
    let out =
        Command::new(sdy_lsp()).arg("opt").arg(&file).arg("-sdy-no-such-pass").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "sdy-lsp opt: unknown pass or option '-sdy-no-such-pass'\n"
    );

    // -verify-diagnostics: the expected error matches, the module of the good chunk
    // is still printed, and the exit status is 0.
    let annotated = dir.join("verify.mlir");
    std::fs::write(
        &annotated,
        "func.func @ok() {\n  return\n}\n// -----\n\
         // expected-error@+2 {{expected string}}\n\
         // expected-error@+1 {{failed to parse Sdy_MeshAxis parameter 'name'}}\n\
         sdy.mesh @bad = <[\"x\"=2, y=2]> // expected-error {{parameter 'axes'}}\n",
    )
    .unwrap();
    let out = Command::new(sdy_lsp())
        .arg("opt")
        .arg(&annotated)
        .arg("--split-input-file")
        .arg("--verify-diagnostics")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("module {\n  func.func @ok() {\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
