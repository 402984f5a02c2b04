//! What MLIR knows about an op without running it: whether it is trivially dead
//! (`isOpTriviallyDead`), whether it is a constant the folder may unique and hoist
//! (`ConstantLike`), and where such constants go (`IsolatedFromAbove` ancestors).

use super::arena::{Arena, OpRef};
use crate::ir::kind::op_purity;
use crate::ir::{Op, Syntax};

/// The memory effects of an op by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effects {
    None,
    /// Those of the nested ops (`RecursiveMemoryEffects`).
    Recursive,
    Unknown,
}

fn effects(op: &Op) -> Effects {
    if op.name.starts_with("arith.") {
        // Every arith op is `Pure`.
        return Effects::None;
    }
    match op_purity(op) {
        Some(false) => Effects::None,
        Some(true) => Effects::Recursive,
        None => Effects::Unknown,
    }
}

fn is_terminator(name: &str) -> bool {
    crate::rules::registry::is_terminator(name)
}

/// Symbols are never trivially dead (`SymbolOpInterface`).
fn is_symbol(op: &Op) -> bool {
    matches!(op.name.as_str(), "func.func" | "sdy.mesh" | "builtin.module")
        || op.prop("sym_name").is_some()
}

/// `wouldOpBeTriviallyDead`: not a terminator or symbol, and no effects (its nested
/// ops' effects for recursive ops).
pub fn would_be_trivially_dead(ir: &Arena, r: OpRef) -> bool {
    let op = ir.op(r);
    if is_terminator(&op.name) || is_symbol(op) {
        return false;
    }
    effect_free(ir, r)
}

fn effect_free(ir: &Arena, r: OpRef) -> bool {
    match effects(ir.op(r)) {
        Effects::None => true,
        Effects::Unknown => false,
        Effects::Recursive => ir.nested_preorder(r).iter().all(|&c| match effects(ir.op(c)) {
            Effects::Unknown => false,
            // Nested recursive ops are covered by walking all nested ops.
            Effects::None | Effects::Recursive => true,
        }),
    }
}

/// Region DCE's `isOpIntrinsicallyLive`: terminators and ops with effects (ops with
/// regions included, judged by what they hold).
pub fn intrinsically_live(ir: &Arena, r: OpRef) -> bool {
    is_terminator(ir.name(r)) || !effect_free(ir, r)
}

/// `isOpTriviallyDead`: unused results and [`would_be_trivially_dead`].
pub fn is_trivially_dead(ir: &Arena, r: OpRef) -> bool {
    ir.results_unused(r) && would_be_trivially_dead(ir, r)
}

/// `ConstantLike` ops the folder uniques: the op (dialect) and value, the result type.
pub fn constant_key(op: &Op, ir: &Arena) -> Option<(String, String)> {
    if !matches!(op.name.as_str(), "stablehlo.constant" | "arith.constant")
        || op.results.len() != 1
        || !op.operands.is_empty()
    {
        return None;
    }
    let value = match (op.prop("value"), &op.syntax) {
        (Some(v), _) => crate::ir::attr::attr_to_string(v),
        // A custom form we print from its tokens: they spell the value.
        (None, Syntax::Custom(t)) => t.joined_text(),
        (None, _) => return None,
    };
    let ty = ir.ty(op.results[0])?.to_string();
    // The folder keys constants by dialect too.
    Some((format!("{} {value}", op.name), ty))
}

/// Whether an op might be `IsolatedFromAbove` (unregistered ops might be).
pub fn isolated_from_above(name: &str) -> bool {
    match name {
        "builtin.module" | "func.func" | "sdy.manual_computation" | "sdy.named_computation" => true,
        n => !KNOWN_DIALECTS.iter().any(|d| n.strip_prefix(d).is_some_and(|r| r.starts_with('.'))),
    }
}

/// Dialects whose ops we know (none of their other ops is isolated from above), and
/// which have an inliner interface that accepts inlining their ops.
const KNOWN_DIALECTS: &[&str] = &["sdy", "stablehlo", "func", "chlo", "mhlo", "arith", "tensor"];

/// Whether the inliner may move `name` into another region.
pub fn inlinable(name: &str) -> bool {
    KNOWN_DIALECTS.iter().any(|d| name.strip_prefix(d).is_some_and(|r| r.starts_with('.')))
}
