//! A document: its text (a rope) and its syntax tree, kept up to date by incremental
//! re-parsing.
//!
//! An edit re-parses only the statements it touches, in the innermost block that holds
//! it, and splices them in: unchanged ops stay shared (`Arc`) with older versions, only
//! the ops on the path from the root to that block are copied, and positions after the
//! edit move by the length change. The result is always exactly what a fresh parse of
//! the new text gives; when a cheap re-parse cannot guarantee that (an edit that opens or
//! closes a region, a `// -----` marker made or broken, ...) it widens to the enclosing
//! op, then to the whole chunk.
//!
//! Why the re-parsed run is chosen as it is: the parser decides where a statement ends
//! by looking at a few tokens past it (a new line that starts with `%x =`, `foo.bar`,
//! ...), so the statement before an edit can change when the edit is within that
//! lookahead. The run therefore starts after the last statement whose lookahead stays
//! clear of the edit, and the text handed to the parser extends past the run by as many
//! tokens as the lookahead can read. Error recovery may read much further ahead (an
//! unclosed `{` tried as an attribute dictionary, then skipped); that shows as an error
//! past the op's end, so such ops are listed per chunk and taken into account.

use crate::lexer::{self, Token, TokenKind};
use crate::parser;
use crate::shift::Shift;
use crate::span::Span;
use crate::split::{split_chunks, SPLIT_MARKER};
use crate::tree::{Block, Child, ChildRef, Children, Chunk, Op};
use ropey::Rope;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

/// How many tokens past a statement's end the parser may read to decide where it ends
/// (it reads up to 3; one more for safety), besides a following result list
/// `%a, %b:2 =`, which is counted separately.
const LOOKAHEAD: usize = 4;

/// How many tokens just before an edit may change with it: the token touching the edit
/// can grow, and up to three tokens can fuse into one (`1.5` `e` `-` + `3` → `1.5e-3`).
const FUSE: usize = 4;

/// A text with its syntax tree.
#[derive(Clone, Debug)]
pub struct Document {
    rope: Rope,
    split: bool,
    chunks: Vec<Chunk>,
    /// Per chunk, the ops (at any depth) with an error past their own end, as
    /// `(start, end of that error)` relative to the chunk start, sorted by start.
    far: Vec<Vec<(u32, u32)>>,
}

/// What an edit cost: used by tests and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditStats {
    /// Bytes handed to the lexer and parser, over all attempts (lookahead context
    /// included; the few tokens lexed to size the lookahead windows are not counted).
    pub bytes_reparsed: usize,
    /// Statements built by the re-parse (the run's own statements; ops nested in them
    /// are not counted). For a whole-chunk re-parse, its top-level statements.
    pub statements_reparsed: usize,
    /// Nesting depth of the block whose statements were re-parsed (0 = top level).
    pub depth: usize,
    /// How many times the re-parse widened to the enclosing op (or the chunk).
    pub widenings: usize,
    /// Whether whole chunks were re-parsed.
    pub chunk_reparsed: bool,
    /// Whether the `// -----` split was recomputed.
    pub resplit: bool,
}

/// One step of the path from a chunk's top level down to the block holding an edit.
#[derive(Clone, Copy, Debug)]
struct Frame {
    /// Index of the op in its block.
    child: usize,
    /// Index of the region (whose single block is entered).
    region: usize,
    /// Absolute start of the op.
    op_start: u32,
    /// Absolute range between the region's `{` and `}`.
    body: Span,
    /// Whether the parser took the region's `{` as a region without peeking inside.
    fixed_entry: bool,
}

/// An edit in old-text coordinates, with its length change.
#[derive(Clone, Copy, Debug)]
struct Edit {
    start: u32,
    end: u32,
    delta: i64,
}

impl Edit {
    /// Where an old position at or after the edit's end is in the new text.
    fn moved(self, p: u32) -> u32 {
        (p as i64 + self.delta) as u32
    }
}

/// The statements that replace a run of siblings.
struct Plan {
    /// Indices of the replaced siblings.
    range: Range<usize>,
    /// The new statements, offsets relative to the block's base.
    kids: Vec<Child>,
    /// Old absolute position from which everything moves by the length change.
    at: u32,
    /// Old absolute position where the re-parsed run starts.
    from: u32,
    /// Far-reaching ops among the new statements (absolute, new text).
    far: Vec<(u32, u32)>,
}

impl Document {
    /// Parses `text`; with `split`, as `// -----` separated chunks (`--split-input-file`).
    pub fn new(text: &str, split: bool) -> Document {
        let parse = || {
            let chunks: Vec<Chunk> =
                chunk_spans(text, split).into_iter().map(|s| parse_chunk(text, s)).collect();
            let far = chunks.iter().map(far_table).collect();
            (chunks, far)
        };
        // A big text's rope is built on another core while it is parsed.
        let (rope, (chunks, far)) = if text.len() >= 1 << 20 {
            std::thread::scope(|s| {
                let rope = s.spawn(|| Rope::from_str(text));
                let parsed = parse();
                (rope.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), parsed)
            })
        } else {
            (Rope::from_str(text), parse())
        };
        Document { rope, split, chunks, far }
    }

    pub fn text(&self) -> &Rope {
        &self.rope
    }

    /// Whether the document is split at `// -----` markers.
    pub fn is_split(&self) -> bool {
        self.split
    }

    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Internal bookkeeping, exposed for tests: per chunk, the ops whose error recovery
    /// read past their end (`(start, end of that error)`, chunk-relative).
    #[doc(hidden)]
    pub fn far_reaching_ops(&self) -> &[Vec<(u32, u32)>] {
        &self.far
    }

    /// The index of the chunk whose span contains `offset` (an offset at a chunk's end
    /// counts as inside it); `None` inside a `// -----` marker or past the end.
    pub fn chunk_at(&self, offset: u32) -> Option<usize> {
        let i = self.chunks.partition_point(|c| c.span.start <= offset).checked_sub(1)?;
        (offset <= self.chunks[i].span.end).then_some(i)
    }

    /// The ops containing `offset` (`start <= offset < end`), outermost first, each with
    /// its absolute start. Children are found by binary search on their offsets.
    pub fn op_at(&self, offset: u32) -> Vec<(u32, &Op)> {
        let mut out = Vec::new();
        let Some(ci) = self.chunk_at(offset) else { return out };
        let chunk = &self.chunks[ci];
        let (mut kids, mut base) = (&chunk.top, chunk.span.start);
        while let Some(c) = child_containing(kids, base, offset) {
            let start = base + c.offset;
            let c = c.op;
            out.push((start, &**c));
            let inner = c
                .regions
                .iter()
                .flat_map(|r| &r.blocks)
                .find(|b| child_containing(&b.ops, start, offset).is_some());
            match inner {
                Some(b) => (kids, base) = (&b.ops, start),
                None => break,
            }
        }
        out
    }

    /// Replaces the bytes in `range` with `new_text` and updates the tree.
    ///
    /// # Panics
    /// If `range` is out of bounds or not on char boundaries.
    pub fn apply_edit(&mut self, range: Range<usize>, new_text: &str) -> EditStats {
        let len = self.rope.len_bytes();
        assert!(
            range.start <= range.end && range.end <= len,
            "edit range {range:?} out of bounds (length {len})"
        );
        assert!(
            self.is_char_boundary(range.start) && self.is_char_boundary(range.end),
            "edit range {range:?} is not on char boundaries"
        );
        let mut stats = EditStats::default();
        if range.is_empty() && new_text.is_empty() {
            return stats;
        }
        let edit = Edit {
            start: range.start as u32,
            end: range.end as u32,
            delta: new_text.len() as i64 - range.len() as i64,
        };

        // A `// -----` marker touched, broken or made by the edit changes the chunks.
        let marker_before = self.split && self.marker_near(range.start, range.end);
        let char_start = self.rope.byte_to_char(range.start);
        self.rope.remove(char_start..self.rope.byte_to_char(range.end));
        self.rope.insert(char_start, new_text);
        let marker_after =
            self.split && self.marker_near(range.start, range.start + new_text.len());
        if marker_before || marker_after {
            self.resplit(edit, new_text.len() as u32, &mut stats);
            return stats;
        }

        // Without a marker near it, the edit lies inside one chunk.
        let ci = self.chunks.partition_point(|c| c.span.start <= edit.start) - 1;
        debug_assert!(edit.end <= self.chunks[ci].span.end);
        let path = descend(&self.chunks[ci], edit);
        for level in (0..=path.len()).rev() {
            if let Some(plan) = self.plan(ci, &path[..level], edit, &mut stats) {
                stats.statements_reparsed = plan.kids.len();
                stats.depth = level;
                self.splice(ci, &path[..level], edit, plan);
                self.move_chunks_after(ci, edit);
                return stats;
            }
            stats.widenings += 1;
        }

        // Nothing smaller worked: re-parse the chunk.
        let old = self.chunks[ci].span;
        let span = Span::new(old.start, edit.moved(old.end));
        let chunk = parse_chunk_text(&self.slice(span.start, span.end), span);
        stats.chunk_reparsed = true;
        stats.bytes_reparsed += span.len() as usize;
        stats.statements_reparsed = chunk.top.len();
        self.far[ci] = far_table(&chunk);
        self.chunks[ci] = chunk;
        self.move_chunks_after(ci, edit);
        stats
    }

    // ----- the incremental re-parse -----

    /// Re-parses the siblings around the edit in the block at the end of `path` (the
    /// chunk's top level for an empty path), or `None` when that cannot be done exactly
    /// at this level.
    fn plan(&self, ci: usize, path: &[Frame], edit: Edit, stats: &mut EditStats) -> Option<Plan> {
        let chunk = &self.chunks[ci];
        let (kids, base, content, fixed_entry) = match path.last() {
            None => (&chunk.top, chunk.span.start, chunk.span, true),
            Some(f) => (block_at(chunk, path), f.op_start, f.body, f.fixed_entry),
        };
        let start_of = |c: ChildRef| base + c.offset;
        let end_of = |c: ChildRef| base + c.offset + c.op.len;

        // The siblings the edit touches (overlapping or adjacent): kids[i0..i1].
        let i0 = kids.partition_point(|c| end_of(c) < edit.start);
        let i1 = kids.partition_point(|c| start_of(c) <= edit.end);

        // Start after the last sibling whose lookahead cannot reach the edit. At the
        // start of a block, the parent may have peeked inside to choose region vs
        // attribute dictionary (generic scanner only).
        let mut lo = i0;
        let from = loop {
            let from = if lo == 0 {
                if !fixed_entry && !self.left_window_clear(content.start, edit.start) {
                    return None;
                }
                content.start
            } else {
                let from = end_of(kids.at(lo - 1));
                if !self.left_window_clear(from, edit.start) {
                    lo -= 1;
                    continue;
                }
                from
            };
            // An earlier op whose error recovery read up to the edit is re-parsed too.
            match self.far_blocker(ci, from, edit.start) {
                None => break from,
                Some(b) if b < content.start => return None,
                Some(b) => lo = kids.partition_point(|c| start_of(c) <= b) - 1,
            }
        };

        // Stop at the first sibling after the edit (or the block's `}`), and give the
        // parser enough text after it for its lookahead.
        let stop_old = kids.get(i1).map_or(content.end, start_of);
        let stop = edit.moved(stop_old);
        let chunk_end = edit.moved(chunk.span.end);
        let mut ctx_end = self.lookahead_end(stop, chunk_end);

        // Lex from a line start so that tokens and line breaks around `from` read as in
        // the whole text.
        let text_start = self.line_start(from).max(chunk.span.start);
        loop {
            let text = self.slice(text_start, ctx_end);
            stats.bytes_reparsed += text.len();
            let new = parser::reparse_siblings(
                &text,
                from - text_start,
                stop - text_start,
                !path.is_empty(),
                path.len() as u32,
            )?;
            let mut far = Vec::new();
            collect_far(new.iter().map(Child::view), text_start, &mut far);
            // Error recovery that read up to the end of the given text may have read
            // further in the whole text: give it what it can read and parse again.
            let needed = far.iter().map(|&(_, r)| self.lookahead_end(r, chunk_end)).max();
            if let Some(needed) = needed.filter(|&n| n > ctx_end) {
                ctx_end = needed;
                continue;
            }
            let kids = new
                .into_iter()
                .map(|c| Child { offset: c.offset + text_start - base, op: c.op })
                .collect();
            return Some(Plan { range: lo..i1, kids, at: stop_old, from, far });
        }
    }

    /// The start of the first op before `from` whose error recovery read too close to
    /// `edit_start` (see [`Document::far`]).
    fn far_blocker(&self, ci: usize, from: u32, edit_start: u32) -> Option<u32> {
        let base = self.chunks[ci].span.start;
        let far = &self.far[ci];
        let before = far.partition_point(|&(s, _)| base + s < from);
        far[..before]
            .iter()
            .map(|&(s, r)| (base + s, base + r))
            .find(|&(_, r)| r > edit_start || !self.left_window_clear(r, edit_start))
            .map(|(s, _)| s)
    }

    /// Applies a plan: copies the ops on the path (shared ones only), moves what follows
    /// the edit, and swaps in the new statements.
    fn splice(&mut self, ci: usize, path: &[Frame], edit: Edit, plan: Plan) {
        let chunk = &mut self.chunks[ci];
        let mut kids = &mut chunk.top;
        // Top-level statements after the edit move; deeper ones are moved by their
        // parent's shift (child offsets are part of an op's own fields).
        let first_after = path.first().map_or(plan.range.end, |f| f.child + 1);
        let delta = edit.delta as u32; // two's complement: wrapping_add subtracts too
        kids.shift_from(first_after, delta);
        for f in path {
            let child = kids.get_mut(f.child).expect("the path's op");
            let op = Arc::make_mut(&mut child.op);
            Shift { at: plan.at - f.op_start, delta: edit.delta }.op(op);
            kids = &mut op.regions[f.region].blocks[0].ops;
        }
        kids.splice(plan.range, plan.kids);

        // The far-reaching ops: drop the replaced run's, move later ones, add the new.
        let base = chunk.span.start;
        let far = &mut self.far[ci];
        let lo = far.partition_point(|&(s, _)| base + s < plan.from);
        let hi = far.partition_point(|&(s, _)| base + s < plan.at);
        for (s, r) in &mut far[hi..] {
            *s = s.wrapping_add(delta);
            *r = r.wrapping_add(delta);
        }
        far.splice(lo..hi, plan.far.iter().map(|&(s, r)| (s - base, r - base)));
        chunk.span.end = edit.moved(chunk.span.end);
    }

    fn move_chunks_after(&mut self, ci: usize, edit: Edit) {
        for c in &mut self.chunks[ci + 1..] {
            c.span = Span::new(edit.moved(c.span.start), edit.moved(c.span.end));
        }
    }

    /// Splits the new text again; chunks whose text did not change keep their trees.
    fn resplit(&mut self, edit: Edit, new_len: u32, stats: &mut EditStats) {
        stats.resplit = true;
        let text: Cow<str> = (&self.rope).into();
        let mut old = std::mem::take(&mut self.chunks);
        let mut old_far = std::mem::take(&mut self.far);
        let inserted_end = edit.start + new_len;
        for span in chunk_spans(&text, self.split) {
            let old_span = if span.end <= edit.start {
                Some(span)
            } else if span.start >= inserted_end {
                let s = Span::new(edit.moved_back(span.start), edit.moved_back(span.end));
                (s.start >= edit.end).then_some(s)
            } else {
                None
            };
            let reused = old_span.and_then(|s| {
                let i = old.binary_search_by_key(&s.start, |c| c.span.start).ok()?;
                (old[i].span == s).then_some(i)
            });
            match reused {
                Some(i) => {
                    // Positions in a chunk are relative to its start: nothing moves.
                    self.chunks.push(Chunk { span, top: std::mem::take(&mut old[i].top) });
                    self.far.push(std::mem::take(&mut old_far[i]));
                }
                None => {
                    let chunk = parse_chunk(&text, span);
                    stats.chunk_reparsed = true;
                    stats.bytes_reparsed += span.len() as usize;
                    stats.statements_reparsed += chunk.top.len();
                    self.far.push(far_table(&chunk));
                    self.chunks.push(chunk);
                }
            }
        }
    }

    // ----- lookahead windows -----

    /// Whether the parser, deciding where the statement ending at `from` ends, cannot
    /// read anything the edit starting at `edit_start` changes.
    fn left_window_clear(&self, from: u32, edit_start: u32) -> bool {
        let toks = self.tokens_from(from, edit_start, 64);
        toks.len() >= lookahead_need(&toks) + FUSE
    }

    /// Where the text handed to the parser may end when the re-parsed run stops at
    /// `stop`: after the tokens the lookahead can read, or at the chunk's end.
    fn lookahead_end(&self, stop: u32, chunk_end: u32) -> u32 {
        let toks = self.tokens_from(stop, chunk_end, 64);
        let need = lookahead_need(&toks);
        if toks.len() >= need {
            toks[need - 1].end
        } else {
            chunk_end
        }
    }

    /// Up to `want` tokens (comments skipped) lexed from `start`, a token boundary, not
    /// past `limit`. Lexes a growing window; when the window ends before `limit`, only
    /// tokens followed by whitespace inside it are kept, since the cut may have split or
    /// shortened the last ones (`1.5e-` `3`).
    fn tokens_from(&self, start: u32, limit: u32, want: usize) -> Vec<Token> {
        let mut window = 512u32;
        loop {
            let end = self.floor_char(start.saturating_add(window).min(limit));
            let text = self.slice(start, end);
            let mut toks = Vec::new();
            lexer::lex_into(&text, start, &mut toks);
            toks.retain(|t| t.kind != TokenKind::Comment);
            if end < limit {
                let safe = text.rfind(|c: char| c.is_ascii_whitespace()).map_or(0, |i| i as u32);
                toks.retain(|t| t.end <= start + safe);
            }
            if toks.len() >= want || end >= limit {
                toks.truncate(want);
                return toks;
            }
            window = window.saturating_mul(4);
        }
    }

    // ----- rope helpers -----

    fn slice(&self, start: u32, end: u32) -> Cow<'_, str> {
        self.rope.byte_slice(start as usize..end as usize).into()
    }

    fn is_char_boundary(&self, b: usize) -> bool {
        b == self.rope.len_bytes() || self.floor_char(b as u32) as usize == b
    }

    fn floor_char(&self, b: u32) -> u32 {
        self.rope.char_to_byte(self.rope.byte_to_char(b as usize)) as u32
    }

    /// The start of the line holding `pos`; lines end at `\n` only (the lexer's notion),
    /// while the rope's line index also breaks at `\r` and Unicode separators.
    fn line_start(&self, pos: u32) -> u32 {
        let mut line = self.rope.byte_to_line(pos as usize);
        loop {
            let s = self.rope.line_to_byte(line);
            if s == 0 || self.rope.byte(s - 1) == b'\n' {
                return s as u32;
            }
            line -= 1;
        }
    }

    /// Whether a `// -----` marker overlaps or touches `[start, end]`.
    fn marker_near(&self, start: usize, end: usize) -> bool {
        let n = SPLIT_MARKER.len();
        let lo = self.floor_char(start.saturating_sub(n) as u32);
        let hi = (end + n).min(self.rope.len_bytes());
        let hi = match self.floor_char(hi as u32) {
            f if f as usize == hi => f,
            _ => self.rope.char_to_byte(self.rope.byte_to_char(hi) + 1) as u32,
        };
        self.slice(lo, hi).contains(SPLIT_MARKER)
    }
}

impl Edit {
    /// Where a new position at or after the inserted text was in the old text.
    fn moved_back(self, p: u32) -> u32 {
        (p as i64 - self.delta) as u32
    }
}

/// The path to the innermost block whose body strictly contains the edit: descends into
/// closed regions with a single unlabeled block (others are re-parsed whole). The ops on
/// the path may have errors of their own: their parse before and after the region does
/// not depend on what the region holds.
fn descend(chunk: &Chunk, edit: Edit) -> Vec<Frame> {
    let mut path = Vec::new();
    let (mut kids, mut base) = (&chunk.top, chunk.span.start);
    loop {
        let i = kids.partition_point(|c| base + c.offset <= edit.start);
        let Some(i) = i.checked_sub(1) else { break };
        let c = kids.at(i);
        let op_start = base + c.offset;
        let found = c.op.regions.iter().enumerate().find_map(|(ri, r)| {
            let [block] = &r.blocks[..] else { return None };
            // A region left open (reported at its `{`) ends wherever the text did.
            let open_brace = Span::new(r.span.start, r.span.start + 1);
            if block.label.is_some()
                || r.span.len() < 2
                || c.op.errors.iter().any(|e| e.span == open_brace)
            {
                return None;
            }
            let body = Span::new(op_start + r.span.start + 1, op_start + r.span.end - 1);
            (body.start <= edit.start && edit.end <= body.end).then_some((ri, body, block))
        });
        let Some((region, body, block)) = found else { break };
        // After an error, the region may have been read by error recovery, which peeks
        // inside to decide.
        let fixed_entry = c.op.errors.is_empty() && region_entry_fixed(c.op, block);
        path.push(Frame { child: i, region, op_start, body, fixed_entry });
        (kids, base) = (&block.ops, op_start);
    }
    path
}

/// Whether the parser reads the `{` of this region as a region without looking at what
/// follows. Only the generic scanner for unknown custom ops peeks at the first
/// statement to tell a region from an attribute dictionary (unless block arguments
/// precede it); these names are the ones `custom_body` parses by their grammar.
fn region_entry_fixed(op: &Op, block: &Block) -> bool {
    op.generic
        || !block.args.is_empty()
        || matches!(
            &*op.name.text,
            "module"
                | "builtin.module"
                | "func.func"
                | "sdy.manual_computation"
                | "sdy.named_computation"
                | "stablehlo.while"
        )
}

/// The block at the end of a non-empty path.
fn block_at<'a>(chunk: &'a Chunk, path: &[Frame]) -> &'a Children {
    let mut kids = &chunk.top;
    for f in path {
        kids = &kids.at(f.child).op.regions[f.region].blocks[0].ops;
    }
    kids
}

/// How many tokens past a statement boundary the parser may read: a fixed few, or a
/// whole result list `%a, %b:2, ...` and the token after it (`looks_like_results`).
fn lookahead_need(toks: &[Token]) -> usize {
    let kind = |i: usize| toks.get(i).map(|t| t.kind);
    let mut n = 0;
    while kind(n) == Some(TokenKind::ValueId) {
        n += 1;
        if kind(n) == Some(TokenKind::Colon) && kind(n + 1) == Some(TokenKind::Integer) {
            n += 2;
        }
        if kind(n) != Some(TokenKind::Comma) {
            break;
        }
        n += 1;
    }
    LOOKAHEAD.max(n + 1)
}

/// The far-reaching ops of a chunk, relative to its start.
fn far_table(chunk: &Chunk) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    collect_far(&chunk.top, 0, &mut out);
    out
}

/// Appends, in order of position, the ops among `kids` (at any depth) that have an
/// error past their own end: `(start, end of the furthest error)`, offset by `base`.
fn collect_far<'a>(
    kids: impl IntoIterator<Item = ChildRef<'a>>,
    base: u32,
    out: &mut Vec<(u32, u32)>,
) {
    for c in kids {
        let start = base + c.offset;
        let reach = c.op.errors.iter().map(|e| e.span.end).max().unwrap_or(0);
        if reach > c.op.len {
            out.push((start, start + reach));
        }
        for b in c.op.regions.iter().flat_map(|r| &r.blocks) {
            collect_far(&b.ops, start, out);
        }
    }
}

fn child_containing(kids: &Children, base: u32, offset: u32) -> Option<ChildRef<'_>> {
    let i = kids.partition_point(|c| base + c.offset <= offset).checked_sub(1)?;
    let c = kids.at(i);
    (offset < base + c.offset + c.op.len).then_some(c)
}

fn chunk_spans(text: &str, split: bool) -> Vec<Span> {
    if split {
        split_chunks(text)
    } else {
        vec![Span::new(0, text.len() as u32)]
    }
}

fn parse_chunk(text: &str, span: Span) -> Chunk {
    parse_chunk_text(span.text(text), span)
}

/// Parses a chunk given its own text.
fn parse_chunk_text(text: &str, span: Span) -> Chunk {
    Chunk { span, top: parser::parse_top_level(text).into() }
}
