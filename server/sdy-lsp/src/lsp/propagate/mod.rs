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
//! Results ([`results`]) feed the inlay hints (inlay_hints.rs), the code lenses
//! (code_lens.rs), the hover (hover.rs, passed to `sdy_analysis::ide::hover`) and
//! diagnostics: the passes' warnings (and an export failure of the cost view) are
//! appended to the verifier's diagnostics of the document by the publisher
//! ([`Propagator::extra_diagnostics`], made by [`convert`]).
//! Each run also computes what its result costs (`sdy_analysis::cost`: the collectives
//! Shardy's export inserts, memory), shown by the hints, hovers, lenses and
//! `sdy.showCommunication`.
//!
//! Here the service and its queue; the run thread in [`run`], what a result keeps and
//! prints in [`results`], the offset map from a run's text to the current one in
//! [`offsets`], protocol conversions (diagnostics, command arguments, answers) in
//! [`convert`].

mod convert;
mod offsets;
mod results;
mod run;

pub use convert::{command_args, propagate_answer};
pub use offsets::OffsetMap;
pub use results::{communication_module, printed_module, ChunkRun, DocResult};

use super::analysis::{Analyzed, ChunkResult};
use super::capabilities::ClientConfig;
use super::documents::Documents;
use super::outgoing::Outbox;
use super::settings::{self, Mode};
use sdy_analysis::propagation::editor::{hints, Strategy};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tower_lsp::lsp_types::{Diagnostic, InitializeParams, MessageType, Url};
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
            run::lower_priority();
            while let Some((this, uri, req)) = run::next(&weak) {
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
        convert::diagnostics(&result, a, &config, uri)
    }
}

impl Drop for Propagator {
    fn drop(&mut self) {
        self.lock().stop = true;
        self.wake.notify_all();
    }
}
