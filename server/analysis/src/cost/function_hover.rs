//! The hover of a `func.func` (on `func.func` or its `@name`): what the function's
//! code lens says, in detail: the collectives by kind (count, bytes per device, time
//! with a bandwidth), the memory per device of each argument and result, the peak.

use super::text::by_kind;
use super::time::{self, Bandwidth};
use super::Cost;
use crate::model::Model;
use crate::propagation::editor::reshards::human_bytes;
use crate::propagation::editor::Site;
use sdy_syntax::tree::Custom;
use sdy_syntax::Span;

/// The function whose `func.func` or `@name` is at `offset` (chunk-relative): the
/// hovered range and the Markdown of its cost.
pub fn at(model: &Model, cost: &Cost, offset: u32, bw: &Bandwidth) -> Option<(Span, String)> {
    let op = crate::query::innermost_op(model, offset, false)?;
    let info = model.op(op);
    let Custom::Func(h) = &info.node.custom else { return None };
    let sym = h.sym.span.shift(info.start);
    let span = [info.name_span(), sym].into_iter().find(|s| s.touches(offset))?;
    let f = cost.function_at(info.start)?;
    let mut md = format!("**Cost of `@{}`** (per device, after Shardy's export)\n\n", f.name);
    let n = f.moving().count();
    let t = time::total_suffix(bw, f.moving().map(|c| &c.collective));
    match n {
        0 => md.push_str("Communication: none\n"),
        n => md.push_str(&format!(
            "Communication: {n} collective{}, {}{t}\n",
            if n == 1 { "" } else { "s" },
            human_bytes(f.bytes_per_device())
        )),
    }
    for (kind, cs) in by_kind(f) {
        let bytes: i64 = cs.iter().map(|c| c.collective.bytes_sent.unwrap_or(0)).sum();
        let t = time::total_suffix(bw, cs.iter().map(|c| &c.collective));
        md.push_str(&format!("- {} × {}: {}{t}\n", cs.len(), kind.name(), human_bytes(bytes)));
    }
    if f.collectives.len() > n {
        md.push_str("- all-slices are local: no bytes moved\n");
    }
    // Each argument as the function receives it.
    let args: Vec<String> = (0..h.args.len())
        .filter_map(|index| {
            let v = cost.value(Site::Arg { func: info.start, index })?;
            let name = info.region_args.first().and_then(|a| a.get(index));
            let name = name.map_or(format!("#{index}"), |&a| format!("`{}`", model.value(a).name));
            Some(format!("{name} {}", human_bytes(v.bytes)))
        })
        .collect();
    let args = if args.is_empty() { String::new() } else { format!(" ({})", args.join(", ")) };
    let m = &f.memory;
    let results: Vec<String> = m
        .per_result
        .iter()
        .enumerate()
        .map(|(i, &b)| format!("result {i} {}", human_bytes(b)))
        .collect();
    let results =
        if results.is_empty() { String::new() } else { format!(" ({})", results.join(", ")) };
    md.push_str(&format!(
        "\nMemory:\n- arguments: {}{args}\n- results: {}{results}\n- peak ≈ {} (arguments, and each value \
         from its definition to its last use over the op order; no buffer reuse)\n",
        human_bytes(m.arguments),
        human_bytes(m.results),
        human_bytes(m.peak)
    ));
    Some((span, md))
}
