#!/usr/bin/env python3
# Run with the oracle venv: ~/.cache/sdy-oracle-venv/bin/python tests/differential/split_mesh_spec.py
# Does the split mesh + PartitionSpec sdy-lsp prints give the same device assignment as
# the GSPMD sharding sdy-lsp derives from the sharding with sub-axes?
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=64"
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax._src.lib import xla_client as xc
devs = jax.devices()
cases = [
  # (mesh shape, device ids or None, split reshape, names, spec, shape, our GSPMD)
  ((8, 2), None, (2, 2, 2, 2), ('x_0', 'x_1', 'x_2', 'y'), P('y', 'x_1'), (4, 8),
   "{devices=[2,2,4]<=[2,2,2,2]T(3,1,0,2) last_tile_dim_replicate}"),
  ((8, 2), None, (4, 2, 2), ('x_0', 'x_1', 'y'), P('x_0', ('y', 'x_1')), (16, 16),
   "{devices=[4,4]<=[4,2,2]T(0,2,1)}"),
  ((8, 2), None, (2, 2, 2, 2), ('x_0', 'x_1', 'x_2', 'y'), P(('x_0', 'y'), 'x_2'), (4, 8),
   "{devices=[4,2,2]<=[2,2,2,2]T(0,3,2,1) last_tile_dim_replicate}"),
]
import sys, json
extra = json.load(open(sys.argv[1])) if len(sys.argv) > 1 else []
for c in extra:
    cases.append((tuple(c["mesh"]), c.get("ids"), tuple(c["reshape"]), tuple(c["names"]),
                  P(*[tuple(x) if isinstance(x, list) else x for x in c["spec"]]), tuple(c["shape"]), c["gspmd"]))
ok = 0
for shape_m, ids, reshape, names, spec, shape, ours in cases:
    n = int(np.prod(shape_m))
    order = [devs[i] for i in (ids if ids else range(n))]
    mesh = Mesh(np.array(order).reshape(shape_m), tuple(f"m{i}" for i in range(len(shape_m))))
    split = Mesh(mesh.devices.reshape(reshape), names)
    # GSPMD tile assignments hold logical ids: positions in the device assignment.
    # JAX's device assignment is the mesh's flattened device array.
    a = NamedSharding(split, spec)._to_xla_hlo_sharding(len(shape))
    b = xc.HloSharding.from_string(ours)
    pos = {d.id: i for i, d in enumerate(split.devices.flat)}
    pos0 = {d.id: i for i, d in enumerate(mesh.devices.flat)}
    assert pos == pos0
    def key(h):
        return (list(h.tile_assignment_dimensions()), list(h.tile_assignment_devices()), h.replicate_on_last_tile_dim())
    same = key(a) == key(b)
    if not same: print(key(a), key(b))
    print(spec, ours, "same" if same else "DIFFERENT")
    ok += same
print(f"{ok}/{len(cases)} agree")
