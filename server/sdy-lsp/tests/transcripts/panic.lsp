# With test hooks: a panicking request is answered with an internal error and logged,
# the server goes on serving; `exit` without `shutdown` ends it with code 1.
env SDY_LSP_TEST_HOOKS=1
-> {"id": 1, "method": "initialize", "params": {"capabilities": {}}}
<- #1
-> {"method": "initialized", "params": {}}
-> {"id": 2, "method": "sdy/testPanic"}
<- #2, window/logMessage
-> open file:///w/nav.mlir nav.mlir
<- textDocument/publishDiagnostics
-> {"id": 3, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/nav.mlir"}, "position": {"line": 4, "character": 3}}}
<- #3
-> {"method": "exit"}
exit-within 1000
