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
use std::collections::HashMap;
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
}

/// What the worker needs to analyse a revision.
pub struct Job {
    pub uri: Url,
    pub id: u64,
    pub rev: u64,
    pub version: i32,
    pub current_rev: Arc<AtomicU64>,
    pub rope: Rope,
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
                entry.doc = Document::new(&change.text, true);
                entry.lines = Arc::new(LineIndex::new(&change.text));
                continue;
            };
            let span = Text::new(entry.doc.text(), &entry.lines, encoding).span(range);
            let (start, end) = (span.start as usize, span.end as usize);
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
