//! The tower-lsp `LanguageServer`: thin handlers that hand work to the documents, the
//! scheduler and the feature modules.
//!
//! Rules every handler follows:
//! * notifications do their work synchronously before any `.await` (tower-lsp runs up to
//!   four handlers interleaved) and never await the client;
//! * requests wait for the analysis of the revision they were sent against (or answer
//!   `ContentModified` when the document moved on), then compute on the blocking pool
//!   under `catch_unwind` ([`Server::with_analysis`]);
//! * a panic anywhere is logged and answered with an internal error.

use super::analysis::Analyzed;
use super::capabilities::{self, ClientConfig, InitOptions};
use super::documents::{ChangeError, Documents};
use super::outgoing::{self, Outbox, Outgoing};
use super::panic::{self, guard};
use super::scheduler::{self, Scheduler, Trigger, WorkerCtx};
use super::{definition, hover, Flag, Options};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, LanguageServer};

pub struct Server {
    docs: Arc<Documents>,
    sched: Arc<Scheduler>,
    out: Outbox,
    config: Arc<OnceLock<ClientConfig>>,
    shutdown: Flag,
}

impl Server {
    /// Must be called within a tokio runtime (it starts the publisher task).
    pub fn new(client: Client, options: Options) -> Server {
        let docs = Arc::new(Documents::default());
        let out = outgoing::start(client, docs.clone());
        let sched = Arc::new(Scheduler::new(options.debounce));
        let config = Arc::new(OnceLock::new());
        let worker = scheduler::start(WorkerCtx {
            docs: docs.clone(),
            sched: sched.clone(),
            out: out.clone(),
            config: config.clone(),
            test_hooks: options.test_hooks,
        });
        if let Err(e) = worker {
            out.log(MessageType::ERROR, format!("cannot start the analysis thread: {e}"));
        }
        Server { docs, sched, out, config, shutdown: Arc::new(AtomicBool::new(false)) }
    }

    /// Set once `shutdown` has been received.
    pub fn shutdown_flag(&self) -> Flag {
        self.shutdown.clone()
    }

    fn config(&self) -> ClientConfig {
        self.config.get().cloned().unwrap_or_default()
    }

    /// Runs `f` on the analysis of the current revision of `uri`, on the blocking pool.
    /// `Ok(None)` if the document is not open.
    pub async fn with_analysis<T: Send + 'static>(
        &self,
        what: &'static str,
        uri: &Url,
        f: impl FnOnce(&Analyzed, &ClientConfig) -> Option<T> + Send + 'static,
    ) -> Result<Option<T>> {
        let Some((rev, mut rx)) = self.docs.subscribe(uri) else { return Ok(None) };
        let analyzed = match rx.wait_for(|a| a.as_ref().is_some_and(|a| a.rev >= rev)).await {
            Ok(a) => a.clone(),
            Err(_) => return Ok(None), // closed meanwhile
        };
        let Some(analyzed) = analyzed.filter(|a| a.rev == rev) else {
            return Err(Error::content_modified());
        };
        let config = self.config();
        panic::blocking(what, &self.out, move || f(&analyzed, &config)).await
    }

    /// `sdy/testPanic`, registered with test hooks only: a request whose handler panics.
    pub async fn test_panic(&self) -> Result<()> {
        panic::blocking("sdy/testPanic", &self.out, || panic!("test panic requested")).await
    }

    /// A notification's work, with a panic caught and logged.
    fn notify<T>(&self, what: &str, f: impl FnOnce() -> T) -> Option<T> {
        guard(what, &self.out, f).ok()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.sched.stop();
    }
}

#[tower_lsp::async_trait]
impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let config = ClientConfig::from_params(&params);
        let options: InitOptions = params
            .initialization_options
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        if let Some(d) = options.debounce() {
            self.sched.set_debounce(d);
        }
        let capabilities = capabilities::server_capabilities(&config);
        let _ = self.config.set(config);
        Ok(InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: "sdy-lsp".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
        })
    }

    async fn shutdown(&self) -> Result<()> {
        self.shutdown.store(true, Ordering::SeqCst);
        self.sched.stop();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        let uri = d.uri.clone();
        let t0 = std::time::Instant::now();
        let opened =
            self.notify("textDocument/didOpen", || self.docs.open(d.uri, d.version, &d.text));
        if opened.is_some() {
            self.sched.request(&uri, Trigger::Open);
        }
        if self.config().trace_timing {
            eprintln!(
                "sdy-lsp: {uri}: opened (parsed) in {:.1} ms",
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        let encoding = self.config().encoding;
        let changes = params.content_changes;
        let applied = self.notify("textDocument/didChange", || {
            self.docs.change(&uri, version, changes, encoding)
        });
        match applied {
            Some(Ok(())) => self.sched.request(&uri, Trigger::Change),
            Some(Err(ChangeError::NotOpen)) => {
                let msg = format!("didChange for a document that is not open: {uri}");
                self.out.log(MessageType::WARNING, msg)
            }
            Some(Err(ChangeError::Recovered(msg))) => {
                let msg = format!("internal error applying an edit to {uri} (re-parsed it): {msg}");
                self.out.log(MessageType::ERROR, msg);
                self.sched.request(&uri, Trigger::Change);
            }
            None => {
                // The document may no longer match the client's text: drop it.
                self.docs.close(&uri);
                self.sched.forget(&uri);
                self.out.send(Outgoing::Clear { uri: uri.clone() });
                let msg = format!("closed {uri} after an internal error; reopen it");
                self.out.log(MessageType::ERROR, msg);
            }
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.docs.close(&uri);
        self.sched.forget(&uri);
        self.out.send(Outgoing::Clear { uri });
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let pos = p.position;
        let uri = p.text_document.uri;
        self.with_analysis("textDocument/hover", &uri, move |a, c| hover::hover(a, c, pos)).await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        let (uri, pos) = (p.text_document.uri, p.position);
        let u = uri.clone();
        self.with_analysis("textDocument/definition", &uri, move |a, c| {
            definition::definition(a, c, &u, pos)
        })
        .await
    }
}
