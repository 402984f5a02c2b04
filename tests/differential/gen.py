"""Generator of sdy modules for the differential test (standard library only).

Every module is built from a seed written here: a random but *valid* module around one
construct of the sdy dialect (shardings on function arguments and op results, sharding
constraints and reshards, manual and named computations, the eight collectives, op
sharding rules, meshes, data-flow edges, barriers, groups...). An invalid module is the
same seed with one targeted mutation ("fault") injected at that construct: an unknown
axis, a duplicated axis, a bad sub-axis, an unsorted replicated list, a rank mismatch,
a manual axis after a free one, a collective axis that cannot be gathered, a factor used
twice in a sharding rule, a bad mesh, a syntax error in a sharding, ...

The generator does not predict the error: the oracle (the real Shardy) is the judge.
A fault that happens to leave the module valid just makes one more valid module.

    gen = Generator(seed)
    text, meta = gen.module(fault="sharding:unknown_axis")   # or fault=None: valid
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

AXIS_NAMES = ["x", "y", "z", "a", "b", "c", "d"]
DIM_SIZES = [2, 4, 6, 8, 12, 16, 24, 32]
ELEMS = ["f32", "f32", "f32", "bf16", "i32"]


# ---------------------------------------------------------------------------------------
# Meshes, axis refs, shardings
# ---------------------------------------------------------------------------------------


@dataclass
class Mesh:
    axes: list  # [(name, size)]
    device_ids: list | None = None

    def size(self, name):
        for n, s in self.axes:
            if n == name:
                return s
        return None

    def names(self):
        return [n for n, _ in self.axes]

    def total(self):
        t = 1
        for _, s in self.axes:
            t *= s
        return t

    def is_maximal(self):
        return not self.axes and self.device_ids is not None and len(self.device_ids) == 1

    def body(self):
        axes = ", ".join(f'"{n}"={s}' for n, s in self.axes)
        ids = ""
        if self.device_ids is not None:
            ids = ", device_ids=[" + ", ".join(str(i) for i in self.device_ids) + "]"
        return f"<[{axes}]{ids}>"


@dataclass(frozen=True)
class AxisRef:
    name: str
    pre: int | None = None
    size: int | None = None

    def text(self):
        # Syntax faults: raw text instead of an axis ref.
        if self.name.startswith("@RAW@"):
            return self.name[5:]
        if self.pre is None:
            return f'"{self.name}"'
        return f'"{self.name}":({self.pre}){self.size}'


@dataclass
class Dim:
    axes: list = field(default_factory=list)
    open: bool = False
    prio: int | None = None
    raw_prio: str | None = None  # a priority keyword written as is (parse faults)

    def text(self):
        items = [a.text() for a in self.axes]
        if self.open:
            items.append("?")
        out = "{" + ", ".join(items) + "}"
        # A missing comma (syntax fault): the marker joins its item to the previous one.
        out = out.replace(", @NOCOMMA@", " ")
        if self.raw_prio is not None:
            out += self.raw_prio
        elif self.prio is not None:
            out += f"p{self.prio}"
        return out

    def copy(self):
        return Dim(list(self.axes), self.open, self.prio, self.raw_prio)


@dataclass
class Sharding:
    mesh: str | Mesh  # "@name" or an inline mesh
    dims: list
    replicated: list = field(default_factory=list)
    unreduced: list = field(default_factory=list)
    # Raw text replacing the extras (parse faults), or appended after the dims.
    raw_extra: str | None = None

    def body(self):
        mesh = self.mesh if isinstance(self.mesh, str) else "mesh" + self.mesh.body()
        out = f"<{mesh}, [" + ", ".join(d.text() for d in self.dims) + "]"
        if self.replicated:
            out += ", replicated={" + ", ".join(a.text() for a in self.replicated) + "}"
        if self.unreduced:
            out += ", unreduced={" + ", ".join(a.text() for a in self.unreduced) + "}"
        if self.raw_extra is not None:
            out += self.raw_extra
        return out + ">"

    def attr(self):
        return "#sdy.sharding" + self.body()

    def copy(self):
        return Sharding(self.mesh, [d.copy() for d in self.dims], list(self.replicated),
                        list(self.unreduced), self.raw_extra)

    def all_axes(self):
        out = [a for d in self.dims for a in d.axes]
        return out + list(self.replicated) + list(self.unreduced)


def per_value(shardings):
    return "#sdy.sharding_per_value<[" + ", ".join(s.body() for s in shardings) + "]>"


def stripped_list(shardings):
    return "[" + ", ".join(s.body() for s in shardings) + "]"


@dataclass
class TType:
    shape: tuple  # ints, or None for a dynamic dim
    elem: str = "f32"

    def text(self):
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.elem}>"

    @property
    def rank(self):
        return len(self.shape)


TOKEN = "!stablehlo.token"


# ---------------------------------------------------------------------------------------
# Fault catalogue
# ---------------------------------------------------------------------------------------

# Mutations of one sharding (any place a sharding is written).
SHARDING_FAULTS = [
    "unknown_axis", "unknown_axis_replicated", "unknown_axis_unreduced", "dup_axis",
    "dup_axis_replicated", "rank_more", "rank_less", "replicated_unsorted",
    "unreduced_unsorted", "sub_size_one", "sub_pre_zero", "sub_not_dividing",
    "sub_full_size", "sub_overlap", "sub_and_full", "sub_mergeable", "prio_closed_empty",
    "unknown_mesh", "maximal_with_dims", "inline_mesh_bad_axis", "inline_mesh_dup_axis",
    "two_sub_axis_faults", "parse_prio_word", "parse_prio_leading_zero",
    "parse_replicated_no_eq", "parse_bare_axis", "parse_open_first", "parse_trailing_comma",
    "parse_unknown_keyword", "parse_missing_comma", "parse_sub_axis_syntax",
]

# Where shardings are written, with the faults specific to each construct.
SCENARIOS = {
    "func_attrs": ["sharding", "func_arg_per_value", "func_result_per_value",
                   "return_type", "return_count", "undefined_value", "use_type_mismatch",
                   "use_type_mismatch_elementwise"],
    "op_sharding": ["sharding", "pv_count", "pv_not_per_value", "pv_zero_results"],
    "constraint": ["sharding", "constraint_token_rank", "constraint_dims_of_token"],
    "reshard": ["sharding"],
    "manual": ["sharding", "mc_unknown_manual_axis", "mc_in_count", "mc_out_count",
               "mc_local_shape", "mc_manual_after_free", "mc_not_divisible",
               "mc_nested_rebind", "mc_diff_mesh", "mc_isolation", "mc_region_arg_count",
               "mc_body_uses_manual_axis", "mc_return_count", "mc_local_elem"],
    "named": ["sharding", "nc_arg_count", "nc_arg_type", "nc_in_count", "nc_out_count",
              "nc_return_type", "nc_isolation"],
    "all_gather": ["sharding", "ag_not_suffix", "ag_mismatch", "ag_rank", "ag_dup",
                   "ag_unknown", "ag_mergeable", "coll_no_operand_sharding",
                   "coll_mesh_mismatch"],
    "all_slice": ["sharding", "as_mismatch", "as_dup_operand", "as_rank",
                  "coll_mesh_mismatch"],
    "all_reduce": ["sharding", "ar_unsorted", "ar_overlap_dim", "ar_overlap_replicated",
                   "ar_overlap_out_unreduced", "ar_not_equiv", "ar_unknown",
                   "ar_adds_unreduced", "ar_reduction_kind", "coll_mesh_mismatch"],
    "all_to_all": ["sharding", "a2a_empty", "a2a_src_range", "a2a_tgt_range", "a2a_overlap",
                   "a2a_unsorted", "a2a_mismatch", "a2a_cant_apply",
                   "coll_no_operand_sharding"],
    "collective_permute": ["sharding", "cp_size", "cp_mesh_axes", "cp_same_devices"],
    "reduce_scatter": ["sharding", "rs_mismatch", "rs_rank", "coll_mesh_mismatch"],
    "sharded_to_unreduced": ["sharding", "s2u_not_suffix", "s2u_unreduced_mismatch",
                             "s2u_mismatch"],
    "replicated_to_unreduced": ["sharding", "r2u_empty", "r2u_unsorted", "r2u_dims_differ",
                                "r2u_overlap_dim", "r2u_overlap_unreduced",
                                "r2u_unreduced_mismatch"],
    "rule": ["rule_operand_count", "rule_result_count", "rule_rank", "rule_empty_dim",
             "rule_factor_range", "rule_factor_reuse", "rule_size_one", "rule_unused_factor",
             "rule_special_unsorted", "rule_special_dup", "rule_special_range",
             "rule_sets_overlap", "rule_blocked_unsorted", "rule_reduction_in_result",
             "rule_dynamic", "rule_not_rule", "rule_parse_symbol", "rule_parse_iota"],
    "mesh": ["mesh_axis_size", "mesh_negative_id", "mesh_empty_many_ids", "mesh_dup_axis",
             "mesh_id_count", "mesh_not_permutation", "mesh_in_func", "mesh_redefined",
             "mesh_parse_bare_axis"],
    "data_flow": ["sharding", "dfe_two_uses", "dfe_sdy_input", "dfe_dynamic",
                  "barrier_both", "barrier_unranked_type"],
    "group": ["group_unranked"],
    "edges": ["edge_negative_step", "edge_dup_step", "edge_same_target", "edge_dup_target",
              "edge_operand_range", "edge_result_range", "edge_no_sharding",
              "edge_unknown_axis", "edge_wrong_attr", "edge_result_not_array"],
    "types": ["sharding", "token_dims", "token_replicated", "tuple_two", "unranked"],
    "generic": ["sharding", "generic_not_sharding_attr"],
}

# Scenario weights for picking (sharding-heavy, like real errors).
WEIGHTS = {
    "func_attrs": 4, "op_sharding": 3, "constraint": 2, "reshard": 1, "manual": 4,
    "named": 2, "all_gather": 2, "all_slice": 1, "all_reduce": 2, "all_to_all": 2,
    "collective_permute": 1, "reduce_scatter": 1, "sharded_to_unreduced": 1,
    "replicated_to_unreduced": 1, "rule": 3, "mesh": 2, "data_flow": 2, "group": 1,
    "edges": 2, "types": 2, "generic": 2,
}


class Skip(Exception):
    """The seed cannot carry the requested fault (e.g. no axis to duplicate)."""


# ---------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------


class Body:
    """The ops of one region, with the values they define (name -> type, sharding)."""

    def __init__(self, gen, indent, manual=(), mesh_name=None):
        self.gen = gen
        self.indent = indent
        self.lines = []
        self.values = []  # [dict(name, type, sharding, uses, producer)]
        self.manual = set(manual)
        self.mesh_name = mesh_name

    def emit(self, line):
        self.lines.append(self.indent + line)

    def add_value(self, ty, sharding=None, producer="op"):
        v = {"name": self.gen.fresh(), "type": ty, "sharding": sharding, "uses": 0,
             "producer": producer}
        self.values.append(v)
        return v

    def use(self, v):
        v["uses"] += 1
        return v["name"]


class Generator:

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.counter = 0
        self.arg_counter = 0

    # ---- small helpers --------------------------------------------------------------

    def fresh(self):
        n = self.counter
        self.counter += 1
        return f"%{n}"

    def fresh_arg(self):
        n = self.arg_counter
        self.arg_counter += 1
        return f"%arg{n}"

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, xs):
        return self.rng.choice(xs)

    def random_mesh(self, min_axes=1, max_axes=3, sizes=(2, 2, 4, 4, 8, 3)):
        k = self.rng.randint(min_axes, max_axes)
        names = self.rng.sample(AXIS_NAMES, k)
        axes = [(n, self.pick(sizes)) for n in names]
        mesh = Mesh(axes)
        if self.chance(0.15) and mesh.total() <= 16:
            ids = list(range(mesh.total()))
            self.rng.shuffle(ids)
            if ids != sorted(ids):
                mesh.device_ids = ids
        return mesh

    def random_type(self, rank=None, multiple_of=None, elem=None):
        if rank is None:
            rank = self.pick([1, 2, 2, 2, 3, 3, 4])
        shape = []
        for d in range(rank):
            m = (multiple_of or [1] * rank)[d]
            shape.append(m * self.pick([1, 2, 4]) if m > 1 else self.pick(DIM_SIZES))
        return TType(tuple(shape), elem or self.pick(ELEMS))

    # ---- valid shardings ------------------------------------------------------------

    def sub_axes_of(self, size):
        """Non-overlapping sub-axes (pre, size) of an axis of `size` (None: no split)."""
        if size == 4:
            return self.pick([[(1, 2), (2, 2)], [(1, 2)], [(2, 2)]])
        if size == 8:
            return self.pick([[(1, 2), (2, 4)], [(1, 4), (4, 2)], [(1, 2), (2, 2), (4, 2)],
                              [(2, 2)], [(1, 4)]])
        return None

    def valid_sharding(self, mesh_ref, mesh, ty, avoid=(), allow_unreduced=True,
                       allow_sub=True, dims_only=False):
        """A valid sharding of `ty` (TType or TOKEN) on `mesh`, not using `avoid`."""
        if mesh.is_maximal() or ty == TOKEN:
            return Sharding(mesh_ref, [])
        rank = ty.rank
        dims = [Dim(open=self.chance(0.3)) for _ in range(rank)]
        replicated, unreduced = [], []
        for name, size in mesh.axes:
            if name in avoid:
                continue
            subs = self.sub_axes_of(size) if allow_sub and self.chance(0.25) else None
            refs = [AxisRef(name, p, s) for p, s in subs] if subs else [AxisRef(name)]
            for r in refs:
                where = self.rng.random()
                if where < 0.55 and rank > 0:
                    d = self.rng.randrange(rank)
                    # No two sub-axes of one axis in one list (they could be mergeable).
                    if r.pre is not None and any(a.name == name for a in dims[d].axes):
                        continue
                    dims[d].axes.append(r)
                elif where < 0.7 and not dims_only:
                    if r.pre is None or not any(a.name == name for a in replicated):
                        replicated.append(r)
                elif where < 0.8 and allow_unreduced and not dims_only:
                    if r.pre is None or not any(a.name == name for a in unreduced):
                        unreduced.append(r)
        for d in dims:
            if self.chance(0.2) and (d.axes or d.open):
                d.prio = self.pick([0, 1, 2, 3])
        order = {n: i for i, n in enumerate(mesh.names())}
        key = lambda a: (order[a.name], a.pre or 0, a.size or 0)
        return Sharding(mesh_ref, dims, sorted(replicated, key=key), sorted(unreduced, key=key))

    # ---- sharding faults ------------------------------------------------------------

    def unused_axes(self, s, mesh, avoid=()):
        used = {a.name for a in s.all_axes()}
        return [n for n in mesh.names() if n not in used and n not in avoid]

    def mutate_sharding(self, s, mesh, ty, fault, manual=()):
        """Applies a sharding fault to `s` (in place); raises Skip when it cannot."""
        rng = self.rng
        unknown = self.pick([n for n in AXIS_NAMES + ["w", "q"] if n not in mesh.names()])
        dims_with_axes = [d for d in s.dims if d.axes]
        used = s.all_axes()
        if fault == "unknown_axis":
            if not s.dims:
                raise Skip
            self.pick(s.dims).axes.append(AxisRef(unknown))
        elif fault == "unknown_axis_replicated":
            s.replicated.append(AxisRef(unknown))
        elif fault == "unknown_axis_unreduced":
            s.unreduced.append(AxisRef(unknown))
        elif fault == "dup_axis":
            if not used or not s.dims:
                raise Skip
            self.pick(s.dims).axes.append(self.pick(used))
        elif fault == "dup_axis_replicated":
            full = [a for d in s.dims for a in d.axes]
            if not full:
                raise Skip
            s.replicated.append(self.pick(full))
        elif fault == "rank_more":
            s.dims.append(Dim())
        elif fault == "rank_less":
            if not s.dims:
                raise Skip
            s.dims.pop(rng.randrange(len(s.dims)))
        elif fault in ("replicated_unsorted", "unreduced_unsorted"):
            free = self.unused_axes(s, mesh)
            if len(free) < 2:
                raise Skip
            a, b = sorted(rng.sample(free, 2), key=mesh.names().index)
            lst = [AxisRef(b), AxisRef(a)]
            if fault == "replicated_unsorted":
                s.replicated = lst
                s.unreduced = [u for u in s.unreduced if u.name not in (a, b)]
            else:
                s.unreduced = lst
                s.replicated = [u for u in s.replicated if u.name not in (a, b)]
        elif fault.startswith("sub_") or fault == "two_sub_axis_faults":
            big = [(n, z) for n, z in mesh.axes if z >= 4]
            if not big or not s.dims:
                raise Skip
            faults = [fault] if fault != "two_sub_axis_faults" else rng.sample(
                ["sub_size_one", "sub_pre_zero", "sub_not_dividing", "sub_full_size",
                 "sub_overlap", "sub_and_full"], 2)
            names = rng.sample(big, min(len(faults), len(big)))
            if len(names) < len(faults):
                raise Skip
            for f, (name, size) in zip(faults, names):
                self.bad_sub_axis(s, name, size, f)
        elif fault == "prio_closed_empty":
            empty = [d for d in s.dims if not d.axes]
            if not empty:
                d = Dim()
                s.dims.append(d)
            else:
                d = self.pick(empty)
            d.open = False
            d.prio = self.pick([0, 1, 2])
        elif fault == "unknown_mesh":
            s.mesh = "@no_such_mesh"
        elif fault == "maximal_with_dims":
            s.mesh = Mesh([], [self.pick([0, 1, 3])])
            if not s.dims:
                s.dims = [Dim()]
        elif fault == "inline_mesh_bad_axis":
            s.mesh = Mesh([(n, z) for n, z in mesh.axes[:-1]] + [(mesh.axes[-1][0], 0)])
        elif fault == "inline_mesh_dup_axis":
            s.mesh = Mesh(list(mesh.axes) + [mesh.axes[0]])
        elif fault == "parse_prio_word":
            if not s.dims:
                raise Skip
            self.pick(s.dims).raw_prio = self.pick(["phigh", "p", "q1", "p1x"])
        elif fault == "parse_prio_leading_zero":
            if not s.dims:
                raise Skip
            self.pick(s.dims).raw_prio = self.pick(["p01", "p007"])
        elif fault == "parse_replicated_no_eq":
            free = self.unused_axes(s, mesh) or mesh.names()
            s.replicated, s.unreduced = [], []
            s.raw_extra = ', replicated{"%s"}' % free[0]
        elif fault == "parse_bare_axis":
            if not s.dims:
                raise Skip
            d = self.pick(s.dims)
            d.axes.append(AxisRef("@RAW@" + (self.unused_axes(s, mesh) or ["x"])[0]))
        elif fault == "parse_open_first":
            if not dims_with_axes:
                raise Skip
            d = self.pick(dims_with_axes)
            d.open = False
            d.axes.insert(0, AxisRef("@RAW@?"))
        elif fault == "parse_trailing_comma":
            s.raw_extra = ","
        elif fault == "parse_unknown_keyword":
            s.raw_extra = ', %s={"%s"}' % (self.pick(["unknown", "replicate", "partial"]),
                                           mesh.names()[0])
        elif fault == "parse_missing_comma":
            if not dims_with_axes:
                raise Skip
            d = self.pick(dims_with_axes)
            free = (self.unused_axes(s, mesh) or ["x"])[0]
            d.axes.append(AxisRef(f'@RAW@@NOCOMMA@"{free}"'))
        elif fault == "parse_sub_axis_syntax":
            if not s.dims:
                raise Skip
            name = mesh.names()[0]
            self.pick(s.dims).axes.append(AxisRef("@RAW@" + self.pick(
                [f'"{name}":2', f'"{name}":(2)', f'"{name}"(1)2', f'"{name}":[1]2'])))
        else:
            raise ValueError(fault)

    def bad_sub_axis(self, s, name, size, fault):
        # Drop the axis everywhere, then write the bad sub-axes in one dim.
        for d in s.dims:
            d.axes = [a for a in d.axes if a.name != name]
        s.replicated = [a for a in s.replicated if a.name != name]
        s.unreduced = [a for a in s.unreduced if a.name != name]
        bad = {
            "sub_size_one": [AxisRef(name, 2, 1)],
            "sub_pre_zero": [AxisRef(name, self.pick([0, -1]), 2)],
            "sub_not_dividing": [AxisRef(name, 3, 2)] if size % 3 else [AxisRef(name, 5, 2)],
            "sub_full_size": [AxisRef(name, 1, size)],
            "sub_overlap": [AxisRef(name, 1, size // 2), AxisRef(name, 2, 2)]
            if size >= 8 else [AxisRef(name, 1, 2), AxisRef(name, 1, 2 * (size // 4))],
            "sub_and_full": [AxisRef(name), AxisRef(name, 1, 2)],
            "sub_mergeable": [AxisRef(name, 1, 2), AxisRef(name, 2, size // 4 if size > 4
                                                           else 2)],
        }[fault]
        if fault == "sub_overlap" and bad[0] == bad[1]:
            bad = [AxisRef(name, 1, 2), AxisRef(name, 1, 4)] if size >= 8 else bad
        if fault in ("sub_overlap", "sub_and_full") and len(s.dims) >= 2:
            i, j = self.rng.sample(range(len(s.dims)), 2)
            s.dims[i].axes.append(bad[0])
            s.dims[j].axes.append(bad[1])
        else:
            self.pick(s.dims).axes.extend(bad)

    # ---- module skeleton ------------------------------------------------------------

    def module(self, scenario=None, fault=None, extra=()):
        """A module as text, and its metadata. `fault` is None (valid), a fault name of
        the scenario, or "sharding:<sharding fault>". `extra`: more (scenario, fault)
        constructs, in the same function or in further ones (MLIR reports the first
        failure of each function, the first parse error of the module...)."""
        rng = self.rng
        if scenario is None:
            names = list(WEIGHTS)
            scenario = rng.choices(names, [WEIGHTS[n] for n in names])[0]
        self.counter = 0
        self.arg_counter = 0
        self.meshes = {}
        n_meshes = self.pick([1, 1, 1, 2])
        for i in range(n_meshes):
            self.meshes["@mesh" if i == 0 else f"@mesh{i}"] = self.random_mesh()
        if self.chance(0.1):
            self.meshes["@maximal"] = Mesh([], [self.pick([0, 1, 2])])
        self.mesh_faults = {}
        self.funcs = []
        body = self.start_func()
        for i, (sc, f) in enumerate([(scenario, fault)] + list(extra)):
            if i > 0 and (self.result_fault or self.chance(0.5)):
                self.end_func(body)
                body = self.start_func()
            self.fault = f
            self.sharding_fault = f.split(":", 1)[1] if f and f.startswith(
                "sharding:") else None
            # A few ordinary ops before the construct, some after.
            for _ in range(rng.randint(0, 2)):
                self.filler(body)
            getattr(self, "sc_" + sc)(body)
            for _ in range(rng.randint(0, 1)):
                self.filler(body)
            if self.sharding_fault and not self.result_fault:
                raise Skip  # no place took the sharding fault
        self.end_func(body)
        text = self.render()
        return text, {"scenario": scenario, "fault": fault}

    def start_func(self):
        self.result_fault = False
        self.result_per_value = False
        self.return_type_fault = None
        self.return_count_fault = False
        self.mc_extra_out = False
        self.args = []  # [(name, type, sharding)]
        self.results = []  # [(type, sharding)]
        return Body(self, "  ")

    def end_func(self, body):
        self.finish(body)
        name = "@main" if not self.funcs else f"@f{len(self.funcs)}"
        self.funcs.append((name, self.args, self.results, body.lines, self.ret))

    def main_mesh(self):
        return "@mesh", self.meshes["@mesh"]

    def take_sharding_fault(self, s, mesh, ty, manual=()):
        """Injects the pending sharding fault into `s`, once."""
        if self.sharding_fault:
            f = self.sharding_fault
            self.sharding_fault = None
            if not mesh.axes and f not in ("unknown_axis", "unknown_axis_replicated",
                                           "unknown_axis_unreduced", "rank_more",
                                           "prio_closed_empty", "unknown_mesh",
                                           "parse_trailing_comma"):
                raise Skip  # a maximal or empty mesh: nothing to mutate
            self.mutate_sharding(s, mesh, ty, f, manual)
            self.injected = True

    def new_arg(self, ty=None, sharded=None):
        ty = ty or self.random_type()
        name = self.fresh_arg()
        s = None
        if sharded or (sharded is None and self.chance(0.6)):
            ref, mesh = self.pick(list(self.meshes.items()))
            s = self.valid_sharding(ref, mesh, ty)
        self.args.append([name, ty, s])
        return {"name": name, "type": ty, "sharding": s, "uses": 0, "producer": "arg"}

    def value(self, body, ty=None, sharded=None, fresh=False):
        """An existing value of the region (or a new function argument at top level)."""
        cands = [v for v in body.values if (ty is None or v["type"] == ty)
                 and (sharded is None or (v["sharding"] is not None) == sharded)
                 and v["type"] != TOKEN and None not in v["type"].shape]
        if cands and not fresh and self.chance(0.6):
            return self.pick(cands)
        if body.indent != "  ":
            # Inside a region: values come from the region only.
            if cands:
                return self.pick(cands)
            raise Skip
        v = self.new_arg(ty, sharded)
        body.values.append(v)
        return v

    def filler(self, body):
        v = self.value(body)
        ty = v["type"]
        kind = self.pick(["add", "add_sharded", "constraint", "negate"])
        if kind == "constraint":
            ref, mesh = self.pick(list(self.meshes.items()))
            s = self.valid_sharding(ref, mesh, ty, avoid=body.manual)
            r = body.add_value(ty, s, "sdy")
            body.emit(f"{r['name']} = sdy.sharding_constraint {body.use(v)} {s.body()} : "
                      f"{ty.text()}")
        elif kind == "add_sharded":
            ref, mesh = self.pick(list(self.meshes.items()))
            s = self.valid_sharding(ref, mesh, ty, avoid=body.manual)
            r = body.add_value(ty, s)
            a = body.use(v)
            body.emit(f"{r['name']} = stablehlo.add {a}, {a} {{sdy.sharding = "
                      f"{per_value([s])}}} : {ty.text()}")
        else:
            op = "stablehlo.add" if kind == "add" else "stablehlo.negate"
            r = body.add_value(ty)
            a = body.use(v)
            operands = f"{a}, {a}" if kind == "add" else a
            body.emit(f"{r['name']} = {op} {operands} : {ty.text()}")

    def finish(self, body):
        # Return one or two values (the last defined ones first).
        cands = [v for v in body.values if v["type"] != TOKEN]
        if not cands:
            cands = [self.value(body)]
        rets = cands[-1:] if len(cands) < 2 or self.chance(0.6) else cands[-2:]
        for v in rets:
            s = None
            if self.chance(0.4) or getattr(self, "result_fault", False):
                ref, mesh = self.pick(list(self.meshes.items()))
                s = self.valid_sharding(ref, mesh, v["type"])
            self.results.append([v["type"], s])
        if getattr(self, "result_fault", False):
            ty, s = self.results[-1]
            self.take_sharding_fault(s, self.mesh_of(s), ty)
        if getattr(self, "result_per_value", False):
            ref, mesh = self.main_mesh()
            self.results[0][1] = per_value([self.valid_sharding(ref, mesh, self.results[0][0])])
        if getattr(self, "return_type_fault", None) is not None:
            self.results[0][0] = self.return_type_fault
        if getattr(self, "return_count_fault", False):
            if len(self.results) > 1:
                self.results.pop()
            else:
                self.results.append([self.results[0][0], None])
        self.ret = rets
        if self.sharding_fault:
            raise Skip  # no place took the sharding fault
        self.result_fault = False

    def render(self):
        out = []
        for name, mesh in self.meshes.items():
            out.append(f"sdy.mesh {name} = {self.mesh_faults.get(name, mesh.body())}")
        for fname, fargs, fresults, lines, ret in self.funcs:
            out.append("")
            args = []
            for name, ty, s in fargs:
                ty_text = ty if isinstance(ty, str) else ty.text()
                attr = ""
                if s is not None:
                    attr = f" {{sdy.sharding = {s if isinstance(s, str) else s.attr()}}}"
                args.append(f"{name}: {ty_text}{attr}")
            results = []
            for ty, s in fresults:
                attr = ""
                if s is not None:
                    attr = f" {{sdy.sharding = {s if isinstance(s, str) else s.attr()}}}"
                results.append(f"{ty.text()}{attr}")
            res = results[0] if len(results) == 1 and "{" not in results[0] else \
                "(" + ", ".join(results) + ")"
            out.append(f"func.func {fname}({', '.join(args)}) -> {res} {{")
            out.extend(lines)
            ret_names = ", ".join(v["name"] for v in ret)
            ret_types = ", ".join(v["type"].text() for v in ret)
            out.append(f"  return {ret_names} : {ret_types}")
            out.append("}")
        return "\n".join(out) + "\n"

    # ---- scenarios ------------------------------------------------------------------

    def sc_func_attrs(self, body):
        f = self.fault
        for _ in range(self.rng.randint(1, 3)):
            body.values.append(self.new_arg(sharded=True if f and "sharding" in f else None))
        sharded = [a for a in self.args if a[2] is not None]
        if f and f.startswith("sharding:"):
            if not sharded or self.chance(0.3):
                # On a result instead: done in finish via a hook.
                self.result_fault = True
            else:
                a = self.pick(sharded)
                mesh = self.mesh_of(a[2])
                self.take_sharding_fault(a[2], mesh, a[1])
        elif f == "func_arg_per_value":
            a = self.pick(self.args)
            ref, mesh = self.main_mesh()
            a[2] = per_value([self.valid_sharding(ref, mesh, a[1])])
        elif f == "func_result_per_value":
            self.result_per_value = True
        elif f == "return_type":
            v = self.value(body)
            body.values.remove(v) if v in body.values else None
            body.values.append(v)
            self.return_type_fault = TType(tuple(d * 2 for d in v["type"].shape) or (2,),
                                           v["type"].elem)
        elif f == "undefined_value":
            v = self.value(body)
            r = body.add_value(v["type"])
            body.emit(f"{r['name']} = stablehlo.add {v['name']}, %undefined_{self.rng.randint(0, 9)}"
                      f" : {v['type'].text()}")
        elif f == "return_count":
            self.return_count_fault = True
        elif f == "use_type_mismatch_elementwise":
            v = self.value(body)
            other = TType(tuple(d * 2 for d in v["type"].shape) or (2,), v["type"].elem)
            op = self.pick(["stablehlo.add", "stablehlo.negate", "stablehlo.multiply",
                            "stablehlo.convert", "stablehlo.maximum"])
            r = body.add_value(other)
            a = body.use(v)
            operands = a if op in ("stablehlo.negate", "stablehlo.convert") else f"{a}, {a}"
            body.emit(f"{r['name']} = {op} {operands} : {other.text()}")
        elif f == "use_type_mismatch":
            v = self.value(body)
            other = TType(tuple(d * 2 for d in v["type"].shape) or (2,), v["type"].elem)
            r = body.add_value(other, None, "sdy")
            ref, mesh = self.main_mesh()
            s = self.valid_sharding(ref, mesh, other)
            body.emit(f"{r['name']} = sdy.sharding_constraint {body.use(v)} {s.body()} : "
                      f"{other.text()}")

    def mesh_of(self, s):
        if isinstance(s.mesh, Mesh):
            return s.mesh
        return self.meshes.get(s.mesh) or Mesh([])

    def sc_op_sharding(self, body):
        v = self.value(body)
        ty = v["type"]
        ref, mesh = self.pick(list(self.meshes.items()))
        s = self.valid_sharding(ref, mesh, ty, avoid=body.manual)
        self.take_sharding_fault(s, mesh, ty)
        shardings = [s]
        f = self.fault
        attr = per_value(shardings)
        if f == "pv_count":
            attr = per_value([s, self.valid_sharding(ref, mesh, ty)])
        elif f == "pv_not_per_value":
            attr = s.attr()
        if f == "pv_zero_results":
            # A zero-result op with a non-maximal sharding that has dimension axes.
            if not any(d.axes for d in s.dims):
                names = mesh.names()
                if not names:
                    raise Skip
                s.dims = [Dim([AxisRef(names[0])])]
            a = body.use(v)
            body.emit(f"stablehlo.custom_call @sink({a}) {{has_side_effect = true, "
                      f"sdy.sharding = {per_value([s])}}} : ({ty.text()}) -> ()")
            return
        op = self.pick(["stablehlo.add", "stablehlo.multiply", "stablehlo.negate",
                        "stablehlo.abs"])
        a = body.use(v)
        operands = f"{a}, {a}" if op in ("stablehlo.add", "stablehlo.multiply") else a
        r = body.add_value(ty, s)
        body.emit(f"{r['name']} = {op} {operands} {{sdy.sharding = {attr}}} : {ty.text()}")

    def sc_constraint(self, body, op="sdy.sharding_constraint"):
        f = self.fault
        if f in ("constraint_token_rank", "constraint_dims_of_token"):
            t = body.add_value(TOKEN, None)
            body.emit(f"{t['name']} = stablehlo.after_all : {TOKEN}")
            ref, mesh = self.main_mesh()
            s = Sharding(ref, [Dim(), Dim()] if f == "constraint_token_rank" else [])
            if f == "constraint_dims_of_token":
                s.replicated = [AxisRef(mesh.names()[0])]
            r = body.add_value(TOKEN, s, "sdy")
            body.emit(f"{r['name']} = {op} {body.use(t)} {s.body()} : {TOKEN}")
            return
        v = self.value(body)
        ty = v["type"]
        ref, mesh = self.pick(list(self.meshes.items()))
        s = self.valid_sharding(ref, mesh, ty, avoid=body.manual)
        # Unreduced axes may only be introduced (sum): keep the operand's where present.
        if v["sharding"] is not None and v["sharding"].unreduced:
            s.unreduced = []
            if s.mesh == v["sharding"].mesh:
                taken = {a.name for a in s.all_axes()}
                if not any(a.name in taken for a in v["sharding"].unreduced):
                    s.unreduced = list(v["sharding"].unreduced)
        self.take_sharding_fault(s, mesh, ty, body.manual)
        r = body.add_value(ty, s, "sdy")
        body.emit(f"{r['name']} = {op} {body.use(v)} {s.body()} : {ty.text()}")

    def sc_reshard(self, body):
        self.sc_constraint(body, "sdy.reshard")

    # ---- manual computation --------------------------------------------------------

    def manual_sharding(self, ref, mesh, manual, ty_global):
        """A sharding whose dims put manual axes first; the local type."""
        s = self.valid_sharding(ref, mesh, ty_global, avoid=manual, allow_sub=False)
        local = list(ty_global.shape)
        for name in manual:
            if self.chance(0.7) and ty_global.rank:
                d = self.rng.randrange(ty_global.rank)
                size = mesh.size(name)
                if local[d] % size == 0:
                    # Manual axes before free ones.
                    k = sum(1 for a in s.dims[d].axes if a.name in manual)
                    s.dims[d].axes.insert(k, AxisRef(name))
                    local[d] //= size
                    continue
            if self.chance(0.3):
                s.replicated.append(AxisRef(name))
        order = {n: i for i, n in enumerate(mesh.names())}
        s.replicated.sort(key=lambda a: (order[a.name], a.pre or 0))
        return s, TType(tuple(local), ty_global.elem)

    def sc_manual(self, body, depth=0, outer_manual=()):
        f = self.fault if depth == 0 else None
        ref, mesh = self.main_mesh()
        names = [n for n in mesh.names() if n not in outer_manual]
        if not names:
            raise Skip
        manual = self.rng.sample(names, self.rng.randint(1, min(2, len(names))))
        manual_all = set(manual) | set(outer_manual)
        n_in = self.rng.randint(1, 2)
        # Global types divisible by every manual axis size.
        mult = 1
        for n in manual:
            mult *= mesh.size(n)
        operands, ins, locals_ = [], [], []
        for _ in range(n_in):
            ty = TType(tuple(mult * self.pick([1, 2]) for _ in range(self.pick([1, 2, 2, 3]))),
                       "f32")
            v = self.value(body, ty) if depth == 0 else None
            if v is None:
                raise Skip
            s, local = self.manual_sharding(ref, mesh, manual, ty)
            operands.append(v)
            ins.append(s)
            locals_.append(local)
        out_s = ins[0].copy()
        result_ty = operands[0]["type"]
        manual_text = "{" + ", ".join(f'"{n}"' for n in manual) + "}"
        # Faults.
        if f == "mc_unknown_manual_axis":
            manual_text = manual_text[:-1] + ', "nope"}'
        elif f == "mc_in_count":
            ins.append(ins[0].copy())
        elif f == "mc_out_count":
            self.mc_extra_out = True
        elif f == "mc_local_shape":
            loc = locals_[0]
            if not loc.rank:
                raise Skip
            locals_[0] = TType((loc.shape[0] * 2,) + loc.shape[1:], loc.elem)
        elif f == "mc_local_elem":
            locals_[0] = TType(locals_[0].shape, "i32" if locals_[0].elem != "i32" else "f32")
        elif f == "mc_manual_after_free":
            free = [n for n in mesh.names() if n not in manual_all]
            dims = [d for d in ins[0].dims if any(a.name in manual for a in d.axes)]
            if not free or not dims:
                raise Skip
            d = dims[0]
            for s in ins:
                for dd in s.dims:
                    dd.axes = [a for a in dd.axes if a.name not in free]
                s.replicated = [a for a in s.replicated if a.name not in free]
                s.unreduced = [a for a in s.unreduced if a.name not in free]
            d.axes.insert(0, AxisRef(free[0]))
        elif f == "mc_not_divisible":
            ty = operands[0]["type"]
            dims = [i for i, d in enumerate(ins[0].dims) if any(a.name in manual for a in d.axes)]
            if not dims:
                raise Skip
            i = dims[0]
            size = 1
            for a in ins[0].dims[i].axes:
                if a.name in manual:
                    size *= mesh.size(a.name)
            if size < 2:
                raise Skip
            shape = list(ty.shape)
            shape[i] = size * 2 + 1
            new_ty = TType(tuple(shape), ty.elem)
            v = self.value(body, new_ty, fresh=True)
            operands[0] = v
            result_ty = new_ty
        elif f == "mc_diff_mesh":
            other = Mesh([(n, mesh.size(n) * 2) for n in mesh.names()])
            ins[0] = Sharding(other, [Dim() for _ in ins[0].dims])
        elif f == "mc_region_arg_count":
            locals_.append(locals_[0])
        elif f == "mc_nested_rebind":
            pass
        elif f == "sharding:" + (self.sharding_fault or ""):
            tgt = self.pick(["in", "out"])
            if tgt == "in":
                self.take_sharding_fault(ins[0], mesh, operands[0]["type"])
            else:
                self.take_sharding_fault(out_s, mesh, result_ty)
        # Body.
        inner = Body(self, body.indent + "  ", manual_all, ref)
        arg_names = []
        for loc in locals_:
            a = self.fresh_arg()
            arg_names.append(a)
            inner.values.append({"name": a, "type": loc, "sharding": None, "uses": 0,
                                 "producer": "arg"})
        first = inner.values[0]
        r = inner.add_value(first["type"])
        inner.emit(f"{r['name']} = stablehlo.add {first['name']}, {first['name']} : "
                   f"{first['type'].text()}")
        if f == "mc_isolation":
            outer = [v for v in body.values if v["type"] == first["type"]]
            if outer:
                o = outer[0]
            else:
                o = self.new_arg(first["type"], False)
                body.values.append(o)
            r2 = inner.add_value(first["type"])
            inner.emit(f"{r2['name']} = stablehlo.add {r['name']}, {o['name']} : "
                       f"{first['type'].text()}")
            r = r2
        if f == "mc_body_uses_manual_axis" or self.chance(0.3):
            free = [n for n in mesh.names() if n not in manual_all]
            s = Sharding(ref, [Dim() for _ in range(first["type"].rank)])
            if s.dims:
                if f == "mc_body_uses_manual_axis":
                    self.pick(s.dims).axes.append(AxisRef(self.pick(manual)))
                elif free:
                    self.pick(s.dims).axes.append(AxisRef(free[0]))
                r3 = inner.add_value(first["type"], s, "sdy")
                inner.emit(f"{r3['name']} = sdy.sharding_constraint {r['name']} {s.body()} : "
                           f"{first['type'].text()}")
                r = r3
            elif f == "mc_body_uses_manual_axis":
                raise Skip
        if f == "mc_nested_rebind" and depth == 0:
            # A nested manual computation binding one of our manual axes again.
            self.nested_manual(inner, ref, mesh, manual, first)
        elif depth == 0 and self.chance(0.15) and len(mesh.names()) > len(manual):
            self.nested_manual(inner, ref, mesh, [], first, outer=manual)
        rets = [r]
        ret_locals = [first["type"]]
        outs = [out_s]
        result_tys = [result_ty]
        if f == "mc_return_count":
            rets.append(r)
            ret_locals.append(first["type"])
        if getattr(self, "mc_extra_out", False):
            outs.append(out_s.copy())
            self.mc_extra_out = False
        inner.emit(f"sdy.return {', '.join(x['name'] for x in rets)} : "
                   f"{', '.join(t.text() for t in ret_locals[:len(rets)])}")
        # Result: the body returns a value of the first operand's local type.
        res_names = body.add_value(result_tys[0], out_s)
        ops = ", ".join(body.use(v) for v in operands)
        arg_decl = ", ".join(f"{a}: {t.text()}" for a, t in zip(arg_names, locals_))
        in_types = ", ".join(v["type"].text() for v in operands)
        res_types = ", ".join(t.text() for t in result_tys)
        if len(result_tys) != 1:
            res_types = f"({res_types})"
        body.emit(f"{res_names['name']} = sdy.manual_computation({ops}) in_shardings="
                  f"{stripped_list(ins)} out_shardings={stripped_list(outs)} manual_axes="
                  f"{manual_text} ({arg_decl}) {{")
        body.lines.extend(inner.lines)
        body.emit(f"}} : ({in_types}) -> {res_types}")

    def nested_manual(self, inner, ref, mesh, rebind, value, outer=()):
        """A manual computation inside a manual computation body."""
        if rebind:
            manual = [rebind[0]]
        else:
            free = [n for n in mesh.names() if n not in outer]
            manual = [self.pick(free)]
        ty = value["type"]
        s = Sharding(ref, [Dim() for _ in range(ty.rank)])
        local = ty
        if ty.rank and ty.shape[0] % mesh.size(manual[0]) == 0 and not rebind:
            s.dims[0].axes.append(AxisRef(manual[0]))
            local = TType((ty.shape[0] // mesh.size(manual[0]),) + ty.shape[1:], ty.elem)
        a = self.fresh_arg()
        r = inner.add_value(ty, s)
        b = self.fresh()
        manual_text = "{" + ", ".join(f'"{n}"' for n in manual) + "}"
        inner.emit(f"{r['name']} = sdy.manual_computation({value['name']}) in_shardings="
                   f"[{s.body()}] out_shardings=[{s.body()}] manual_axes={manual_text} "
                   f"({a}: {local.text()}) {{")
        inner.emit(f"  {b} = stablehlo.negate {a} : {local.text()}")
        inner.emit(f"  sdy.return {b} : {local.text()}")
        inner.emit(f"}} : ({ty.text()}) -> {ty.text()}")

    # ---- named computation ---------------------------------------------------------

    def sc_named(self, body):
        f = self.fault
        v = self.value(body)
        ty = v["type"]
        ref, mesh = self.pick(list(self.meshes.items()))
        ins = [self.valid_sharding(ref, mesh, ty, avoid=body.manual)]
        outs = [self.valid_sharding(ref, mesh, ty, avoid=body.manual)]
        arg_types = [ty]
        ret_ty = ty
        operands = [v]
        if f and f.startswith("sharding:"):
            self.take_sharding_fault(self.pick([ins[0], outs[0]]), mesh, ty)
        elif f == "nc_arg_count":
            arg_types.append(ty)
        elif f == "nc_arg_type":
            arg_types[0] = TType(tuple(d * 2 for d in ty.shape) or (4,), ty.elem)
        elif f == "nc_in_count":
            ins.append(ins[0].copy())
        elif f == "nc_out_count":
            outs.append(outs[0].copy())
        elif f == "nc_return_type":
            ret_ty = TType(tuple(d * 2 for d in ty.shape) or (4,), ty.elem)
        shard_text = ""
        if self.chance(0.8) or f in ("nc_in_count", "nc_out_count") or (f or "").startswith(
                "sharding:"):
            shard_text = f" in_shardings={stripped_list(ins)} out_shardings={stripped_list(outs)}"
        args = [self.fresh_arg() for _ in arg_types]
        inner = Body(self, body.indent + "  ", body.manual, ref)
        r = self.fresh()
        other = ""
        if f == "nc_isolation":
            other = v["name"]
        inner.emit(f"{r} = stablehlo.add {args[0]}, {other or args[0]} : {arg_types[0].text()}")
        inner.emit(f"sdy.return {r} : {arg_types[0].text()}")
        res = body.add_value(ret_ty, outs[0])
        decl = ", ".join(f"{a}: {t.text()}" for a, t in zip(args, arg_types))
        name = self.pick(["foo", "bar", "layer_0"])
        body.emit(f"{res['name']} = sdy.named_computation<\"{name}\">("
                  f"{', '.join(body.use(o) for o in operands)}){shard_text} ({decl}) {{")
        body.lines.extend(inner.lines)
        body.emit(f"}} : ({ty.text()}) -> {ret_ty.text()}")

    # ---- collectives ----------------------------------------------------------------

    def collective_operand(self, body, need_axes=True, min_rank=1):
        """A value with a sharding on @mesh (a new function argument when needed)."""
        ref, mesh = self.main_mesh()
        for v in reversed(body.values):
            s = v["sharding"]
            if (s is not None and s.mesh == ref and v["type"] != TOKEN and
                    v["type"].rank >= min_rank and
                    (not need_axes or any(d.axes for d in s.dims)) and self.chance(0.5)):
                return v, s
        for _ in range(20):
            ty = self.random_type(rank=self.pick([r for r in (1, 2, 2, 3) if r >= min_rank]))
            s = self.valid_sharding(ref, mesh, ty)
            if not need_axes or any(d.axes for d in s.dims):
                name = self.fresh_arg()
                self.args.append([name, ty, s])
                v = {"name": name, "type": ty, "sharding": s, "uses": 0, "producer": "arg"}
                body.values.append(v)
                return v, s
        raise Skip

    def emit_collective(self, body, v, text, out):
        """`%r = <text> %v out_sharding=<out> : T`."""
        f = self.fault
        ref, mesh = self.main_mesh()
        ty = v["type"]
        if f and f.startswith("sharding:"):
            self.take_sharding_fault(out, mesh, ty)
        if f == "coll_mesh_mismatch":
            # An out sharding on another mesh with the same axes names but other sizes.
            other = "@other_mesh"
            self.meshes[other] = Mesh([(n, z * 2 if z < 8 else z // 2) for n, z in mesh.axes])
            out.mesh = other
        r = body.add_value(ty, out, "sdy")
        name = v["name"]
        if f == "coll_no_operand_sharding":
            w = self.new_arg(ty, False)
            body.values.append(w)
            name = w["name"]
        body.emit(f"{r['name']} = {text} {name} out_sharding={out.body()} : {ty.text()}")
        v["uses"] += 1

    def axes_text(self, axes):
        return "{" + ", ".join(a.text() for a in axes) + "}"

    def sc_all_gather(self, body, kind="sdy.all_gather"):
        f = self.fault
        ref, mesh = self.main_mesh()
        v, s = self.collective_operand(body)
        lists, out_dims = [], []
        for d in s.dims:
            k = self.rng.randint(0, len(d.axes))
            lists.append(d.axes[len(d.axes) - k:])
            out_dims.append(Dim(d.axes[:len(d.axes) - k], self.chance(0.3)))
        out = Sharding(ref, out_dims, [], [])
        unreduced_extra = []
        if kind == "sdy.sharded_to_unreduced":
            gathered = [a for l in lists for a in l]
            out.unreduced = sort_merge(mesh, list(s.unreduced) + gathered)
            out.replicated = [a for a in s.replicated if a not in out.unreduced]
        if f in ("ag_not_suffix", "s2u_not_suffix"):
            dims = [i for i, d in enumerate(s.dims) if len(d.axes) >= 2]
            if dims:
                i = self.pick(dims)
                lists[i] = [s.dims[i].axes[0]]
                out.dims[i] = Dim(s.dims[i].axes[1:])
            else:
                free = self.unused_axes(s, mesh)
                dims = [i for i, d in enumerate(s.dims) if d.axes]
                if not free or not dims:
                    raise Skip
                i = self.pick(dims)
                lists[i] = [AxisRef(free[0])]
        elif f in ("ag_mismatch", "s2u_mismatch"):
            i = self.pick([i for i, l in enumerate(lists) if l] or [0])
            if lists[i]:
                out.dims[i].axes = list(s.dims[i].axes)
            else:
                free = self.unused_axes(s, mesh)
                if not free:
                    raise Skip
                out.dims[i].axes = out.dims[i].axes + [AxisRef(free[0])]
        elif f == "ag_rank":
            lists = lists[:-1] if len(lists) > 1 or self.chance(0.5) else lists + [[]]
        elif f == "ag_dup":
            used = [a for l in lists for a in l]
            if not used or len(lists) < 2:
                raise Skip
            a = self.pick(used)
            j = self.pick([j for j, l in enumerate(lists) if a not in l])
            lists[j] = lists[j] + [a]
        elif f == "ag_unknown":
            unknown = self.pick([n for n in AXIS_NAMES if n not in mesh.names()])
            lists[self.rng.randrange(len(lists))].append(AxisRef(unknown))
        elif f == "ag_mergeable":
            big = [(n, z) for n, z in mesh.axes if z >= 4]
            if not big:
                raise Skip
            n, z = self.pick(big)
            lists[self.rng.randrange(len(lists))].extend([AxisRef(n, 1, 2), AxisRef(n, 2, z // 2)])
        elif f == "s2u_unreduced_mismatch":
            if out.unreduced:
                out.unreduced = out.unreduced[:-1]
            else:
                free = self.unused_axes(s, mesh)
                if not free:
                    raise Skip
                out.unreduced = [AxisRef(free[0])]
        text = kind + " [" + ", ".join(self.axes_text(l) for l in lists) + "]"
        self.emit_collective(body, v, text, out)

    def sc_sharded_to_unreduced(self, body):
        self.sc_all_gather(body, "sdy.sharded_to_unreduced")

    def sc_all_slice(self, body, kind="sdy.all_slice"):
        f = self.fault
        ref, mesh = self.main_mesh()
        v, s = self.collective_operand(body, need_axes=False)
        free = self.unused_axes(s, mesh)
        self.rng.shuffle(free)
        lists = [[] for _ in s.dims]
        for n in free:
            if self.chance(0.6):
                lists[self.rng.randrange(len(lists))].append(AxisRef(n))
        out = Sharding(ref, [Dim(list(d.axes) + l, self.chance(0.3)) for d, l in zip(s.dims, lists)])
        if kind == "sdy.reduce_scatter":
            # The operand's unreduced axes may be reduced (removed), not kept.
            pass
        if f in ("as_mismatch", "rs_mismatch"):
            i = self.pick([i for i, l in enumerate(lists) if l] or [0])
            if lists[i]:
                out.dims[i].axes = out.dims[i].axes[:-1]
            elif free:
                lists[i].append(AxisRef(free[0]))
            else:
                raise Skip
        elif f == "as_dup_operand":
            dims = [i for i, d in enumerate(s.dims) if d.axes]
            if not dims:
                raise Skip
            i = self.pick(dims)
            lists[i].append(s.dims[i].axes[0])
        elif f in ("as_rank", "rs_rank"):
            lists = lists[:-1] if len(lists) > 1 else lists + [[]]
        text = kind + " [" + ", ".join(self.axes_text(l) for l in lists) + "]"
        self.emit_collective(body, v, text, out)

    def sc_reduce_scatter(self, body):
        self.sc_all_slice(body, "sdy.reduce_scatter")

    def sc_all_reduce(self, body):
        f = self.fault
        ref, mesh = self.main_mesh()
        v, s = self.collective_operand(body, need_axes=False)
        in_dims = {a.name for d in s.dims for a in d.axes} | {a.name for a in s.replicated}
        cands = [n for n in mesh.names() if n not in in_dims]
        red = [n for n in cands if self.chance(0.6)]
        red_refs = [AxisRef(n) for n in red]
        out = Sharding(ref, [Dim(list(d.axes), self.chance(0.3)) for d in s.dims])
        out.unreduced = [a for a in s.unreduced if a.name not in red]
        kind_text = ""
        if f == "ar_unsorted":
            if len(cands) < 2:
                raise Skip
            a, b = cands[:2]
            red_refs = [AxisRef(b), AxisRef(a)]
            out.unreduced = [u for u in s.unreduced if u.name not in (a, b)]
        elif f == "ar_overlap_dim":
            dim_axes = [a for d in s.dims for a in d.axes]
            if not dim_axes:
                raise Skip
            red_refs = sort_merge(mesh, red_refs + [self.pick(dim_axes)])
        elif f == "ar_overlap_replicated":
            if not s.replicated:
                raise Skip
            red_refs = sort_merge(mesh, red_refs + [self.pick(s.replicated)])
        elif f == "ar_overlap_out_unreduced":
            if not red_refs:
                if not cands:
                    raise Skip
                red_refs = [AxisRef(cands[0])]
            out.unreduced = sort_merge(mesh, out.unreduced + [red_refs[0]])
        elif f == "ar_not_equiv":
            free = [n for n in mesh.names() if n not in in_dims and
                    n not in [a.name for a in red_refs] and
                    n not in [a.name for a in out.unreduced]]
            dims_with = [d for d in out.dims if d.axes]
            if dims_with and self.chance(0.5):
                dims_with[0].axes = dims_with[0].axes[:-1]
            elif free and out.dims:
                out.dims[0].axes.append(AxisRef(free[0]))
            else:
                raise Skip
        elif f == "ar_unknown":
            red_refs = red_refs + [AxisRef("nope")]
        elif f == "ar_adds_unreduced":
            # HEAD Shardy: cannot add new unreduced axis (the oracle predates the check).
            free = [n for n in mesh.names() if n not in in_dims and
                    n not in [a.name for a in red_refs] and
                    n not in [a.name for a in s.unreduced]]
            if not free:
                raise Skip
            out.unreduced = sort_merge(mesh, out.unreduced + [AxisRef(free[0])])
        elif f == "ar_reduction_kind":
            kind_text = " " + self.pick(["max", "min"])
            if out.unreduced or s.unreduced:
                out.unreduced = []
        text = "sdy.all_reduce" + kind_text + " " + self.axes_text(red_refs)
        self.emit_collective(body, v, text, out)

    def sc_all_to_all(self, body):
        f = self.fault
        ref, mesh = self.main_mesh()
        v, s = self.collective_operand(body, need_axes=True, min_rank=2)
        rank = len(s.dims)
        out = Sharding(ref, [Dim(list(d.axes)) for d in s.dims])
        srcs = [i for i, d in enumerate(s.dims) if d.axes]
        src = self.pick(srcs)
        tgt = self.pick([i for i in range(rank) if i != src])
        ax = s.dims[src].axes[-1]
        out.dims[src].axes = out.dims[src].axes[:-1]
        out.dims[tgt].axes = out.dims[tgt].axes + [ax]
        params = [([ax], src, tgt)]
        if f == "a2a_empty":
            params = []
        elif f == "a2a_src_range":
            params = [([ax], rank + self.pick([0, 1]), tgt)]
        elif f == "a2a_tgt_range":
            params = [([ax], src, self.pick([rank, -1]))]
        elif f == "a2a_overlap":
            params = [([ax], src, src)]
        elif f == "a2a_unsorted":
            other = [i for i in range(rank) if i not in (src, tgt)]
            if not other or rank < 4:
                # Two params whose sources are not ascending.
                if rank < 3:
                    raise Skip
            o = other[0]
            t2 = [i for i in range(rank) if i not in (src, tgt, o)]
            if not t2:
                raise Skip
            p2 = ([], o, t2[0])
            params = [p2, params[0]] if o < src else [params[0], p2]
            params = sorted(params, key=lambda p: -p[1])
        elif f == "a2a_mismatch":
            out.dims[tgt].axes = out.dims[tgt].axes[:-1]
        elif f == "a2a_cant_apply":
            if len(s.dims[src].axes) < 2:
                raise Skip
            params = [([s.dims[src].axes[0]], src, tgt)]
        text = "sdy.all_to_all [" + ", ".join(
            f"{self.axes_text(a)}: {i}->{j}" for a, i, j in params) + "]"
        self.emit_collective(body, v, text, out)

    def sc_collective_permute(self, body):
        f = self.fault
        ref, mesh = self.main_mesh()
        v, s = self.collective_operand(body, need_axes=False)
        out = Sharding(ref, [Dim(list(d.axes), self.chance(0.3)) for d in s.dims])
        # Swap two axes of the same size between dims (a real permutation).
        pairs = [(i, a, j, b) for i, di in enumerate(out.dims) for a in di.axes
                 for j, dj in enumerate(out.dims) for b in dj.axes
                 if i < j and a.pre is None and b.pre is None and
                 mesh.size(a.name) == mesh.size(b.name)]
        if pairs and self.chance(0.7):
            i, a, j, b = self.pick(pairs)
            out.dims[i].axes = [b if x == a else x for x in out.dims[i].axes]
            out.dims[j].axes = [a if x == b else x for x in out.dims[j].axes]
        if f == "cp_size":
            sizes = {n: z for n, z in mesh.axes}
            dims = [d for d in out.dims if d.axes]
            free = self.unused_axes(s, mesh)
            if dims and free and any(sizes[free[0]] != 1 for _ in [0]):
                dims[0].axes.append(AxisRef(free[0]))
            elif dims:
                dims[0].axes = dims[0].axes[:-1]
            else:
                raise Skip
        elif f == "cp_mesh_axes":
            other = "@other_mesh"
            self.meshes[other] = Mesh([(n + "2", z) for n, z in mesh.axes])
            out = Sharding(other, [Dim() for _ in s.dims])
        elif f == "cp_same_devices":
            other = "@mesh_copy"
            self.meshes[other] = Mesh(list(mesh.axes), mesh.device_ids)
            out.mesh = other
        self.emit_collective(body, v, "sdy.collective_permute", out)

    def sc_replicated_to_unreduced(self, body):
        f = self.fault
        ref, mesh = self.main_mesh()
        v, s = self.collective_operand(body, need_axes=False)
        taken = {a.name for d in s.dims for a in d.axes} | {a.name for a in s.unreduced}
        cands = [n for n in mesh.names() if n not in taken]
        if not cands and f != "r2u_empty":
            raise Skip
        axes = [AxisRef(n) for n in cands if self.chance(0.6)] or [AxisRef(cands[0])] \
            if cands else []
        out = Sharding(ref, [d.copy() for d in s.dims])
        out.unreduced = sort_merge(mesh, list(s.unreduced) + axes)
        out.replicated = [a for a in s.replicated if a.name not in {x.name for x in axes}]
        if f == "r2u_empty":
            axes = []
            out.unreduced = list(s.unreduced)
        elif f == "r2u_unsorted":
            if len(cands) < 2:
                raise Skip
            axes = [AxisRef(cands[1]), AxisRef(cands[0])]
            out.unreduced = sort_merge(mesh, list(s.unreduced) + axes)
            out.replicated = [a for a in s.replicated if a.name not in cands[:2]]
        elif f == "r2u_dims_differ":
            if not out.dims:
                raise Skip
            d = self.pick(out.dims)
            if d.prio is None:
                d.prio = 1
                if not d.axes:
                    d.open = True
            else:
                d.prio = None
        elif f == "r2u_overlap_dim":
            dim_axes = [a for d in s.dims for a in d.axes]
            if not dim_axes:
                raise Skip
            axes = sort_merge(mesh, axes + [dim_axes[0]])
        elif f == "r2u_overlap_unreduced":
            if not s.unreduced:
                raise Skip
            axes = sort_merge(mesh, axes + [s.unreduced[0]])
        elif f == "r2u_unreduced_mismatch":
            out.unreduced = out.unreduced[:-1]
        text = "sdy.replicated_to_unreduced " + self.axes_text(axes)
        self.emit_collective(body, v, text, out)

    # ---- op sharding rules ----------------------------------------------------------

    def sc_rule(self, body):
        f = self.fault
        # Tensors: a result of rank r, operands sharing its factors, maybe a reduction.
        r_rank = self.pick([1, 2, 2, 3])
        sizes = [self.pick([2, 4, 8, 16]) for _ in range(r_rank)]
        factors = list(range(r_rank))
        red = None
        if self.chance(0.4):
            red = r_rank
            sizes.append(self.pick([4, 8]))
        n_ops = self.pick([1, 1, 2])
        operand_maps = []
        for k in range(n_ops):
            m = [[i] for i in factors]
            if red is not None and (k == 0 or self.chance(0.5)):
                m.append([red])
            operand_maps.append(m)
        result_maps = [[[i] for i in factors]]
        # A reshape-like fused dim sometimes: (ij) on the operand.
        if r_rank >= 2 and red is None and n_ops == 1 and self.chance(0.3):
            operand_maps[0] = [[0, 1]] + [[i] for i in factors[2:]]
        specials = {"reduction": [red] if red is not None else [], "need_replication": [],
                    "permutation": [], "blocked_propagation": []}
        if self.chance(0.3):
            specials["need_replication"] = [self.pick(factors)]
        if self.chance(0.2):
            specials["blocked_propagation"] = sorted(self.rng.sample(
                range(len(sizes)), min(len(sizes), 2)))
        elem = self.pick(["f32", "bf16"])

        def ty_of(m):
            shape = []
            for fs in m:
                p = 1
                for x in fs:
                    p *= sizes[x]
                shape.append(p)
            return TType(tuple(shape), elem)

        operand_types = [ty_of(m) for m in operand_maps]
        result_types = [ty_of(m) for m in result_maps]
        custom = self.chance(0.2)
        # Faults.
        raw_rule = None
        if f == "rule_operand_count":
            operand_maps.append(operand_maps[0])
        elif f == "rule_result_count":
            result_maps.append(result_maps[0])
        elif f == "rule_rank":
            tgt = self.pick([operand_maps[0], result_maps[0]])
            if len(tgt) > 1 and self.chance(0.5):
                tgt.pop()
            else:
                tgt.append([factors[0]])
        elif f == "rule_empty_dim":
            tgt = self.pick([operand_maps[0], result_maps[0]])
            tgt[self.rng.randrange(len(tgt))] = []
        elif f == "rule_factor_range":
            result_maps[0][0] = [len(sizes) + self.pick([0, 3])]
        elif f == "rule_factor_reuse":
            m = self.pick([operand_maps[0], result_maps[0]])
            if len(m) < 2:
                raise Skip
            m[1] = list(m[0])
        elif f == "rule_size_one":
            sizes.append(1)
            operand_maps[0][0] = operand_maps[0][0] + [len(sizes) - 1]
        elif f == "rule_unused_factor":
            sizes.append(self.pick([2, 4]))
        elif f == "rule_special_unsorted":
            if len(factors) < 2:
                raise Skip
            specials[self.pick(["need_replication", "permutation"])] = [factors[1], factors[0]]
            if specials["reduction"]:
                specials["reduction"] = []
                for m in operand_maps:
                    if [red] in m:
                        m.remove([red])
                sizes.pop()
        elif f == "rule_special_dup":
            specials["need_replication"] = [factors[0], factors[0]]
        elif f == "rule_special_range":
            specials["permutation"] = [17]
        elif f == "rule_sets_overlap":
            specials["permutation"] = [factors[0]]
            specials["need_replication"] = [factors[0]]
        elif f == "rule_blocked_unsorted":
            if len(sizes) < 2:
                raise Skip
            specials["blocked_propagation"] = [1, 0]
        elif f == "rule_reduction_in_result":
            if red is None:
                specials["reduction"] = [factors[-1]]
            else:
                result_maps[0].append([red])
        elif f == "rule_dynamic":
            t = operand_types[0]
            operand_types[0] = TType((None,) + t.shape[1:], t.elem)
        elif f == "rule_not_rule":
            raw_rule = self.pick(["1 : i64", '"ij"', per_value([])])
        elif f == "rule_parse_symbol":
            raw_rule = "RULE_SYMBOL"
        elif f == "rule_parse_iota":
            raw_rule = "RULE_IOTA"
        if f in ("rule_rank", "rule_operand_count", "rule_result_count"):
            pass  # types stay those of the valid rule
        rule = render_rule(operand_maps, result_maps, sizes, specials, custom)
        if raw_rule == "RULE_SYMBOL":
            rule = rule.replace("[i", "[" + self.pick(["a", "i_1", "z_", "z_0", "Z"]), 1)
        elif raw_rule == "RULE_IOTA":
            rule = rule.replace("{i=", "{j=", 1) if "{i=" in rule else rule.replace("[i", "[[", 1)
        elif raw_rule is not None:
            rule = raw_rule
        operands = []
        for t in operand_types:
            v = self.value(body, t)
            operands.append(body.use(v))
        res = body.add_value(result_types[0])
        target = self.pick(["foo", "my_op", "Sharding"])
        res_types = result_types[0].text()
        body.emit(f"{res['name']} = stablehlo.custom_call @{target}({', '.join(operands)}) "
                  f"{{sdy.sharding_rule = {rule}}} : "
                  f"({', '.join(t.text() for t in operand_types)}) -> {res_types}")

    # ---- meshes ---------------------------------------------------------------------

    def sc_mesh(self, body):
        f = self.fault
        name = self.pick([n for n, m in self.meshes.items() if m.axes])
        mesh = self.meshes[name]
        m = Mesh(list(mesh.axes), mesh.device_ids)
        if f == "mesh_axis_size":
            i = self.rng.randrange(len(m.axes))
            m.axes[i] = (m.axes[i][0], self.pick([0, -1, -4]))
        elif f == "mesh_negative_id":
            ids = list(range(m.total()))
            ids[self.rng.randrange(len(ids))] = -1
            m.device_ids = ids
        elif f == "mesh_empty_many_ids":
            m = Mesh([], [0, 1] if self.chance(0.5) else [1, 0, 2])
        elif f == "mesh_dup_axis":
            m.axes.append((m.axes[0][0], self.pick([2, 4])))
        elif f == "mesh_id_count":
            m.device_ids = list(range(m.total() + self.pick([1, -1]))) or [0, 1]
            if m.device_ids == list(range(m.total())):
                m.device_ids.append(m.total())
        elif f == "mesh_not_permutation":
            ids = list(range(m.total()))
            if len(ids) < 2:
                m.axes.append(("w", 2))
                ids = [0, 1]
            ids[-1] = ids[0]
            m.device_ids = ids
        elif f == "mesh_parse_bare_axis":
            self.mesh_faults[name] = m.body().replace(f'"{m.axes[0][0]}"', m.axes[0][0], 1)
        if f in ("mesh_axis_size", "mesh_negative_id", "mesh_empty_many_ids", "mesh_dup_axis",
                 "mesh_id_count", "mesh_not_permutation"):
            self.mesh_faults[name] = m.body()
        # Something that uses the meshes.
        self.filler(body)
        if f == "mesh_in_func":
            body.emit(f"sdy.mesh @inner_mesh = {mesh.body()}")
        elif f == "mesh_redefined":
            self.meshes_extra = True
            self.mesh_faults["@mesh"] = self.meshes["@mesh"].body() + "\nsdy.mesh @mesh = " + \
                self.random_mesh().body()

    # ---- data-flow edges, barriers, groups ------------------------------------------

    def sc_data_flow(self, body):
        f = self.fault
        ref, mesh = self.pick(list(self.meshes.items()))
        if f in ("barrier_both", "barrier_unranked_type") or (f is None and self.chance(0.4)):
            v = self.value(body)
            ty = v["type"]
            d = "BOTH" if f == "barrier_both" else self.pick(["FORWARD", "BACKWARD", "NONE"])
            if f == "barrier_unranked_type":
                w = self.new_arg(None, False)
                self.args[-1][1] = f"tensor<*x{ty.elem}>"
                body.emit(f"{self.fresh()} = sdy.propagation_barrier {w['name']} "
                          f"allowed_direction={d} : tensor<*x{ty.elem}>")
                return
            r = body.add_value(ty, None, "sdy")
            body.emit(f"{r['name']} = sdy.propagation_barrier {body.use(v)} "
                      f"allowed_direction={d} : {ty.text()}")
            return
        v = self.value(body)
        ty = v["type"]
        if f == "dfe_dynamic":
            ty = TType((None,) + ty.shape[1:], ty.elem) if ty.rank else TType((None,), ty.elem)
            w = self.new_arg(ty, False)
            body.values.append(w)
            v = w
        src = body.add_value(ty)
        if f == "dfe_sdy_input":
            s0 = self.valid_sharding(ref, mesh, ty)
            body.emit(f"{src['name']} = sdy.sharding_constraint {body.use(v)} {s0.body()} : "
                      f"{ty.text()}")
        else:
            a = body.use(v)
            body.emit(f"{src['name']} = stablehlo.add {a}, {a} : {ty.text()}")
        s = self.valid_sharding(ref, mesh, ty) if ty.shape and None not in ty.shape else \
            Sharding(ref, [Dim() for _ in ty.shape])
        if (f or "").startswith("sharding:"):
            self.take_sharding_fault(s, mesh, ty)
        if f != "dfe_two_uses":
            body.values.remove(src)  # the input of a data-flow edge has a single use
        r = body.add_value(ty, s, "sdy")
        sh = f" sharding={s.body()}" if self.chance(0.8) or (f or "").startswith(
            "sharding:") else ""
        body.emit(f"{r['name']} = sdy.data_flow_edge {body.use(src)}{sh} : {ty.text()}")
        if f == "dfe_two_uses":
            r2 = body.add_value(ty)
            body.emit(f"{r2['name']} = stablehlo.negate {body.use(src)} : {ty.text()}")

    def sc_group(self, body):
        f = self.fault
        v = self.value(body)
        ty_text = v["type"].text()
        name = body.use(v)
        if f == "group_unranked":
            w = self.new_arg(None, False)
            self.args[-1][1] = f"tensor<*x{v['type'].elem}>"
            name, ty_text = w["name"], self.args[-1][1]
        body.emit(f"sdy.sharding_group {name} group_id={self.rng.randint(0, 40)} : {ty_text}")

    # ---- propagation edges (debug attributes) --------------------------------------

    def sc_edges(self, body):
        f = self.fault
        ref, mesh = self.main_mesh()
        v = self.value(body)
        ty = v["type"]
        s = self.valid_sharding(ref, mesh, ty, dims_only=True)
        axis = self.pick(mesh.names())
        step = self.rng.randint(0, 40)

        def edge(ax, src, tgts, step=step):
            targets = ", ".join(tgts)
            return f'{{step-{step} = [{{"{ax}" = {src} -> [{targets}]}}]}}'

        edges = [edge(axis, "operand-0", ["result-0"])]
        if self.chance(0.5):
            edges.append(edge(axis, "result-0", ["operand-1"], step + 1))
        if f == "edge_negative_step":
            edges[0] = edge(axis, "operand-0", ["result-0"], -self.rng.randint(1, 5))
        elif f == "edge_dup_step":
            edges.append(edge(axis, "operand-1", ["result-0"], step))
        elif f == "edge_same_target":
            edges[0] = edge(axis, "operand-0", ["operand-0"])
        elif f == "edge_dup_target":
            edges[0] = edge(axis, "result-0", ["operand-0", "operand-0"])
        elif f == "edge_operand_range":
            edges[0] = edge(axis, "result-0", ["operand-" + str(self.pick([2, 3, 7]))])
        elif f == "edge_result_range":
            edges[0] = edge(axis, "operand-0", ["result-" + str(self.pick([1, 2]))])
        elif f == "edge_unknown_axis":
            edges[0] = edge(self.pick([n for n in AXIS_NAMES if n not in mesh.names()]),
                            "operand-0", ["result-0"])
        attr = "#sdy.propagation_edges<[" + ", ".join(edges) + "]>"
        if f == "edge_wrong_attr":
            attr = self.pick([s.attr(), "[" + attr + "]", '"edges"'])
        name = "sdy.propagation_edges"
        if f == "edge_result_not_array":
            name = self.pick(["sdy.result_propagation_edges", "sdy.block_arg_propagation_edges"])
        elif self.chance(0.2) and f is None:
            name = "sdy.result_propagation_edges"
            attr = "[" + attr + "]"
        sharding = "" if f == "edge_no_sharding" else f", sdy.sharding = {per_value([s])}"
        r = body.add_value(ty, None if f == "edge_no_sharding" else s)
        a = body.use(v)
        body.emit(f"{r['name']} = stablehlo.add {a}, {a} {{{name} = {attr}{sharding}}} : "
                  f"{ty.text()}")

    # ---- shardings of non-tensor and unranked types --------------------------------

    def sc_types(self, body):
        f = self.fault
        ref, mesh = self.main_mesh()
        kind = {"token_dims": "token", "token_replicated": "token", "tuple_two": "tuple",
                "unranked": "unranked"}.get(f, self.pick(["token", "tuple", "dynamic"]))
        inner = self.random_type()
        if kind == "token":
            ty_text, s = TOKEN, Sharding(ref, [])
            if f == "token_dims":
                s.dims = [Dim()]
            elif f == "token_replicated":
                s.replicated = [AxisRef(mesh.names()[0])]
        elif kind == "tuple":
            ty_text = f"tuple<{inner.text()}>"
            s = self.valid_sharding(ref, mesh, inner)
            if f == "tuple_two":
                ty_text = f"tuple<{inner.text()}, {inner.text()}>"
        elif kind == "unranked":
            ty_text, s = f"tensor<*x{inner.elem}>", Sharding(ref, [Dim()])
        else:
            shape = tuple(None if self.chance(0.5) else d for d in inner.shape)
            dyn = TType(shape, inner.elem)
            ty_text = dyn.text()
            s = self.valid_sharding(ref, mesh, dyn)
            if (f or "").startswith("sharding:"):
                self.take_sharding_fault(s, mesh, dyn)
        name = self.fresh_arg()
        self.args.append([name, ty_text, s])

    # ---- sdy ops in generic form ------------------------------------------------------

    def sc_generic(self, body):
        f = self.fault
        v = self.value(body)
        ty = v["type"]
        ref, mesh = self.pick(list(self.meshes.items()))
        s = self.valid_sharding(ref, mesh, ty, avoid=body.manual, allow_unreduced=False)
        self.take_sharding_fault(s, mesh, ty, body.manual)
        op = self.pick(["sdy.sharding_constraint", "sdy.reshard"])
        attr = s.attr()
        if f == "generic_not_sharding_attr":
            attr = self.pick([per_value([s]), '"x"', "1 : i64"])
        r = body.add_value(ty, s, "sdy")
        body.emit(f'{r["name"]} = "{op}"({body.use(v)}) <{{sharding = {attr}}}> : '
                  f"({ty.text()}) -> {ty.text()}")


def sort_merge(mesh, refs):
    """Axis refs sorted w.r.t. the mesh, duplicates dropped (full axes only here)."""
    order = {n: i for i, n in enumerate(mesh.names())}
    seen, out = set(), []
    for a in sorted(refs, key=lambda a: (order.get(a.name, 99), a.pre or 0, a.size or 0)):
        if a not in seen:
            seen.add(a)
            out.append(a)
    return out


def factor_name(i):
    return chr(ord("i") + i) if i < 18 else f"z_{i - 17}"


def render_rule(operand_maps, result_maps, sizes, specials, custom):
    def tensor(m):
        return "[" + ", ".join("".join(factor_name(x) for x in fs) for fs in m) + "]"

    out = "#sdy.op_sharding_rule<(" + ", ".join(tensor(m) for m in operand_maps) + ")->("
    out += ", ".join(tensor(m) for m in result_maps) + ")"
    if sizes:
        out += " {" + ", ".join(f"{factor_name(i)}={s}" for i, s in enumerate(sizes)) + "}"
    for k in ("reduction", "need_replication", "permutation", "blocked_propagation"):
        if specials[k]:
            out += f" {k}={{" + ", ".join(factor_name(i) for i in specials[k]) + "}"
    if custom:
        out += ", custom"
    return out + ">"


def all_faults():
    """Every (scenario, fault) pair the generator knows."""
    out = []
    for sc, faults in SCENARIOS.items():
        for f in faults:
            if f == "sharding":
                out.extend((sc, "sharding:" + sf) for sf in SHARDING_FAULTS)
            else:
                out.append((sc, f))
    return out


# ---------------------------------------------------------------------------------------
# Corpus mode: Shardy's own lit-test modules, mutated at the token level
# ---------------------------------------------------------------------------------------

_DROP_LINE_RE = None


def corpus_chunks(directory):
    """The `// -----` chunks of the .mlir files under `directory` (Shardy's lit tests),
    without RUN/CHECK/expected-* comment lines; [(name, text)]."""
    import os
    import re
    drop = re.compile(r"^\s*//\s*(RUN|CHECK|expected-|COM)")
    out = []
    for root, _, files in sorted(os.walk(directory)):
        for fname in sorted(files):
            if not fname.endswith(".mlir"):
                continue
            path = os.path.join(root, fname)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for k, chunk in enumerate(re.split(r"(?m)^\s*// -----.*\n", text)):
                lines = [l for l in chunk.split("\n") if not drop.match(l)]
                body = "\n".join(lines).strip("\n")
                if "func.func" in body or "sdy.mesh" in body:
                    out.append((f"{os.path.relpath(path, directory)}#{k}", body + "\n"))
    return out


def mutate_text(rng, text):
    """One token-level mutation of an sdy module (None when nothing applies)."""
    import re
    names = sorted(set(re.findall(r'"([a-z]\w*)"', text))) or ["x"]
    kinds = ["axis_name", "int", "delete_punct", "dup_axis", "swap_axes", "open",
             "value_use", "keyword", "priority", "sub_axis"]
    rng.shuffle(kinds)
    for kind in kinds:
        if kind == "axis_name":
            spots = [m for m in re.finditer(r'"([a-z]\w*)"', text)]
            if spots:
                m = rng.choice(spots)
                new = rng.choice([n for n in names + ["w", "q"] if n != m.group(1)])
                return text[:m.start(1)] + new + text[m.end(1):]
        elif kind == "int":
            spots = list(re.finditer(r"(?<=[=(\[ x<,])-?\d+(?=[)\]x>,} ])", text))
            if spots:
                m = rng.choice(spots)
                new = str(rng.choice([0, 1, 2, 3, 4, 8, 16, -1, 6]))
                return text[:m.start()] + new + text[m.end():]
        elif kind == "delete_punct":
            spots = [m for m in re.finditer(r"[,{}\[\]?<>=:]", text)
                     if "sdy" in text[text.rfind("\n", 0, m.start()):text.find("\n", m.end())]]
            if spots:
                m = rng.choice(spots)
                return text[:m.start()] + text[m.end():]
        elif kind == "dup_axis":
            spots = list(re.finditer(r'"[a-z]\w*"(:\(\d+\)\d+)?(?=[,}])', text))
            if spots:
                m = rng.choice(spots)
                return text[:m.end()] + ", " + m.group(0) + text[m.end():]
        elif kind == "swap_axes":
            spots = list(re.finditer(r'("[a-z]\w*"(?::\(\d+\)\d+)?), ("[a-z]\w*"(?::\(\d+\)\d+)?)',
                                     text))
            if spots:
                m = rng.choice(spots)
                return text[:m.start()] + m.group(2) + ", " + m.group(1) + text[m.end():]
        elif kind == "open":
            spots = list(re.finditer(r", \?\}|\{\?\}|\{\}", text))
            if spots:
                m = rng.choice(spots)
                rep = {", ?}": "}", "{?}": "{}", "{}": "{?}"}[m.group(0)]
                return text[:m.start()] + rep + text[m.end():]
        elif kind == "value_use":
            defs = sorted(set(re.findall(r"(%[\w]+)(?::\d+)? = ", text)))
            uses = list(re.finditer(r"(?<=[ (,])%\w+(?=[ ,)])", text))
            if defs and uses:
                m = rng.choice(uses)
                return text[:m.start()] + rng.choice(defs) + text[m.end():]
        elif kind == "keyword":
            pairs = [("replicated=", "unreduced="), ("unreduced=", "replicated="),
                     ("FORWARD", "BOTH"), ("BACKWARD", "BOTH"), ("need_replication",
                                                               "reduction"),
                     ("reduction=", "permutation="), ("manual_axes={", 'manual_axes={"w", ')]
            rng.shuffle(pairs)
            for a, b in pairs:
                if a in text:
                    starts = [m.start() for m in re.finditer(re.escape(a), text)]
                    at = rng.choice(starts)
                    return text[:at] + b + text[at + len(a):]
        elif kind == "priority":
            spots = list(re.finditer(r"\}(p\d+)?(?=[,\]])", text))
            if spots:
                m = rng.choice(spots)
                return text[:m.start()] + "}" + rng.choice(["p0", "p1", "p01", "p", ""]) + \
                    text[m.end():]
        elif kind == "sub_axis":
            spots = list(re.finditer(r'"([a-z]\w*)"(?!:)(?=[,}])', text))
            if spots:
                m = rng.choice(spots)
                p, s = rng.choice([(1, 2), (2, 2), (1, 4), (2, 4), (4, 2), (3, 2), (1, 1)])
                return text[:m.end()] + f":({p}){s}" + text[m.end():]
    return None
