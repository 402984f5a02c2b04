# initialize (UTF-16), open, diagnostics, hover, definition, shutdown, exit with stdin
# still open: the process must end within a second.
args serve
-> {"id": 1, "method": "initialize", "params": {"capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}, "publishDiagnostics": {"relatedInformation": true}}}}}
<- #1
-> {"method": "initialized", "params": {}}
-> open file:///w/nav.mlir nav.mlir
<- textDocument/publishDiagnostics
# %1 = stablehlo.add ... (line 4) and @mesh after "é😀" on line 2 (UTF-16 column 88)
-> {"id": 2, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/nav.mlir"}, "position": {"line": 4, "character": 3}}}
<- #2
-> {"id": 3, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/nav.mlir"}, "position": {"line": 2, "character": 88}}}
<- #3
-> {"id": 4, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/nav.mlir"}, "position": {"line": 2, "character": 88}}}
<- #4
-> {"id": 5, "method": "shutdown"}
<- #5
-> {"method": "exit"}
exit-within 1000
