//! Shared helpers for project-level tests: where fixtures and `../shared` live, reading
//! (possibly gzipped) inputs, cursor markers, a reproducible PRNG for mutation tests, and
//! the `sdy-lsp` binary for whole-process tests.

pub mod program_fuzz;

use std::io::Read;
use std::path::{Path, PathBuf};

/// `tests/fixtures/NAME`.
pub fn fixtures(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// `../shared` beside the repository (conformance cases, corpus, oracle); may be absent.
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// The text of a file, gunzipped when its name ends in `.gz`; `None` if it cannot be read
/// or is not UTF-8.
pub fn read_text(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut s).ok()?;
        Some(s)
    } else {
        String::from_utf8(bytes).ok()
    }
}

/// The `.mlir` files of a directory, sorted; panics if there are none (a fixture test
/// that finds nothing to check must not pass).
pub fn mlir_files(dir: &Path) -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no fixtures in {}", dir.display());
    inputs
}

/// The cursor marker of fixtures.
pub const MARKER: &str = "$0";

/// The text without [`MARKER`]s and the byte offsets of the markers in it.
pub fn strip_markers(text: &str) -> (String, Vec<u32>) {
    let mut out = String::with_capacity(text.len());
    let mut cursors = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(MARKER) {
        out.push_str(&rest[..i]);
        cursors.push(out.len() as u32);
        rest = &rest[i + MARKER.len()..];
    }
    out.push_str(rest);
    (out, cursors)
}

/// Small deterministic PRNG (xorshift64*), so a failing mutation test is reproducible
/// from its seed. The seed must not be zero.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }

    /// Uniform-ish in `0..n`; 0 when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// The debug `sdy-lsp` binary, built on demand (tests of this crate do not depend on it
/// at compile time).
pub fn sdy_lsp() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "-q", "-p", "sdy-lsp", "--bin", "sdy-lsp"])
        .current_dir(&root)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building sdy-lsp failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    target.join("debug").join(format!("sdy-lsp{}", std::env::consts::EXE_SUFFIX))
}

/// Inputs to mutate (fuzz tests): the conformance and corpus files when `../shared` is there, and a
/// built-in module so the test never tests nothing.
pub fn mutation_seeds() -> Vec<String> {
    let mut out = vec![include_str!("../../examples/mlp.mlir").to_string()];
    let shared = shared();
    for dir in ["conformance/ir", "conformance/propagation", "conformance/debugging"] {
        if let Ok(entries) = std::fs::read_dir(shared.join(dir)) {
            let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            out.extend(paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
        }
    }
    if let Ok(t) = std::fs::read_to_string(shared.join("corpus/tfm_1k.mlir")) {
        out.push(t);
    }
    out
}

pub const SNIPPETS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    "\"",
    "%",
    "%0",
    "#",
    "@",
    "?",
    ":",
    ",",
    "=",
    "->",
    "\n",
    "// -----\n",
    "p1",
    "{\"x\":(2)4, ?}",
    "#sdy.sharding<",
    "#sdy.sharding_per_value<[",
    "#sdy.op_sharding_rule<([i])->([",
    "sdy.mesh @m = <[\"x\"=2]>\n",
    "stablehlo.add ",
    "tensor<8x?xf32>",
    "loc(",
    "^bb0(%a: f32):",
    "é",
    "\\22",
    "{-#",
    "#-}",
    "dense<",
    "0x",
];

/// How long a fuzz test runs: `SDY_FUZZ_SECONDS`, 3 s by default (the normal suite).
pub fn fuzz_budget() -> std::time::Duration {
    let secs = std::env::var("SDY_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok());
    std::time::Duration::from_secs(secs.unwrap_or(3))
}

/// A random offset in `s` (0 to its length) on a char boundary.
pub fn char_boundary(rng: &mut Rng, s: &str) -> usize {
    let mut i = rng.below(s.len() + 1);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One random mutation of `text`: 1 to 4 deletions, insertions of [`SNIPPETS`] or
/// copies of pieces of the text elsewhere (always on char boundaries).
pub fn mutate(rng: &mut Rng, text: &str) -> String {
    let boundary = char_boundary;
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(4) {
        let a = boundary(rng, &s);
        let b = (a + rng.below(64)).min(s.len());
        let b = (a..=b).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(a);
        match rng.below(4) {
            0 => s.replace_range(a..b, ""),
            1 => s.insert_str(a, SNIPPETS[rng.below(SNIPPETS.len())]),
            2 => {
                let piece = s[a..b].to_string();
                let c = boundary(rng, &s);
                s.insert_str(c, &piece);
            }
            _ => s.replace_range(a..b, SNIPPETS[rng.below(SNIPPETS.len())]),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_removed_and_located() {
        let (text, at) = strip_markers("a$0bc$0");
        assert_eq!(text, "abc");
        assert_eq!(at, vec![1, 3]);
    }

    #[test]
    fn rng_is_reproducible_and_bounded() {
        let (mut a, mut b) = (Rng(7), Rng(7));
        for n in [1, 2, 10, 1000] {
            let x = a.below(n);
            assert_eq!(x, b.below(n));
            assert!(x < n);
        }
        assert_eq!(a.below(0), 0);
    }
}
