"""Differential test of StableHLO-level mistakes: our `opt` against the real MLIR /
StableHLO / Shardy parser and verifiers (the oracle).

    python3 tests/differential/mutants/run.py --count 1200 --seed 1

Modules (gen.py): every source op unchanged (must give no error on both sides) and
--count mutants. Both sides run on `// -----` batches (the shared runner's helpers,
../run.py); for every module the oracle rejects, our first error must be on the
oracle's line (>= --min-line) with the same message (>= --min-message); for every
module it accepts, we must report nothing. Sources the oracle rejects unchanged are
left out with their mutants. Differences are listed grouped by the oracle's message.

Also `--files`: `sdy-lsp check` on the corpus files and the conformance inputs the
oracle accepts must report no error (false positives), see `--help`.

Standard library only. Exit status 0 when the thresholds are met.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import importlib.util
import json
import os
import re
import sys
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import run as shared  # noqa: E402  (../run.py, which imports ../gen.py as `gen`)

_spec = importlib.util.spec_from_file_location("mutants_gen", os.path.join(HERE, "gen.py"))
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=1200, help="mutants")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=200, help="modules per `// -----` file")
    ap.add_argument("--bin", default=os.path.join(gen.ROOT, "target", "release", "sdy-lsp"))
    ap.add_argument("--oracle-dir", default=os.path.join(gen.SHARED, "oracle"))
    ap.add_argument("--venv", default=os.environ.get(
        "SDY_ORACLE_VENV", os.path.expanduser("~/.cache/sdy-oracle-venv")))
    ap.add_argument("--keep", default=None, help="write the batches and a report here")
    ap.add_argument("--show", type=int, default=40, help="differences listed in full")
    ap.add_argument("--min-line", type=float, default=0.99)
    ap.add_argument("--min-message", type=float, default=0.95)
    ap.add_argument("--files", action="store_true",
                    help="instead: no error from `sdy-lsp opt` on every corpus file and on "
                         "every conformance chunk the oracle accepts")
    return ap.parse_args(argv)


def no_false_positives(args):
    """`sdy-lsp opt -split-input-file` on the corpus files (the oracle accepts them all)
    and on the conformance inputs, chunk by chunk: no error where the oracle has none."""
    import glob
    import gzip
    work = tempfile.mkdtemp(prefix="sdy-mutants-files-")
    corpus = []
    for path in sorted(glob.glob(os.path.join(gen.SHARED, "corpus", "**", "*.mlir*"),
                              recursive=True)):
        if path.endswith(".gz"):
            out = os.path.join(work, os.path.basename(path)[:-3])
            with gzip.open(path, "rt", encoding="utf-8") as f, open(out, "w") as g:
                g.write(f.read())
            path = out
        corpus.append(path)
    bad = 0
    for path in corpus:
        proc = subprocess.run([args.bin, "check", path], capture_output=True, text=True)
        errors = [l for l in proc.stdout.splitlines() + proc.stderr.splitlines()
                  if ": error: " in l]
        print(f"  corpus {os.path.basename(path)}: {len(errors)} errors")
        bad += bool(errors)
    conf = sorted(glob.glob(os.path.join(gen.SHARED, "conformance*", "**", "*.mlir"),
                            recursive=True))
    oracle = shared.run_oracle(args, conf)
    chunks = clean = drift = 0
    for path in conf:
        ours = shared.run_ours(args.bin, path)
        for k, diags in oracle.get(path, {}).items():
            if shared.first_error(diags) is not None:
                continue
            chunks += 1
            mine = shared.first_error(ours[k] if k < len(ours) else [])
            if mine is None:
                clean += 1
            elif any(m in mine["message"] for m in shared.DRIFT_MESSAGES):
                chunks -= 1
                drift += 1
            else:
                print(f"  {os.path.relpath(path, gen.SHARED)} chunk {k}: {shared.fmt(mine)}")
    print(f"  conformance chunks the oracle accepts: {chunks}; no error from us: {clean} "
          f"({drift} more left out: HEAD rules newer than the oracle, oracle-drift.txt)")
    return 0 if not bad and clean == chunks else 1


def shape_of(message):
    """A message with its numbers, types and names blanked: the rule it comes from."""
    return re.sub(r"'[^']*'|\d+|%\w+|\"[^\"]*\"", "_", message)[:100]


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for what, path in (("oracle venv", os.path.join(args.venv, "bin", "python")),
                       ("binary", args.bin)):
        if not os.path.exists(path):
            print(f"run.py: no {what} at {path}", file=sys.stderr)
            return 2
    if args.files:
        return no_false_positives(args)
    valid = gen.valid_modules()
    muts = gen.mutants(args.seed, args.count)
    cases = [(cid, kind, src, 0, text) for cid, kind, src, text in valid + muts]
    directory = args.keep or tempfile.mkdtemp(prefix="sdy-mutants-")
    os.makedirs(directory, exist_ok=True)
    files = shared.write_batches(cases, args.batch, directory)
    paths = [p for p, _ in files]
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        oracle = pool.submit(shared.run_oracle, args, paths)
        ours = {p: shared.run_ours(args.bin, p) for p in paths}
        oracle_by_file = oracle.result()
    results = shared.compare(cases, files, ours, oracle_by_file)
    # Sources the oracle rejects as they are (e.g. ops of newer StableHLO) are left out.
    bad_sources = {r["fault"] for r in results
                   if r["case"].startswith("v") and r["kind"] == "invalid"}
    results = [r for r in results if r["fault"] not in bad_sources]
    ok = report(args, results, bad_sources, sys.stdout)
    if args.keep:
        with open(os.path.join(directory, "report.txt"), "w", encoding="utf-8") as f:
            report(args, results, bad_sources, f)
        with open(os.path.join(directory, "results.json"), "w", encoding="utf-8") as f:
            json.dump([{"case": r["case"], "kind": r["scenario"], "ok": r["ok"],
                        "op": r["text"].split("\n")[1], "oracle": r["oracle"],
                        "ours": r["ours"]} for r in results], f, indent=1)
    return 0 if ok else 1


def report(args, results, bad_sources, out):
    p = lambda s="": print(s, file=out)
    inv = [r for r in results if r["kind"] == "invalid"]
    val = [r for r in results if r["kind"] == "valid"]
    muts = [r for r in results if r["case"].startswith("m")]
    line_ok = sum(r["line_ok"] for r in inv)
    msg_ok = sum(r["message_ok"] for r in inv)
    val_ok = sum(r["ok"] for r in val)
    p(f"mutant differential: seed {args.seed}, {len(muts)} mutants, "
      f"{len(results) - len(muts)} unchanged source ops "
      f"({len(bad_sources)} sources the oracle rejects left out)")
    p(f"  invalid (the oracle reports an error): {len(inv)}")
    p(f"    first error on the oracle's line: {line_ok}/{len(inv)} "
      f"({shared.pct(line_ok, len(inv)):.2f}%)")
    p(f"    identical message:                {msg_ok}/{len(inv)} "
      f"({shared.pct(msg_ok, len(inv)):.2f}%)")
    p(f"  valid (the oracle accepts it): {len(val)}; no error from us: {val_ok}")
    p("\n  per mutation (invalid: line ok / message ok / total; valid: ok / total)")
    for kind in sorted({r["scenario"] for r in results}):
        i = [r for r in inv if r["scenario"] == kind]
        v = [r for r in val if r["scenario"] == kind]
        p(f"    {kind:<20} {sum(r['line_ok'] for r in i):>5} / "
          f"{sum(r['message_ok'] for r in i):>5} / {len(i):<5} "
          f"{sum(r['ok'] for r in v):>5} / {len(v)}")
    fails = [r for r in results if not r["ok"]]
    by_cause = collections.defaultdict(list)
    for r in fails:
        key = (shape_of(r["oracle"]["message"]) if r["oracle"] else "(oracle: no error)")
        by_cause[key].append(r)
    if fails:
        p(f"\n  differences ({len(fails)}) by the oracle's message:")
        for key, rs in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
            p(f"    {len(rs):>4}  {key}")
        p(f"\n  first {args.show} in full:")
        for r in fails[:args.show]:
            p(f"    {r['case']} {r['scenario']} {r['file']}:{r['start']}")
            p(f"        oracle: {shared.fmt(r['oracle'])}")
            p(f"        ours:   {shared.fmt(r['ours'])}")
    ok = (shared.pct(line_ok, len(inv)) >= 100 * args.min_line and
          shared.pct(msg_ok, len(inv)) >= 100 * args.min_message and val_ok == len(val))
    p(f"\n  result: {'PASS' if ok else 'FAIL'} (line >= {100 * args.min_line:g}%, "
      f"message >= {100 * args.min_message:g}%, valid: no error)")
    return ok


if __name__ == "__main__":
    sys.exit(main())
