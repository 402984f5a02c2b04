"""From a JAX program to the editor: lowers a sharded JAX function to the MLIR text
JAX hands to XLA (StableHLO with Shardy's `sdy` dialect), with source locations, and
writes it to a `.mlir` file to open in VS Code or Neovim, or to check with
`sdy-lsp check`.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python3 export_mlir.py out.mlir

Any machine will do: the 8 devices are virtual CPU devices (the flag above; this script
sets it when it is unset). Replace `mlp` and its shardings with your own function: the
one line that matters is `jax.jit(f, in_shardings=...).lower(*args).as_text(debug_info=True)`.
"""

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


def mlp(x, w1, w2):
    """A two-layer MLP step: data parallel on "data", tensor parallel on "model"."""
    h = jax.nn.relu(x @ w1)
    return jnp.tanh(h @ w2)


def lower(out_path: str) -> str:
    # Shardy is the default partitioner in new JAX releases; older ones need the flag.
    try:
        jax.config.update("jax_use_shardy_partitioner", True)
    except (AttributeError, KeyError):
        pass
    devices = np.array(jax.devices()[:8]).reshape(2, 4)
    mesh = Mesh(devices, ("data", "model"))
    shard = lambda *spec: NamedSharding(mesh, P(*spec))  # noqa: E731
    args = (
        jax.ShapeDtypeStruct((16, 512), jnp.float32),
        jax.ShapeDtypeStruct((512, 2048), jnp.float32),
        jax.ShapeDtypeStruct((2048, 512), jnp.float32),
    )
    lowered = jax.jit(
        mlp,
        in_shardings=(shard("data", None), shard(None, "model"), shard("model", None)),
        out_shardings=shard("data", None),
    ).lower(*args)
    text = lowered.as_text(debug_info=True)
    with open(out_path, "w") as f:
        f.write(text)
    return text


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "mlp_jax.mlir"
    text = lower(out)
    print(f"export_mlir: wrote {out} ({text.count(chr(10))} lines, {len(jax.devices())} devices)")
