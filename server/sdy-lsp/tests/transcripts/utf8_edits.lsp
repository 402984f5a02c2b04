# UTF-8 positions: diagnostics of a split file, then an incremental edit (byte columns)
# that fixes the unknown axis after "é😀" on line 4.
-> {"id": 1, "method": "initialize", "params": {"capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}, "textDocument": {"publishDiagnostics": {"relatedInformation": true}}}}}
<- #1
-> {"method": "initialized", "params": {}}
-> open file:///w/errors.mlir errors.mlir
<- textDocument/publishDiagnostics
-> {"method": "textDocument/didChange", "params": {"textDocument": {"uri": "file:///w/errors.mlir", "version": 2}, "contentChanges": [{"range": {"start": {"line": 4, "character": 107}, "end": {"line": 4, "character": 108}}, "text": "y"}]}}
<- textDocument/publishDiagnostics
-> {"id": 2, "method": "shutdown"}
<- #2
-> {"method": "exit"}
exit-within 1000
