//! Prints, per input file, a digest of the parsed tree's debug form (a development aid:
//! two builds of the parser can be compared on many inputs). With `--full`, prints the
//! tree itself.
//!
//! ```text
//! cargo run --release -p sdy-syntax --example tree_dump -- [--full] FILE...
//! ```

use std::hash::{Hash, Hasher};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|a| a == "--full");
    for path in args.iter().filter(|a| !a.starts_with("--")) {
        let Ok(bytes) = std::fs::read(path) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        // Split as `--split-input-file` does, and whole.
        let chunks: Vec<_> = sdy_syntax::split::split_chunks(&text)
            .into_iter()
            .map(|s| sdy_syntax::parser::parse_top_level(s.text(&text)))
            .collect();
        let whole = sdy_syntax::parser::parse_top_level(&text);
        let dump = format!("{chunks:#?}\n{whole:#?}");
        if full {
            println!("{dump}");
        } else {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            dump.hash(&mut h);
            println!("{:016x} {path}", h.finish());
        }
    }
}
