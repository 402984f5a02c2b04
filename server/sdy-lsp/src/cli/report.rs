//! Compiler-style rendering of diagnostics: `FILE:LINE:COL: error: MESSAGE`.

use sdy_analysis::diag::{Diagnostic, LineIndex, Severity};
use std::fmt::Write;

/// Renders one diagnostic and its notes the way MLIR tools print them.
pub fn render(file: &str, index: &LineIndex, d: &Diagnostic, out: &mut String) {
    let (line, col) = index.line_col(d.span.start);
    let sev = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information | Severity::Hint => "remark",
    };
    let _ = writeln!(out, "{file}:{line}:{col}: {sev}: {}", d.message);
    for n in &d.notes {
        let (line, col) = index.line_col(n.span.start);
        let _ = writeln!(out, "{file}:{line}:{col}: note: {}", n.message);
    }
}
