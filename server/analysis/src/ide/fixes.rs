//! Quick fixes for diagnostics, where the fix is unambiguous, as plain text edits:
//!
//! * replicated/unreduced (and reduction, r2u, manual) axes out of mesh order: sorted
//!   (and consecutive sub-axes merged, as Shardy keeps them);
//! * two consecutive sub-axes that can be merged: merged (into the full axis when they
//!   cover it, as Shardy wants);
//! * a duplicated axis: the repeated reference removed;
//! * an unknown mesh: an `sdy.mesh` defined at the top of the module with the axes the
//!   module's shardings use on it (sizes taken from another mesh with that axis, else the
//!   smallest the shardings allow: see [`mesh`]);
//! * an empty closed dimension with a priority: opened, or the priority removed;
//! * for people writing Shardy lit tests: `// expected-error @+1 {{...}}` annotations
//!   (and `expected-note`s) for a diagnostic `sdy_opt` would print.
//!
//! Each fix names the diagnostic it fixes, found by its [`crate::diag::DiagnosticCode`];
//! the LSP layer turns them into code actions.

mod annotations;
mod dims;
mod lists;
mod mesh;

use crate::diag::Diagnostic;
use crate::model::Model;
use sdy_syntax::Span;

/// Replace `span` of the text by `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixKind {
    /// Makes the diagnostic go away.
    QuickFix,
    /// Adds `expected-*` annotations for the diagnostic (a source action).
    Annotation,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub kind: FixKind,
    /// Index of the fixed diagnostic in the slice given to [`fixes`].
    pub diagnostic: usize,
    /// Non-overlapping edits, in text order.
    pub edits: Vec<Edit>,
    /// The one obvious fix for its diagnostic.
    pub preferred: bool,
}

/// The fixes for the diagnostics of a chunk (`diagnostics` as `analyze_chunk` gives
/// them) whose range touches `range`.
pub fn fixes(model: &Model, src: &str, diagnostics: &[Diagnostic], range: Span) -> Vec<Fix> {
    let touching = |d: &Diagnostic| d.focus.start <= range.end && range.start <= d.focus.end;
    let mut out = Vec::new();
    let mut view = None;
    for (i, d) in diagnostics.iter().enumerate().filter(|(_, d)| touching(d)) {
        let found = lists::fixes(model, src, d)
            .or_else(|| mesh::fixes(model, src, d))
            .or_else(|| dims::fixes(model, src, d))
            .unwrap_or_default();
        out.extend(found.into_iter().map(|(title, edits, preferred)| Fix {
            title,
            kind: FixKind::QuickFix,
            diagnostic: i,
            edits,
            preferred,
        }));
        let view = view.get_or_insert_with(|| crate::verify::mlir_view(diagnostics, model));
        if let Some((title, edits)) = annotations::annotate(src, d, view) {
            out.push(Fix {
                title,
                kind: FixKind::Annotation,
                diagnostic: i,
                edits,
                preferred: false,
            });
        }
    }
    out
}

/// `src` with `edits` applied (non-overlapping, any order).
pub fn apply(src: &str, edits: &[Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(src.len());
    let mut at = 0usize;
    for e in sorted {
        let (start, end) = (e.span.start as usize, e.span.end as usize);
        if start < at || end > src.len() {
            continue;
        }
        out.push_str(&src[at..start]);
        out.push_str(&e.text);
        at = end;
    }
    out.push_str(&src[at..]);
    out
}

/// A fix as found by the submodules (each recognises its diagnostic by its code):
/// title, edits, preferred.
type Found = (String, Vec<Edit>, bool);

#[cfg(test)]
mod tests;
