//! The service tower-lsp calls over stdio: the server's [`tower_lsp::LspService`] behind
//! a gate that
//!
//! * answers for the stdin thread: an error response it decided on (a message that must
//!   not reach tower-lsp, `validate.rs`) arrives as a notification of [`ANSWER`] and is
//!   turned into that response, in order with every other response;
//! * trades a text set aside (`aside.rs`) back into its `didOpen`;
//! * answers a request nobody answered (tower-lsp ignores unknown `$/` methods even with
//!   an id) with Method not found: JSON-RPC answers every request;
//! * notices `exit` on its way in (tower-lsp 0.20 keeps reading stdin after `exit` and
//!   only stops at its end, tower-lsp #399).
//!
//! Only the stdin thread can send [`ANSWER`] and [`super::aside::OPEN`]: it refuses
//! client messages with the server's own methods ([`super::validate::INTERNAL`]).

use super::aside;
use futures::future::{self, BoxFuture, FutureExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::task::{Context, Poll};
use tower::Service;
use tower_lsp::jsonrpc::{Error, ErrorCode, Id, Request, Response};

/// The method of an error response the stdin thread asks for.
pub const ANSWER: &str = "$/sdy-lsp/answer";

/// The params of [`ANSWER`].
#[derive(Serialize, Deserialize)]
pub struct Answer {
    pub id: Id,
    pub code: i64,
    pub message: String,
}

impl Answer {
    /// The whole framed message that asks for this answer.
    pub fn framed(&self) -> Vec<u8> {
        let body = serde_json::json!({"jsonrpc": "2.0", "method": ANSWER, "params": self});
        let body = body.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }
}

pub struct Gate<S> {
    inner: S,
    on_exit: Option<Box<dyn FnOnce() + Send>>,
}

impl<S> Gate<S> {
    /// `on_exit` runs when `exit` comes in.
    pub fn new(inner: S, on_exit: impl FnOnce() + Send + 'static) -> Gate<S> {
        Gate { inner, on_exit: Some(Box::new(on_exit)) }
    }
}

impl<S> Service<Request> for Gate<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let req = match req.method() {
            ANSWER => return future::ok(answer(req)).boxed(),
            aside::OPEN => match with_text(req) {
                Some(req) => req,
                None => return future::ok(None).boxed(),
            },
            "exit" => {
                if let Some(f) = self.on_exit.take() {
                    f();
                }
                req
            }
            _ => req,
        };
        let unanswered = req.id().cloned().map(|id| (id, req.method().to_string()));
        let fut = self.inner.call(req);
        async move {
            let res = fut.await?;
            Ok(match (res, unanswered) {
                (None, Some((id, method))) => {
                    let mut e = Error::method_not_found();
                    e.data = Some(Value::from(method));
                    Some(Response::from_error(id, e))
                }
                (res, _) => res,
            })
        }
        .boxed()
    }
}

fn answer(req: Request) -> Option<Response> {
    let (_, _, params) = req.into_parts();
    let a: Answer = serde_json::from_value(params?).ok()?;
    let e = Error { code: ErrorCode::from(a.code), message: a.message.into(), data: None };
    Some(Response::from_error(a.id, e))
}

/// The `didOpen` with its text set aside back in place.
fn with_text(req: Request) -> Option<Request> {
    let (_, _, params) = req.into_parts();
    let mut params = params?;
    let slot = params.get_mut("textDocument")?.get_mut("text")?;
    let text = aside::take(slot.as_u64()?)?;
    *slot = Value::String(text);
    Some(Request::build("textDocument/didOpen").params(params).finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type Seen = std::sync::Arc<std::sync::Mutex<Vec<Request>>>;

    /// A service that answers nothing and records the requests it got.
    struct Recorder(Seen);

    impl Service<Request> for Recorder {
        type Response = Option<Response>;
        type Error = ();
        type Future = future::Ready<Result<Option<Response>, ()>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ()>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, req: Request) -> Self::Future {
            self.0.lock().unwrap().push(req);
            future::ready(Ok(None))
        }
    }

    fn recorder() -> (Recorder, Seen) {
        let seen = Seen::default();
        (Recorder(seen.clone()), seen)
    }

    fn call(gate: &mut Gate<Recorder>, req: Request) -> Option<Response> {
        futures::executor::block_on(gate.call(req)).unwrap()
    }

    /// The text set aside goes into the `didOpen` the server routes, whatever becomes of
    /// it there: nothing stays held (a rejected `didOpen` used to keep its text).
    #[test]
    fn a_text_set_aside_is_traded_back_once() {
        let (inner, seen) = recorder();
        let mut gate = Gate::new(inner, || {});
        let n = 1 << 40;
        aside::keep(n, "module {}".into());
        let params =
            json!({"textDocument": {"uri": "file:///a", "version": "not a number", "text": n}});
        let req = Request::build(aside::OPEN).params(params).finish();
        assert!(call(&mut gate, req).is_none());
        assert_eq!(aside::take(n), None);
        let got = seen.lock().unwrap().pop().unwrap();
        assert_eq!(got.method(), "textDocument/didOpen");
        assert_eq!(got.params().unwrap()["textDocument"]["text"], "module {}");
    }

    #[test]
    fn answers_and_unanswered_requests() {
        let (inner, _) = recorder();
        let mut gate = Gate::new(inner, || {});
        let a = Answer { id: Id::Number(3), code: -32600, message: "Invalid request: x".into() };
        let req = Request::build(ANSWER).params(serde_json::to_value(&a).unwrap()).finish();
        let res = call(&mut gate, req).unwrap();
        assert_eq!(res.id(), &Id::Number(3));
        assert_eq!(res.error().unwrap().message, "Invalid request: x");
        // A request the server left unanswered (tower-lsp: an unknown `$/` method).
        let req = Request::build("$/unknown").id(9i64).finish();
        let res = call(&mut gate, req).unwrap();
        assert_eq!(res.error().unwrap().code, ErrorCode::MethodNotFound);
        // A notification stays unanswered.
        assert!(call(&mut gate, Request::build("$/unknown").finish()).is_none());
    }

    #[test]
    fn exit_is_noticed() {
        let (inner, _) = recorder();
        let (tx, rx) = std::sync::mpsc::channel();
        let mut gate = Gate::new(inner, move || tx.send(()).unwrap());
        call(&mut gate, Request::build("exit").finish());
        assert!(rx.try_recv().is_ok());
    }
}
