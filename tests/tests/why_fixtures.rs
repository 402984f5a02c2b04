//! "Why (not)" after a propagation run, on data-driven fixtures: every
//! `tests/fixtures/why/NAME.mlir` (one module, no `// -----`) is propagated with the
//! strategy named on a `// strategy: NAME` line (default: the pipeline); at each `$0`
//! cursor on a value (its definition or a use) the hover's propagation section
//! (`explain::why::explain`) is printed, and at a cursor on `return` the sections of
//! the function's results; then the "ends up replicated" notes. Compared with
//! `NAME.md`; `UPDATE_EXPECT=1 cargo test -p sdy-tests --test why_fixtures` rewrites
//! the expectations.

use sdy_analysis::diag::LineIndex;
use sdy_analysis::explain::{locate, why, why_not};
use sdy_analysis::propagation::editor::{self, sites, Site, Strategy};
use sdy_tests::{fixtures, mlir_files, strip_markers};

fn why_file(text: &str) -> String {
    let (src, cursors) = strip_markers(text);
    let strategy = src
        .lines()
        .find_map(|l| l.strip_prefix("// strategy: "))
        .map_or(Strategy::Pipeline, |s| Strategy::parse(s.trim()).expect("a strategy"));
    let chunk = sdy_analysis::parse_chunks(&src, false).remove(0);
    let a = sdy_analysis::analyze_chunk(&src, &chunk);
    let p = editor::propagate(&src, &chunk, &a.model, &a.diagnostics, strategy);
    assert!(!p.failed, "propagation failed: {:?}", p.diagnostics);
    let index = LineIndex::new(&src);
    let line = |o: u32| Some((index.line_col(o).0, String::new()));
    let mut out = String::new();
    for (n, &offset) in cursors.iter().enumerate() {
        let (l, c) = index.line_col(offset);
        let target = locate::locate(&a.model, offset);
        let found: Vec<Site> = match &target {
            Some(locate::Target::Value { value, .. }) => {
                sites::of_value(&a.model, *value).into_iter().collect()
            }
            Some(locate::Target::OpName { op }) if a.model.op(*op).name() == "func.return" => {
                let func = a.model.op(*op).parent.expect("in a function");
                let start = a.model.op(func).start;
                (0..a.model.op(*op).operands.len())
                    .map(|index| Site::Result { func: start, index })
                    .collect()
            }
            _ => Vec::new(),
        };
        assert!(!found.is_empty(), "cursor {} ({l}:{c}) is on no value", n + 1);
        for site in found {
            out.push_str(&format!("<!-- {}: {l}:{c}: {site:?} -->\n", n + 1));
            match p.value(site) {
                Some(v) => out.push_str(&why::explain(&a.model, &src, &p, v, false, &line)),
                None => out.push_str("not in the run's results\n"),
            }
            out.push('\n');
        }
    }
    out.push_str("<!-- notes -->\n");
    let line_of = |o: u32| Some(index.line_col(o).0);
    for (span, message) in why_not::io_notes(&a.model, &src, &p, &line_of) {
        out.push_str(&format!("- {}: {message}\n", index.line_col(span.start).0));
    }
    out
}

#[test]
fn why_fixtures() {
    for input in mlir_files(&fixtures("why")) {
        let text = std::fs::read_to_string(&input).unwrap();
        expect_test::expect_file![input.with_extension("md")].assert_eq(&why_file(&text));
    }
}
