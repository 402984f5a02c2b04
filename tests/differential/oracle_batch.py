"""Runs the real Shardy's parser + verifier (the oracle) on every `// -----` chunk of
some files, in one process, and prints one JSON object per chunk:

    {"file": F, "chunk": I, "diags": [{"severity", "line", "col", "message"}, ...]}

with whole-file line numbers. Run it with the oracle venv's Python (run.py does):

    $SDY_ORACLE_VENV/bin/python oracle_batch.py ORACLE_DIR FILE...

ORACLE_DIR is ../shared/oracle (its oracle_common.py: the same context, split and
diagnostic conversion as the oracle's verify.py).
"""

import json
import sys


def main():
    oracle_dir, files = sys.argv[1], sys.argv[2:]
    sys.dont_write_bytecode = True
    sys.path.insert(0, oracle_dir)
    import oracle_common as oc  # noqa: E402

    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for i, chunk in enumerate(oc.split_input(text, True)):
            ctx = oc.make_context()
            _, diags = oc.parse_module(ctx, chunk.text, chunk.line_offset)
            out = [{"severity": d.severity, "line": d.line, "col": d.col,
                    "message": d.message, "where": d.raw_location} for d in diags]
            print(json.dumps({"file": path, "chunk": i, "diags": out}), flush=True)


if __name__ == "__main__":
    main()
