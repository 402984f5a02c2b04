//! Printing modules the way `sdy_opt` prints them (without debug info), from the IR
//! ([`crate::ir`]): [`print_module`], or [`print_chunk`] for a chunk as parsed.
//!
//! SSA names are assigned at print time with MLIR's numbering rules ([`names`]); ops
//! are printed in their custom form: dedicated printers for the sdy ops, functions,
//! returns, constants and elementwise ops, the StableHLO custom forms ([`stablehlo`]),
//! and for the other ops their source tokens (the IR's [`crate::ir::Template`]) with
//! the IR's operands, regions and attribute dictionary spliced in. Attribute values are
//! spelled by [`crate::ir::attr::write_attr`], which the builder shares.

pub mod names;
pub mod printer;
pub mod stablehlo;

pub use printer::print_module;

use crate::ir::build_module;
use sdy_syntax::tree::Chunk;

/// Prints the chunk's module exactly like `sdy_opt` would (no locations).
pub fn print_chunk(src: &str, chunk: &Chunk) -> String {
    print_module(&build_module(src, chunk))
}
