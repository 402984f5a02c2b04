#!/usr/bin/env python3
"""Random sdy programs for differential testing of `-canonicalize`.

  gen.py --seed S --count N > programs.mlir

Each program is one `// -----` chunk: a mesh and a `@main` function that pushes
tensors through random chains of what Shardy's canonicalization patterns look at:
collectives (all_gather, all_slice, all_reduce followed by all_slice, reduce_scatter,
all_to_all chains, collective_permute, replicated/sharded_to_unreduced followed by
all_reduce), reshard chains and repeated reshards (also behind reshapes and
transposes), manual computations with unused arguments, stablehlo constants (also in
while loops) and unused side-effect-free ops. Shardings are tracked so that most
programs verify; the harness skips the ones real Shardy rejects.

Avoided on purpose (known oracle differences, see ../../../../shared/tools/
oracle-drift.txt): reduction kinds other than sum, manual computations whose manual
axes have size 1 (the oracle cannot inline), sub-axes.

Standard library only. Deterministic for a given seed.
"""

import argparse
import random

AXES = ["x", "y", "z", "w"]


class Program:
    def __init__(self, r):
        self.r = r
        k = r.choice([2, 3, 3, 4])
        self.mesh = [(AXES[i], r.choice([2, 2, 4])) for i in range(k)]
        self.order = {a: i for i, (a, _) in enumerate(self.mesh)}
        self.lines = []
        self.n = 0
        # name -> (shape, dims: list of axis lists, unreduced: list)
        self.vals = {}
        self.live = []

    def fresh(self):
        self.n += 1
        return "%%v%d" % self.n

    @staticmethod
    def ty(shape):
        return "tensor<%sxf32>" % "x".join(str(d) for d in shape)

    def sort_axes(self, axes):
        return sorted(axes, key=lambda a: self.order[a])

    def sharding(self, dims, unreduced=(), open_dims=()):
        parts = []
        for i, d in enumerate(dims):
            inner = ", ".join('"%s"' % a for a in d)
            if i in open_dims:
                inner = inner + ", ?" if inner else "?"
            parts.append("{" + inner + "}")
        text = "<@mesh, [%s]" % ", ".join(parts)
        if unreduced:
            text += ", unreduced={%s}" % ", ".join('"%s"' % a for a in self.sort_axes(unreduced))
        return text + ">"

    def used(self, v):
        _, dims, unreduced = self.vals[v]
        return {a for d in dims for a in d} | set(unreduced)

    def free(self, v):
        return [a for a, _ in self.mesh if a not in self.used(v)]

    def emit(self, line):
        self.lines.append("  " + line)

    def define(self, v, shape, dims, unreduced=()):
        self.vals[v] = (shape, [list(d) for d in dims], list(unreduced))
        self.live.append(v)

    def pick(self):
        # Recent values more often, so chains form; older ones give fan-out.
        if self.r.random() < 0.7:
            return self.live[-1]
        return self.r.choice(self.live)

    @staticmethod
    def axis_lists(per_dim):
        return "[%s]" % ", ".join("{" + ", ".join('"%s"' % a for a in d) + "}" for d in per_dim)

    def collective(self, name, v, axes_text, dims, unreduced=()):
        shape = self.vals[v][0]
        out = self.fresh()
        sep = " " if axes_text else ""
        self.emit("%s = sdy.%s %s%s%s out_sharding=%s : %s" % (
            out, name, axes_text, sep, v, self.sharding(dims, unreduced), self.ty(shape)))
        self.define(out, shape, dims, unreduced)
        return out

    # ----- steps -----

    def all_gather(self, v, name="all_gather"):
        shape, dims, unreduced = self.vals[v]
        per_dim = []
        new = []
        for d in dims:
            k = self.r.randrange(len(d) + 1) if d else 0
            per_dim.append(d[len(d) - k:])
            new.append(d[:len(d) - k])
        if name == "sharded_to_unreduced":
            if not any(per_dim):
                return None
            unreduced = unreduced + [a for d in per_dim for a in d]
        return self.collective(name, v, self.axis_lists(per_dim), new, unreduced)

    def slicing(self, v):
        shape, dims, _ = self.vals[v]
        free = self.free(v)
        self.r.shuffle(free)
        per_dim = [[] for _ in dims]
        for a in free:
            if self.r.random() < 0.5:
                per_dim[self.r.randrange(len(dims))].append(a)
        return per_dim

    def all_slice(self, v):
        _, dims, unreduced = self.vals[v]
        per_dim = self.slicing(v)
        new = [d + s for d, s in zip(dims, per_dim)]
        return self.collective("all_slice", v, self.axis_lists(per_dim), new, unreduced)

    def all_reduce_then_slice(self, v):
        _, dims, unreduced = self.vals[v]
        free = self.free(v)
        red = [a for a in free if self.r.random() < 0.5]
        if not red:
            return None
        red = self.sort_axes(red)
        r = self.collective("all_reduce", v, "{%s}" % ", ".join('"%s"' % a for a in red), dims,
                            unreduced)
        # Slice over (often) the reduced axes, sometimes more, sometimes in other dims.
        per_dim = [[] for _ in dims]
        pool = red + [a for a in free if a not in red and self.r.random() < 0.3]
        if self.r.random() < 0.2:
            pool = pool[1:]
        for a in pool:
            per_dim[self.r.randrange(len(dims))].append(a)
        new = [d + s for d, s in zip(dims, per_dim)]
        n = self.r.choice([1, 1, 1, 2, 3])
        out = None
        for _ in range(n):
            out = self.collective("all_slice", r, self.axis_lists(per_dim), new, unreduced)
        return out

    def reduce_scatter(self, v):
        _, dims, unreduced = self.vals[v]
        per_dim = self.slicing(v)
        new = [d + s for d, s in zip(dims, per_dim)]
        return self.collective("reduce_scatter", v, self.axis_lists(per_dim), new, unreduced)

    def all_to_all(self, v):
        shape, dims, unreduced = self.vals[v]
        params = []
        new = [list(d) for d in dims]
        touched = set()
        for src in range(len(dims)):
            if not dims[src] or src in touched or self.r.random() < 0.4:
                continue
            tgts = [t for t in range(len(dims)) if t != src and t not in touched]
            if not tgts:
                continue
            tgt = self.r.choice(tgts)
            axes = new[src][-1:]
            new[src] = new[src][:-1]
            new[tgt] = new[tgt] + axes
            touched |= {src, tgt}
            params.append('{%s}: %d->%d' % (", ".join('"%s"' % a for a in axes), src, tgt))
        if not params:
            return None
        return self.collective("all_to_all", v, "[%s]" % ", ".join(params), new, unreduced)

    def collective_permute(self, v):
        shape, dims, unreduced = self.vals[v]
        sizes = dict(self.mesh)
        new = [list(d) for d in dims]
        # Swap an axis with a free one of the same size, or keep the sharding.
        free = self.free(v)
        for d in new:
            for i, a in enumerate(d):
                same = [f for f in free if sizes[f] == sizes[a]]
                if same and self.r.random() < 0.5:
                    f = self.r.choice(same)
                    free.remove(f)
                    free.append(a)
                    d[i] = f
        return self.collective("collective_permute", v, "", new, unreduced)

    def replicated_to_unreduced(self, v):
        _, dims, unreduced = self.vals[v]
        free = self.free(v)
        axes = self.sort_axes([a for a in free if self.r.random() < 0.6])
        if not axes:
            return None
        u = self.collective("replicated_to_unreduced", v,
                           "{%s}" % ", ".join('"%s"' % a for a in axes), dims, unreduced + axes)
        if self.r.random() < 0.8:
            red = axes if self.r.random() < 0.8 else axes[:1]
            rest = [a for a in unreduced + axes if a not in red]
            return self.collective("all_reduce", u, "{%s}" % ", ".join('"%s"' % a for a in red),
                                   dims, rest)
        return u

    def sharded_to_unreduced(self, v):
        u = self.all_gather(v, "sharded_to_unreduced")
        if u is None:
            return None
        _, dims, unreduced = self.vals[u]
        if self.r.random() < 0.8:
            red = self.sort_axes([a for a in unreduced if a not in self.vals[v][2]])
            rest = [a for a in unreduced if a not in red]
            return self.collective("all_reduce", u, "{%s}" % ", ".join('"%s"' % a for a in red),
                                   dims, rest)
        return u

    def random_dims(self, rank, avoid=()):
        pool = [a for a, _ in self.mesh if a not in avoid]
        self.r.shuffle(pool)
        dims = [[] for _ in range(rank)]
        for a in pool:
            if self.r.random() < 0.4:
                dims[self.r.randrange(rank)].append(a)
        return dims

    def reshard(self, v):
        shape, _, unreduced = self.vals[v]
        dims = self.random_dims(len(shape), unreduced)
        out = self.fresh()
        opened = [i for i in range(len(shape)) if self.r.random() < 0.3]
        self.emit("%s = sdy.reshard %s %s : %s" % (
            out, v, self.sharding(dims, unreduced, opened), self.ty(shape)))
        self.define(out, shape, dims, unreduced)
        if self.r.random() < 0.4:
            # The same reshard again (CSE), or a reshard of it (reshard of reshard).
            again = self.fresh()
            src = v if self.r.random() < 0.5 else out
            self.emit("%s = sdy.reshard %s %s : %s" % (
                again, src, self.sharding(dims, unreduced, opened), self.ty(shape)))
            self.define(again, shape, dims, unreduced)
            return again
        return out

    def reshape_path(self, v):
        """Reshapes/transposes of `v` followed by a reshard, after a reshard of `v`."""
        shape, dims, unreduced = self.vals[v]
        if unreduced or len(shape) != 2:
            return None
        a, b = shape
        first = self.fresh()
        sdims = self.random_dims(2)
        self.emit("%s = sdy.reshard %s %s : %s" % (first, v, self.sharding(sdims), self.ty(shape)))
        self.define(first, shape, sdims)
        cur, cur_shape = v, shape
        for _ in range(self.r.randrange(1, 4)):
            nxt = self.fresh()
            kind = self.r.random()
            if kind < 0.3 and len(cur_shape) == 2:
                new_shape = [cur_shape[1], cur_shape[0]]
                self.emit("%s = stablehlo.transpose %s, dims = [1, 0] : (%s) -> %s" % (
                    nxt, cur, self.ty(cur_shape), self.ty(new_shape)))
            elif kind < 0.6 and len(cur_shape) == 2:
                new_shape = [cur_shape[0] * cur_shape[1]]
                self.emit("%s = stablehlo.reshape %s : (%s) -> %s" % (
                    nxt, cur, self.ty(cur_shape), self.ty(new_shape)))
            else:
                total = 1
                for d in cur_shape:
                    total *= d
                new_shape = self.r.choice([[a, b], [b, a], [2, total // 2], [total]])
                self.emit("%s = stablehlo.reshape %s : (%s) -> %s" % (
                    nxt, cur, self.ty(cur_shape), self.ty(new_shape)))
            cur, cur_shape = nxt, new_shape
        out = self.fresh()
        rdims = self.random_dims(len(cur_shape))
        if self.r.random() < 0.5 and len(cur_shape) == 1:
            rdims = [[a for d in sdims for a in d]]
        self.emit("%s = sdy.reshard %s %s : %s" % (
            out, cur, self.sharding(rdims), self.ty(cur_shape)))
        self.vals[out] = (cur_shape, rdims, [])
        self.returns_extra.append((out, cur_shape))
        return first

    def constants(self, v):
        shape, dims, unreduced = self.vals[v]
        c = self.fresh()
        val = self.r.choice(["1.0", "2.0"])
        self.emit("%s = stablehlo.constant dense<%s> : %s" % (c, val, self.ty(shape)))
        out = self.fresh()
        self.emit("%s = stablehlo.add %s, %s : %s" % (out, v, c, self.ty(shape)))
        if self.r.random() < 0.3:
            w = self.fresh()
            it = self.fresh()
            c2 = self.fresh()
            self.emit("%s = stablehlo.while(%s = %s) : %s" % (w, "%it" + it[2:], out, self.ty(shape)))
            self.emit("  cond {")
            t = self.fresh()
            self.emit("  %s = stablehlo.constant dense<true> : tensor<i1>" % t)
            self.emit("  stablehlo.return %s : tensor<i1>" % t)
            self.emit("} do {")
            self.emit("  %s = stablehlo.constant dense<%s> : %s" % (c2, val, self.ty(shape)))
            s = self.fresh()
            self.emit("  %s = stablehlo.multiply %s, %s : %s" % (s, "%it" + it[2:], c2, self.ty(shape)))
            self.emit("  stablehlo.return %s : %s" % (s, self.ty(shape)))
            self.emit("}")
            out = w
        self.define(out, shape, [[] for _ in shape])
        return out

    def dead(self, v):
        shape = self.vals[v][0]
        self.emit("%s = stablehlo.abs %s : %s" % (self.fresh(), v, self.ty(shape)))
        return None

    def manual(self, v):
        shape, dims, unreduced = self.vals[v]
        big = [a for a, s in self.mesh if s > 1 and a not in self.used(v)]
        if unreduced or not big or any(d % 4 for d in shape):
            return None
        m = self.r.choice(big)
        size = dict(self.mesh)[m]
        other = self.pick()
        if other == v or self.vals[other][2] or m in self.used(other) or any(
                d % size for d in self.vals[other][0]):
            other = None
        ins = [(v, shape)] + ([(other, self.vals[other][0])] if other else [])
        out = self.fresh()
        in_sh = []
        args = []
        for i, (x, s) in enumerate(ins):
            in_sh.append(self.sharding([[m]] + [[] for _ in s[1:]]))
            local = [s[0] // size] + s[1:]
            args.append(("%%m%d_%d" % (self.n, i), local))
        self.emit("%s = sdy.manual_computation(%s) in_shardings=[%s] out_shardings=[%s] "
                  "manual_axes={\"%s\"} (%s) {" % (
                      out, ", ".join(x for x, _ in ins), ", ".join(in_sh), in_sh[0], m,
                      ", ".join("%s: %s" % (a, self.ty(s)) for a, s in args)))
        a0, s0 = args[0]
        t = "%%mt%d" % self.n
        self.emit("  %s = stablehlo.negate %s : %s" % (t, a0, self.ty(s0)))
        self.emit("  sdy.return %s : %s" % (t, self.ty(s0)))
        self.emit("} : (%s) -> %s" % (", ".join(self.ty(s) for _, s in ins), self.ty(shape)))
        self.define(out, shape, [[m]] + [[] for _ in shape[1:]])
        return out

    def build(self):
        r = self.r
        rank = r.choice([1, 2, 2, 2, 3])
        shape = [r.choice([8, 16, 32]) for _ in range(rank)]
        dims = self.random_dims(rank)
        self.returns_extra = []
        arg = "%arg0"
        self.define(arg, shape, dims)
        steps = [self.all_gather, self.all_slice, self.all_reduce_then_slice, self.reduce_scatter,
                 self.all_to_all, self.all_to_all, self.collective_permute,
                 self.replicated_to_unreduced, self.sharded_to_unreduced, self.reshard,
                 self.reshard, self.reshape_path, self.constants, self.dead, self.manual]
        for _ in range(r.randrange(2, 9)):
            step = r.choice(steps)
            step(self.pick())
        rets = [v for v in self.live[1:] if not self.vals[v][2]]
        rets = [v for v in rets if r.random() < 0.5] or rets[-1:] or [arg]
        rets = [(v, self.vals[v][0]) for v in rets] + self.returns_extra
        head = "func.func @main(%%arg0: %s {sdy.sharding = #sdy.sharding%s}) -> (%s) {" % (
            self.ty(shape), self.sharding(dims), ", ".join(self.ty(s) for _, s in rets))
        tail = ["  return %s : %s" % (", ".join(v for v, _ in rets),
                                      ", ".join(self.ty(s) for _, s in rets)), "}"]
        mesh = "sdy.mesh @mesh = <[%s]>" % ", ".join('"%s"=%d' % a for a in self.mesh)
        return "\n".join([mesh, "", head] + self.lines + tail) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    a = ap.parse_args()
    r = random.Random(a.seed)
    print("// -----\n".join(Program(r).build() for _ in range(a.count)), end="")


if __name__ == "__main__":
    main()
