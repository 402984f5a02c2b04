//! Moving the positions of an op after an edit.
//!
//! When a run of statements inside an op's region is re-parsed, the op itself keeps its
//! structure but everything written after the edit (later siblings, the closing `}`, the
//! signature, the location, ...) moves by the length change. [`Shift`] visits every
//! position of an op's *own* fields; nested ops are only moved through their `offset`,
//! since their insides are relative to themselves.
//!
//! Every struct is destructured exhaustively, so a field added to the tree is a compile
//! error here rather than a position silently left behind.

use crate::sdy::*;
use crate::span::Span;
use crate::tree::*;
use std::sync::Arc;

/// Moves every position `>= at` by `delta` bytes (positions relative to the op being
/// visited). A span containing `at` keeps its start and moves its end: it grows or
/// shrinks with the edit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shift {
    pub at: u32,
    pub delta: i64,
}

impl Shift {
    fn pos(self, p: &mut u32) {
        if *p >= self.at {
            *p = (*p as i64 + self.delta) as u32;
        }
    }

    fn span(self, s: &mut Span) {
        self.pos(&mut s.start);
        self.pos(&mut s.end);
    }

    fn opt_span(self, s: &mut Option<Span>) {
        if let Some(s) = s {
            self.span(s);
        }
    }

    /// Whether nothing inside `s` can move: the visitors skip such subtrees, which
    /// keeps shifting a big function header (hundreds of sharded arguments) cheap.
    fn before(self, s: Span) -> bool {
        s.end < self.at
    }

    /// Whether nothing in a function header can move (an edit in the function's body).
    fn header_before(self, h: &FuncHeader) -> bool {
        let dict = |d: &Option<AttrDict>| d.as_ref().is_none_or(|d| self.before(d.span));
        let loc = |l: &Option<Span>| l.is_none_or(|l| self.before(l));
        h.visibility.as_ref().is_none_or(|v| self.before(v.span))
            && self.before(h.sym.span)
            && h.args.iter().all(|a| {
                self.before(a.span) && self.before(a.ty.span) && dict(&a.attrs) && loc(&a.loc)
            })
            && h.results.iter().all(|r| self.before(r.ty.span) && dict(&r.attrs) && loc(&r.loc))
            && dict(&h.fn_attrs)
    }

    fn name(self, n: &mut Name) {
        let Name { text: _, span } = n;
        self.span(span);
    }

    /// Moves an op's own positions and the offsets of its children.
    pub fn op(self, op: &mut Op) {
        let Op {
            kind: _,
            len,
            results,
            name,
            generic: _,
            operands,
            successors,
            inherent,
            attrs,
            regions,
            sig,
            loc,
            custom,
            errors,
        } = op;
        self.pos(len);
        for ResultGroup { name: _, span, count: _ } in results {
            self.span(span);
        }
        self.name(name);
        for ValueRef { name: _, index: _, span } in operands {
            self.span(span);
        }
        for s in successors {
            self.name(s);
        }
        for a in inherent {
            self.named_attr(a);
        }
        if let Some(d) = attrs {
            self.dict(d);
        }
        for Region { span, blocks } in regions {
            self.span(span);
            for Block { label, args, ops } in blocks {
                if let Some(l) = label {
                    self.name(l);
                }
                for a in args {
                    self.block_arg(a);
                }
                // Children are in order: only the tail moves.
                let first = ops.partition_point(|c| c.offset < self.at);
                let delta = self.delta as u32; // two's complement: wrapping_add subtracts too
                ops.shift_from(first, delta);
            }
        }
        let Signature { span, inputs, outputs, form: _ } = sig;
        self.opt_span(span);
        for t in inputs.iter_mut().chain(outputs) {
            self.ty(t);
        }
        self.opt_span(loc);
        self.custom(custom);
        for SyntaxError { span, message: _, chained: _ } in errors {
            self.span(span);
        }
    }

    fn block_arg(self, a: &mut BlockArg) {
        let BlockArg { name: _, span, ty, attrs, loc } = a;
        if self.before(*span)
            && loc.is_none_or(|l| self.before(l))
            && attrs.as_ref().is_none_or(|d| self.before(d.span))
            && ty.as_ref().is_none_or(|t| self.before(t.span))
        {
            return;
        }
        self.span(span);
        if let Some(t) = ty {
            self.ty(t);
        }
        if let Some(d) = attrs {
            self.dict(d);
        }
        self.opt_span(loc);
    }

    fn custom(self, c: &mut Custom) {
        match c {
            Custom::None | Custom::DotDims(_) => {}
            Custom::Func(h) => {
                // Shared with earlier versions of the tree: copied only when it moves.
                if self.header_before(h) {
                    return;
                }
                let FuncHeader { visibility, sym, args, results, fn_attrs } = Arc::make_mut(h);
                if let Some(v) = visibility {
                    self.name(v);
                }
                self.name(sym);
                for FuncArg { name: _, span, ty, attrs, loc } in args {
                    if self.before(*span)
                        && self.before(ty.span)
                        && attrs.as_ref().is_none_or(|d| self.before(d.span))
                        && loc.is_none_or(|l| self.before(l))
                    {
                        continue;
                    }
                    self.span(span);
                    self.ty(ty);
                    if let Some(d) = attrs {
                        self.dict(d);
                    }
                    self.opt_span(loc);
                }
                for FuncResult { ty, attrs, loc } in results {
                    self.ty(ty);
                    if let Some(d) = attrs {
                        self.dict(d);
                    }
                    self.opt_span(loc);
                }
                if let Some(d) = fn_attrs {
                    self.dict(d);
                }
            }
            Custom::Module(h) => {
                let ModuleHeader { sym, attrs } = &mut **h;
                if let Some(s) = sym {
                    self.name(s);
                }
                if let Some(d) = attrs {
                    self.dict(d);
                }
            }
            Custom::Mesh { sym } => self.name(sym),
            Custom::Alias(def) => {
                let AliasDef { name, value } = &mut **def;
                self.name(name);
                match value {
                    AliasValue::Attr(a) => self.attr(a),
                    AliasValue::Type(t) => self.ty(t),
                }
            }
        }
    }

    fn ty(self, t: &mut Type) {
        let Type { span, kind } = t;
        if self.before(*span) {
            return;
        }
        self.span(span);
        // Only tuples hold positions inside the (shared, interned) kind; clone it only
        // when one of them actually moves.
        if let TypeKind::Tuple(elems) = &**kind {
            if elems.iter().any(|e| e.span.end >= self.at) {
                if let TypeKind::Tuple(elems) = Arc::make_mut(kind) {
                    for e in elems {
                        self.ty(e);
                    }
                }
            }
        }
    }

    fn dict(self, d: &mut AttrDict) {
        let AttrDict { span, entries } = d;
        if self.before(*span) {
            return;
        }
        self.span(span);
        for e in entries {
            self.named_attr(e);
        }
    }

    fn named_attr(self, a: &mut NamedAttr) {
        let NamedAttr { name: _, name_span, value, span } = a;
        if self.before(*span) && self.before(*name_span) {
            return;
        }
        self.span(name_span);
        if let Some(v) = value {
            self.attr(v);
        }
        self.span(span);
    }

    fn attr(self, a: &mut Attr) {
        let Attr { span, kind } = a;
        if self.before(*span) {
            return;
        }
        self.span(span);
        match kind {
            AttrKind::Int { value: _, ty }
            | AttrKind::Float { text: _, ty }
            | AttrKind::Elements { ty } => {
                if let Some(t) = ty {
                    self.ty(t);
                }
            }
            AttrKind::Array(items) => {
                for i in items {
                    self.attr(i);
                }
            }
            AttrKind::Dict(d) => self.dict(d),
            AttrKind::Type(t) => self.ty(t),
            AttrKind::Sdy(s) => self.sdy(s),
            AttrKind::Bool(_)
            | AttrKind::Unit
            | AttrKind::String { .. }
            | AttrKind::Symbol(_)
            | AttrKind::DenseArray { .. }
            | AttrKind::AliasRef(_)
            | AttrKind::Keyword(_)
            | AttrKind::Opaque => {}
        }
    }

    // ----- sdy attributes -----

    fn sdy(self, a: &mut SdyAttr) {
        match a {
            SdyAttr::Mesh(m) => self.mesh(m),
            SdyAttr::Sharding(s) => self.sharding(s),
            SdyAttr::PerValue(PerValueAst { span, shardings }) => {
                self.span(span);
                for s in shardings {
                    self.sharding(s);
                }
            }
            SdyAttr::Rule(r) => self.rule(r),
            SdyAttr::ManualAxes(axes) | SdyAttr::AxisList(axes) => {
                for a in axes {
                    self.axis_ref(a);
                }
            }
            SdyAttr::AxisListPerDim(lists) => {
                for l in lists {
                    self.axis_list(l);
                }
            }
            SdyAttr::AllToAllParams(params) => {
                for AllToAllParamAst { span, axes, src_dim, tgt_dim } in params {
                    self.span(span);
                    self.axis_list(axes);
                    self.span(&mut src_dim.1);
                    self.span(&mut tgt_dim.1);
                }
            }
            SdyAttr::Opaque => {}
        }
    }

    fn mesh(self, m: &mut MeshAst) {
        let MeshAst { span, axes, device_ids } = m;
        self.span(span);
        for MeshAxisAst { span, name: _, name_span, size: _, size_span } in axes {
            self.span(span);
            self.span(name_span);
            self.span(size_span);
        }
        if let Some(DeviceIdsAst { span, ids }) = device_ids {
            self.span(span);
            for (_, s) in ids {
                self.span(s);
            }
        }
    }

    fn sharding(self, s: &mut ShardingAst) {
        let ShardingAst { span, mesh, dims, dims_span, replicated, unreduced } = s;
        self.span(span);
        match mesh {
            MeshRefAst::Symbol { name: _, span } => self.span(span),
            MeshRefAst::Inline(m) => self.mesh(m),
        }
        for DimShardingAst { span, axes, open, priority } in dims {
            self.span(span);
            for a in axes {
                self.axis_ref(a);
            }
            self.opt_span(open);
            if let Some((_, s)) = priority {
                self.span(s);
            }
        }
        self.span(dims_span);
        if let Some(l) = replicated {
            self.axis_list(l);
        }
        if let Some(UnreducedAst { span, reduction, list }) = unreduced {
            self.span(span);
            if let Some((_, s)) = reduction {
                self.span(s);
            }
            self.axis_list(list);
        }
    }

    fn axis_ref(self, a: &mut AxisRefAst) {
        let AxisRefAst { span, name: _, name_span, sub } = a;
        self.span(span);
        self.span(name_span);
        if let Some(SubAxisAst { span, pre_size: _, size: _ }) = sub {
            self.span(span);
        }
    }

    fn axis_list(self, l: &mut AxisListAst) {
        let AxisListAst { span, axes } = l;
        self.span(span);
        for a in axes {
            self.axis_ref(a);
        }
    }

    fn rule(self, r: &mut RuleAst) {
        let RuleAst {
            span,
            operands,
            results,
            factor_sizes,
            reduction,
            need_replication,
            permutation,
            blocked_propagation,
            custom: _,
        } = r;
        self.span(span);
        for TensorMappingAst { span, dims } in operands.iter_mut().chain(results) {
            self.span(span);
            for DimMappingAst { span, factors: _ } in dims {
                self.span(span);
            }
        }
        for (_, s) in factor_sizes {
            self.span(s);
        }
        for FactorListAst { span, factors } in
            [reduction, need_replication, permutation, blocked_propagation].into_iter().flatten()
        {
            self.span(span);
            for (_, s) in factors {
                self.span(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_after_the_point_move_and_containing_spans_grow() {
        let mut s = Span::new(2, 10);
        Shift { at: 5, delta: 3 }.span(&mut s);
        assert_eq!(s, Span::new(2, 13));
        let mut s = Span::new(5, 10);
        Shift { at: 5, delta: -2 }.span(&mut s);
        assert_eq!(s, Span::new(3, 8));
        let mut s = Span::new(1, 4);
        Shift { at: 5, delta: 7 }.span(&mut s);
        assert_eq!(s, Span::new(1, 4));
    }
}
