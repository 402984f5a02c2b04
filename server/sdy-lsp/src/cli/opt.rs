//! `sdy-lsp opt`: a drop-in for `sdy_opt` on the flags Shardy's lit tests use.
//!
//! `sdy-lsp opt FILE|- [-split-input-file] [-verify-diagnostics]
//! [-allow-unregistered-dialect] [PASS...] [--]`
//!
//! Each chunk (the whole file, or each `// -----` piece with `-split-input-file`) is
//! parsed and verified; the passes (`-sdy-populate-op-sharding-rules[=OPTIONS]`, see
//! `sdy_analysis::passes::PASSES`) then run on it in the order given; a chunk without
//! errors is printed like `sdy_opt` prints it, a failing chunk prints nothing. Printed
//! chunks are joined with `// -----` lines. Pass warnings (e.g. the sharding rule
//! registry's "unknown op") are reported like MLIR's, once per process.
//! Diagnostics go to stderr as `FILE:LINE:COL: error: MESSAGE` in whole-file
//! coordinates, or, for an op with its own `loc(...)`, at that location as MLIR does.
//! Exit status 1 if a chunk failed, 0 otherwise; with `-verify-diagnostics`, the
//! diagnostics are instead checked against the `// expected-error {{...}}` annotations
//! (MLIR's rules) and the status says whether they all matched.

use super::report;
use sdy_analysis::diag::{Diagnostic, LineIndex, Origin, Severity};
use sdy_analysis::mlir_loc::{self, Shown};
use sdy_analysis::model::Model;
use sdy_analysis::passes::{self, PassSpec, Pipeline, Session};
use sdy_analysis::verify::messages::UNREGISTERED_DIALECT_GENERIC;
use sdy_syntax::tree::{Chunk, StmtKind};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::io::Write as _;
use std::process::ExitCode;

struct Options {
    file: String,
    split: bool,
    verify: bool,
    /// Generic-form ops of unknown dialects are accepted.
    allow_unregistered: bool,
    /// The passes to run, in order.
    passes: Vec<PassSpec>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut file = None;
    let mut split = false;
    let mut verify = false;
    let mut allow_unregistered = false;
    let mut passes = Vec::new();
    let mut rest_are_files = false;
    for a in args {
        let flag = a
            .strip_prefix("--")
            .or_else(|| a.strip_prefix('-'))
            .filter(|_| !rest_are_files && a != "-");
        match flag {
            Some("") => rest_are_files = true, // `--`
            Some("split-input-file") => split = true,
            Some("verify-diagnostics") => verify = true,
            Some("allow-unregistered-dialect") => allow_unregistered = true,
            Some(f) if f.starts_with("pass-pipeline=") => passes.extend(
                passes::parse_pass_pipeline(&f["pass-pipeline=".len()..])
                    .map_err(|e| format!("sdy-lsp opt: {e}"))?,
            ),
            Some(_) => {
                passes.push(passes::parse_pass_flag(a).map_err(|e| format!("sdy-lsp opt: {e}"))?)
            }
            None => {
                if file.is_some() {
                    return Err(format!(
                        "sdy-lsp opt: unexpected argument '{a}' (one input file only)"
                    ));
                }
                file = Some(a.clone());
            }
        }
    }
    Ok(Options {
        file: file.unwrap_or_else(|| "-".to_string()),
        split,
        verify,
        allow_unregistered,
        passes,
    })
}

pub fn run(args: &[String]) -> ExitCode {
    let opts = match parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            complain!("{e}");
            return ExitCode::from(2);
        }
    };
    let text = match super::read_input(&opts.file) {
        Ok(t) => t,
        Err(e) => {
            complain!("sdy-lsp opt: cannot read {}: {e}", opts.file);
            return ExitCode::from(2);
        }
    };
    let display_name = if opts.file == "-" { "<stdin>" } else { opts.file.as_str() };
    let index = LineIndex::new(&text);
    let mut outputs: Vec<String> = Vec::new();
    let mut stderr = String::new();
    let mut failed = false;
    let mut verify_failed = false;
    let mut pipeline = Pipeline::new();
    for spec in &opts.passes {
        if let Err(e) = pipeline.add(spec) {
            complain!("sdy-lsp opt: {e}");
            return ExitCode::from(2);
        }
    }
    // MLIR prints the op in diagnostic notes, except under -verify-diagnostics.
    let mut session = Session::new(!opts.verify);
    session.allow_unregistered = opts.allow_unregistered;
    for chunk in sdy_analysis::parse_chunks(&text, opts.split) {
        let analysis = sdy_analysis::analyze_chunk(&text, &chunk);
        let mut diags = sdy_analysis::verify::mlir_view(&analysis.diagnostics, &analysis.model);
        if opts.allow_unregistered {
            diags.retain(|d| d.message != UNREGISTERED_DIALECT_GENERIC);
        }
        let mut chunk_failed = diags.iter().any(|d| d.severity == Severity::Error);
        let mut printed = String::new();
        if !chunk_failed {
            if pipeline.is_empty() {
                printed = sdy_analysis::print::print_chunk(&text, &chunk);
            } else {
                let run = pipeline.run(&text, &chunk, &analysis.model, &mut session);
                chunk_failed = run.failed;
                diags.extend(run.diagnostics);
                if !run.failed {
                    printed = run
                        .printed
                        .unwrap_or_else(|| sdy_analysis::print::print_module(&run.module));
                }
            }
        }
        failed |= chunk_failed;
        if opts.verify {
            let problems = verify_expected(&text, &chunk, &diags, &index);
            verify_failed |= !problems.is_empty();
            for (at, msg) in problems {
                let (line, col) = index.line_col(at);
                stderr.push_str(&format!("{display_name}:{line}:{col}: error: {msg}\n"));
            }
        } else {
            let place = op_locations(&text, &chunk, &analysis.model);
            let in_file = |_: u32| None;
            for d in &diags {
                // The parser reports where it is in the file, ops (verifier, passes) at
                // their location.
                let place: &dyn Fn(u32) -> Option<Shown> = match d.origin {
                    Origin::Parse { .. } => &in_file,
                    _ => &place,
                };
                report::render_placed(display_name, &index, d, &mut stderr, place);
            }
        }
        outputs.push(printed);
    }
    let written = super::out::print(&outputs.join("// -----\n"));
    let _ = std::io::stderr().lock().write_all(stderr.as_bytes());
    let bad = if opts.verify { verify_failed } else { failed };
    written.err().unwrap_or(if bad { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Where MLIR reports a diagnostic at offset `at` of `chunk`: at the explicit location
/// of the op that starts there, when it has one (see [`mlir_loc`]).
fn op_locations<'a>(
    text: &'a str,
    chunk: &'a Chunk,
    model: &'a Model,
) -> impl Fn(u32) -> Option<Shown> + 'a {
    // `#loc` aliases, collected on first use (real exports define tens of thousands).
    let aliases: OnceCell<HashMap<&str, &str>> = OnceCell::new();
    move |at| {
        let op = model.ops.iter().find(|o| o.loc() == at)?;
        let loc = op.node.loc?.shift(op.start);
        let aliases = aliases.get_or_init(|| {
            chunk
                .top
                .iter()
                .filter(|c| c.op.kind == StmtKind::AliasDef)
                .filter_map(|c| {
                    let start = (chunk.span.start + c.offset) as usize;
                    let stmt = text.get(start..start + c.op.len as usize)?;
                    let (name, value) = stmt.split_once('=')?;
                    Some((name.trim(), value.trim()))
                })
                .collect()
        });
        mlir_loc::shown(loc.text(text), &|name| aliases.get(name).copied())
    }
}

// ----- -verify-diagnostics -----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Error,
    Warning,
    Note,
    Remark,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Error => "error",
            Kind::Warning => "warning",
            Kind::Note => "note",
            Kind::Remark => "remark",
        }
    }
}

struct Expected {
    kind: Kind,
    /// 1-based target line; `None` for `@unknown`.
    line: Option<u32>,
    text: String,
    regex: bool,
    /// Offset of `expected-` (where "was not produced" is reported).
    at: u32,
    matched: bool,
}

impl Expected {
    fn matches(&self, msg: &str) -> bool {
        if self.regex {
            re_search(&self.text, msg)
        } else {
            msg.contains(&self.text)
        }
    }
}

/// The `expected-*` annotations of a chunk, with MLIR's designators: none = same line,
/// `@+N` / `@-N` relative, `@above` / `@below` the nearest line that is not itself an
/// annotation, `@unknown` for diagnostics without a location.
fn parse_expected(text: &str, chunk: &Chunk, index: &LineIndex) -> Vec<Expected> {
    let body = chunk.span.text(text);
    let first_line = index.line_col(chunk.span.start).0;
    let mut out: Vec<Expected> = Vec::new();
    let mut pending_below: Vec<usize> = Vec::new();
    let mut last_plain: u32 = first_line;
    let mut offset = chunk.span.start;
    for (i, raw) in body.split('\n').enumerate() {
        let line_no = first_line + i as u32;
        let line_start = offset;
        offset += raw.len() as u32 + 1;
        match parse_annotation(raw.trim_end_matches('\r')) {
            None => {
                for &k in &pending_below {
                    out[k].line = Some(line_no);
                }
                pending_below.clear();
                last_plain = line_no;
            }
            Some((col, kind, regex, designator, msg)) => {
                let line = match designator.as_deref() {
                    None => Some(line_no),
                    Some("above") => Some(last_plain),
                    Some("below") => {
                        pending_below.push(out.len());
                        Some(u32::MAX)
                    }
                    Some("unknown") => None,
                    Some(d) => d.parse::<i64>().ok().map(|n| (line_no as i64 + n).max(0) as u32),
                };
                out.push(Expected {
                    kind,
                    line,
                    text: msg,
                    regex,
                    at: line_start + col as u32,
                    matched: false,
                });
            }
        }
    }
    out
}

/// Reads `expected-KIND(-re)? *(@DESIGNATOR)? *{{TEXT}}` at the end of a line:
/// (column of `expected-`, kind, regex, designator, text).
fn parse_annotation(line: &str) -> Option<(usize, Kind, bool, Option<String>, String)> {
    let mut search = 0;
    while let Some(rel) = line[search..].find("expected-") {
        let at = search + rel;
        search = at + 1;
        let rest = &line[at + "expected-".len()..];
        let (kind, rest) = [
            ("error", Kind::Error),
            ("warning", Kind::Warning),
            ("note", Kind::Note),
            ("remark", Kind::Remark),
        ]
        .iter()
        .find_map(|(w, k)| rest.strip_prefix(w).map(|r| (*k, r)))?;
        let (regex, rest) = match rest.strip_prefix("-re") {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let rest = rest.trim_start_matches(' ');
        let (designator, rest) = match rest.strip_prefix('@') {
            Some(r) => {
                let end = r.find([' ', '{']).unwrap_or(r.len());
                let d = &r[..end];
                let valid = matches!(d, "above" | "below" | "unknown")
                    || (d.len() > 1
                        && d.starts_with(['+', '-'])
                        && d[1..].bytes().all(|b| b.is_ascii_digit()));
                if !valid {
                    continue;
                }
                (Some(d.trim_start_matches('+').to_string()), &r[end..])
            }
            None => (None, rest),
        };
        let rest = rest.trim_start_matches(' ');
        let Some(inner) = rest.strip_prefix("{{") else { continue };
        let Some(inner) = inner.strip_suffix("}}") else { continue };
        return Some((at, kind, regex, designator, inner.to_string()));
    }
    None
}

/// Checks the chunk's diagnostics against its annotations; returns the problems as
/// (offset, message) in MLIR's wording and order: unexpected diagnostics as they are
/// emitted, then the expectations that were not produced.
fn verify_expected(
    text: &str,
    chunk: &Chunk,
    diags: &[Diagnostic],
    index: &LineIndex,
) -> Vec<(u32, String)> {
    let mut expected = parse_expected(text, chunk, index);
    let mut problems: Vec<(u32, String)> = Vec::new();
    let mut all: Vec<(u32, Kind, &str)> = Vec::new();
    for d in diags {
        let kind = match d.severity {
            Severity::Error => Kind::Error,
            Severity::Warning => Kind::Warning,
            _ => Kind::Remark,
        };
        all.push((d.span.start, kind, &d.message));
        for n in &d.notes {
            all.push((n.span.start, Kind::Note, &n.message));
        }
    }
    for (at, kind, msg) in all {
        let line = index.line_col(at).0;
        let mut near: Option<usize> = None;
        let mut done = false;
        for (i, e) in expected.iter_mut().enumerate() {
            if e.line != Some(line) || e.matched || !e.matches(msg) {
                continue;
            }
            if e.kind == kind {
                e.matched = true;
                done = true;
                break;
            }
            near.get_or_insert(i);
        }
        if done {
            continue;
        }
        match near {
            Some(i) => problems.push((
                expected[i].at,
                format!(
                    "'{}' diagnostic emitted when expecting a '{}'",
                    kind.as_str(),
                    expected[i].kind.as_str()
                ),
            )),
            None => problems.push((at, format!("unexpected {}: {msg}", kind.as_str()))),
        }
    }
    for e in &expected {
        if !e.matched {
            problems.push((
                e.at,
                format!("expected {} \"{}\" was not produced", e.kind.as_str(), e.text),
            ));
        }
    }
    problems
}

/// `expected-*-re` text: `{{regex}}` segments inside literal text, searched anywhere in
/// the message. The regex subset: literals, `.`, `[...]` classes, `\d \w \s` and escapes,
/// and the quantifiers `* + ?`.
fn re_search(pattern: &str, msg: &str) -> bool {
    let mut items: Vec<(Atom, Quant)> = Vec::new();
    let mut rest = pattern;
    while !rest.is_empty() {
        match rest.find("{{") {
            Some(i) => {
                items.extend(rest[..i].chars().map(|c| (Atom::Char(c), Quant::One)));
                let after = &rest[i + 2..];
                let Some(j) = after.find("}}") else { return false };
                match compile(&after[..j]) {
                    Some(v) => items.extend(v),
                    None => return false,
                }
                rest = &after[j + 2..];
            }
            None => {
                items.extend(rest.chars().map(|c| (Atom::Char(c), Quant::One)));
                break;
            }
        }
    }
    let chars: Vec<char> = msg.chars().collect();
    (0..=chars.len()).any(|s| matches_at(&items, &chars[s..]))
}

#[derive(Clone, Debug)]
enum Atom {
    Char(char),
    Any,
    Class(Vec<(char, char)>, bool),
}

#[derive(Clone, Copy, Debug)]
enum Quant {
    One,
    Star,
    Plus,
    Opt,
}

fn compile(re: &str) -> Option<Vec<(Atom, Quant)>> {
    let cs: Vec<char> = re.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    let class_of = |c: char| -> Option<Atom> {
        Some(match c {
            'd' => Atom::Class(vec![('0', '9')], false),
            'w' => Atom::Class(vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')], false),
            's' => Atom::Class(vec![(' ', ' '), ('\t', '\t'), ('\n', '\n'), ('\r', '\r')], false),
            _ => return None,
        })
    };
    while i < cs.len() {
        let atom = match cs[i] {
            '.' => Atom::Any,
            '\\' => {
                i += 1;
                let c = *cs.get(i)?;
                class_of(c).unwrap_or(Atom::Char(c))
            }
            '[' => {
                i += 1;
                let neg = cs.get(i) == Some(&'^');
                if neg {
                    i += 1;
                }
                let mut ranges = Vec::new();
                while *cs.get(i)? != ']' {
                    let mut c = cs[i];
                    if c == '\\' {
                        i += 1;
                        c = *cs.get(i)?;
                    }
                    if cs.get(i + 1) == Some(&'-') && cs.get(i + 2).is_some_and(|&e| e != ']') {
                        ranges.push((c, cs[i + 2]));
                        i += 3;
                    } else {
                        ranges.push((c, c));
                        i += 1;
                    }
                }
                Atom::Class(ranges, neg)
            }
            c => Atom::Char(c),
        };
        i += 1;
        let q = match cs.get(i) {
            Some('*') => Quant::Star,
            Some('+') => Quant::Plus,
            Some('?') => Quant::Opt,
            _ => Quant::One,
        };
        if !matches!(q, Quant::One) {
            i += 1;
        }
        out.push((atom, q));
    }
    Some(out)
}

fn atom_matches(a: &Atom, c: char) -> bool {
    match a {
        Atom::Char(x) => *x == c,
        Atom::Any => c != '\n',
        Atom::Class(r, neg) => r.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *neg,
    }
}

fn matches_at(items: &[(Atom, Quant)], s: &[char]) -> bool {
    let Some(((atom, q), rest)) = items.split_first() else { return true };
    match q {
        Quant::One => !s.is_empty() && atom_matches(atom, s[0]) && matches_at(rest, &s[1..]),
        Quant::Opt => {
            (!s.is_empty() && atom_matches(atom, s[0]) && matches_at(rest, &s[1..]))
                || matches_at(rest, s)
        }
        Quant::Star | Quant::Plus => {
            let min = if matches!(q, Quant::Plus) { 1 } else { 0 };
            let mut n = 0;
            while n < s.len() && atom_matches(atom, s[n]) {
                n += 1;
            }
            (min..=n).rev().any(|k| matches_at(rest, &s[k..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations() {
        let (col, kind, re, d, t) =
            parse_annotation("  // expected-error@+2 {{bad {{x}} here}}").unwrap();
        assert_eq!(
            (col, kind, re, d.as_deref(), t.as_str()),
            (5, Kind::Error, false, Some("2"), "bad {{x}} here")
        );
        let (_, kind, _, d, t) = parse_annotation("// expected-note @below {{n}}").unwrap();
        assert_eq!((kind, d.as_deref(), t.as_str()), (Kind::Note, Some("below"), "n"));
        assert!(parse_annotation("// expected-error {{unterminated").is_none());
        assert!(parse_annotation("%0 = foo // nothing").is_none());
    }

    #[test]
    fn regex_subset() {
        assert!(re_search("value {{[0-9]+}} is", "the value 42 is bad"));
        assert!(!re_search("value {{[0-9]+}} is", "the value x is bad"));
        assert!(re_search("a{{.*}}c", "xxabbbcxx"));
        assert!(re_search("op{{\\s}}'x'", "op 'x'"));
    }

    #[test]
    fn flags() {
        let o = parse_args(&[
            "f.mlir".into(),
            "--split-input-file".into(),
            "-verify-diagnostics".into(),
            "--".into(),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(o.split && o.verify && o.file == "f.mlir");
        let e = parse_args(&["f.mlir".into(), "-sdy-no-such-pass".into()]).err().unwrap();
        assert_eq!(e, "sdy-lsp opt: unknown pass or option '-sdy-no-such-pass'");
        let e = parse_args(&["f.mlir".into(), "-sdy-populate-op-sharding-rules=x=1".into()])
            .err()
            .unwrap();
        assert_eq!(e, "sdy-lsp opt: pass '-sdy-populate-op-sharding-rules' has no option 'x'");
        let o = parse_args(&[
            "f.mlir".into(),
            "-sdy-populate-op-sharding-rules=conservative-propagation=true".into(),
            "-sdy-populate-op-sharding-rules".into(),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.passes.len(), 2);
        assert!(o.passes[0].options.bool("conservative-propagation"));
        assert!(!o.passes[1].options.bool("conservative-propagation"));
    }
}
