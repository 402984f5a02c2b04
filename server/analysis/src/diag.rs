//! Diagnostics in editor-neutral terms: absolute byte ranges, severities, notes.

mod code;

pub use code::DiagnosticCode;
use sdy_syntax::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    /// Beyond Shardy: useful facts (never an error, never shown by `opt`).
    Information,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }
}

/// Where a diagnostic comes from; decides whether `opt` (MLIR emulation) shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A parse error. `first_of_failure` is false for follow-up lines of one failure.
    Parse { first_of_failure: bool },
    /// A Shardy/MLIR verifier rule.
    Verifier,
    /// A check of our own (hints); never shown by `opt`.
    Lint,
    /// Emitted by an `opt` pass while it runs (e.g. the sharding rule registry's
    /// "unknown op" warnings).
    Pass,
}

/// When MLIR's verifier runs the check behind a verifier diagnostic. The MLIR view
/// (`verify::mlir_view`) uses it to keep exactly what `sdy_opt` would print: the first
/// failure of each verification unit, symbol uses only when every op verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Verifying op `id` on the way in: attribute hooks, ODS constraints, traits,
    /// interfaces and the op's `verify()`.
    Entry(u32),
    /// Verifying op `id` after its regions: region verifiers (isolation from above).
    Exit(u32),
    /// The module's symbol table checks (symbol redefinition), before symbol uses.
    SymbolTable,
    /// The module's symbol-use walk, at symbol user `id`.
    SymbolUse(u32),
    /// The dominance check of the regions of isolated op `id`, after `id` and all it
    /// contains verified.
    Dominance(u32),
    /// A parse error found on the model that MLIR's parser reports when it reaches this
    /// offset rather than where the error is located (an op's operands are resolved and
    /// its results defined at the end of the op).
    ParseAt(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where MLIR would report it (the op or token start); `span.start` gives line:col.
    pub span: Span,
    /// The precise offending part (axis, dimension...), for underlining; defaults to `span`.
    pub focus: Span,
    pub severity: Severity,
    pub message: String,
    /// What it is (see [`DiagnosticCode`]).
    pub code: DiagnosticCode,
    pub notes: Vec<Note>,
    pub origin: Origin,
    /// For verifier diagnostics: when MLIR runs the check (`None` otherwise).
    pub stage: Option<Stage>,
}

impl Diagnostic {
    /// An error with the code its origin gives by default ([`Diagnostic::with_code`]
    /// names a more precise one).
    pub fn error(span: Span, message: impl Into<String>, origin: Origin) -> Diagnostic {
        let code = match origin {
            Origin::Parse { .. } => DiagnosticCode::Syntax,
            Origin::Verifier | Origin::Lint => DiagnosticCode::Verifier,
            Origin::Pass => DiagnosticCode::Pass("opt"),
        };
        Diagnostic {
            span,
            focus: span,
            severity: Severity::Error,
            message: message.into(),
            code,
            notes: Vec::new(),
            origin,
            stage: None,
        }
    }
    pub fn with_code(mut self, code: DiagnosticCode) -> Diagnostic {
        self.code = code;
        self
    }
}

/// Maps byte offsets to 1-based lines and byte columns (MLIR's convention).
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = Vec::with_capacity(text.len() / 64 + 1);
        line_starts.push(0);
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i as u32 + 1));
        LineIndex { line_starts }
    }
    /// 1-based line and 1-based byte column of `offset`.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        (line as u32 + 1, offset - self.line_starts[line] + 1)
    }
    pub fn line_start(&self, line0: usize) -> Option<u32> {
        self.line_starts.get(line0).copied()
    }
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn line_col() {
        let idx = LineIndex::new("ab\ncd\n\nx");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(2), (1, 3));
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(6), (3, 1));
        assert_eq!(idx.line_col(7), (4, 1));
    }
}
