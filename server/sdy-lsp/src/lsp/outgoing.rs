//! Server-to-client notifications, sent in order by one task.
//!
//! The worker thread and the handlers never talk to the client directly: they queue a
//! message here and go on (a notification handler never awaits the client). The
//! publisher drops diagnostics of a revision that is no longer current, so stale results
//! never reach the editor, and queue order keeps publications of one document in order.

use super::documents::Documents;
use std::sync::Arc;
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

/// A handle to queue messages for the client.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Outgoing>,
}

impl Outbox {
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
    tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            match msg {
                Outgoing::Diagnostics { uri, version, rev, items } => {
                    if docs.is_current(&uri, rev) {
                        client.publish_diagnostics(uri, items, Some(version)).await;
                    }
                }
                Outgoing::Clear { uri } => client.publish_diagnostics(uri, Vec::new(), None).await,
                Outgoing::Log { typ, message } => client.log_message(typ, message).await,
            }
        }
    });
    Outbox { tx }
}
