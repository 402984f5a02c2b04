//! Hover: what is under the cursor, as Markdown about a chunk-relative range.
//!
//! Providers are tried in order, most specific first; the first that answers wins. To
//! add one, write a `fn(&Ctx) -> Option<Hover>` and put it in [`PROVIDERS`]: the
//! context has the chunk ([`Snapshot`]), the cursor and the chunk's fresh propagation,
//! if its keeper passed one in ([`Propagated`]).

mod propagated;

use super::strings::{self, Scope};
use crate::cost::time::Bandwidth;
use crate::cost::Cost;
use crate::explain::why::Locate;
use crate::model::ValueDef;
use crate::propagation::editor::ChunkPropagation;
use crate::query::{self, Index, SymbolKind, Target};
use sdy_syntax::tree::Custom;
use sdy_syntax::Span;

pub use super::strings::Hover;

/// One analysed chunk, offsets relative to its start.
pub struct Snapshot<'a> {
    /// Its model, text and `module` op.
    pub scope: Scope<'a>,
    /// The model's position index.
    pub index: &'a Index,
}

/// The fresh propagation of the chunk (unchanged since the run), from whoever keeps it.
pub struct Propagated<'a> {
    pub prop: &'a ChunkPropagation,
    /// What the propagated module costs (`None` when propagation failed).
    pub cost: Option<&'a Cost>,
    /// Where a chunk offset is, for the explanation's links.
    pub locate: Locate<'a>,
    /// The user's bandwidth per axis, which turns bytes into times.
    pub bandwidth: &'a Bandwidth,
}

/// What a provider sees.
pub struct Ctx<'a> {
    pub chunk: &'a Snapshot<'a>,
    pub offset: u32,
    pub propagated: Option<&'a Propagated<'a>>,
}

type Provider = fn(&Ctx) -> Option<Hover>;

/// The providers, most specific first.
pub const PROVIDERS: &[Provider] = &[in_string, propagated::hover, explain, symbol_or_value];

/// Longest definition text shown.
const MAX_SNIPPET: usize = 1000;

/// The first provider's answer at `offset` of `chunk`.
pub fn hover(chunk: &Snapshot, offset: u32, propagated: Option<&Propagated>) -> Option<Hover> {
    let cx = Ctx { chunk, offset, propagated };
    PROVIDERS.iter().find_map(|p| p(&cx))
}

/// Inside strings that hold sdy or GSPMD text (`ide::strings`).
fn in_string(cx: &Ctx) -> Option<Hover> {
    let op = cx.chunk.index.op_at(cx.chunk.scope.model, cx.offset);
    strings::hover(&cx.chunk.scope, op, cx.offset)
}

/// "Explain this sharding" (`crate::explain`): shardings, meshes, axes, values and ops.
/// It answers first; the generic hovers below cover what it does not explain.
fn explain(cx: &Ctx) -> Option<Hover> {
    let Scope { model, src, .. } = cx.chunk.scope;
    let e = crate::explain::at(model, src, cx.offset)?;
    Some(Hover { range: e.range, markdown: e.markdown })
}

/// SSA values (their types) and symbols (meshes: their definition; functions).
fn symbol_or_value(cx: &Ctx) -> Option<Hover> {
    let Scope { model, src, .. } = cx.chunk.scope;
    let text = |s: Span| src.get(s.start as usize..s.end as usize).unwrap_or("");
    let target = cx.chunk.index.target_at(model, cx.offset)?;
    let markdown = match &target {
        Target::Value { values, .. } => {
            let mut code = String::new();
            for &v in values {
                let ty = query::type_span(model, v).map_or("<unknown type>", text);
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
            fenced(&snippet(text(span)), &what)
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
    Some(Hover { range: target.span(), markdown })
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
