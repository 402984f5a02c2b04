//! Verification after a pass, as MLIR's pass manager does: a pass that leaves IR its
//! own verifier rejects fails with the verifier's first error, at the location of the
//! op it is about.
//!
//! The verifier reads a [`Model`] built from text, so the module is printed, parsed
//! and verified again; ops are matched between the IR and the re-parsed model by
//! their pre-order position (printing keeps every op, in order), which gives the IR
//! op's `origin` and so its location in the source.

use crate::diag::Severity;
use crate::ir::Module;
use crate::model::Model;

/// The first error MLIR's verifier reports on `module` (printed as `printed`): the
/// origin of the op it is about (`None` for ops a pass made) and the message.
pub fn first_error_in(
    module: &Module,
    printed: &str,
    allow_unregistered: bool,
) -> Option<(Option<u32>, String)> {
    let chunk = crate::parse_chunks(printed, false).pop()?;
    let analysis = crate::analyze_chunk(printed, &chunk);
    let diags = crate::verify::mlir_view(&analysis.diagnostics, &analysis.model);
    let d = diags.into_iter().find(|d| {
        d.severity == Severity::Error
            && !(allow_unregistered
                && d.message == crate::verify::messages::UNREGISTERED_DIALECT_GENERIC)
    })?;
    Some((origin_of(module, &analysis.model, d.span.start), d.message))
}

/// The origin of the IR op that the printed op at offset `at` was printed from.
fn origin_of(module: &Module, printed: &Model, at: u32) -> Option<u32> {
    let k = printed
        .ops
        .iter()
        .position(|o| o.loc() == at)
        .or_else(|| printed.ops.iter().rposition(|o| o.start <= at))?;
    let mut origins = Vec::new();
    module.top.walk(&mut |op| origins.push(op.origin));
    // The printed model may or may not list the module op itself.
    let skip = origins.len().checked_sub(printed.ops.len())?;
    *origins.get(k + skip)?
}
