//! Server-to-client notifications, sent in order by one task.
//!
//! The worker thread and the handlers never talk to the client directly: they queue a
//! message here and go on (a notification handler never awaits the client). The
//! publisher drops diagnostics of a revision that is no longer current, so stale results
//! never reach the editor, and queue order keeps publications of one document in order.

use super::documents::Documents;
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc;
use tower_lsp::lsp_types::{Diagnostic, MessageType, Url};
use tower_lsp::Client;

pub enum Outgoing {
    Diagnostics {
        uri: Url,
        version: i32,
        rev: u64,
        items: Vec<Diagnostic>,
    },
    /// Clears the diagnostics of a closed document.
    Clear {
        uri: Url,
    },
    Log {
        typ: MessageType,
        message: String,
    },
}

/// A source of more diagnostics for a revision (uri, rev) of a document, appended to
/// each publication of it (propagation: `propagate.rs`).
pub type ExtraDiagnostics = Arc<dyn Fn(&Url, u64) -> Vec<Diagnostic> + Send + Sync>;

/// A handle to queue messages for the client.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Outgoing>,
    extra: Arc<OnceLock<ExtraDiagnostics>>,
}

impl Outbox {
    /// Sets the extra diagnostics source (once).
    pub fn set_extra_diagnostics(&self, f: ExtraDiagnostics) {
        let _ = self.extra.set(f);
    }

    pub fn send(&self, msg: Outgoing) {
        // Fails only when the publisher is gone, i.e. the server is shutting down.
        let _ = self.tx.send(msg);
    }

    /// Logs to stderr and to the client's log (`window/logMessage`).
    pub fn log(&self, typ: MessageType, message: String) {
        eprintln!("sdy-lsp: {message}");
        self.send(Outgoing::Log { typ, message });
    }
}

/// Starts the publisher task (within a tokio runtime); it ends when every [`Outbox`] is
/// dropped.
pub fn start(client: Client, docs: Arc<Documents>) -> Outbox {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let extra: Arc<OnceLock<ExtraDiagnostics>> = Arc::default();
    let source = extra.clone();
    tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            match msg {
                Outgoing::Diagnostics { uri, version, rev, mut items } => {
                    if docs.is_current(&uri, rev) {
                        // ----- extra diagnostics (propagation) -----
                        if let Some(f) = source.get() {
                            let more =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    f(&uri, rev)
                                }));
                            items.extend(more.unwrap_or_default());
                        }
                        // -----
                        client.publish_diagnostics(uri, items, Some(version)).await;
                    }
                }
                Outgoing::Clear { uri } => client.publish_diagnostics(uri, Vec::new(), None).await,
                Outgoing::Log { typ, message } => client.log_message(typ, message).await,
            }
        }
    });
    Outbox { tx, extra }
}
