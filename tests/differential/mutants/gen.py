"""StableHLO-level mistakes for the differential test (`run.py` next to this file).

Every StableHLO op of the sources (the corpus and the conformance inputs) written in
custom form on one line, without regions or several results, becomes a small module
of its own:

    func.func @main(%p0: T0, %p1: T1) -> R {
      %r = <the op, operands renamed %p0, %p1, ...> : <its signature>
      return %r : R
    }

A mutant changes the op, then the module is built around the changed op:
  token     a token deleted, inserted or substituted (`,` `:` `%p0` `[` `]` `x` `=` ...)
  dims      a number of a dimension list (`dims`, `contracting_dims`, `dimensions`, ...)
            changed, or two entries swapped, or one dropped or repeated
  shape     a dimension size of one type of the signature changed (the module's
            argument/result types follow, so the op's own verifier is what sees it)
  element   an element type of the signature changed (f32 -> f16, i32, bf16, ...)
A module the oracle accepts is a valid module (a mutation may leave the op valid).

Standard library only.
"""

from __future__ import annotations

import glob
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared"))

TOKEN_RE = re.compile(
    r'%[A-Za-z0-9_#.$-]+|@[A-Za-z0-9_.$-]+|"[^"]*"|->|[A-Za-z_][A-Za-z0-9_.$]*|'
    r'-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\S')
SIMPLE_TYPE_RE = re.compile(r"tensor<(?:[0-9?]+x)*[a-z][a-z0-9]*>")
LOC_RE = re.compile(r"\s*loc\([^()]*(\([^()]*\)[^()]*)*\)\s*$")
OP_LINE_RE = re.compile(r"^\s*(%[A-Za-z0-9_]+)\s*=\s*(stablehlo\.[a-z_]+)\b(.*)$")
DIMS_RE = re.compile(r"\[([0-9, ]*)\]")
ELEMENTS = ["f32", "f16", "bf16", "f64", "i32", "i64", "i1", "i8", "ui32"]
INSERT_POOL = [",", ":", "%p0", "%p1", "[", "]", "(", ")", "x", "=", "->", "0", "1",
               "dims", "tensor<8xf32>", "{", "}", "<", ">", "applies", "across"]


def split_signature(rest):
    """(text before the signature's ':', the signature) of an op's rest, or None."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == ":" and depth == 0:
            return rest[:i], rest[i + 1:].strip()
    return None


def types_of(sig):
    """(inputs, results) of a signature `(A, B) -> R` or `T` / `T1, T2`, else None."""
    sig = sig.strip()
    if sig.startswith("("):
        m = re.fullmatch(r"\((.*)\)\s*->\s*(.*)", sig)
        if not m:
            return None
        ins = SIMPLE_TYPE_RE.findall(m.group(1))
        outs = SIMPLE_TYPE_RE.findall(m.group(2))
        if len(outs) != 1 or ", ".join(ins) != m.group(1).strip() or outs[0] != m.group(2).strip():
            return None
        return ins, outs
    ts = SIMPLE_TYPE_RE.findall(sig)
    if ", ".join(ts) != sig or not ts:
        return None
    return ts, ts[-1:]


class Op:
    """One op of a source, operands renamed: `text` is what follows `%r = `."""

    def __init__(self, source, name, text):
        self.source, self.name, self.text = source, name, text


def wrap(op_text):
    """The module around an op text (`stablehlo.x ... : sig`), or None when the
    operands and signature do not give the argument and result types."""
    m = re.match(r"(stablehlo\.[a-z_]+)(.*)$", op_text)
    if not m:
        return None
    parts = split_signature(m.group(2))
    if not parts:
        return None
    head, sig = parts
    tys = types_of(sig)
    if not tys:
        return None
    ins, outs = tys
    operands = sorted(set(re.findall(r"%p(\d+)\b", head)), key=int)
    n = len(operands)
    if [int(o) for o in operands] != list(range(n)):
        return None
    if sig.startswith("("):
        if len(ins) != n:
            return None
        arg_tys = ins
    elif len(ins) == 1:
        arg_tys = ins * n
    elif len(ins) == n:
        arg_tys = ins
    else:
        return None
    args = ", ".join(f"%p{i}: {t}" for i, t in enumerate(arg_tys))
    return (f"func.func @main({args}) -> {outs[0]} {{\n"
            f"  %r = {op_text}\n"
            f"  return %r : {outs[0]}\n"
            f"}}\n")


def ops_of_text(source, text):
    out = []
    for line in text.split("\n"):
        m = OP_LINE_RE.match(line)
        if not m or "{" in m.group(3) and "}" not in m.group(3):
            continue  # a region opens here
        rest = LOC_RE.sub("", m.group(3))
        if "loc(" in rest or "#" in rest and "#stablehlo" not in rest:
            continue
        names = {}

        def rename(mm):
            return names.setdefault(mm.group(0), f"%p{len(names)}")

        body = re.sub(r"%[A-Za-z0-9_#.$-]+", rename, rest)
        text_op = f"{m.group(2)}{body}"
        if wrap(text_op):
            out.append(Op(source, m.group(2), text_op))
    return out


def sources():
    """The ops of the corpus and of the conformance inputs, deduplicated."""
    files = [os.path.join(SHARED, "corpus", "tfm_1k.mlir")]
    files += sorted(glob.glob(os.path.join(SHARED, "conformance*", "**", "*.mlir"),
                              recursive=True))
    seen, out = set(), []
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        for op in ops_of_text(os.path.relpath(path, SHARED), text):
            if op.text not in seen:
                seen.add(op.text)
                out.append(op)
    return out


def tokens(text):
    return [(m.start(), m.end()) for m in TOKEN_RE.finditer(text)]


def mutate_token(rng, text):
    toks = tokens(text)
    # Not the op name (an unknown op is not a StableHLO mistake).
    toks = toks[1:]
    if not toks:
        return None, None
    a, b = rng.choice(toks)
    how = rng.choice(["delete", "insert", "substitute"])
    pool = INSERT_POOL + [text[s:e] for s, e in toks]
    if how == "delete":
        return text[:a].rstrip(" ") + (" " if a and text[a - 1] == " " else "") + text[b:].lstrip(" ") \
            if False else (text[:a] + text[b:]).replace("  ", " "), "token:delete"
    tok = rng.choice(pool)
    if how == "insert":
        return text[:a] + tok + " " + text[a:], "token:insert"
    if tok == text[a:b]:
        return None, None
    return text[:a] + tok + text[b:], "token:substitute"


def mutate_dims(rng, text):
    lists = [m for m in DIMS_RE.finditer(text) if m.group(1).strip()]
    if not lists:
        return None, None
    m = rng.choice(lists)
    nums = [int(x) for x in m.group(1).split(",")]
    how = rng.choice(["change", "swap", "drop", "repeat"])
    if how == "change":
        i = rng.randrange(len(nums))
        nums[i] = rng.choice([v for v in range(-1, max(nums) + 3) if v != nums[i]])
    elif how == "swap" and len(nums) > 1:
        i, j = rng.sample(range(len(nums)), 2)
        if nums[i] == nums[j]:
            return None, None
        nums[i], nums[j] = nums[j], nums[i]
    elif how == "drop":
        nums.pop(rng.randrange(len(nums)))
    elif how == "repeat":
        nums.insert(rng.randrange(len(nums) + 1), rng.choice(nums))
    else:
        return None, None
    new = "[" + ", ".join(map(str, nums)) + "]"
    return text[:m.start()] + new + text[m.end():], f"dims:{how}"


def signature_types(text):
    parts = split_signature(text)
    if not parts:
        return None
    off = len(text) - len(parts[1])
    return [(off + m.start(), off + m.end()) for m in SIMPLE_TYPE_RE.finditer(parts[1])]


def mutate_shape(rng, text):
    tys = signature_types(text)
    if not tys:
        return None, None
    a, b = rng.choice(tys)
    ty = text[a:b]
    dims = re.findall(r"(\d+)x", ty)
    elem = ty[len("tensor<"):-1].split("x")[-1]
    how = rng.choice(["size", "size", "rank+", "rank-"])
    if how == "size" and dims:
        i = rng.randrange(len(dims))
        dims[i] = str(rng.choice([v for v in (1, 2, 3, 4, 5, 7, 8, 16, 128) if str(v) != dims[i]]))
    elif how == "rank+":
        dims.insert(rng.randrange(len(dims) + 1), str(rng.choice([1, 2, 4])))
    elif how == "rank-" and dims:
        dims.pop(rng.randrange(len(dims)))
    else:
        return None, None
    new = "tensor<" + "".join(d + "x" for d in dims) + elem + ">"
    return text[:a] + new + text[b:], f"shape:{how}"


def mutate_element(rng, text):
    tys = signature_types(text)
    if not tys:
        return None, None
    a, b = rng.choice(tys)
    ty = text[a:b]
    elem = ty[len("tensor<"):-1].split("x")[-1]
    new_elem = rng.choice([e for e in ELEMENTS if e != elem])
    return text[:a] + ty[:len(ty) - 1 - len(elem)] + new_elem + ">" + text[b:], "element"


MUTATORS = [(mutate_token, 4), (mutate_dims, 2), (mutate_shape, 2), (mutate_element, 1)]


def mutants(seed, count):
    """[(case id, kind, source, text)]: `count` mutants that still give a module."""
    rng = random.Random(seed)
    ops = sources()
    out, attempts = [], 0
    fns, weights = zip(*MUTATORS)
    while len(out) < count and attempts < 50 * count + 1000:
        attempts += 1
        op = rng.choice(ops)
        fn = rng.choices(fns, weights)[0]
        new, kind = fn(rng, op.text)
        if new is None or new == op.text:
            continue
        # The module follows the changed signature when it still reads, else keeps the
        # original's types (a syntax mistake).
        text = wrap(new) if not kind.startswith("token") else None
        if text is None:
            text = wrap(op.text).replace(op.text, new, 1)
        out.append((f"m{len(out):04d}", kind, op.source, text))
    return out


def valid_modules():
    """[(case id, kind, source, text)]: every source op unchanged."""
    return [(f"v{i:04d}", "unchanged", op.source, wrap(op.text))
            for i, op in enumerate(sources())]
