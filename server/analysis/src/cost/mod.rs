//! What a sharding costs: per function, the collectives Shardy's export path inserts
//! and the memory each device holds. Plain data with chunk-relative byte offsets.
//!
//! * **Communication** ([`communication`]): the propagated module goes through
//!   `-sdy-insert-explicit-reshards=enable-full-version=true` then
//!   `-sdy-reshard-to-collectives` (this project's implementation of Shardy's passes);
//!   every collective of the result is described by [`crate::collectives`] (kinds, axes,
//!   device groups, local shapes, bytes per device: the formulas are in that module's
//!   doc) and mapped back to the source op it was inserted for, with the reason (which
//!   operand or result, dimension and factor disagreed, and with what). Collectives a
//!   user wrote are listed too (reason [`Side::Written`]).
//! * **Memory** ([`memory`]): bytes per device of every value (local shape × element
//!   size, padding included), per function the argument and result bytes and an
//!   estimate of peak live bytes over the op order.
//!
//! ```text
//! let p = propagate(src, &chunk, &model, &diagnostics, Strategy::Pipeline);
//! let c = cost::of_propagation(src, &model, &p);
//! c.functions[0].collectives      // per op: kind, axes, bytes per device, reason
//! c.functions[0].memory.peak      // bytes per device
//! ```

pub(crate) mod communication;
pub(crate) mod function_hover;
pub mod hints;
pub mod memory;
pub mod text;
pub mod time;

#[cfg(test)]
mod tests;

use crate::collectives::Collective;
use crate::ir::Module;
use crate::model::Model;
use crate::propagation::editor::{ChunkPropagation, Site, ValueResult};
use crate::propagation::graph::Graph;
use crate::sharding::TensorSharding;
use std::sync::OnceLock;

/// The cost of one chunk.
pub struct Cost {
    pub functions: Vec<FunctionCost>,
    /// Bytes per device of the source values (sorted by site).
    pub values: Vec<ValueMemory>,
    /// The export passes failed (at this chunk-relative offset, with Shardy's message):
    /// no communication is known.
    pub failure: Option<(u32, String)>,
    /// The module with explicit collectives.
    module: Option<Module>,
    printed: OnceLock<String>,
}

/// One function of the chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCost {
    pub name: String,
    /// The source `func.func`'s start (`None` for a function a pass made).
    pub start: Option<u32>,
    /// In the order of the module with explicit collectives.
    pub collectives: Vec<OpCollective>,
    pub memory: FunctionMemory,
}

impl FunctionCost {
    /// Bytes each device sends over all collectives of the function (unknown sizes
    /// count 0).
    pub fn bytes_per_device(&self) -> i64 {
        self.collectives.iter().map(|c| c.collective.bytes_sent.unwrap_or(0)).sum()
    }
    /// The collectives that move data (all-slices are local).
    pub fn moving(&self) -> impl Iterator<Item = &OpCollective> {
        self.collectives.iter().filter(|c| c.collective.kind != crate::collectives::Kind::AllSlice)
    }
}

/// One collective, with the source op it is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpCollective {
    /// The start of the source op it was inserted for (chunk-relative), when known.
    pub op: Option<u32>,
    pub collective: Collective,
    /// The type of the tensor it works on (global shape).
    pub ty: String,
    pub reason: Reason,
}

/// Why a collective is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    pub side: Side,
    /// The sharding the tensor has, and the one the op needs (operand side) or
    /// declares (result side).
    pub from: Option<TensorSharding>,
    pub to: Option<TensorSharding>,
    /// The dimensions that differ, with the op's factor for each.
    pub dims: Vec<DimChange>,
}

/// Which tensor of the op a collective is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Operand `k` is resharded to what the op computes with.
    Operand(usize),
    /// Result `k` is computed with another sharding and resharded to its own.
    Result(usize),
    /// A reduction factor of the op is sharded: partial results are summed (result `k`).
    Reduction(usize),
    /// The op is a collective the user wrote.
    Written,
    /// The op is a reshard (or constraint) the user wrote: this is one of its steps.
    Reshard,
    /// Inserted by the export, but its op could not be told.
    Unknown,
}

/// A dimension of a tensor whose axes differ between `from` and `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimChange {
    pub dim: usize,
    /// The op's factor for that dimension (`i`, `j`, ...), when it has a rule.
    pub factor: Option<String>,
    pub from: String,
    pub to: String,
}

/// Memory of one function, bytes per device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionMemory {
    pub arguments: i64,
    /// The results' total, and each result as the function returns it (its
    /// `sdy.sharding`, which may differ from the returned value's: see the collectives).
    pub results: i64,
    pub per_result: Vec<i64>,
    /// The largest sum of live values over the op order (arguments included, values
    /// live from their definition to their last use, results to the end).
    pub peak: i64,
}

/// Bytes per device of one source value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueMemory {
    pub site: Site,
    pub local_shape: Vec<i64>,
    pub bytes: i64,
}

impl Cost {
    /// The module with explicit collectives, as `opt` prints it (empty on failure).
    pub fn printed(&self) -> &str {
        self.printed.get_or_init(|| match &self.module {
            Some(m) if self.failure.is_none() => crate::print::print_module(m),
            _ => String::new(),
        })
    }

    /// The memory of the source value at `site`.
    pub fn value(&self, site: Site) -> Option<&ValueMemory> {
        let i = self.values.binary_search_by(|v| v.site.cmp(&site)).ok()?;
        self.values.get(i)
    }

    /// The collectives inserted for the source op starting at `op`.
    pub fn at_op(&self, op: u32) -> impl Iterator<Item = &OpCollective> {
        self.functions.iter().flat_map(|f| &f.collectives).filter(move |c| c.op == Some(op))
    }

    /// The function whose source `func.func` starts at `start`.
    pub fn function_at(&self, start: u32) -> Option<&FunctionCost> {
        self.functions.iter().find(|f| f.start == Some(start))
    }
}

/// The cost of `propagated`, a chunk's module after propagation (or as written);
/// `values` are the propagation's source values (for per-value memory).
pub fn analyze(src: &str, model: &Model, propagated: &Module, values: &[ValueResult]) -> Cost {
    analyze_in(src, model, propagated, &Graph::build(propagated), values)
}

/// [`analyze`] with `before`, the index of `propagated` (one build fewer when the
/// propagation already has it).
pub fn analyze_in(
    src: &str,
    model: &Model,
    propagated: &Module,
    before: &Graph,
    values: &[ValueResult],
) -> Cost {
    let exported = communication::export(src, model, propagated, before);
    let (module, after, found, failure) = match exported {
        Ok((m, g, found)) => (Some(m), Some(g), found, None),
        Err(f) => (None, None, Vec::new(), Some(f)),
    };
    let memories = match (&module, &after) {
        (Some(m), Some(g)) => memory::functions_in(m, g),
        _ => memory::functions_in(propagated, before),
    };
    drop(after);
    let mut functions: Vec<FunctionCost> = memories
        .into_iter()
        .map(|(name, start, memory)| FunctionCost { name, start, collectives: Vec::new(), memory })
        .collect();
    for (func, c) in found {
        if let Some(f) = functions.iter_mut().find(|f| f.name == func) {
            f.collectives.push(c);
        }
    }
    let values = memory::values_in(propagated, before, values);
    Cost { functions, values, failure, module, printed: OnceLock::new() }
}

/// The cost of a propagation run (`None` when it failed).
pub fn of_propagation(src: &str, model: &Model, p: &ChunkPropagation) -> Option<Cost> {
    let m = p.module()?;
    // The rules the propagation run built (an unexplained run keeps them).
    let _rules = crate::rules::memo::resume(p.take_rules(), model, src);
    Some(match p.graph() {
        Some(g) => analyze_in(src, model, m, g, &p.values),
        None => analyze(src, model, m, &p.values),
    })
}
