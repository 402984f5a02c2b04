//! Propagation in the editor: when it runs, on what, and what is kept.
//!
//! * **Off the I/O task, out of typing's way.** Runs happen on one thread of their own
//!   ("sdy-propagation", at a lower scheduling priority than the analysis worker).
//!   While an edit waits for its diagnostics, a run pauses at the engine's pause points
//!   (the run's `Control`: between ops and passes), so that a keystroke's analysis
//!   does not share the CPU with it. Handlers only queue a request; the
//!   `sdy.propagate` command awaits the run's answer.
//! * **On the analysed text of a revision.** A run waits for the analysis of the
//!   document's current revision, then works per `// -----` chunk on a copy of what it
//!   needs (text, syntax, model), holding no reference to the analysis results, which
//!   the analysis worker may then update in place after an edit.
//! * **Tied to (uri, version, chunk).** A chunk's result belongs to the analysed chunk
//!   it ran on (by identity). A chunk that did not change since (the analysis reused
//!   it, wherever it moved) is *fresh*; a chunk that changed is *stale* until the next
//!   run, which re-runs only the chunks that are not fresh.
//! * **Superseded and cancelled runs stop at once.** A new request for a document
//!   replaces a pending one and makes a running one stop at its next pause point (the
//!   next op), as does closing the document; their callers are told. A run requested
//!   only by commands that were all cancelled (`$/cancelRequest` drops the command's
//!   future, so nobody waits for the answer) stops there too and frees what it built:
//!   the next run does not wait for it.
//! * **Modes** (`propagation.mode`): `off`, `onDemand` (commands and lenses only),
//!   `onSave` (also after each save), `onChange` (also after edits, debounced, and on
//!   open).
//!
//! Results feed the inlay hints (inlay_hints.rs), the code lenses (code_lens.rs), the
//! hover (propagation_hover.rs, through [`lookup`]) and diagnostics: the passes'
//! warnings (and an export failure of the cost view) are appended to the verifier's
//! diagnostics of the document by the publisher ([`Propagator::extra_diagnostics`]).
//! Each run also computes what its result costs (`sdy_analysis::cost`: the collectives
//! Shardy's export inserts, memory), shown by the hints, hovers, lenses and
//! `sdy.showCommunication`.

use super::analysis::{Analyzed, ChunkResult};
use super::capabilities::ClientConfig;
use super::diagnostics::{self, SOURCE};
use super::documents::Documents;
use super::outgoing::{Outbox, Outgoing};
use super::panic::guard;
use super::position::Text;
use super::settings::{self, Mode};
use sdy_analysis::cost::{self, Cost};
use sdy_analysis::diag::{Origin, Severity};
use sdy_analysis::propagation::editor::{self, hints, ChunkPropagation, Control, Flow, Strategy};
use sdy_analysis::ChunkAnalysis;
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tower_lsp::lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, InitializeParams, MessageType,
    NumberOrString, Url,
};
use tower_lsp::Client;

/// `sdy.propagate`: runs propagation on a document (`[{uri, strategy}]`).
pub const PROPAGATE: &str = "sdy.propagate";
/// `sdy.showPropagatedModule`: the text `opt` prints for the document.
pub const SHOW_MODULE: &str = "sdy.showPropagatedModule";
/// `sdy.showCommunication`: the propagated module with Shardy's explicit collectives.
pub const SHOW_COMMUNICATION: &str = "sdy.showCommunication";
/// How long `onChange` waits for quiet after an edit.
const CHANGE_DEBOUNCE: Duration = Duration::from_millis(400);
/// The longest a run pauses for one edit (in case its diagnostics never come).
const MAX_PAUSE: Duration = Duration::from_millis(300);

/// The propagation of one chunk.
pub struct ChunkRun {
    /// The analysed chunk it ran on: identity only (no strong reference).
    key: Weak<ChunkResult>,
    /// The chunk's place in the document when it ran.
    pub index: usize,
    pub span: Span,
    /// The chunk's text and analysis it ran on (the results' offsets refer to them).
    pub src: String,
    pub analysis: ChunkAnalysis,
    pub prop: ChunkPropagation,
    /// What the propagated module costs (`None` when propagation failed).
    pub cost: Option<Cost>,
    /// All its inlay hints, sorted by offset.
    pub hints: Vec<hints::Hint>,
    /// The document version it ran on.
    pub version: i32,
    pub elapsed: Duration,
}

impl ChunkRun {
    /// Whether this is the propagation of `r` (the chunk did not change since).
    pub fn is_for(&self, r: &ChunkResult) -> bool {
        std::ptr::eq(Weak::as_ptr(&self.key), r)
    }
}

/// The latest propagation of a document: one entry per chunk of the revision it ran on
/// (`None`: the run of that chunk panicked, or it has no analysis).
pub struct DocResult {
    pub uri: Url,
    pub rev: u64,
    pub version: i32,
    pub strategy: Strategy,
    pub chunks: Vec<Option<Arc<ChunkRun>>>,
    /// Chunks propagated by this run (the others were fresh results of earlier runs).
    pub computed: usize,
    pub elapsed: Duration,
    /// The CPU time of the run (its thread's), where the platform tells.
    pub cpu: Option<Duration>,
}

impl DocResult {
    /// The run for the chunk `i` of an analysed revision, and whether it is fresh.
    pub fn run_for(&self, a: &Analyzed, i: usize) -> Option<(&Arc<ChunkRun>, bool)> {
        let r = a.chunks.get(i)?.result.as_ref()?;
        if let Some(run) = self.chunks.iter().flatten().find(|c| c.is_for(r)) {
            return Some((run, true));
        }
        // Stale: the same place in a document with as many chunks, else by position.
        let same_shape = self.chunks.len() == a.chunks.len();
        let run = if same_shape {
            self.chunks.get(i)?.as_ref()?
        } else {
            let span = a.chunks[i].span;
            self.chunks.iter().flatten().find(|c| c.span.start == span.start)?
        };
        Some((run, false))
    }

    pub fn failed(&self) -> usize {
        self.chunks.iter().flatten().filter(|c| c.prop.failed).count()
    }

    /// A short account for the user.
    pub fn summary(&self) -> String {
        let n = self.chunks.len();
        let failed = self.failed();
        let mut s = format!(
            "sdy: propagated {n} chunk{} ({}) of version {} in {:.0} ms",
            if n == 1 { "" } else { "s" },
            self.strategy.name(),
            self.version,
            self.elapsed.as_secs_f64() * 1e3
        );
        if failed > 0 {
            s.push_str(&format!("; {failed} failed (see the diagnostics)"));
        }
        s
    }
}

/// Maps offsets of the text a run saw to the current text of the chunk: offsets
/// before the first difference stay, offsets after the last one move with it, offsets
/// in the changed part have no counterpart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetMap {
    prefix: u32,
    old_tail: u32,
    delta: i64,
}

impl OffsetMap {
    pub fn new(old: &str, new: &str) -> OffsetMap {
        let (a, b) = (old.as_bytes(), new.as_bytes());
        let prefix = common_prefix(a, b);
        let max_suffix = a.len().min(b.len()) - prefix;
        let suffix = common_suffix(&a[prefix..], &b[prefix..]).min(max_suffix);
        OffsetMap {
            prefix: prefix as u32,
            old_tail: (a.len() - suffix) as u32,
            delta: b.len() as i64 - a.len() as i64,
        }
    }

    /// The old offsets that map into `lo..=hi` of the new text: at most two ranges
    /// (before the change, after it), so that a sorted list can be cut by binary search.
    pub fn preimage(&self, lo: u32, hi: u32) -> [(u32, u32); 2] {
        let before = (lo, hi.min(self.prefix));
        let shift = |o: u32| u32::try_from((o as i64 - self.delta).max(0)).unwrap_or(u32::MAX);
        // Offsets up to the prefix map as they are (even where the tail starts there).
        let after = (shift(lo).max(self.old_tail).max(self.prefix.saturating_add(1)), shift(hi));
        [before, after]
    }

    pub fn identity() -> OffsetMap {
        OffsetMap { prefix: u32::MAX, old_tail: u32::MAX, delta: 0 }
    }

    pub fn map(&self, offset: u32) -> Option<u32> {
        if offset <= self.prefix {
            Some(offset)
        } else if offset >= self.old_tail {
            u32::try_from(offset as i64 + self.delta).ok()
        } else {
            None
        }
    }
}

/// Bytes compared at once (slice equality is a `memcmp`), before the byte-wise step.
const BLOCK: usize = 4096;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut k = 0;
    while k + BLOCK <= n && a[n - k - BLOCK..n - k] == b[n - k - BLOCK..n - k] {
        k += BLOCK;
    }
    k + a[..n - k].iter().rev().zip(b[..n - k].iter().rev()).take_while(|(x, y)| x == y).count()
}

/// What a caller of a run is told.
#[derive(Clone)]
pub enum RunOutcome {
    Done(Arc<DocResult>),
    /// A newer request for the document took over.
    Superseded,
    /// Every command that asked for the run was cancelled.
    Cancelled,
    /// The document was closed, or propagation is off.
    NotRun(String),
}

struct Request {
    strategy: Strategy,
    due: Instant,
    waiters: Vec<oneshot::Sender<RunOutcome>>,
    /// Also asked for by the mode (open, change, save), not only by commands: it runs
    /// even when no command waits for it any more.
    background: bool,
}

impl Request {
    /// Only commands asked for it, and none of them waits for the answer any more.
    fn abandoned(&self) -> bool {
        !self.background && self.waiters.iter().all(|w| w.is_closed())
    }
}

#[derive(Default)]
struct DocState {
    /// Bumped by every request: a run compares it before each chunk.
    generation: u64,
    result: Option<Arc<DocResult>>,
}

#[derive(Default)]
struct State {
    docs: HashMap<Url, DocState>,
    queue: HashMap<Url, Request>,
    stop: bool,
    /// The document being propagated and the flag that stops its run.
    running: Option<(Url, Arc<AtomicBool>)>,
}

impl State {
    /// Makes the run of `uri` (any run when `None`) stop at its next pause point.
    fn stop_running(&self, uri: Option<&Url>) {
        if let Some((u, flag)) = &self.running {
            if uri.is_none_or(|x| x == u) {
                flag.store(true, Ordering::Release);
            }
        }
    }
}

/// A revision's propagation diagnostics.
type Extras = (u64, Arc<Vec<Diagnostic>>);

/// A chunk's written-sharding shapes, kept while the chunk's analysis lives.
type ShapesOf = (Weak<ChunkResult>, Arc<Vec<hints::Hint>>);

/// The propagation service of one server.
pub struct Propagator {
    docs: Arc<Documents>,
    out: Outbox,
    client: Client,
    config: Arc<OnceLock<ClientConfig>>,
    pub settings: settings::Shared,
    /// Whether the client takes `workspace/inlayHint/refresh` and `codeLens/refresh`.
    refresh: Mutex<(bool, bool)>,
    state: Mutex<State>,
    wake: Condvar,
    runtime: tokio::runtime::Handle,
    /// Per-device shapes of written shardings, per analysed chunk (by identity).
    shapes: Mutex<HashMap<usize, ShapesOf>>,
    /// Edits waiting for their diagnostics: document -> (revision, since when).
    typing: Mutex<HashMap<Url, (u64, Instant)>>,
    /// Whether `typing` may be non-empty. The run checks it between any two steps, far
    /// more often than edits come: taking the lock there each time kept the edit path
    /// waiting for it (keystroke p95 up to 5 ms instead of 1 once steps got cheap).
    any_typing: AtomicBool,
    /// The propagation diagnostics of a document's revision, made by the propagation
    /// thread when a run ends, so that the publisher (on the I/O path) only copies them.
    extras: Mutex<HashMap<Url, Extras>>,
    /// Results replaced by a run, freed after its waiters are answered.
    retired: Mutex<Vec<Arc<DocResult>>>,
    /// Test hooks: a chunk containing [`TEST_HOLD_MARKER`] holds its run at the first
    /// pause point until the run is stopped (once per server).
    test_hold: Option<AtomicBool>,
}

/// See `Propagator::test_hold`.
pub const TEST_HOLD_MARKER: &str = "sdy-lsp-test-hold-propagation";

impl Propagator {
    /// Starts the propagation thread (within a tokio runtime).
    pub fn start(
        docs: Arc<Documents>,
        out: Outbox,
        client: Client,
        config: Arc<OnceLock<ClientConfig>>,
        test_hooks: bool,
    ) -> Arc<Propagator> {
        let p = Arc::new(Propagator {
            docs,
            out: out.clone(),
            client,
            config,
            settings: settings::Shared::default(),
            refresh: Mutex::new((false, false)),
            state: Mutex::default(),
            wake: Condvar::new(),
            runtime: tokio::runtime::Handle::current(),
            shapes: Mutex::default(),
            typing: Mutex::default(),
            any_typing: AtomicBool::new(false),
            extras: Mutex::default(),
            retired: Mutex::default(),
            test_hold: test_hooks.then(|| AtomicBool::new(true)),
        });
        let weak = Arc::downgrade(&p);
        let spawned = std::thread::Builder::new().name("sdy-propagation".into()).spawn(move || {
            lower_priority();
            while let Some((this, uri, req)) = next(&weak) {
                this.serve(uri, req);
            }
        });
        if let Err(e) = spawned {
            out.log(MessageType::ERROR, format!("cannot start the propagation thread: {e}"));
        }
        let extra = Arc::downgrade(&p);
        out.set_extra_diagnostics(Arc::new(move |uri: &Url, rev: u64| {
            extra.upgrade().map(|p| p.extra_diagnostics(uri, rev)).unwrap_or_default()
        }));
        p
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the client's refresh support and the initialization options.
    pub fn initialize(&self, params: &InitializeParams) {
        let ws = params.capabilities.workspace.as_ref();
        let inlay = ws.and_then(|w| w.inlay_hint.as_ref()).and_then(|h| h.refresh_support);
        let lens = ws.and_then(|w| w.code_lens.as_ref()).and_then(|l| l.refresh_support);
        *self.refresh.lock().unwrap_or_else(|e| e.into_inner()) =
            (inlay.unwrap_or(false), lens.unwrap_or(false));
        if let Some(o) = &params.initialization_options {
            self.settings.update(|s| s.apply(o));
        }
    }

    /// `workspace/didChangeConfiguration`.
    pub fn configure(&self, settings: &Value) {
        let (old, new) = self.settings.update(|s| s.apply_configuration(settings));
        if old != new {
            self.refresh_views();
        }
    }

    /// Stops the thread (pending callers are told the server is going away).
    pub fn stop(&self) {
        let mut st = self.lock();
        st.stop = true;
        st.stop_running(None);
        for (_, r) in st.queue.drain() {
            for w in r.waiters {
                let _ = w.send(RunOutcome::NotRun("the server is shutting down".into()));
            }
        }
        drop(st);
        self.wake.notify_all();
    }

    /// Queues a run of `uri` with `strategy`, `delay` from now; the receiver gets the
    /// outcome. A pending request for the document is replaced (its callers wait for
    /// this one), a running one stops at its next pause point.
    pub fn request(
        &self,
        uri: &Url,
        strategy: Strategy,
        delay: Duration,
    ) -> oneshot::Receiver<RunOutcome> {
        let (tx, rx) = oneshot::channel();
        self.enqueue(uri, strategy, delay, Some(tx));
        rx
    }

    /// [`Propagator::request`] for the mode (no one waits for the answer).
    fn request_in_background(&self, uri: &Url, strategy: Strategy, delay: Duration) {
        self.enqueue(uri, strategy, delay, None);
    }

    fn enqueue(
        &self,
        uri: &Url,
        strategy: Strategy,
        delay: Duration,
        waiter: Option<oneshot::Sender<RunOutcome>>,
    ) {
        if self.settings.get().mode == Mode::Off {
            if let Some(tx) = waiter {
                let _ = tx.send(RunOutcome::NotRun(
                    "propagation is off (setting sdy.propagation.mode)".into(),
                ));
            }
            return;
        }
        let mut st = self.lock();
        st.docs.entry(uri.clone()).or_default().generation += 1;
        st.stop_running(Some(uri));
        let due = Instant::now() + delay;
        let background = waiter.is_none();
        match st.queue.get_mut(uri) {
            Some(r) => {
                r.strategy = strategy;
                r.due = due;
                r.waiters.extend(waiter);
                r.background |= background;
            }
            None => {
                let waiters = waiter.into_iter().collect();
                st.queue.insert(uri.clone(), Request { strategy, due, waiters, background });
            }
        }
        drop(st);
        self.wake.notify_all();
    }

    /// Runs `uri` now and waits for the outcome.
    pub async fn run(&self, uri: &Url, strategy: Strategy) -> RunOutcome {
        let rx = self.request(uri, strategy, Duration::ZERO);
        rx.await.unwrap_or(RunOutcome::NotRun("the propagation thread stopped".into()))
    }

    /// A document was opened, changed or saved: runs it if the mode says so.
    pub fn on_open(&self, uri: &Url) {
        let s = self.settings.get();
        if s.mode == Mode::OnChange {
            self.request_in_background(uri, s.strategy, Duration::ZERO);
        }
    }
    pub fn on_change(&self, uri: &Url) {
        if let Some((rev, _)) = self.docs.subscribe(uri) {
            let mut t = self.typing.lock().unwrap_or_else(|e| e.into_inner());
            t.insert(uri.clone(), (rev, Instant::now()));
            self.any_typing.store(true, Ordering::Release);
        }
        let s = self.settings.get();
        if s.mode == Mode::OnChange {
            self.request_in_background(uri, s.strategy, CHANGE_DEBOUNCE);
        }
    }
    pub fn on_save(&self, uri: &Url) {
        let s = self.settings.get();
        if s.mode == Mode::OnSave {
            self.request_in_background(uri, s.strategy, Duration::ZERO);
        }
    }

    /// The document was closed: its results go, a pending or running run is dropped.
    pub fn forget(&self, uri: &Url) {
        let mut st = self.lock();
        if let Some(r) = st.queue.remove(uri) {
            for w in r.waiters {
                let _ = w.send(RunOutcome::NotRun("the document was closed".into()));
            }
        }
        st.stop_running(Some(uri));
        let previous = st.docs.get_mut(uri).and_then(|d| {
            d.generation += 1;
            d.result.take()
        });
        st.docs.retain(|_, d| d.result.is_some());
        drop(st);
        drop(previous);
        self.extras.lock().unwrap_or_else(|e| e.into_inner()).remove(uri);
    }

    /// The latest propagation of `uri`.
    pub fn result(&self, uri: &Url) -> Option<Arc<DocResult>> {
        self.lock().docs.get(uri)?.result.clone()
    }

    /// The per-device shape hints of the written shardings of a chunk (cached).
    pub fn written_shapes(&self, r: &Arc<ChunkResult>) -> Arc<Vec<hints::Hint>> {
        let key = Arc::as_ptr(r) as usize;
        let mut map = self.shapes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((w, h)) = map.get(&key) {
            if w.strong_count() > 0 {
                return h.clone();
            }
        }
        let h = Arc::new(hints::written_shapes(&r.analysis.model));
        map.retain(|_, (w, _)| w.strong_count() > 0);
        map.insert(key, (Arc::downgrade(r), h.clone()));
        h
    }

    // ----- the thread -----

    fn serve(self: &Arc<Self>, uri: Url, req: Request) {
        let stop = Arc::new(AtomicBool::new(false));
        let generation = {
            let mut st = self.lock();
            st.running = Some((uri.clone(), stop.clone()));
            st.docs.get(&uri).map_or(0, |d| d.generation)
        };
        // Asked between any two ops: atomics only (see `any_typing`).
        let control = || {
            self.pause_while_typing(&stop);
            if stop.load(Ordering::Acquire) || req.abandoned() {
                Flow::Stop
            } else {
                Flow::Go
            }
        };
        let what = format!("the propagation of {uri}");
        let outcome =
            guard(&what, &self.out, || self.run_now(&uri, req.strategy, generation, &control))
                .unwrap_or_else(RunOutcome::NotRun);
        self.lock().running = None;
        if matches!(outcome, RunOutcome::Cancelled) {
            self.out.log(MessageType::LOG, format!("the propagation of {uri} was cancelled"));
        }
        for w in req.waiters {
            let _ = w.send(outcome.clone());
        }
        drop(outcome);
        let retired = std::mem::take(&mut *self.retired.lock().unwrap_or_else(|e| e.into_inner()));
        drop(retired);
    }

    fn current(&self, uri: &Url, generation: u64) -> bool {
        let st = self.lock();
        !st.stop && st.docs.get(uri).is_some_and(|d| d.generation == generation)
    }

    /// The analysis of the current revision of `uri` (waiting for it).
    fn analyzed(&self, uri: &Url) -> Option<Arc<Analyzed>> {
        let (rev, mut rx) = self.docs.subscribe(uri)?;
        let a = self.runtime.block_on(async move {
            rx.wait_for(|a| a.as_ref().is_some_and(|a| a.rev >= rev))
                .await
                .ok()
                .and_then(|a| a.clone())
        });
        a
    }

    fn run_now(
        self: &Arc<Self>,
        uri: &Url,
        strategy: Strategy,
        generation: u64,
        control: &dyn Control,
    ) -> RunOutcome {
        let t0 = Instant::now();
        let cpu0 = crate::cpu::thread();
        let Some(analyzed) = self.analyzed(uri) else {
            return RunOutcome::NotRun("the document is not open".into());
        };
        if !self.current(uri, generation) {
            return RunOutcome::Superseded;
        }
        let previous = self.result(uri).filter(|p| p.strategy == strategy);
        // Reuse fresh chunks; copy what the others need, then let go of the analysis.
        struct Job {
            index: usize,
            span: Span,
            key: Weak<ChunkResult>,
            src: String,
            chunk: Chunk,
            analysis: ChunkAnalysis,
        }
        let mut chunks: Vec<Option<Arc<ChunkRun>>> = vec![None; analyzed.chunks.len()];
        let mut jobs = Vec::new();
        for (i, c) in analyzed.chunks.iter().enumerate() {
            let Some(r) = &c.result else { continue };
            let fresh = previous
                .as_ref()
                .and_then(|p| p.chunks.iter().flatten().find(|run| run.is_for(r)).cloned());
            match fresh {
                Some(run) => chunks[i] = Some(run),
                None => jobs.push(Job {
                    index: i,
                    span: c.span,
                    key: Arc::downgrade(r),
                    src: (*r.src).clone(),
                    chunk: Chunk { span: Span::new(0, c.span.len()), top: r.top().to_vec() },
                    analysis: r.analysis.clone(),
                }),
            }
        }
        let (rev, version) = (analyzed.rev, analyzed.version);
        drop(analyzed);
        let computed = jobs.len();
        // Why a run stopped: a newer request or a close, else its commands' cancellation.
        let stopped = || {
            if self.current(uri, generation) {
                RunOutcome::Cancelled
            } else {
                RunOutcome::Superseded
            }
        };
        for job in jobs {
            if control.pause() == Flow::Stop {
                return stopped();
            }
            let t = Instant::now();
            let what =
                format!("the propagation of {uri} (bytes {}..{})", job.span.start, job.span.end);
            let hold = self.test_hold.as_ref().filter(|_| job.src.contains(TEST_HOLD_MARKER));
            let control = || match hold {
                // The first pause point of the first such run: tell, then hold until told
                // to stop.
                Some(h) if h.swap(false, Ordering::AcqRel) => {
                    self.out
                        .log(MessageType::LOG, format!("test: holding the propagation of {uri}"));
                    while control.pause() == Flow::Go {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Flow::Stop
                }
                _ => control.pause(),
            };
            let run = guard(&what, &self.out, || {
                let prop = editor::propagate_with(
                    &job.src,
                    &job.chunk,
                    &job.analysis.model,
                    &job.analysis.diagnostics,
                    strategy,
                    &control,
                )
                .ok()?;
                let mut hints = hints::propagated(&job.analysis.model, &prop, &prop.meshes);
                let cost = cost::of_propagation(&job.src, &job.analysis.model, &prop);
                if let Some(c) = &cost {
                    hints.extend(cost::hints::hints(
                        &job.analysis.model,
                        &job.src,
                        c,
                        &Default::default(),
                    ));
                    hints.sort_by_key(|h| h.offset);
                }
                Some((prop, cost, hints))
            });
            let run = match run {
                Ok(Some(run)) => Ok(run),
                Ok(None) => return stopped(),
                Err(e) => Err(e),
            };
            if let Ok((prop, cost, hints)) = run {
                chunks[job.index] = Some(Arc::new(ChunkRun {
                    key: job.key,
                    index: job.index,
                    span: job.span,
                    src: job.src,
                    analysis: job.analysis,
                    prop,
                    cost,
                    hints,
                    version,
                    elapsed: t.elapsed(),
                }));
            }
        }
        let result = Arc::new(DocResult {
            uri: uri.clone(),
            rev,
            version,
            strategy,
            chunks,
            computed,
            elapsed: t0.elapsed(),
            cpu: crate::cpu::thread().zip(cpu0).map(|(b, a)| b.saturating_sub(a)),
        });
        // The previous result is freed neither under the lock (an edit's diagnostics wait
        // for it) nor before the answer (freeing a large one takes milliseconds), but
        // once the waiters have theirs.
        let previous = {
            let mut st = self.lock();
            let stopped = st.stop;
            match st.docs.get_mut(uri) {
                Some(d) if d.generation == generation && !stopped => {
                    d.result.replace(result.clone())
                }
                _ => return RunOutcome::Superseded,
            }
        };
        self.retired.lock().unwrap_or_else(|e| e.into_inner()).extend(previous);
        for run in result.chunks.iter().flatten() {
            register(run, self);
        }
        self.republish(uri);
        self.refresh_views();
        if self.config.get().is_some_and(|c| c.trace_timing) {
            eprintln!(
                "sdy-lsp: {uri} v{version}: propagated {computed} of {} chunks in {:.1} ms",
                result.chunks.len(),
                result.elapsed.as_secs_f64() * 1e3
            );
        }
        RunOutcome::Done(result)
    }

    /// Publishes the document's diagnostics again (the verifier's, with the new
    /// propagation diagnostics appended by the publisher).
    fn republish(&self, uri: &Url) {
        let Some((_, rx)) = self.docs.subscribe(uri) else { return };
        let Some(a) = rx.borrow().clone() else { return };
        let config = self.config.get().cloned().unwrap_or_default();
        let items = diagnostics::to_lsp(&a, uri, &config);
        let extras = Arc::new(self.compute_extra(uri, &a));
        self.extras.lock().unwrap_or_else(|e| e.into_inner()).insert(uri.clone(), (a.rev, extras));
        self.out.send(Outgoing::Diagnostics {
            uri: uri.clone(),
            version: a.version,
            rev: a.rev,
            items,
        });
    }

    /// Blocks while an edit waits for its diagnostics (each for at most [`MAX_PAUSE`]),
    /// unless the run is told to stop.
    fn pause_while_typing(&self, stop: &AtomicBool) {
        while self.any_typing.load(Ordering::Acquire) && !stop.load(Ordering::Acquire) {
            {
                let mut t = self.typing.lock().unwrap_or_else(|e| e.into_inner());
                t.retain(|_, (_, since)| since.elapsed() < MAX_PAUSE);
                self.any_typing.store(!t.is_empty(), Ordering::Release);
                if t.is_empty() || self.lock().stop {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Asks the client to re-request inlay hints and code lenses, if it can.
    fn refresh_views(&self) {
        let (inlay, lens) = *self.refresh.lock().unwrap_or_else(|e| e.into_inner());
        let client = self.client.clone();
        if inlay || lens {
            // Not awaited by anyone: the answer does not matter, and the publisher must not
            // wait for the client.
            self.runtime.spawn(async move {
                if inlay {
                    let _ = client.inlay_hint_refresh().await;
                }
                if lens {
                    let _ = client.code_lens_refresh().await;
                }
            });
        }
    }

    /// The propagation diagnostics of revision `rev` of `uri` (fresh chunks only): the
    /// function arguments and results that end up replicated (information), an export
    /// failure of the cost view, and the passes' warnings and failures.
    pub fn extra_diagnostics(&self, uri: &Url, rev: u64) -> Vec<Diagnostic> {
        {
            // The edit is analysed: a paused run may go on.
            let mut t = self.typing.lock().unwrap_or_else(|e| e.into_inner());
            if t.get(uri).is_some_and(|(r, _)| *r <= rev) {
                t.remove(uri);
                self.any_typing.store(!t.is_empty(), Ordering::Release);
            }
        }
        let cached = self.extras.lock().unwrap_or_else(|e| e.into_inner()).get(uri).cloned();
        if let Some((_, items)) = cached.filter(|(r, _)| *r == rev) {
            return items.to_vec();
        }
        let Some((_, rx)) = self.docs.subscribe(uri) else { return Vec::new() };
        let Some(a) = rx.borrow().clone().filter(|a| a.rev == rev) else { return Vec::new() };
        self.compute_extra(uri, &a)
    }

    /// The propagation diagnostics of an analysed revision of `uri`.
    fn compute_extra(&self, uri: &Url, a: &Analyzed) -> Vec<Diagnostic> {
        let Some(result) = self.result(uri) else { return Vec::new() };
        let config = self.config.get().cloned().unwrap_or_default();
        let text = a.text(config.encoding);
        let mut out = Vec::new();
        for (i, c) in a.chunks.iter().enumerate() {
            let Some((run, true)) = result.run_for(a, i) else { continue };
            let base = c.span.start;
            if let Some((at, message)) = run.cost.as_ref().and_then(|c| c.failure.as_ref()) {
                let span = Span::new(*at, *at).shift(base);
                let message = format!("the cost view's export failed: {message}");
                out.push(diagnostic(
                    &text,
                    span,
                    DiagnosticSeverity::INFORMATION,
                    "cost",
                    message,
                    None,
                ));
            }
            let line_of = |o: u32| Some(text.position(o + base).line + 1);
            let notes = sdy_analysis::explain::why_not::io_notes(
                &run.analysis.model,
                &run.src,
                &run.prop,
                &line_of,
            );
            let model = &run.analysis.model;
            let python = |o: u32| super::diagnostics::python_source(uri, model, &run.src, o);
            for (span, mut message) in notes {
                // Our own note: the Python position as related information, or in the text.
                let related = match python(span.start) {
                    Some((Some(r), _)) if config.related_information => Some(vec![r]),
                    Some((_, at)) if !message.contains(&at) => {
                        message.push_str(&format!(" (Python source: `{at}`)"));
                        None
                    }
                    _ => None,
                };
                out.push(diagnostic(
                    &text,
                    span.shift(base),
                    DiagnosticSeverity::INFORMATION,
                    "replicated",
                    message,
                    related,
                ));
            }
            for d in run.prop.diagnostics.iter().filter(|d| d.origin == Origin::Pass) {
                let (severity, code) = match d.severity {
                    Severity::Error => (DiagnosticSeverity::WARNING, PROPAGATION_FAILED),
                    _ => (DiagnosticSeverity::INFORMATION, d.code.as_str()),
                };
                let message = if d.severity == Severity::Error {
                    format!("propagation failed: {}", d.message)
                } else {
                    d.message.clone()
                };
                let related = match python(d.span.start) {
                    Some((Some(r), _)) if config.related_information => Some(vec![r]),
                    _ => None,
                };
                out.push(diagnostic(&text, d.focus.shift(base), severity, code, message, related));
            }
        }
        out
    }
}

const PROPAGATION_FAILED: &str = sdy_analysis::diag::DiagnosticCode::PropagationFailed.as_str();

fn diagnostic(
    text: &Text<'_>,
    span: Span,
    severity: DiagnosticSeverity,
    code: &str,
    message: String,
    related: Option<Vec<DiagnosticRelatedInformation>>,
) -> Diagnostic {
    Diagnostic {
        range: text.range(span),
        severity: Some(severity),
        code: Some(NumberOrString::String(code.to_string())),
        source: Some(SOURCE.to_string()),
        message,
        related_information: related,
        ..Default::default()
    }
}

impl Drop for Propagator {
    fn drop(&mut self) {
        self.lock().stop = true;
        self.wake.notify_all();
    }
}

/// Waits for the next due request; `None` once stopped or gone.
fn next(weak: &Weak<Propagator>) -> Option<(Arc<Propagator>, Url, Request)> {
    loop {
        let p = weak.upgrade()?;
        let mut st = p.lock();
        if st.stop {
            return None;
        }
        let now = Instant::now();
        let first = st.queue.iter().min_by_key(|(_, r)| r.due).map(|(u, r)| (u.clone(), r.due));
        let wait = match first {
            Some((uri, due)) if due <= now => {
                if let Some(req) = st.queue.remove(&uri) {
                    drop(st);
                    return Some((p, uri, req));
                }
                continue;
            }
            Some((_, due)) => due - now,
            // Wake up now and then to notice the server is gone.
            None => Duration::from_millis(500),
        };
        let _ = p.wake.wait_timeout(st, wait).unwrap_or_else(|e| e.into_inner());
    }
}

/// Lowers the calling thread's scheduling priority (Linux: the nice value is per
/// thread), so that the analysis worker wins the CPU while both have work.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn setpriority(which: i32, who: u32, prio: i32) -> i32;
        }
        // SAFETY: a libc call with plain integer arguments; PRIO_PROCESS (0) with
        // who = 0 is the calling thread on Linux. A failure only leaves the priority.
        unsafe {
            setpriority(0, 0, 10);
        }
    }
}

// ----- what the hover provider sees -----

type Registered = (Weak<ChunkRun>, Weak<Propagator>);

/// Runs by the analysed chunk they belong to (its address, kept alive by the run's weak
/// reference, so it cannot be reused while the entry exists).
fn registry() -> MutexGuard<'static, HashMap<usize, Registered>> {
    static REGISTRY: OnceLock<Mutex<HashMap<usize, Registered>>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner())
}

fn register(run: &Arc<ChunkRun>, p: &Arc<Propagator>) {
    let mut map = registry();
    map.retain(|_, (r, _)| r.strong_count() > 0);
    map.insert(Weak::as_ptr(&run.key) as usize, (Arc::downgrade(run), Arc::downgrade(p)));
}

/// The fresh propagation of an analysed chunk, and the service it belongs to.
pub fn lookup(chunk: &ChunkResult) -> Option<(Arc<ChunkRun>, Arc<Propagator>)> {
    let map = registry();
    let (r, p) = map.get(&(chunk as *const ChunkResult as usize))?;
    let run = r.upgrade().filter(|run| run.is_for(chunk))?;
    Some((run, p.upgrade()?))
}

impl Propagator {
    /// The document and absolute start of the analysed chunk `chunk`, in its current
    /// revision, with a way to turn its offsets into `(line, link)`.
    pub fn locate_chunk(&self, chunk: &ChunkResult) -> Option<(Url, Arc<Analyzed>, u32)> {
        let st = self.lock();
        let uris: Vec<Url> = st.docs.keys().cloned().collect();
        drop(st);
        for uri in uris {
            let Some((_, rx)) = self.docs.subscribe(&uri) else { continue };
            let Some(a) = rx.borrow().clone() else { continue };
            let base = a.chunks.iter().find_map(|c| {
                let r = c.result.as_ref()?;
                std::ptr::eq(Arc::as_ptr(r), chunk).then_some(c.span.start)
            });
            if let Some(base) = base {
                return Some((uri, a, base));
            }
        }
        None
    }
}

/// `sdy.propagate` / `sdy.showPropagatedModule` arguments: `[{uri, strategy?}]`.
pub fn command_args(args: &[Value]) -> Result<(Url, Option<Strategy>), String> {
    let a = args.first().ok_or("expected one argument {uri, strategy}")?;
    let uri = a["uri"].as_str().ok_or("the argument has no \"uri\"")?;
    let uri = Url::parse(uri).map_err(|e| format!("bad uri {uri:?}: {e}"))?;
    let strategy = match a.get("strategy").and_then(Value::as_str) {
        None => None,
        Some(s) => Some(Strategy::parse(s).ok_or_else(|| {
            format!(
                "unknown strategy {s:?} (one of {})",
                Strategy::ALL.map(|s| s.name()).join(", ")
            )
        })?),
    };
    Ok((uri, strategy))
}

/// The answer of `sdy.propagate`.
pub fn propagate_answer(outcome: &RunOutcome) -> Value {
    match outcome {
        RunOutcome::Done(r) => json!({
            "message": r.summary(),
            "version": r.version,
            "strategy": r.strategy.name(),
            "chunks": r.chunks.len(),
            "computed": r.computed,
            "failed": r.failed(),
            "ms": (r.elapsed.as_secs_f64() * 1e3).round(),
            "cpu_ms": r.cpu.map(|c| (c.as_secs_f64() * 1e4).round() / 10.0),
        }),
        RunOutcome::Superseded => json!({"message": "sdy: superseded by a newer propagation run"}),
        RunOutcome::Cancelled => json!({"message": "sdy: propagation cancelled"}),
        RunOutcome::NotRun(why) => json!({"message": format!("sdy: not propagated: {why}")}),
    }
}

/// The module `opt` prints for a propagated document: the chunks joined by `// -----`
/// like `opt -split-input-file`; a chunk that failed (where `opt` prints nothing and
/// reports on stderr) gets its errors as comments.
pub fn printed_module(r: &DocResult) -> String {
    let mut parts = Vec::new();
    for run in &r.chunks {
        let Some(run) = run else {
            parts.push("// sdy-lsp: this chunk could not be propagated (internal error)\n".into());
            continue;
        };
        if run.prop.failed {
            let mut s = String::from("// sdy-lsp: propagation failed:\n");
            for d in run.prop.diagnostics.iter().filter(|d| d.severity == Severity::Error) {
                let line =
                    run.src[..(d.span.start as usize).min(run.src.len())].matches('\n').count() + 1;
                s.push_str(&format!("//   chunk line {line}: {}\n", d.message.replace('\n', " ")));
            }
            parts.push(s);
        } else {
            parts.push(run.prop.printed().to_string());
        }
    }
    parts.join("// -----\n")
}

/// The modules with Shardy's explicit collectives of a propagated document, chunks
/// joined by `// -----`, each function headed by its cost.
pub fn communication_module(r: &DocResult, bw: &cost::time::Bandwidth) -> String {
    let mut parts = Vec::new();
    for run in &r.chunks {
        let Some(c) = run.as_ref().and_then(|run| run.cost.as_ref()) else {
            parts.push("// sdy-lsp: this chunk could not be propagated\n".to_string());
            continue;
        };
        let mut s = String::new();
        for f in &c.functions {
            s.push_str(&format!("// @{}: {}\n", f.name, cost::text::function_lens(f, bw)));
        }
        match &c.failure {
            Some((_, message)) => s.push_str(&format!(
                "// sdy-lsp: the export failed: {}\n",
                message.replace('\n', " ")
            )),
            None => s.push_str(c.printed()),
        }
        parts.push(s);
    }
    parts.join("// -----\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_map() {
        let m = OffsetMap::new("abc XYZ def", "abc Q def");
        assert_eq!(m.map(2), Some(2));
        assert_eq!(m.map(4), Some(4));
        assert_eq!(m.map(5), None);
        assert_eq!(m.map(7), Some(5));
        assert_eq!(m.map(11), Some(9));
        let same = OffsetMap::new("abc", "abc");
        assert_eq!(same.map(3), Some(3));
        // Repeated characters: the prefix and the suffix do not overlap.
        let m = OffsetMap::new("aaaa", "aaaaaa");
        assert_eq!(m.map(4), Some(4));
        assert_eq!(m.map(0), Some(0));
        // Longer than a block, the change in the middle.
        let old = format!("{}XYZ{}", "a".repeat(5000), "b".repeat(9000));
        let new = format!("{}Q{}", "a".repeat(5000), "b".repeat(9000));
        let m = OffsetMap::new(&old, &new);
        assert_eq!((m.prefix, m.old_tail, m.delta), (5000, 5003, -2));
        assert_eq!(m.map(6000), Some(5998));
    }

    #[test]
    fn preimage_is_what_maps_into_the_range() {
        let cases = [
            (
                format!("{}XYZ{}", "a".repeat(50), "b".repeat(90)),
                format!("{}Q{}", "a".repeat(50), "b".repeat(90)),
            ),
            ("a".repeat(50), "a".repeat(53)),
            ("a".repeat(53), "a".repeat(50)),
            ("xy".repeat(40), "xy".repeat(41)),
        ];
        for (old, new) in cases {
            check_preimage(&old, &new);
        }
    }

    fn check_preimage(old: &str, new: &str) {
        let m = OffsetMap::new(old, new);
        for (lo, hi) in [(0, 10), (40, 60), (49, 52), (51, 51), (60, 140), (0, 200)] {
            let want: Vec<u32> = (0..=old.len() as u32)
                .filter(|&o| m.map(o).is_some_and(|n| (lo..=hi).contains(&n)))
                .collect();
            let got: Vec<u32> = m
                .preimage(lo, hi)
                .iter()
                .flat_map(|&(a, b)| (a..=b.min(old.len() as u32)).collect::<Vec<_>>())
                .collect();
            assert_eq!(got, want, "{lo}..={hi}");
        }
    }

    #[test]
    fn arguments() {
        let (u, s) =
            command_args(&[json!({"uri": "file:///a.mlir", "strategy": "basic"})]).unwrap();
        assert_eq!((u.as_str(), s), ("file:///a.mlir", Some(Strategy::Basic)));
        assert!(command_args(&[json!({"uri": "file:///a.mlir", "strategy": "x"})]).is_err());
        assert!(command_args(&[]).is_err());
        assert_eq!(command_args(&[json!({"uri": "file:///a"})]).unwrap().1, None);
    }
}
