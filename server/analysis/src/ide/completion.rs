//! Completion at a cursor in one chunk.
//!
//! The statement under the cursor is usually being typed, so it often does not parse:
//! the context is read from the raw tokens around the cursor (from the start of the
//! statement to the end of the line), not from the tree. The model answers what the
//! text refers to: the meshes and their axes, the values in scope, the functions.
//!
//! Contexts, tried in this order:
//! * inside a sharding (`#sdy.sharding<`, a `sharding_per_value` entry, `in_shardings=[<`,
//!   `out_sharding=<`, `sdy.sharding_constraint %x <`): the mesh names right after `<`;
//!   the axes of the sharding's mesh not used yet in it (and `?`) inside a dimension's
//!   `{`; `p<N>` after a dimension's `}`; `replicated=` / `unreduced=` after the
//!   dimension list, and axes inside their `{`;
//! * `%...`: the SSA values in scope (defined before the cursor in its block or an
//!   enclosing one, up to the isolated op around it), nearest first;
//! * `@...` after `call`: the functions;
//! * `#...` as an attribute value, or an attribute name in a dictionary: sdy sharding
//!   attributes;
//! * `{` of `manual_axes=` and of the collectives' axis lists: the mesh's axes;
//! * where an op name goes: the sdy ops, with snippets of their custom syntax.

use super::tokens::{line_end, line_start};
use crate::model::{Model, OpId, ValueId};
use crate::query::{self, Index};
use sdy_syntax::lexer::{lex_into, Token, TokenKind as K};
use sdy_syntax::tree::Custom;
use sdy_syntax::Span;

mod scope;
mod sdy_ops;
mod sharding;
mod snippets;
#[cfg(test)]
mod tests;

pub use scope::values_in_scope;
use scope::{in_region, statement_start};
use sdy_ops::SDY_OPS;
use sharding::MeshAxes;
use snippets::escape;
pub use snippets::snippet_to_plain;

/// What an item completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    Mesh,
    Axis,
    /// `?`
    Operator,
    /// `p<N>`
    Priority,
    /// `replicated=`, `unreduced=`
    Keyword,
    /// An sdy op (a snippet of its syntax).
    Op,
    Value,
    Function,
    /// An attribute (`sdy.sharding = ...`, `#sdy.sharding<...>`).
    Attribute,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub label: String,
    pub kind: ItemKind,
    pub detail: Option<String>,
    pub documentation: Option<String>,
    /// What replaces `replace`; in snippet syntax (`$1`, `${1:x}`) when `snippet`.
    pub insert: String,
    pub snippet: bool,
    /// The chunk-relative range replaced: the typed prefix and the rest of the word
    /// under the cursor. On one line, and holds the cursor.
    pub replace: Span,
    /// What the client matches the typed prefix against.
    pub filter: String,
    /// Rank among the items (lower first).
    pub order: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completions {
    pub items: Vec<Item>,
    /// Not every candidate was listed (too many): ask again as the prefix grows.
    pub incomplete: bool,
}

/// At most this many SSA values are listed; beyond, only those matching the prefix.
const MAX_VALUES: usize = 500;

/// The completions at `offset` of the chunk whose text is `src` (all chunk-relative).
pub fn complete(model: &Model, index: &Index, src: &str, offset: u32) -> Completions {
    let mut offset = offset.min(src.len() as u32);
    while !src.is_char_boundary(offset as usize) {
        offset -= 1;
    }
    let Some(cx) = Cx::new(model, index, src, offset) else { return Completions::default() };
    cx.complete()
}

/// The statement around the cursor, lexed.
struct Cx<'a> {
    model: &'a Model,
    index: &'a Index,
    src: &'a str,
    offset: u32,
    /// From the statement's start to the end of the cursor's line, comments left out.
    toks: Vec<Token>,
    /// `toks[..before]` come before the word being typed.
    before: usize,
    /// The word being typed (`@me`, `%ar`, `"x`, `sdy.`), if any.
    prefix: Option<Token>,
    replace: Span,
    /// Indices of the brackets open at the cursor, innermost first.
    open: Vec<usize>,
}

impl<'a> Cx<'a> {
    fn new(model: &'a Model, index: &'a Index, src: &'a str, offset: u32) -> Option<Cx<'a>> {
        let start = statement_start(model, index, src, offset);
        let end = line_end(src, offset);
        let mut all = Vec::new();
        lex_into(src.get(start as usize..end as usize)?, start, &mut all);
        // Nothing to complete inside a comment.
        if all.iter().any(|t| t.kind == K::Comment && t.start < offset) {
            return None;
        }
        let toks: Vec<Token> = all.into_iter().filter(|t| t.kind != K::Comment).collect();
        let text = |t: &Token| &src[t.start as usize..t.end as usize];
        let prefix = toks.iter().copied().find(|t| {
            t.start < offset
                && offset <= t.end
                && match t.kind {
                    K::BareId | K::ValueId | K::AtId | K::HashId | K::UnterminatedString => true,
                    K::String => offset < t.end,
                    K::Error => matches!(text(t), "@" | "%" | "#") && offset == t.end,
                    _ => false,
                }
        });
        let replace = match prefix {
            Some(t) if t.kind == K::UnterminatedString => Span::new(t.start, offset),
            Some(t) => Span::new(t.start, t.end),
            None => Span::empty(offset),
        };
        let cut = prefix.map_or(offset, |p| p.start);
        let before = toks.partition_point(|t| t.end <= cut);
        let open = open_brackets(&toks[..before]);
        Some(Cx { model, index, src, offset, toks, before, prefix, replace, open })
    }

    fn text(&self, i: usize) -> &'a str {
        let t = self.toks[i];
        &self.src[t.start as usize..t.end as usize]
    }

    fn kind(&self, i: usize) -> K {
        self.toks[i].kind
    }

    /// The typed prefix's text up to the cursor ("" without one).
    fn typed(&self) -> &'a str {
        let start = self.replace.start as usize;
        self.src.get(start..self.offset as usize).unwrap_or("")
    }

    fn last(&self) -> Option<usize> {
        self.before.checked_sub(1)
    }

    fn complete(&self) -> Completions {
        let mut out = Completions::default();
        if let Some(k) = self.open.iter().position(|&j| self.is_sharding_open(j)) {
            self.in_sharding(k, &mut out.items);
            return out;
        }
        let prefix_text = self.prefix.map(|p| &self.src[p.start as usize..p.end as usize]);
        match prefix_text.and_then(|t| t.chars().next()) {
            Some('%') => return self.values(),
            Some('@') => {
                self.functions(&mut out.items);
                return out;
            }
            Some('#') => {
                self.attr_values(&mut out.items);
                return out;
            }
            _ => {}
        }
        if let Some(&j) = self.open.first() {
            if self.kind(j) == K::LBrace {
                self.in_braces(j, &mut out.items);
            }
            return out;
        }
        if self.at_op_name() {
            self.ops(&mut out.items);
        }
        out
    }

    // ----- values, functions, attributes -----

    /// SSA values in scope, unless the `%name` being typed is a definition.
    fn values(&self) -> Completions {
        let mut out = Completions::default();
        if self.is_definition() {
            return out;
        }
        let typed = self.typed();
        let start = self.toks.first().map_or(self.offset, |t| t.start.min(self.offset));
        let all = values_in_scope(self.model, self.index, self.offset, start);
        let name = |v: ValueId| self.model.value(v).name.as_str();
        let listed: Vec<ValueId> = if all.len() <= MAX_VALUES {
            all
        } else {
            out.incomplete = true;
            all.into_iter().filter(|&v| name(v).starts_with(typed)).take(MAX_VALUES).collect()
        };
        for (n, v) in listed.into_iter().enumerate() {
            let ty = query::type_span(self.model, v)
                .and_then(|s| self.src.get(s.start as usize..s.end as usize));
            let detail = Some(ty.unwrap_or("<unknown type>").to_string());
            out.items.push(self.item(name(v).to_string(), ItemKind::Value, detail, n as u32));
        }
        out
    }

    /// Whether the `%name` at the cursor is being defined: a result (only results
    /// before it), or a block argument (`(%arg0: tensor<...>`).
    fn is_definition(&self) -> bool {
        if self.toks[..self.before].iter().all(|t| is_result_token(t.kind)) {
            return true;
        }
        let next = self.prefix.and_then(|p| self.toks.iter().find(|t| t.start >= p.end));
        next.is_some_and(|t| t.kind == K::Colon)
            && self.open.first().is_some_and(|&o| self.kind(o) == K::LParen)
    }

    /// `@f` after `call`: the functions.
    fn functions(&self, items: &mut Vec<Item>) {
        let after_call = self.last().is_some_and(|i| matches!(self.text(i), "call" | "func.call"));
        if !after_call {
            return;
        }
        let mut names: Vec<(&String, &OpId)> = self.model.funcs.iter().collect();
        names.sort_by_key(|(_, &id)| self.model.op(id).start);
        for (n, (name, &id)) in names.into_iter().enumerate() {
            let detail = match &self.model.op(id).node.custom {
                Custom::Func(f) => {
                    let base = self.model.op(id).start;
                    let ty = |s: Span| {
                        let s = s.shift(base);
                        self.src.get(s.start as usize..s.end as usize).unwrap_or("?")
                    };
                    let args: Vec<&str> = f.args.iter().map(|a| ty(a.ty.span)).collect();
                    let res: Vec<&str> = f.results.iter().map(|r| ty(r.ty.span)).collect();
                    Some(format!("({}) -> ({})", args.join(", "), res.join(", ")))
                }
                _ => None,
            };
            let label = format!("@{}", symbol_text(name));
            items.push(self.item(label, ItemKind::Function, detail, n as u32));
        }
    }

    /// `#sdy.sharding<...>` as an attribute value (after `=`).
    fn attr_values(&self, items: &mut Vec<Item>) {
        if !self.last().is_some_and(|i| self.kind(i) == K::Equal) {
            return;
        }
        let m = escape(&self.default_mesh());
        let forms = [
            ("#sdy.sharding", format!("#sdy.sharding<@${{1:{m}}}, [$2]>"), "a tensor's sharding"),
            (
                "#sdy.sharding_per_value",
                format!("#sdy.sharding_per_value<[<@${{1:{m}}}, [$2]>]>"),
                "the shardings of an op's results",
            ),
        ];
        for (n, (label, insert, doc)) in forms.into_iter().enumerate() {
            let mut item = self.item(label.into(), ItemKind::Attribute, Some(doc.into()), n as u32);
            item.insert = insert;
            item.snippet = true;
            items.push(item);
        }
    }

    /// Inside `{`: an axis list of an sdy op, or an attribute dictionary.
    fn in_braces(&self, brace: usize, items: &mut Vec<Item>) {
        let entry_start = self.last().is_some_and(|i| matches!(self.kind(i), K::LBrace | K::Comma));
        if !entry_start {
            return;
        }
        let op = self.op_name();
        let manual_axes =
            brace >= 2 && self.kind(brace - 1) == K::Equal && self.text(brace - 2) == "manual_axes";
        // Collectives write their axes before their operand.
        let collective = op.is_some_and(is_collective)
            && self
                .op_index()
                .is_some_and(|o| !self.toks[o..brace].iter().any(|t| t.kind == K::ValueId));
        if manual_axes || collective {
            let mesh = self.statement_mesh();
            // An axis appears once in a list, or in a per-dimension list of lists.
            let group = match self.open.get(1) {
                Some(&outer) if collective && self.kind(outer) == K::LBracket => outer,
                _ => brace,
            };
            let close = if group == brace { K::RBrace } else { K::RBracket };
            let group_end = self.toks[group..]
                .iter()
                .position(|t| t.kind == close)
                .map_or(self.toks.len(), |p| group + p);
            let used: Vec<String> = (group + 1..group_end)
                .filter(|&i| self.kind(i) == K::String && Some(self.toks[i]) != self.prefix)
                .filter(|&i| self.toks.get(i + 1).is_none_or(|t| t.kind != K::Colon))
                .map(|i| unquote(self.text(i)).to_string())
                .collect();
            self.axes(mesh.as_ref(), &used, items);
            return;
        }
        // An attribute dictionary: the sharding attribute.
        let m = escape(&self.default_mesh());
        let (insert, doc) = if op == Some("func.func") {
            (
                format!("sdy.sharding = #sdy.sharding<@${{1:{m}}}, [$2]>"),
                "the argument's or result's sharding",
            )
        } else {
            (
                format!("sdy.sharding = #sdy.sharding_per_value<[<@${{1:{m}}}, [$2]>]>"),
                "the shardings of the op's results",
            )
        };
        let mut item = self.item("sdy.sharding".into(), ItemKind::Attribute, Some(doc.into()), 0);
        item.insert = insert;
        item.snippet = true;
        items.push(item);
    }

    /// The index of the statement's op name: the first token after its results.
    fn op_index(&self) -> Option<usize> {
        let i = self.toks.iter().position(|t| !is_result_token(t.kind) && t.kind != K::Equal)?;
        matches!(self.kind(i), K::BareId | K::String).then_some(i)
    }

    /// The statement's op name.
    fn op_name(&self) -> Option<&'a str> {
        self.op_index().map(|i| unquote(self.text(i)))
    }

    /// The mesh a statement's shardings name (the first `@mesh` in it), else the only
    /// mesh of the chunk.
    fn statement_mesh(&self) -> Option<MeshAxes> {
        let named = (0..self.toks.len())
            .filter(|&i| self.kind(i) == K::AtId)
            .find_map(|i| MeshAxes::named(self.model, symbol_name(self.text(i))));
        named.or_else(|| match self.model.meshes.as_slice() {
            [only] => MeshAxes::named(self.model, &only.name),
            _ => None,
        })
    }

    /// The mesh name snippets start with: the chunk's first mesh.
    fn default_mesh(&self) -> String {
        self.model.meshes.first().map_or("mesh".into(), |m| symbol_text(&m.name))
    }

    // ----- ops -----

    /// Whether the cursor is where an op name goes: first in its statement, or after the
    /// statement's results and `=`.
    fn at_op_name(&self) -> bool {
        if self.prefix.is_some_and(|p| p.kind != K::BareId) {
            return false;
        }
        let toks = &self.toks[..self.before];
        match toks.split_last() {
            None => true,
            Some((last, results)) => {
                last.kind == K::Equal
                    && !results.is_empty()
                    && results.iter().all(|t| is_result_token(t.kind))
            }
        }
    }

    fn ops(&self, items: &mut Vec<Item>) {
        let has_results = self.before > 0;
        let top_level = !in_region(self.model, self.index, self.offset);
        let m = escape(&self.default_mesh());
        for (n, op) in SDY_OPS.iter().enumerate() {
            if op.top_level != top_level || (has_results && !op.results) {
                continue;
            }
            let mut item =
                self.item(op.name.into(), ItemKind::Op, Some(op.syntax.into()), n as u32);
            item.insert = op.snippet.replace("MESH", &m);
            item.snippet = true;
            item.documentation = Some(op.doc.into());
            items.push(item);
        }
    }

    /// An item replacing the typed prefix by `label`.
    fn item(&self, label: String, kind: ItemKind, detail: Option<String>, order: u32) -> Item {
        Item {
            filter: label.clone(),
            insert: label.clone(),
            label,
            kind,
            detail,
            documentation: None,
            snippet: false,
            replace: self.replace,
            order,
        }
    }
}

/// The brackets of `toks` left open at their end, innermost first. A closer that does
/// not match the opener is skipped over (the text is being typed).
fn open_brackets(toks: &[Token]) -> Vec<usize> {
    let mut closers: Vec<K> = Vec::new();
    let mut open = Vec::new();
    for (i, t) in toks.iter().enumerate().rev() {
        let closer = match t.kind {
            K::RParen | K::RBracket | K::RBrace | K::Greater => {
                closers.push(t.kind);
                continue;
            }
            K::LParen => K::RParen,
            K::LBracket => K::RBracket,
            K::LBrace => K::RBrace,
            K::Less => K::Greater,
            _ => continue,
        };
        match closers.last() {
            None => open.push(i),
            Some(&c) if c == closer => {
                closers.pop();
            }
            Some(_) => {}
        }
    }
    open
}

/// Tokens of a result list (`%a, %b:2`).
fn is_result_token(k: K) -> bool {
    matches!(k, K::ValueId | K::Colon | K::Integer | K::Comma)
}

fn is_collective(op: &str) -> bool {
    matches!(
        op,
        "sdy.all_gather"
            | "sdy.all_slice"
            | "sdy.all_to_all"
            | "sdy.all_reduce"
            | "sdy.reduce_scatter"
            | "sdy.sharded_to_unreduced"
            | "sdy.replicated_to_unreduced"
    )
}

/// `@name` or `@"name"` → `name`.
fn symbol_name(at: &str) -> &str {
    unquote(at.trim_start_matches('@'))
}

/// A symbol as written after `@`: quoted unless it is a bare identifier.
fn symbol_text(name: &str) -> String {
    let bare = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "_$.-".contains(c));
    if bare {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

fn unquote(s: &str) -> &str {
    let s = s.strip_prefix('"').unwrap_or(s);
    s.strip_suffix('"').unwrap_or(s)
}
