//! The tree's side: what the model and the syntax trees of the ops in a range know.

use super::{intersects, same_line, SemToken, TokenType, DECLARATION, SUB_AXIS};
use crate::model::{Model, OpId, ValueDef};
use sdy_syntax::lexer::{lex_into, TokenKind};
use sdy_syntax::sdy::{AxisRefAst, MeshAst, MeshRefAst, RuleAst, SdyAttr, ShardingAst};
use sdy_syntax::tree::{Attr, AttrDict, AttrKind, Custom, Op, Type};
use sdy_syntax::Span;

/// Collects the tokens the tree knows, for the ops intersecting the range.
pub(super) struct TreeTokens<'a> {
    pub(super) model: &'a Model,
    pub(super) src: &'a str,
    pub(super) range: Span,
    pub(super) out: Vec<SemToken>,
}

impl TreeTokens<'_> {
    fn push(&mut self, span: Span, ty: TokenType, mods: u32) {
        if !span.is_empty() && intersects(span, self.range) {
            self.out.push(SemToken { span, ty, mods });
        }
    }

    /// The ops of `ids` (disjoint, in source order) that intersect the range, found by
    /// binary search, with everything nested in them. Tokens come out in source order
    /// as long as an op's own parts are not written between its regions (the caller
    /// checks).
    pub(super) fn ops_in(&mut self, ids: &[OpId]) {
        let model = self.model;
        let first = ids.partition_point(|&id| model.op(id).span().end <= self.range.start);
        for &id in &ids[first..] {
            let span = model.op(id).span();
            if span.start >= self.range.end.max(self.range.start.saturating_add(1)) {
                break;
            }
            let own = self.out.len();
            self.op(id);
            self.out[own..].sort_unstable_by_key(|t| t.span.start);
            let kids = model.children(id);
            let Some(&first_kid) = kids.first() else { continue };
            // The parts after the regions (signature, attributes) follow the nested ops.
            let kid_start = model.op(first_kid).start;
            let split = own + self.out[own..].partition_point(|t| t.span.start < kid_start);
            let tail = self.out.split_off(split);
            self.ops_in(kids);
            self.out.extend(tail);
        }
    }

    /// The op's own parts (not its nested ops).
    fn op(&mut self, id: OpId) {
        let model = self.model;
        let info = model.op(id);
        let node: &Op = &info.node;
        let base = info.start;
        self.push(node.name.span.shift(base), TokenType::Keyword, 0);
        let mut last = None;
        for &v in &info.results {
            let span = model.value(v).span;
            // Every value of a group `%0:2` has the group's span.
            if last != Some(span) {
                self.push(span, TokenType::Variable, DECLARATION);
                last = Some(span);
            }
        }
        for (i, r) in node.operands.iter().enumerate() {
            let ty = match info.operands.get(i).copied().flatten().map(|v| &model.value(v).def) {
                Some(ValueDef::BlockArg { .. }) => TokenType::Parameter,
                _ => TokenType::Variable,
            };
            self.push(r.span.shift(base), ty, 0);
        }
        match &node.custom {
            Custom::Func(f) => {
                self.push(f.sym.span.shift(base), TokenType::Function, DECLARATION);
                for a in &f.args {
                    self.push(a.span.shift(base), TokenType::Parameter, DECLARATION);
                    self.ty(&a.ty, base);
                    self.dict(a.attrs.as_ref(), base);
                }
                for r in &f.results {
                    self.ty(&r.ty, base);
                    self.dict(r.attrs.as_ref(), base);
                }
                self.dict(f.fn_attrs.as_ref(), base);
            }
            Custom::Mesh { sym } => {
                self.push(sym.span.shift(base), TokenType::Namespace, DECLARATION)
            }
            Custom::Module(m) => {
                if let Some(sym) = &m.sym {
                    self.push(sym.span.shift(base), TokenType::Namespace, DECLARATION);
                }
                self.dict(m.attrs.as_ref(), base);
            }
            Custom::None | Custom::Alias(_) | Custom::DotDims(_) => {}
        }
        for region in &node.regions {
            for block in &region.blocks {
                for a in &block.args {
                    self.push(a.span.shift(base), TokenType::Parameter, DECLARATION);
                    if let Some(t) = &a.ty {
                        self.ty(t, base);
                    }
                    self.dict(a.attrs.as_ref(), base);
                }
            }
        }
        // Custom-syntax attributes name their key by the value's span: only values here;
        // the keywords come from the lexer.
        for a in &node.inherent {
            if let Some(v) = &a.value {
                self.attr(v, base);
            }
        }
        self.dict(node.attrs.as_ref(), base);
        for t in node.sig.inputs.iter().chain(&node.sig.outputs) {
            self.ty(t, base);
        }
    }

    /// A type, unless written over several lines (tokens are single-line; its parts
    /// are then the lexer's).
    fn ty(&mut self, t: &Type, base: u32) {
        let span = t.span.shift(base);
        if intersects(span, self.range) && same_line(self.src, span.start, span.end) {
            self.push(span, TokenType::Type, 0);
        }
    }

    fn dict(&mut self, d: Option<&AttrDict>, base: u32) {
        let Some(d) = d else { return };
        if !intersects(d.span.shift(base), self.range) {
            return;
        }
        for e in &d.entries {
            self.push(e.name_span.shift(base), TokenType::Decorator, 0);
            if let Some(v) = &e.value {
                self.attr(v, base);
            }
        }
    }

    fn attr(&mut self, a: &Attr, base: u32) {
        if !intersects(a.span.shift(base), self.range) {
            return;
        }
        match &a.kind {
            AttrKind::Symbol(name) => {
                let ty = if self.model.mesh(name).is_some() {
                    TokenType::Namespace
                } else {
                    TokenType::Function
                };
                self.push(a.span.shift(base), ty, 0);
            }
            AttrKind::Array(items) => items.iter().for_each(|i| self.attr(i, base)),
            AttrKind::Dict(d) => self.dict(Some(d), base),
            AttrKind::Type(t) => self.ty(t, base),
            AttrKind::Int { ty: Some(t), .. }
            | AttrKind::Float { ty: Some(t), .. }
            | AttrKind::Elements { ty: Some(t) } => self.ty(t, base),
            AttrKind::Sdy(s) => self.sdy(s, base),
            _ => {}
        }
    }

    fn sdy(&mut self, s: &SdyAttr, base: u32) {
        match s {
            SdyAttr::Mesh(m) => self.mesh(m, base),
            SdyAttr::Sharding(sh) => self.sharding(sh, base),
            SdyAttr::PerValue(p) => p.shardings.iter().for_each(|sh| self.sharding(sh, base)),
            SdyAttr::Rule(r) => self.rule(r, base),
            SdyAttr::ManualAxes(axes) | SdyAttr::AxisList(axes) => self.axes(axes, base),
            SdyAttr::AxisListPerDim(lists) => lists.iter().for_each(|l| self.axes(&l.axes, base)),
            SdyAttr::AllToAllParams(params) => {
                params.iter().for_each(|p| self.axes(&p.axes.axes, base))
            }
            SdyAttr::Opaque => {}
        }
    }

    fn mesh(&mut self, m: &MeshAst, base: u32) {
        for a in &m.axes {
            self.push(a.name_span.shift(base), TokenType::Property, DECLARATION);
        }
    }

    fn sharding(&mut self, sh: &ShardingAst, base: u32) {
        if !intersects(sh.span.shift(base), self.range) {
            return;
        }
        match &sh.mesh {
            MeshRefAst::Symbol { span, .. } => self.push(span.shift(base), TokenType::Namespace, 0),
            MeshRefAst::Inline(m) => self.mesh(m, base),
        }
        for d in &sh.dims {
            self.axes(&d.axes, base);
            if let Some(q) = d.open {
                self.push(q.shift(base), TokenType::Operator, 0);
            }
            if let Some((_, p)) = d.priority {
                self.push(p.shift(base), TokenType::Modifier, 0);
            }
        }
        if let Some(r) = &sh.replicated {
            self.axes(&r.axes, base);
        }
        if let Some(u) = &sh.unreduced {
            self.axes(&u.list.axes, base);
        }
    }

    fn axes(&mut self, axes: &[AxisRefAst], base: u32) {
        for a in axes {
            let mods = if a.sub.is_some() { SUB_AXIS } else { 0 };
            self.push(a.name_span.shift(base), TokenType::Property, mods);
        }
    }

    /// Factors of a rule are bare letters: the rule's bare words that are not its
    /// keywords.
    fn rule(&mut self, r: &RuleAst, base: u32) {
        let span = r.span.shift(base);
        if !intersects(span, self.range) {
            return;
        }
        // Rule text is short: re-lexing it is simpler than keeping factor spans.
        let Some(text) = self.src.get(span.start as usize..span.end as usize) else { return };
        let mut toks = Vec::new();
        lex_into(text, span.start, &mut toks);
        for t in toks.iter().filter(|t| t.kind == TokenKind::BareId) {
            let ty = match t.text(self.src) {
                "reduction"
                | "need_replication"
                | "permutation"
                | "blocked_propagation"
                | "custom" => TokenType::Keyword,
                _ => TokenType::TypeParameter,
            };
            self.push(Span::new(t.start, t.end), ty, 0);
        }
    }
}
