#!/usr/bin/env python3
"""Differential propagation test: random programs (gen.py) through the oracle (real
Shardy, ../../../../shared/oracle/oracle_opt.py) and `sdy-lsp opt`, compared chunk by
chunk.

  run.py --bin PATH/TO/sdy-lsp [--seed S] [--count N] [--pass FLAG ...] [--show K] [--gen GEN.py]
         [--stderr] [--export] [--jobs J]

For each pass flag (default: the four strategy passes and the pipeline) prints the
number of programs the oracle accepts, how many of those print exactly the same, and
how many have the same shardings (every `#sdy.sharding...`/`<@mesh...>` in order), and
over all printed shardings of the oracle, how many sdy-lsp prints identically (aligned
with difflib, so one extra or missing sharding does not shift the rest), and lists the
programs that differ. The oracle runs through oracle_stream.py, one JSON line per
program: where the real Shardy crashes (it segfaults on some programs), the batch goes
on after that program, which is counted as an oracle crash and left out.
Exit status 0 whatever the score (it is a measurement). Standard library only.
"""

import argparse
import concurrent.futures as cf
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.environ.get("SDY_ORACLE_OPT") or os.path.normpath(
    os.path.join(HERE, "..", "..", "..", "..", "shared", "oracle", "oracle_opt.py"))

# `--export`: the export path after propagation, as one run of each tool (both take the
# func.func passes as plain flags; sdy_opt nests them itself).
EXPORT_PASSES = [
    "-sdy-propagation-pipeline",
    "-sdy-insert-explicit-reshards",
    "-sdy-reshard-to-collectives",
]

DEFAULT_PASSES = [
    "-sdy-basic-propagate",
    "-sdy-aggressive-propagate",
    "-sdy-op-priority-propagate",
    "-sdy-user-priority-propagate",
    "-sdy-propagation-pipeline",
]

SHARDING_RE = re.compile(r"#sdy\.sharding(?:_per_value)?<.*?>(?=[,}\]\s])|<@[\w.]+, \[.*?\]>")


def rules(text):
    """Every `#sdy.op_sharding_rule<...>` with a factor, sorted. Where we keep an op's
    generic form, Shardy prints a custom form that may hide a body (`applies
    stablehlo.add`), so all-scalar rules and the order are left out of the comparison."""
    out, key, i = [], "#sdy.op_sharding_rule<", 0
    while (i := text.find(key, i)) >= 0:
        j, depth = i + len(key), 1
        while j < len(text) and depth:
            c = text[j]
            if c == "<":
                depth += 1
            elif c == ">" and text[j - 1] != "-":
                depth -= 1
            j += 1
        if re.search(r"[a-z]\]|\[[a-z]", text[i:j]):
            out.append(text[i:j])
        i = j
    return sorted(out)


def split_out(text):
    return text.split("// -----\n")


def shardings(text):
    return SHARDING_RE.findall(text)


def matched_shardings(ours, theirs):
    """How many of the oracle's shardings `ours` prints identically, in order."""
    sm = difflib.SequenceMatcher(a=theirs, b=ours, autojunk=False)
    return sum(b.size for b in sm.get_matching_blocks())


def batch_text(chunks, idx):
    return "// -----\n".join(chunks[i] for i in idx)


VENV = os.environ.get("SDY_ORACLE_VENV") or os.path.expanduser("~/.cache/sdy-oracle-venv")
STREAM = os.path.join(HERE, "oracle_stream.py")


def run_oracle(oracle, chunks, flag, tmp, batch, jobs=1):
    """The oracle's output per chunk (None where it crashed), the number of crashes, and
    per batch the stderr of each chunk: [(chunk indices, [stderr or None if crashed])].
    Each batch is one file; oracle_stream.py prints chunk by chunk, so a crash (the real
    Shardy segfaults on some programs) costs one restart after the chunk it died on."""
    flags = flag if isinstance(flag, list) else ([flag] if flag else [])
    python = os.path.join(VENV, "bin", "python")
    out = [None] * len(chunks)

    def solve(n, idx):
        path = os.path.join(tmp, "oracle-%d.mlir" % n)
        with open(path, "w") as f:
            f.write(batch_text(chunks, idx))
        errs, crashed, start = [None] * len(idx), 0, 0
        while start < len(idx):
            r = subprocess.run([python, STREAM, oracle, path, str(start)] + flags,
                               capture_output=True, text=True)
            done = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
            for d in done:
                out[idx[d["i"]]], errs[d["i"]] = d["out"], d["err"]
            start = done[-1]["i"] + 1 if done else start
            if start < len(idx):
                if r.returncode >= 0 and not done:
                    sys.exit("oracle_stream.py failed (exit %d) on chunk %d of %s:\n%s" % (
                        r.returncode, start, path, r.stderr[-3000:]))
                crashed += 1  # killed by a signal in chunk `start`
                start += 1
        return idx, errs, crashed

    batches = [list(range(s, min(s + batch, len(chunks)))) for s in range(0, len(chunks), batch)]
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda nb: solve(*nb), enumerate(batches)))
    return out, sum(c for _, _, c in results), [(idx, errs) for idx, errs, _ in results]


def joined(parts):
    return "".join(p for p in parts if p)


LOC_RE = re.compile(r"^(?:[^:\n]*):(\d+):\d+: ")


def stderr_by_chunk(stderr, starts):
    """A batch's stderr split by program: a diagnostic goes to the chunk its line is in
    (`starts`: each chunk's first line, 1-based), lines after it (notes, op dumps) with
    it; lines before the first located one go to key None."""
    out = {}
    key = None
    for line in stderr.splitlines(True):
        m = LOC_RE.match(line)
        if m:
            n = int(m.group(1))
            key = max((i for i, s in enumerate(starts) if s <= n), default=0)
        out[key] = out.get(key, "") + line
    return out


def chunk_starts(chunks, idx):
    starts, line = [], 1
    for i in idx:
        starts.append(line)
        line += chunks[i].count("\n") + 1  # the `// -----` line
    return starts


def export_run(a, chunks):
    """`--export`: every program through propagation, explicit reshards and collectives
    in both tools, batch by batch; a program is identical when its printed module and its
    share of stderr are byte for byte the oracle's. Prints the figures and the programs
    that differ (by first differing line)."""
    flags = EXPORT_PASSES
    total = same = same_out = rejected = 0
    differ = []
    with tempfile.TemporaryDirectory() as d:
        # The oracle per batch; sdy-lsp on the same files, so file lines agree. Programs
        # the oracle crashed on are left out.
        outs, crashes, errs = run_oracle(a.oracle, chunks, flags, d, a.batch, a.jobs)
        for n, (idx, their_errs) in enumerate(errs):
            path = batch_file(d, n, chunks, idx)
            m = subprocess.run([a.bin, "opt", path, "-split-input-file"] + flags,
                               capture_output=True, text=True)
            mo = split_out(m.stdout)
            me = stderr_by_chunk(m.stderr, chunk_starts(chunks, idx))
            if me.get(None, ""):
                differ.append((idx[0], "unlocated stderr of the batch", "", me[None]))
            for k, i in enumerate(idx):
                if outs[i] is None:
                    continue
                total += 1
                ot, mt = outs[i], mo[k] if k < len(mo) else ""
                oe, mek = their_errs[k], me.get(k, "")
                rejected += not ot.strip()
                ok_out = ot == mt
                ok_err = oe == mek
                same_out += ok_out
                same += ok_out and ok_err
                if not (ok_out and ok_err):
                    differ.append((i, "stdout" if not ok_out else "stderr",
                                   ot if not ok_out else oe, mt if not ok_out else mek))
    if crashes:
        print("(the oracle crashed on %d programs, left out: %s)" % (
            crashes, " ".join(str(i) for i, o in enumerate(outs) if o is None)))
    for i, what, theirs, ours in differ[: a.show]:
        print("=== program %d: %s differs" % (i, what))
        print(chunks[i] if i < len(chunks) else "")
        print("".join(difflib.unified_diff(theirs.splitlines(True), ours.splitlines(True), "oracle", "sdy-lsp")))
    print("export differing programs: %s" % " ".join(str(i) for i, *_ in differ))
    print("overall: %d/%d programs exact (%.1f%%), %d/%d stdout identical (%d the oracle rejects)" % (
        same, total, 100.0 * same / max(total, 1), same_out, total, rejected))


def batch_file(tmp, n, chunks, idx):
    """The file run_oracle gave the oracle for batch n (diagnostics name it)."""
    path = os.path.join(tmp, "oracle-%d.mlir" % n)
    with open(path, "w") as f:
        f.write(batch_text(chunks, idx))
    return path


def same_stderr(binary, chunks, flag, tmp, errs, show):
    """How many of the oracle's batches `sdy-lsp opt` gives the same stderr for, byte
    for byte (run on the same file, so names and lines agree; the share of programs the
    oracle crashed on left out), and how many had any. Prints the first `show`
    differences."""
    same = nonempty = 0
    for n, (idx, their_errs) in enumerate(errs):
        path = batch_file(tmp, n, chunks, idx)
        r = subprocess.run([binary, "opt", path, "-split-input-file", flag], capture_output=True, text=True)
        ours_by_chunk = stderr_by_chunk(r.stderr, chunk_starts(chunks, idx))
        kept = [k for k, e in enumerate(their_errs) if e is not None]
        theirs = joined(their_errs[k] for k in kept)
        ours = ours_by_chunk.get(None, "") + joined(ours_by_chunk.get(k, "") for k in kept)
        same += ours == theirs
        if ours != theirs and show > 0:
            show -= 1
            print("=== %s stderr of chunks %s" % (flag, idx))
            print("".join(difflib.unified_diff(theirs.splitlines(True), ours.splitlines(True), "oracle", "sdy-lsp")))
        nonempty += bool(theirs)
    return same, nonempty


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--pass", dest="passes", action="append")
    ap.add_argument("--show", type=int, default=0, help="print the first K mismatching programs")
    ap.add_argument("--show-text", type=int, default=0,
                    help="print the first K programs whose output differs only in text")
    ap.add_argument("--oracle", default=ORACLE)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1, help="oracle processes at once")
    ap.add_argument("--what", choices=["shardings", "rules"], default="shardings",
                    help="what to compare besides whole outputs: printed shardings or sharding rules")
    ap.add_argument("--pretty", action="store_true",
                    help="feed the programs as Shardy prints them (every op in its custom form)")
    ap.add_argument("--prepare", action="append", default=[],
                    help="feed the programs as the oracle prints them after this pass (repeatable, in order), "
                         "e.g. --prepare=-sdy-propagation-pipeline --prepare=-sdy-insert-explicit-reshards "
                         "then --pass=-sdy-reshard-to-collectives: the export path, one pass at a time")
    ap.add_argument("--stderr", action="store_true",
                    help="also compare stderr (warnings, errors) batch by batch")
    ap.add_argument("--gen", default=os.path.join(HERE, "gen.py"),
                    help="the program generator (default: propagation's; canonicalize/gen.py for -canonicalize)")
    ap.add_argument("--gen-arg", dest="gen_args", action="append", default=[],
                    help="an extra argument for the generator (e.g. --gen-arg=--wide)")
    ap.add_argument("--export", action="store_true",
                    help="the export path: %s in one run of each tool, stdout and each program's "
                         "stderr compared byte for byte" % " ".join(EXPORT_PASSES))
    a = ap.parse_args()
    extract = rules if a.what == "rules" else shardings
    passes = a.passes or DEFAULT_PASSES
    gen = subprocess.run([sys.executable, a.gen, "--seed", str(a.seed), "--count", str(a.count)] + a.gen_args,
                         capture_output=True, text=True, check=True).stdout
    chunks = gen.split("// -----\n")
    if a.export:
        return export_run(a, chunks)
    with tempfile.TemporaryDirectory() as d:
        if a.pretty:
            printed, _, _ = run_oracle(a.oracle, chunks, None, d, a.batch, a.jobs)
            chunks = [p for p in printed if p and p.strip()]
            gen = "// -----\n".join(chunks)
        if a.prepare:
            printed, _, _ = run_oracle(a.oracle, chunks, a.prepare, d, a.batch, a.jobs)
            chunks = [p for p in printed if p and p.strip()]
            gen = "// -----\n".join(chunks)
            print("prepared %d programs with %s (%d with sdy.reshard, %d reshards)" % (
                len(chunks), " ".join(a.prepare), sum("sdy.reshard" in c for c in chunks),
                sum(c.count("sdy.reshard") for c in chunks)))
        total_ok = 0
        total_valid = 0
        total_sh = total_sh_same = 0
        crashed = 0
        for p in passes:
            oc, n_crash, errs = run_oracle(a.oracle, chunks, p, d, a.batch, a.jobs)
            crashed += n_crash
            path = os.path.join(d, "all.mlir")
            with open(path, "w") as f:
                f.write(gen)
            m = subprocess.run([a.bin, "opt", path, "-split-input-file", p], capture_output=True, text=True)
            mc = split_out(m.stdout)
            valid = same = same_sh = 0
            sh_total = sh_same = 0
            differ = []
            shown = shown_text = 0
            for i, chunk in enumerate(chunks):
                ot = oc[i]
                mt = mc[i] if i < len(mc) else ""
                if ot is None or not ot.strip():
                    continue  # the oracle rejected the program (or crashed on it)
                valid += 1
                osh = extract(ot)
                sh_total += len(osh)
                sh_same += matched_shardings(extract(mt), osh)
                if ot == mt:
                    same += 1
                    same_sh += 1
                    continue
                differ.append(i)
                if osh == extract(mt):
                    same_sh += 1
                    if shown_text < a.show_text:
                        shown_text += 1
                        print("=== %s program %d (same %s, other text)" % (p, i, a.what))
                        print("".join(difflib.unified_diff(ot.splitlines(True), mt.splitlines(True), "oracle", "sdy-lsp")))
                    continue
                if shown < a.show:
                    shown += 1
                    print("=== %s program %d" % (p, i))
                    print(chunk)
                    print("".join(difflib.unified_diff(ot.splitlines(True), mt.splitlines(True), "oracle", "sdy-lsp")))
            if a.stderr:
                e_same, e_nonempty = same_stderr(a.bin, chunks, p, d, errs, a.show)
                print("%-32s stderr identical in %d/%d batches (%d with diagnostics)" % (p, e_same, len(errs), e_nonempty))
            total_ok += same
            total_valid += valid
            total_sh += sh_total
            total_sh_same += sh_same
            print("%-32s valid %4d  exact %4d (%.1f%%)  same %s %4d (%.1f%%)  %s %6d/%6d (%.2f%%)  oracle crashes %d" % (
                p, valid, same, 100.0 * same / max(valid, 1), a.what, same_sh, 100.0 * same_sh / max(valid, 1), a.what,
                sh_same, sh_total, 100.0 * sh_same / max(sh_total, 1), n_crash))
            if differ:
                print("%-32s differing programs: %s" % (p, " ".join(map(str, differ))))
        if crashed:
            print("(the oracle crashed on %d program runs; they are left out)" % crashed)
        print("overall: %d/%d programs exact (%.1f%%), %d/%d %s identical (%.2f%%)" % (
            total_ok, total_valid, 100.0 * total_ok / max(total_valid, 1),
            total_sh_same, total_sh, a.what, 100.0 * total_sh_same / max(total_sh, 1)))


if __name__ == "__main__":
    main()
