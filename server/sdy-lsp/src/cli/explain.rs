//! `sdy-lsp explain FILE:LINE:COL`: what the sharding, mesh, axis, value or op at a
//! position means (1-based line, 1-based byte column, as MLIR prints locations), also
//! inside `xla.sdy.*` and `mhlo.sharding` strings.
//!
//! It prints exactly the language server's hover at that position (without a
//! propagation run): the chunk is analysed on its own, as the server analyses it, and
//! the analysis core's hover (`sdy_analysis::ide::hover`) answers. Plain text by default
//! (what a client without Markdown gets), the Markdown itself with `--markdown`. Exit
//! status 1 if there is nothing to explain.

use sdy_analysis::diag::LineIndex;
use sdy_analysis::ide::hover::{self, Snapshot};
use sdy_analysis::ide::strings::Scope;
use sdy_analysis::query::Index;
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;
use std::process::ExitCode;

pub const USAGE: &str =
    "sdy-lsp explain [--split-input-file] [--markdown] FILE:LINE:COL (FILE - is stdin)";

pub fn run(args: &[String]) -> ExitCode {
    let mut split = false;
    let mut markdown = false;
    let mut target = None;
    for a in args {
        match a.as_str() {
            "--split-input-file" | "-split-input-file" => split = true,
            "--markdown" => markdown = true,
            // `-:LINE:COL` is standard input.
            f if f.starts_with('-') && f.len() > 1 && !f.starts_with("-:") => {
                complain!("sdy-lsp explain: unknown option '{f}'\nusage: {USAGE}");
                return ExitCode::from(2);
            }
            t if target.is_none() => target = Some(t.to_string()),
            t => {
                complain!("sdy-lsp explain: unexpected argument '{t}'\nusage: {USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some((file, line, col)) = target.as_deref().and_then(parse_target) else {
        complain!("usage: {USAGE}");
        return ExitCode::from(2);
    };
    let text = match super::read_input(file) {
        Ok(t) => t,
        Err(e) => {
            complain!("sdy-lsp explain: cannot read {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(offset) = offset_of(&text, line, col) else {
        complain!("sdy-lsp explain: {file}:{line}:{col} is outside the file");
        return ExitCode::from(2);
    };
    match explain(&text, split, offset) {
        Some(md) if markdown => super::out::print_then(&md, ExitCode::SUCCESS),
        Some(md) => {
            let mut plain = sdy_analysis::explain::plain::to_plain(&md);
            if !plain.ends_with('\n') {
                plain.push('\n');
            }
            super::out::print_then(&plain, ExitCode::SUCCESS)
        }
        None => {
            complain!("sdy-lsp explain: nothing to explain at {file}:{line}:{col}");
            ExitCode::from(1)
        }
    }
}

/// The hover's Markdown at `offset` of `text` (its chunk when `split`), as the language
/// server computes it.
pub fn explain(text: &str, split: bool, offset: u32) -> Option<String> {
    let chunk = sdy_analysis::parse_chunks(text, split)
        .into_iter()
        .find(|c| c.span.start <= offset && offset <= c.span.end)?;
    let chunk_start = chunk.span.start;
    let src = chunk.span.text(text);
    let chunk = Chunk { span: Span::new(0, chunk.span.len()), top: chunk.top };
    let analysis = sdy_analysis::analyze_chunk(src, &chunk);
    let (model, index) = (&analysis.model, Index::new(&analysis.model));
    let snapshot = Snapshot { scope: Scope::new(model, src, 0, &chunk.top), index: &index };
    hover::hover(&snapshot, offset - chunk_start, None).map(|h| h.markdown)
}

/// `FILE:LINE:COL` (the file name may itself contain `:`).
fn parse_target(t: &str) -> Option<(&str, u32, u32)> {
    let (rest, col) = t.rsplit_once(':')?;
    let (file, line) = rest.rsplit_once(':')?;
    let (line, col) = (line.parse().ok()?, col.parse().ok()?);
    (!file.is_empty() && line >= 1 && col >= 1).then_some((file, line, col))
}

/// The byte offset of a 1-based line and byte column; the end of a line is allowed.
fn offset_of(text: &str, line: u32, col: u32) -> Option<u32> {
    let index = LineIndex::new(text);
    let start = index.line_start(line as usize - 1)?;
    let end = index.line_start(line as usize).map_or(text.len() as u32, |s| s - 1);
    let offset = start.checked_add(col - 1)?;
    (offset <= end).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert_eq!(parse_target("a.mlir:3:14"), Some(("a.mlir", 3, 14)));
        assert_eq!(parse_target("C:/x/a.mlir:1:1"), Some(("C:/x/a.mlir", 1, 1)));
        assert_eq!(parse_target("a.mlir:0:1"), None);
        assert_eq!(parse_target("a.mlir:3"), None);
        assert_eq!(offset_of("ab\ncd\n", 2, 2), Some(4));
        assert_eq!(offset_of("ab\ncd\n", 2, 3), Some(5));
        assert_eq!(offset_of("ab\ncd\n", 2, 4), None);
        assert_eq!(offset_of("ab", 2, 1), None);
    }

    #[test]
    fn explains_inside_strings_too() {
        let text = "sdy.mesh @mesh = <[\"x\"=2]>\nfunc.func @f(%a: tensor<8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = \"#sdy.sharding<@mesh, [{\\22x\\22}]>\"}}) -> tensor<8xf32> {\n  return %a : tensor<8xf32>\n}\n";
        let at = text.find("@mesh,").unwrap() as u32 + 7;
        let md = explain(text, false, at).unwrap();
        assert!(md.starts_with("**sharding** of `%a` (argument 0 of `@f`)"), "{md}");
        assert!(explain(text, false, 10).unwrap().contains("mesh `@mesh`"));
    }
}
