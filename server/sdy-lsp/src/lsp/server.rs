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
use super::propagate::{self, Propagator, RunOutcome};
use super::scheduler::{self, Scheduler, Trigger, WorkerCtx};
use super::{code_lens, inlay_hints};
use super::{completion, semantic_tokens};
use super::{definition, hover, Flag, Options};
use super::{references, symbols};
use serde_json::Value;
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
    /// The last semantic tokens sent per document, for deltas.
    tokens: Arc<semantic_tokens::TokenCache>,
    /// Propagation runs and results (propagate.rs).
    prop: Arc<Propagator>,
}

impl Server {
    /// Must be called within a tokio runtime (it starts the publisher task).
    pub fn new(client: Client, options: Options) -> Server {
        let docs = Arc::new(Documents::default());
        let out = outgoing::start(client.clone(), docs.clone());
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
        let tokens = Arc::default();
        let prop = Propagator::start(
            docs.clone(),
            out.clone(),
            client,
            config.clone(),
            options.test_hooks,
        );
        let shutdown = Arc::new(AtomicBool::new(false));
        Server { docs, sched, out, config, shutdown, tokens, prop }
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

    /// `sdy/testText`, registered with test hooks only: the server's text of a document,
    /// for tests that check it against the client's.
    pub async fn test_text(&self, params: TextDocumentIdentifier) -> Result<Option<String>> {
        Ok(self.docs.text(&params.uri))
    }

    /// A notification's work, with a panic caught and logged.
    fn notify<T>(&self, what: &str, f: impl FnOnce() -> T) -> Option<T> {
        guard(what, &self.out, f).ok()
    }
}

/// A request that cannot be carried out, with the reason for the user (LSP's
/// `RequestFailed`).
fn request_failed(reason: String) -> Error {
    Error {
        code: tower_lsp::jsonrpc::ErrorCode::ServerError(-32803),
        message: reason.into(),
        data: None,
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.sched.stop();
        self.prop.stop();
    }
}

#[tower_lsp::async_trait]
impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let config = ClientConfig::from_params(&params);
        let options: InitOptions = params
            .initialization_options
            .clone()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        if let Some(d) = options.debounce() {
            self.sched.set_debounce(d);
        }
        self.prop.initialize(&params);
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
        self.prop.stop();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        let uri = d.uri.clone();
        let text = d.text;
        let t0 = std::time::Instant::now();
        let received = self.config().trace_timing.then(crate::cpu::memory);
        let opened = self.notify("textDocument/didOpen", || self.docs.open(d.uri, d.version, text));
        if opened.is_some() {
            self.sched.request(&uri, Trigger::Open);
            self.prop.on_open(&uri);
        }
        if self.config().trace_timing {
            eprintln!(
                "sdy-lsp: {uri}: opened (parsed) in {:.1} ms, {}; on receipt {}",
                t0.elapsed().as_secs_f64() * 1e3,
                crate::cpu::memory(),
                received.unwrap_or_default()
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
            Some(Ok(())) => {
                self.sched.request(&uri, Trigger::Change);
                self.prop.on_change(&uri);
            }
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
        self.tokens.forget(&uri);
        self.sched.forget(&uri);
        self.prop.forget(&uri);
        self.out.send(Outgoing::Clear { uri });
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.prop.on_save(&params.text_document.uri);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        self.prop.configure(&params.settings);
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let (uri, range) = (params.text_document.uri, params.range);
        let (prop, u) = (self.prop.clone(), uri.clone());
        let (result, settings) = (prop.result(&uri), prop.settings.get());
        self.with_analysis("textDocument/inlayHint", &uri, move |a, c| {
            inlay_hints::hints(a, c, &u, range, result.as_deref(), &settings, &prop)
        })
        .await
    }

    async fn inlay_hint_resolve(&self, hint: InlayHint) -> Result<InlayHint> {
        let Some(uri) = inlay_hints::hint_uri(&hint) else { return Ok(hint) };
        let result = self.prop.result(&uri);
        let h = hint.clone();
        let resolved = self.with_analysis("inlayHint/resolve", &uri, move |a, c| {
            Some(inlay_hints::resolve(a, c, h, result.as_deref()))
        });
        match resolved.await {
            Ok(Some(h)) => Ok(h),
            Ok(None) | Err(_) => Ok(hint),
        }
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        let (result, settings, u) = (self.prop.result(&uri), self.prop.settings.get(), uri.clone());
        self.with_analysis("textDocument/codeLens", &uri, move |a, c| {
            code_lens::code_lenses(a, c, &u, result.as_deref(), &settings)
        })
        .await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let command = params.command.as_str();
        if ![propagate::PROPAGATE, propagate::SHOW_MODULE, propagate::SHOW_COMMUNICATION]
            .contains(&command)
        {
            return Err(Error::invalid_params(format!("unknown command {command:?}")));
        }
        let (uri, strategy) =
            propagate::command_args(&params.arguments).map_err(Error::invalid_params)?;
        let strategy = strategy.unwrap_or(self.prop.settings.get().strategy);
        if command == propagate::PROPAGATE {
            let outcome = self.prop.run(&uri, strategy).await;
            return Ok(Some(propagate::propagate_answer(&outcome)));
        }
        // The module of the current text: the latest run if it is fresh, else a new one.
        let fresh = self
            .prop
            .result(&uri)
            .filter(|r| r.strategy == strategy && self.docs.is_current(&uri, r.rev));
        let result = match fresh {
            Some(r) => r,
            None => match self.prop.run(&uri, strategy).await {
                RunOutcome::Done(r) => r,
                other => {
                    let answer = propagate::propagate_answer(&other);
                    let why = answer["message"].as_str().unwrap_or("not propagated").to_string();
                    return Err(request_failed(why));
                }
            },
        };
        let communication = command == propagate::SHOW_COMMUNICATION;
        let bandwidth = self.prop.settings.get().bandwidth;
        let text = panic::blocking("sdy.showPropagatedModule", &self.out, move || {
            if communication {
                propagate::communication_module(&result, &bandwidth)
            } else {
                propagate::printed_module(&result)
            }
        });
        Ok(Some(Value::String(text.await?)))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let pos = p.position;
        let (uri, result) = (p.text_document.uri.clone(), self.prop.result(&p.text_document.uri));
        let (u, bandwidth) = (uri.clone(), self.prop.settings.get().bandwidth);
        self.with_analysis("textDocument/hover", &uri, move |a, c| {
            hover::hover(a, c, &u, result.as_deref(), &bandwidth, pos)
        })
        .await
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

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let p = params.text_document_position;
        let (uri, pos) = (p.text_document.uri, p.position);
        let include = params.context.include_declaration;
        let u = uri.clone();
        self.with_analysis("textDocument/references", &uri, move |a, c| {
            references::references(a, c, &u, pos, include)
        })
        .await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let (uri, pos) = (params.text_document.uri, params.position);
        let r = self.with_analysis("textDocument/prepareRename", &uri, move |a, c| {
            references::prepare_rename(a, c, pos)
        });
        r.await?.transpose().map_err(request_failed)
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let p = params.text_document_position;
        let (uri, pos, new_name) = (p.text_document.uri, p.position, params.new_name);
        let u = uri.clone();
        let r = self.with_analysis("textDocument/rename", &uri, move |a, c| {
            references::rename(a, c, &u, pos, &new_name)
        });
        r.await?.transpose().map_err(request_failed)
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let uri = params.text_document.uri;
        let u = uri.clone();
        self.with_analysis("textDocument/documentSymbol", &uri, move |a, c| {
            symbols::document_symbols(a, c, &u)
        })
        .await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let uri = params.text_document.uri;
        self.with_analysis("textDocument/foldingRange", &uri, move |a, _| {
            symbols::folding_ranges(a)
        })
        .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        let (uri, pos) = (p.text_document.uri, p.position);
        self.with_analysis("textDocument/completion", &uri, move |a, c| {
            completion::completion(a, c, pos)
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri;
        let (u, cache) = (uri.clone(), self.tokens.clone());
        self.with_analysis("textDocument/semanticTokens/full", &uri, move |a, c| {
            semantic_tokens::full(a, c, &u, &cache)
        })
        .await
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri;
        let previous = params.previous_result_id;
        let (u, cache) = (uri.clone(), self.tokens.clone());
        self.with_analysis("textDocument/semanticTokens/full/delta", &uri, move |a, c| {
            semantic_tokens::full_delta(a, c, &u, &previous, &cache)
        })
        .await
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let (uri, range) = (params.text_document.uri, params.range);
        self.with_analysis("textDocument/semanticTokens/range", &uri, move |a, c| {
            semantic_tokens::range(a, c, range)
        })
        .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri.clone();
        self.with_analysis("textDocument/codeAction", &uri, move |a, c| {
            super::code_actions::code_actions(a, c, &params)
        })
        .await
    }
}
