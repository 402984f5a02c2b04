//! The language server: LSP over stdio on top of the analysis core.
//!
//! This layer translates and schedules; it holds no analysis logic.
//!
//! ```text
//!  stdin thread (stdin.rs: framing.rs frames, validate.rs keeps from tower-lsp what it
//!    cannot decode; aside.rs: a big didOpen's text set aside, unescaped in place)
//!    ▼
//!  gate.rs: answers for the stdin thread, trades set-aside texts back, notices exit
//!    ▼
//!  tower-lsp I/O task (stdin → handlers → stdout)
//!    │ didOpen/didChange: edits applied at once, in order, before any await
//!    │   (documents.rs: rope + incremental re-parse + LSP line index)
//!    │ → scheduler.rs: "document X changed" (debounced only while busy)
//!    ▼
//!  analysis worker thread (scheduler.rs)
//!    │ takes a snapshot of the newest revision (chunks are Arc-shared: cheap),
//!    │ analyses each `// -----` chunk, reusing the result of any chunk whose
//!    │ top-level ops are the same Arcs as before (analysis.rs), skips to the newest
//!    │ revision between chunks, catches panics
//!    ├─► watch channel per document: the newest analysis, for requests
//!    └─► outgoing.rs queue → publisher task: publishDiagnostics (only for the
//!        current revision), window/logMessage
//!  requests (hover.rs, definition.rs, ...): wait for the analysis of the revision
//!    they were sent against (ContentModified if the document moved on), then run
//!    on the blocking pool under catch_unwind (panic.rs)
//! ```
//!
//! Positions: byte offsets everywhere; position.rs alone converts to and from LSP
//! positions in the negotiated encoding (UTF-8 if offered, else UTF-16).
//!
//! Adding a feature (completion, semantic tokens, inlay hints, ...): a file with a pure
//! function from an [`analysis::Analyzed`] (plus a position or range) to the LSP answer,
//! its capability in capabilities.rs, and a handler in server.rs that goes through
//! [`server::Server::with_analysis`].

pub mod analysis;
pub mod aside;
pub mod capabilities;
pub mod code_actions;
pub mod code_lens;
pub mod completion;
pub mod definition;
pub mod diagnostics;
pub mod documents;
pub mod framing;
pub mod gate;
pub mod hover;
pub mod inlay_hints;
pub mod outgoing;
pub mod panic;
pub mod position;
pub mod propagate;
pub mod references;
pub mod scheduler;
pub mod semantic_tokens;
pub mod server;
pub mod settings;
pub mod stdin;
pub mod strings;
pub mod symbols;
pub mod validate;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tower_lsp::{ClientSocket, LspService, Server as LspServer};

pub use server::Server;

/// How the server behaves; tests set what the environment would.
#[derive(Clone, Debug)]
pub struct Options {
    /// While an analysis of a document is pending or running, further edits wait this
    /// long for quiet before the next analysis starts. An edit to an idle document is
    /// analysed at once. Overridden by the `diagnosticsDebounceMs` initialization option.
    pub debounce: Duration,
    /// Enables hooks that exist for tests only: the `sdy/testPanic` request, and a panic
    /// in the analysis of any chunk containing `sdy-lsp-test-panic`.
    pub test_hooks: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { debounce: Duration::from_millis(50), test_hooks: false }
    }
}

impl Options {
    /// Defaults, with `SDY_LSP_TEST_HOOKS=1` and `SDY_LSP_DEBOUNCE_MS=<n>` honoured.
    pub fn from_env() -> Options {
        let mut o = Options {
            test_hooks: std::env::var("SDY_LSP_TEST_HOOKS").is_ok_and(|v| v == "1"),
            ..Options::default()
        };
        if let Some(ms) = std::env::var("SDY_LSP_DEBOUNCE_MS").ok().and_then(|v| v.parse().ok()) {
            o.debounce = Duration::from_millis(ms);
        }
        o
    }
}

/// A shared flag.
pub type Flag = Arc<AtomicBool>;

/// The tower-lsp service and the socket of server-to-client messages. Must be called
/// within a tokio runtime.
pub fn service(options: Options) -> (LspService<Server>, ClientSocket) {
    let test_hooks = options.test_hooks;
    let builder = LspService::build(move |client| Server::new(client, options.clone()));
    let builder = if test_hooks {
        builder
            .custom_method("sdy/testPanic", Server::test_panic)
            .custom_method("sdy/testText", Server::test_text)
    } else {
        builder
    };
    builder.finish()
}

/// Runs the server on stdin/stdout until `exit` (or the end of stdin), then exits the
/// process: 0 after `shutdown`, 1 otherwise.
pub fn run_stdio(options: Options) -> ExitCode {
    let runtime =
        match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
            Ok(r) => r,
            Err(e) => {
                eprintln!("sdy-lsp: cannot start the async runtime: {e}");
                return ExitCode::FAILURE;
            }
        };
    let code = runtime.block_on(async move {
        let (service, socket) = service(options);
        let shutdown_seen = service.inner().shutdown_flag();
        let (exit_tx, exit_rx) = tokio::sync::oneshot::channel::<()>();
        let service = gate::Gate::new(service, move || {
            let _ = exit_tx.send(());
        });
        tokio::select! {
            _ = LspServer::new(stdin::Input::stdin(), tokio::io::stdout(), socket).serve(service) => {}
            _ = exit_rx => {}
        }
        if shutdown_seen.load(Ordering::SeqCst) {
            0
        } else {
            1
        }
    });
    // Not dropping the runtime: the stdin thread's blocking read cannot be cancelled and
    // would hold the process until the client closes stdin. Freeing the
    // documents one by one would only cost time, too.
    std::mem::forget(runtime);
    std::process::exit(code)
}
