//! The propagation thread: takes the next due request, runs it chunk by chunk on a copy
//! of the analysed revision (pausing while typing, stopping when superseded or
//! cancelled), stores the result and republishes the document's diagnostics.

use super::{ChunkRun, DocResult, Propagator, Request, RunOutcome, MAX_PAUSE, TEST_HOLD_MARKER};
use crate::lsp::analysis::{Analyzed, ChunkResult};
use crate::lsp::diagnostics;
use crate::lsp::outgoing::Outgoing;
use crate::lsp::panic::guard;
use sdy_analysis::cost;
use sdy_analysis::propagation::editor::{self, hints, Control, Flow, Strategy};
use sdy_analysis::ChunkAnalysis;
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tower_lsp::lsp_types::{MessageType, Url};

impl Propagator {
    pub(super) fn serve(self: &Arc<Self>, uri: Url, req: Request) {
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
            let fresh = previous.as_ref().and_then(|p| p.fresh_run(r).cloned());
            match fresh {
                Some(run) => chunks[i] = Some(run),
                None => jobs.push(Job {
                    index: i,
                    span: c.span,
                    key: Arc::downgrade(r),
                    src: (*r.src).clone(),
                    chunk: Chunk { span: Span::new(0, c.span.len()), top: r.top().clone() },
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
}

/// Waits for the next due request; `None` once stopped or gone.
pub(super) fn next(weak: &Weak<Propagator>) -> Option<(Arc<Propagator>, Url, Request)> {
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
pub(super) fn lower_priority() {
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
