//! Lexing throughput alone (tokens counted, not stored): the scanner, and the logos
//! lexer it is checked against.
//!
//! ```text
//! cargo run --release -p sdy-syntax --example lex_stats -- FILE [--logos]
//! ```

use logos::Logos;
use sdy_syntax::lexer::{Scanner, TokenKind};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: lex_stats FILE [--logos]");
        std::process::exit(2);
    };
    let logos = args.iter().any(|a| a == "--logos");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let mut count = 0usize;
        if logos {
            for r in TokenKind::lexer(&text) {
                count += (r != Ok(TokenKind::Comment)) as usize;
            }
        } else {
            Scanner::new(&text).scan(|_, _| {
                count += 1;
                true
            });
        }
        let dt = t.elapsed();
        println!(
            "{}: {count} tokens, {:.1} ms, {:.0} MB/s",
            if logos { "logos" } else { "scanner" },
            dt.as_secs_f64() * 1e3,
            text.len() as f64 / dt.as_secs_f64() / 1e6
        );
    }
}
