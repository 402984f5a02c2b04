//! `initialize`: capabilities and position encoding negotiation.
mod lsp_common;

use expect_test::expect;
use lsp_common::{capabilities, TestServer};
use serde_json::json;

#[tokio::test]
async fn capabilities_default_to_utf16() {
    let mut s = TestServer::new();
    let r = s.initialize(json!({})).await;
    expect![[r#"
        {
          "capabilities": {
            "definitionProvider": true,
            "hoverProvider": true,
            "positionEncoding": "utf-16",
            "textDocumentSync": {
              "change": 2,
              "openClose": true
            }
          },
          "serverInfo": {
            "name": "sdy-lsp",
            "version": "0.1.0"
          }
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&r).unwrap());
}

#[tokio::test]
async fn utf8_when_offered() {
    for (offer, expected) in [
        (&["utf-8", "utf-16"][..], "utf-8"),
        (&["utf-32", "utf-8"][..], "utf-8"),
        (&["utf-16"][..], "utf-16"),
        (&["utf-32"][..], "utf-16"),
    ] {
        let mut s = TestServer::new();
        let r = s.initialize(capabilities(offer)).await;
        assert_eq!(r["capabilities"]["positionEncoding"], expected, "offered {offer:?}");
    }
}
