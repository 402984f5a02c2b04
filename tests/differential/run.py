#!/usr/bin/env python3
"""Differential test: our verifier against the real Shardy (the oracle).

    python3 tests/differential/run.py --count 600 --seed 1

Generates --count modules with one targeted fault each and --valid valid modules
(gen.py), writes them in `// -----` batches, runs `sdy-lsp opt -split-input-file` and
the oracle (the real Shardy in jaxlib, ../shared/oracle, through oracle_batch.py in the
oracle venv) on every batch, and compares each module's first error: same line, same
message. Modules the oracle rejects count as invalid, the others as valid (a fault that
left the module valid makes it a valid module).

Known differences are classified and listed, not counted as failures:
  drift            the oracle (jaxlib 0.10.2's Shardy) predates a HEAD rule or syntax
                   (../shared/tools/oracle-drift.txt): reduction kinds on unreduced axes,
                   `cannot add new unreduced axis`
  nondeterministic Shardy checks sub-axis rules S14-S19 per axis name in hash-map order:
                   with several broken axis names, which one is reported is not fixed

Standard library only. Exit status 0 when the figures meet the thresholds (invalid:
first error on the oracle's line >= --min-line, same message >= --min-message; valid:
no error), 1 otherwise, 2 when the oracle or the binary is missing.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import gen  # noqa: E402

DIAG_RE = re.compile(r"^(.*?):(\d+):(\d+): (error|warning|note|remark): (.*)$")
SPLIT_RE = re.compile(r"^\s*// -----")

# Drift: HEAD Shardy syntax and rules the oracle predates (oracle-drift.txt).
DRIFT_SYNTAX_RE = re.compile(
    r"unreduced\s*=\s*(max|min)\b|sdy\.(all_reduce|reduce_scatter)\s+(max|min|sum)\b")
DRIFT_MESSAGES = ["cannot add new unreduced axis"]

# Sub-axis rules S14-S19, evaluated per axis name in hash-map order.
SUB_AXIS_RE = re.compile(
    r"(both sub-axis and full-axis are used for axis name: |sub-axis pre-size must be at "
    r"least 1: |sub-axis sizes must be greater than 1: |sub-axis next pre-size \d+ doesn't "
    r"divide the size of the full axis \d+: |sub-axis size is equal to the full axis size: "
    r"|overlapping sub-axes: )(.*)$")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=600, help="modules with a fault")
    ap.add_argument("--valid", type=int, default=None, help="valid modules (default: --count)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=150, help="modules per `// -----` file")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "sdy-lsp"),
                    help="the sdy-lsp binary (built with cargo build --release)")
    ap.add_argument("--oracle-dir", default=os.path.normpath(
        os.path.join(ROOT, "..", "shared", "oracle")))
    ap.add_argument("--venv", default=os.environ.get("SDY_ORACLE_VENV") or os.path.join(
        os.path.expanduser("~"), ".cache", "sdy-oracle-venv"))
    ap.add_argument("--keep", default=None, help="write the batches and a report here")
    ap.add_argument("--show", type=int, default=40, help="differences listed in full")
    ap.add_argument("--scenario", default=None, help="only this scenario (see gen.SCENARIOS)")
    ap.add_argument("--multi", type=float, default=0.5,
                    help="chance that a further construct of a faulty module is faulty too")
    ap.add_argument("--corpus", type=int, default=0,
                    help="also this many token-level mutations of Shardy's lit-test modules")
    ap.add_argument("--corpus-dir", default=os.path.normpath(
        os.path.join(ROOT, "..", "shared", "conformance")))
    ap.add_argument("--min-line", type=float, default=0.99)
    ap.add_argument("--min-message", type=float, default=0.95)
    return ap.parse_args(argv)


# ---------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------


def generate(args):
    """[(case id, scenario, fault, text)]: --count faulty, then --valid valid modules."""
    rng = random.Random(args.seed)
    scenarios = [args.scenario] if args.scenario else list(gen.WEIGHTS)
    weights = [gen.WEIGHTS[s] for s in scenarios]
    cases = []
    n_valid = args.count if args.valid is None else args.valid
    attempts = 0
    for want_fault, n in ((True, args.count), (False, n_valid)):
        made = 0
        while made < n:
            attempts += 1
            if attempts > 50 * (args.count + n_valid) + 1000:
                sys.exit("run.py: the generator keeps skipping; giving up")
            sc = rng.choices(scenarios, weights)[0]
            fault = pick_fault(rng, sc) if want_fault else None
            # More constructs: faulty ones (which error comes first?) or valid ones.
            extra = []
            for _ in range(rng.choice([0, 0, 1, 1, 2])):
                sc2 = rng.choices(scenarios, weights)[0]
                faulty = want_fault and rng.random() < args.multi
                extra.append((sc2, pick_fault(rng, sc2) if faulty else None))
            seed = rng.randrange(1 << 30)
            try:
                text, _ = gen.Generator(seed).module(sc, fault, extra)
            except gen.Skip:
                continue
            if extra:
                fault = "+".join([fault or "-"] + [f or "-" for _, f in extra])
                sc = "+".join([sc] + [s for s, _ in extra])
            cid = f"{'f' if want_fault else 'v'}{made:04d}"
            cases.append((cid, sc, fault or "-", seed, text))
            made += 1
    if args.corpus:
        chunks = gen.corpus_chunks(args.corpus_dir)
        made = 0
        while made < args.corpus and chunks:
            name, text = rng.choice(chunks)
            for _ in range(rng.choice([1, 1, 2])):
                text = gen.mutate_text(rng, text) or text
            cases.append((f"c{made:04d}", "corpus", name, 0, text))
            made += 1
    return cases


def pick_fault(rng, scenario):
    f = rng.choice(gen.SCENARIOS[scenario])
    return "sharding:" + rng.choice(gen.SHARDING_FAULTS) if f == "sharding" else f


def write_batches(cases, batch, directory):
    """Writes the cases as split files; returns [(path, [(case, first line, last line)])]."""
    files = []
    for b in range(0, len(cases), batch):
        part = cases[b:b + batch]
        path = os.path.join(directory, f"batch{b // batch:03d}.mlir")
        lines, spans = [], []
        for k, (cid, sc, fault, seed, text) in enumerate(part):
            if k:
                lines.append("// -----")
            start = len(lines) + 1
            lines.append(f"// case {cid}: {sc} / {fault} (seed {seed})")
            lines.extend(text.rstrip("\n").split("\n"))
            spans.append((cid, start, len(lines)))
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        files.append((path, spans))
    return files


# ---------------------------------------------------------------------------------------
# Running both sides
# ---------------------------------------------------------------------------------------


def chunk_starts(path):
    """1-based first line of each `// -----` chunk of the file (like the split)."""
    starts = [1]
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, start=1):
            if SPLIT_RE.match(line):
                starts.append(i + 1)
    return starts


def run_ours(binary, path):
    """Per chunk: the diagnostics `sdy-lsp opt -split-input-file` prints. A crash is
    reported as an error `CRASH: ...` of the chunk(s) that crash."""
    proc = subprocess.run([binary, "opt", path, "-split-input-file"], capture_output=True,
                          text=True)
    starts = chunk_starts(path)
    if proc.returncode not in (0, 1):
        return run_ours_chunk_by_chunk(binary, path, starts)
    return parse_ours(proc.stderr, starts)


def run_ours_chunk_by_chunk(binary, path, starts):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    for k, start in enumerate(starts):
        end = starts[k + 1] - 1 if k + 1 < len(starts) else len(lines) + 1
        # Keep the file's line numbers: blank lines before the chunk.
        text = "\n" * (start - 1) + "\n".join(lines[start - 1:end - 1]) + "\n"
        with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
            f.write(text)
        proc = subprocess.run([binary, "opt", f.name], capture_output=True, text=True)
        os.unlink(f.name)
        if proc.returncode not in (0, 1):
            why = next((l.strip() for l in proc.stderr.splitlines() if "panicked" in l or
                        l.startswith("thread")), proc.stderr.strip()[:200])
            out.append([{"severity": "error", "line": -1, "col": 0,
                         "message": f"CRASH (exit {proc.returncode}): {why}"}])
        else:
            out.append(parse_ours(proc.stderr, [1])[0])
    return out


def parse_ours(stderr, starts):
    per_chunk = collections.defaultdict(list)
    last = None
    for line in stderr.splitlines():
        m = DIAG_RE.match(line)
        if not m:
            if last is not None:  # a message spanning lines
                last["message"] += "\n" + line
            continue
        n = int(m.group(2))
        d = {"severity": m.group(4), "line": n, "col": int(m.group(3)), "message": m.group(5)}
        per_chunk[bisect.bisect_right(starts, n) - 1].append(d)
        last = d
    return [per_chunk.get(i, []) for i in range(len(starts))]


def run_oracle(args, paths):
    """Per file, per chunk: the oracle's diagnostics."""
    python = os.path.join(args.venv, "bin", "python")
    proc = subprocess.run([python, os.path.join(HERE, "oracle_batch.py"), args.oracle_dir]
                          + paths, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"oracle failed ({proc.returncode}): {proc.stderr[-3000:]}")
    out = collections.defaultdict(dict)
    for line in proc.stdout.splitlines():
        r = json.loads(line)
        out[r["file"]][r["chunk"]] = r["diags"]
    return out


# ---------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------


def first_error(diags):
    return next((d for d in diags if d["severity"] == "error"), None)


def classify(text, ours, oracle):
    """Why a difference is expected: ("drift"|"nondeterministic", reason), or None."""
    if ours and ours["message"].startswith("CRASH"):
        return None  # never excused
    if DRIFT_SYNTAX_RE.search(text):
        return "drift", "reduction kinds on unreduced axes / collectives (bf915fb6, 3cc76c85)"
    if oracle and "integer value too large" in oracle["message"]:
        return "drift", "int64 factor sizes are newer than the oracle (6b53d998)"
    if ours and any(m in ours["message"] for m in DRIFT_MESSAGES) and (
            oracle is None or oracle["line"] != ours["line"] or
            oracle["message"] != ours["message"]):
        return "drift", "`cannot add new unreduced axis` is newer than the oracle (3cc76c85)"
    if ours and oracle and ours["line"] == oracle["line"]:
        a, b = SUB_AXIS_RE.search(ours["message"]), SUB_AXIS_RE.search(oracle["message"])
        if a and b and ours["message"][:a.start()] == oracle["message"][:b.start()]:
            names_a = set(re.findall(r'"([^"]*)"', a.group(2)))
            names_b = set(re.findall(r'"([^"]*)"', b.group(2)))
            if names_a != names_b:
                return "nondeterministic", "sub-axis rules S14-S19 per axis name in hash order"
    return None


def compare(cases, files, ours_by_file, oracle_by_file):
    by_id = {c[0]: c for c in cases}
    results = []
    for path, spans in files:
        ours_chunks = ours_by_file[path]
        oracle_chunks = oracle_by_file.get(path, {})
        for k, (cid, start, end) in enumerate(spans):
            _, sc, fault, seed, text = by_id[cid]
            o = first_error(oracle_chunks.get(k, []))
            u = first_error(ours_chunks[k] if k < len(ours_chunks) else [])
            r = {"case": cid, "scenario": sc, "fault": fault, "seed": seed, "file": path,
                 "start": start, "text": text, "oracle": o, "ours": u,
                 "oracle_all": oracle_chunks.get(k, []),
                 "ours_all": ours_chunks[k] if k < len(ours_chunks) else []}
            if o is None:
                r["kind"] = "valid"
                r["ok"] = u is None
            else:
                r["kind"] = "invalid"
                r["line_ok"] = u is not None and u["line"] == o["line"]
                r["message_ok"] = r["line_ok"] and u["message"] == o["message"]
                r["ok"] = r["message_ok"]
            r["class"] = None if r["ok"] else classify(text, u, o)
            results.append(r)
    return results


def pct(a, b):
    return 100.0 * a / b if b else 100.0


def fmt(d):
    if d is None:
        return "(no error)"
    return f"{d['line']}:{d['col']}: {d['message']}"


def report(args, results, out):
    inv = [r for r in results if r["kind"] == "invalid"]
    val = [r for r in results if r["kind"] == "valid"]
    classified = [r for r in results if not r["ok"] and r["class"]]
    inv_counted = [r for r in inv if r["ok"] or not r["class"]]
    line_ok = sum(1 for r in inv_counted if r["line_ok"])
    msg_ok = sum(1 for r in inv_counted if r["message_ok"])
    val_counted = [r for r in val if r["ok"] or not r["class"]]
    val_ok = sum(1 for r in val_counted if r["ok"])
    intended_valid = sum(1 for r in results if r["case"].startswith("v"))
    faulty_valid = sum(1 for r in val if r["case"].startswith("f"))
    p = lambda s="": print(s, file=out)
    p(f"differential test: seed {args.seed}, {len(results)} modules "
      f"({args.count} with a fault, {intended_valid} generated valid, "
      f"{args.corpus} mutated lit-test modules)")
    p(f"  invalid (the oracle reports an error): {len(inv)}, "
      f"{len(inv) - len(inv_counted)} classified (not counted)")
    p(f"    first error on the oracle's line: {line_ok}/{len(inv_counted)} "
      f"({pct(line_ok, len(inv_counted)):.2f}%)")
    p(f"    identical message:                {msg_ok}/{len(inv_counted)} "
      f"({pct(msg_ok, len(inv_counted)):.2f}%)")
    p(f"  valid (the oracle accepts it): {len(val)} ({faulty_valid} of them faults that "
      f"left the module valid), {len(val) - len(val_counted)} classified (not counted)")
    p(f"    no error from us: {val_ok}/{len(val_counted)}")
    # Per scenario.
    p("\n  per scenario (invalid: line ok / message ok / total; valid: ok / total)")
    for sc in list(gen.SCENARIOS) + ["corpus"]:
        i = [r for r in inv_counted if r["scenario"].split("+")[0] == sc]
        v = [r for r in val_counted if r["scenario"].split("+")[0] == sc]
        if not i and not v:
            continue
        p(f"    {sc:<26} {sum(r['line_ok'] for r in i):>4} / "
          f"{sum(r['message_ok'] for r in i):>4} / {len(i):<4}   "
          f"{sum(r['ok'] for r in v):>4} / {len(v)}")
    # Which rules the invalid modules exercised (the oracle's messages, shortened).
    rules = collections.Counter(
        re.sub(r'"[^"]*"|\d+|<[^>]*>|\'[^\']*\'|@\w+', "_", r["oracle"]["message"])[:90]
        for r in inv)
    p(f"\n  distinct first-error messages (shapes) of the invalid modules: {len(rules)}")
    if classified:
        p(f"\n  classified differences ({len(classified)}):")
        for r in classified:
            p(f"    {r['case']} [{r['class'][0]}: {r['class'][1]}] {r['scenario']}/{r['fault']}")
            p(f"        oracle: {fmt(r['oracle'])}")
            p(f"        ours:   {fmt(r['ours'])}")
    failures = [r for r in results if not r["ok"] and not r["class"]]
    if failures:
        p(f"\n  differences ({len(failures)}; first {args.show} in full):")
        for r in failures[:args.show]:
            p(f"    {r['case']} {r['scenario']}/{r['fault']} (seed {r['seed']}) "
              f"{r['file']}:{r['start']}")
            p(f"        oracle: {fmt(r['oracle'])}")
            p(f"        ours:   {fmt(r['ours'])}")
        for r in failures[args.show:]:
            p(f"    {r['case']} {r['scenario']}/{r['fault']}: oracle {fmt(r['oracle'])[:80]} | "
              f"ours {fmt(r['ours'])[:80]}")
    ok = (pct(line_ok, len(inv_counted)) >= 100 * args.min_line and
          pct(msg_ok, len(inv_counted)) >= 100 * args.min_message and
          val_ok == len(val_counted))
    p(f"\n  result: {'PASS' if ok else 'FAIL'} (thresholds: line >= {100 * args.min_line:g}%, "
      f"message >= {100 * args.min_message:g}%, valid modules: no error)")
    return ok


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.exists(os.path.join(args.venv, "bin", "python")):
        print(f"run.py: no oracle venv at {args.venv} (run ../shared/oracle/setup.sh)",
              file=sys.stderr)
        return 2
    if not os.path.exists(args.bin):
        print(f"run.py: no binary at {args.bin} (cargo build --release)", file=sys.stderr)
        return 2
    cases = generate(args)
    directory = args.keep or tempfile.mkdtemp(prefix="sdy-differential-")
    os.makedirs(directory, exist_ok=True)
    files = write_batches(cases, args.batch, directory)
    paths = [p for p, _ in files]
    # The oracle in the background while our binary runs.
    import concurrent.futures as cf
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        oracle = pool.submit(run_oracle, args, paths)
        ours = {p: run_ours(args.bin, p) for p in paths}
        oracle_by_file = oracle.result()
    results = compare(cases, files, ours, oracle_by_file)
    ok = report(args, results, sys.stdout)
    if args.keep:
        with open(os.path.join(directory, "results.json"), "w", encoding="utf-8") as f:
            json.dump([{k: v for k, v in r.items() if k != "text"} for r in results], f,
                      indent=1)
        with open(os.path.join(directory, "report.txt"), "w", encoding="utf-8") as f:
            report(args, results, f)
        print(f"\n  batches, results.json and report.txt in {directory}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
