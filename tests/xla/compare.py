"""Communication and memory of `sdy-lsp cost` against XLA's compiled programs.

Each program below is a small sharded JAX function (data, FSDP, tensor and sequence
parallelism; matmuls, MLPs, attention, reductions, reshapes, `shard_map`). For each:

* it is lowered to MLIR with Shardy's `sdy` shardings and given to
  `sdy-lsp cost --format json` (propagation pipeline, then Shardy's explicit reshards
  and reshard-to-collectives);
* it is compiled by XLA on 8 virtual CPU devices and the collectives of the
  partitioned HLO (`compiled.as_text()`) are read with their replica groups and shapes;
  their bytes per device use the same formulas as the cost view (server/analysis/src/
  collectives.rs): all-gather (G-1)·B, all-to-all and reduce-scatter (G-1)/G·B,
  all-reduce 2(G-1)/G·B, collective-permute B, with B the per-device operand bytes;
* memory: per-device argument bytes against `NamedSharding.shard_shape` × itemsize, and
  the peak estimate next to `compiled.memory_analysis()`.

Run outside the test suite (needs JAX, e.g. the oracle's venv):

    cargo build --release -p sdy-lsp --bin sdy-lsp
    ~/.cache/sdy-oracle-venv/bin/python tests/xla/compare.py [--bin target/release/sdy-lsp] [--filter RE] [--show NAME]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

try:
    from jax import shard_map as _shard_map  # JAX >= 0.6

    def shard_map(f, mesh, in_specs, out_specs):
        try:
            return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                              check_vma=False)
        except TypeError:
            return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)

except ImportError:  # pragma: no cover
    from jax.experimental.shard_map import shard_map as _sm

    def shard_map(f, mesh, in_specs, out_specs):
        return _sm(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)


F32 = jnp.float32
BF16 = jnp.bfloat16


def mesh2d():
    return Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))


def mesh1d(name="x"):
    return Mesh(np.array(jax.devices()[:8]), (name,))


# --- the programs: (name, mesh, function, [(shape, dtype, spec)], out spec or None) ---


def attention(q, k, v):
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / 8.0
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum("bhqk,bkhd->bqhd", p, v)


def mlp(x, w1, w2):
    return jnp.tanh(jax.nn.relu(x @ w1) @ w2)


def layernorm(x):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5)


def programs():
    m2, m1 = mesh2d(), mesh1d()
    out = []

    def add(name, mesh, f, args, out_spec, family):
        out.append(dict(name=name, mesh=mesh, f=f, args=args, out=out_spec, family=family))

    # Data parallelism.
    add("dp_matmul", m2, lambda x, w: x @ w,
        [((64, 256), F32, P("data", None)), ((256, 128), F32, P())], P("data", None), "data")
    add("dp_mlp", m2, mlp,
        [((64, 256), F32, P("data", None)), ((256, 512), F32, P()), ((512, 256), F32, P())],
        P("data", None), "data")
    add("dp_grad_sum", m1, lambda x, w: jnp.sum(x @ w, axis=0),
        [((64, 256), F32, P("x", None)), ((256, 128), F32, P())], P(), "data")
    add("dp_loss_mean", m1, lambda x: jnp.mean(x * x),
        [((128, 64), F32, P("x", None))], P(), "data")
    # FSDP: weights sharded on a dimension over the data axis.
    add("fsdp_matmul", m2, lambda x, w: x @ w,
        [((64, 256), F32, P("data", None)), ((256, 128), F32, P("data", None))],
        P("data", None), "fsdp")
    add("fsdp_mlp", m1, mlp,
        [((64, 256), F32, P("x", None)), ((256, 512), F32, P("x", None)),
         ((512, 256), F32, P("x", None))], P("x", None), "fsdp")
    add("fsdp_out_dim", m1, lambda x, w: x @ w,
        [((64, 256), F32, P("x", None)), ((256, 128), F32, P(None, "x"))], P("x", None), "fsdp")
    # Tensor parallelism.
    add("tp_column", m2, lambda x, w: x @ w,
        [((64, 256), F32, P()), ((256, 512), F32, P(None, "model"))], P(None, "model"), "tensor")
    add("tp_row", m2, lambda x, w: x @ w,
        [((64, 256), F32, P(None, "model")), ((256, 128), F32, P("model", None))], P(), "tensor")
    add("tp_megatron_mlp", m2, mlp,
        [((64, 256), F32, P()), ((256, 1024), F32, P(None, "model")),
         ((1024, 256), F32, P("model", None))], P(), "tensor")
    add("dp_tp_mlp", m2, mlp,
        [((16, 512), F32, P("data", None)), ((512, 2048), F32, P(None, "model")),
         ((2048, 512), F32, P("model", None))], P("data", None), "tensor")
    add("tp_gather_output", m2, lambda x, w: x @ w,
        [((64, 256), F32, P()), ((256, 512), F32, P(None, "model"))], P(), "tensor")
    add("tp_heads_attention", m2, attention,
        [((4, 32, 8, 16), F32, P("data", None, "model", None))] * 3,
        P("data", None, "model", None), "tensor")
    # Sequence parallelism.
    add("sp_layernorm", m1, layernorm,
        [((4, 128, 64), F32, P(None, "x", None))], P(None, "x", None), "sequence")
    add("sp_matmul", m1, lambda x, w: x @ w,
        [((4, 128, 64), F32, P(None, "x", None)), ((64, 64), F32, P())],
        P(None, "x", None), "sequence")
    add("sp_attention", m1, attention,
        [((2, 64, 4, 16), F32, P(None, "x", None, None))] * 3,
        P(None, "x", None, None), "sequence")
    add("sp_to_tp", m2, lambda x, w: x @ w,
        [((4, 128, 64), F32, P(None, "model", None)), ((64, 256), F32, P(None, "model"))],
        P(None, None, "model"), "sequence")
    # Reductions and reshapes.
    add("reduce_sharded_dim", m2, lambda x: jnp.sum(x, axis=1),
        [((64, 256), F32, P("data", "model"))], P("data"), "reduction")
    add("softmax_sharded", m1, lambda x: jax.nn.softmax(x, axis=-1),
        [((64, 256), F32, P(None, "x"))], P(None, "x"), "reduction")
    add("max_all", m2, lambda x: jnp.max(x),
        [((64, 256), F32, P("data", "model"))], P(), "reduction")
    add("reshape_merge", m2, lambda x: x.reshape(64 * 16, 32),
        [((64, 16, 32), F32, P("data", None, None))], P("data", None), "reshape")
    add("reshape_split", m1, lambda x: x.reshape(64, 16, 32),
        [((1024, 32), F32, P("x", None))], P("x", None, None), "reshape")
    add("transpose_resharded", m1, lambda x: x.T,
        [((64, 256), F32, P("x", None))], P(None, "x"), "reshape")
    add("reshard_all_to_all", m1, lambda x: x * 2.0,
        [((64, 256), F32, P("x", None))], P(None, "x"), "reshape")
    # f32: XLA's CPU backend gathers bf16 as f32 (a backend detail, not the partitioner's).
    add("replicate_output", m2, lambda x: x + 1.0,
        [((64, 256), F32, P("data", "model"))], P(), "reshape")

    # shard_map.
    def sm_psum(x):
        return shard_map(lambda a: jax.lax.psum(a, "x"), m1, (P("x", None),), P(None, None))(x)

    def sm_all_gather(x):
        return shard_map(lambda a: jax.lax.all_gather(a, "x", tiled=True), m1,
                         (P("x", None),), P(None, None))(x)

    def sm_ppermute(x):
        perm = [(i, (i + 1) % 8) for i in range(8)]
        return shard_map(lambda a: jax.lax.ppermute(a, "x", perm), m1,
                         (P("x", None),), P("x", None))(x)

    def sm_matmul_psum(x, w):
        return shard_map(lambda a, b: jax.lax.psum(a @ b, "model"), m2,
                         (P("data", "model"), P("model", None)), P("data", None))(x, w)

    add("shard_map_psum", m1, sm_psum, [((64, 32), F32, P("x", None))], P(), "shard_map")
    add("shard_map_all_gather", m1, sm_all_gather, [((64, 32), F32, P("x", None))], P(),
        "shard_map")
    add("shard_map_ppermute", m1, sm_ppermute, [((64, 32), F32, P("x", None))], P("x", None),
        "shard_map")
    add("shard_map_matmul_psum", m2, sm_matmul_psum,
        [((64, 256), F32, P("data", "model")), ((256, 128), F32, P("model", None))],
        P("data", None), "shard_map")
    return out


# --- XLA's side ---

ITEMSIZE = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "s32": 4, "u32": 4, "s64": 8, "u64": 8,
            "pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2}
KINDS = ["all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute"]
INSTR = re.compile(
    r"^\s*(?:ROOT\s+)?%\S+\s*=\s*(?P<shape>.+?)\s+(?P<kind>all-gather|all-reduce|reduce-scatter|"
    r"all-to-all|collective-permute)(?P<start>-start)?\((?P<operands>[^)]*)\)(?P<rest>.*)$")
SHAPE = re.compile(r"(\w+)\[([\d,]*)\]")


def shape_bytes(text):
    total = 0
    for ty, dims in SHAPE.findall(text):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * ITEMSIZE.get(ty, 4)
    return total


def group_size(rest, devices):
    # `replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_1'}`: the listed axes' sizes.
    m = re.search(r"replica_groups=mesh\[([^\]]*)\][^{]*\{([^}]*)\}", rest)
    if m:
        sizes = dict((a, int(n)) for a, n in re.findall(r"'([^']+)'=(\d+)", m.group(1)))
        g = 1
        for a in re.findall(r"'([^']+)'", m.group(2)):
            g *= sizes.get(a, 1)
        return g
    m = re.search(r"replica_groups=\{(\{[^}]*\})", rest)
    if m:
        return len(m.group(1).strip("{}").split(","))
    m = re.search(r"replica_groups=\[(\d+),(\d+)\]", rest)
    if m:
        return int(m.group(2))
    return devices


def xla_collectives(hlo, devices):
    """(kind, bytes per device) of every collective in the entry and called computations."""
    shapes = {}
    for line in hlo.splitlines():
        m = re.match(r"^\s*(?:ROOT\s+)?(%\S+)\s*=\s*(\S+\[[\d,]*\])", line)
        if m:
            shapes[m.group(1)] = m.group(2)
        for p in re.finditer(r"(%[\w.\-]+): (\w+\[[\d,]*\])", line):
            shapes[p.group(1)] = p.group(2)
    out = []
    for line in hlo.splitlines():
        m = INSTR.match(re.sub(r"/\*.*?\*/", "", line))
        if not m:
            continue
        kind = m.group("kind")
        ops = [o.strip().split(" ")[-1] for o in m.group("operands").split(",") if o.strip()]
        b = sum(shape_bytes(shapes.get(o, "")) for o in ops)
        if b == 0:
            b = shape_bytes(m.group("shape"))
        g = group_size(m.group("rest"), devices)
        if kind == "all-gather":
            moved = (g - 1) * b
        elif kind == "all-reduce":
            moved = 2 * (g - 1) * b // g
        elif kind in ("reduce-scatter", "all-to-all"):
            moved = (g - 1) * b // g
        else:
            pairs = re.search(r"source_target_pairs=\{(.*?)\}\}", m.group("rest"))
            moving = pairs and any(a != c for a, c in re.findall(r"\{(\d+),(\d+)", pairs.group(0)))
            moved = b if moving else 0
        out.append((kind, moved))
    return out


# --- the comparison ---


def run(prog, binary, show=False):
    mesh = prog["mesh"]
    structs = [jax.ShapeDtypeStruct(s, d) for s, d, _ in prog["args"]]
    ins = tuple(NamedSharding(mesh, spec) for _, _, spec in prog["args"])
    outs = NamedSharding(mesh, prog["out"]) if prog["out"] is not None else None
    jitted = jax.jit(prog["f"], in_shardings=ins, out_shardings=outs)
    lowered = jitted.lower(*structs)
    text = lowered.as_text()
    if "sdy." not in text:
        raise SystemExit("the lowered module carries no sdy shardings: enable Shardy")
    compiled = lowered.compile()
    hlo = compiled.as_text()
    xla = xla_collectives(hlo, mesh.size)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    res = subprocess.run([binary, "cost", path, "--format", "json"], capture_output=True,
                         text=True)
    os.unlink(path)
    if res.returncode != 0:
        return dict(error=(res.stderr or res.stdout).strip()[:200])
    cost = json.loads(res.stdout)
    ours = [(c["kind"], c["bytes_per_device"] or 0)
            for fn in cost["functions"] for c in fn["collectives"] if c["kind"] != "all-slice"]
    main = next((fn for fn in cost["functions"] if fn["name"] == "main"), cost["functions"][0])
    expected_args = sum(
        int(np.prod(NamedSharding(mesh, spec).shard_shape(s))) * jnp.dtype(d).itemsize
        for s, d, spec in prog["args"])
    mem = compiled.memory_analysis()
    if show:
        print(text)
        print(hlo)
        print(json.dumps(cost, indent=1))
    return dict(
        ours=ours, xla=xla,
        args=main["memory"]["arguments_bytes_per_device"], expected_args=expected_args,
        peak=main["memory"]["peak_bytes_per_device"],
        xla_peak=(mem.argument_size_in_bytes + mem.output_size_in_bytes + mem.temp_size_in_bytes
                  - mem.alias_size_in_bytes) if mem else None,
    )


def summary(cs):
    kinds = {}
    for k, _ in cs:
        kinds[k] = kinds.get(k, 0) + 1
    return ", ".join(f"{k}×{n}" if n > 1 else k for k, n in sorted(kinds.items())) or "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "target", "release", "sdy-lsp"))
    ap.add_argument("--filter", default="")
    ap.add_argument("--show", default="", help="print the MLIR, the HLO and the cost of NAME")
    a = ap.parse_args()
    rows, agree, total, mem_ok = [], 0, 0, 0
    for prog in programs():
        if not re.search(a.filter, prog["name"]):
            continue
        try:
            r = run(prog, a.bin, show=prog["name"] == a.show)
        except Exception as e:  # a program JAX cannot lower here: reported, not fatal
            r = dict(error=f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")
        total += 1
        if "error" in r:
            rows.append((prog["name"], prog["family"], "error: " + r["error"], "", "", "", "no"))
            continue
        ob = sum(b for _, b in r["ours"])
        xb = sum(b for _, b in r["xla"])
        same = sorted({k for k, _ in r["ours"]}) == sorted({k for k, _ in r["xla"]}) and ob == xb
        agree += same
        mem_ok += r["args"] == r["expected_args"]
        rows.append((prog["name"], prog["family"], summary(r["ours"]), str(ob), summary(r["xla"]),
                     str(xb), "yes" if same else "no",
                     f"{r['args']}/{r['expected_args']}", f"{r['peak']}/{r['xla_peak']}"))
    head = ("program", "family", "sdy-lsp cost", "bytes", "XLA", "bytes", "agree",
            "args ours/shard_shape", "peak ours/XLA")
    widths = [max(len(str(r[i])) if i < len(r) else 0 for r in rows + [head])
              for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print(f"\nkinds and total bytes agree: {agree}/{total}; argument bytes equal: {mem_ok}/{total}")


if __name__ == "__main__":
    sys.exit(main())
