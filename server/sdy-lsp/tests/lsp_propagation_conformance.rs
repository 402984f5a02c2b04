//! The shardings the editor shows are the ones `opt` prints, on Shardy's own
//! propagation tests (`../shared/conformance/propagation`, read at test time when the
//! folder exists; skipped otherwise).
//!
//! For every case of the files below that passes (`tests/conformance-baseline.txt`,
//! case names from the shared harness's `lit_cases.py`) and that `opt` prints a module
//! for, the test opens the file in the server, runs `sdy.propagate` with the file's
//! strategy, and compares, value by value, what `sdy-lsp opt <case> -<pass>` prints
//! with what the editor shows:
//! * the hover of each op result and function argument ("**Propagated**: ...");
//! * the inlay hint after each op result, function argument and function result with
//!   no written sharding (a label names the mesh only when the chunk has several, so it
//!   is compared with opt's mesh then, with the dimensions otherwise);
//! * after a written sharding of an op result, the extension hint (`→ ...`): opt's
//!   sharding where the pass changed the axes, none where it did not.
//!
//! Printed ops are matched to source ops per function by a heaviest common subsequence
//! of op names (weighted by their operands' and users' ops) (passes erase dead ops, split constants, turn constraints into
//! reshards); a value with several copies in the printed module (a split constant)
//! must show the printed sharding among its variants.
//!
//! Files whose RUN line is not a single strategy with default options are left out:
//! `basic_propagation_conservative` (conservative-propagation), `..._keep_sharding_rules`,
//! `..._manual_computation` and `..._token` (edges added and sunk around the pass),
//! `propagation_pipeline_dedup_functions_fully_true` (a pipeline option), and the
//! `op_sharding_rule_registry*` files (no propagation).
mod lsp_common;

use lsp_common::TestServer;
use sdy_analysis::model::{Model, OpId, ValueDef, ValueId};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// (file, editor strategy, the flag in its RUN line)
const FILES: &[(&str, &str, &str)] = &[
    ("aggressive_propagation.mlir", "aggressive", "-sdy-aggressive-propagate"),
    ("basic_propagation.mlir", "basic", "-sdy-basic-propagate"),
    ("basic_propagation_data_flow_edges.mlir", "basic", "-sdy-basic-propagate"),
    ("op_priority_propagation.mlir", "op-priority", "-sdy-op-priority-propagate"),
    ("sharding_group_propagation.mlir", "basic", "-sdy-basic-propagate"),
    ("user_priority_propagation.mlir", "user-priority", "-sdy-user-priority-propagate"),
    ("propagation_pipeline.mlir", "pipeline", "-sdy-propagation-pipeline"),
    ("propagation_pipeline_data_flow_edges.mlir", "pipeline", "-sdy-propagation-pipeline"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The cases of a lit file: (name, 0-based lines), from the shared harness.
fn cases(tools: &Path, file: &Path) -> Option<Vec<(String, Vec<usize>)>> {
    let script = format!(
        "import sys, json\nsys.path.insert(0, {tools:?})\nimport lit_cases\n\
         lf = lit_cases.parse_lit_file({file:?})\n\
         print(json.dumps([[c.name, c.lines] for c in lf.cases]))",
        tools = tools.to_str()?,
        file = file.to_str()?
    );
    let out = Command::new("python3").args(["-c", &script]).output().ok()?;
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(
        v.as_array()?
            .iter()
            .map(|c| {
                let lines = c[1].as_array().unwrap().iter().map(|l| l.as_u64().unwrap() as usize);
                (c[0].as_str().unwrap().to_string(), lines.collect())
            })
            .collect(),
    )
}

/// What `sdy-lsp opt - <flag>` prints for `text`.
fn opt(text: &str, flag: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sdy-lsp"))
        .args(["opt", "-", flag])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn analyze(text: &str) -> Model {
    let chunk = sdy_analysis::parse_chunks(text, false).remove(0);
    sdy_analysis::analyze_chunk(text, &chunk).model
}

/// The printed sharding of a value as `<@mesh, [...]>`, or `None`.
fn printed_sharding(model: &Model, src: &str, v: ValueId) -> Option<String> {
    let (s, _, _) = sdy_analysis::explain::value_sharding(model, v)?;
    let text = &src[s.span.start as usize..s.span.end as usize];
    Some(text.strip_prefix("#sdy.sharding").unwrap_or(text).to_string())
}

/// `<@mesh, [{"x"}]>` -> `@mesh [{"x"}]` (the hint's form with its mesh).
fn compact(s: &str) -> String {
    let body = s.strip_prefix('<').and_then(|b| b.strip_suffix('>')).unwrap_or(s);
    body.find(", [").map_or(body.to_string(), |i| format!("{} {}", &body[..i], &body[i + 2..]))
}

/// The axes of a sharding's text (`[{"a", ?}, {?}p1]` -> `[{"a"},{}]`): what an
/// extension hint is about (open/closed and priorities aside).
fn axes(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '?' => {}
            'p' if chars.peek().is_some_and(char::is_ascii_digit) => {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
            }
            c => out.push(c),
        }
    }
    out.replace(",}", "}")
}

/// Whether a hint label shows the sharding `want` (`@mesh [...]`): a label names the
/// mesh only when the chunk has several, so without one it must match the dimensions.
fn label_shows(label: &str, want: &str) -> bool {
    if label.starts_with('@') {
        return label == want;
    }
    want.split_once(' ').is_some_and(|(_, dims)| dims == label)
}

async fn hover(s: &mut TestServer, uri: &str, pos: (u32, u32)) -> Value {
    let p = json!({"textDocument": {"uri": uri}, "position": {"line": pos.0, "character": pos.1}});
    s.request("textDocument/hover", p).await.expect("hover")
}

/// Normalized op names (what passes rename).
fn norm(name: &str) -> &str {
    match name {
        "stablehlo.constant" => "sdy.constant",
        "sdy.sharding_constraint" => "sdy.reshard",
        n => n,
    }
}

/// The ops of each function body (pre-order), by function name.
fn func_ops(model: &Model, name: &str) -> Vec<OpId> {
    let Some(&f) = model.funcs.get(name) else { return Vec::new() };
    (f + 1..model.subtree_end(f)).collect()
}

/// What an op is matched by: its name, the ops defining its operands (`^` for a block
/// argument), the ops using its results (normalized, sorted).
type Key<'a> = (&'a str, Vec<&'a str>, Vec<&'a str>);

fn key(m: &Model, o: OpId) -> Key<'_> {
    let info = m.op(o);
    let defs = info
        .operands
        .iter()
        .map(|v| match v.map(|v| &m.value(v).def) {
            Some(ValueDef::Result { op, .. }) => norm(m.op(*op).name()),
            Some(ValueDef::BlockArg { .. }) => "^",
            None => "?",
        })
        .collect();
    let mut users: Vec<&str> = info
        .results
        .iter()
        .flat_map(|&v| m.value(v).uses.iter().map(|u| norm(m.op(u.op).name())))
        .collect();
    users.sort();
    (norm(info.name()), defs, users)
}

/// Pairs of a heaviest common subsequence of two op lists: ops match by name, and a
/// match with the same operand definitions or users weighs more (of two constraints on
/// one value, the pass keeps the one with users; a constraint a pass inserts takes
/// over the users of the one before it but not its operand).
fn lcs(a: &[Key], b: &[Key]) -> Vec<(usize, usize)> {
    let w = |i: usize, j: usize| -> u32 {
        if a[i].0 != b[j].0 {
            return 0;
        }
        2 + u32::from(a[i].1 == b[j].1) + u32::from(a[i].2 == b[j].2)
    };
    let mut t = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            let m = if w(i, j) > 0 { t[i + 1][j + 1] + w(i, j) } else { 0 };
            t[i][j] = m.max(t[i + 1][j]).max(t[i][j + 1]);
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        if w(i, j) > 0 && t[i][j] == t[i + 1][j + 1] + w(i, j) {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if t[i + 1][j] >= t[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The "**Propagated** (`s`): X" parts of a hover, in order: the shardings shown
/// (several for a value with copies), `None` for "no sharding".
fn shown_in_hover(md: &str) -> Vec<Vec<Option<String>>> {
    let mut out = Vec::new();
    for part in md.split("**Propagated**").skip(1) {
        let head = part.lines().next().unwrap_or("");
        let mut list = Vec::new();
        let rest: Vec<&str> = if head.contains("copies that differ") {
            part.lines().skip(1).take_while(|l| l.starts_with("- in ")).collect()
        } else {
            vec![head]
        };
        for l in rest {
            if l.contains("no sharding") {
                list.push(None);
            } else if let Some(i) = l.find("`#sdy.sharding") {
                let s = &l[i + 1..];
                let s = &s[..s.find('`').unwrap_or(s.len())];
                list.push(Some(s.trim_start_matches("#sdy.sharding").to_string()));
            }
        }
        out.push(list);
    }
    out
}

#[derive(Default)]
struct Tally {
    cases: usize,
    hovers: usize,
    hints: usize,
    /// Written shardings checked for an extension hint.
    extensions: usize,
    /// ... of which the pass changed (an extension hint shown).
    extended: usize,
    unmatched_ops: usize,
    errors: Vec<String>,
}

#[tokio::test]
async fn editor_shows_what_opt_prints() {
    let root = root();
    let dir = root.join("../shared/conformance/propagation");
    let tools = root.join("../shared/tools");
    if !dir.exists() || cases(&tools, &dir.join(FILES[0].0)).is_none() {
        eprintln!("skipping: ../shared/conformance or python3 with lit_cases.py not available");
        return;
    }
    let baseline: HashSet<String> =
        std::fs::read_to_string(root.join("tests/conformance-baseline.txt"))
            .unwrap()
            .lines()
            .map(|l| l.trim().to_string())
            .collect();
    let mut tally = Tally::default();
    for &(name, strategy, flag) in FILES {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let run = text.lines().find(|l| l.contains("RUN:")).unwrap();
        assert!(run.contains(flag) && run.contains("-split-input-file"), "{name}: {run}");
        let file_lines: Vec<&str> = text.split('\n').collect();
        let uri = format!("file:///conformance/{name}");
        let mut s = TestServer::new();
        s.initialize(lsp_common::capabilities(&[])).await;
        s.open(&uri, 1, &text).await;
        s.diagnostics_for(&uri, 1).await;
        let args = json!([{"uri": uri, "strategy": strategy}]);
        let answer = s
            .request(
                "workspace/executeCommand",
                json!({"command": "sdy.propagate", "arguments": args}),
            )
            .await
            .expect("sdy.propagate");
        assert!(answer["version"] == 1, "{name}: {answer}");
        let all = format!(
            "{{\"start\":{{\"line\":0,\"character\":0}},\"end\":{{\"line\":{},\"character\":0}}}}",
            file_lines.len()
        );
        let hints = s
            .request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": serde_json::from_str::<Value>(&all).unwrap()}))
            .await
            .expect("inlayHint");
        let hints = hints.as_array().unwrap().clone();
        for (case, lines) in cases(&tools, &path).unwrap() {
            if !baseline.contains(&format!("propagation/{name}::{case}")) || lines.is_empty() {
                continue;
            }
            let first = lines[0];
            let chunk: String = lines.iter().map(|&i| format!("{}\n", file_lines[i])).collect();
            let printed = opt(&chunk, flag);
            if printed.trim().is_empty() {
                continue; // a verifier case: opt prints nothing
            }
            tally.cases += 1;
            let src = analyze(&chunk);
            let out = analyze(&printed);
            let at = |span_start: u32| -> (u32, u32) {
                let before = &chunk[..span_start as usize];
                let line = before.matches('\n').count();
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
                ((first + line) as u32, col as u32)
            };
            let hint_at = |pos: (u32, u32)| -> Vec<String> {
                hints
                    .iter()
                    .filter(|h| h["position"] == json!({"line": pos.0, "character": pos.1}))
                    .map(|h| h["label"].as_str().unwrap().to_string())
                    .filter(|l| !l.starts_with("per-device"))
                    .collect()
            };
            let mut funcs: Vec<&String> = src.funcs.keys().collect();
            funcs.sort();
            for f in funcs {
                if !out.funcs.contains_key(f) {
                    continue;
                }
                let (sf, of) = (src.funcs[f], out.funcs[f]);
                // Function arguments: the hover on their definition.
                for (k, &a) in src.op(sf).region_args.first().into_iter().flatten().enumerate() {
                    let Some(&b) = out.op(of).region_args.first().and_then(|r| r.get(k)) else {
                        continue;
                    };
                    let want = printed_sharding(&out, &printed, b);
                    let pos = at(src.value(a).span.start);
                    let h = hover(&mut s, &uri, pos).await;
                    let got = shown_in_hover(h["contents"]["value"].as_str().unwrap_or(""));
                    tally.hovers += 1;
                    if got.first().is_none_or(|g| !g.contains(&want)) {
                        tally.errors.push(format!(
                            "{name}::{case} @{f} arg {k}: opt {want:?}, hover {got:?}"
                        ));
                    }
                    // Without a written sharding: the hint after the type.
                    let sdy_syntax::tree::Custom::Func(sh) = &src.op(sf).node.custom else {
                        continue;
                    };
                    let Some(arg) = sh.args.get(k) else { continue };
                    if sdy_analysis::explain::value_sharding(&src, a).is_some() {
                        continue;
                    }
                    let got = hint_at(at(arg.ty.span.end + src.op(sf).start));
                    let want = want.as_deref().map(compact);
                    tally.hints += 1;
                    let ok = match (got.first(), &want) {
                        (None, None) => true,
                        (Some(l), Some(w)) => l.split(" | ").any(|x| label_shows(x, w)),
                        _ => false,
                    };
                    if !ok {
                        tally.errors.push(format!(
                            "{name}::{case} @{f} arg {k}: opt {want:?}, hint {got:?}"
                        ));
                    }
                }
                // Function results without a written sharding: the hint after the type.
                let sdy_syntax::tree::Custom::Func(sh) = &src.op(sf).node.custom else { continue };
                let sdy_syntax::tree::Custom::Func(oh) = &out.op(of).node.custom else { continue };
                for (k, r) in sh.results.iter().enumerate() {
                    if r.attrs.as_ref().is_some_and(|d| d.get("sdy.sharding").is_some()) {
                        continue;
                    }
                    let want = oh
                        .results
                        .get(k)
                        .and_then(|o| o.attrs.as_ref())
                        .and_then(|d| d.get("sdy.sharding"))
                        .map(|a| {
                            let start = out.op(of).start;
                            let v = a.value.as_ref().unwrap().span.shift(start);
                            compact(
                                printed[v.start as usize..v.end as usize]
                                    .trim_start_matches("#sdy.sharding"),
                            )
                        });
                    let got = hint_at(at(r.ty.span.end + src.op(sf).start));
                    tally.hints += 1;
                    let ok = match (got.first(), &want) {
                        (None, None) => true,
                        (Some(l), Some(w)) => l.split(" | ").any(|x| label_shows(x, w)),
                        _ => false,
                    };
                    if !ok {
                        tally.errors.push(format!(
                            "{name}::{case} @{f} result {k}: opt {want:?}, hint {got:?}"
                        ));
                    }
                }
                // Op results.
                let (a_ops, b_ops) = (func_ops(&src, f), func_ops(&out, f));
                let a_keys: Vec<_> = a_ops.iter().map(|&o| key(&src, o)).collect();
                let b_keys: Vec<_> = b_ops.iter().map(|&o| key(&out, o)).collect();
                let pairs = lcs(&a_keys, &b_keys);
                tally.unmatched_ops += a_ops.len() - pairs.len();
                for (i, j) in pairs {
                    let (sa, sb) = (src.op(a_ops[i]), out.op(b_ops[j]));
                    if sa.results.is_empty() || sa.results.len() != sb.results.len() {
                        continue;
                    }
                    let wants: Vec<Option<String>> =
                        sb.results.iter().map(|&v| printed_sharding(&out, &printed, v)).collect();
                    let pos = at(sa.name_span().start);
                    let h = hover(&mut s, &uri, pos).await;
                    let got = shown_in_hover(h["contents"]["value"].as_str().unwrap_or(""));
                    tally.hovers += wants.len();
                    for (k, want) in wants.iter().enumerate() {
                        if got.get(k).is_none_or(|g| !g.contains(want)) {
                            tally.errors.push(format!(
                                "{name}::{case} @{f} {} result {k}: opt {want:?}, hover {:?}",
                                sa.name(),
                                got.get(k)
                            ));
                        }
                    }
                    // The hint after each result group, for results without a written one.
                    let labels: Vec<String> = sa
                        .node
                        .results
                        .iter()
                        .flat_map(|g| hint_at(at(g.span.end + sa.start)))
                        .collect();
                    for (k, (&v, want)) in sa.results.iter().zip(&wants).enumerate() {
                        let prefix =
                            if sa.results.len() > 1 { format!("#{k} ") } else { String::new() };
                        if let Some((w, _, _)) = sdy_analysis::explain::value_sharding(&src, v) {
                            // A written sharding: `→ <opt's>` after it where the pass
                            // changed its axes, nothing where it did not.
                            let written = &chunk[w.span.start as usize..w.span.end as usize];
                            let written = compact(written.trim_start_matches("#sdy.sharding"));
                            let Some(want) = want.as_deref().map(compact) else { continue };
                            let ext = hint_at(at(w.span.end)).into_iter().find_map(|l| {
                                l.strip_prefix(&format!("{prefix}→ ")).map(String::from)
                            });
                            tally.extensions += 1;
                            tally.extended += usize::from(ext.is_some());
                            let ok = match &ext {
                                Some(l) => l.split(" | ").any(|x| label_shows(x, &want)),
                                None => axes(&written) == axes(&want),
                            };
                            if !ok {
                                tally.errors.push(format!(
                                    "{name}::{case} @{f} {} result {k}: written {written}, opt {want:?}, extension hint {ext:?}",
                                    sa.name()
                                ));
                            }
                            continue;
                        }
                        let label = labels
                            .iter()
                            .find_map(|l| l.strip_prefix(&prefix))
                            .filter(|l| l.starts_with('[') || l.starts_with('@'));
                        tally.hints += 1;
                        let want = want.as_deref().map(compact);
                        let ok = match (label, &want) {
                            (None, None) => true,
                            (Some(l), Some(w)) => l.split(" | ").any(|x| label_shows(x, w)),
                            _ => false,
                        };
                        if !ok {
                            tally.errors.push(format!(
                                "{name}::{case} @{f} {} result {k}: opt {want:?}, hint {label:?}",
                                sa.name()
                            ));
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "{} cases: {} hovers, {} hints and {} written shardings ({} with an extension hint) compared with opt's output ({} source ops without a printed counterpart), {} mismatches",
        tally.cases,
        tally.hovers,
        tally.hints,
        tally.extensions,
        tally.extended,
        tally.unmatched_ops,
        tally.errors.len()
    );
    assert!(tally.cases > 100, "too few cases compared: {}", tally.cases);
    assert!(tally.errors.is_empty(), "mismatches:\n{}", tally.errors.join("\n"));
}
