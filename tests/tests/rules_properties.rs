//! Properties of the op sharding rule registry over real inputs: every op of the
//! conformance corpus and of the benchmark corpus (pretty and generic forms) gets a
//! lookup without panicking, every created rule is well formed for its op, the pretty
//! and generic spellings of the same program get the same rules, and random mutations
//! of the rule fixtures never make the registry panic.

use sdy_analysis::model::Model;
use sdy_analysis::rules::{self, OpDesc, OpShardingRule, RuleLookup, RuleOptions};
use sdy_tests::{read_text, shared, Rng};
use std::path::Path;

/// Checks the invariants Shardy's rule verifier enforces on a rule created for `d`.
fn check_well_formed(rule: &OpShardingRule, d: &OpDesc) -> Result<(), String> {
    let n = rule.num_factors();
    if rule.operands.len() != d.operands.len() || rule.results.len() != d.results.len() {
        return Err("mapping count differs from the op's".into());
    }
    let mut used = vec![false; n];
    let tensors = d.operands.iter().chain(&d.results);
    for (mapping, ty) in rule.tensors().zip(tensors) {
        if mapping.len() != ty.rank() {
            return Err(format!("mapping rank {} != tensor rank {}", mapping.len(), ty.rank()));
        }
        let mut seen = vec![false; n];
        for dim in mapping {
            if dim.is_empty() {
                return Err("empty dim mapping".into());
            }
            for &f in dim {
                if f >= n {
                    return Err(format!("factor {f} out of range"));
                }
                if seen[f] {
                    return Err("factor used twice in one tensor".into());
                }
                if rule.factor_sizes[f] == 1 && dim.len() > 1 {
                    return Err("size-1 factor in a compound dim".into());
                }
                seen[f] = true;
                used[f] = true;
            }
        }
    }
    if let Some(f) = used.iter().position(|u| !u) {
        return Err(format!("factor {f} unused"));
    }
    let special = [&rule.reduction, &rule.need_replication, &rule.permutation];
    let mut all: Vec<usize> = special.iter().flat_map(|l| l.iter().copied()).collect();
    for list in special.iter().copied().chain([&rule.blocked_propagation]) {
        if list.windows(2).any(|w| w[0] >= w[1]) || list.iter().any(|&f| f >= n) {
            return Err("special factors not sorted/unique/in range".into());
        }
    }
    all.sort_unstable();
    if all.windows(2).any(|w| w[0] == w[1]) {
        return Err("factor in two special sets".into());
    }
    for &f in &rule.reduction {
        if rule.results.iter().flatten().flatten().any(|&x| x == f) {
            return Err("reduction factor in a result".into());
        }
    }
    Ok(())
}

struct Stats {
    ops: usize,
    created: usize,
}

/// Looks up every op of `text` (split at `// -----` when `split`) in both modes and
/// checks the created rules; returns the non-scalar rules in op order.
fn check_text(text: &str, split: bool, what: &str, stats: &mut Stats) -> Vec<String> {
    let mut rules_seen = Vec::new();
    for chunk in sdy_analysis::parse_chunks(text, split) {
        let model = Model::build(&chunk);
        let mut ids: Vec<u32> = (0..model.ops.len() as u32).collect();
        ids.sort_by_key(|&id| model.op(id).start);
        for id in ids {
            stats.ops += 1;
            for conservative in [false, true] {
                let lookup = rules::rule_for(&model, id, text, &RuleOptions { conservative });
                if let RuleLookup::Created(r) = &lookup {
                    stats.created += 1;
                    let d = OpDesc::from_model(&model, id, text);
                    let types_known = d
                        .operands
                        .iter()
                        .chain(&d.results)
                        .all(|t| t.shape.as_ref().is_some_and(|s| s.iter().all(|&x| x >= 0)));
                    // Ops with unknown or dynamic types fail verification anyway.
                    if types_known {
                        if let Err(e) = check_well_formed(r, &d) {
                            panic!("{what}: {} at {}: {e}: {r}", d.name, model.op(id).start);
                        }
                    }
                    if !conservative && !r.is_empty() {
                        rules_seen.push(r.to_string());
                    }
                }
            }
        }
    }
    rules_seen
}

#[test]
fn every_conformance_op() {
    let dir = shared().join("conformance");
    let Ok(folders) = std::fs::read_dir(&dir) else { return };
    let mut stats = Stats { ops: 0, created: 0 };
    let mut files = 0;
    for folder in folders.flatten() {
        let Ok(entries) = std::fs::read_dir(folder.path()) else { continue };
        for f in entries.flatten() {
            let Some(text) = read_text(&f.path()) else { continue };
            files += 1;
            check_text(&text, true, &f.path().display().to_string(), &mut stats);
        }
    }
    eprintln!("{files} files, {} ops, {} rules", stats.ops, stats.created);
    assert!(files == 0 || stats.created > 500);
}

#[test]
fn corpus_pretty_and_generic_agree() {
    let corpus = shared().join("corpus");
    for name in ["tfm_1k", "tfm_10k"] {
        let Some(pretty) = read_text(&corpus.join(format!("{name}.mlir"))) else { continue };
        let Some(generic) = read_text(&corpus.join(format!("variants/{name}.generic.mlir.gz")))
        else {
            continue;
        };
        let mut stats = Stats { ops: 0, created: 0 };
        let a = check_text(&pretty, false, name, &mut stats);
        let b = check_text(&generic, false, &format!("{name}.generic"), &mut stats);
        assert!(!a.is_empty());
        assert_eq!(a.len(), b.len(), "{name}: rule counts differ");
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x, y, "{name}: rule #{i} differs");
        }
        eprintln!("{name}: {} ops, {} rules, forms agree", stats.ops, stats.created);
    }
}

const SNIPPETS: &[&str] = &[
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "?",
    "x",
    "[",
    "]",
    "<",
    ">",
    "{",
    "}",
    "(",
    ")",
    ",",
    "=",
    ":",
    "->",
    "dims = [",
    "dim = ",
    "tensor<0x",
    "tensor<?x",
    "x [0] x [",
    "#stablehlo.conv<[",
    "array<i64: ",
    "dense<",
    "%arg0",
    "stablehlo.reshape",
    "\"stablehlo.gather\"",
];

#[test]
fn mutated_fixtures_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules");
    let mut seeds: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "mlir"))
        .filter_map(|e| read_text(&e.path()))
        .collect();
    seeds.sort();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let mut stats = Stats { ops: 0, created: 0 };
    for round in 0..300 {
        let mut text = seeds[round % seeds.len()].clone().into_bytes();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(text.len());
            match rng.below(4) {
                0 => {
                    let len = rng.below(8).min(text.len() - at);
                    text.drain(at..at + len);
                }
                1 => {
                    let s = SNIPPETS[rng.below(SNIPPETS.len())];
                    text.splice(at..at, s.bytes());
                }
                2 => {
                    // Change a digit: other shapes and attribute values.
                    if let Some(p) = text[at..].iter().position(|b| b.is_ascii_digit()) {
                        text[at + p] = b'0' + rng.below(10) as u8;
                    }
                }
                _ => {
                    let from = rng.below(text.len());
                    let len = rng.below(40).min(text.len() - from);
                    let piece: Vec<u8> = text[from..from + len].to_vec();
                    let at = at.min(text.len());
                    text.splice(at..at, piece);
                }
            }
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        for chunk in sdy_analysis::parse_chunks(&text, true) {
            let model = Model::build(&chunk);
            for id in 0..model.ops.len() as u32 {
                stats.ops += 1;
                for conservative in [false, true] {
                    let _ = rules::rule_for(&model, id, &text, &RuleOptions { conservative });
                }
            }
        }
    }
    assert!(stats.ops > 1000);
}

#[test]
fn attribute_reader_never_panics() {
    let mut rng = Rng(42);
    for _ in 0..2000 {
        let mut s = String::new();
        for _ in 0..rng.below(30) {
            s.push_str(SNIPPETS[rng.below(SNIPPETS.len())]);
            if rng.below(3) == 0 {
                s.push(' ');
            }
        }
        let a = rules::InherentAttrs::from_text(&s, &[]);
        let _ = (a.dot_dims(), a.conv_dims(), a.gather_dims(), a.int_matrix("padding", 3));
    }
}
