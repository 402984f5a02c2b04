//! Programs for the engine fuzzers (`propagation_no_panic`, `export_no_panic`): the
//! differential generator's programs, Shardy's lit-test inputs, and mutations of them
//! that keep a program mostly well formed (shardings, sub-axes, shapes, op names).

use crate::Rng;
use std::path::Path;
use std::process::Command;

/// Programs to start from: the generator's (when python3 runs), the lit-test inputs in
/// `shared_dirs` of `../shared` and their subdirectories (when `../shared` is there) and
/// the bundled example.
pub fn seeds(shared_dirs: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![include_str!("../../examples/mlp.mlir").to_string()];
    let gen = Command::new("python3")
        .arg(root.join("differential/propagation/gen.py"))
        .args(["--seed", "5", "--count", "200"])
        .output();
    match gen {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            out.extend(text.split("// -----\n").map(str::to_string));
        }
        _ => eprintln!("program_fuzz: gen.py did not run; using the other seeds"),
    }
    let mut dirs: Vec<_> = shared_dirs.iter().map(|d| root.join("../../shared").join(d)).collect();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        dirs.extend(paths.iter().filter(|p| p.is_dir()).cloned());
        out.extend(paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
    }
    out
}

/// Replacements that keep a program mostly well formed but change what the engine
/// sees: shapes, axes, sub-axes, open/closed dimensions, priorities, meshes, ops.
const SNIPPETS: &[&str] = &[
    "?",
    "{}",
    "{?}",
    "{\"a\"}",
    "{\"b\", ?}",
    "\"a\":(1)2",
    "\"c\":(2)2",
    "p0",
    "p1",
    "p3",
    "replicated={\"b\"}",
    "unreduced={\"a\"}",
    "x",
    "1",
    "2",
    "3",
    "4",
    "6",
    "8",
    "16",
    "0",
    // Sizes whose products overflow i64: shapes and axis sizes come from the user.
    "4294967296",
    "9223372036854775807",
    "tensor<4x6xf32>",
    "tensor<i32>",
    "@mesh",
    "@other",
    "#sdy.sharding<@mesh, [{}]>",
    "stablehlo.add",
    "stablehlo.reshape",
    "stablehlo.transpose",
    "stablehlo.dot_general",
    "\"a\"=1",
    "\"b\"=3",
    "<[]>",
    "maximal_device=0",
    ", ",
    "]",
    "[",
    "}",
    "{",
    ")",
    "(",
];

/// Dimension shardings over the axes the generator's meshes use.
const DIMS: &[&str] = &[
    "{}",
    "{?}",
    "{\"a\"}",
    "{\"b\"}",
    "{\"c\"}",
    "{\"a\", ?}",
    "{\"b\", \"a\"}",
    "{\"c\"}p1",
    "{\"a\"}p0",
    "{}p2",
    "{\"a\":(1)2}",
    "{\"a\":(2)2, ?}",
    "{\"b\", \"c\", ?}p0",
];

/// One random mutation of `text`, on char boundaries: a dimension sharding replaced by
/// another (most such programs stay valid), a token replaced by a snippet, a digit
/// changed, a piece deleted or duplicated.
pub fn mutate(rng: &mut Rng, text: &str) -> String {
    let boundary = crate::char_boundary;
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(3) {
        if rng.below(2) == 0 {
            // A dimension sharding: `{` after `[` or `, `, up to its `}`.
            let starts: Vec<usize> = s
                .match_indices('{')
                .map(|(i, _)| i)
                .filter(|&i| s[..i].ends_with('[') || s[..i].ends_with(", "))
                .collect();
            if !starts.is_empty() {
                let a = starts[rng.below(starts.len())];
                if let Some(len) = s[a..].find('}') {
                    s.replace_range(a..a + len + 1, DIMS[rng.below(DIMS.len())]);
                    continue;
                }
            }
        }
        let a = boundary(rng, &s);
        let b = (a + 1 + rng.below(12)).min(s.len());
        let b = (a..=b).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(a);
        match rng.below(4) {
            0 => s.replace_range(a..b, SNIPPETS[rng.below(SNIPPETS.len())]),
            1 => {
                // Change a number: shapes, axis sizes, dimensions, priorities.
                if let Some(d) = s[a..].find(|c: char| c.is_ascii_digit()) {
                    let at = a + d;
                    let digit = char::from(b'0' + rng.below(10) as u8).to_string();
                    s.replace_range(at..at + 1, &digit);
                }
            }
            2 => s.replace_range(a..b, ""),
            _ => {
                let piece = s[a..b].to_string();
                let c = boundary(rng, &s);
                s.insert_str(c, &piece);
            }
        }
    }
    s
}

/// Runs `run` on `text`; on a panic, writes `text` to `dump` in the temp directory and
/// panics naming it. `SDY_FUZZ_CURRENT` names a file that always holds the input being
/// run (for a hang, which has no panic to report it).
pub fn run_or_dump(text: &str, dump: &str, what: &str, run: impl FnOnce(&str)) {
    if let Some(path) = std::env::var_os("SDY_FUZZ_CURRENT") {
        let _ = std::fs::write(path, text);
    }
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(text))).is_err() {
        let path = std::env::temp_dir().join(dump);
        let _ = std::fs::write(&path, text);
        panic!("{what} panicked; the input is in {}", path.display());
    }
}
