//! The hover's propagation part: on a value (definition or use), an op name or a
//! sharding written on a value, after the usual explanation, what the chunk's fresh
//! propagation inferred for the value(s) and why (`explain::why`): the user-written
//! shardings each axis came from, the ops it went through at which priority, the axes
//! a conflict dropped; then what it costs (`cost::text::hover_sections`): the
//! collectives Shardy's export inserts for the hovered op and why, the values' bytes per
//! device. Without a fresh propagation the next providers answer.

use super::{Ctx, Hover};
use crate::cost::function_hover;
use crate::explain::{self, locate::Site as AttrSite, locate::Target, why};
use crate::model::{Model, OpId, ValueId};
use crate::propagation::editor::{sites, Site};

pub fn hover(cx: &Ctx) -> Option<Hover> {
    let p = cx.propagated?;
    let (model, src) = (cx.chunk.scope.model, cx.chunk.scope.src);
    if let Some((range, markdown)) =
        p.cost.and_then(|c| function_hover::at(model, c, cx.offset, p.bandwidth))
    {
        let base = explain::at(model, src, cx.offset).map(|e| e.markdown);
        let markdown = base.map_or(markdown.clone(), |b| format!("{b}\n\n---\n\n{markdown}"));
        return Some(Hover { range, markdown });
    }
    let target = explain::locate::locate(model, cx.offset)?;
    let found: Vec<_> = sites_of(model, &target)
        .into_iter()
        .filter_map(|(s, name)| Some((p.prop.value(s)?, name)))
        .collect();
    if found.is_empty() {
        return None;
    }
    let base = explain::at(model, src, cx.offset);
    let mut markdown = base.as_ref().map_or(String::new(), |e| e.markdown.clone());
    for (v, name) in &found {
        if !markdown.is_empty() {
            markdown.push_str("\n\n---\n\n");
        }
        if found.len() > 1 {
            markdown.push_str(&format!("`{name}`: "));
        }
        markdown.push_str(&why::explain(model, src, p.prop, v, false, p.locate));
    }
    if let Some(cost) = p.cost {
        let op = match &target {
            Target::OpName { op } => Some((model.op(*op).start, model.op(*op).name())),
            _ => None,
        };
        let sites: Vec<Site> = found.iter().map(|f| f.0.site).collect();
        for s in crate::cost::text::hover_sections(cost, op, &sites, p.bandwidth) {
            markdown.push_str(&format!("\n\n**{}**\n", s.title));
            for l in &s.lines {
                markdown.push_str(&format!("\n- {l}"));
            }
        }
    }
    let range = base.map_or_else(|| target.range(model), |e| e.range);
    Some(Hover { range, markdown })
}

/// The values a hovered thing is about, with their names.
fn sites_of(model: &Model, target: &Target) -> Vec<(Site, String)> {
    let op_results = |op: OpId, only: Option<u32>| -> Vec<(Site, String)> {
        let info = model.op(op);
        if info.name() == "func.func" {
            return Vec::new();
        }
        info.results
            .iter()
            .enumerate()
            .filter(|(i, _)| only.is_none_or(|k| *i as u32 == k))
            .map(|(i, &v)| (Site::OpResult { op: info.start, index: i }, name(model, v)))
            .collect()
    };
    match target {
        Target::Value { value, .. } => value_site(model, *value).into_iter().collect(),
        Target::OpName { op } => op_results(*op, None),
        Target::PerValue { op, entries, .. }
            if matches!(entries.first(), Some((AttrSite::Result(_), _))) =>
        {
            op_results(*op, None)
        }
        Target::Sharding { op, site, .. } | Target::ShardingAxis { op, site, .. } => {
            let start = model.op(*op).start;
            match site {
                AttrSite::Result(i) => op_results(*op, Some(*i)),
                AttrSite::FuncArg(i) => {
                    let v = model.op(*op).region_args.first().and_then(|a| a.get(*i as usize));
                    v.map(|&v| (Site::Arg { func: start, index: *i as usize }, name(model, v)))
                        .into_iter()
                        .collect()
                }
                AttrSite::FuncResult(i) => {
                    vec![(Site::Result { func: start, index: *i as usize }, format!("result {i}"))]
                }
                AttrSite::Inherent { key, index } => match key.as_str() {
                    "sharding" | "out_sharding" => op_results(*op, Some(0)),
                    "out_shardings" => op_results(*op, Some(index.unwrap_or(0))),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

fn value_site(model: &Model, v: ValueId) -> Option<(Site, String)> {
    Some((sites::of_value(model, v)?, name(model, v)))
}

fn name(model: &Model, v: ValueId) -> String {
    model.value(v).name.to_string()
}
