//! The hover's propagation part: on a value (definition or use), an op name or a
//! sharding written on a value, after the usual explanation, what the latest
//! propagation inferred for the value(s) and why (`sdy_analysis::explain::why`): the
//! user-written shardings each axis came from, the ops it went through at which
//! priority, the axes a conflict dropped; locations are links into the document.
//!
//! Only for a chunk whose propagation is fresh (unchanged since the run); otherwise the
//! next providers answer as if there were no propagation.

use super::hover::{HoverCtx, HoverResult};
use super::inlay_hints::line_link;
use super::position::PositionEncoding;
use super::propagate;
use sdy_analysis::cost::function_hover;
use sdy_analysis::explain::{self, locate::Site as AttrSite, locate::Target, why};
use sdy_analysis::model::{Model, OpId, ValueId};
use sdy_analysis::propagation::editor::{sites, Site};

pub fn hover(cx: &HoverCtx) -> Option<HoverResult> {
    let (run, prop) = propagate::lookup(cx.chunk)?;
    let model = &cx.chunk.analysis.model;
    let bandwidth = prop.settings.get().bandwidth;
    let cost = run.cost.as_ref();
    if let Some((span, markdown)) =
        cost.and_then(|c| function_hover::at(model, c, cx.offset, &bandwidth))
    {
        let base = explain::at(model, &cx.chunk.src, cx.offset).map(|e| e.markdown);
        let markdown = base.map_or(markdown.clone(), |b| format!("{b}\n\n---\n\n{markdown}"));
        return Some(HoverResult { span, markdown });
    }
    let target = explain::locate::locate(model, cx.offset)?;
    let found: Vec<_> = sites_of(model, &target)
        .into_iter()
        .filter_map(|(s, name)| Some((run.prop.value(s)?, name)))
        .collect();
    if found.is_empty() {
        return None;
    }
    let base = explain::at(model, &cx.chunk.src, cx.offset);
    let located = prop.locate_chunk(cx.chunk);
    let locate = |o: u32| -> Option<(u32, String)> {
        let (uri, a, base) = located.as_ref()?;
        line_link(&a.text(PositionEncoding::Utf16), uri, base + o)
    };
    let mut markdown = base.as_ref().map_or(String::new(), |e| e.markdown.clone());
    for (v, name) in &found {
        if !markdown.is_empty() {
            markdown.push_str("\n\n---\n\n");
        }
        if found.len() > 1 {
            markdown.push_str(&format!("`{name}`: "));
        }
        markdown.push_str(&why::explain(model, &cx.chunk.src, &run.prop, v, false, &locate));
    }
    let sites = found.iter().map(|f| f.0.site);
    super::cost_hover::append(&mut markdown, &run, model, &target, sites, &bandwidth);
    let span = base.map_or_else(|| target.range(model), |e| e.range);
    Some(HoverResult { span, markdown })
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
