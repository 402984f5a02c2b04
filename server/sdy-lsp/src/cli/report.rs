//! Compiler-style rendering of diagnostics: `FILE:LINE:COL: error: MESSAGE`.

use sdy_analysis::diag::{Diagnostic, LineIndex, Severity};
use sdy_analysis::mlir_loc::Shown;
use std::fmt::Write;

/// Renders one diagnostic and its notes the way MLIR tools print them.
pub fn render(file: &str, index: &LineIndex, d: &Diagnostic, out: &mut String) {
    render_placed(file, index, d, out, &|_| None);
}

/// [`render`], with the place of a diagnostic at some offsets given by `place` (an op's
/// own `loc(...)`, which MLIR reports at instead of the op's position in the file).
pub fn render_placed(
    file: &str,
    index: &LineIndex,
    d: &Diagnostic,
    out: &mut String,
    place: &dyn Fn(u32) -> Option<Shown>,
) {
    let sev = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information | Severity::Hint => "remark",
    };
    let prefix = |at: u32| match place(at) {
        Some(Shown::File(f)) => format!("{f}: "),
        Some(Shown::Raw(r)) => format!("{r}: "),
        Some(Shown::Unknown) => String::new(),
        None => {
            let (line, col) = index.line_col(at);
            format!("{file}:{line}:{col}: ")
        }
    };
    let _ = writeln!(out, "{}{sev}: {}", prefix(d.span.start), d.message);
    for n in &d.notes {
        let _ = writeln!(out, "{}note: {}", prefix(n.span.start), n.message);
    }
}
