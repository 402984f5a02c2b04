//! The pass API of `sdy-lsp opt`: what a pass is ([`Pass`], made by a [`PassInfo`]'s
//! constructor from its [`PassOptions`]), what it works with ([`PassContext`], a
//! process-wide [`Session`]) and how a pass flag is read ([`parse_flag`]). Passes depend
//! on this module only; the registry and the pipeline that runs passes are
//! `crate::passes`, above every pass.

use crate::diag::{Diagnostic, DiagnosticCode, Note, Origin, Severity};
use crate::ir::Module;
use crate::model::Model;
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

pub const fn opt(name: &'static str, kind: OptKind, default: &'static str) -> OptionInfo {
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

/// A boolean option value in LLVM's `cl::opt<bool>` spellings.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "" | "true" | "TRUE" | "True" | "1" => Some(true),
        "false" | "FALSE" | "False" | "0" => Some(false),
        _ => None,
    }
}

/// Reads a pass flag (`arg` with its leading `-`/`--`), looking the pass up with
/// `lookup` (the registry: `crate::passes::pass_info`). `Err` for unknown passes,
/// passes not written yet, and bad options.
pub fn parse_flag(
    arg: &str,
    lookup: impl Fn(&str) -> Option<&'static PassInfo>,
) -> Result<PassSpec, String> {
    let body = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')).unwrap_or(arg);
    let (name, opts) = match body.split_once('=') {
        Some((n, o)) => (n, Some(o)),
        None => (body, None),
    };
    let Some(info) = lookup(name) else {
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

/// Splits an option string into `key[=value]` items: separated by spaces (MLIR's
/// pass option syntax) or by commas that start a new `key=`; surrounding quotes and a
/// `{...}` wrapper are removed; values may be quoted. A comma followed by a name that
/// `is_option` rejects stays in the value (`filter=dot,pad`).
pub(crate) fn split_options(
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
    /// MLIR's `-verify-each` (on by default): verify the IR after every pass.
    pub verify_each: bool,
    once: HashSet<String>,
}

impl Session {
    pub fn new(print_op_on_diagnostic: bool) -> Session {
        Session {
            print_op_on_diagnostic,
            allow_unregistered: false,
            verify_each: true,
            once: HashSet::new(),
        }
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
    /// start, which is the IR's [`crate::ir::Op::origin`]. Ops a pass creates
    /// have no origin and are not in it.
    pub model: &'a Model,
    pub module: &'a mut Module,
    pub session: &'a mut Session,
    /// The flag of the pass running: the code of what it emits.
    pub pass: &'static str,
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
    pub(crate) fn emit_with(
        &mut self,
        severity: Severity,
        at: u32,
        message: String,
        op_text: Option<String>,
    ) {
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
            code: DiagnosticCode::Pass(self.pass),
            notes,
            origin: Origin::Pass,
            stage: None,
        });
    }
}

/// A pass made of one function over the module.
pub(crate) struct FnPass {
    pub(crate) flag: &'static str,
    pub(crate) f: fn(&mut PassContext<'_>, &PassOptions) -> Result<(), PassFailed>,
    pub(crate) options: PassOptions,
}

impl Pass for FnPass {
    fn flag(&self) -> &'static str {
        self.flag
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        (self.f)(cx, &self.options)
    }
}

/// `fn_pass!(create_fn, "flag", |cx, options| ...)` defines the constructor of a
/// [`FnPass`].
macro_rules! fn_pass {
    ($create:ident, $flag:literal, $body:expr) => {
        fn $create(o: &PassOptions) -> Box<dyn Pass> {
            Box::new(FnPass { flag: $flag, f: $body, options: o.clone() })
        }
    };
}
pub(crate) use fn_pass;

/// A registry entry of a written pass.
pub(crate) const fn info(
    flag: &'static str,
    summary: &'static str,
    options: &'static [OptionInfo],
    create: fn(&PassOptions) -> Box<dyn Pass>,
) -> PassInfo {
    PassInfo { flag, summary, options, create: Some(create) }
}
