//! Which framed messages tower-lsp may see.
//!
//! tower-lsp 0.20 ends its input stream at the first message it cannot decode, which
//! ends the server. So every body is checked here first, by JSON-RPC 2.0's rules and by
//! decoding it exactly as tower-lsp will (its own `Request`/`Response` types, the same
//! serde_json); what would not decode never reaches it:
//!
//! * not UTF-8, not JSON: a Parse error (-32700) answered with id `null`;
//! * JSON that is no request, notification or response (an array or batch, `{}`, a
//!   `jsonrpc` other than `"2.0"`, a `method` that is no string, an `id` that is an
//!   object or a fraction, both `method` and `result`): an Invalid Request (-32600)
//!   answered with its id, or `null` when none can be read;
//! * a valid notification whose params would not decode, and a response that would not
//!   (or has no id): dropped (the caller logs it), as nothing may answer either;
//! * a method of the server's own (`$/sdy-lsp/...`, see [`INTERNAL`]): Method not found.
//!
//! An escaped UTF-16 surrogate outside a pair (`"\ud800"`: valid JSON, but no Unicode
//! text, and serde_json refuses it) becomes `\ufffd`, the replacement character; it is as
//! long, in bytes and in UTF-16 code units, so neither the framing nor positions move.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::ops::Range;
use tower_lsp::jsonrpc::{ErrorCode, Id};

/// Methods of the server's own, between the stdin thread and [`super::gate`]; a client
/// message with such a method is refused.
pub const INTERNAL: &str = "$/sdy-lsp/";

/// What to do with a message.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    Pass,
    /// Answer with an error response instead.
    Answer {
        id: Id,
        code: ErrorCode,
        message: String,
    },
    /// A bad notification or response: nothing to answer.
    Drop(String),
}

/// What the checks read from a message that passed them.
#[derive(Debug, Default)]
pub struct Envelope {
    pub method: Option<String>,
    pub has_id: bool,
    /// The span of `"method"`'s value.
    pub method_span: Range<usize>,
    /// The span of `params.textDocument.text`'s value, if there is one.
    pub text_span: Option<Range<usize>>,
}

/// Reads and checks a message's members: `Err` with the verdict if it is no valid
/// JSON-RPC message. Lone surrogates in `body` are replaced first.
pub fn envelope(body: &mut [u8]) -> Result<Envelope, Verdict> {
    let parse_error = |why: &str| Verdict::Answer {
        id: Id::Null,
        code: ErrorCode::ParseError,
        message: format!("Parse error: {why}"),
    };
    if std::str::from_utf8(body).is_err() {
        return Err(parse_error("the message is not UTF-8"));
    }
    replace_lone_surrogates(body);
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    let m: Members = match serde_json::from_slice(body) {
        Ok(m) if first == Some(&b'{') => m,
        Err(e) if !e.is_data() => return Err(parse_error(&e.to_string())),
        _ => {
            let what = if first == Some(&b'[') {
                "batches are not supported"
            } else {
                "not a request, notification or response object"
            };
            return Err(invalid(Some(Id::Null), what));
        }
    };
    let id = match m.id {
        Some(raw) => match serde_json::from_str::<Id>(raw.get()) {
            Ok(id) => Some(id),
            Err(_) => {
                return Err(invalid(Some(Id::Null), "id must be a string, an integer or null"))
            }
        },
        None => None,
    };
    if m.jsonrpc.and_then(|v| serde_json::from_str::<&str>(v.get()).ok()) != Some("2.0") {
        return Err(invalid(id, "jsonrpc must be \"2.0\""));
    }
    let offset = |raw: &RawValue| {
        let start = raw.get().as_ptr() as usize - body.as_ptr() as usize;
        start..start + raw.get().len()
    };
    let mut env = Envelope { has_id: id.is_some(), ..Envelope::default() };
    match m.method {
        Some(raw) => {
            let Ok(method) = serde_json::from_str::<String>(raw.get()) else {
                return Err(invalid(id, "method must be a string"));
            };
            if m.result.is_some() || m.error.is_some() {
                return Err(invalid(id, "a request has no result or error"));
            }
            if method.starts_with(INTERNAL) {
                return Err(match id {
                    Some(id) => Verdict::Answer {
                        id,
                        code: ErrorCode::MethodNotFound,
                        message: format!("Method not found: {method}"),
                    },
                    None => Verdict::Drop(format!("unknown notification {method}")),
                });
            }
            env.method_span = offset(raw);
            env.text_span = m.params.and_then(|p| p.0).map(offset);
            env.method = Some(method);
        }
        None if m.result.is_none() && m.error.is_none() => {
            return Err(invalid(id, "neither a request (no method) nor a response"));
        }
        None if id.is_none() => return Err(Verdict::Drop("a response without id".into())),
        None => {}
    }
    Ok(env)
}

/// Whether tower-lsp decodes `body` (a message [`envelope`] accepted).
pub fn decodes(body: &[u8], env: &Envelope) -> Verdict {
    /// tower-lsp's own (crate-private) message type, the same way.
    #[derive(Deserialize)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum Message {
        Response(tower_lsp::jsonrpc::Response),
        Request(tower_lsp::jsonrpc::Request),
    }
    // A response must decode as one: tower-lsp would take a broken one for a request
    // (its `method` defaults to "") and answer it.
    let decoded = match env.method {
        None => serde_json::from_slice::<tower_lsp::jsonrpc::Response>(body).map(drop),
        Some(_) => serde_json::from_slice::<Message>(body).map(drop),
    };
    match decoded {
        Ok(()) => Verdict::Pass,
        Err(e) => match &env.method {
            Some(method) if env.has_id => {
                // The id was read before; only the rest can fail.
                let id = serde_json::from_slice::<IdOnly>(body).map_or(Id::Null, |m| m.id);
                invalid(Some(id), &format!("{method}: {e}"))
            }
            _ => Verdict::Drop(format!("cannot decode the message: {e}")),
        },
    }
}

#[derive(Deserialize)]
struct IdOnly {
    id: Id,
}

/// An Invalid Request answer, to `id` or `null` (JSON-RPC answers an object that is no
/// valid request even without an id: it cannot tell that it was meant as a notification).
fn invalid(id: Option<Id>, why: &str) -> Verdict {
    Verdict::Answer {
        id: id.unwrap_or(Id::Null),
        code: ErrorCode::InvalidRequest,
        message: format!("Invalid request: {why}"),
    }
}

/// A message's members. A member that is present is `Some` even when it is `null`.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<TextProbe<'a>>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// `textDocument.text` of any params, read without copying it (a `didOpen`'s text can
/// be tens of megabytes); everything else is skipped, whatever its shape.
struct TextProbe<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for TextProbe<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Probe { key: "textDocument" }).map(TextProbe)
    }
}

/// Finds `key` in a map: `textDocument`, then its `text`.
struct Probe {
    key: &'static str,
}

impl<'de> Visitor<'de> for Probe {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(k) = map.next_key::<std::borrow::Cow<str>>()? {
            if k != self.key {
                map.next_value::<IgnoredAny>()?;
            } else if self.key == "text" {
                found = Some(map.next_value::<&RawValue>()?);
            } else {
                found = map.next_value::<TextDocumentProbe>()?.0;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

struct TextDocumentProbe<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for TextDocumentProbe<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Probe { key: "text" }).map(TextDocumentProbe)
    }
}

/// The code unit of the `\uXXXX` escape at the start of `s`.
pub fn unit_at(s: &[u8]) -> Option<u32> {
    match s {
        [b'\\', b'u', hex @ ..] if hex.len() >= 4 => {
            u32::from_str_radix(std::str::from_utf8(&hex[..4]).ok()?, 16).ok()
        }
        _ => None,
    }
}

pub fn is_high(u: u32) -> bool {
    (0xd800..0xdc00).contains(&u)
}

pub fn is_low(u: u32) -> bool {
    (0xdc00..0xe000).contains(&u)
}

/// Rewrites every escaped surrogate outside a pair in the JSON text `s` to `\ufffd`;
/// returns how many.
pub fn replace_lone_surrogates(s: &mut [u8]) -> usize {
    if memchr::memmem::find(s, b"\\u").is_none() {
        return 0;
    }
    let mut replaced = 0;
    let mut i = 0;
    while let Some(k) = s.get(i..).and_then(|t| memchr::memchr(b'\\', t)) {
        i += k;
        match unit_at(&s[i..]) {
            Some(u)
                if is_high(u)
                    && unit_at(s.get(i + 6..).unwrap_or_default()).is_some_and(is_low) =>
            {
                i += 12
            }
            Some(u) if is_high(u) || is_low(u) => {
                s[i + 2..i + 6].copy_from_slice(b"fffd");
                replaced += 1;
                i += 6;
            }
            Some(_) => i += 6,
            None => i += 2,
        }
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(body: &str) -> Verdict {
        let mut b = body.as_bytes().to_vec();
        match envelope(&mut b) {
            Ok(env) => decodes(&b, &env),
            Err(v) => v,
        }
    }

    fn answer(id: Id, code: ErrorCode, message: &str) -> Verdict {
        Verdict::Answer { id, code, message: message.into() }
    }

    #[test]
    fn messages_tower_lsp_would_refuse_are_answered_or_dropped() {
        use ErrorCode::*;
        let inv = |id, why: &str| answer(id, InvalidRequest, &format!("Invalid request: {why}"));
        let cases = [
            (r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#, Verdict::Pass),
            (r#"{"jsonrpc":"2.0","method":"x","params":[1]}"#, Verdict::Pass),
            (r#"{"jsonrpc":"2.0","id":"a","result":null}"#, Verdict::Pass),
            (r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, Verdict::Pass),
            (r#"  {"jsonrpc":"2.0","id":1,"method":"x","params":"s"}  "#, Verdict::Pass),
            ("{", answer(Id::Null, ParseError, "Parse error: EOF while parsing an object at line 1 column 1")),
            ("", answer(Id::Null, ParseError, "Parse error: EOF while parsing a value at line 1 column 0")),
            ("[]", inv(Id::Null, "batches are not supported")),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#, inv(Id::Null, "batches are not supported")),
            ("17", inv(Id::Null, "not a request, notification or response object")),
            ("{}", inv(Id::Null, "jsonrpc must be \"2.0\"")),
            (r#"{"jsonrpc":"2.0","method":1}"#, inv(Id::Null, "method must be a string")),
            (r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#, inv(Id::Number(3), "jsonrpc must be \"2.0\"")),
            (r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#, inv(Id::Null, "id must be a string, an integer or null")),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, inv(Id::Null, "id must be a string, an integer or null")),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, inv(Id::Number(1), "method must be a string")),
            (r#"{"jsonrpc":"2.0","id":1,"method":"x","result":1}"#, inv(Id::Number(1), "a request has no result or error")),
            (r#"{"jsonrpc":"2.0","id":1}"#, inv(Id::Number(1), "neither a request (no method) nor a response")),
            (r#"{"jsonrpc":"2.0","result":1}"#, Verdict::Drop("a response without id".into())),
            (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#, inv(Id::Null, "not a request, notification or response object")),
            (r#"{"jsonrpc":"2.0","id":2,"method":"$/sdy-lsp/open"}"#, answer(Id::Number(2), MethodNotFound, "Method not found: $/sdy-lsp/open")),
            (r#"{"jsonrpc":"2.0","method":"$/sdy-lsp/answer"}"#, Verdict::Drop("unknown notification $/sdy-lsp/answer".into())),
            (r#"{"jsonrpc":"2.0","id":"s","method":"$/sdy-lsp/answer"}"#, answer(Id::String("s".into()), MethodNotFound, "Method not found: $/sdy-lsp/answer")),
            // serde_json refuses numbers past f64 (JSON-RPC: "an error occurred on the
            // server while parsing the JSON text").
            (r#"{"jsonrpc":"2.0","id":4,"method":"x","params":1e999}"#, answer(Id::Null, ParseError, "Parse error: number out of range at line 1 column 51")),
            (r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#, Verdict::Drop("cannot decode the message: data did not match any variant of untagged enum Kind at line 1 column 45".into())),
        ];
        for (body, expected) in cases {
            assert_eq!(verdict(body), expected, "{body}");
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"x","params":{}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(matches!(verdict(&deep), Verdict::Answer { id: Id::Number(5), .. }));
        let latin1 = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"\xe9\"}".to_vec();
        let mut b = latin1;
        assert_eq!(
            envelope(&mut b).unwrap_err(),
            answer(Id::Null, ErrorCode::ParseError, "Parse error: the message is not UTF-8")
        );
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let mut s = br#""a\ud800 \udc00 \\ud800 \ud83d\ude00 \ud800\u0041""#.to_vec();
        assert_eq!(replace_lone_surrogates(&mut s), 3);
        assert_eq!(s, br#""a\ufffd \ufffd \\ud800 \ud83d\ude00 \ufffd\u0041""#);
        let body = r#"{"jsonrpc":"2.0","method":"x","params":{"textDocument":{"text":"\ud800"}}}"#;
        assert_eq!(verdict(body), Verdict::Pass);
    }

    #[test]
    fn the_text_of_a_did_open_is_found() {
        let body = r#"{"params":{"a":[{"text":1}],"textDocument":{"uri":"u","text":"x\"y"}},"jsonrpc":"2.0","method":"textDocument/didOpen"}"#;
        let mut b = body.as_bytes().to_vec();
        let env = envelope(&mut b).unwrap();
        assert_eq!(&body[env.text_span.unwrap()], r#""x\"y""#);
        assert_eq!(&body[env.method_span], r#""textDocument/didOpen""#);
        assert!(!env.has_id);
        for params in ["[1,{\"text\":2}]", "3", "null", "{\"textDocument\":5}"] {
            let body = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params}}}"#);
            let mut b = body.into_bytes();
            assert_eq!(envelope(&mut b).unwrap().text_span, None, "{params}");
        }
    }
}
