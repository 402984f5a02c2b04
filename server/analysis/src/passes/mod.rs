//! The pass framework of `sdy-lsp opt`: `sdy_opt`-style pass flags with options, and
//! a pipeline that runs passes in order over the printable IR ([`ir::Module`]) of a
//! chunk, with the chunk's semantic [`Model`] at hand.
//!
//! * [`PASSES`] lists every pass flag `opt` knows, with its options (Shardy's names and
//!   kinds) and its constructor; passes not written yet have no constructor and are
//!   refused with a clear message. Adding a pass = writing a [`Pass`] and filling in
//!   `create` in its [`PassInfo`].
//! * [`parse_pass_flag`] reads `-name`, `--name`, `-name=opts`, `-name="a=1 b=2"`,
//!   `-name='a=1,b=2'`, `-name={a=1 b=2}`; options are validated against the pass.
//! * [`Pipeline::run`] builds the chunk's IR, runs the passes in order and returns the
//!   module (to print) and the diagnostics the passes emitted. A pass that fails has
//!   reported an error; the chunk then prints nothing, like `sdy_opt`.
//! * A [`Session`] spans one process (all chunks of a `-split-input-file` run): it holds
//!   MLIR's once-per-process warning flags and whether ops are printed in notes.

pub mod populate_rules;
pub mod verify_after;

use crate::diag::{Diagnostic, Note, Origin, Severity};
use crate::model::Model;
use crate::print::ir::Module;
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;
use std::collections::HashSet;

/// The kind of a pass option's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptKind {
    Bool,
    Int,
    Str,
    /// One of these spellings.
    Enum(&'static [&'static str]),
}

/// A pass option: its flag name, kind and default (as text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionInfo {
    pub name: &'static str,
    pub kind: OptKind,
    pub default: &'static str,
}

const fn opt(name: &'static str, kind: OptKind, default: &'static str) -> OptionInfo {
    OptionInfo { name, kind, default }
}

/// Makes a pass from its option values.
pub type CreatePass = fn(&PassOptions) -> Box<dyn Pass>;

/// A pass `opt` knows.
pub struct PassInfo {
    /// The flag without its leading dash (`sdy-basic-propagate`).
    pub flag: &'static str,
    pub summary: &'static str,
    pub options: &'static [OptionInfo],
    /// `None` while the pass is not written yet.
    pub create: Option<CreatePass>,
}

const BASIC_OPTIONS: &[OptionInfo] = &[
    opt("keep-sharding-rules", OptKind::Bool, "false"),
    opt("module-dump-directory", OptKind::Str, ""),
    opt("conservative-propagation", OptKind::Bool, "false"),
    opt("debug-sharding-origins", OptKind::Bool, "false"),
    opt("debug-propagation-edge-sharding", OptKind::Bool, "false"),
];
const STRATEGIES: &[&str] = &["basic", "aggressive", "basic-then-aggressive"];
const AGGRESSIVE_OPTIONS: &[OptionInfo] = &[
    opt("keep-sharding-rules", OptKind::Bool, "false"),
    opt("module-dump-directory", OptKind::Str, ""),
    opt("conservative-propagation", OptKind::Bool, "false"),
    opt("debug-sharding-origins", OptKind::Bool, "false"),
    opt("debug-propagation-edge-sharding", OptKind::Bool, "false"),
    opt("propagation-strategy", OptKind::Enum(STRATEGIES), "aggressive"),
];
const OP_PRIORITY_OPTIONS: &[OptionInfo] = &[
    opt("keep-sharding-rules", OptKind::Bool, "false"),
    opt("module-dump-directory", OptKind::Str, ""),
    opt("conservative-propagation", OptKind::Bool, "false"),
    opt("debug-sharding-origins", OptKind::Bool, "false"),
    opt("debug-propagation-edge-sharding", OptKind::Bool, "false"),
    opt("propagation-strategy", OptKind::Enum(STRATEGIES), "aggressive"),
    opt("run-op-priority-propagation", OptKind::Bool, "true"),
];

/// Every pass flag `opt` accepts (Shardy's names and options).
pub static PASSES: &[PassInfo] = &[
    PassInfo {
        flag: "sdy-populate-op-sharding-rules",
        summary: "attaches the registry's sharding rule to every op in functions",
        options: &[opt("conservative-propagation", OptKind::Bool, "false")],
        create: Some(populate_rules::create),
    },
    PassInfo {
        flag: "sdy-basic-propagate",
        summary: "basic sharding propagation",
        options: BASIC_OPTIONS,
        create: Some(crate::propagation::passes::create_basic),
    },
    PassInfo {
        flag: "sdy-aggressive-propagate",
        summary: "aggressive sharding propagation",
        options: AGGRESSIVE_OPTIONS,
        create: Some(crate::propagation::passes::create_aggressive),
    },
    PassInfo {
        flag: "sdy-op-priority-propagate",
        summary: "op-priority sharding propagation",
        options: OP_PRIORITY_OPTIONS,
        create: Some(crate::propagation::passes::create_op_priority),
    },
    PassInfo {
        flag: "sdy-user-priority-propagate",
        summary: "user-priority sharding propagation",
        options: OP_PRIORITY_OPTIONS,
        create: Some(crate::propagation::passes::create_user_priority),
    },
    PassInfo {
        flag: "sdy-propagation-pipeline",
        summary: "import, user-priority propagation, export",
        options: &[opt("dedup-functions-fully", OptKind::Bool, "false")],
        create: Some(crate::propagation::passes::create_pipeline),
    },
    PassInfo {
        flag: "sdy-add-data-flow-edges",
        summary: "inserts sdy.data_flow_edge after data-flow edge owners",
        options: &[],
        create: Some(crate::propagation::passes::create_add_data_flow_edges),
    },
    PassInfo {
        flag: "sdy-apply-sharding-constraints",
        summary: "moves sharding constraint shardings onto their inputs",
        options: &[
            opt("debug-sharding-origins", OptKind::Bool, "false"),
            opt("debug-propagation-edge-sharding", OptKind::Bool, "false"),
        ],
        create: Some(crate::propagation::passes::create_apply_sharding_constraints),
    },
    PassInfo {
        flag: "sdy-sink-data-flow-edges",
        summary: "moves data-flow edge shardings onto their owners",
        options: &[
            opt("sink-debug-sharding-origins", OptKind::Bool, "false"),
            opt("sink-debug-propagation-edge-sharding", OptKind::Bool, "false"),
        ],
        create: Some(crate::propagation::passes::create_sink_data_flow_edges),
    },
    PassInfo {
        flag: "sdy-reshard-to-collectives",
        summary: "reshards become all-slice, collective-permute, all-to-all and all-gather",
        options: &[opt("keep-redundant-reshards", OptKind::Bool, "false")],
        create: Some(crate::export::reshard_to_collectives::create),
    },
    PassInfo {
        flag: "sdy-export-pipeline",
        summary: "Shardy's export passes after propagation",
        options: crate::export::pipeline::OPTIONS,
        create: Some(crate::export::pipeline::create),
    },
    PassInfo {
        flag: "sdy-pad-for-divisibility",
        summary: "pads tensors with non-divisible shardings to divisible shapes",
        options: &[],
        create: Some(crate::export::pad_for_divisibility::create),
    },
    PassInfo {
        flag: "sdy-convert-global-to-local",
        summary: "converts the program from global to per-device (local) shapes",
        options: &[
            opt("per-dim-all-gather", OptKind::Bool, "false"),
            opt("combine-multi-dimension-reduce-scatter", OptKind::Bool, "false"),
            opt("enable-rgv3", OptKind::Bool, "false"),
            opt("replica-count", OptKind::Int, "1"),
            opt("partition-count", OptKind::Int, "1"),
        ],
        create: Some(crate::export::global_to_local::create),
    },
    PassInfo {
        flag: "canonicalize",
        summary: "MLIR's canonicalizer (sdy patterns)",
        options: &[
            opt("top-down", OptKind::Bool, "true"),
            opt("region-simplify", OptKind::Enum(&["disabled", "normal", "aggressive"]), "normal"),
            opt("max-iterations", OptKind::Int, "10"),
            opt("max-num-rewrites", OptKind::Int, "-1"),
            opt("test-convergence", OptKind::Bool, "false"),
        ],
        create: Some(crate::canonicalize::create),
    },
];

/// The pass registered under `flag` (without dashes).
pub fn pass_info(flag: &str) -> Option<&'static PassInfo> {
    PASSES
        .iter()
        .chain(crate::propagation::passes::EXTRA)
        .chain(crate::export::small_export_passes::SMALL_EXPORT_PASSES)
        .find(|p| p.flag == flag)
}

/// A pass flag as written: the pass and its option values (validated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassSpec {
    pub flag: &'static str,
    pub options: PassOptions,
}

/// A pass's option values: every option of the pass, defaults filled in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassOptions {
    values: Vec<(&'static str, String)>,
}

impl PassOptions {
    /// The value of option `name` as text (the default when not given).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
    /// A boolean option (false when absent).
    pub fn bool(&self, name: &str) -> bool {
        self.get(name).and_then(parse_bool).unwrap_or(false)
    }
    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name)?.parse().ok()
    }
}

/// LLVM's `cl::opt<bool>` spellings.
fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "" | "true" | "TRUE" | "True" | "1" => Some(true),
        "false" | "FALSE" | "False" | "0" => Some(false),
        _ => None,
    }
}

/// Reads a pass flag (`arg` with its leading `-`/`--`). `Err` for unknown passes,
/// passes not written yet, and bad options.
pub fn parse_pass_flag(arg: &str) -> Result<PassSpec, String> {
    let body = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')).unwrap_or(arg);
    let (name, opts) = match body.split_once('=') {
        Some((n, o)) => (n, Some(o)),
        None => (body, None),
    };
    let Some(info) = pass_info(name) else {
        return Err(format!("unknown pass or option '{arg}'"));
    };
    if info.create.is_none() {
        return Err(format!("pass '-{name}' is not implemented yet"));
    }
    let mut values: Vec<(&'static str, String)> =
        info.options.iter().map(|o| (o.name, o.default.to_string())).collect();
    let known = |n: &str| info.options.iter().any(|o| o.name == n);
    for (key, value) in split_options(opts.unwrap_or(""), &known)? {
        let Some(o) = info.options.iter().find(|o| o.name == key) else {
            return Err(format!("pass '-{name}' has no option '{key}'"));
        };
        let value = match (o.kind, value) {
            (OptKind::Bool, None) => "true".to_string(),
            (_, None) => return Err(format!("option '{key}' of pass '-{name}' needs a value")),
            (_, Some(v)) => v,
        };
        let ok = match o.kind {
            OptKind::Bool => parse_bool(&value).is_some(),
            OptKind::Int => value.parse::<i64>().is_ok(),
            OptKind::Str => true,
            OptKind::Enum(choices) => choices.contains(&value.as_str()),
        };
        if !ok {
            return Err(format!("invalid value '{value}' for option '{key}' of pass '-{name}'"));
        }
        if let Some(slot) = values.iter_mut().find(|(n, _)| *n == o.name) {
            slot.1 = value;
        }
    }
    Ok(PassSpec { flag: info.flag, options: PassOptions { values } })
}

/// Reads an MLIR textual pass pipeline (`-pass-pipeline=` without the flag):
/// `builtin.module(a, func.func(b{opt=1}), c)`. Every pass here works on the module, so
/// the nesting only groups: the passes come out in order.
pub fn parse_pass_pipeline(text: &str) -> Result<Vec<PassSpec>, String> {
    let mut out = Vec::new();
    pipeline_items(text.trim().trim_matches(|c| c == '\'' || c == '"'), &mut out)?;
    Ok(out)
}

fn pipeline_items(text: &str, out: &mut Vec<PassSpec>) -> Result<(), String> {
    let mut depth = 0i32;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(format!("unbalanced pass pipeline '{text}'"));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced pass pipeline '{text}'"));
    }
    items.push(&text[start..]);
    for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
        // `anchor(nested)`: an op-name anchor around a nested pipeline.
        if let Some(nested) = item.strip_suffix(')').and_then(|i| i.split_once('(')) {
            pipeline_items(nested.1, out)?;
            continue;
        }
        let flag = match item.split_once('{') {
            Some((name, opts)) => format!("-{}={{{opts}", name.trim()),
            None => format!("-{item}"),
        };
        out.push(parse_pass_flag(&flag)?);
    }
    Ok(())
}

/// Splits an option string into `key[=value]` items: separated by spaces (MLIR's
/// pass option syntax) or by commas that start a new `key=`; surrounding quotes and a
/// `{...}` wrapper are removed; values may be quoted. A comma followed by a name that
/// `is_option` rejects stays in the value (`filter=dot,pad`).
fn split_options(
    s: &str,
    is_option: &dyn Fn(&str) -> bool,
) -> Result<Vec<(String, Option<String>)>, String> {
    let mut s = s.trim();
    for (open, close) in [('"', '"'), ('\'', '\''), ('{', '}')] {
        if s.len() >= 2 && s.starts_with(open) && s.ends_with(close) {
            s = s[1..s.len() - 1].trim();
        }
    }
    let mut items: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0i32;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else {
                cur.push(c);
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' | '[' | '(' => {
                depth += 1;
                cur.push(c);
            }
            '}' | ']' | ')' => {
                depth -= 1;
                cur.push(c);
            }
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    items.push(std::mem::take(&mut cur));
                }
            }
            ',' if depth == 0 && starts_new_option(&chars[i + 1..], is_option) => {
                if !cur.is_empty() {
                    items.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("unterminated quote in pass options '{s}'"));
    }
    if !cur.is_empty() {
        items.push(cur);
    }
    Ok(items
        .into_iter()
        .map(|item| match item.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (item.trim().to_string(), None),
        })
        .collect())
}

/// Whether `rest` (after a comma) starts with `name=`, `name ` or `name` at the end,
/// `name` an option.
fn starts_new_option(rest: &[char], is_option: &dyn Fn(&str) -> bool) -> bool {
    let rest: String = rest.iter().collect();
    let rest = rest.trim_start();
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    name_len > 0
        && is_option(&rest[..name_len])
        && rest.starts_with(|c: char| c.is_ascii_alphabetic())
        && matches!(rest[name_len..].chars().next(), None | Some('=' | ',' | ' '))
}

/// A pass reported an error (its diagnostics say why); the chunk prints nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassFailed;

/// A pass over one chunk's module.
pub trait Pass {
    /// The flag it was created from (without the dash).
    fn flag(&self) -> &'static str;
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed>;
}

/// Per-process state shared by every chunk a run processes.
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// Attach the op to warning notes (MLIR's `printOpOnDiagnostic`; `sdy_opt` turns
    /// it off under `-verify-diagnostics`).
    pub print_op_on_diagnostic: bool,
    /// `-allow-unregistered-dialect`: generic-form ops of unknown dialects verify
    /// (also when the IR is verified after a pass).
    pub allow_unregistered: bool,
    once: HashSet<String>,
}

impl Session {
    pub fn new(print_op_on_diagnostic: bool) -> Session {
        Session { print_op_on_diagnostic, allow_unregistered: false, once: HashSet::new() }
    }
    /// True the first time `key` is seen in this process (`llvm::call_once` flags).
    pub fn first_time(&mut self, key: &str) -> bool {
        self.once.insert(key.to_string())
    }
}

/// What a pass works with.
pub struct PassContext<'a> {
    pub src: &'a str,
    pub chunk: &'a Chunk,
    /// The semantic model of the chunk as parsed: ops are keyed by their absolute
    /// start, which is the IR's [`crate::print::ir::Op::origin`]. Ops a pass creates
    /// have no origin and are not in it.
    pub model: &'a Model,
    pub module: &'a mut Module,
    pub session: &'a mut Session,
    /// Diagnostics emitted so far (in emission order).
    pub diagnostics: Vec<Diagnostic>,
}

impl PassContext<'_> {
    /// Emits a warning at `at` (an absolute offset); with `op` (the origin of an op in
    /// the module) and the session's `print_op_on_diagnostic`, a note shows the op.
    pub fn warn(&mut self, at: u32, message: String, op: Option<u32>) {
        self.emit(Severity::Warning, at, message, op);
    }
    /// [`PassContext::warn`] with the op's text as it was printed when the warning was
    /// raised.
    pub fn warn_showing(&mut self, at: u32, message: String, op_text: String) {
        self.emit_with(Severity::Warning, at, message, Some(op_text));
    }
    /// Emits an error (the pass should then return [`PassFailed`]).
    pub fn error(&mut self, at: u32, message: String, op: Option<u32>) {
        self.emit(Severity::Error, at, message, op);
    }
    fn emit(&mut self, severity: Severity, at: u32, message: String, op: Option<u32>) {
        let text = match self.session.print_op_on_diagnostic {
            true => op.and_then(|o| crate::print::printer::print_op_at(self.module, o)),
            false => None,
        };
        self.emit_with(severity, at, message, text);
    }
    fn emit_with(&mut self, severity: Severity, at: u32, message: String, op_text: Option<String>) {
        let span = Span::new(at, at);
        let mut notes = Vec::new();
        if self.session.print_op_on_diagnostic {
            if let Some(text) = op_text {
                // MLIR's `appendOp`: an op printed on several lines starts on a new line.
                let message = if text.contains('\n') { format!("\n{text}") } else { text };
                notes.push(Note { span, message });
            }
        }
        self.diagnostics.push(Diagnostic {
            span,
            focus: span,
            severity,
            message,
            notes,
            origin: Origin::Pass,
            stage: None,
        });
    }
}

/// A list of passes to run in order.
#[derive(Default)]
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
}

/// The result of running a pipeline on one chunk.
pub struct PipelineRun {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
    /// A pass failed: `sdy_opt` prints nothing for the chunk.
    pub failed: bool,
    /// The module as printed (verified after the last pass), unless a pass failed.
    pub printed: Option<String>,
}

impl Pipeline {
    pub fn new() -> Pipeline {
        Pipeline::default()
    }
    /// Adds the pass of a parsed flag.
    pub fn add(&mut self, spec: &PassSpec) -> Result<(), String> {
        let info = pass_info(spec.flag).ok_or_else(|| format!("unknown pass '-{}'", spec.flag))?;
        let create =
            info.create.ok_or_else(|| format!("pass '-{}' is not implemented yet", spec.flag))?;
        self.passes.push(create(&spec.options));
        Ok(())
    }
    pub fn is_empty(&self) -> bool {
        self.passes.is_empty()
    }
    pub fn flags(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.flag()).collect()
    }

    /// Runs the passes on `module`, a module the running pass of `cx` built (an op it
    /// outlined): diagnostics go to `cx`.
    pub fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        module: &mut Module,
    ) -> Result<(), PassFailed> {
        let mut sub = PassContext {
            src: cx.src,
            chunk: cx.chunk,
            model: cx.model,
            module,
            session: &mut *cx.session,
            diagnostics: Vec::new(),
        };
        let result = self.passes.iter_mut().try_for_each(|p| p.run(&mut sub));
        let diagnostics = std::mem::take(&mut sub.diagnostics);
        cx.diagnostics.extend(diagnostics);
        result
    }

    /// Builds the chunk's module and runs the passes on it (stopping at the first
    /// failure). `model` is the chunk's semantic model.
    pub fn run(
        &mut self,
        src: &str,
        chunk: &Chunk,
        model: &Model,
        session: &mut Session,
    ) -> PipelineRun {
        let mut module = crate::print::build_module(src, chunk);
        let mut cx = PassContext {
            src,
            chunk,
            model,
            module: &mut module,
            session,
            diagnostics: Vec::new(),
        };
        let mut failed = false;
        let mut printed = None;
        for pass in &mut self.passes {
            if pass.run(&mut cx).is_err() {
                failed = true;
                break;
            }
            // MLIR verifies the IR after every pass; the text of the last one is the
            // output.
            let text = crate::print::print_module(cx.module);
            if let Some((origin, message)) =
                verify_after::first_error_in(cx.module, &text, cx.session.allow_unregistered)
            {
                let at = origin.map_or(0, |o| {
                    cx.model.ops.iter().find(|op| op.start == o).map_or(o, |op| op.loc())
                });
                cx.emit_with(Severity::Error, at, message, None);
                failed = true;
                break;
            }
            printed = Some(text);
        }
        let diagnostics = std::mem::take(&mut cx.diagnostics);
        crate::propagation::graph::Graph::release_shared();
        let printed = if failed { None } else { printed };
        PipelineRun { module, diagnostics, failed, printed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags() {
        let p = parse_pass_flag("-sdy-populate-op-sharding-rules").unwrap();
        assert_eq!(p.flag, "sdy-populate-op-sharding-rules");
        assert!(!p.options.bool("conservative-propagation"));
        for spelling in [
            "-sdy-populate-op-sharding-rules=conservative-propagation=true",
            "--sdy-populate-op-sharding-rules=\"conservative-propagation=true\"",
            "-sdy-populate-op-sharding-rules='conservative-propagation=1'",
            "-sdy-populate-op-sharding-rules={conservative-propagation}",
            "-sdy-populate-op-sharding-rules=conservative-propagation",
        ] {
            let p = parse_pass_flag(spelling).unwrap_or_else(|e| panic!("{spelling}: {e}"));
            assert!(p.options.bool("conservative-propagation"), "{spelling}");
        }
        assert_eq!(
            parse_pass_flag("-sdy-populate-op-sharding-rules=conservative=true").unwrap_err(),
            "pass '-sdy-populate-op-sharding-rules' has no option 'conservative'"
        );
        assert_eq!(
            parse_pass_flag("-sdy-populate-op-sharding-rules=conservative-propagation=maybe")
                .unwrap_err(),
            "invalid value 'maybe' for option 'conservative-propagation' of pass '-sdy-populate-op-sharding-rules'"
        );
        assert_eq!(parse_pass_flag("-sdy-nope").unwrap_err(), "unknown pass or option '-sdy-nope'");
        let p = parse_pass_flag("-sdy-basic-propagate='keep-sharding-rules=true'").unwrap();
        assert!(p.options.bool("keep-sharding-rules") && !p.options.bool("debug-sharding-origins"));
        for info in PASSES.iter().filter(|p| p.create.is_none()) {
            assert_eq!(
                parse_pass_flag(&format!("-{}", info.flag)).unwrap_err(),
                format!("pass '-{}' is not implemented yet", info.flag)
            );
        }
    }

    #[test]
    fn pipelines() {
        let flags = |text| {
            parse_pass_pipeline(text)
                .map(|ps| ps.iter().map(|p| p.flag).collect::<Vec<_>>())
                .unwrap_or_else(|e| panic!("{text}: {e}"))
        };
        assert_eq!(
            flags("builtin.module(sdy-propagation-pipeline,func.func(sdy-insert-explicit-reshards),func.func(sdy-reshard-to-collectives))"),
            ["sdy-propagation-pipeline", "sdy-insert-explicit-reshards", "sdy-reshard-to-collectives"]
        );
        let p = parse_pass_pipeline(
            "'builtin.module(func.func(sdy-insert-explicit-reshards{enable-full-version=true}))'",
        )
        .unwrap();
        assert!(p[0].options.bool("enable-full-version"));
        assert!(parse_pass_pipeline("builtin.module(sdy-nope)").is_err());
        assert!(parse_pass_pipeline("builtin.module(func.func(canonicalize)").is_err());
    }

    #[test]
    fn option_strings() {
        let any = |_: &str| true;
        let split = |s: &str| split_options(s, &any).unwrap();
        assert_eq!(
            split("'a=1 b=x,c=true, d'"),
            vec![
                ("a".to_string(), Some("1".to_string())),
                ("b".to_string(), Some("x".to_string())),
                ("c".to_string(), Some("true".to_string())),
                ("d".to_string(), None),
            ]
        );
        // A comma inside a value that does not start an option stays in the value.
        assert_eq!(
            split("l=1,2 m=\"x y\""),
            vec![
                ("l".to_string(), Some("1,2".to_string())),
                ("m".to_string(), Some("x y".to_string())),
            ]
        );
        assert!(split_options("a=\"x", &any).is_err());
        // A comma before a name that is no option stays in the value.
        let only_filter = |n: &str| n == "filter";
        assert_eq!(
            split_options("filter=dot,constant,reshard", &only_filter).unwrap(),
            vec![("filter".to_string(), Some("dot,constant,reshard".to_string()))]
        );
    }
}
