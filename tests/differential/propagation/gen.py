#!/usr/bin/env python3
"""Random valid sdy programs for differential propagation testing.

  gen.py --seed S --count N > programs.mlir

Each program is one `// -----` chunk: a mesh and a `@main` function built from
random ops over random tensors: element-wise ops, reshapes that split or merge
dimensions, transposes, broadcasts, dot_generals, reductions, concatenates, slices,
while loops, sharding constraints, sharding groups, manual computations and
propagation barriers; with random shardings (open/closed dimensions, sub-axes,
priorities, replicated axes) on arguments, results and some ops.

`--wide` widens the programs: dot_generals of rank-2/3 operands with any number of
batching and contracting dimensions anywhere, often of one value with itself or with
a permutation of its dimensions; fans of transposes of one value; variadic reduces
(two results); values used by many ops (not only recent ones); private functions with
sharded arguments whose bodies transpose their argument or multiply it with itself or
its transpose (a second result keeps the product alive), called from several places;
results taken from anywhere (one value sometimes twice); meshes of up to 5 axes, more
often with a size-1 axis. A value reaching one op through several operands, or many
ops, makes the result depend on the order of Shardy's worklist (MLIR use lists,
newest use first) and on the tie-breaking between factors: a driver that revisits
users oldest-first disagrees with Shardy on a few percent of these programs.

Standard library only. Deterministic for a given seed.
"""

import argparse
import random

AXIS_NAMES = ["a", "b", "c", "d", "e"]


class Gen:
    def __init__(self, rng, wide=False):
        self.r = rng
        self.wide = wide
        self.lines = []
        self.args = []  # (name, shape, sharding text or None)
        self.values = []  # (name, shape)
        self.n = 0
        self.group = 0
        self.helpers = []
        # Sparse programs (wide only): few shardings on a small mesh, so one axis
        # spreads everywhere and meets itself at ops reached by several paths, where
        # the order of Shardy's worklist decides which dimension gets it.
        self.sparse = wide and rng.random() < 0.5

    # ----- meshes and shardings -----

    def mesh(self):
        k = self.r.choice([1, 2, 2, 3, 3, 4] + ([4, 5] if self.wide else []))
        if self.sparse:
            k = self.r.choice([1, 2, 2])
        sizes = [self.r.choice([2, 2, 4, 4, 8]) for _ in range(k)]
        if self.r.random() < (0.35 if self.wide else 0.1):
            sizes[self.r.randrange(k)] = 1
        self.axes = list(zip(AXIS_NAMES[:k], sizes))
        return "sdy.mesh @mesh = <[%s]>" % ", ".join('"%s"=%d' % a for a in self.axes)

    def axis_pool(self):
        """Axis refs that can be used together (full axes and sub-axes)."""
        pool = []
        for name, size in self.axes:
            if size >= 4 and self.r.random() < 0.3:
                # split into two sub-axes usable independently
                half = 2
                pool.append('"%s":(1)%d' % (name, half))
                pool.append('"%s":(%d)%d' % (name, half, size // half))
            else:
                pool.append('"%s"' % name)
        self.r.shuffle(pool)
        return pool

    def sharding(self, rank, allow_priority=True, closed_bias=0.3, max_axes=None):
        pool = self.axis_pool()
        dims = []
        for _ in range(rank):
            axes = []
            while pool and self.r.random() < 0.45 and (max_axes is None or len(axes) < max_axes):
                nxt = pool[-1]
                if axes and axes[-1].split(":")[0] == nxt.split(":")[0]:
                    break  # two sub-axes of one axis next to each other must be merged
                axes.append(pool.pop())
            closed = self.r.random() < closed_bias
            text = "{" + ", ".join(axes)
            if not closed:
                text += (", ?" if axes else "?")
            text += "}"
            if allow_priority and (axes or not closed) and self.r.random() < 0.15:
                text += "p%d" % self.r.randrange(3)
            dims.append(text)
        extra = ""
        if pool and self.r.random() < 0.15:
            rep = [pool.pop()]
            # replicated axes must be sorted by mesh order; keep one.
            extra = ", replicated={%s}" % ", ".join(rep)
        return "<@mesh, [%s]%s>" % (", ".join(dims), extra)

    # ----- values -----

    def fresh(self):
        self.n += 1
        return "%%v%d" % self.n

    def ty(self, shape):
        return "tensor<%sf32>" % "".join("%dx" % d for d in shape)

    def rand_shape(self):
        rank = self.r.choice([1, 2, 2, 2, 3, 3])
        return [self.r.choice([2, 4, 4, 8, 8, 16, 6, 12]) for _ in range(rank)]

    def new_arg(self, shape):
        name = "%%arg%d" % len(self.args)
        sh = self.sharding(len(shape)) if self.r.random() < (0.15 if self.sparse else 0.5) else None
        self.args.append((name, shape, sh))
        self.values.append((name, shape))
        return name

    def pick(self, pred=None):
        cands = [v for v in self.values if pred is None or pred(v)]
        if not cands:
            return None
        # prefer recent values (wide programs reuse any value)
        if not (self.wide and self.r.random() < 0.5):
            cands = cands[-6:]
        return self.r.choice(cands)

    def maybe_attr(self, shape):
        if self.r.random() < (0.03 if self.sparse else 0.15):
            return " {sdy.sharding = #sdy.sharding_per_value<[%s]>}" % self.sharding(len(shape))
        return ""

    def emit(self, line):
        self.lines.append("  " + line)

    # ----- ops -----

    def op_elementwise(self):
        v = self.pick()
        name, shape = v
        other = self.pick(lambda x: x[1] == shape and x[0] != name)
        o = other[0] if other and self.r.random() < 0.7 else name
        op = self.r.choice(["add", "multiply", "subtract", "maximum"])
        res = self.fresh()
        self.emit("%s = stablehlo.%s %s, %s%s : %s" % (res, op, name, o, self.maybe_attr(shape), self.ty(shape)))
        self.values.append((res, shape))

    def op_unary(self):
        name, shape = self.pick()
        op = self.r.choice(["negate", "exponential", "abs", "tanh"])
        res = self.fresh()
        self.emit("%s = stablehlo.%s %s%s : %s" % (res, op, name, self.maybe_attr(shape), self.ty(shape)))
        self.values.append((res, shape))

    def op_reshape(self):
        name, shape = self.pick()
        new = list(shape)
        splittable = [i for i, d in enumerate(shape) if d in (4, 8, 16, 12, 6)]
        if len(shape) >= 2 and (self.r.random() < 0.5 or not splittable) and len(shape) > 1:
            i = self.r.randrange(len(shape) - 1)
            new[i:i + 2] = [shape[i] * shape[i + 1]]
        elif splittable and len(shape) < 4:
            i = self.r.choice(splittable)
            d = shape[i]
            p = self.r.choice([f for f in (2, 3, 4) if d % f == 0 and d // f > 1] or [2])
            new[i:i + 1] = [p, d // p]
        else:
            return self.op_unary()
        res = self.fresh()
        self.emit("%s = stablehlo.reshape %s%s : (%s) -> %s" % (res, name, self.maybe_attr(new), self.ty(shape), self.ty(new)))
        self.values.append((res, new))

    def op_transpose(self):
        name, shape = self.pick(lambda v: len(v[1]) >= 2) or (None, None)
        if name is None:
            return self.op_unary()
        perm = list(range(len(shape)))
        while perm == sorted(perm):
            self.r.shuffle(perm)
        new = [shape[p] for p in perm]
        res = self.fresh()
        self.emit("%s = stablehlo.transpose %s, dims = [%s]%s : (%s) -> %s" % (
            res, name, ", ".join(map(str, perm)), self.maybe_attr(new), self.ty(shape), self.ty(new)))
        self.values.append((res, new))

    def op_broadcast(self):
        name, shape = self.pick(lambda v: len(v[1]) <= 2) or (None, None)
        if name is None:
            return self.op_unary()
        pos = self.r.randrange(len(shape) + 1)
        new = list(shape)
        new.insert(pos, self.r.choice([2, 4, 8]))
        dims = [i for i in range(len(new)) if i != pos]
        res = self.fresh()
        self.emit("%s = stablehlo.broadcast_in_dim %s, dims = [%s]%s : (%s) -> %s" % (
            res, name, ", ".join(map(str, dims)), self.maybe_attr(new), self.ty(shape), self.ty(new)))
        self.values.append((res, new))

    def op_dot(self):
        lhs = self.pick(lambda v: len(v[1]) == 2)
        if lhs is None:
            return self.op_unary()
        lname, lshape = lhs
        m, k = lshape
        n = self.r.choice([2, 4, 8, 16])
        rhs = self.pick(lambda v: len(v[1]) == 2 and v[1][0] == k and v[0] != lname)
        if rhs is None or self.r.random() < 0.3:
            rname = self.new_arg([k, n])
        else:
            rname, (_, n) = rhs
        res = self.fresh()
        self.emit("%s = stablehlo.dot_general %s, %s, contracting_dims = [1] x [0]%s : (%s, %s) -> %s" % (
            res, lname, rname, self.maybe_attr([m, n]), self.ty([m, k]), self.ty([k, n]), self.ty([m, n])))
        self.values.append((res, [m, n]))

    def op_dot3(self):
        """A dot_general of two rank-3 values: one batching dimension, one contracting
        dimension, each anywhere in either operand."""
        lhs = self.pick(lambda v: len(v[1]) == 3)
        if lhs is None:
            return self.op_dot()
        lname, lshape = lhs
        lb, lc = self.r.sample(range(3), 2)
        lfree = [d for d in range(3) if d not in (lb, lc)][0]
        rb, rc = self.r.sample(range(3), 2)
        rfree = [d for d in range(3) if d not in (rb, rc)][0]
        rshape = [0, 0, 0]
        rshape[rb], rshape[rc] = lshape[lb], lshape[lc]
        rshape[rfree] = self.r.choice([2, 4, 8, 16])
        rhs = self.pick(lambda v: v[1] == rshape)
        rname = rhs[0] if rhs and self.r.random() < 0.7 else self.new_arg(rshape)
        new = [lshape[lb], lshape[lfree], rshape[rfree]]
        res = self.fresh()
        self.emit("%s = stablehlo.dot_general %s, %s, batching_dims = [%d] x [%d], contracting_dims = [%d] x [%d]%s : (%s, %s) -> %s" % (
            res, lname, rname, lb, rb, lc, rc, self.maybe_attr(new), self.ty(lshape), self.ty(rshape), self.ty(new)))
        self.values.append((res, new))

    def op_dotn(self):
        """A dot_general of rank-2/3 operands with any number of batching and contracting
        dimensions anywhere; the rhs is often the lhs itself or a transpose of it (one
        value reaching one op through several operands)."""
        lhs = self.pick(lambda v: len(v[1]) in (2, 3))
        if lhs is None:
            return self.op_dot()
        lname, lshape = lhs
        lr = len(lshape)
        nb = self.r.choice([0, 0, 1, 1, 2]) if lr == 3 else self.r.choice([0, 0, 1])
        nc = self.r.choice([0, 1, 1, 2])
        nb, nc = min(nb, lr), min(nc, lr - min(nb, lr))
        ldims = self.r.sample(range(lr), nb + nc)
        lb, lc = ldims[:nb], ldims[nb:]
        mode = self.r.random()
        if mode < 0.35:
            # the same value on both sides: same positions, or a permutation of them
            rname, rshape = lname, lshape
            rdims = list(ldims) if self.r.random() < 0.5 else None
            if rdims is None:
                cands = [d for d in range(lr)]
                for _ in range(8):
                    rd = self.r.sample(cands, nb + nc)
                    if all(rshape[a] == lshape[b] for a, b in zip(rd, ldims)):
                        rdims = rd
                        break
                rdims = rdims or list(ldims)
        else:
            rr = self.r.choice([2, 3]) if nb + nc < 3 else 3
            rr = max(rr, nb + nc)
            rdims = self.r.sample(range(rr), nb + nc)
            rshape = [self.r.choice([2, 4, 8, 16]) for _ in range(rr)]
            for a, b in zip(rdims, ldims):
                rshape[a] = lshape[b]
            rhs = self.pick(lambda v: v[1] == rshape)
            rname = rhs[0] if rhs and self.r.random() < 0.7 else self.new_arg(rshape)
        rb, rc = rdims[:nb], rdims[nb:]
        lfree = [d for d in range(lr) if d not in ldims]
        rfree = [d for d in range(len(rshape)) if d not in rdims]
        new = [lshape[d] for d in lb] + [lshape[d] for d in lfree] + [rshape[d] for d in rfree]
        if not new or len(new) > 4:
            return self.op_dot()
        fmt = lambda ds: ", ".join(map(str, ds))
        dims = []
        if nb:
            dims.append("batching_dims = [%s] x [%s]" % (fmt(lb), fmt(rb)))
        dims.append("contracting_dims = [%s] x [%s]" % (fmt(lc), fmt(rc)))
        res = self.fresh()
        self.emit("%s = stablehlo.dot_general %s, %s, %s%s : (%s, %s) -> %s" % (
            res, lname, rname, ", ".join(dims), self.maybe_attr(new), self.ty(lshape), self.ty(rshape),
            self.ty(new)))
        self.values.append((res, new))

    def op_transposes(self):
        """Two or three transposes of one value (its uses in several orders)."""
        name, shape = self.pick(lambda v: len(v[1]) >= 2) or (None, None)
        if name is None:
            return self.op_unary()
        for _ in range(self.r.choice([2, 2, 3])):
            perm = list(range(len(shape)))
            while perm == sorted(perm):
                self.r.shuffle(perm)
            new = [shape[p] for p in perm]
            res = self.fresh()
            self.emit("%s = stablehlo.transpose %s, dims = [%s]%s : (%s) -> %s" % (
                res, name, ", ".join(map(str, perm)), self.maybe_attr(new), self.ty(shape), self.ty(new)))
            self.values.append((res, new))

    def op_reduce2(self):
        """A variadic reduce: two inputs of one shape, two results."""
        a = self.pick(lambda v: len(v[1]) >= 2)
        if a is None:
            return self.op_unary()
        name, shape = a
        other = self.pick(lambda v: v[1] == shape)
        o = other[0] if other and self.r.random() < 0.7 else name
        d = self.r.randrange(len(shape))
        new = [s for i, s in enumerate(shape) if i != d]
        c = self.fresh()
        self.emit("%s = stablehlo.constant dense<0.000000e+00> : tensor<f32>" % c)
        res = self.fresh()
        t, nt = self.ty(shape), self.ty(new)
        attr = ""
        if self.r.random() < 0.2:
            attr = " {sdy.sharding = #sdy.sharding_per_value<[%s, %s]>}" % (
                self.sharding(len(new)), self.sharding(len(new)))
        self.emit("%s:2 = stablehlo.reduce(%s init: %s), (%s init: %s) across dimensions = [%d]%s : "
                  "(%s, %s, tensor<f32>, tensor<f32>) -> (%s, %s)" % (res, name, c, o, c, d, attr, t, t, nt, nt))
        x, y, z, w = (self.fresh() for _ in range(4))
        self.emit(" reducer(%s: tensor<f32>, %s: tensor<f32>) (%s: tensor<f32>, %s: tensor<f32>) {" % (x, y, z, w))
        s1, s2 = self.fresh(), self.fresh()
        self.emit("  %s = stablehlo.add %s, %s : tensor<f32>" % (s1, x, y))
        self.emit("  %s = stablehlo.maximum %s, %s : tensor<f32>" % (s2, z, w))
        self.emit("  stablehlo.return %s, %s : tensor<f32>, tensor<f32>" % (s1, s2))
        self.emit("}")
        self.values.append((res + "#0", new))
        self.values.append((res + "#1", new))

    def op_reduce(self):
        name, shape = self.pick(lambda v: len(v[1]) >= 2) or (None, None)
        if name is None:
            return self.op_unary()
        d = self.r.randrange(len(shape))
        new = [s for i, s in enumerate(shape) if i != d]
        c = self.fresh()
        self.emit("%s = stablehlo.constant dense<0.000000e+00> : tensor<f32>" % c)
        res = self.fresh()
        self.emit("%s = stablehlo.reduce(%s init: %s) applies stablehlo.add across dimensions = [%d]%s : (%s, tensor<f32>) -> %s" % (
            res, name, c, d, self.maybe_attr(new), self.ty(shape), self.ty(new)))
        self.values.append((res, new))

    def op_concat(self):
        name, shape = self.pick()
        other = self.pick(lambda v: v[1] == shape)
        o = other[0] if other else name
        d = self.r.randrange(len(shape))
        new = list(shape)
        new[d] *= 2
        res = self.fresh()
        self.emit("%s = stablehlo.concatenate %s, %s, dim = %d%s : (%s, %s) -> %s" % (
            res, name, o, d, self.maybe_attr(new), self.ty(shape), self.ty(shape), self.ty(new)))
        self.values.append((res, new))

    def op_slice(self):
        name, shape = self.pick(lambda v: any(d >= 4 for d in v[1])) or (None, None)
        if name is None:
            return self.op_unary()
        d = self.r.choice([i for i, s in enumerate(shape) if s >= 4])
        new = list(shape)
        new[d] = shape[d] // 2
        starts = [0] * len(shape)
        limits = list(shape)
        limits[d] = new[d]
        res = self.fresh()
        self.emit("%s = stablehlo.slice %s [%s]%s : (%s) -> %s" % (
            res, name, ", ".join("%d:%d" % (a, b) for a, b in zip(starts, limits)), self.maybe_attr(new),
            self.ty(shape), self.ty(new)))
        self.values.append((res, new))

    def op_constraint(self):
        name, shape = self.pick()
        res = self.fresh()
        self.emit("%s = sdy.sharding_constraint %s %s : %s" % (res, name, self.sharding(len(shape), allow_priority=False, closed_bias=0.5), self.ty(shape)))
        self.values.append((res, shape))

    def op_group(self):
        name, shape = self.pick()
        other = self.pick(lambda v: v[1] == shape and v[0] != name)
        if other is None:
            return self.op_unary()
        gid = self.group
        self.group += 1
        self.emit("sdy.sharding_group %s group_id=%d : %s" % (name, gid, self.ty(shape)))
        self.emit("sdy.sharding_group %s group_id=%d : %s" % (other[0], gid, self.ty(shape)))

    def op_barrier(self):
        name, shape = self.pick()
        res = self.fresh()
        d = self.r.choice(["FORWARD", "BACKWARD", "NONE"])
        self.emit("%s = sdy.propagation_barrier %s allowed_direction=%s : %s" % (res, name, d, self.ty(shape)))
        self.values.append((res, shape))

    def op_while(self):
        name, shape = self.pick()
        res = self.fresh()
        it = "%%it%d" % self.n
        t = self.ty(shape)
        inner = self.fresh()
        c = self.fresh()
        self.emit("%s = stablehlo.while(%s = %s) : %s" % (res, it, name, t))
        self.emit("  cond {")
        self.emit("    %s = stablehlo.constant dense<true> : tensor<i1>" % c)
        self.emit("    stablehlo.return %s : tensor<i1>" % c)
        self.emit("  } do {")
        attr = self.maybe_attr(shape)
        self.emit("    %s = stablehlo.add %s, %s%s : %s" % (inner, it, it, attr, t))
        self.emit("    stablehlo.return %s : %s" % (inner, t))
        self.emit("  }")
        self.values.append((res, shape))

    def op_manual(self):
        # manual axis: an axis whose size divides dim 0
        name, shape = self.pick()
        cands = [(n, s) for n, s in self.axes if s > 1 and shape[0] % s == 0]
        if not cands:
            return self.op_unary()
        axis, size = self.r.choice(cands)
        local = [shape[0] // size] + shape[1:]
        free = [n for n, s in self.axes if n != axis]
        def mc_sharding():
            dims = []
            for i in range(len(shape)):
                axes = ['"%s"' % axis] if i == 0 else []
                if free and self.r.random() < 0.3:
                    axes.append('"%s"' % free.pop(self.r.randrange(len(free))))
                open_ = self.r.random() < 0.6
                dims.append("{" + ", ".join(axes) + ((", ?" if axes else "?") if open_ else "") + "}")
            return "<@mesh, [%s]>" % ", ".join(dims)
        ins = mc_sharding()
        free = [n for n, s in self.axes if n != axis]
        outs = mc_sharding()
        res = self.fresh()
        arg = "%%mc%d" % self.n
        inner = self.fresh()
        self.emit("%s = sdy.manual_computation(%s) in_shardings=[%s] out_shardings=[%s] manual_axes={\"%s\"} (%s: %s) {" % (
            res, name, ins, outs, axis, arg, self.ty(local)))
        self.emit("  %s = stablehlo.add %s, %s%s : %s" % (inner, arg, arg, "", self.ty(local)))
        self.emit("  sdy.return %s : %s" % (inner, self.ty(local)))
        self.emit("} : (%s) -> %s" % (self.ty(shape), self.ty(shape)))
        self.values.append((res, shape))

    def op_opt_barrier(self):
        name, shape = self.pick()
        res = self.fresh()
        self.emit("%s = stablehlo.optimization_barrier %s : %s" % (res, name, self.ty(shape)))
        self.values.append((res, shape))

    def op_case(self):
        name, shape = self.pick()
        other = self.pick(lambda v: v[1] == shape)
        o = other[0] if other else name
        if not hasattr(self, "index_arg"):
            self.index_arg = "%%arg%d" % len(self.args)
            self.args.append((self.index_arg, None, None))
        res = self.fresh()
        t = self.ty(shape)
        self.emit('%s = "stablehlo.case"(%s) ({' % (res, self.index_arg))
        self.emit("  stablehlo.return %s : %s" % (name, t))
        self.emit("}, {")
        self.emit("  stablehlo.return %s : %s" % (o, t))
        self.emit("}) : (tensor<i32>) -> %s" % t)
        self.values.append((res, shape))

    def op_call(self):
        name, shape = self.pick()
        if not hasattr(self, "funcs"):
            self.funcs = []
        t = self.ty(shape)
        fn = None
        for f, fshape, _ in self.funcs:
            if fshape == shape and self.r.random() < 0.6:
                fn = f
        if fn is None:
            fn = "f%d" % len(self.funcs)
            self.funcs.append((fn, shape, None))
            arg_sh = ""
            if self.r.random() < (0.6 if self.wide else 0.3):
                arg_sh = " {sdy.sharding = #sdy.sharding%s}" % self.sharding(len(shape), allow_priority=False)
            bodies = ["add", "multiply", "maximum"]
            if self.wide and len(shape) >= 2:
                bodies += ["transposes", "dot", "selfdot"]
            body = self.r.choice(bodies)
            extra = None  # the shape of a second result (%d), if any
            r = len(shape)
            perm = list(range(r))[::-1]
            tt = self.ty([shape[p] for p in perm])
            if body == "transposes":
                text = ("  %%t = stablehlo.transpose %%x, dims = [%s] : (%s) -> %s\n"
                        "  %%y = stablehlo.transpose %%t, dims = [%s] : (%s) -> %s\n") % (
                            ", ".join(map(str, perm)), t, tt, ", ".join(map(str, perm)), tt, t)
            elif body == "dot":
                # x (.., k) times its transpose (k, ..): contract x's last with t's first
                lfree = shape[:-1]
                rfree = [shape[p] for p in perm][1:]
                text = ("  %%t = stablehlo.transpose %%x, dims = [%s] : (%s) -> %s\n"
                        "  %%d = stablehlo.dot_general %%x, %%t, contracting_dims = [%d] x [0] : (%s, %s) -> %s\n"
                        "  %%y = stablehlo.add %%x, %%x : %s\n") % (
                            ", ".join(map(str, perm)), t, tt, r - 1, t, tt, self.ty(lfree + rfree), t)
                extra = lfree + rfree
                if len(extra) > 4:
                    text = "  %%y = stablehlo.add %%x, %%x : %s\n" % t
                    extra = None
            elif body == "selfdot":
                # x with itself: batching on dim 0, contracting on the last
                out = [shape[0]] + shape[1:-1] + shape[1:-1]
                text = ("  %%d = stablehlo.dot_general %%x, %%x, batching_dims = [0] x [0], contracting_dims = [%d] x [%d]"
                        " : (%s, %s) -> %s\n"
                        "  %%y = stablehlo.multiply %%x, %%x : %s\n") % (r - 1, r - 1, t, t, self.ty(out), t)
                extra = out
            else:
                text = "  %%y = stablehlo.%s %%x, %%x : %s\n" % (body, t)
            if extra is None:
                self.helpers.append("func.func private @%s(%%x: %s%s) -> %s {\n%s  return %%y : %s\n}\n" % (
                    fn, t, arg_sh, t, text, t))
            else:
                et = self.ty(extra)
                self.helpers.append("func.func private @%s(%%x: %s%s) -> (%s, %s) {\n%s  return %%y, %%d : %s, %s\n}\n" % (
                    fn, t, arg_sh, t, et, text, t, et))
            self.funcs[-1] = (fn, shape, extra)
        extra = next(e for f, _, e in self.funcs if f == fn)
        res = self.fresh()
        if extra is None:
            self.emit("%s = call @%s(%s) : (%s) -> %s" % (res, fn, name, t, t))
            self.values.append((res, shape))
        else:
            et = self.ty(extra)
            self.emit("%s:2 = call @%s(%s) : (%s) -> (%s, %s)" % (res, fn, name, t, t, et))
            self.values.append((res + "#0", shape))
            self.values.append((res + "#1", extra))

    def program(self):
        mesh = self.mesh()
        for _ in range(self.r.choice([1, 2, 2, 3])):
            self.new_arg(self.rand_shape())
        ops = [
            (self.op_elementwise, 5), (self.op_unary, 2), (self.op_reshape, 4), (self.op_transpose, 2),
            (self.op_broadcast, 2), (self.op_dot, 4), (self.op_reduce, 2), (self.op_concat, 2),
            (self.op_slice, 1), (self.op_constraint, 2), (self.op_group, 1), (self.op_barrier, 1),
            (self.op_while, 1), (self.op_manual, 1), (self.op_opt_barrier, 1), (self.op_case, 1),
            (self.op_call, 1),
        ]
        if self.wide:
            ops += [(self.op_dot3, 3), (self.op_call, 2), (self.op_transpose, 2), (self.op_dotn, 5),
                    (self.op_transposes, 2), (self.op_reduce2, 1)]
        total = sum(w for _, w in ops)
        n_ops = self.r.randrange(5, 14) if self.sparse else self.r.randrange(3, 10)
        constrain_at = self.r.randrange(n_ops) if self.sparse and self.r.random() < 0.6 else -1
        for k in range(n_ops):
            if k == constrain_at:
                self.op_constraint()
                continue
            x = self.r.uniform(0, total)
            for f, w in ops:
                x -= w
                if x <= 0:
                    f()
                    break
        nres = self.r.choice([1, 1, 2])
        rets = []
        for v in reversed(self.values):
            if len(rets) < nres and v not in rets:
                rets.append(v)
        if self.wide:
            # results from anywhere (fewer dead ops), sometimes one value twice
            for _ in range(self.r.choice([0, 1, 2])):
                rets.insert(self.r.randrange(len(rets) + 1), self.r.choice(self.values))
        res_tys = []
        for name, shape in rets:
            if self.r.random() < (0.1 if self.sparse else 0.3):
                res_tys.append("%s {sdy.sharding = #sdy.sharding%s}" % (self.ty(shape), self.sharding(len(shape))))
            else:
                res_tys.append(self.ty(shape))
        args = []
        for name, shape, sh in self.args:
            if shape is None:
                args.append("%s: tensor<i32>" % name)
            elif sh:
                args.append("%s: %s {sdy.sharding = #sdy.sharding%s}" % (name, self.ty(shape), sh))
            else:
                args.append("%s: %s" % (name, self.ty(shape)))
        out = [mesh, "func.func @main(%s) -> (%s) {" % (", ".join(args), ", ".join(res_tys))]
        out += self.lines
        out.append("  return %s : %s" % (", ".join(n for n, _ in rets), ", ".join(self.ty(s) for _, s in rets)))
        out.append("}")
        return "\n".join(out) + "\n" + "".join(self.helpers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--wide", action="store_true", help="wider programs (see the module doc)")
    a = ap.parse_args()
    chunks = []
    for i in range(a.count):
        rng = random.Random(a.seed * 1000003 + i)
        chunks.append(Gen(rng, a.wide).program())
    print("// -----\n".join(chunks), end="")


if __name__ == "__main__":
    main()
