//! The cost part of the hover (after the propagation's explanation): the collectives
//! Shardy's export inserts for the hovered op and why, the hovered values' bytes per
//! device. The sections come from `sdy_analysis::cost::text::hover_sections`.

use super::propagate::ChunkRun;
use sdy_analysis::cost::time::Bandwidth;
use sdy_analysis::explain::locate::Target;
use sdy_analysis::model::Model;
use sdy_analysis::propagation::editor::Site;

/// Appends the sections for `target` (with its values at `sites`) to `markdown`.
pub fn append(
    markdown: &mut String,
    run: &ChunkRun,
    model: &Model,
    target: &Target,
    sites: impl Iterator<Item = Site>,
    bandwidth: &Bandwidth,
) {
    let Some(cost) = &run.cost else { return };
    let op = match target {
        Target::OpName { op } => Some((model.op(*op).start, model.op(*op).name())),
        _ => None,
    };
    let sites: Vec<Site> = sites.collect();
    for s in sdy_analysis::cost::text::hover_sections(cost, op, &sites, bandwidth) {
        markdown.push_str(&format!("\n\n**{}**\n", s.title));
        for l in &s.lines {
            markdown.push_str(&format!("\n- {l}"));
        }
    }
}
