//! "Explain this" on data-driven fixtures: every `tests/fixtures/explain/NAME.mlir`
//! marks cursor positions with `$0`; the markers are stripped, the text is analysed
//! (split at `// -----` when it has such lines) and the explanation at each cursor is
//! compared, in order, with `NAME.md`. `UPDATE_EXPECT=1 cargo test -p sdy-tests --test
//! explain_fixtures` rewrites the expectations.

use sdy_analysis::diag::LineIndex;
use sdy_tests::{fixtures, mlir_files, sdy_lsp, strip_markers, MARKER};

/// Each cursor's explanation under a header naming its position and what it covers.
fn explain_file(text: &str) -> String {
    let (src, cursors) = strip_markers(text);
    assert!(!cursors.is_empty(), "a fixture needs at least one {MARKER} cursor");
    let split = src.contains("\n// -----");
    let chunks = sdy_analysis::parse_chunks(&src, split);
    let models: Vec<_> = chunks.iter().map(sdy_analysis::model::Model::build).collect();
    let index = LineIndex::new(&src);
    let mut out = String::new();
    for (n, &offset) in cursors.iter().enumerate() {
        let (line, col) = index.line_col(offset);
        if n > 0 {
            out.push('\n');
        }
        let model = chunks
            .iter()
            .position(|c| c.span.start <= offset && offset <= c.span.end)
            .map(|i| &models[i]);
        match model.and_then(|m| sdy_analysis::explain::at(m, &src, offset)) {
            Some(e) => {
                let covered = e.range.text(&src).replace('\n', " ");
                out.push_str(&format!("<!-- {}: {line}:{col} on `{covered}` -->\n", n + 1));
                out.push_str(&e.markdown);
            }
            None => {
                out.push_str(&format!("<!-- {}: {line}:{col}: nothing to explain -->\n", n + 1))
            }
        }
    }
    out
}

#[test]
fn explain_fixtures() {
    for input in mlir_files(&fixtures("explain")) {
        let text = std::fs::read_to_string(&input).unwrap();
        expect_test::expect_file![input.with_extension("md")].assert_eq(&explain_file(&text));
    }
}

/// Hovering every byte of every fixture never panics, and ranges lie in the text.
#[test]
fn every_offset() {
    for path in mlir_files(&fixtures("explain")) {
        let (src, _) = strip_markers(&std::fs::read_to_string(&path).unwrap());
        for chunk in sdy_analysis::parse_chunks(&src, src.contains("\n// -----")) {
            let model = sdy_analysis::model::Model::build(&chunk);
            for offset in chunk.span.start..=chunk.span.end {
                if let Some(e) = sdy_analysis::explain::at(&model, &src, offset) {
                    let ok = e.range.start <= offset && offset < e.range.end.max(e.range.start + 1);
                    assert!(ok, "{}: offset {offset} outside {:?}", path.display(), e.range);
                    assert!(e.range.end as usize <= src.len());
                }
            }
        }
    }
}

/// `sdy-lsp explain FILE:LINE:COL` prints the same markdown; exit status 1 when there is
/// nothing to explain, 2 for a bad position.
#[test]
fn explain_binary() {
    let dir = std::env::temp_dir().join(format!("sdy-explain-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.mlir");
    let src = "sdy.mesh @mesh = <[\"x\"=2]>\n\
               // -----\n\
               sdy.mesh @mesh = <[\"x\"=4]>\n\
               func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) {\n  return\n}\n";
    std::fs::write(&file, src).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(sdy_lsp()).arg("explain").args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let name = file.display().to_string();
    // Line 4, on `[` of the sharding: the chunk's own mesh (4 devices) when split.
    let col = src.lines().nth(3).unwrap().find("[{").unwrap() + 1;
    let (code, out, _) = run(&["--split-input-file", "--markdown", &format!("{name}:4:{col}")]);
    assert_eq!(code, Some(0));
    let offset = src.find("[{").unwrap() as u32;
    let chunk = sdy_analysis::parse_chunks(src, true).into_iter().nth(1).unwrap();
    let model = sdy_analysis::model::Model::build(&chunk);
    assert_eq!(out, sdy_analysis::explain::at(&model, src, offset).unwrap().markdown);
    assert!(out.contains("4 devices"), "{out}");
    let (code, out, err) = run(&[&format!("{name}:2:4")]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert_eq!(err, format!("sdy-lsp explain: nothing to explain at {name}:2:4\n"));
    let (code, _, _) = run(&[&format!("{name}:99:1")]);
    assert_eq!(code, Some(2));
    let (code, _, _) = run(&[&name]);
    assert_eq!(code, Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Explaining never panics on damaged text: each fixture with bytes deleted or
/// duplicated at pseudo-random places, explained at many offsets.
#[test]
fn mutated_fixtures() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for path in mlir_files(&fixtures("explain")) {
        let (src, _) = strip_markers(&std::fs::read_to_string(&path).unwrap());
        for _ in 0..20 {
            let mut bytes = src.clone().into_bytes();
            for _ in 0..3 {
                let i = next(bytes.len());
                if next(2) == 0 {
                    bytes.remove(i);
                } else {
                    bytes.insert(i, bytes[i]);
                }
            }
            let Ok(text) = String::from_utf8(bytes) else { continue };
            let chunk = &sdy_analysis::parse_chunks(&text, false)[0];
            let model = sdy_analysis::model::Model::build(chunk);
            for offset in (0..=text.len() as u32).step_by(3) {
                let _ = sdy_analysis::explain::at(&model, &text, offset);
            }
        }
    }
}
