//! `textDocument/semanticTokens/full`, `.../full/delta` and `.../range`.
//!
//! The analysis core gives each chunk's tokens as chunk-relative byte ranges
//! (`sdy_analysis::ide::tokens`, where the legend's mapping is documented); here they
//! become the protocol's delta-encoded `(line, start, length)` in the negotiated
//! encoding, chunk by chunk, with the `// -----` markers between chunks as comments.
//!
//! Positions: the first token of a chunk (or range) is placed through the rope; from
//! there the chunk's text is scanned forward once, counting lines and UTF-16 (or UTF-8)
//! units, so encoding costs one pass over the text covered.
//!
//! Deltas: the last full result of each document is kept with its `resultId`
//! ([`TokenCache`]); a delta request against it computes the full result again and
//! sends the one edit that turns the old data into the new (common prefix and suffix
//! kept). A request against another id gets a full result.

use super::analysis::Analyzed;
use super::capabilities::ClientConfig;
use super::position::PositionEncoding;
use sdy_analysis::ide::tokens::{self, SemToken, TokenType};
use sdy_syntax::Span;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tower_lsp::lsp_types::{
    Range, SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokens,
    SemanticTokensDelta, SemanticTokensEdit, SemanticTokensFullDeltaResult,
    SemanticTokensFullOptions, SemanticTokensLegend, SemanticTokensOptions,
    SemanticTokensRangeResult, SemanticTokensResult, SemanticTokensServerCapabilities, Url,
};

/// The legend: token types and modifiers in the core's order.
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TokenType::ALL.iter().map(|t| SemanticTokenType::new(t.name())).collect(),
        token_modifiers: tokens::MODIFIERS.iter().map(|m| SemanticTokenModifier::new(m)).collect(),
    }
}

/// The capability: full (with deltas) and range.
pub fn capability() -> SemanticTokensServerCapabilities {
    SemanticTokensServerCapabilities::SemanticTokensOptions(SemanticTokensOptions {
        legend: legend(),
        range: Some(true),
        full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
        ..Default::default()
    })
}

/// A result sent: its id and data.
type Sent = (String, Arc<Vec<SemanticToken>>);

/// The last full result sent for each document.
#[derive(Default)]
pub struct TokenCache {
    map: Mutex<HashMap<Url, Sent>>,
    next_id: AtomicU64,
}

impl TokenCache {
    /// Keeps `data` as the last result for `uri`; its result id.
    fn store(&self, uri: &Url, data: Arc<Vec<SemanticToken>>) -> String {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed).to_string();
        self.lock().insert(uri.clone(), (id.clone(), data));
        id
    }

    /// The last result for `uri` if its id is `id`.
    fn previous(&self, uri: &Url, id: &str) -> Option<Arc<Vec<SemanticToken>>> {
        self.lock().get(uri).filter(|(i, _)| i == id).map(|(_, d)| d.clone())
    }

    /// Drops what is kept for a closed document.
    pub fn forget(&self, uri: &Url) {
        self.lock().remove(uri);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Url, Sent>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub fn full(
    analyzed: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    cache: &TokenCache,
) -> Option<SemanticTokensResult> {
    let data = Arc::new(encode(analyzed, config.encoding, None));
    let id = cache.store(uri, data.clone());
    let data = Arc::try_unwrap(data).unwrap_or_else(|d| (*d).clone());
    Some(SemanticTokensResult::Tokens(SemanticTokens { result_id: Some(id), data }))
}

pub fn full_delta(
    analyzed: &Analyzed,
    config: &ClientConfig,
    uri: &Url,
    previous_id: &str,
    cache: &TokenCache,
) -> Option<SemanticTokensFullDeltaResult> {
    let old = cache.previous(uri, previous_id);
    let new = Arc::new(encode(analyzed, config.encoding, None));
    let id = cache.store(uri, new.clone());
    let Some(old) = old else {
        let data = (*new).clone();
        return Some(SemanticTokensFullDeltaResult::Tokens(SemanticTokens {
            result_id: Some(id),
            data,
        }));
    };
    let edits = diff(&old, &new).into_iter().collect();
    Some(SemanticTokensFullDeltaResult::TokensDelta(SemanticTokensDelta {
        result_id: Some(id),
        edits,
    }))
}

pub fn range(
    analyzed: &Analyzed,
    config: &ClientConfig,
    range: Range,
) -> Option<SemanticTokensRangeResult> {
    let span = analyzed.text(config.encoding).span(range);
    let data = encode(analyzed, config.encoding, Some(span));
    Some(SemanticTokensRangeResult::Tokens(SemanticTokens { result_id: None, data }))
}

/// The one edit that turns `old` into `new` (indices count integers, 5 per token), or
/// none when they are equal.
pub fn diff(old: &[SemanticToken], new: &[SemanticToken]) -> Option<SemanticTokensEdit> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let rest = old.len().min(new.len()) - prefix;
    let suffix =
        old.iter().rev().zip(new.iter().rev()).take(rest).take_while(|(a, b)| a == b).count();
    if prefix == old.len() && old.len() == new.len() {
        return None;
    }
    Some(SemanticTokensEdit {
        start: 5 * prefix as u32,
        delete_count: 5 * (old.len() - prefix - suffix) as u32,
        data: Some(new[prefix..new.len() - suffix].to_vec()),
    })
}

/// The document's tokens (those intersecting `within`, an absolute byte range, when
/// given), delta-encoded.
pub fn encode(
    analyzed: &Analyzed,
    encoding: PositionEncoding,
    within: Option<Span>,
) -> Vec<SemanticToken> {
    let text = analyzed.text(encoding);
    let utf16 = encoding == PositionEncoding::Utf16;
    let doc = Span::new(0, analyzed.rope.len_bytes() as u32);
    let within = within.unwrap_or(doc);
    let mut out = Encoder::default();
    let mut prev_end = None;
    for c in &analyzed.chunks {
        // The `// -----` marker before the chunk belongs to no chunk.
        if let Some(end) = prev_end {
            let marker = Span::new(end, c.span.start);
            if !marker.is_empty() && overlaps(marker, within) {
                let p = text.position(marker.start);
                out.push(p.line, p.character, marker.len(), TokenType::Comment.index(), 0);
            }
        }
        prev_end = Some(c.span.end);
        let Some(result) = &c.result else { continue };
        let touched = within.is_empty() && c.span.touches(within.start);
        if !overlaps(c.span, within) && !touched {
            continue;
        }
        let base = c.span.start;
        let rel = Span::new(
            within.start.max(base) - base,
            within.end.min(c.span.end).max(within.start.max(base)) - base,
        );
        // Real modules have a token per ~13 bytes.
        out.data.reserve(rel.len() as usize / 12);
        let mut scan: Option<Scanner> = None;
        let src = result.src.as_bytes();
        let model = &result.analysis.model;
        tokens::semantic_tokens_into(model, &result.src, rel, |t: SemToken| {
            // The first token is placed through the rope, the others by scanning on.
            let scan = scan.get_or_insert_with(|| {
                let p = text.position(base + t.span.start);
                let at = t.span.start as usize;
                Scanner { src, at, line: p.line, col: p.character, utf16 }
            });
            scan.advance_to(t.span.start as usize);
            let len =
                scan.width(src.get(t.span.start as usize..t.span.end as usize).unwrap_or(&[]));
            if len > 0 {
                out.push(scan.line, scan.col, len, t.ty.index(), t.mods);
            }
        });
    }
    out.data
}

fn overlaps(a: Span, b: Span) -> bool {
    a.start < b.end && b.start < a.end
}

/// Walks a text forward, keeping the LSP line and column of its position.
struct Scanner<'a> {
    src: &'a [u8],
    at: usize,
    line: u32,
    col: u32,
    utf16: bool,
}

impl Scanner<'_> {
    /// The width of `bytes` in units: UTF-16 counts a character per lead byte (two for
    /// the 4-byte ones: a surrogate pair), UTF-8 every byte.
    fn width(&self, bytes: &[u8]) -> u32 {
        if !self.utf16 || bytes.is_ascii() {
            return bytes.len() as u32;
        }
        let unit = |b: u8| match b {
            0x80..=0xBF => 0,
            0xF0.. => 2,
            _ => 1,
        };
        bytes.iter().map(|&b| unit(b)).sum()
    }

    fn advance_to(&mut self, to: usize) {
        let to = to.min(self.src.len()).max(self.at);
        let gap = &self.src[self.at..to];
        // Lines break at `\n`, `\r\n` and a lone `\r`, as in position.rs.
        match gap.iter().rposition(|&b| b == b'\n' || b == b'\r') {
            None => self.col += self.width(gap),
            Some(last) => {
                for (i, &b) in gap[..=last].iter().enumerate() {
                    let lone_cr = b == b'\r' && self.src.get(self.at + i + 1) != Some(&b'\n');
                    if b == b'\n' || lone_cr {
                        self.line += 1;
                    }
                }
                self.col = self.width(&gap[last + 1..]);
            }
        }
        self.at = to;
    }
}

/// Delta-encodes absolute `(line, column)` tokens.
#[derive(Default)]
struct Encoder {
    data: Vec<SemanticToken>,
    line: u32,
    col: u32,
}

impl Encoder {
    fn push(&mut self, line: u32, col: u32, length: u32, token_type: u32, mods: u32) {
        if (line, col) < (self.line, self.col) {
            return; // out of order: cannot be encoded (never expected)
        }
        let delta_line = line - self.line;
        let delta_start = if delta_line == 0 { col - self.col } else { col };
        self.data.push(SemanticToken {
            delta_line,
            delta_start,
            length,
            token_type,
            token_modifiers_bitset: mods,
        });
        self.line = line;
        self.col = col;
    }
}
