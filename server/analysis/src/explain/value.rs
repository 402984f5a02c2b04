//! Explaining SSA values (type, definition, sharding) and ops (by name).

use super::locate::Site;
use super::sharding::summary;
use super::site::{manual_axes, site_type};
use super::type_string;
use crate::model::sharding::SpannedSharding;
use crate::model::{Model, OpId, ValueDef, ValueId};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{AttrKind, Custom, NamedAttr, TypeKind};
use std::fmt::Write;

/// The sharding a value carries and where it is written: a function argument
/// attribute, the `in_shardings` of a manual or named computation (block arguments),
/// or the op defining it (`sdy.sharding`, `sharding`, `out_sharding`, `out_shardings`).
/// Inside a manual computation, the manual axes are removed from the sharding and
/// returned as the third element.
pub fn value_sharding(
    model: &Model,
    v: ValueId,
) -> Option<(SpannedSharding, &'static str, Vec<String>)> {
    match model.value(v).def {
        ValueDef::BlockArg { op, region: 0, block: 0, index } => {
            let info = model.op(op);
            match info.name() {
                "func.func" => {
                    let Custom::Func(f) = &info.node.custom else { return None };
                    let attr = f.args.get(index as usize)?.attrs.as_ref()?.get("sdy.sharding")?;
                    let s = one(model, op, attr, None)?;
                    Some((s, "the function argument's `sdy.sharding`", Vec::new()))
                }
                "sdy.manual_computation" | "sdy.named_computation" => {
                    let attr = info.node.inherent_attr("in_shardings")?;
                    let s = one(model, op, attr, Some(index))?;
                    let manual = manual_axes(model, op);
                    let erased = crate::sharding::make::erase_manual_axes(&s, &manual);
                    let s = s.with_value(erased);
                    let from = if manual.is_empty() {
                        "the op's `in_shardings`"
                    } else {
                        "the op's `in_shardings`, without the manual axes"
                    };
                    Some((s, from, manual))
                }
                _ => None,
            }
        }
        ValueDef::BlockArg { .. } => None,
        ValueDef::Result { op, index } => {
            let info = model.op(op);
            let (key, entry) = match info.name() {
                "sdy.sharding_constraint" | "sdy.reshard" | "sdy.data_flow_edge" => {
                    ("sharding", None)
                }
                "sdy.manual_computation" | "sdy.named_computation" => {
                    ("out_shardings", Some(index))
                }
                n if n.starts_with("sdy.") && info.node.inherent_attr("out_sharding").is_some() => {
                    ("out_sharding", None)
                }
                _ => {
                    let attr = info.node.attr("sdy.sharding")?;
                    let s = one(model, op, attr, Some(index)).or_else(|| {
                        if index == 0 {
                            one(model, op, attr, None)
                        } else {
                            None
                        }
                    })?;
                    return Some((s, "its op's `sdy.sharding`", Vec::new()));
                }
            };
            let attr = info.node.inherent_attr(key)?;
            let from = match key {
                "sharding" => "the op's `sharding`",
                "out_sharding" => "the op's `out_sharding`",
                _ => "the op's `out_shardings`",
            };
            Some((one(model, op, attr, entry)?, from, Vec::new()))
        }
    }
}

/// The sharding in `attr`: a `#sdy.sharding` (`index == None`), or entry `index` of a
/// per-value list.
fn one(model: &Model, op: OpId, attr: &NamedAttr, index: Option<u32>) -> Option<SpannedSharding> {
    let base = model.op(op).start;
    let AttrKind::Sdy(s) = &attr.value.as_ref()?.kind else { return None };
    match (&**s, index) {
        (SdyAttr::Sharding(s), None) => Some(SpannedSharding::from_ast(s, base)),
        (SdyAttr::PerValue(p), Some(i)) => {
            p.shardings.get(i as usize).map(|s| SpannedSharding::from_ast(s, base))
        }
        _ => None,
    }
}

/// A value: type, definition, sharding, uses.
pub fn explain_value(model: &Model, src: &str, v: ValueId) -> String {
    let info = model.value(v);
    let mut out = String::new();
    let _ = write!(out, "**`{}`**", info.name);
    if let Some(t) = &info.ty {
        let _ = write!(out, " : `{}`", type_string(t));
    }
    let _ = writeln!(out, " — {}\n", definition(model, v));
    if let Some(l) = super::source::value_source(model, src, v) {
        let _ = writeln!(out, "Source: {}\n", super::source::render(&l));
    }
    if matches!(info.ty.as_ref().map(|t| &*t.kind), Some(TypeKind::Token)) {
        let _ = writeln!(out, "A token: it orders side effects and holds no data.\n");
    }
    match value_sharding(model, v) {
        Some((s, from, manual)) => {
            let _ = writeln!(out, "Sharding, from {from}:\n");
            summary(model, &s, info.ty.as_ref(), &manual, &mut out);
        }
        None => {
            let _ = writeln!(
                out,
                "No sharding written: propagation treats it as fully open (any dimension may be \
                 sharded)."
            );
        }
    }
    let n = info.uses.len();
    let _ = writeln!(out, "\n{n} use{}.", if n == 1 { "" } else { "s" });
    out
}

fn definition(model: &Model, v: ValueId) -> String {
    match model.value(v).def {
        ValueDef::Result { op, index } => {
            let info = model.op(op);
            if info.results.len() == 1 {
                format!("the result of `{}`", info.name())
            } else {
                format!("result {index} of `{}`", info.name())
            }
        }
        ValueDef::BlockArg { op, region, block, index } => {
            let info = model.op(op);
            match &info.node.custom {
                Custom::Func(f) if region == 0 && block == 0 => {
                    format!("argument {index} of `@{}`", f.sym.text)
                }
                _ if block == 0 => format!("block argument {index} of `{}`", info.name()),
                _ => format!("argument {index} of block {block} of `{}`", info.name()),
            }
        }
    }
}

/// One-line descriptions of the sdy ops.
fn sdy_op_summary(name: &str) -> Option<&'static str> {
    Some(match name {
        "sdy.mesh" => "Defines a named mesh: axes with sizes and an optional device order",
        "sdy.sharding_constraint" => {
            "Constrains the sharding of a value; open dimensions may still be sharded further"
        }
        "sdy.reshard" => "Reshards a value to the given sharding (communication may follow)",
        "sdy.manual_computation" => {
            "A region written per device along the manual axes: its body sees local shapes"
        }
        "sdy.named_computation" => "A named group of ops with in/out shardings (inlined later)",
        "sdy.sharding_group" => "Values in the same group get the same sharding",
        "sdy.propagation_barrier" => "Stops propagation in the given direction",
        "sdy.data_flow_edge" => "Holds the sharding of a data-flow edge (e.g. a while loop value)",
        "sdy.constant" => {
            "A constant that is not deduplicated, so each use may be sharded differently"
        }
        "sdy.all_gather" => "All-gathers along the given axes of each dimension",
        "sdy.all_slice" => "Slices each dimension along the given axes (no communication)",
        "sdy.all_to_all" => "Moves axes from one dimension to another",
        "sdy.collective_permute" => "Sends each device's shard to another device",
        "sdy.all_reduce" => "All-reduces over the given axes",
        "sdy.reduce_scatter" => "Reduce-scatters along the given axes of each dimension",
        "sdy.sharded_to_unreduced" => "Moves sharded axes to unreduced axes",
        "sdy.replicated_to_unreduced" => "Moves replicated axes to unreduced axes",
        "sdy.return" => "Returns from an sdy region",
        _ => return None,
    })
}

/// An op, by its name: operands and results, result shardings, its sharding rule.
/// ` → per device `tensor<...>`` for the value at `site` sharded `s`, or nothing.
fn per_device(model: &Model, op: OpId, site: &Site, s: &crate::sharding::TensorSharding) -> String {
    let ty = site_type(model, op, site);
    let local = ty
        .as_ref()
        .and_then(|t| super::sharding::facts_for(model, s, Some(t.clone())).local_shape)
        .and_then(|l| super::with_dims(ty.as_ref()?, &l));
    local.map(|l| format!(" → per device `{l}`")).unwrap_or_default()
}

/// A `#sdy.sharding_per_value<[...]>` as a whole (hovered on its name): each entry with
/// the value it shards and its per-device shape.
pub fn explain_per_value(model: &Model, op: OpId, entries: &[(Site, SpannedSharding)]) -> String {
    let info = model.op(op);
    let n = entries.len();
    let mut out = format!(
        "**`#sdy.sharding_per_value`** · {n} sharding{} on `{}`, one per value in order\n\n",
        if n == 1 { "" } else { "s" },
        info.name()
    );
    for (i, (site, s)) in entries.iter().enumerate() {
        let value = match site {
            Site::Result(r) => info.results.get(*r as usize).map(|&v| &model.value(v).name),
            _ => None,
        };
        let who = value.map_or_else(|| format!("#{i}"), |name| format!("`{name}`"));
        let local = per_device(model, op, site, s);
        let _ = writeln!(out, "- {who}: `{}`{local}", s.value);
    }
    out.push_str("\nHover an entry for its explanation.");
    out
}

pub fn explain_op(model: &Model, src: &str, op: OpId) -> String {
    let info = model.op(op);
    let name = info.name();
    let mut out = String::new();
    let n_in = info.operands.len();
    let n_out = info.results.len();
    let _ = writeln!(
        out,
        "**`{name}`** · {n_in} operand{} · {n_out} result{}\n",
        if n_in == 1 { "" } else { "s" },
        if n_out == 1 { "" } else { "s" }
    );
    if let Some(s) = sdy_op_summary(name) {
        let _ = writeln!(out, "{s}.\n");
    }
    if let Some(l) = super::source::op_source(model, src, op) {
        let _ = writeln!(out, "Source: {}\n", super::source::render(&l));
    }
    for (i, &v) in info.results.iter().enumerate() {
        if let Some((s, _, _)) = value_sharding(model, v) {
            let local = per_device(model, op, &Site::Result(i as u32), &s);
            let _ = writeln!(out, "- `{}`: `{}`{local}", model.value(v).name, s.value);
        }
    }
    if let Some(rule) = super::rule::explain_op_rule(model, src, op) {
        if !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&rule);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}
