#!/usr/bin/env python3
"""Random single ops of every kind the sharding rule registry knows, for differential
tests of `-sdy-populate-op-sharding-rules` (and of propagation through those ops).

  gen.py --seed S --count N > programs.mlir

Each program is one `// -----` chunk: a mesh and a `@main` function whose arguments
(some sharded) feed one to three random ops: reshapes that split, merge or regroup
dimensions, broadcasts, transposes, dot/dot_general, convolutions (groups, dilations,
padding, strides, any layout), gathers and scatters (collapsed, batching and sliced
dimensions), reduce/reduce_window, slices, pads, dynamic (update) slices, reverses,
concatenates, sorts, ffts, cholesky, triangular solves, bitcast converts,
rng_bit_generator, batch norms, select_and_scatter, collectives and custom calls.
Every op is valid StableHLO (the oracle's verifier accepts it); shapes are computed,
never guessed. Run through ../propagation/run.py:

  python3 tests/differential/propagation/run.py --bin target/release/sdy-lsp \\
      --gen tests/differential/rules/gen.py --count 500 \\
      --pass -sdy-populate-op-sharding-rules \\
      --pass "-sdy-populate-op-sharding-rules=conservative-propagation=true" \\
      --pass -sdy-aggressive-propagate

Standard library only. Deterministic for a given seed.
"""

import argparse
import math
import random

AXES = ["a", "b", "c"]
DIMS = [1, 2, 2, 3, 4, 4, 6, 8, 8, 12, 16]


def ty(shape, elt="f32"):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), elt)


def arr(xs):
    return "array<i64%s>" % ("" if not xs else ": " + ", ".join(str(x) for x in xs))


def ilist(xs):
    return "[" + ", ".join(str(x) for x in xs) + "]"


def primes(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def region(args, body_op, elt="f32"):
    """A reduction body over scalar block arguments: `body_op` pairs them up."""
    n = len(args) // 2
    t = "tensor<%s>" % elt
    sig = ", ".join("%%%s: %s" % (a, t) for a in args)
    lines = ["^bb0(%s):" % sig]
    outs = []
    for i in range(n):
        lines.append("    %%r%d = %s %%%s, %%%s : %s" % (i, body_op, args[i], args[i + n], t))
        outs.append("%%r%d" % i)
    lines.append("    stablehlo.return %s : %s" % (", ".join(outs), ", ".join([t] * n)))
    return "({\n  " + "\n  ".join(lines) + "\n  })"


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.args = []  # (name, type text, sharding or None)
        self.lines = []
        self.n = 0
        self.last = None  # (name, shape, elt) of the last f32 tensor result
        self.rets = []  # (name, type) of results the function returns, so they stay live

    # ----- infrastructure -----

    def mesh(self):
        k = self.r.choice([1, 2, 2, 3])
        self.axes = [(AXES[i], self.r.choice([2, 2, 4])) for i in range(k)]
        return "sdy.mesh @mesh = <[%s]>" % ", ".join('"%s"=%d' % a for a in self.axes)

    def sharding(self, rank):
        pool = ['"%s"' % a for a, _ in self.axes]
        self.r.shuffle(pool)
        dims = []
        for _ in range(rank):
            axes = []
            while pool and self.r.random() < 0.4:
                axes.append(pool.pop())
            closed = self.r.random() < 0.4
            dims.append("{" + ", ".join(axes) + ("" if closed else (", ?" if axes else "?")) + "}")
        return "<@mesh, [%s]>" % ", ".join(dims)

    def fresh(self):
        self.n += 1
        return "%%v%d" % self.n

    def arg(self, shape, elt="f32"):
        """A value of this shape: the last result when it fits, else a new argument."""
        if self.last and self.last[1] == shape and self.last[2] == elt and self.r.random() < 0.7:
            return self.last[0]
        name = "%%arg%d" % len(self.args)
        sh = None
        if shape and self.r.random() < 0.6:
            sh = self.sharding(len(shape))
        self.args.append((name, ty(shape, elt), sh))
        return name

    def scalar_const(self, elt="f32"):
        name = self.fresh()
        val = {"f32": "0.000000e+00", "i32": "0", "i1": "false"}[elt]
        self.lines.append("%s = stablehlo.constant dense<%s> : tensor<%s>" % (name, val, elt))
        return name

    def index(self):
        return self.arg([], "i32")

    def emit(self, text, result_shape=None, elt="f32", results=1):
        name = self.fresh()
        lhs = name if results == 1 else "%s:%d" % (name, results)
        self.lines.append("%s = %s" % (lhs, text))
        if result_shape is not None:
            first = name if results == 1 else name + "#0"
            self.last = (first, result_shape, elt)
            self.rets.append((first, ty(result_shape, elt)))
        return name

    def shape(self, rank=None, lo=1):
        rank = self.r.choice([1, 2, 2, 3, 3, 4]) if rank is None else rank
        return [self.r.choice([d for d in DIMS if d >= lo]) for _ in range(rank)]

    # ----- ops -----

    def op_pointwise(self):
        s = self.shape()
        a, b = self.arg(s), self.arg(s)
        k = self.r.choice(["add", "multiply", "maximum", "tanh", "negate", "compare", "clamp", "select"])
        if k in ("tanh", "negate"):
            self.emit("stablehlo.%s %s : %s" % (k, a, ty(s)), s)
        elif k == "compare":
            self.emit("stablehlo.compare GT, %s, %s : (%s, %s) -> %s" % (a, b, ty(s), ty(s), ty(s, "i1")))
        elif k == "clamp":
            lo = self.scalar_const() if self.r.random() < 0.5 else self.arg(s)
            lt = "tensor<f32>" if lo.startswith("%v") else ty(s)
            self.emit('"stablehlo.clamp"(%s, %s, %s) : (%s, %s, %s) -> %s' % (lo, a, lo, lt, ty(s), lt, ty(s)), s)
        elif k == "select":
            ps = [] if self.r.random() < 0.4 else s
            p = self.arg(ps, "i1")
            self.emit('"stablehlo.select"(%s, %s, %s) : (%s, %s, %s) -> %s' % (
                p, a, b, ty(ps, "i1"), ty(s), ty(s), ty(s)), s)
        else:
            self.emit("stablehlo.%s %s, %s : %s" % (k, a, b, ty(s)), s)

    def op_reshape(self):
        s = self.shape(lo=2)
        size = math.prod(s)
        if self.r.random() < 0.5:
            # regroup the prime factors in order: splits and merges of dimensions
            ps = [p for d in s for p in primes(d)]
            out, cur = [], 1
            for p in ps:
                cur *= p
                if self.r.random() < 0.5:
                    out.append(cur)
                    cur = 1
            if cur > 1 or not out:
                out.append(cur)
        else:
            # any shape of the same size
            out, rest = [], size
            while rest > 1 and len(out) < 4:
                ds = [d for d in range(2, rest + 1) if rest % d == 0 and d <= 16]
                if not ds:
                    break
                d = self.r.choice(ds)
                out.append(d)
                rest //= d
            if rest > 1:
                out.append(rest)
        for _ in range(self.r.choice([0, 0, 1])):
            out.insert(self.r.randrange(len(out) + 1), 1)
        a = self.arg(s)
        self.emit("stablehlo.reshape %s : (%s) -> %s" % (a, ty(s), ty(out)), out)

    def op_transpose(self):
        s = self.shape(self.r.choice([2, 3, 4]))
        perm = list(range(len(s)))
        self.r.shuffle(perm)
        out = [s[p] for p in perm]
        a = self.arg(s)
        self.emit("stablehlo.transpose %s, dims = %s : (%s) -> %s" % (a, ilist(perm), ty(s), ty(out)), out)

    def op_broadcast(self):
        out = self.shape(self.r.choice([1, 2, 3, 4]))
        k = self.r.randrange(len(out) + 1)
        dims = sorted(self.r.sample(range(len(out)), k))
        ins = [1 if self.r.random() < 0.3 else out[d] for d in dims]
        a = self.arg(ins)
        self.emit("stablehlo.broadcast_in_dim %s, dims = %s : (%s) -> %s" % (a, ilist(dims), ty(ins), ty(out)), out)

    def op_dot_general(self):
        nb, nc = self.r.choice([0, 0, 1, 2]), self.r.choice([0, 1, 1, 2])
        nl, nr = self.r.choice([0, 1, 1, 2]), self.r.choice([0, 1, 1, 2])
        b, c = self.shape(nb), self.shape(nc)
        lf, rf = self.shape(nl), self.shape(nr)
        lhs_parts = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nl)]
        rhs_parts = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nr)]
        self.r.shuffle(lhs_parts)
        self.r.shuffle(rhs_parts)
        size = {"b": b, "c": c}

        def layout(parts, free):
            shape = [free[i] if k == "f" else size[k][i] for k, i in parts]
            pos = lambda kind: [parts.index((kind, i)) for i in range(len(size[kind]))]  # noqa: E731
            return shape, pos("b"), pos("c")

        ls, lb, lc = layout(lhs_parts, lf)
        rs, rb, rc = layout(rhs_parts, rf)
        # free dimensions come out in operand order
        out = b + [lf[i] for k, i in lhs_parts if k == "f"] + [rf[i] for k, i in rhs_parts if k == "f"]
        x, y = self.arg(ls), self.arg(rs)
        dn = ""
        if nb:
            dn += "batching_dims = %s x %s, " % (ilist(lb), ilist(rb))
        dn += "contracting_dims = %s x %s" % (ilist(lc), ilist(rc))
        self.emit("stablehlo.dot_general %s, %s, %s : (%s, %s) -> %s" % (x, y, dn, ty(ls), ty(rs), ty(out)), out)

    def op_dot(self):
        m, k, n = self.r.choice(DIMS), self.r.choice(DIMS), self.r.choice(DIMS)
        ls, rs, out = self.r.choice([([m, k], [k, n], [m, n]), ([m, k], [k], [m]), ([k], [k, n], [n]), ([k], [k], [])])
        x, y = self.arg(ls), self.arg(rs)
        self.emit("stablehlo.dot %s, %s : (%s, %s) -> %s" % (x, y, ty(ls), ty(rs), ty(out)), out)

    def op_reduce(self):
        s = self.shape(self.r.choice([1, 2, 3, 4]))
        dims = sorted(self.r.sample(range(len(s)), self.r.randrange(1, len(s) + 1)))
        out = [d for i, d in enumerate(s) if i not in dims]
        n = self.r.choice([1, 1, 2])
        ins = [self.arg(s) for _ in range(n)]
        inits = [self.scalar_const() for _ in range(n)]
        body = region(["x%d" % i for i in range(2 * n)], self.r.choice(["stablehlo.add", "stablehlo.maximum"]))
        self.emit('"stablehlo.reduce"(%s) <{dimensions = %s}> %s : (%s) -> (%s)' % (
            ", ".join(ins + inits), arr(dims), body, ", ".join([ty(s)] * n + ["tensor<f32>"] * n),
            ", ".join([ty(out)] * n)), out, results=n)

    def op_reduce_window(self):
        s = self.shape(self.r.choice([1, 2, 3]))
        use_st, use_dil, use_pad = (self.r.random() < p for p in (0.6, 0.4, 0.5))
        w = [self.r.choice([1, 1, 2, 3]) if d >= 3 else self.r.choice([1, d]) for d in s]
        st = [self.r.choice([1, 1, 2]) if use_st else 1 for _ in s]
        bd = [self.r.choice([1, 1, 1, 2]) if use_dil else 1 for _ in s]
        wd = [self.r.choice([1, 1, 1, 2]) if use_dil else 1 for _ in s]
        pad = [(self.r.choice([0, 0, 1]), self.r.choice([0, 0, 1])) if use_pad else (0, 0) for _ in s]
        out = []
        for i, d in enumerate(s):
            dil = (d - 1) * bd[i] + 1 + pad[i][0] + pad[i][1]
            if dil < (w[i] - 1) * wd[i] + 1:
                w[i], wd[i] = 1, 1
            out.append((dil - ((w[i] - 1) * wd[i] + 1)) // st[i] + 1)
        attrs = ["window_dimensions = %s" % arr(w)]
        if use_st:
            attrs.append("window_strides = %s" % arr(st))
        if use_dil:
            attrs.append("base_dilations = %s, window_dilations = %s" % (arr(bd), arr(wd)))
        if use_pad:
            attrs.append("padding = dense<%s> : tensor<%dx2xi64>" % (ilist(["[%d, %d]" % p for p in pad]), len(s)))
        a, init = self.arg(s), self.scalar_const()
        body = region(["x", "y"], "stablehlo.add")
        self.emit('"stablehlo.reduce_window"(%s, %s) <{%s}> %s : (%s, tensor<f32>) -> %s' % (
            a, init, ", ".join(attrs), body, ty(s), ty(out)), out)

    def op_concat(self):
        s = self.shape(self.r.choice([1, 2, 3]))
        d = self.r.randrange(len(s))
        n = self.r.choice([2, 2, 3])
        parts = []
        for _ in range(n):
            p = list(s)
            p[d] = self.r.choice(DIMS)
            parts.append(p)
        out = list(s)
        out[d] = sum(p[d] for p in parts)
        names = [self.arg(p) for p in parts]
        self.emit("stablehlo.concatenate %s, dim = %d : (%s) -> %s" % (
            ", ".join(names), d, ", ".join(ty(p) for p in parts), ty(out)), out)

    def op_slice(self):
        s = self.shape()
        start, limit, stride, out = [], [], [], []
        for d in s:
            if self.r.random() < 0.5:
                start.append(0), limit.append(d), stride.append(1), out.append(d)
                continue
            a = self.r.randrange(d)
            b = self.r.randrange(a + 1, d + 1)
            k = self.r.choice([1, 1, 2])
            start.append(a), limit.append(b), stride.append(k), out.append((b - a + k - 1) // k)
        a = self.arg(s)
        self.emit('"stablehlo.slice"(%s) <{start_indices = %s, limit_indices = %s, strides = %s}> : (%s) -> %s' % (
            a, arr(start), arr(limit), arr(stride), ty(s), ty(out)), out)

    def op_pad(self):
        s = self.shape()
        lo = [self.r.choice([0, 0, 1, 2]) for _ in s]
        hi = [self.r.choice([0, 0, 1, 2, -1]) if d > 1 else 0 for d in s]
        it = [self.r.choice([0, 0, 0, 1]) for _ in s]
        out = [d + lo[i] + hi[i] + (d - 1) * it[i] for i, d in enumerate(s)]
        a, c = self.arg(s), self.scalar_const()
        self.emit('"stablehlo.pad"(%s, %s) <{edge_padding_low = %s, edge_padding_high = %s, interior_padding = %s}>'
                  ' : (%s, tensor<f32>) -> %s' % (a, c, arr(lo), arr(hi), arr(it), ty(s), ty(out)), out)

    def op_reverse(self):
        s = self.shape()
        dims = sorted(self.r.sample(range(len(s)), self.r.randrange(1, len(s) + 1)))
        a = self.arg(s)
        self.emit('"stablehlo.reverse"(%s) <{dimensions = %s}> : (%s) -> %s' % (a, arr(dims), ty(s), ty(s)), s)

    def op_dynamic_slice(self):
        s = self.shape()
        sizes = [d if self.r.random() < 0.5 else self.r.randrange(1, d + 1) for d in s]
        a = self.arg(s)
        idx = [self.index() for _ in s]
        self.emit('"stablehlo.dynamic_slice"(%s, %s) <{slice_sizes = %s}> : (%s, %s) -> %s' % (
            a, ", ".join(idx), arr(sizes), ty(s), ", ".join(["tensor<i32>"] * len(s)), ty(sizes)), sizes)

    def op_dynamic_update_slice(self):
        s = self.shape()
        u = [d if self.r.random() < 0.5 else self.r.randrange(1, d + 1) for d in s]
        a, b = self.arg(s), self.arg(u)
        idx = [self.index() for _ in s]
        self.emit('"stablehlo.dynamic_update_slice"(%s, %s, %s) : (%s, %s, %s) -> %s' % (
            a, b, ", ".join(idx), ty(s), ty(u), ", ".join(["tensor<i32>"] * len(s)), ty(s)), s)

    def gather_dims(self, operand):
        """Dimension numbers shared by gather and scatter: (batching operand dims,
        collapsed dims, start_index_map, index batch shape with batching dims)."""
        r = len(operand)
        dims = list(range(r))
        self.r.shuffle(dims)
        nbatch = self.r.choice([0, 0, 0, 1]) if r >= 2 else 0
        obatch = sorted(dims[:nbatch])
        rest = dims[nbatch:]
        ncoll = self.r.randrange(0, len(rest) + 1)
        coll = sorted(rest[:ncoll])
        others = [d for d in rest if d not in coll]
        sim = coll + self.r.sample(others, self.r.randrange(0, len(others) + 1))
        self.r.shuffle(sim)
        if not sim and others:
            sim = [others[0]]
        nib = self.r.choice([0, 1, 1, 2])
        ibatch = [self.r.choice(DIMS) for _ in range(nib)]
        # the batching dims of the indices take the operand batching dims' sizes
        ibdims = []
        for d in obatch:
            pos = self.r.randrange(len(ibatch) + 1)
            ibatch.insert(pos, operand[d])
            ibdims = [x + (1 if x >= pos else 0) for x in ibdims] + [pos]
        pairs = sorted(zip(obatch, ibdims), key=lambda p: p[0])
        return [p[0] for p in pairs], coll, sim, ibatch, [p[1] for p in pairs]

    def op_gather(self):
        operand = self.shape(self.r.choice([1, 2, 3]))
        obatch, coll, sim, ibatch, ibdims = self.gather_dims(operand)
        ivd = len(ibatch)
        indices = ibatch + [len(sim)]
        sizes = []
        for d, n in enumerate(operand):
            if d in coll or d in obatch:
                sizes.append(1)
            else:
                sizes.append(self.r.choice([n, n, 1, self.r.randrange(1, n + 1)]))
        offset_sizes = [sizes[d] for d in range(len(operand)) if d not in coll and d not in obatch]
        out_rank = len(ibatch) + len(offset_sizes)
        offset_dims = sorted(self.r.sample(range(out_rank), len(offset_sizes)))
        out, bi, oi = [], iter(ibatch), iter(offset_sizes)
        for i in range(out_rank):
            out.append(next(oi) if i in offset_dims else next(bi))
        a, idx = self.arg(operand), self.arg(indices, "i32")
        dn = "offset_dims = %s, collapsed_slice_dims = %s" % (ilist(offset_dims), ilist(coll))
        if obatch:
            dn += ", operand_batching_dims = %s, start_indices_batching_dims = %s" % (ilist(obatch), ilist(ibdims))
        dn += ", start_index_map = %s, index_vector_dim = %d" % (ilist(sim), ivd)
        self.emit('"stablehlo.gather"(%s, %s) <{dimension_numbers = #stablehlo.gather<%s>, slice_sizes = %s,'
                  ' indices_are_sorted = false}> : (%s, %s) -> %s' % (
                      a, idx, dn, arr(sizes), ty(operand), ty(indices, "i32"), ty(out)), out)

    def op_scatter(self):
        operand = self.shape(self.r.choice([1, 2, 3]))
        obatch, ins, sdims, ibatch, ibdims = self.gather_dims(operand)
        ivd = len(ibatch)
        indices = ibatch + [len(sdims)]
        window = []
        for d, n in enumerate(operand):
            if d not in ins and d not in obatch:
                window.append(self.r.choice([n, n, 1, self.r.randrange(1, n + 1)]))
        up_rank = len(ibatch) + len(window)
        uwd = sorted(self.r.sample(range(up_rank), len(window)))
        updates, bi, wi = [], iter(ibatch), iter(window)
        for i in range(up_rank):
            updates.append(next(wi) if i in uwd else next(bi))
        a, idx, u = self.arg(operand), self.arg(indices, "i32"), self.arg(updates)
        dn = "update_window_dims = %s, inserted_window_dims = %s" % (ilist(uwd), ilist(ins))
        if obatch:
            dn += ", input_batching_dims = %s, scatter_indices_batching_dims = %s" % (ilist(obatch), ilist(ibdims))
        dn += ", scatter_dims_to_operand_dims = %s, index_vector_dim = %d" % (ilist(sdims), ivd)
        body = region(["x", "y"], self.r.choice(["stablehlo.add", "stablehlo.add", "stablehlo.multiply"]))
        if self.r.random() < 0.2:
            body = "({\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    stablehlo.return %y : tensor<f32>\n  })"
        self.emit('"stablehlo.scatter"(%s, %s, %s) <{scatter_dimension_numbers = #stablehlo.scatter<%s>,'
                  ' indices_are_sorted = false, unique_indices = false}> %s : (%s, %s, %s) -> %s' % (
                      a, idx, u, dn, body, ty(operand), ty(indices, "i32"), ty(updates), ty(operand)), operand)

    def op_convolution(self):
        ns = self.r.choice([1, 2, 2])
        fg = self.r.choice([1, 1, 2])
        bg = 1 if fg > 1 else self.r.choice([1, 1, 2])
        batch = self.r.choice([1, 2, 4, 8]) * bg
        in_f = self.r.choice([1, 2, 4]) * fg
        out_f = self.r.choice([1, 2, 4]) * fg * bg
        spatial = [self.r.choice([1, 3, 4, 8, 16]) for _ in range(ns)]
        kernel = [self.r.choice([1, 2, 3]) for _ in range(ns)]
        st = [self.r.choice([1, 1, 2]) for _ in range(ns)]
        pad = [(self.r.choice([0, 0, 1]), self.r.choice([0, 0, 1])) for _ in range(ns)]
        ld = [self.r.choice([1, 1, 1, 2]) for _ in range(ns)]
        rd = [self.r.choice([1, 1, 1, 2]) for _ in range(ns)]
        osp = []
        for i in range(ns):
            inp = (spatial[i] - 1) * ld[i] + 1 + pad[i][0] + pad[i][1]
            win = (kernel[i] - 1) * rd[i] + 1
            if inp < win:
                kernel[i], rd[i], win = 1, 1, 1
            osp.append((inp - win) // st[i] + 1)
        out_batch = batch // bg

        def layout(kinds):
            order = list(kinds)
            self.r.shuffle(order)
            return order

        lk = layout(["b", "f"] + list(range(ns)))
        rk = layout(["i", "o"] + list(range(ns)))
        ok = layout(["b", "f"] + list(range(ns)))
        lhs = [batch if k == "b" else in_f if k == "f" else spatial[k] for k in lk]
        rhs = [in_f // fg if k == "i" else out_f if k == "o" else kernel[k] for k in rk]
        out = [out_batch if k == "b" else out_f if k == "f" else osp[k] for k in ok]
        spec = lambda ks: "[" + ", ".join(str(k) for k in ks) + "]"  # noqa: E731
        dn = "%sx%s->%s" % (spec(lk), spec(rk), spec(ok))
        x, y = self.arg(lhs), self.arg(rhs)
        attrs = ["dimension_numbers = #stablehlo.conv<%s>" % dn, "feature_group_count = %d : i64" % fg,
                 "batch_group_count = %d : i64" % bg, "window_strides = %s" % arr(st),
                 "padding = dense<%s> : tensor<%dx2xi64>" % (ilist(["[%d, %d]" % p for p in pad]), ns),
                 "lhs_dilation = %s" % arr(ld), "rhs_dilation = %s" % arr(rd)]
        self.emit('"stablehlo.convolution"(%s, %s) <{%s}> : (%s, %s) -> %s' % (
            x, y, ", ".join(attrs), ty(lhs), ty(rhs), ty(out)), out)

    def op_sort(self):
        s = self.shape()
        d = self.r.randrange(len(s))
        if self.r.random() < 0.3:
            s = [1 if i != d else n for i, n in enumerate(s)]
        n = self.r.choice([1, 2])
        ins = [self.arg(s) for _ in range(n)]
        sig = ", ".join("%%p%d: tensor<f32>" % i for i in range(2 * n))
        body = ("({\n  ^bb0(%s):\n    %%c = stablehlo.compare GT, %%p0, %%p1 : (tensor<f32>, tensor<f32>) -> tensor<i1>"
                "\n    stablehlo.return %%c : tensor<i1>\n  })" % sig)
        self.emit('"stablehlo.sort"(%s) <{dimension = %d : i64, is_stable = true}> %s : (%s) -> (%s)' % (
            ", ".join(ins), d, body, ", ".join([ty(s)] * n), ", ".join([ty(s)] * n)), s, results=n)

    def op_fft(self):
        lead = self.shape(self.r.choice([0, 1, 2]))
        k = self.r.choice([1, 1, 2, 3])
        fl = [self.r.choice([2, 4, 8]) for _ in range(k)]
        kind = self.r.choice(["FFT", "IFFT", "RFFT", "IRFFT"])
        c = "complex<f32>"
        if kind in ("FFT", "IFFT"):
            ins, out, ie, oe = lead + fl, lead + fl, c, c
        elif kind == "RFFT":
            ins, out, ie, oe = lead + fl, lead + fl[:-1] + [fl[-1] // 2 + 1], "f32", c
        else:
            ins, out, ie, oe = lead + fl[:-1] + [fl[-1] // 2 + 1], lead + fl, c, "f32"
        a = self.arg(ins, ie)
        self.emit('"stablehlo.fft"(%s) <{fft_type = #stablehlo<fft_type %s>, fft_length = %s}> : (%s) -> %s' % (
            a, kind, arr(fl), ty(ins, ie), ty(out, oe)), out if oe == "f32" else None, oe)

    def op_cholesky(self):
        n = self.r.choice([2, 4, 8])
        s = self.shape(self.r.choice([0, 1, 2])) + [n, n]
        a = self.arg(s)
        self.emit('"stablehlo.cholesky"(%s) <{lower = %s}> : (%s) -> %s' % (
            a, self.r.choice(["true", "false"]), ty(s), ty(s)), s)

    def op_triangular_solve(self):
        batch = self.shape(self.r.choice([0, 1, 2]))
        m, n = self.r.choice([2, 4, 8]), self.r.choice([2, 4, 8, 3])
        left = self.r.random() < 0.5
        a_s = batch + [m, m]
        b_s = batch + ([m, n] if left else [n, m])
        a, b = self.arg(a_s), self.arg(b_s)
        tr = self.r.choice(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])
        self.emit('"stablehlo.triangular_solve"(%s, %s) <{left_side = %s, lower = %s, unit_diagonal = false,'
                  ' transpose_a = #stablehlo<transpose %s>}> : (%s, %s) -> %s' % (
                      a, b, str(left).lower(), self.r.choice(["true", "false"]), tr, ty(a_s), ty(b_s), ty(b_s)), b_s)

    def op_bitcast(self):
        s = self.shape()
        k = self.r.choice(["same", "narrow", "widen"])
        if k == "same":
            a = self.arg(s)
            self.emit("stablehlo.bitcast_convert %s : (%s) -> %s" % (a, ty(s), ty(s, "i32")))
        elif k == "narrow":
            a = self.arg(s)
            self.emit("stablehlo.bitcast_convert %s : (%s) -> %s" % (a, ty(s), ty(s + [2], "f16")))
        else:
            a = self.arg(s + [2], "f16")
            self.emit("stablehlo.bitcast_convert %s : (%s) -> %s" % (a, ty(s + [2], "f16"), ty(s)), s)

    def op_rng(self):
        out = self.shape()
        st = [self.r.choice([2, 3])]
        a = self.arg(st, "ui64")
        self.emit('"stablehlo.rng_bit_generator"(%s) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}>'
                  ' : (%s) -> (%s, %s)' % (a, ty(st, "ui64"), ty(st, "ui64"), ty(out, "ui32")), None, results=2)

    def op_batch_norm(self):
        s = self.shape(self.r.choice([2, 3, 4]))
        fi = self.r.randrange(len(s))
        f = [s[fi]]
        x = self.arg(s)
        k = self.r.choice(["inference", "training", "grad"])
        common = "<{epsilon = 1.000000e-03 : f32, feature_index = %d : i64}>" % fi
        if k == "inference":
            ps = [self.arg(f) for _ in range(4)]
            self.emit('"stablehlo.batch_norm_inference"(%s, %s) %s : (%s, %s) -> %s' % (
                x, ", ".join(ps), common, ty(s), ", ".join([ty(f)] * 4), ty(s)), s)
        elif k == "training":
            ps = [self.arg(f) for _ in range(2)]
            self.emit('"stablehlo.batch_norm_training"(%s, %s) %s : (%s, %s) -> (%s, %s, %s)' % (
                x, ", ".join(ps), common, ty(s), ", ".join([ty(f)] * 2), ty(s), ty(f), ty(f)), None, results=3)
        else:
            ps = [self.arg(f) for _ in range(3)]
            g = self.arg(s)
            self.emit('"stablehlo.batch_norm_grad"(%s, %s, %s) %s : (%s, %s, %s) -> (%s, %s, %s)' % (
                x, ", ".join(ps), g, common, ty(s), ", ".join([ty(f)] * 3), ty(s), ty(s), ty(f), ty(f)),
                None, results=3)

    def op_select_and_scatter(self):
        s = self.shape(self.r.choice([1, 2, 3]))
        w = [self.r.choice([1, 1, 2]) if d >= 2 else 1 for d in s]
        st = [self.r.choice([1, 2]) for _ in s]
        src = [(d - w[i]) // st[i] + 1 for i, d in enumerate(s)]
        a, b, init = self.arg(s), self.arg(src), self.scalar_const()
        sel = ("({\n  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n    %c = stablehlo.compare GE, %p, %q : "
               "(tensor<f32>, tensor<f32>) -> tensor<i1>\n    stablehlo.return %c : tensor<i1>\n  }, ")
        sca = region(["x", "y"], "stablehlo.add")[1:]
        self.emit('"stablehlo.select_and_scatter"(%s, %s, %s) <{window_dimensions = %s, window_strides = %s}> %s%s'
                  ' : (%s, %s, tensor<f32>) -> %s' % (a, b, init, arr(w), arr(st), sel, sca, ty(s), ty(src), ty(s)), s)

    def op_collective(self):
        s = self.shape(self.r.choice([1, 2, 3]), lo=2)
        d = self.r.randrange(len(s))
        groups = "dense<[[0, 1]]> : tensor<1x2xi64>"
        k = self.r.choice(["all_gather", "all_to_all", "reduce_scatter", "collective_permute"])
        a = self.arg(s)
        if k == "all_gather":
            out = list(s)
            out[d] *= 2
            self.emit('"stablehlo.all_gather"(%s) <{all_gather_dim = %d : i64, replica_groups = %s}> : (%s) -> %s' % (
                a, d, groups, ty(s), ty(out)), out)
        elif k == "all_to_all":
            cd = self.r.randrange(len(s))
            if s[d] % 2:
                return self.op_pointwise()
            out = list(s)
            out[d] //= 2
            out[cd] *= 2
            self.emit('"stablehlo.all_to_all"(%s) <{split_dimension = %d : i64, concat_dimension = %d : i64,'
                      ' split_count = 2 : i64, replica_groups = %s}> : (%s) -> %s' % (a, d, cd, groups, ty(s), ty(out)),
                      out)
        elif k == "reduce_scatter":
            if s[d] % 2:
                return self.op_pointwise()
            out = list(s)
            out[d] //= 2
            self.emit('"stablehlo.reduce_scatter"(%s) <{scatter_dimension = %d : i64, replica_groups = %s}> %s'
                      ' : (%s) -> %s' % (a, d, groups, region(["x", "y"], "stablehlo.add"), ty(s), ty(out)), out)
        else:
            self.emit('"stablehlo.collective_permute"(%s) <{source_target_pairs = dense<[[0, 1], [1, 0]]> :'
                      ' tensor<2x2xi64>}> : (%s) -> %s' % (a, ty(s), ty(s)), s)

    def op_custom_call(self):
        s = self.shape()
        target = self.r.choice(["Sharding", "annotate_device_placement", "MoveToHost", "X64SplitLow", "mhlo.erf",
                                "LayoutConstraint", "tpu_custom_call", "Eigh", "Qr", "mhlo.topk", "ApproxTopK",
                                "my_kernel"])
        if target in ("Eigh", "Qr"):
            n = self.r.choice([2, 4])
            s = s[:1] + [n, n]
            a = self.arg(s)
            if target == "Eigh":
                self.emit('stablehlo.custom_call @Eigh(%s) : (%s) -> (%s, %s)' % (a, ty(s), ty(s), ty(s[:-1])),
                          None, results=2)
            else:
                self.emit('stablehlo.custom_call @Qr(%s) : (%s) -> (%s, %s)' % (a, ty(s), ty(s), ty(s[:-2] + [n])),
                          None, results=2)
            return
        if target in ("mhlo.topk", "ApproxTopK"):
            k = self.r.randrange(1, s[-1] + 1)
            out = s[:-1] + [k]
            a = self.arg(s)
            if target == "mhlo.topk":
                self.emit('stablehlo.custom_call @mhlo.topk(%s) {mhlo.attributes = {k = %d : i64, largest = true}}'
                          ' : (%s) -> (%s, %s)' % (a, k, ty(s), ty(out), ty(out, "i32")), None, results=2)
            else:
                b, i0, i1 = self.arg(s, "i32"), self.scalar_const(), self.scalar_const("i32")
                self.emit('stablehlo.custom_call @ApproxTopK(%s, %s, %s, %s) {mhlo.backend_config = '
                          '{aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = %d : i64,'
                          ' reduction_input_size_override = -1 : i64, top_k = %d : i64}, called_computations ='
                          ' [@top_k_gt_f32_comparator]} : (%s, %s, tensor<f32>, tensor<i32>) -> (%s, %s)' % (
                              a, b, i0, i1, len(s) - 1, k, ty(s), ty(s, "i32"), ty(out), ty(out, "i32")),
                          None, results=2)
                self.comparator = True
            return
        a = self.arg(s)
        self.emit("stablehlo.custom_call @%s(%s) : (%s) -> %s" % (target, a, ty(s), ty(s)), s)

    OPS = [
        ("op_pointwise", 2), ("op_reshape", 6), ("op_transpose", 2), ("op_broadcast", 3), ("op_dot_general", 5),
        ("op_dot", 2), ("op_reduce", 3), ("op_reduce_window", 3), ("op_concat", 2), ("op_slice", 2), ("op_pad", 3),
        ("op_reverse", 1), ("op_dynamic_slice", 2), ("op_dynamic_update_slice", 2), ("op_gather", 6),
        ("op_scatter", 6), ("op_convolution", 6), ("op_sort", 2), ("op_fft", 2), ("op_cholesky", 1),
        ("op_triangular_solve", 2), ("op_bitcast", 2), ("op_rng", 1), ("op_batch_norm", 2),
        ("op_select_and_scatter", 2), ("op_collective", 2), ("op_custom_call", 3),
    ]

    def program(self):
        mesh = self.mesh()
        self.comparator = False
        total = sum(w for _, w in self.OPS)
        for _ in range(self.r.choice([1, 1, 2, 3])):
            x = self.r.uniform(0, total)
            for name, w in self.OPS:
                x -= w
                if x <= 0:
                    getattr(self, name)()
                    break
        args = []
        for name, t, sh in self.args:
            args.append("%s: %s%s" % (name, t, " {sdy.sharding = #sdy.sharding%s}" % sh if sh else ""))
        rets = self.rets if self.r.random() < 0.9 else []
        res_tys = []
        for _, t in rets:
            dims = t.count("x") if t.startswith("tensor<") else 0
            if dims and self.r.random() < 0.25:
                res_tys.append("%s {sdy.sharding = #sdy.sharding%s}" % (t, self.sharding(dims)))
            else:
                res_tys.append(t)
        out = [mesh, "func.func @main(%s) -> (%s) {" % (", ".join(args), ", ".join(res_tys))]
        out += ["  " + line for line in self.lines]
        out += ["  return" + (" %s : %s" % (", ".join(n for n, _ in rets), ", ".join(t for _, t in rets))
                              if rets else ""), "}"]
        if self.comparator:
            out += ["func.func private @top_k_gt_f32_comparator(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>,"
                    " %d: tensor<i32>) -> tensor<i1> {",
                    "  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                    "  return %0 : tensor<i1>", "}"]
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    a = ap.parse_args()
    chunks = [Gen(random.Random(a.seed * 1000003 + i)).program() for i in range(a.count)]
    print("// -----\n".join(chunks), end="")


if __name__ == "__main__":
    main()
