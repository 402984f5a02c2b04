//! `textDocument/hover`: the analysis core's hover (`sdy_analysis::ide::hover`) at a
//! position, given the chunk's fresh propagation when there is one (its locations
//! become links into the document).

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use super::inlay_hints::line_link;
use super::propagate::DocResult;
use sdy_analysis::cost::time::Bandwidth;
use sdy_analysis::ide::hover::{self, Propagated};
use tower_lsp::lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position, Url};

pub fn hover(
    analyzed: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    result: Option<&DocResult>,
    bandwidth: &Bandwidth,
    position: Position,
) -> Option<Hover> {
    let text = analyzed.text(config.encoding);
    let offset = text.offset(position);
    let (base, chunk) = analyzed.chunk_at(offset)?;
    let run = result.and_then(|r| r.fresh_run(chunk));
    let locate = |o: u32| line_link(&text, uri, base + o);
    let propagated = run.map(|r| Propagated {
        prop: &r.prop,
        cost: r.cost.as_ref(),
        locate: &locate,
        bandwidth,
    });
    let r = hover::hover(&chunk.snapshot(), offset - base, propagated.as_ref())?;
    let range = Some(text.range(r.range.shift(base)));
    Some(Hover { contents: HoverContents::Markup(markup(config, r.markdown)), range })
}

/// Markdown as the client takes it: plain text for clients without Markdown.
pub fn markup(config: &ClientConfig, markdown: String) -> MarkupContent {
    if config.markdown {
        MarkupContent { kind: MarkupKind::Markdown, value: markdown }
    } else {
        let value = sdy_analysis::explain::plain::to_plain(&markdown);
        MarkupContent { kind: MarkupKind::PlainText, value }
    }
}
