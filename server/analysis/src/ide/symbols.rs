//! The outline of one chunk: an explicit `module`, its meshes (with their axes) and
//! functions, and inside functions the manual and named computations, nested as they
//! are in the text. Folding ranges are in [`folding`].
//!
//! Only ops with regions are descended into, so the cost is the number of ops with
//! regions plus the number of symbols, not the size of the file.

mod folding;

pub use folding::{folding_ranges, Fold, FoldKind};

use crate::model::{MeshSymbol, Model, OpId};
use sdy_syntax::tree::{AttrKind, Children, Custom, StmtKind};
use sdy_syntax::Span;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Module,
    Mesh,
    MeshAxis,
    Function,
    ManualComputation,
    NamedComputation,
}

/// One entry of the outline; spans are chunk-relative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocSymbol {
    /// Never empty.
    pub name: String,
    pub detail: Option<String>,
    pub kind: SymbolKind,
    /// The whole definition.
    pub span: Span,
    /// The name in it (inside `span`).
    pub selection: Span,
    pub children: Vec<DocSymbol>,
}

/// The outline of a chunk: `top` is the chunk's top level, `src` its text.
pub fn document_symbols(model: &Model, top: &Children, src: &str) -> Vec<DocSymbol> {
    // Found by op, not searched per op: a file may hold tens of thousands of meshes.
    let mut meshes: HashMap<OpId, &MeshSymbol> = HashMap::new();
    for m in model.meshes.iter().rev() {
        meshes.insert(m.op, m); // the first of an op wins, as a search would find it
    }
    let body: Vec<DocSymbol> =
        model.top.iter().filter_map(|&id| top_symbol(model, &meshes, id, src)).collect();
    // A lone explicit `module` holds the body (the model only has the body's ops).
    let mut ops = top.iter().filter(|c| c.op.kind == StmtKind::Op);
    let module = match (ops.next(), ops.next()) {
        (Some(m), None) if m.op.full_name() == "builtin.module" => Some(m),
        _ => None,
    };
    match module {
        Some(m) => {
            let name = match &m.op.custom {
                Custom::Module(h) => h.sym.as_ref().map(|s| format!("@{}", s.text)),
                _ => None,
            };
            let selection = match &m.op.custom {
                Custom::Module(h) => h.sym.as_ref().map_or(m.op.name.span, |s| s.span),
                _ => m.op.name.span,
            };
            vec![DocSymbol {
                name: name.unwrap_or_else(|| "module".to_string()),
                detail: Some("builtin.module".to_string()),
                kind: SymbolKind::Module,
                span: m.span(),
                selection: selection.shift(m.offset),
                children: body,
            }]
        }
        _ => body,
    }
}

/// A mesh or a function.
fn top_symbol(
    model: &Model,
    meshes: &HashMap<OpId, &MeshSymbol>,
    id: OpId,
    src: &str,
) -> Option<DocSymbol> {
    let info = model.op(id);
    match &info.node.custom {
        Custom::Func(f) => {
            let vis = f.visibility.as_ref().map_or(String::new(), |v| format!("{} ", v.text));
            let (a, r) = (f.args.len(), f.results.len());
            Some(DocSymbol {
                name: format!("@{}", f.sym.text),
                detail: Some(format!("{vis}{a} argument{}, {r} result{}", plural(a), plural(r))),
                kind: SymbolKind::Function,
                span: info.span(),
                selection: f.sym.span.shift(info.start),
                children: computations(model, id, src),
            })
        }
        _ => {
            let m = *meshes.get(&id)?;
            let axes = m.mesh.iter().flat_map(|mesh| mesh.axes.iter().zip(&mesh.axis_spans));
            let children = axes
                .map(|(a, &span)| DocSymbol {
                    name: format!("\"{}\"", a.0),
                    detail: Some(format!("size {}", a.1)),
                    kind: SymbolKind::MeshAxis,
                    span,
                    // The quoted name starts the axis (`"x"=4`).
                    selection: Span::new(
                        span.start,
                        (span.start + a.0.len() as u32 + 2).min(span.end),
                    ),
                    children: Vec::new(),
                })
                .collect();
            Some(DocSymbol {
                name: format!("@{}", m.name),
                detail: m.mesh.as_ref().map(|mesh| mesh.to_string()),
                kind: SymbolKind::Mesh,
                span: info.span(),
                selection: m.name_span,
                children,
            })
        }
    }
}

/// The manual and named computations nested in `op`, each with its own nested ones.
fn computations(model: &Model, op: OpId, src: &str) -> Vec<DocSymbol> {
    let mut out = Vec::new();
    for &c in model.children(op) {
        let info = model.op(c);
        if info.node.regions.is_empty() {
            continue;
        }
        match computation(model, c, src) {
            Some(mut s) => {
                s.children = computations(model, c, src);
                out.push(s);
            }
            None => out.extend(computations(model, c, src)),
        }
    }
    out
}

/// The entry of a manual or named computation (without children).
fn computation(model: &Model, id: OpId, src: &str) -> Option<DocSymbol> {
    let info = model.op(id);
    let node = &info.node;
    let results = node.results.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join(", ");
    let attr_text = |key: &str| {
        let a = node.inherent_attr(key)?;
        src.get(a.span.shift(info.start).start as usize..a.span.shift(info.start).end as usize)
    };
    match info.name() {
        "sdy.manual_computation" => {
            let op_name = "sdy.manual_computation";
            Some(DocSymbol {
                name: if results.is_empty() {
                    op_name.to_string()
                } else {
                    format!("{results} = {op_name}")
                },
                detail: attr_text("manual_axes").map(|axes| format!("manual_axes={axes}")),
                kind: SymbolKind::ManualComputation,
                span: info.span(),
                selection: info.name_span(),
                children: Vec::new(),
            })
        }
        "sdy.named_computation" => {
            let name = node.inherent_attr("name");
            let (text, selection) = match name.and_then(|a| Some((a.value.as_ref()?, a.span))) {
                Some((v, span)) => match &v.kind {
                    AttrKind::String { raw } if !raw.is_empty() => {
                        (format!("\"{raw}\""), span.shift(info.start))
                    }
                    _ => ("sdy.named_computation".to_string(), info.name_span()),
                },
                None => ("sdy.named_computation".to_string(), info.name_span()),
            };
            let detail = if results.is_empty() {
                "sdy.named_computation".to_string()
            } else {
                format!("{results} = sdy.named_computation")
            };
            Some(DocSymbol {
                name: text,
                detail: Some(detail),
                kind: SymbolKind::NamedComputation,
                span: info.span(),
                selection,
                children: Vec::new(),
            })
        }
        _ => None,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests;
