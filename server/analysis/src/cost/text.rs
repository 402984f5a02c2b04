//! The cost in words, for hints, hovers, lenses and listings (plain text; the front
//! ends add their markup).

use super::time::{self, Bandwidth};
use super::{Cost, FunctionCost, OpCollective, Side, ValueMemory};
use crate::collectives::Kind;
use crate::ir::sdy::AxisListDisplay;
use crate::propagation::editor::reshards::{compact, human_bytes};

/// `all-gather{"x"}`: the kind and the axes it works on.
pub fn kind_and_axes(c: &OpCollective) -> String {
    let axes: Vec<_> = c.collective.axes.iter().flat_map(|d| d.axes.iter().cloned()).collect();
    match (c.collective.kind, axes.is_empty()) {
        (Kind::CollectivePermute, _) | (_, true) => c.collective.kind.name().to_string(),
        (k, false) => format!("{}{}", k.name(), AxisListDisplay(&axes)),
    }
}

/// `all-gather{"x"} 4.0 MiB` (bytes per device; `?` when the shape is not static),
/// then `≈ 40.0 µs` with a bandwidth for its axes.
pub fn short(c: &OpCollective, bw: &Bandwidth) -> String {
    let bytes = c.collective.bytes_sent.map_or("?".to_string(), human_bytes);
    match c.collective.kind {
        Kind::AllSlice => kind_and_axes(c),
        _ => format!("{} {bytes}{}", kind_and_axes(c), time::suffix(bw, &c.collective)),
    }
}

/// The inlay hint after an op: `⇄ all-gather{"x"} 4.0 MiB, all-reduce{"y"} 1.0 KiB`.
pub fn op_hint(collectives: &[&OpCollective], bw: &Bandwidth) -> Option<String> {
    if collectives.is_empty() {
        return None;
    }
    let parts: Vec<String> = collectives.iter().map(|c| short(c, bw)).collect();
    Some(format!("⇄ {}", parts.join(", ")))
}

/// Why the collective is there, for op `op_name`.
pub fn reason(c: &OpCollective, op_name: &str) -> String {
    let r = &c.reason;
    let sh = |s: &Option<crate::sharding::TensorSharding>| {
        s.as_ref().map_or("replicated".to_string(), |s| format!("`{}`", compact(s)))
    };
    let dims = || {
        let d: Vec<String> = r
            .dims
            .iter()
            .map(|d| {
                let factor = d.factor.as_ref().map_or(String::new(), |f| format!(" (factor {f})"));
                format!("dimension {}{factor}: {} → {}", d.dim, d.from, d.to)
            })
            .collect();
        if d.is_empty() {
            String::new()
        } else {
            format!("; {}", d.join(", "))
        }
    };
    let returned = matches!(op_name, "func.return" | "return");
    match r.side {
        Side::Operand(k) if returned => format!(
            "the function returns result {k} sharded {}, the value is sharded {}{}",
            sh(&r.to),
            sh(&r.from),
            dims()
        ),
        Side::Operand(k) => format!(
            "operand {k} of `{op_name}` is sharded {}, the op computes with {}{}",
            sh(&r.from),
            sh(&r.to),
            dims()
        ),
        Side::Result(k) => format!(
            "`{op_name}` computes result {k} sharded {}, its sharding is {}{}",
            sh(&r.from),
            sh(&r.to),
            dims()
        ),
        Side::Reduction(k) => format!(
            "result {k} of `{op_name}` is a partial sum on each device (a reduction dimension is sharded on {}): all-reduced",
            AxisListDisplay(
                &c.collective.axes.iter().flat_map(|d| d.axes.iter().cloned()).collect::<Vec<_>>()
            )
        ),
        Side::Written => format!("`{op_name}` is a collective written in the source"),
        Side::Reshard => format!(
            "a step of the `{op_name}` written here, from {} to {}{}",
            sh(&r.from),
            sh(&r.to),
            dims()
        ),
        Side::Unknown => format!("inserted by the export ({} → {})", sh(&r.from), sh(&r.to)),
    }
}

/// One line per collective: `all-gather{"x"} 4.0 MiB of tensor<8x16xf32>: <reason>`.
pub fn line(c: &OpCollective, op_name: &str, bw: &Bandwidth) -> String {
    format!("{} of `{}`: {}", short(c, bw), c.ty, reason(c, op_name))
}

/// A plain hover section: a title and its lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub lines: Vec<String>,
}

/// The communication section of an op's hover (none when the op needs none).
pub fn op_section(cost: &Cost, op: u32, op_name: &str, bw: &Bandwidth) -> Option<Section> {
    let cs: Vec<&OpCollective> = cost.at_op(op).collect();
    if cs.is_empty() {
        return None;
    }
    let total: i64 = cs.iter().map(|c| c.collective.bytes_sent.unwrap_or(0)).sum();
    let mut lines: Vec<String> = cs.iter().map(|c| line(c, op_name, bw)).collect();
    if cs.len() > 1 {
        let t = time::total_suffix(bw, cs.iter().map(|c| &c.collective));
        lines.push(format!("in all {} per device{t}", human_bytes(total)));
    }
    Some(Section { title: "Communication (Shardy's export)".into(), lines })
}

/// `4.0 KiB per device (8x16xf32 on each)`.
pub fn value_memory(v: &ValueMemory) -> String {
    let shape: Vec<String> = v.local_shape.iter().map(i64::to_string).collect();
    format!("{} per device (local shape {})", human_bytes(v.bytes), shape.join("x"))
}

/// The code lens of a function: `2 collectives · 4.0 MiB per device · peak 12.0 MiB`.
pub fn function_lens(f: &FunctionCost, bw: &Bandwidth) -> String {
    let n = f.moving().count();
    let t = time::total_suffix(bw, f.moving().map(|c| &c.collective));
    let comm = match n {
        0 => "no communication".to_string(),
        1 => format!("1 collective, {} per device{t}", human_bytes(f.bytes_per_device())),
        n => format!("{n} collectives, {} per device{t}", human_bytes(f.bytes_per_device())),
    };
    format!(
        "{comm} · memory per device: arguments {}, results {}, peak ≈ {}",
        human_bytes(f.memory.arguments),
        human_bytes(f.memory.results),
        human_bytes(f.memory.peak)
    )
}

/// The moving collectives of `f` grouped by kind, in order of first appearance.
pub fn by_kind(f: &FunctionCost) -> Vec<(Kind, Vec<&OpCollective>)> {
    let mut kinds: Vec<(Kind, Vec<&OpCollective>)> = Vec::new();
    for c in f.moving() {
        match kinds.iter_mut().find(|k| k.0 == c.collective.kind) {
            Some(k) => k.1.push(c),
            None => kinds.push((c.collective.kind, vec![c])),
        }
    }
    kinds
}

/// The function section of a hover.
pub fn function_section(f: &FunctionCost, bw: &Bandwidth) -> Section {
    let mut lines = vec![function_lens(f, bw)];
    for (k, cs) in by_kind(f) {
        let b: i64 = cs.iter().map(|c| c.collective.bytes_sent.unwrap_or(0)).sum();
        lines.push(format!("{} × {}: {}", cs.len(), k.name(), human_bytes(b)));
    }
    Section { title: format!("Cost of @{}", f.name), lines }
}

/// The hover sections for a hovered op (`op`: its start) and values (`sites`): the
/// op's communication, the values' memory, and a function's cost when the op is a
/// `func.func`.
pub fn hover_sections(
    cost: &Cost,
    op: Option<(u32, &str)>,
    sites: &[crate::propagation::editor::Site],
    bw: &Bandwidth,
) -> Vec<Section> {
    let mut out = Vec::new();
    if let Some((start, name)) = op {
        if let Some(f) = cost.function_at(start) {
            out.push(function_section(f, bw));
        }
        out.extend(op_section(cost, start, name, bw));
    }
    let lines: Vec<String> =
        sites.iter().filter_map(|s| cost.value(*s)).map(value_memory).collect();
    if !lines.is_empty() {
        out.push(Section { title: "Memory".into(), lines });
    }
    out
}
