//! The analysis worker: one thread, off tower-lsp's I/O task, that turns document
//! revisions into [`Analyzed`] results and diagnostics.
//!
//! * **Coalescing.** The queue holds documents, not revisions: the worker always takes a
//!   snapshot of a document's newest revision, so revisions superseded while waiting are
//!   never analysed.
//! * **Debounce only while busy.** An edit to a document with no analysis pending or
//!   running is analysed at once (keystroke → diagnostics is then the analysis cost);
//!   an edit that arrives while one is pending or running (a burst of typing) sets the
//!   next start to `debounce` after it, so a burst costs one analysis at its end. After
//!   `didOpen` the analysis starts at once.
//! * **Cancellation.** Before each chunk the worker checks whether the document changed;
//!   if so it stops, keeps the chunks it finished for reuse, and moves on to the newest
//!   revision. Results of an outdated revision are never published.
//! * **Incremental.** A chunk that changed is updated from the result of its previous
//!   version (`ChunkResult::update`): only what the edit can affect is redone.
//! * **Panics** in the analysis of a chunk are caught and logged; the chunk has no
//!   result (and no diagnostics) until it changes, the rest of the document is analysed
//!   as usual.

use super::analysis::{chunk_text, reuse, Analyzed, AnalyzedChunk, ChunkResult};
use super::capabilities::ClientConfig;
use super::diagnostics;
use super::documents::{Documents, Job};
use super::outgoing::{Outbox, Outgoing};
use super::panic::guard;
use sdy_syntax::tree::Chunk;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tower_lsp::lsp_types::Url;

/// How changed chunks were analysed, process-wide: updated incrementally, or afresh
/// (tests check that edits take the incremental path).
pub static UPDATES: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

#[derive(Default)]
struct Queue {
    /// Documents to analyse, with the time their analysis may start.
    due: HashMap<Url, Instant>,
    /// The document being analysed.
    busy: Option<Url>,
    stop: bool,
}

/// What asks for an analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    Open,
    Change,
}

pub struct Scheduler {
    queue: Mutex<Queue>,
    wake: Condvar,
    debounce_ms: AtomicU64,
}

impl Scheduler {
    pub fn new(debounce: Duration) -> Scheduler {
        Scheduler {
            queue: Mutex::default(),
            wake: Condvar::new(),
            debounce_ms: AtomicU64::new(debounce.as_millis() as u64),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_debounce(&self, d: Duration) {
        self.debounce_ms.store(d.as_millis() as u64, Ordering::SeqCst);
    }

    /// Asks for an analysis of `uri`'s newest revision.
    pub fn request(&self, uri: &Url, trigger: Trigger) {
        let now = Instant::now();
        let mut q = self.lock();
        let busy = q.busy.as_ref() == Some(uri) || q.due.contains_key(uri);
        let at = if trigger == Trigger::Change && busy {
            now + Duration::from_millis(self.debounce_ms.load(Ordering::SeqCst))
        } else {
            now
        };
        q.due.insert(uri.clone(), at);
        drop(q);
        self.wake.notify_all();
    }

    /// Drops a pending analysis (the document was closed).
    pub fn forget(&self, uri: &Url) {
        self.lock().due.remove(uri);
    }

    pub fn stop(&self) {
        self.lock().stop = true;
        self.wake.notify_all();
    }

    /// The worker is done with its document: edits from now on find it idle. Called
    /// before the diagnostics go out, so an edit the client sends in reaction to them is
    /// not taken for part of a burst.
    fn done(&self) {
        self.lock().busy = None;
    }

    /// Waits for the next document whose analysis is due; `None` once stopped.
    fn next(&self) -> Option<Url> {
        let mut q = self.lock();
        q.busy = None;
        loop {
            if q.stop {
                return None;
            }
            let now = Instant::now();
            let first = q.due.iter().min_by_key(|(_, &t)| t).map(|(u, &t)| (u.clone(), t));
            match first {
                Some((uri, t)) if t <= now => {
                    q.due.remove(&uri);
                    q.busy = Some(uri.clone());
                    return Some(uri);
                }
                Some((_, t)) => {
                    q = self.wake.wait_timeout(q, t - now).unwrap_or_else(|e| e.into_inner()).0;
                }
                None => q = self.wake.wait(q).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

/// What the worker shares with the handlers.
pub struct WorkerCtx {
    pub docs: Arc<Documents>,
    pub sched: Arc<Scheduler>,
    pub out: Outbox,
    pub config: Arc<OnceLock<ClientConfig>>,
    pub test_hooks: bool,
}

/// Starts the worker thread; it ends after [`Scheduler::stop`].
pub fn start(cx: WorkerCtx) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name("sdy-analysis".into()).spawn(move || {
        while let Some(uri) = cx.sched.next() {
            if let Some(job) = cx.docs.job(&uri) {
                run(&cx, job);
            }
        }
    })
}

/// Analyses one revision: reuses unchanged chunks, updates or analyses the others,
/// publishes.
fn run(cx: &WorkerCtx, mut job: Job) {
    let t0 = Instant::now();
    let cpu0 = cx.config.get().is_some_and(|c| c.trace_timing).then(crate::cpu::process).flatten();
    // Results this revision can reuse as they are; the others are the bases the changed
    // chunks are updated from (freed when none takes them).
    let mut bases = std::mem::take(&mut job.cache);
    let reused: Vec<Option<Arc<ChunkResult>>> =
        job.chunks.iter().map(|c| reuse(&bases, c)).collect();
    bases.retain(|b| !reused.iter().flatten().any(|r| Arc::ptr_eq(r, b)));
    let mut chunks = Vec::with_capacity(job.chunks.len());
    let mut analysed = 0;
    let mut how = Vec::new();
    // What the updates replaced: freed after the diagnostics are out.
    let mut garbage = Vec::new();
    // Chunks analysed without what updates need (`ChunkResult::quick`): given it after
    // the diagnostics are out, before anything else sees them.
    let mut quick = Vec::new();
    for (i, reused_result) in reused.iter().enumerate() {
        let result = match reused_result {
            Some(r) => Some(r.clone()),
            None => {
                if job.outdated() {
                    // Keep what is done, and what was to be reused, for the next revision.
                    keep_state(&mut chunks, &quick, &job.chunks);
                    let done = chunks.iter().filter_map(|c: &AnalyzedChunk| c.result.clone());
                    let keep = done.chain(reused.into_iter().flatten()).chain(bases);
                    cx.docs.store(&job, None, keep.collect());
                    return;
                }
                analysed += 1;
                let span = job.chunks[i].span;
                let what =
                    format!("the analysis of {} (bytes {}..{})", job.uri, span.start, span.end);
                let base = take_base(&mut bases, &job.chunks[i], job.chunks.len());
                // The update keeps the tree: this revision's copy is handed over.
                let owned = base
                    .is_some()
                    .then(|| Chunk { span, top: std::mem::take(&mut job.chunks[i].top) });
                let chunk = &job.chunks[i];
                let r = guard(&what, &cx.out, || match (base, owned) {
                    (Some(base), Some(owned)) => {
                        let (r, stats, old) =
                            ChunkResult::update(base, &job.rope, &job.log, owned, cx.test_hooks);
                        garbage.push(old);
                        UPDATES[stats.fresh.is_some() as usize].fetch_add(1, Ordering::Relaxed);
                        how.push(match stats.fresh {
                            Some(why) => format!("afresh ({why})"),
                            None => format!(
                                "incrementally ({} ops for {}, {} rechecked)",
                                stats.replaced.1, stats.replaced.0, stats.rechecked
                            ),
                        });
                        r
                    }
                    _ => {
                        // The text as opened is this chunk's when it is the only one.
                        let text = match job.text.take() {
                            Some(text) if chunk.span.len() as usize == text.len() => text,
                            _ => chunk_text(&job.rope, chunk),
                        };
                        quick.push(chunks.len());
                        ChunkResult::quick(text, chunk, cx.test_hooks).taken_from(
                            &job.rope,
                            chunk.span,
                            job.log.count(),
                        )
                    }
                });
                r.ok().map(Arc::new)
            }
        };
        chunks.push(AnalyzedChunk { span: job.chunks[i].span, result });
    }
    let mut analyzed = Analyzed {
        rev: job.rev,
        version: job.version,
        rope: job.rope.clone(),
        lines: job.lines.clone(),
        chunks,
    };
    let t_analysis = t0.elapsed();
    let config = cx.config.get().cloned().unwrap_or_default();
    let publish = |analyzed: &Analyzed| {
        let items = guard("converting diagnostics", &cx.out, || {
            diagnostics::to_lsp(analyzed, &job.uri, &config)
        });
        if let Ok(items) = items {
            let uri = job.uri.clone();
            cx.out.send(Outgoing::Diagnostics { uri, version: job.version, rev: job.rev, items });
        }
    };
    // The diagnostics of quick results go out first (the publisher drops them if the
    // document moved on); requests wait for the stored analysis.
    let early = !quick.is_empty() && !job.outdated();
    let mut queued = t_analysis;
    if early {
        cx.sched.done();
        publish(&analyzed);
        queued = t0.elapsed();
    }
    keep_state(&mut analyzed.chunks, &quick, &job.chunks);
    let t_state = t0.elapsed();
    let analyzed = Arc::new(analyzed);
    let current = cx.docs.store(&job, Some(analyzed.clone()), Vec::new());
    if !early {
        cx.sched.done();
    }
    if !current && !early {
        drop_later(Box::new((bases, garbage)));
        return; // outdated: requests sent against it may use it; never published
    }
    if !early {
        publish(&analyzed);
        queued = t0.elapsed();
    }
    if config.trace_timing {
        let cpu = match (cpu0, crate::cpu::process()) {
            (Some(a), Some(b)) => format!(" (process cpu {:.1} ms)", (b - a).as_secs_f64() * 1e3),
            _ => String::new(),
        };
        eprintln!(
            "sdy-lsp: {} rev {}: analysed {analysed} of {} chunks in {:.1} ms{}, queued diagnostics at {:.1} ms{}{cpu}, {}",
            job.uri,
            job.rev,
            job.chunks.len(),
            t_analysis.as_secs_f64() * 1e3,
            if how.is_empty() { String::new() } else { format!(" ({})", how.join(", ")) },
            queued.as_secs_f64() * 1e3,
            if quick.is_empty() {
                String::new()
            } else {
                format!(", incremental state kept at {:.1} ms", t_state.as_secs_f64() * 1e3)
            },
            crate::cpu::memory()
        );
    }
    // Unused bases and what the updates replaced are freed on another thread: walking
    // big child lists takes a few ms, which the next edit would otherwise wait for.
    drop_later(Box::new((bases, garbage)));
}

/// Gives the quick results among `chunks` (indices `quick`) what updates need.
fn keep_state(chunks: &mut [AnalyzedChunk], quick: &[usize], of: &[Chunk]) {
    for &i in quick {
        // Nothing else holds them yet.
        if let Some(r) = chunks[i].result.as_mut().and_then(Arc::get_mut) {
            r.keep_state(&of[i]);
        }
    }
}

/// Frees `x` on a background thread (at once if it cannot be started).
fn drop_later(x: Box<dyn Send>) {
    static DROPPER: Mutex<Option<std::sync::mpsc::Sender<Box<dyn Send>>>> = Mutex::new(None);
    let mut tx = DROPPER.lock().unwrap_or_else(|e| e.into_inner());
    if tx.is_none() {
        let (send, recv) = std::sync::mpsc::channel::<Box<dyn Send>>();
        let spawned = std::thread::Builder::new()
            .name("sdy-drop".into())
            .spawn(move || recv.into_iter().for_each(drop));
        if spawned.is_ok() {
            *tx = Some(send);
        }
    }
    if let Some(Err(e)) = tx.as_ref().map(|t| t.send(x)) {
        drop(e.0);
    }
}

/// The result the analysis of changed `chunk` starts from: one sharing a statement with
/// it, or the only one of a one-chunk document.
fn take_base(
    bases: &mut Vec<Arc<ChunkResult>>,
    chunk: &Chunk,
    chunks: usize,
) -> Option<Arc<ChunkResult>> {
    let i = bases
        .iter()
        .position(|b| b.shares_with(chunk))
        .or_else(|| (chunks == 1 && bases.len() == 1).then_some(0))?;
    Some(bases.swap_remove(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debounce_only_while_busy() {
        let s = Scheduler::new(Duration::from_secs(60));
        let a = Url::parse("file:///a.mlir").unwrap();
        let b = Url::parse("file:///b.mlir").unwrap();
        let soon = || Instant::now() + Duration::from_secs(1);
        // Idle: at once.
        s.request(&a, Trigger::Change);
        assert!(s.lock().due[&a] < soon());
        assert_eq!(s.next(), Some(a.clone()));
        // Being analysed: the next edit waits for quiet; other documents do not.
        s.request(&a, Trigger::Change);
        assert!(s.lock().due[&a] > soon());
        s.request(&b, Trigger::Change);
        assert!(s.lock().due[&b] < soon());
        // Pending and edited again: still waiting; an open is never delayed.
        s.request(&b, Trigger::Change);
        assert!(s.lock().due[&b] > soon());
        s.request(&b, Trigger::Open);
        assert!(s.lock().due[&b] < soon());
        // Done with `a` (before its diagnostics go out): idle again.
        s.done();
        s.forget(&a);
        s.request(&a, Trigger::Change);
        assert!(s.lock().due[&a] < soon());
        s.stop();
        assert_eq!(s.next(), None);
    }
}
