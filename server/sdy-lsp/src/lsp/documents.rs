//! Open documents: text, syntax tree, line index, and the newest analysis.
//!
//! Edits are applied synchronously by the notification handlers, in the order the client
//! sent them, so a request always sees every edit sent before it. Each change bumps the
//! document's revision; the analysis worker works from snapshots and tags its results
//! with the revision they belong to.

use super::analysis::{Analyzed, ChunkResult};
use super::position::{LineIndex, PositionEncoding, Text};
use ropey::Rope;
use sdy_syntax::document::Document;
use sdy_syntax::tree::Chunk;
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;
use tower_lsp::lsp_types::{TextDocumentContentChangeEvent, Url};

/// Newest analysis of a document (`None` before the first one).
pub type AnalyzedSlot = Option<Arc<Analyzed>>;

pub struct OpenDocument {
    /// Tells a reopened document from the closed one it replaces.
    pub id: u64,
    /// The client's version.
    pub version: i32,
    /// Bumped by every change; shared with the worker so that it can see, without
    /// taking the lock, that its snapshot is outdated.
    pub rev: Arc<AtomicU64>,
    pub doc: Document,
    pub lines: Arc<LineIndex>,
    /// Chunk results the next analysis may reuse.
    pub cache: Vec<Arc<ChunkResult>>,
    /// The text as opened, until the first analysis takes it (it then needs no copy of
    /// its own).
    pub opened: Option<String>,
    /// The newest analysis, for requests to wait on.
    pub analyzed: watch::Sender<AnalyzedSlot>,
    /// The edits applied to the text (shared with the worker's snapshots).
    pub log: Arc<EditLog>,
}

/// The newest edits applied to a document's text, so that the worker can tell what
/// changed between two revisions without comparing their texts (100 MB in a big export).
#[derive(Clone, Debug, Default)]
pub struct EditLog {
    /// The count of the first edit kept.
    first: u64,
    /// Per edit, in the text it applied to: start, old end, new length (bytes).
    edits: VecDeque<(u32, u32, u32)>,
}

impl EditLog {
    /// Edits kept (older revisions are compared by their text).
    const KEEP: usize = 1024;

    /// How many edits the text has seen: a revision's mark.
    pub fn count(&self) -> u64 {
        self.first + self.edits.len() as u64
    }

    fn push(&mut self, start: usize, end: usize, new_len: usize) {
        if self.edits.len() == EditLog::KEEP {
            self.edits.pop_front();
            self.first += 1;
        }
        self.edits.push_back((start as u32, end as u32, new_len as u32));
    }

    /// Forgets the edits: the text was replaced whole (revisions before are unknown).
    fn reset(&mut self) {
        self.first = self.count() + 1;
        self.edits.clear();
    }

    /// What the edits after mark `since` changed, in the current text: the range that
    /// holds every byte they wrote (`None`: none) and the change of length; `None` when
    /// the log does not reach back that far.
    pub fn changed_since(&self, since: u64) -> Option<(Option<(u64, u64)>, i64)> {
        let skip = since.checked_sub(self.first)?;
        if since > self.count() {
            return None;
        }
        let mut dirty: Option<(u64, u64)> = None;
        let mut total = 0i64;
        for &(s, e, n) in self.edits.iter().skip(skip as usize) {
            let (s, e, n) = (s as u64, e as u64, n as u64);
            let delta = n as i64 - (e - s) as i64;
            total += delta;
            let moved = |p: u64| (p as i64 + delta) as u64;
            dirty = Some(match dirty {
                None => (s, s + n),
                // One range holds both: from the first start to the last end (the old
                // range's end moves with the edit unless the edit comes after it).
                Some((lo, hi)) if s > hi => (lo, s + n),
                Some((lo, hi)) => (lo.min(s), moved(hi.max(e))),
            });
        }
        Some((dirty, total))
    }
}

/// What the worker needs to analyse a revision.
pub struct Job {
    pub uri: Url,
    pub id: u64,
    pub rev: u64,
    pub version: i32,
    pub current_rev: Arc<AtomicU64>,
    pub rope: Rope,
    /// The document's edits up to this revision.
    pub log: Arc<EditLog>,
    pub lines: Arc<LineIndex>,
    pub chunks: Vec<Chunk>,
    pub cache: Vec<Arc<ChunkResult>>,
    /// The whole text, when this is the revision as opened.
    pub text: Option<String>,
}

impl Job {
    /// Whether the document changed since the snapshot.
    pub fn outdated(&self) -> bool {
        self.current_rev.load(Ordering::SeqCst) != self.rev
    }
}

#[derive(Default)]
pub struct Documents {
    map: Mutex<HashMap<Url, OpenDocument>>,
    next_id: AtomicU64,
}

/// Why a change could not be applied as it is.
#[derive(Debug)]
pub enum ChangeError {
    NotOpen,
    /// Applying an edit panicked; the document was re-parsed from its text.
    Recovered(String),
}

impl Documents {
    fn lock(&self) -> MutexGuard<'_, HashMap<Url, OpenDocument>> {
        // A panic while the lock was held has been logged; the map itself is sound.
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn open(&self, uri: Url, version: i32, text: String) {
        // A big text's line index is built on another core while it is parsed.
        let (doc, lines) = if text.len() >= 1 << 20 {
            std::thread::scope(|s| {
                let lines = s.spawn(|| LineIndex::new(&text));
                let doc = Document::new(&text, true);
                (doc, lines.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            })
        } else {
            (Document::new(&text, true), LineIndex::new(&text))
        };
        let lines = Arc::new(lines);
        let (analyzed, _) = watch::channel(None);
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let entry = OpenDocument {
            id,
            version,
            rev: Arc::new(AtomicU64::new(1)),
            doc,
            lines,
            cache: Vec::new(),
            opened: Some(text),
            analyzed,
            log: Arc::new(EditLog::default()),
        };
        self.lock().insert(uri, entry);
    }

    pub fn close(&self, uri: &Url) -> bool {
        self.lock().remove(uri).is_some()
    }

    /// Applies the content changes of one `didChange`, in order.
    pub fn change(
        &self,
        uri: &Url,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        encoding: PositionEncoding,
    ) -> Result<(), ChangeError> {
        let mut map = self.lock();
        let entry = map.get_mut(uri).ok_or(ChangeError::NotOpen)?;
        entry.version = version;
        entry.opened = None;
        entry.rev.fetch_add(1, Ordering::SeqCst);
        let mut recovered = None;
        for change in changes {
            let Some(range) = change.range else {
                Arc::make_mut(&mut entry.log).reset();
                entry.doc = Document::new(&change.text, true);
                entry.lines = Arc::new(LineIndex::new(&change.text));
                continue;
            };
            let span = Text::new(entry.doc.text(), &entry.lines, encoding).span(range);
            let (start, end) = (span.start as usize, span.end as usize);
            Arc::make_mut(&mut entry.log).push(start, end, change.text.len());
            // The range is clamped to the text and to char boundaries, so the rope edit
            // inside cannot fail; a panic can only come from updating the tree, after it.
            let applied = catch_unwind(AssertUnwindSafe(|| {
                entry.doc.apply_edit(start..end, &change.text);
            }));
            Arc::make_mut(&mut entry.lines).apply_edit(entry.doc.text(), start, end, &change.text);
            if let Err(payload) = applied {
                let text = entry.doc.text().to_string();
                entry.doc = Document::new(&text, true);
                recovered = Some(super::panic::message(&*payload));
            }
        }
        recovered.map_or(Ok(()), |m| Err(ChangeError::Recovered(m)))
    }

    /// A snapshot of the current revision for the worker. The worker takes the reusable
    /// chunk results and the previous analysis is dropped, so that results the new
    /// revision cannot reuse are freed before it is analysed (requests of older revisions
    /// hold their own reference, and new ones wait for the new revision anyway).
    pub fn job(&self, uri: &Url) -> Option<Job> {
        let mut map = self.lock();
        let e = map.get_mut(uri)?;
        let rev = e.rev.load(Ordering::SeqCst);
        if e.analyzed.borrow().as_ref().is_some_and(|a| a.rev == rev) {
            // Already analysed: the worker took this revision before its request came.
            return None;
        }
        e.analyzed.send_if_modified(|slot| {
            let outdated = slot.as_ref().is_some_and(|a| a.rev != rev);
            if outdated {
                *slot = None;
            }
            false // waiters look for a newer revision: nothing to wake them for
        });
        Some(Job {
            uri: uri.clone(),
            id: e.id,
            rev,
            version: e.version,
            current_rev: e.rev.clone(),
            rope: e.doc.text().clone(),
            log: e.log.clone(),
            lines: e.lines.clone(),
            chunks: e.doc.chunks().to_vec(),
            cache: std::mem::take(&mut e.cache),
            text: e.opened.take(),
        })
    }

    /// Stores the worker's results: a complete analysis (which becomes the document's
    /// newest), or the chunks finished before it was abandoned for a newer revision
    /// (kept for reuse only). Returns whether the analysed revision is still current.
    pub fn store(
        &self,
        job: &Job,
        analyzed: Option<Arc<Analyzed>>,
        partial: Vec<Arc<ChunkResult>>,
    ) -> bool {
        let mut map = self.lock();
        let Some(e) = map.get_mut(&job.uri).filter(|e| e.id == job.id) else { return false };
        match analyzed {
            Some(a) => {
                e.cache = a.results().cloned().collect();
                e.analyzed.send_replace(Some(a));
            }
            None => {
                // What was done, then older results (bounded), each once.
                let mut cache: Vec<Arc<ChunkResult>> = Vec::new();
                let bound = 2 * job.chunks.len() + 8;
                for r in partial.into_iter().chain(std::mem::take(&mut e.cache)) {
                    if cache.len() < bound && !cache.iter().any(|c| Arc::ptr_eq(c, &r)) {
                        cache.push(r);
                    }
                }
                e.cache = cache;
            }
        }
        e.rev.load(Ordering::SeqCst) == job.rev
    }

    /// The current revision and a receiver of the analyses, for a request.
    pub fn subscribe(&self, uri: &Url) -> Option<(u64, watch::Receiver<AnalyzedSlot>)> {
        let map = self.lock();
        let e = map.get(uri)?;
        Some((e.rev.load(Ordering::SeqCst), e.analyzed.subscribe()))
    }

    /// The current text of the open document `uri`.
    pub fn text(&self, uri: &Url) -> Option<String> {
        self.lock().get(uri).map(|e| e.doc.text().to_string())
    }

    /// Whether `rev` is the current revision of the open document `uri`.
    pub fn is_current(&self, uri: &Url, rev: u64) -> bool {
        self.lock().get(uri).is_some_and(|e| e.rev.load(Ordering::SeqCst) == rev)
    }
}

#[cfg(test)]
mod tests {
    use super::EditLog;

    /// The range the log reports holds every byte the edits wrote: the text outside it
    /// is the old text, in place before it and moved by the change of length after it.
    #[test]
    fn the_log_bounds_what_edits_changed() {
        let mut seed = 11u64;
        let mut rnd = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m.max(1) as u64) as usize
        };
        for round in 0..300 {
            let old: Vec<u8> = (0..200).map(|i| (i % 251) as u8).collect();
            let mut text = old.clone();
            let mut log = EditLog::default();
            // Some edits before the mark, which the range must not include.
            for _ in 0..rnd(3) {
                let s = rnd(text.len());
                log.push(s, s, 0);
            }
            let mark = log.count();
            for _ in 0..1 + rnd(5) {
                let s = rnd(text.len() + 1);
                let e = s + rnd(text.len() - s + 1).min(4);
                let n = rnd(4);
                let new: Vec<u8> = (0..n).map(|_| 250u8).collect();
                text.splice(s..e, new);
                log.push(s, e, n);
            }
            let (dirty, total) = log.changed_since(mark).expect("logged");
            assert_eq!(text.len() as i64, old.len() as i64 + total, "round {round}");
            let (lo, hi) = dirty.expect("edits");
            let (lo, hi) = (lo as usize, hi as usize);
            assert_eq!(text[..lo], old[..lo], "round {round}");
            let old_hi = (hi as i64 - total) as usize;
            assert_eq!(text[hi..], old[old_hi..], "round {round}");
        }
        let mut log = EditLog::default();
        log.push(0, 0, 1);
        let mark = log.count();
        log.reset();
        assert!(log.changed_since(mark).is_none());
        assert_eq!(log.changed_since(log.count()), Some((None, 0)));
    }
}
