//! A panic in a handler or in the analysis is caught, logged (stderr and
//! `window/logMessage`) and answered with an internal error; the server keeps serving.

use super::outgoing::Outbox;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::MessageType;

/// The message of a panic payload.
pub fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Runs `f`, turning a panic into a logged error message.
pub fn guard<T>(what: &str, out: &Outbox, f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = format!("internal error in {what}: {}", message(&*payload));
        out.log(MessageType::ERROR, msg.clone());
        msg
    })
}

/// Runs request work on the blocking pool (off the I/O task) under [`guard`]; a panic
/// becomes a JSON-RPC internal error.
pub async fn blocking<T: Send + 'static>(
    what: &'static str,
    out: &Outbox,
    f: impl FnOnce() -> T + Send + 'static,
) -> jsonrpc::Result<T> {
    let out2 = out.clone();
    match tokio::task::spawn_blocking(move || guard(what, &out2, f)).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(msg)) => Err(internal_error(msg)),
        // The closure runs under catch_unwind: this is a task cancelled at shutdown.
        Err(e) => Err(internal_error(format!("{what}: {e}"))),
    }
}

pub fn internal_error(message: String) -> jsonrpc::Error {
    jsonrpc::Error { code: jsonrpc::ErrorCode::InternalError, message: message.into(), data: None }
}
