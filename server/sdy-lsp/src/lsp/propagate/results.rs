//! What a run keeps (per chunk and per document) and the modules it prints.

use crate::lsp::analysis::{Analyzed, ChunkResult};
use sdy_analysis::cost::{self, Cost};
use sdy_analysis::diag::Severity;
use sdy_analysis::propagation::editor::{hints, ChunkPropagation, Strategy};
use sdy_analysis::ChunkAnalysis;
use sdy_syntax::Span;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tower_lsp::lsp_types::Url;

/// The propagation of one chunk.
pub struct ChunkRun {
    /// The analysed chunk it ran on: identity only (no strong reference).
    pub(super) key: Weak<ChunkResult>,
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
        if let Some(run) = self.fresh_run(r) {
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

    /// The run of the analysed chunk `r` if the chunk did not change since.
    pub fn fresh_run(&self, r: &ChunkResult) -> Option<&Arc<ChunkRun>> {
        self.chunks.iter().flatten().find(|c| c.is_for(r))
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
