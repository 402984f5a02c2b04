//! `textDocument/hover`.
//!
//! Hover content comes from a list of providers tried in order; the first that answers
//! wins. To add one, write a `fn(&HoverCtx) -> Option<HoverResult>` and put it in
//! [`PROVIDERS`]: the context has the chunk's model, text and position index, and the
//! cursor, all chunk-relative. [`explain`] is where `sdy_analysis::explain` plugs in.

use super::analysis::{Analyzed, ChunkResult};
use super::capabilities::ClientConfig;
use sdy_analysis::model::ValueDef;
use sdy_analysis::query::{self, SymbolKind, Target};
use sdy_syntax::tree::Custom;
use sdy_syntax::Span;
use tower_lsp::lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

/// What a provider sees.
pub struct HoverCtx<'a> {
    pub chunk: &'a ChunkResult,
    /// The cursor, relative to the chunk's start.
    pub offset: u32,
}

/// A provider's answer: Markdown, and the chunk-relative range it is about.
pub struct HoverResult {
    pub span: Span,
    pub markdown: String,
}

type Provider = fn(&HoverCtx) -> Option<HoverResult>;

/// The providers, most specific first.
pub const PROVIDERS: &[Provider] =
    &[super::strings::hover, super::propagation_hover::hover, explain, symbol_or_value];

/// Longest definition text shown.
const MAX_SNIPPET: usize = 1000;

pub fn hover(analyzed: &Analyzed, config: &ClientConfig, position: Position) -> Option<Hover> {
    let text = analyzed.text(config.encoding);
    let offset = text.offset(position);
    let (base, chunk) = analyzed.chunk_at(offset)?;
    let r = answer(chunk, offset - base)?;
    let contents = if config.markdown {
        MarkupContent { kind: MarkupKind::Markdown, value: r.markdown }
    } else {
        MarkupContent { kind: MarkupKind::PlainText, value: plain(&r.markdown) }
    };
    let range = Some(text.range(r.span.shift(base)));
    Some(Hover { contents: HoverContents::Markup(contents), range })
}

/// The first provider's answer at chunk-relative `offset` (also `sdy-lsp explain`'s).
pub fn answer(chunk: &ChunkResult, offset: u32) -> Option<HoverResult> {
    let cx = HoverCtx { chunk, offset };
    PROVIDERS.iter().find_map(|p| p(&cx))
}

/// "Explain this sharding" (`sdy_analysis::explain`): shardings, meshes, axes, values
/// and ops. It answers first; the generic hovers below cover what it does not explain.
/// The chunk is analysed on its own, so its model, text and offsets are chunk-relative.
fn explain(cx: &HoverCtx) -> Option<HoverResult> {
    let e = sdy_analysis::explain::at(&cx.chunk.analysis.model, &cx.chunk.src, cx.offset)?;
    Some(HoverResult { span: e.range, markdown: e.markdown })
}

/// SSA values (their types) and symbols (meshes: their definition; functions).
fn symbol_or_value(cx: &HoverCtx) -> Option<HoverResult> {
    let model = &cx.chunk.analysis.model;
    let target = cx.chunk.index().target_at(model, cx.offset)?;
    let markdown = match &target {
        Target::Value { values, .. } => {
            let mut code = String::new();
            for &v in values {
                let ty = query::type_span(model, v).map_or("<unknown type>", |s| cx.chunk.text(s));
                code.push_str(&format!("{} : {ty}\n", model.value(v).name));
            }
            let what = match model.value(*values.first()?).def {
                ValueDef::Result { op, index } => {
                    let (n, name) = (model.op(op).results.len(), model.op(op).name());
                    if values.len() > 1 {
                        format!("results of `{name}`")
                    } else if n > 1 {
                        format!("result #{index} of `{name}`")
                    } else {
                        format!("result of `{name}`")
                    }
                }
                ValueDef::BlockArg { op, block, index, .. } => match &model.op(op).node.custom {
                    Custom::Func(f) if block == 0 => {
                        format!("argument #{index} of `@{}`", f.sym.text)
                    }
                    _ => format!("block argument #{index} of `{}`", model.op(op).name()),
                },
            };
            fenced(&code, &what)
        }
        Target::Symbol { name, kind: SymbolKind::Mesh, .. } => {
            let span = query::mesh_definition_span(model, name)?;
            let what = match model.mesh(name)?.mesh.as_ref().map(|m| m.device_count()) {
                None => String::new(),
                Some(Some(n)) => format!("mesh of {n} device{}", plural(n)),
                Some(None) => "mesh of ? devices".to_string(), // past i64
            };
            fenced(&snippet(cx.chunk.text(span)), &what)
        }
        Target::Symbol { name, kind: SymbolKind::Func, .. } => {
            let info = model.op(*model.funcs.get(name)?);
            let Custom::Func(f) = &info.node.custom else { return None };
            let vis = f.visibility.as_ref().map_or(String::new(), |v| format!("{} ", v.text));
            let (a, r) = (f.args.len() as i64, f.results.len() as i64);
            let what = format!("{a} argument{}, {r} result{}", plural(a), plural(r));
            fenced(&format!("func.func {vis}@{name}"), &what)
        }
        Target::Symbol { name, kind: SymbolKind::Unknown, .. } => {
            format!("`@{name}`: no such symbol in this module")
        }
    };
    Some(HoverResult { span: target.span(), markdown })
}

fn fenced(code: &str, what: &str) -> String {
    let mut s = format!("```mlir\n{}\n```", code.trim_end());
    if !what.is_empty() {
        s.push_str("\n\n");
        s.push_str(what);
    }
    s
}

fn snippet(text: &str) -> String {
    if text.len() <= MAX_SNIPPET {
        return text.to_string();
    }
    let mut end = MAX_SNIPPET;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} ...", &text[..end])
}

fn plural(n: i64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Markdown to plain text, for clients without Markdown (and `sdy-lsp explain`).
pub fn plain(markdown: &str) -> String {
    sdy_analysis::explain::plain::to_plain(markdown)
}
