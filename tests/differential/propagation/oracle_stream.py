#!/usr/bin/env python3
"""The oracle (oracle_opt.py's parse + pass pipeline) over a `// -----` file, one JSON
line per chunk, flushed as each chunk finishes:

    VENV/bin/python oracle_stream.py ORACLE_OPT FILE START [sdy_opt flags...]

Chunks before START are skipped (their lines still count, so diagnostics keep the
whole file's line numbers). When the real Shardy crashes on a chunk (a segfault kills
the process), the caller knows which one from the lines already written and starts
again after it: a crash costs one restart, not a bisection of the batch.
Each line: {"i": chunk index, "out": printed module or "" if it failed, "err": stderr}.
"""

import importlib.util
import json
import os
import sys


def main():
    oracle_path, path, start, flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    spec = importlib.util.spec_from_file_location("oracle_opt", oracle_path)
    opt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(opt)
    oc = opt.oc
    opts = opt.parse_args([path] + flags)
    with open(path, encoding="utf-8") as f:
        chunks = oc.split_input(f.read(), True)
    for i, chunk in enumerate(chunks):
        if i < start:
            continue
        ctx = oc.make_context()
        pipeline = opts["pipeline"]
        if pipeline is None and opts["passes"]:
            pipeline = opt.build_pipeline(ctx, opts["passes"])
        module, diags = oc.parse_module(ctx, chunk.text, chunk.line_offset)
        if module is not None and pipeline:
            diags += oc.run_pipeline(ctx, module, pipeline, chunk.line_offset)
        failed = module is None or any(d.severity == "error" for d in diags)
        err = "".join(opt.format_diag(d, path) + "\n" for d in opt.flatten(diags, False))
        out = "" if failed else oc.module_to_text(module)
        sys.stdout.write(json.dumps({"i": i, "out": out, "err": err}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
