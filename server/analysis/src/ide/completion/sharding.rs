//! Completion inside a sharding (`<@mesh, [{...}, ...], replicated={...}>`): mesh names,
//! the mesh's unused axes, `?`, priorities, `replicated=` / `unreduced=`.

use super::{symbol_name, symbol_text, unquote, Cx, Item, ItemKind};
use crate::model::Model;
use sdy_syntax::lexer::TokenKind as K;

impl Cx<'_> {
    /// Whether the `<` at `j` opens a sharding body (`<@mesh, [...]>`).
    pub(super) fn is_sharding_open(&self, j: usize) -> bool {
        if self.kind(j) != K::Less || j == 0 {
            return false;
        }
        match self.kind(j - 1) {
            K::HashId => self.text(j - 1) == "#sdy.sharding",
            K::Equal => j >= 2 && matches!(self.text(j - 2), "out_sharding" | "sharding"),
            // `sdy.sharding_constraint %x <...>`, `sdy.reshard %x <...>`: a type never
            // follows a value.
            K::ValueId => true,
            // An entry of a list of shardings.
            K::LBracket | K::Comma => {
                let Some(k) = self.open.iter().position(|&o| o == j) else { return false };
                let Some(&list) = self.open.get(k + 1) else { return false };
                if self.kind(list) != K::LBracket || list == 0 {
                    return false;
                }
                match self.kind(list - 1) {
                    K::Equal => {
                        list >= 2 && matches!(self.text(list - 2), "in_shardings" | "out_shardings")
                    }
                    K::Less => list >= 2 && self.text(list - 2) == "#sdy.sharding_per_value",
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// The cursor is in the sharding opened at `self.open[k]`.
    pub(super) fn in_sharding(&self, k: usize, items: &mut Vec<Item>) {
        let s = self.open[k];
        let inner: Vec<K> = self.open[..k].iter().rev().map(|&j| self.kind(j)).collect();
        let mesh = self.sharding_mesh(s);
        match inner.as_slice() {
            [] => {
                // Tokens of the body so far, outside nested brackets.
                let top = self.top_level(s + 1, self.before);
                if top.is_empty() {
                    self.meshes(items);
                } else if top.iter().any(|&i| self.kind(i) == K::RBracket)
                    && top.last().is_some_and(|&i| self.kind(i) == K::Comma)
                {
                    let written: Vec<&str> = top.iter().map(|&i| self.text(i)).collect();
                    self.list_keywords(&written, items);
                }
            }
            [K::LBracket] if self.last().is_some_and(|i| self.kind(i) == K::RBrace) => {
                self.priorities(items);
            }
            [K::LBracket, K::LBrace] => {
                let brace = self.open[0];
                let dim = brace + 1..self.before;
                if dim.clone().any(|i| self.kind(i) == K::Question) {
                    return; // `?` ends a dimension
                }
                if self.last().is_some_and(|i| matches!(self.kind(i), K::LBrace | K::Comma)) {
                    let used = self.used_axes(s);
                    self.axes(mesh.as_ref(), &used, items);
                    self.open_dim(items);
                }
            }
            [K::LBrace] => {
                let brace = self.open[0];
                let key = brace.checked_sub(2).map(|i| self.text(i));
                let after_eq = brace >= 1 && self.kind(brace - 1) == K::Equal;
                if after_eq
                    && matches!(key, Some("replicated" | "unreduced"))
                    && self.last().is_some_and(|i| matches!(self.kind(i), K::LBrace | K::Comma))
                {
                    let used = self.used_axes(s);
                    self.axes(mesh.as_ref(), &used, items);
                }
            }
            _ => {}
        }
    }

    /// Indices in `from..to` at bracket depth 0 (relative to `from`): the closing
    /// bracket of a nested group stands for the group.
    fn top_level(&self, from: usize, to: usize) -> Vec<usize> {
        let mut depth = 0i32;
        let mut out = Vec::new();
        for i in from..to {
            match self.kind(i) {
                K::LParen | K::LBracket | K::LBrace | K::Less => depth += 1,
                K::RParen | K::RBracket | K::RBrace | K::Greater => {
                    depth -= 1;
                    if depth == 0 {
                        out.push(i);
                    }
                }
                _ if depth == 0 => out.push(i),
                _ => {}
            }
        }
        out
    }

    /// The mesh of the sharding opened at `s`: `@name` (an empty one when the chunk
    /// does not define it) or an inline `mesh<[...]>`.
    fn sharding_mesh(&self, s: usize) -> Option<MeshAxes> {
        let i = s + 1;
        if i >= self.toks.len() {
            return None;
        }
        match self.kind(i) {
            K::AtId => {
                let name = symbol_name(self.text(i));
                let none = || MeshAxes { name: Some(name.to_string()), axes: Vec::new() };
                Some(MeshAxes::named(self.model, name).unwrap_or_else(none))
            }
            K::BareId if self.text(i) == "mesh" => {
                let mut axes = Vec::new();
                let mut j = i + 1;
                while j + 2 < self.toks.len() && self.kind(j) != K::RBracket {
                    if self.kind(j) == K::String && self.kind(j + 1) == K::Equal {
                        let size = self.text(j + 2).parse().unwrap_or(0);
                        axes.push((unquote(self.text(j)).to_string(), size));
                    }
                    j += 1;
                }
                Some(MeshAxes { name: None, axes })
            }
            _ => None,
        }
    }

    /// Axis names used in the sharding opened at `s` (the word being typed left out).
    /// A sub-axis does not use up its axis.
    fn used_axes(&self, s: usize) -> Vec<String> {
        let mut used = Vec::new();
        let mut depth = 0i32;
        for i in s + 1..self.toks.len() {
            match self.kind(i) {
                K::Less => depth += 1,
                K::Greater if depth == 0 => break,
                K::Greater => depth -= 1,
                K::String if Some(self.toks[i]) != self.prefix => {
                    let next = self.toks.get(i + 1).map(|t| t.kind);
                    if !matches!(next, Some(K::Colon | K::Equal)) {
                        used.push(unquote(self.text(i)).to_string());
                    }
                }
                _ => {}
            }
        }
        used
    }

    fn meshes(&self, items: &mut Vec<Item>) {
        for (n, m) in self.model.meshes.iter().enumerate() {
            if self.model.mesh_by_name.get(&m.name) != Some(&n) {
                continue; // a redefinition: the first one counts
            }
            let label = format!("@{}", symbol_text(&m.name));
            let detail = match &m.mesh {
                Some(mesh) => {
                    let axes: Vec<String> =
                        mesh.axes.iter().map(|a| format!("\"{}\"={}", a.0, a.1)).collect();
                    let n = mesh.device_count();
                    let count = n.map_or("?".into(), |n| n.to_string());
                    let s = if n == Some(1) { "" } else { "s" };
                    format!("<[{}]> · {count} device{s}", axes.join(", "))
                }
                None => "mesh".to_string(),
            };
            items.push(self.item(label, ItemKind::Mesh, Some(detail), n as u32));
        }
    }

    /// The axes of `mesh` (of every mesh when unknown) not in `used`.
    pub(super) fn axes(&self, mesh: Option<&MeshAxes>, used: &[String], items: &mut Vec<Item>) {
        let all;
        let meshes: Vec<&MeshAxes> = match mesh {
            Some(m) => vec![m],
            None => {
                all = MeshAxes::all(self.model);
                all.iter().collect()
            }
        };
        let quoted = self.typed().starts_with('"');
        let mut seen: Vec<&str> = Vec::new();
        for m in meshes {
            for (name, size) in &m.axes {
                if used.contains(name) || seen.contains(&name.as_str()) {
                    continue;
                }
                seen.push(name);
                let label = format!("\"{name}\"");
                let of = m.name.as_ref().map_or(String::new(), |n| format!(" · @{n}"));
                let mut item = self.item(
                    label.clone(),
                    ItemKind::Axis,
                    Some(format!("size {size}{of}")),
                    seen.len() as u32,
                );
                if !quoted {
                    item.filter = name.clone();
                }
                items.push(item);
            }
        }
    }

    fn open_dim(&self, items: &mut Vec<Item>) {
        let mut item =
            self.item("?".into(), ItemKind::Operator, Some("open dimension".into()), 900);
        item.documentation = Some(
            "The dimension is open: propagation may shard it further along other axes.".into(),
        );
        items.push(item);
    }

    fn priorities(&self, items: &mut Vec<Item>) {
        for p in 0..4u32 {
            let mut item =
                self.item(format!("p{p}"), ItemKind::Priority, Some(format!("priority {p}")), p);
            item.documentation = Some(
                "Priority of this dimension's sharding: lower numbers propagate first (p0 is \
                 the highest)."
                    .into(),
            );
            items.push(item);
        }
    }

    /// `replicated={...}` and `unreduced={...}` not yet written.
    fn list_keywords(&self, written: &[&str], items: &mut Vec<Item>) {
        let lists = [
            ("replicated", "axes the tensor is explicitly replicated on"),
            ("unreduced", "axes along which the tensor holds partial results (not reduced yet)"),
        ];
        for (n, (kw, doc)) in lists.into_iter().enumerate() {
            // `unreduced` comes after `replicated`.
            if written.contains(&kw) || (kw == "replicated" && written.contains(&"unreduced")) {
                continue;
            }
            let mut item = self.item(format!("{kw}={{}}"), ItemKind::Keyword, None, n as u32);
            item.insert = format!("{kw}={{$1}}");
            item.snippet = true;
            item.filter = kw.to_string();
            item.detail = Some(doc.into());
            items.push(item);
        }
    }
}

/// A mesh's axes with their sizes (`name: None` for an inline mesh).
pub(super) struct MeshAxes {
    name: Option<String>,
    axes: Vec<(String, i64)>,
}

impl MeshAxes {
    pub(super) fn named(model: &Model, name: &str) -> Option<MeshAxes> {
        let mesh = model.mesh(name)?.mesh.as_ref()?;
        let axes = mesh.axes.iter().map(|a| (a.0.clone(), a.1)).collect();
        Some(MeshAxes { name: Some(name.to_string()), axes })
    }

    fn all(model: &Model) -> Vec<MeshAxes> {
        model.meshes.iter().filter_map(|m| MeshAxes::named(model, &m.name)).collect()
    }
}
