//! MLIR's textual pass pipeline, as `sdy_opt -pass-pipeline=...` takes it:
//! `builtin.module(sdy-propagation-pipeline,func.func(sdy-insert-explicit-reshards{enable-full-version=true}))`.
//!
//! Op anchors (`builtin.module(...)`, `func.func(...)`, `any(...)`) only nest: every
//! pass this project writes walks the functions of the module itself, and running a
//! nested list function by function gives what running each pass over all functions
//! in turn gives (a function pass sees no other function). So a pipeline becomes the
//! flat list of its passes, in order.

use super::{parse_pass_flag, PassSpec};

/// The passes of a textual pipeline, in order.
pub fn parse_pass_pipeline(text: &str) -> Result<Vec<PassSpec>, String> {
    let text = unquote(text.trim());
    let mut parser = Parser { s: text.as_bytes(), at: 0, text };
    let mut specs = Vec::new();
    parser.list(&mut specs, 0)?;
    parser.blank();
    match parser.peek() {
        None => Ok(specs),
        Some(c) => Err(parser.error(&format!("unexpected '{}'", c as char))),
    }
}

fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// Nesting deeper than this is refused (the pipeline is user input).
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn blank(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn error(&self, what: &str) -> String {
        format!("invalid pass pipeline '{}' at column {}: {what}", self.text, self.at + 1)
    }

    /// `element (',' element)*`, appending the passes to `out`.
    fn list(&mut self, out: &mut Vec<PassSpec>, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        loop {
            self.element(out, depth)?;
            self.blank();
            if self.peek() != Some(b',') {
                return Ok(());
            }
            self.at += 1;
        }
    }

    /// `anchor '(' list ')'` or `pass ('{' options '}')?`.
    fn element(&mut self, out: &mut Vec<PassSpec>, depth: usize) -> Result<(), String> {
        self.blank();
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || b"-_.$".contains(&c)) {
            self.at += 1;
        }
        let name = &self.text[start..self.at];
        if name.is_empty() {
            return Err(self.error("expected a pass or an op name"));
        }
        self.blank();
        match self.peek() {
            Some(b'(') => {
                self.at += 1;
                self.blank();
                if self.peek() != Some(b')') {
                    self.list(out, depth + 1)?;
                    self.blank();
                }
                if self.peek() != Some(b')') {
                    return Err(self.error("expected ')'"));
                }
                self.at += 1;
                Ok(())
            }
            Some(b'{') => {
                let open = self.at;
                let mut depth = 0usize;
                while let Some(c) = self.peek() {
                    self.at += 1;
                    match c {
                        b'{' => depth += 1,
                        b'}' if depth == 1 => break,
                        b'}' => depth -= 1,
                        _ => {}
                    }
                }
                if self.s.get(self.at - 1) != Some(&b'}') || self.at - open < 2 {
                    return Err(self.error("expected '}'"));
                }
                let options = &self.text[open..self.at];
                out.push(parse_pass_flag(&format!("-{name}={options}"))?);
                Ok(())
            }
            _ => {
                out.push(parse_pass_flag(&format!("-{name}"))?);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(text: &str) -> String {
        match parse_pass_pipeline(text) {
            Ok(specs) => specs
                .iter()
                .map(|s| {
                    let info = super::super::pass_info(s.flag).expect("registered");
                    let set: Vec<String> = info
                        .options
                        .iter()
                        .filter_map(|o| Some((o.name, s.options.get(o.name)?, o.default)))
                        .filter(|(_, v, default)| v != default)
                        .map(|(n, v, _)| format!("{n}={v}"))
                        .collect();
                    format!("{}{{{}}}", s.flag, set.join(" "))
                })
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn nested_pipelines_flatten_in_order() {
        expect_test::expect![[r#"sdy-propagation-pipeline{}, sdy-insert-explicit-reshards{enable-full-version=true}, sdy-reshard-to-collectives{}"#]]
            .assert_eq(&flags(
                "builtin.module(sdy-propagation-pipeline, func.func(sdy-insert-explicit-reshards{enable-full-version=true},sdy-reshard-to-collectives))",
            ));
        expect_test::expect![[r#"sdy-export-pipeline{enable-insert-explicit-collectives=true}"#]]
            .assert_eq(&flags(
                "'builtin.module(sdy-export-pipeline{enable-insert-explicit-collectives=true})'",
            ));
        expect_test::expect![[r#""#]].assert_eq(&flags("builtin.module()"));
    }

    #[test]
    fn mistakes_are_reported() {
        expect_test::expect![[r#"error: invalid pass pipeline 'builtin.module(sdy-basic-propagate' at column 35: expected ')'"#]]
            .assert_eq(&flags("builtin.module(sdy-basic-propagate"));
        expect_test::expect![[r#"error: unknown pass or option '-no-such-pass'"#]]
            .assert_eq(&flags("builtin.module(no-such-pass)"));
        expect_test::expect![[r#"error: invalid pass pipeline 'builtin.module(sdy-basic-propagate{keep-sharding-rules=true)' at column 61: expected '}'"#]]
            .assert_eq(&flags("builtin.module(sdy-basic-propagate{keep-sharding-rules=true)"));
        expect_test::expect![[
            r#"error: invalid pass pipeline 'a(,)' at column 3: expected a pass or an op name"#
        ]]
        .assert_eq(&flags("a(,)"));
        let deep = format!("{}x{}", "a(".repeat(100), ")".repeat(100));
        assert!(flags(&deep).contains("nested too deeply"));
    }
}
