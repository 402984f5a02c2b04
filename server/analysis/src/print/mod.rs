//! Printing modules the way `sdy_opt` prints them (without debug info).
//!
//! The printer works on a small mutable IR ([`ir::Module`]) built from the syntax tree
//! ([`build_module`]), so a pass can change the module (new shardings on ops and
//! function arguments, inserted `sdy.reshard` / `sdy.all_reduce` ops, rewired operands)
//! and print the result with [`print_module`]; SSA names are assigned at print time
//! with MLIR's numbering rules ([`names`]).
//!
//! ```text
//! let mut m = build_module(src, &chunk);
//! if let Some(op) = m.op_at_mut(origin) {
//!     op.set_attr("sdy.sharding", Attr::PerValue(vec![sharding]));
//! }
//! print!("{}", print_module(&m));
//! ```

pub mod attr;
pub mod build;
mod elements;
pub mod float;
pub mod ir;
pub mod names;
pub mod printer;
pub mod sdy;
pub mod text;

pub use build::build_module;
pub use printer::print_module;

use sdy_syntax::tree::Chunk;

/// Prints the chunk's module exactly like `sdy_opt` would (no locations).
pub fn print_chunk(src: &str, chunk: &Chunk) -> String {
    print_module(&build_module(src, chunk))
}
