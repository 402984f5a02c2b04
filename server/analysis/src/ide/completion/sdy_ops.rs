//! The sdy ops offered where an op name goes, with snippets of their custom syntax
//! (Shardy's assembly formats, as in `notes/sdy-verifier-rules.md` §1.9 and the parser).

/// An sdy op offered where an op name goes.
pub(super) struct SdyOp {
    pub name: &'static str,
    /// Its custom syntax, for the item's detail.
    pub syntax: &'static str,
    /// What is inserted; `MESH` stands for the chunk's first mesh.
    pub snippet: &'static str,
    pub doc: &'static str,
    /// Whether it defines results (not offered after `%r =` otherwise).
    pub results: bool,
    /// Module level only (`sdy.mesh`); the others only inside a region.
    pub top_level: bool,
}

const fn op(
    name: &'static str,
    syntax: &'static str,
    snippet: &'static str,
    doc: &'static str,
) -> SdyOp {
    SdyOp { name, syntax, snippet, doc, results: true, top_level: false }
}

/// The sdy ops and their custom syntax (Shardy's assembly formats).
pub(super) const SDY_OPS: &[SdyOp] = &[
    op(
        "sdy.sharding_constraint",
        "sdy.sharding_constraint %x <@mesh, [...]> : type",
        "sdy.sharding_constraint ${1:%x} <@${2:MESH}, [$3]> : ${4:type}",
        "Constrains a tensor to a sharding; propagation may refine its open dimensions.",
    ),
    op(
        "sdy.reshard",
        "sdy.reshard %x <@mesh, [...]> : type",
        "sdy.reshard ${1:%x} <@${2:MESH}, [$3]> : ${4:type}",
        "Reshards a tensor to a different sharding.",
    ),
    op(
        "sdy.manual_computation",
        "sdy.manual_computation(%x) in_shardings=[...] out_shardings=[...] manual_axes={...} (%arg: local type) { ... } : (type) -> type",
        "sdy.manual_computation(${1:%x}) in_shardings=[<@${2:MESH}, [$3]>] out_shardings=[<@${2:MESH}, [$4]>] manual_axes={$5} (${6:%arg0}: ${7:local_type}) {\n  $0\n  sdy.return ${6:%arg0} : ${7:local_type}\n} : (${8:type}) -> ${9:type}",
        "A region in which the manual axes are handled by hand: its body sees per-device (local) shapes.",
    ),
    op(
        "sdy.named_computation",
        "sdy.named_computation<\"name\">(%x) (%arg: type) { ... } : (type) -> type",
        "sdy.named_computation<\"${1:name}\">(${2:%x}) (${3:%arg0}: ${4:type}) {\n  $0\n  sdy.return ${3:%arg0} : ${4:type}\n} : (${4:type}) -> ${4:type}",
        "A named group of ops, propagated through as a unit (e.g. a function call kept apart).",
    ),
    op(
        "sdy.all_gather",
        "sdy.all_gather [{axes}, ...] %x out_sharding=<@mesh, [...]> : type",
        "sdy.all_gather [$1] ${2:%x} out_sharding=<@${3:MESH}, [$4]> : ${5:type}",
        "Gathers the tensor along the given axes of each dimension.",
    ),
    op(
        "sdy.all_slice",
        "sdy.all_slice [{axes}, ...] %x out_sharding=<@mesh, [...]> : type",
        "sdy.all_slice [$1] ${2:%x} out_sharding=<@${3:MESH}, [$4]> : ${5:type}",
        "Slices the tensor along the given axes of each dimension.",
    ),
    op(
        "sdy.all_to_all",
        "sdy.all_to_all [{axes}: src->tgt, ...] %x out_sharding=<@mesh, [...]> : type",
        "sdy.all_to_all [{$1}: ${2:0}->${3:1}] ${4:%x} out_sharding=<@${5:MESH}, [$6]> : ${7:type}",
        "Moves axes from a source dimension to a target dimension.",
    ),
    op(
        "sdy.all_reduce",
        "sdy.all_reduce {axes} %x out_sharding=<@mesh, [...]> : type",
        "sdy.all_reduce {$1} ${2:%x} out_sharding=<@${3:MESH}, [$4]> : ${5:type}",
        "Reduces (sums by default) the tensor over the given axes.",
    ),
    op(
        "sdy.reduce_scatter",
        "sdy.reduce_scatter [{axes}, ...] %x out_sharding=<@mesh, [...]> : type",
        "sdy.reduce_scatter [$1] ${2:%x} out_sharding=<@${3:MESH}, [$4]> : ${5:type}",
        "Reduces over the given axes and scatters the result along them.",
    ),
    op(
        "sdy.collective_permute",
        "sdy.collective_permute %x out_sharding=<@mesh, [...]> : type",
        "sdy.collective_permute ${1:%x} out_sharding=<@${2:MESH}, [$3]> : ${4:type}",
        "Exchanges shards between devices to reach a sharding with the same shard sizes.",
    ),
    op(
        "sdy.sharded_to_unreduced",
        "sdy.sharded_to_unreduced [{axes}, ...] %x out_sharding=<@mesh, [...]> : type",
        "sdy.sharded_to_unreduced [$1] ${2:%x} out_sharding=<@${3:MESH}, [$4]> : ${5:type}",
        "Makes sharded axes unreduced.",
    ),
    op(
        "sdy.replicated_to_unreduced",
        "sdy.replicated_to_unreduced {axes} %x out_sharding=<@mesh, [...]> : type",
        "sdy.replicated_to_unreduced {$1} ${2:%x} out_sharding=<@${3:MESH}, [$4]> : ${5:type}",
        "Makes replicated axes unreduced.",
    ),
    op(
        "sdy.propagation_barrier",
        "sdy.propagation_barrier %x allowed_direction=FORWARD : type",
        "sdy.propagation_barrier ${1:%x} allowed_direction=${2|NONE,FORWARD,BACKWARD,BOTH|} : ${3:type}",
        "Limits the directions in which shardings propagate through it.",
    ),
    op(
        "sdy.data_flow_edge",
        "sdy.data_flow_edge %x sharding=<@mesh, [...]> : type",
        "sdy.data_flow_edge ${1:%x} sharding=<@${2:MESH}, [$3]> : ${4:type}",
        "The sharding of a value flowing through a region op's edge.",
    ),
    op(
        "sdy.constant",
        "sdy.constant dense<...> : type",
        "sdy.constant dense<${1:0.0}> : ${2:tensor<f32>}",
        "A constant that propagation does not merge with identical constants.",
    ),
    SdyOp {
        name: "sdy.sharding_group",
        syntax: "sdy.sharding_group %x group_id=N : type",
        snippet: "sdy.sharding_group ${1:%x} group_id=${2:0} : ${3:type}",
        doc: "Puts the tensor in a group whose members all get the same sharding.",
        results: false,
        top_level: false,
    },
    SdyOp {
        name: "sdy.return",
        syntax: "sdy.return %x : type",
        snippet: "sdy.return ${1:%x} : ${2:type}",
        doc: "Ends the body of sdy.manual_computation or sdy.named_computation.",
        results: false,
        top_level: false,
    },
    SdyOp {
        name: "sdy.mesh",
        syntax: "sdy.mesh @name = <[\"axis\"=size, ...]>",
        snippet: "sdy.mesh @${1:mesh} = <[\"${2:x}\"=${3:2}]>",
        doc: "Defines a mesh: named axes of devices.",
        results: false,
        top_level: true,
    },
];
