//! Statements: operations in generic and custom form, regions, blocks, aliases.
//!
//! Known custom forms (func, module, sdy ops, `stablehlo.while`, ...) are parsed by
//! their grammar; any other custom op goes through a generic scanner that still finds
//! its results, operands, regions, attribute dictionary, signature and location.

use super::{messages as msg, Parser};
use crate::lexer::TokenKind;
use crate::sdy::SdyAttr;
use crate::span::Span;
use crate::tree::*;
use std::sync::Arc;

/// Token kinds that can begin a statement (used to find re-parse boundaries).
pub fn is_statement_start_kind(k: TokenKind) -> bool {
    matches!(
        k,
        TokenKind::ValueId
            | TokenKind::BareId
            | TokenKind::String
            | TokenKind::HashId
            | TokenKind::BangId
            | TokenKind::CaretId
            | TokenKind::FileMetadataBegin
    )
}

impl Parser<'_> {
    /// All top-level statements of a chunk.
    pub(crate) fn top_level(&mut self) -> Vec<Child> {
        let mut out = Vec::new();
        while !self.at_eof() {
            if self.at(TokenKind::RBrace) {
                let t = self.bump();
                out.push(self.error_stmt(t.start, msg::BRACE_AT_TOP_LEVEL));
                continue;
            }
            if let Some(kids) = self.adopt_speculation() {
                out.extend(kids);
                continue;
            }
            match self.statement(false) {
                Some(c) => out.push(c),
                None => break,
            }
        }
        out
    }

    /// One statement at the current token, or `None` at the end of input or at the `}`
    /// closing the enclosing region. Always consumes at least one token otherwise.
    pub(crate) fn statement(&mut self, in_region: bool) -> Option<Child> {
        self.trim_window();
        if self.at_eof() || (in_region && self.at(TokenKind::RBrace)) {
            return None;
        }
        let start = self.peek().start;
        let outer_base = self.base;
        let outer_errors = std::mem::take(&mut self.errors);
        let outer_custom = self.custom_op.take();
        let outer_failure = self.in_failure();
        self.base = start;
        self.in_failure_reset();

        let before = self.save();
        // Built in place inside its Arc: an op is large, and `Arc::new` would build it on
        // the stack and copy it.
        let mut node = Arc::<Op>::new_uninit();
        Arc::get_mut(&mut node).expect("fresh Arc").write(Op::empty(StmtKind::Op));
        // SAFETY: initialised just above.
        let mut node = unsafe { node.assume_init() };
        let op = Arc::get_mut(&mut node).expect("fresh Arc");
        self.statement_inner(op);
        if self.save() == before {
            // No progress: make this token an error statement.
            let t = self.bump();
            let span = self.rel(t);
            self.error(span, msg::OP_NAME_IN_QUOTES);
            op.kind = StmtKind::Error;
        }
        op.len = self.prev_end().max(start) - start;
        op.errors = std::mem::replace(&mut self.errors, outer_errors);
        self.base = outer_base;
        self.custom_op = outer_custom;
        self.set_in_failure(outer_failure);
        Some(Child { offset: start - outer_base, op: node })
    }

    fn in_failure_reset(&mut self) {
        // A new statement starts a new failure chain.
        self.errors.clear();
        self.reset_failure();
    }

    fn error_stmt(&mut self, start: u32, msg: &str) -> Child {
        let mut op = Op::empty(StmtKind::Error);
        let len = self.prev_end() - start;
        op.len = len;
        op.errors.push(SyntaxError {
            span: Span::new(0, len),
            message: msg.to_string(),
            chained: false,
        });
        Child { offset: start - self.base, op: Arc::new(op) }
    }

    /// Fills `op` (a fresh `StmtKind::Op`) with the statement at the cursor.
    fn statement_inner(&mut self, op: &mut Op) {
        let t = self.peek();
        match t.kind {
            TokenKind::HashId | TokenKind::BangId if self.nth_kind(1) == TokenKind::Equal => {
                self.alias_def(op)
            }
            TokenKind::FileMetadataBegin => {
                op.kind = StmtKind::Resource;
                self.bump();
                while !self.at_eof() && self.eat(TokenKind::FileMetadataEnd).is_none() {
                    self.bump();
                }
                op.name = Name { text: "{-#".into(), span: self.rel(t) };
            }
            _ => {
                if self.at(TokenKind::ValueId) && !self.result_list(op) {
                    self.recover(op);
                    return;
                }
                if self.op_after_results(op).is_none() {
                    self.recover(op);
                }
            }
        }
    }

    /// `#name = attr` / `!name = type`.
    fn alias_def(&mut self, op: &mut Op) {
        op.kind = StmtKind::AliasDef;
        let name_tok = self.bump();
        self.bump(); // '='
        let name = Name { text: self.text(name_tok).into(), span: self.rel(name_tok) };
        let value = if name_tok.kind == TokenKind::BangId {
            self.parse_type().map(AliasValue::Type)
        } else {
            self.parse_attr().map(AliasValue::Attr)
        };
        match value {
            Some(value) => op.custom = Custom::Alias(Box::new(AliasDef { name, value })),
            None => self.recover(op),
        }
    }

    /// `%a, %b:2 =`. Returns false (after reporting) when malformed.
    fn result_list(&mut self, op: &mut Op) -> bool {
        loop {
            let t = match self.eat(TokenKind::ValueId) {
                Some(t) => t,
                None => {
                    self.error_expected("SSA value");
                    return false;
                }
            };
            let mut count = 1;
            if self.at(TokenKind::Colon) && self.nth_kind(1) == TokenKind::Integer {
                self.bump();
                let n = self.bump();
                count = self.text(n).parse().unwrap_or(1);
            }
            op.results.push(ResultGroup { name: self.text(t).into(), span: self.rel(t), count });
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            if self.eat(TokenKind::Equal).is_some() {
                return true;
            }
            self.error_expected("'='");
            return false;
        }
    }

    /// The op after its result list: generic or custom form, then the location.
    fn op_after_results(&mut self, op: &mut Op) -> Option<()> {
        let t = self.peek();
        match t.kind {
            TokenKind::String => {
                self.bump();
                let text = self.text(t);
                op.name = Name { text: self.intern(&text[1..text.len() - 1]), span: self.rel(t) };
                op.generic = true;
                self.generic_body(op)?;
            }
            TokenKind::BareId => {
                self.bump();
                let name = self.text(t);
                op.name = Name { text: self.intern(name), span: self.rel(t) };
                self.custom_body(op, name)?;
            }
            _ => {
                self.error_expected("operation name in quotes");
                return None;
            }
        }
        self.trailing_loc(op);
        Some(())
    }

    fn trailing_loc(&mut self, op: &mut Op) {
        if self.at_keyword("loc") && self.nth_kind(1) == TokenKind::LParen {
            let start = self.bump().start;
            self.skip_balanced();
            op.loc = Some(self.rel_from(start));
        }
    }

    // ----- generic form -----

    /// `(%a) [succ] <{props}> ({regions}) {attrs} : (T) -> R`
    fn generic_body(&mut self, op: &mut Op) -> Option<()> {
        self.expect(TokenKind::LParen, "'('")?;
        self.value_use_list(op, TokenKind::RParen)?;
        if self.at(TokenKind::LBracket) {
            self.bump();
            while let Some(t) = self.eat(TokenKind::CaretId) {
                op.successors.push(Name { text: self.text(t).into(), span: self.rel(t) });
                if self.at(TokenKind::Colon) || self.at(TokenKind::LParen) {
                    // Successor operands are rare; skip them.
                    while !self.at(TokenKind::Comma)
                        && !self.at(TokenKind::RBracket)
                        && !self.at_eof()
                    {
                        self.skip_balanced();
                    }
                }
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
            self.expect(TokenKind::RBracket, "']'")?;
        }
        if self.at(TokenKind::Less) && self.nth_kind(1) == TokenKind::LBrace {
            self.bump();
            let dict = self.parse_attr_dict()?;
            op.inherent = dict.entries;
            self.expect(TokenKind::Greater, "'>'")?;
        }
        if self.at(TokenKind::LParen) && self.nth_kind(1) == TokenKind::LBrace {
            self.bump();
            loop {
                op.regions.push(self.parse_region(Vec::new())?);
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
            self.expect(TokenKind::RParen, "')'")?;
        }
        if self.at(TokenKind::LBrace) {
            op.attrs = self.parse_attr_dict_recovering();
        }
        self.expect(TokenKind::Colon, "':'")?;
        self.signature(op)
    }

    /// `%a, %b#1` up to `close` (consumed).
    fn value_use_list(&mut self, op: &mut Op, close: TokenKind) -> Option<()> {
        if self.eat(close).is_some() {
            return Some(());
        }
        loop {
            if !self.at(TokenKind::ValueId) {
                self.error_expected("SSA operand");
                return None;
            }
            self.value_use(op);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            let what = if close == TokenKind::RParen { "')'" } else { "']'" };
            self.expect(
                close,
                if close == TokenKind::RParen { "')' to end operand list" } else { what },
            )?;
            return Some(());
        }
    }

    /// At a value id: records the use, with a `#N` result number when attached.
    fn value_use(&mut self, op: &mut Op) {
        let t = self.bump();
        let mut index = None;
        let mut end = t.end;
        let next = self.peek();
        if next.kind == TokenKind::HashId && next.start == t.end {
            if let Ok(n) = self.text(next)[1..].parse::<u32>() {
                self.bump();
                index = Some(n);
                end = next.end;
            }
        }
        op.operands.push(ValueRef {
            name: self.text(t).into(),
            index,
            span: Span::new(t.start - self.base, end - self.base),
        });
    }

    /// After `:`: a function type or a type list.
    fn signature(&mut self, op: &mut Op) -> Option<()> {
        let start = self.peek().start;
        if self.at(TokenKind::LParen) {
            self.bump();
            let inputs = self.type_list_until(TokenKind::RParen)?;
            if self.eat(TokenKind::Arrow).is_some() {
                op.sig.inputs = inputs;
                op.sig.outputs = self.result_types()?;
                op.sig.form = SigForm::Function;
            } else {
                op.sig.inputs = inputs;
                op.sig.form = SigForm::List;
            }
        } else {
            let first = self.parse_type()?;
            if self.eat(TokenKind::Arrow).is_some() {
                op.sig.inputs = smallvec::smallvec![first];
                op.sig.outputs = self.result_types()?;
                op.sig.form = SigForm::Function;
            } else {
                let mut list: TypeList = smallvec::smallvec![first];
                while self.at(TokenKind::Comma) && self.nth_is_type_start(1) {
                    self.bump();
                    list.push(self.parse_type()?);
                }
                op.sig.inputs = list;
                op.sig.form = SigForm::List;
            }
        }
        op.sig.span = Some(self.rel_from(start));
        Some(())
    }

    fn nth_is_type_start(&self, n: usize) -> bool {
        let t = self.nth(n);
        match t.kind {
            TokenKind::BangId | TokenKind::LParen => true,
            TokenKind::BareId => super::ty::is_builtin_type_name(self.text(t)),
            _ => false,
        }
    }

    /// Types up to `close` (consumed), comma separated.
    fn type_list_until(&mut self, close: TokenKind) -> Option<TypeList> {
        let mut out = TypeList::new();
        if self.eat(close).is_some() {
            return Some(out);
        }
        loop {
            if !self.enter() {
                return None;
            }
            let t = self.parse_type();
            self.leave();
            out.push(t?);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            self.expect(close, "')'")?;
            return Some(out);
        }
    }

    /// After `->`: `T` or `(T, U)`.
    fn result_types(&mut self) -> Option<TypeList> {
        if self.at(TokenKind::LParen) {
            self.bump();
            self.type_list_until(TokenKind::RParen)
        } else {
            Some(smallvec::smallvec![self.parse_type()?])
        }
    }

    // ----- regions -----

    /// At `{`: a region; `entry_args` are block arguments written before it.
    pub(crate) fn parse_region(&mut self, entry_args: Vec<BlockArg>) -> Option<Region> {
        if !self.enter() {
            return None;
        }
        let r = self.parse_region_inner(entry_args);
        self.leave();
        r
    }

    fn parse_region_inner(&mut self, entry_args: Vec<BlockArg>) -> Option<Region> {
        // A block's ops are gathered on a scratch stack shared by nested regions, so each
        // block's list is allocated once, at its exact size (a function body holds tens of
        // thousands of ops: growing it by doubling copies them over and over).
        let mark = self.child_scratch.len();
        let region = self.region_blocks(entry_args, mark);
        self.child_scratch.truncate(mark);
        region
    }

    /// The ops gathered on the scratch stack from `mark` on, in a list of their own.
    fn take_children(&mut self, mark: usize) -> Vec<Child> {
        let mut ops = Vec::with_capacity(self.child_scratch.len().saturating_sub(mark));
        ops.extend(self.child_scratch.drain(mark..));
        ops
    }

    fn region_blocks(&mut self, entry_args: Vec<BlockArg>, mark: usize) -> Option<Region> {
        let open = self.expect(TokenKind::LBrace, "'{'")?;
        let mut blocks = vec![Block { label: None, args: entry_args, ops: Children::new() }];
        loop {
            if self.at_eof() {
                let span = self.rel(open);
                self.error(span, msg::UNCLOSED_REGION);
                break;
            }
            if self.eat(TokenKind::RBrace).is_some() {
                break;
            }
            if self.at(TokenKind::CaretId) {
                let label_tok = self.bump();
                let label = Name { text: self.text(label_tok).into(), span: self.rel(label_tok) };
                let args = if self.at(TokenKind::LParen) { self.block_args()? } else { Vec::new() };
                self.expect(TokenKind::Colon, "':'")?;
                let reuse = blocks.len() == 1
                    && self.child_scratch.len() == mark
                    && blocks[0].label.is_none();
                if reuse {
                    blocks[0].label = Some(label);
                    blocks[0].args.extend(args);
                } else {
                    let ops = self.take_children(mark);
                    blocks.last_mut().expect("a region has a block").ops = ops.into();
                    blocks.push(Block { label: Some(label), args, ops: Children::new() });
                }
                continue;
            }
            if let Some(kids) = self.adopt_speculation() {
                self.child_scratch.extend(kids);
                continue;
            }
            let child = self.statement(true)?;
            self.child_scratch.push(child);
        }
        let ops = self.take_children(mark);
        blocks.last_mut().expect("a region has a block").ops = ops.into();
        Some(Region { span: self.rel_from(open.start), blocks })
    }

    /// At `(`: `(%a: T {attrs} loc(...), ...)`.
    fn block_args(&mut self) -> Option<Vec<BlockArg>> {
        self.expect(TokenKind::LParen, "'('")?;
        let mut args = Vec::new();
        if self.eat(TokenKind::RParen).is_some() {
            return Some(args);
        }
        loop {
            let name_tok = match self.eat(TokenKind::ValueId) {
                Some(t) => t,
                None => {
                    self.error_expected("SSA identifier");
                    return None;
                }
            };
            self.expect(TokenKind::Colon, "':'")?;
            let ty = self.parse_type()?;
            let attrs =
                if self.at(TokenKind::LBrace) { self.parse_attr_dict_recovering() } else { None };
            let loc = self.optional_loc();
            args.push(BlockArg {
                name: self.text(name_tok).into(),
                span: self.rel(name_tok),
                ty: Some(ty),
                attrs,
                loc,
            });
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            self.expect(TokenKind::RParen, "')'")?;
            return Some(args);
        }
    }

    fn optional_loc(&mut self) -> Option<Span> {
        if self.at_keyword("loc") && self.nth_kind(1) == TokenKind::LParen {
            let start = self.bump().start;
            self.skip_balanced();
            Some(self.rel_from(start))
        } else {
            None
        }
    }

    /// Whether the `{` at the cursor opens a region rather than an attribute dictionary.
    fn at_region_start(&self) -> bool {
        if !self.at(TokenKind::LBrace) {
            return false;
        }
        let next = self.nth(1);
        // `{` + newline + `name = ...` is a multi-line attribute dictionary.
        if matches!(next.kind, TokenKind::BareId | TokenKind::String)
            && self.nth_kind(2) == TokenKind::Equal
        {
            return false;
        }
        if self.nl_before_nth(1) && next.kind != TokenKind::RBrace {
            return true;
        }
        match next.kind {
            TokenKind::ValueId | TokenKind::CaretId => true,
            TokenKind::String => self.nth_kind(2) == TokenKind::LParen,
            TokenKind::BareId => {
                let after = self.nth_kind(2);
                let word = self.text(next);
                (word.contains('.') || word == "return")
                    && !matches!(after, TokenKind::Equal | TokenKind::Comma | TokenKind::RBrace)
            }
            _ => false,
        }
    }

    // ----- custom forms -----

    fn custom_body(&mut self, op: &mut Op, name: &str) -> Option<()> {
        // Most ops of a file are StableHLO ops read by the generic scanner: decide that
        // without going through every known name.
        if let Some(rest) = name.strip_prefix("stablehlo.") {
            if !matches!(rest, "while" | "return") {
                let read = if self.check_stablehlo_form(op, name, rest) {
                    // MLIR stops here; read the rest of the line only, so that a broken
                    // bracket cannot swallow the statements after it.
                    self.scan_line(op);
                    Some(())
                } else {
                    self.scan_custom(op)
                };
                self.form_types.clear();
                return read;
            }
        }
        match name {
            "module" | "builtin.module" => self.module_body(op),
            "func.func" => self.func_body(op),
            "sdy.mesh" => self.mesh_op(op),
            "sdy.sharding_constraint" | "sdy.reshard" => {
                self.operand(op)?;
                let sharding = self.custom_attr(op, "sharding", |p| {
                    p.sdy_sharding_body().map(SdyAttr::Sharding)
                })?;
                push_exact(&mut op.inherent, sharding);
                self.attr_dict_and_sig(op)
            }
            "sdy.propagation_barrier" => {
                self.operand(op)?;
                self.keyword_attr(op, "allowed_direction")?;
                self.attr_dict_and_sig(op)
            }
            "sdy.sharding_group" => {
                self.operand(op)?;
                self.keyword_attr(op, "group_id")?;
                self.attr_dict_and_sig(op)
            }
            "sdy.data_flow_edge" => {
                self.operand(op)?;
                if self.at_keyword("sharding") && self.nth_kind(1) == TokenKind::Equal {
                    self.bump();
                    self.bump();
                    let a = self.custom_attr(op, "sharding", |p| {
                        p.sdy_sharding_body().map(SdyAttr::Sharding)
                    })?;
                    push_exact(&mut op.inherent, a);
                }
                self.attr_dict_and_sig(op)
            }
            "sdy.func_data_flow_edge" => {
                self.operand(op)?;
                self.attr_dict_and_sig(op)
            }
            "sdy.manual_computation" => self.manual_computation(op),
            "sdy.named_computation" => self.named_computation(op),
            "sdy.return" | "return" | "func.return" | "stablehlo.return" => self.return_like(op),
            "sdy.constant" => {
                if self.at(TokenKind::LBrace) {
                    op.attrs = self.parse_attr_dict_recovering();
                }
                let value = self.parse_attr()?;
                let ty = match &value.kind {
                    AttrKind::Elements { ty } => ty.clone(),
                    _ => None,
                };
                push_exact(
                    &mut op.inherent,
                    NamedAttr {
                        name: "value".into(),
                        name_span: value.span,
                        span: value.span,
                        value: Some(value),
                    },
                );
                if let Some(ty) = ty {
                    op.sig = Signature {
                        span: Some(ty.span),
                        inputs: smallvec::smallvec![ty],
                        outputs: TypeList::new(),
                        form: SigForm::List,
                    };
                }
                Some(())
            }
            "sdy.all_gather"
            | "sdy.all_slice"
            | "sdy.reduce_scatter"
            | "sdy.sharded_to_unreduced" => {
                if name == "sdy.reduce_scatter" {
                    self.reduction_keyword(op);
                }
                let key = match name {
                    "sdy.all_gather" => "gathering_axes",
                    "sdy.all_slice" => "slicing_axes",
                    "sdy.reduce_scatter" => "reduce_scatter_axes",
                    _ => "axes",
                };
                let a = self.custom_attr(op, key, |p| {
                    p.sdy_axis_list_per_dim().map(SdyAttr::AxisListPerDim)
                })?;
                push_exact(&mut op.inherent, a);
                self.collective_tail(op)
            }
            "sdy.all_to_all" => {
                let a = self.custom_attr(op, "params", |p| {
                    p.sdy_all_to_all_params().map(SdyAttr::AllToAllParams)
                })?;
                push_exact(&mut op.inherent, a);
                self.collective_tail(op)
            }
            "sdy.collective_permute" => self.collective_tail(op),
            "sdy.all_reduce" | "sdy.replicated_to_unreduced" => {
                if name == "sdy.all_reduce" {
                    self.reduction_keyword(op);
                }
                let key = if name == "sdy.all_reduce" { "reduction_axes" } else { "axes" };
                let a = self.custom_attr(op, key, |p| p.sdy_axis_list().map(SdyAttr::AxisList))?;
                push_exact(&mut op.inherent, a);
                self.collective_tail(op)
            }
            "stablehlo.while" => self.while_op(op),
            _ => self.scan_custom(op),
        }
    }

    /// One operand `%x` (required).
    fn operand(&mut self, op: &mut Op) -> Option<()> {
        if !self.at(TokenKind::ValueId) {
            self.error_expected("SSA operand");
            return None;
        }
        self.value_use(op);
        Some(())
    }

    /// Parses an sdy attribute written in custom op syntax (errors get the
    /// `custom op '<name>'` prefix) and wraps it as an inherent attribute.
    fn custom_attr(
        &mut self,
        op: &Op,
        key: &'static str,
        f: impl FnOnce(&mut Self) -> Option<SdyAttr>,
    ) -> Option<NamedAttr> {
        self.custom_op = static_op_name(&op.name.text);
        // An attribute parameter also takes its full form (`#sdy.mesh<...>`), as
        // MLIR's `parseCustomAttributeWithFallback` does; it prints stripped.
        let full_form = match key {
            "mesh" => Some("#sdy.mesh"),
            "sharding" | "out_sharding" => Some("#sdy.sharding"),
            _ => None,
        };
        if full_form.is_some_and(|f| self.at(TokenKind::HashId) && self.text(self.peek()) == f)
            && self.nth_kind(1) == TokenKind::Less
        {
            self.bump();
        }
        let start = self.peek().start;
        let value = f(self);
        self.custom_op = None;
        let value = value?;
        let span = self.rel_from(start);
        Some(NamedAttr {
            name: self.intern(key),
            name_span: span,
            value: Some(Attr { span, kind: AttrKind::Sdy(Box::new(value)) }),
            span,
        })
    }

    /// `key=value` where value is a keyword or integer (`allowed_direction=FORWARD`).
    fn keyword_attr(&mut self, op: &mut Op, key: &'static str) -> Option<()> {
        let key_tok = self.peek();
        if self.eat_keyword(key).is_none() {
            self.error_expected(&format!("'{key}'"));
            return None;
        }
        self.expect(TokenKind::Equal, "'='")?;
        // An integer or keyword; a following `: type` is the op's signature, not a type
        // of the value.
        let start = self.peek().start;
        let neg = self.eat(TokenKind::Minus).is_some();
        let t = self.peek();
        let kind = match t.kind {
            TokenKind::Integer | TokenKind::HexInteger => {
                self.bump();
                let v = super::attr::parse_int(self.text(t)).unwrap_or(0);
                AttrKind::Int { value: if neg { -v } else { v }, ty: None }
            }
            TokenKind::BareId if !neg => {
                self.bump();
                AttrKind::Keyword(self.intern(self.text(t)))
            }
            _ => {
                self.error_expected("integer or keyword");
                return None;
            }
        };
        let value = Attr { span: self.rel_from(start), kind };
        push_exact(
            &mut op.inherent,
            NamedAttr {
                name: self.intern(key),
                name_span: self.rel(key_tok),
                span: self.rel_from(key_tok.start),
                value: Some(value),
            },
        );
        Some(())
    }

    /// An optional `sum`/`max`/`min` keyword before collective axes.
    fn reduction_keyword(&mut self, op: &mut Op) {
        if self.at(TokenKind::BareId) && matches!(self.peek_text(), "sum" | "max" | "min") {
            let t = self.bump();
            push_exact(
                &mut op.inherent,
                NamedAttr {
                    name: "reduction_op".into(),
                    name_span: self.rel(t),
                    span: self.rel(t),
                    value: Some(Attr {
                        span: self.rel(t),
                        kind: AttrKind::Keyword(self.text(t).into()),
                    }),
                },
            );
        }
    }

    /// `%x out_sharding=<...> {attrs} : T` of the collectives.
    fn collective_tail(&mut self, op: &mut Op) -> Option<()> {
        self.operand(op)?;
        if self.eat_keyword("out_sharding").is_none() {
            self.error_expected("'out_sharding'");
            return None;
        }
        self.expect(TokenKind::Equal, "'='")?;
        let a =
            self.custom_attr(op, "out_sharding", |p| p.sdy_sharding_body().map(SdyAttr::Sharding))?;
        push_exact(&mut op.inherent, a);
        self.attr_dict_and_sig(op)
    }

    /// `{attrs}? : T`
    fn attr_dict_and_sig(&mut self, op: &mut Op) -> Option<()> {
        if self.at(TokenKind::LBrace) {
            op.attrs = self.parse_attr_dict_recovering();
        }
        self.expect(TokenKind::Colon, "':'")?;
        self.signature(op)
    }

    /// `return {attrs}? %a, %b : T, U` (also `sdy.return`, `stablehlo.return`).
    fn return_like(&mut self, op: &mut Op) -> Option<()> {
        if self.at(TokenKind::LBrace) && !self.at_region_start() {
            op.attrs = self.parse_attr_dict_recovering();
        }
        if self.at(TokenKind::ValueId) && !self.at_statement_boundary() {
            loop {
                self.operand(op)?;
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
            self.expect(TokenKind::Colon, "':'")?;
            self.signature(op)?;
        }
        Some(())
    }

    /// `module @name? attributes {...}? { ... }`
    fn module_body(&mut self, op: &mut Op) -> Option<()> {
        let mut header = ModuleHeader { sym: None, attrs: None };
        if let Some(t) = self.eat(TokenKind::AtId) {
            header.sym = Some(Name { text: self.text(t)[1..].into(), span: self.rel(t) });
        }
        if self.eat_keyword("attributes").is_some() {
            header.attrs = self.parse_attr_dict_recovering();
        }
        op.custom = Custom::Module(Box::new(header));
        if !self.at(TokenKind::LBrace) {
            self.error_expected("'{'");
            return None;
        }
        let r = self.parse_region(Vec::new())?;
        op.regions.push(r);
        Some(())
    }

    /// `func.func private? @name(%arg0: T {attrs} loc(..), ...) -> (R {attrs}) attributes {..} {body}`
    fn func_body(&mut self, op: &mut Op) -> Option<()> {
        let mut visibility = None;
        if self.at(TokenKind::BareId) && matches!(self.peek_text(), "public" | "private" | "nested")
        {
            let t = self.bump();
            visibility = Some(Name { text: self.text(t).into(), span: self.rel(t) });
        }
        let sym_tok = match self.eat(TokenKind::AtId) {
            Some(t) => t,
            None => {
                self.error_expected("valid '@'-identifier for symbol name");
                return None;
            }
        };
        let sym_text = self.text(sym_tok)[1..].trim_matches('"');
        let sym = Name { text: sym_text.into(), span: self.rel(sym_tok) };
        let mut header =
            FuncHeader { visibility, sym, args: Vec::new(), results: Vec::new(), fn_attrs: None };
        self.expect(TokenKind::LParen, "'('")?;
        if self.eat(TokenKind::RParen).is_none() {
            loop {
                let name_tok = match self.eat(TokenKind::ValueId) {
                    Some(t) => t,
                    None => {
                        // External functions may list bare types.
                        if self.at_type_start() {
                            let ty = self.parse_type()?;
                            let attrs = if self.at(TokenKind::LBrace) {
                                self.parse_attr_dict_recovering()
                            } else {
                                None
                            };
                            let loc = self.optional_loc();
                            header.args.push(FuncArg {
                                name: "".into(),
                                span: ty.span,
                                ty,
                                attrs,
                                loc,
                            });
                            if self.eat(TokenKind::Comma).is_some() {
                                continue;
                            }
                            self.expect(TokenKind::RParen, "')'")?;
                            break;
                        }
                        self.error_expected("SSA identifier");
                        return None;
                    }
                };
                self.expect(TokenKind::Colon, "':'")?;
                let ty = self.parse_type()?;
                let attrs = if self.at(TokenKind::LBrace) {
                    self.parse_attr_dict_recovering()
                } else {
                    None
                };
                let loc = self.optional_loc();
                header.args.push(FuncArg {
                    name: self.text(name_tok).into(),
                    span: self.rel(name_tok),
                    ty,
                    attrs,
                    loc,
                });
                if self.eat(TokenKind::Comma).is_some() {
                    continue;
                }
                self.expect(TokenKind::RParen, "')'")?;
                break;
            }
        }
        if self.eat(TokenKind::Arrow).is_some() {
            if self.eat(TokenKind::LParen).is_some() {
                if self.eat(TokenKind::RParen).is_none() {
                    loop {
                        let ty = self.parse_type()?;
                        let attrs = if self.at(TokenKind::LBrace) {
                            self.parse_attr_dict_recovering()
                        } else {
                            None
                        };
                        let loc = self.optional_loc();
                        header.results.push(FuncResult { ty, attrs, loc });
                        if self.eat(TokenKind::Comma).is_some() {
                            continue;
                        }
                        self.expect(TokenKind::RParen, "')'")?;
                        break;
                    }
                }
            } else {
                let ty = self.parse_type()?;
                header.results.push(FuncResult { ty, attrs: None, loc: None });
            }
        }
        if self.eat_keyword("attributes").is_some() {
            header.fn_attrs = self.parse_attr_dict_recovering();
        }
        op.custom = Custom::Func(Arc::new(header));
        if self.at(TokenKind::LBrace) {
            let r = self.parse_region(Vec::new())?;
            op.regions.push(r);
        }
        Some(())
    }

    /// `sdy.mesh @name = <...> {attrs}?`
    fn mesh_op(&mut self, op: &mut Op) -> Option<()> {
        let sym_tok = match self.eat(TokenKind::AtId) {
            Some(t) => t,
            None => {
                self.error_expected("valid '@'-identifier for symbol name");
                return None;
            }
        };
        let sym = Name {
            text: self.text(sym_tok)[1..].trim_matches('"').into(),
            span: self.rel(sym_tok),
        };
        op.custom = Custom::Mesh { sym: Box::new(sym) };
        self.expect(TokenKind::Equal, "'='")?;
        let a = self.custom_attr(op, "mesh", |p| p.sdy_mesh_body().map(SdyAttr::Mesh))?;
        push_exact(&mut op.inherent, a);
        if self.at(TokenKind::LBrace) && !self.at_statement_boundary_nth(0) {
            op.attrs = self.parse_attr_dict_recovering();
        }
        Some(())
    }

    /// `sdy.manual_computation(%a) in_shardings=[..] out_shardings=[..] manual_axes={..} (%arg: T) {..} {attrs}? : (T) -> R`
    fn manual_computation(&mut self, op: &mut Op) -> Option<()> {
        self.expect(TokenKind::LParen, "'('")?;
        self.value_use_list(op, TokenKind::RParen)?;
        for key in ["in_shardings", "out_shardings"] {
            self.expect_keyword_eq(key)?;
            let a =
                self.custom_attr(op, key, |p| p.sdy_stripped_per_value().map(SdyAttr::PerValue))?;
            push_exact(&mut op.inherent, a);
        }
        self.expect_keyword_eq("manual_axes")?;
        let a =
            self.custom_attr(op, "manual_axes", |p| p.sdy_manual_axes().map(SdyAttr::ManualAxes))?;
        push_exact(&mut op.inherent, a);
        let args = self.block_args()?;
        let r = self.parse_region(args)?;
        op.regions.push(r);
        self.attr_dict_and_sig(op)
    }

    /// `sdy.named_computation<"name">(%a) in_shardings=[..]? out_shardings=[..]? (%arg: T) {..} {attrs}? : (T) -> R`
    fn named_computation(&mut self, op: &mut Op) -> Option<()> {
        self.expect(TokenKind::Less, "'<'")?;
        let name_tok = self.expect(TokenKind::String, "string")?;
        let span = self.rel(name_tok);
        let raw = self.text(name_tok);
        push_exact(
            &mut op.inherent,
            NamedAttr {
                name: "name".into(),
                name_span: span,
                span,
                value: Some(Attr {
                    span,
                    kind: AttrKind::String { raw: raw[1..raw.len() - 1].into() },
                }),
            },
        );
        self.expect(TokenKind::Greater, "'>'")?;
        self.expect(TokenKind::LParen, "'('")?;
        self.value_use_list(op, TokenKind::RParen)?;
        for key in ["in_shardings", "out_shardings"] {
            if self.at_keyword(key) {
                self.expect_keyword_eq(key)?;
                let a = self
                    .custom_attr(op, key, |p| p.sdy_stripped_per_value().map(SdyAttr::PerValue))?;
                push_exact(&mut op.inherent, a);
            }
        }
        let args = self.block_args()?;
        let r = self.parse_region(args)?;
        op.regions.push(r);
        self.attr_dict_and_sig(op)
    }

    fn expect_keyword_eq(&mut self, key: &str) -> Option<()> {
        if self.eat_keyword(key).is_none() {
            self.error_expected(&format!("'{key}'"));
            return None;
        }
        self.expect(TokenKind::Equal, "'='").map(|_| ())
    }

    /// `stablehlo.while(%iterArg = %a, ...) : T, ... attributes {..}? cond {..} do {..}`
    fn while_op(&mut self, op: &mut Op) -> Option<()> {
        self.expect(TokenKind::LParen, "'('")?;
        let mut iter_args = Vec::new();
        if self.eat(TokenKind::RParen).is_none() {
            loop {
                let name_tok = self.expect(TokenKind::ValueId, "SSA identifier")?;
                self.expect(TokenKind::Equal, "'='")?;
                self.operand(op)?;
                iter_args.push((self.text(name_tok), self.rel(name_tok)));
                if self.eat(TokenKind::Comma).is_some() {
                    continue;
                }
                self.expect(TokenKind::RParen, "')'")?;
                break;
            }
        }
        if self.eat(TokenKind::Colon).is_some() {
            self.signature(op)?;
        }
        if self.eat_keyword("attributes").is_some() {
            op.attrs = self.parse_attr_dict_recovering();
        }
        let types: TypeList = op.sig.inputs.clone();
        let block_args = |_: ()| -> Vec<BlockArg> {
            iter_args
                .iter()
                .enumerate()
                .map(|(i, (name, span))| BlockArg {
                    name: (*name).into(),
                    span: *span,
                    ty: types.get(i).cloned(),
                    attrs: None,
                    loc: None,
                })
                .collect()
        };
        for kw in ["cond", "do"] {
            if self.eat_keyword(kw).is_none() {
                self.error_expected(&format!("'{kw}'"));
                return None;
            }
            let r = self.parse_region(block_args(()))?;
            op.regions.push(r);
        }
        Some(())
    }

    // ----- the generic scanner for unknown custom syntax -----

    /// Scans a custom op body token by token, collecting operand uses, regions (with
    /// block arguments written before them), the attribute dictionary and the trailing
    /// signature, until the statement ends.
    fn scan_custom(&mut self, op: &mut Op) -> Option<()> {
        let mut pending_args: Vec<BlockArg> = Vec::new();
        let callee_key =
            if &*op.name.text == "stablehlo.custom_call" { "call_target_name" } else { "callee" };
        loop {
            if self.at_statement_end() {
                return Some(());
            }
            let t = self.peek();
            match t.kind {
                TokenKind::ValueId => self.value_use(op),
                TokenKind::AtId if op.inherent_attr(callee_key).is_none() => {
                    self.bump();
                    let span = self.rel(t);
                    push_exact(
                        &mut op.inherent,
                        NamedAttr {
                            name: self.intern(callee_key),
                            name_span: span,
                            span,
                            value: Some(Attr {
                                span,
                                kind: AttrKind::Symbol(self.text(t)[1..].trim_matches('"').into()),
                            }),
                        },
                    );
                }
                TokenKind::LParen
                    if self.nth_kind(1) == TokenKind::ValueId
                        && self.nth_kind(2) == TokenKind::Colon =>
                {
                    pending_args.extend(self.block_args()?);
                }
                TokenKind::LParen | TokenKind::LBracket => self.scan_group(op)?,
                TokenKind::LBrace => {
                    if self.at_region_start() || !pending_args.is_empty() {
                        let r = self.parse_region(std::mem::take(&mut pending_args))?;
                        op.regions.push(r);
                    } else {
                        let Some(d) = self.parse_attr_dict_recovering() else { continue };
                        match &mut op.attrs {
                            None => op.attrs = Some(d),
                            // A second dictionary (e.g. convolution's `window = {..}` is a
                            // value, not a dict); keep the entries as inherent attributes.
                            Some(_) => {
                                op.inherent.reserve_exact(d.entries.len());
                                op.inherent.extend(d.entries)
                            }
                        }
                    }
                }
                TokenKind::Colon => {
                    self.bump();
                    self.signature(op)?;
                }
                TokenKind::BareId
                    if self.at_keyword("loc") && self.nth_kind(1) == TokenKind::LParen =>
                {
                    return Some(());
                }
                TokenKind::BareId
                    if self.at_keyword("attributes") && self.nth_kind(1) == TokenKind::LBrace =>
                {
                    self.bump();
                    op.attrs = self.parse_attr_dict_recovering();
                }
                TokenKind::BareId if self.nth_kind(1) == TokenKind::Equal => {
                    self.scan_keyword_value(op)?
                }
                TokenKind::Less => self.skip_balanced(),
                TokenKind::HashId | TokenKind::BareId
                    if matches!(self.peek_text(), "dense" | "dense_resource" | "array")
                        || t.kind == TokenKind::HashId =>
                {
                    let a = self.parse_attr()?;
                    push_exact(
                        &mut op.inherent,
                        NamedAttr {
                            name: "value".into(),
                            name_span: a.span,
                            span: a.span,
                            value: Some(a),
                        },
                    );
                }
                TokenKind::UnterminatedString => {
                    let span = self.rel(t);
                    self.error(span, msg::UNTERMINATED_STRING);
                    return None;
                }
                TokenKind::Error => {
                    let span = self.rel(t);
                    self.error(span, msg::unexpected_character(self.text(t)));
                    return None;
                }
                TokenKind::RParen | TokenKind::RBracket | TokenKind::Greater => {
                    let span = self.rel(t);
                    self.error(span, msg::unexpected(self.text(t)));
                    return None;
                }
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// The rest of a statement whose custom form is known to be wrong: its value uses
    /// up to the end of the line.
    fn scan_line(&mut self, op: &mut Op) {
        while !self.at_eof() && !self.nl_before() {
            if self.at(TokenKind::ValueId) {
                self.value_use(op);
            } else {
                self.bump();
            }
        }
    }

    /// `key = value` in custom syntax (`dims = [0, 1]`, `dim = 0`, `window = {..}`):
    /// recorded as an inherent attribute when the value reads as an attribute.
    fn scan_keyword_value(&mut self, op: &mut Op) -> Option<()> {
        let key = self.bump();
        self.bump(); // '='
        let save = self.save();
        let errors = self.errors.len();
        let value = self.parse_attr();
        match value {
            Some(v) if !self.at(TokenKind::BareId) || self.peek_text() != "x" => {
                push_exact(
                    &mut op.inherent,
                    NamedAttr {
                        name: self.intern(self.text(key)),
                        name_span: self.rel(key),
                        span: self.rel_from(key.start),
                        value: Some(v),
                    },
                );
            }
            _ => {
                // Not an attribute (e.g. `batching_dims = [0] x [0]`): rescan as tokens.
                self.errors.truncate(errors);
                self.reset_failure();
                self.restore(save);
            }
        }
        Some(())
    }

    /// A bracketed group in custom syntax: collects the value uses inside.
    fn scan_group(&mut self, op: &mut Op) -> Option<()> {
        if !self.enter() {
            return None;
        }
        let close =
            if self.at(TokenKind::LParen) { TokenKind::RParen } else { TokenKind::RBracket };
        let open = self.bump();
        loop {
            if self.at_eof() {
                let span = self.rel(open);
                self.error(
                    span,
                    format!("expected '{}'", if close == TokenKind::RParen { ")" } else { "]" }),
                );
                self.leave();
                return None;
            }
            if self.eat(close).is_some() {
                break;
            }
            match self.kind() {
                TokenKind::ValueId => self.value_use(op),
                TokenKind::LParen | TokenKind::LBracket => self.scan_group(op)?,
                TokenKind::LBrace | TokenKind::Less => self.skip_balanced(),
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    let t = self.peek();
                    let span = self.rel(t);
                    self.error(span, msg::unexpected(self.text(t)));
                    self.leave();
                    return None;
                }
                _ => {
                    self.bump();
                }
            }
        }
        self.leave();
        Some(())
    }

    /// Whether the statement being scanned has ended: end of input, the `}` closing the
    /// enclosing region, or a new statement on a new line.
    fn at_statement_end(&self) -> bool {
        let (kind, nl) = self.peek_kind_nl();
        // Only a token after a line break can start a statement.
        kind == TokenKind::Eof || kind == TokenKind::RBrace || (nl && self.at_statement_boundary())
    }

    /// A new line that starts a new statement.
    fn at_statement_boundary(&self) -> bool {
        self.at_statement_boundary_nth(0)
    }

    fn at_statement_boundary_nth(&self, n: usize) -> bool {
        if !self.nl_before_nth(n) {
            return false;
        }
        let t = self.nth(n);
        match t.kind {
            TokenKind::ValueId => self.looks_like_results(n),
            TokenKind::String => self.nth_kind(n + 1) == TokenKind::LParen,
            TokenKind::BareId => {
                let w = self.text(t);
                let after = self.nth_kind(n + 1);
                // `sdy.return` alone on its line before the region's `}` starts a statement;
                // a dotted word followed by `=`/`,`/`:` or a `}` on its own line does not.
                let closes_same_line = after == TokenKind::RBrace && !self.nl_before_nth(n + 1);
                (w.contains('.') || matches!(w, "return" | "call" | "module"))
                    && !matches!(after, TokenKind::Equal | TokenKind::Comma | TokenKind::Colon)
                    && !closes_same_line
            }
            TokenKind::HashId | TokenKind::BangId => self.nth_kind(n + 1) == TokenKind::Equal,
            TokenKind::CaretId | TokenKind::FileMetadataBegin | TokenKind::Eof => true,
            _ => false,
        }
    }

    /// `%a =`, `%a:2 =`, `%a, %b =` starting at lookahead `n`.
    fn looks_like_results(&self, mut n: usize) -> bool {
        loop {
            if self.nth_kind(n) != TokenKind::ValueId {
                return false;
            }
            n += 1;
            if self.nth_kind(n) == TokenKind::Colon && self.nth_kind(n + 1) == TokenKind::Integer {
                n += 2;
            }
            match self.nth_kind(n) {
                TokenKind::Equal => return true,
                TokenKind::Comma => n += 1,
                _ => return false,
            }
        }
    }

    /// After an error: skips to the end of the statement. Brackets are skipped whole,
    /// but a new statement on a new line always ends the skip, so an unclosed bracket
    /// cannot swallow the rest of the file. A `{` that ends its line opens a region:
    /// it is parsed and kept, so an error in a function header does not lose the body.
    pub(crate) fn recover(&mut self, op: &mut Op) {
        let mut depth = 0i32;
        loop {
            if self.at_eof() || self.at_statement_boundary() {
                return;
            }
            match self.kind() {
                TokenKind::LBrace
                    if self.nl_before_nth(1) && self.nth_kind(1) != TokenKind::RBrace =>
                {
                    match self.parse_region(Vec::new()) {
                        Some(r) => op.regions.push(r),
                        None => return,
                    }
                    depth = 0;
                    continue;
                }
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
                TokenKind::RParen | TokenKind::RBracket => depth = (depth - 1).max(0),
                TokenKind::RBrace => {
                    // A `}` starting a line closes the enclosing region.
                    if depth == 0 && self.nl_before() {
                        return;
                    }
                    depth = (depth - 1).max(0);
                }
                _ => {}
            }
            self.bump();
        }
    }
}

/// Appends without spare capacity: ops keep their few attributes for as long as the
/// document lives, so a vector grown by doubling would waste most of its memory.
pub(crate) fn push_exact<T>(v: &mut ThinVec<T>, item: T) {
    v.reserve_exact(1);
    v.push(item);
}

/// MLIR prefixes custom-syntax errors with the op name; the prefix needs a `'static`
/// name, so known sdy ops are listed here.
fn static_op_name(name: &str) -> Option<&'static str> {
    const NAMES: &[&str] = &[
        "sdy.mesh",
        "sdy.sharding_constraint",
        "sdy.reshard",
        "sdy.data_flow_edge",
        "sdy.manual_computation",
        "sdy.named_computation",
        "sdy.all_gather",
        "sdy.all_slice",
        "sdy.all_to_all",
        "sdy.all_reduce",
        "sdy.reduce_scatter",
        "sdy.collective_permute",
        "sdy.sharded_to_unreduced",
        "sdy.replicated_to_unreduced",
    ];
    NAMES.iter().copied().find(|n| *n == name)
}
