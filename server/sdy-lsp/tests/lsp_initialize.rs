//! `initialize`: capabilities and position encoding negotiation.
mod lsp_common;

use expect_test::expect;
use lsp_common::{capabilities, TestServer};
use serde_json::json;

#[tokio::test]
async fn capabilities_default_to_utf16() {
    let mut s = TestServer::new();
    let r = s.initialize(json!({})).await;
    expect![[r##"
        {
          "capabilities": {
            "codeActionProvider": {
              "codeActionKinds": [
                "quickfix",
                "source"
              ]
            },
            "codeLensProvider": {
              "resolveProvider": false
            },
            "completionProvider": {
              "triggerCharacters": [
                "@",
                "%",
                "{",
                ",",
                "\"",
                ".",
                "#",
                "<"
              ]
            },
            "definitionProvider": true,
            "documentSymbolProvider": true,
            "executeCommandProvider": {
              "commands": [
                "sdy.propagate",
                "sdy.showPropagatedModule",
                "sdy.showCommunication"
              ]
            },
            "foldingRangeProvider": true,
            "hoverProvider": true,
            "inlayHintProvider": {
              "resolveProvider": true
            },
            "positionEncoding": "utf-16",
            "referencesProvider": true,
            "renameProvider": true,
            "semanticTokensProvider": {
              "full": {
                "delta": true
              },
              "legend": {
                "tokenModifiers": [
                  "declaration",
                  "subAxis"
                ],
                "tokenTypes": [
                  "namespace",
                  "type",
                  "typeParameter",
                  "parameter",
                  "variable",
                  "property",
                  "enumMember",
                  "function",
                  "keyword",
                  "modifier",
                  "comment",
                  "string",
                  "number",
                  "operator",
                  "decorator"
                ]
              },
              "range": true
            },
            "textDocumentSync": {
              "change": 2,
              "openClose": true,
              "save": true
            }
          },
          "serverInfo": {
            "name": "sdy-lsp",
            "version": "0.1.0"
          }
        }"##]]
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
