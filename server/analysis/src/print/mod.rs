//! Printing modules the way `sdy_opt` prints them (without debug info).
//!
//! The printer works on a small mutable IR ([`ir::Module`]) built from the syntax tree
//! ([`build_module`]), so a pass can change the module and print the result with
//! [`print_module`]:
//!
//! * ops read from the source keep their absolute start offset ([`ir::Op::origin`], the
//!   same key as `model::OpInfo::start`); [`ir::Module::op_at_mut`] finds them;
//! * operands, results and block arguments are [`ir::ValueId`]s in the order the tree
//!   lists them (function arguments are the entry block arguments of the body;
//!   `stablehlo.reduce` block arguments are in MLIR's order `[lhs..., rhs...]`);
//! * sdy attributes are values ([`sdy::TensorSharding`], ...), set with
//!   [`ir::Op::set_attr`] (`sdy.sharding`), [`ir::Op::set_prop`] (`sharding`,
//!   `out_sharding`, `in_shardings`, ...) or [`ir::FuncSlot::set_attr`] (function
//!   arguments and results);
//! * new ops ([`ir::Op::pretty`], e.g. `sdy.reshard`, `sdy.all_reduce`) are inserted in a
//!   block's `ops`, with results from [`ir::Module::new_value`]; [`ir::Op::replace_uses`]
//!   rewires the users.
//!
//! SSA names are assigned at print time with MLIR's numbering rules ([`names`]); ops
//! are printed in their custom form: dedicated printers for the sdy ops, functions,
//! returns, constants and elementwise ops, and for the other ops their source tokens
//! with the IR's operands, regions and attribute dictionary spliced in.
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
pub(crate) mod stablehlo;
pub mod text;

pub use build::build_module;
pub use printer::print_module;

use sdy_syntax::tree::Chunk;

/// Prints the chunk's module exactly like `sdy_opt` would (no locations).
pub fn print_chunk(src: &str, chunk: &Chunk) -> String {
    print_module(&build_module(src, chunk))
}
