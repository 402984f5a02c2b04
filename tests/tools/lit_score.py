#!/usr/bin/env python3
"""Scores a lit test file (Shardy's style: `// RUN: sdy_opt %s FLAGS | FileCheck %s
--check-prefixes=A,B`) against `sdy-lsp opt`, function by function, with real FileCheck.

The shared conformance harness compares whole outputs and cannot read check prefixes;
this runs every RUN line of FILE as lit would (the whole file), then each function on
its own: a temp file holds the prelude (meshes and their check lines, `-DAG` lines left
out as they may name what other functions create) and one `// CHECK-LABEL` section.

    python3 tests/tools/lit_score.py FILE [--bin "target/release/sdy-lsp opt"]
        [--filecheck FileCheck-22] [--only SUBSTRING] [-v]

Prints one line per RUN line and function (PASS/FAIL) and the counts; `-v` adds
FileCheck's message for each failure. Exit status 0 when everything passes. The whole
file is what lit runs: a function alone can fail where it expects the names of symbols
that earlier functions make (`@mesh_reversed_0` after `@mesh_reversed`).
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

RUN_RE = re.compile(r"^//\s*RUN:\s*(.*)$")
LABEL_RE = re.compile(r"^\s*//\s*[A-Za-z0-9_-]*CHECK-LABEL:\s*(.*)$")
DAG_RE = re.compile(r"^\s*//\s*[A-Za-z0-9_-]+-DAG:")


def parse_run(line):
    """`sdy_opt %s FLAGS | FileCheck %s ARGS` -> (FLAGS, FileCheck ARGS)."""
    left, sep, right = line.partition("|")
    if not sep:
        return None
    opt = shlex.split(left)
    fc = shlex.split(right)
    if not opt or opt[0] != "sdy_opt" or not fc or fc[0] != "FileCheck":
        return None
    flags = [a for a in opt[1:] if a != "%s"]
    fc_args = [a for a in fc[1:] if a != "%s"]
    return flags, fc_args


def split_functions(lines):
    """(prelude lines, [(label, section lines)]) split at the CHECK-LABEL lines."""
    starts = [i for i, l in enumerate(lines) if LABEL_RE.match(l)]
    if not starts:
        return lines, []
    prelude = [l for l in lines[: starts[0]] if not DAG_RE.match(l)]
    sections = []
    for k, s in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        label = LABEL_RE.match(lines[s]).group(1).strip()
        sections.append((label, lines[s:end]))
    return prelude, sections


def run_one(text, flags, fc_args, binary, filecheck):
    """Runs `binary FILE flags | filecheck FILE fc_args`; (ok, message)."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        opt = subprocess.run(
            shlex.split(binary) + [path] + flags, capture_output=True, text=True, timeout=120
        )
        fc = subprocess.run(
            [filecheck, path] + fc_args,
            input=opt.stdout,
            capture_output=True,
            text=True,
            timeout=120,
        )
        ok = opt.returncode == 0 and fc.returncode == 0
        msg = ""
        if opt.returncode != 0:
            msg += f"opt exited {opt.returncode}: {opt.stderr.strip()}\n"
        msg += fc.stderr
        return ok, msg
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--bin", default="target/release/sdy-lsp opt")
    ap.add_argument("--filecheck", default="FileCheck-22")
    ap.add_argument("--only", default=None, help="score only labels containing this")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    text = open(a.file, encoding="utf-8").read()
    lines = text.splitlines(keepends=True)
    runs = [parse_run(m.group(1)) for l in lines if (m := RUN_RE.match(l))]
    runs = [r for r in runs if r]
    if not runs:
        sys.exit(f"{a.file}: no `sdy_opt ... | FileCheck ...` RUN line")
    prelude, sections = split_functions(lines)
    failed = 0
    for flags, fc_args in runs:
        desc = " ".join(shlex.quote(x) for x in flags + ["|"] + fc_args)
        if a.only is None:
            ok, msg = run_one(text, flags, fc_args, a.bin, a.filecheck)
            print(f"{'PASS' if ok else 'FAIL'} [whole file] {desc}")
            if not ok:
                failed += 1
                if a.verbose:
                    print(msg)
        passed = total = 0
        for label, body in sections:
            if a.only is not None and a.only not in label:
                continue
            total += 1
            # A function may use only some of the prefixes.
            args = fc_args + ["--allow-unused-prefixes"]
            ok, msg = run_one("".join(prelude + body), flags, args, a.bin, a.filecheck)
            passed += ok
            print(f"  {'PASS' if ok else 'FAIL'} {label}")
            if not ok and a.verbose:
                print("    " + msg.replace("\n", "\n    "))
        failed += total - passed
        print(f"  {passed}/{total} functions pass: {desc}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
