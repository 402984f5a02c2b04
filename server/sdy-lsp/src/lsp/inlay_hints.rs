//! `textDocument/inlayHint` and `inlayHint/resolve`.
//!
//! * Per-device shapes of sharded values, after their type (`perDeviceShapes`): from
//!   the written shardings, or from the propagated ones where a fresh run exists.
//! * Propagated shardings (`propagatedShardings`) from the latest run: after each value
//!   without a written sharding; and (`extensions`) `→ ...` after a written sharding that
//!   propagation changed. A chunk edited since the run shows them **marked `(stale)`** where the text
//!   they point at is unchanged (the rest of the chunk keeps its place), and none in the
//!   edited part: they may be wrong now but still say what the last run found, until
//!   the next run (automatic in `onChange` mode) replaces them.
//! * `compact`: no hints on op results sharded like one of their operands, so the hints
//!   left mark where shardings change.
//! * `inlayHint/resolve` adds the tooltip: the full explanation of the value (where each
//!   axis came from, what a conflict dropped), as in the hover.
//!
//! Hints are precomputed per chunk when a run finishes (sorted by offset), so a request
//! for a visible range is a binary search and a conversion of positions.

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use super::position::Text;
use super::propagate::{ChunkRun, DocResult, OffsetMap, Propagator};
use super::settings::Settings;
use sdy_analysis::explain::why;
use sdy_analysis::propagation::editor::hints::{Hint, HintKind};
use sdy_analysis::propagation::editor::Site;
use serde_json::{json, Value};
use std::sync::Arc;
use tower_lsp::lsp_types::{
    InlayHint, InlayHintKind, InlayHintLabel, InlayHintTooltip, Range, Url,
};

/// The label suffix of hints from a run older than the chunk's text.
pub const STALE: &str = " (stale)";

/// The hints of `range`.
pub fn hints(
    a: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    range: Range,
    result: Option<&DocResult>,
    settings: &Settings,
    prop: &Propagator,
) -> Option<Vec<InlayHint>> {
    if !settings.hints {
        return Some(Vec::new());
    }
    let text = a.text(config.encoding);
    let want = text.span(range);
    let mut out = Vec::new();
    let show = |h: &Hint| {
        let kind = match h.kind {
            HintKind::Shape => settings.shape_hints,
            HintKind::Sharding => settings.sharding_hints,
            HintKind::Extension => settings.extension_hints,
            HintKind::Communication => settings.communication_hints,
            HintKind::Memory => settings.memory_hints,
        };
        kind && !(settings.compact_hints && h.follows_operand)
    };
    for (i, c) in a.chunks.iter().enumerate() {
        if c.span.end < want.start || c.span.start > want.end {
            continue;
        }
        let Some(current) = &c.result else { continue };
        let base = c.span.start;
        let lo = want.start.saturating_sub(base);
        let hi = want.end.saturating_sub(base);
        let run = result.and_then(|r| r.run_for(a, i));
        let emit = |h: &Hint, offset: u32, stale: bool, out: &mut Vec<InlayHint>| {
            let mut label = with_time(h, run.and_then(|r| r.0.cost.as_ref()), settings);
            if stale {
                label.push_str(STALE);
            }
            let data = h.site.map(|s| json!({"uri": uri, "chunk": i, "site": site_json(s)}));
            out.push(InlayHint {
                position: text.position(base + offset),
                label: InlayHintLabel::String(label),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: None,
                padding_left: Some(true),
                padding_right: None,
                data,
            });
        };
        match run {
            Some((run, true)) => {
                for h in in_range(&run.hints, lo, hi).iter().filter(|h| show(h)) {
                    emit(h, h.offset, false, &mut out);
                }
            }
            stale => {
                if let Some((run, _)) = stale {
                    let map = OffsetMap::new(&run.src, &current.src);
                    for (a, b) in map.preimage(lo, hi) {
                        let kinds = |h: &&Hint| h.kind != HintKind::Shape && show(h);
                        for h in in_range(&run.hints, a, b).iter().filter(kinds) {
                            if let Some(o) = map.map(h.offset) {
                                emit(h, o, true, &mut out);
                            }
                        }
                    }
                }
                if settings.shape_hints {
                    let shapes = prop.written_shapes(current);
                    for h in in_range(&shapes, lo, hi) {
                        emit(h, h.offset, false, &mut out);
                    }
                }
            }
        }
    }
    out.sort_by_key(|h| (h.position.line, h.position.character));
    Some(out)
}

/// The label of `h`, a communication hint relabelled with the estimated times under the
/// current bandwidth settings.
fn with_time(h: &Hint, cost: Option<&sdy_analysis::cost::Cost>, settings: &Settings) -> String {
    let relabel = |op: u32| {
        let cs: Vec<_> = cost?.at_op(op).collect();
        sdy_analysis::cost::text::op_hint(&cs, &settings.bandwidth)
    };
    match h.collectives_of {
        Some(op) if !settings.bandwidth.is_empty() => relabel(op),
        _ => None,
    }
    .unwrap_or_else(|| h.label.clone())
}

/// The hints with `lo <= offset <= hi` of a list sorted by offset.
fn in_range(hints: &[Hint], lo: u32, hi: u32) -> &[Hint] {
    let start = hints.partition_point(|h| h.offset < lo);
    let end = hints.partition_point(|h| h.offset <= hi);
    hints.get(start..end.max(start)).unwrap_or(&[])
}

fn site_json(s: Site) -> Value {
    match s {
        Site::Arg { func, index } => json!({"kind": "arg", "at": func, "index": index}),
        Site::Result { func, index } => json!({"kind": "result", "at": func, "index": index}),
        Site::OpResult { op, index } => json!({"kind": "op", "at": op, "index": index}),
    }
}

fn site_from_json(v: &Value) -> Option<Site> {
    let at = u32::try_from(v["at"].as_u64()?).ok()?;
    let index = usize::try_from(v["index"].as_u64()?).ok()?;
    Some(match v["kind"].as_str()? {
        "arg" => Site::Arg { func: at, index },
        "result" => Site::Result { func: at, index },
        "op" => Site::OpResult { op: at, index },
        _ => return None,
    })
}

/// The document a hint to resolve belongs to.
pub fn hint_uri(hint: &InlayHint) -> Option<Url> {
    Url::parse(hint.data.as_ref()?["uri"].as_str()?).ok()
}

/// `inlayHint/resolve`: the explanation as the tooltip.
pub fn resolve(
    a: &Analyzed,
    config: &ClientConfig,
    mut hint: InlayHint,
    result: Option<&DocResult>,
) -> InlayHint {
    let Some(data) = hint.data.clone() else { return hint };
    let (Some(i), Some(site)) = (data["chunk"].as_u64(), site_from_json(&data["site"])) else {
        return hint;
    };
    let Some((run, fresh)) = result.and_then(|r| r.run_for(a, i as usize)) else { return hint };
    let Some(uri) = hint_uri(&hint) else { return hint };
    let Some(markdown) = explanation(a, config, &uri, i as usize, run, fresh, site) else {
        return hint;
    };
    hint.tooltip = Some(InlayHintTooltip::MarkupContent(super::hover::markup(config, markdown)));
    hint
}

/// The explanation of a site of a chunk's run, its locations links into `uri`.
pub fn explanation(
    a: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    chunk: usize,
    run: &Arc<ChunkRun>,
    fresh: bool,
    site: Site,
) -> Option<String> {
    let v = run.prop.value(site)?;
    let c = a.chunks.get(chunk)?;
    let current = c.result.as_ref()?;
    let map = if fresh { OffsetMap::identity() } else { OffsetMap::new(&run.src, &current.src) };
    let text = a.text(config.encoding);
    let base = c.span.start;
    let locate = |o: u32| line_link(&text, uri, base + map.map(o)?);
    Some(why::explain(&run.analysis.model, &run.src, &run.prop, v, !fresh, &locate))
}

/// `(line, uri#Lline)` of an absolute offset.
pub fn line_link(text: &Text<'_>, uri: &Url, offset: u32) -> Option<(u32, String)> {
    let line = text.position(offset).line + 1;
    Some((line, format!("{uri}#L{line}")))
}
