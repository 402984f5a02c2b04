//! What a diagnostic is, as a stable identifier: its [`DiagnosticCode`]. The editor
//! shows it (LSP `code`, with a link to the rules it stands for), quick fixes are keyed
//! by it, and `check --format json` prints it. The text output stays MLIR's.

/// The identity of a diagnostic: one per parse-error family, verifier rule family
/// (Shardy's rule groups: meshes M, shardings S, per-value shardings P, functions F,
/// manual computations MC, collectives C, sharding rules R), hint, and pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiagnosticCode {
    /// The syntax layer's parse errors (tokens, grammar, sdy attribute grammar).
    Syntax,
    /// Op names MLIR's parser does not know (unregistered dialects, unknown ops).
    OpName,
    /// SSA values as MLIR's parser resolves them: undeclared, redefined, typed unlike
    /// an earlier use, region arguments in use.
    SsaValue,
    /// Other checks MLIR runs while parsing (attribute kinds, literal shapes, types of
    /// an op's custom syntax).
    ParseCheck,
    /// Mesh rules (M1–M7).
    Mesh,
    /// Tensor sharding rules (S1–S20) not named below.
    Sharding,
    /// S1: a sharding names a mesh that does not exist.
    UnknownMesh,
    /// S9–S11: an axis referenced twice.
    DuplicateAxis,
    /// S11: two sub-axes next to each other that make one.
    MergeableSubAxes,
    /// S12/S13: replicated, unreduced (or reduction) axes not in mesh order.
    UnsortedAxes,
    /// S8: an empty closed dimension with a priority.
    EmptyClosedWithPriority,
    /// Per-value shardings and the op-level `sdy.sharding` attribute (P1–P4).
    ShardingPerValue,
    /// Function argument and result shardings (F1–F2).
    FuncSharding,
    /// Unreduced-axes transitions between shardings.
    UnreducedTransition,
    /// `sdy.data_flow_edge`, `sdy.func_data_flow_edge`, `sdy.propagation_barrier`.
    DataFlow,
    /// `sdy.named_computation`.
    NamedComputation,
    /// `sdy.manual_computation` (MC1–MC7).
    ManualComputation,
    /// The collective ops (C1–C4 and each collective's own rules).
    Collective,
    /// Op sharding rules (R0–R13).
    ShardingRule,
    /// Propagation edges (`sdy.propagation_edges`).
    PropagationEdges,
    /// MLIR's generic verifiers: parents, same types, symbols, regions isolated from
    /// above, dominance, returns.
    Structure,
    /// A verifier rule without a code of its own.
    Verifier,
    /// Hint: a dimension padded to divide among its shards.
    PaddedDimension,
    /// Hint: manual axes not in mesh order.
    UnsortedManualAxes,
    /// Hint: meshes of the module with different device counts.
    MeshDeviceCount,
    /// Hint: a mesh nothing references.
    UnusedMesh,
    /// Shardings and meshes written inside strings (`xla.sdy.*`, `mhlo.sharding`).
    StringAttribute,
    /// A diagnostic of an `opt` pass, by the pass's flag.
    Pass(&'static str),
    /// The module after a pass does not verify.
    VerifyAfterPass,
    /// Editor: a reshard propagation leaves (the LSP layer's `"reshard"`).
    Reshard,
    /// Editor: propagation could not run (the LSP layer's `"propagation-failed"`).
    PropagationFailed,
}

const DIALECT: &str = "https://openxla.org/shardy/sdy_dialect";

impl DiagnosticCode {
    /// Every code but [`DiagnosticCode::Pass`] (one per pass flag).
    pub const ALL: &'static [DiagnosticCode] = &[
        Self::Syntax,
        Self::OpName,
        Self::SsaValue,
        Self::ParseCheck,
        Self::Mesh,
        Self::Sharding,
        Self::UnknownMesh,
        Self::DuplicateAxis,
        Self::MergeableSubAxes,
        Self::UnsortedAxes,
        Self::EmptyClosedWithPriority,
        Self::ShardingPerValue,
        Self::FuncSharding,
        Self::UnreducedTransition,
        Self::DataFlow,
        Self::NamedComputation,
        Self::ManualComputation,
        Self::Collective,
        Self::ShardingRule,
        Self::PropagationEdges,
        Self::Structure,
        Self::Verifier,
        Self::PaddedDimension,
        Self::UnsortedManualAxes,
        Self::MeshDeviceCount,
        Self::UnusedMesh,
        Self::StringAttribute,
        Self::VerifyAfterPass,
        Self::Reshard,
        Self::PropagationFailed,
    ];

    /// The code as the client sees it.
    pub const fn as_str(self) -> &'static str {
        use DiagnosticCode::*;
        match self {
            Syntax => "syntax",
            OpName => "op-name",
            SsaValue => "ssa-value",
            ParseCheck => "parse-check",
            Mesh => "mesh",
            Sharding => "sharding",
            UnknownMesh => "unknown-mesh",
            DuplicateAxis => "duplicate-axis",
            MergeableSubAxes => "mergeable-sub-axes",
            UnsortedAxes => "unsorted-axes",
            EmptyClosedWithPriority => "empty-closed-with-priority",
            ShardingPerValue => "sharding-per-value",
            FuncSharding => "func-sharding",
            UnreducedTransition => "unreduced-transition",
            DataFlow => "data-flow",
            NamedComputation => "named-computation",
            ManualComputation => "manual-computation",
            Collective => "collective",
            ShardingRule => "sharding-rule",
            PropagationEdges => "propagation-edges",
            Structure => "structure",
            Verifier => "verifier",
            PaddedDimension => "padded-dimension",
            UnsortedManualAxes => "unsorted-manual-axes",
            MeshDeviceCount => "mesh-device-count",
            UnusedMesh => "unused-mesh",
            StringAttribute => "string-attribute",
            Pass(flag) => flag,
            VerifyAfterPass => "verify-after-pass",
            Reshard => "reshard",
            PropagationFailed => "propagation-failed",
        }
    }

    /// Where Shardy documents what the code stands for, if anywhere: the dialect's
    /// page for its rules, the pass pages for a pass.
    pub fn documentation(self) -> Option<String> {
        use DiagnosticCode::*;
        match self {
            Mesh
            | Sharding
            | UnknownMesh
            | DuplicateAxis
            | MergeableSubAxes
            | UnsortedAxes
            | EmptyClosedWithPriority
            | ShardingPerValue
            | FuncSharding
            | UnreducedTransition
            | DataFlow
            | NamedComputation
            | ManualComputation
            | Collective
            | ShardingRule
            | PropagationEdges => Some(DIALECT.to_string()),
            Pass(flag) => Some(format!("https://openxla.org/shardy/{}", pass_page(flag))),
            _ => None,
        }
    }
}

/// The page of Shardy's documentation that lists a pass.
fn pass_page(flag: &str) -> &'static str {
    const IMPORT: &[&str] = &[
        "sdy-add-data-flow-edges",
        "sdy-apply-sharding-constraints",
        "sdy-constant-or-scalar-splitter",
        "sdy-flatten-call-graph",
        "sdy-import-func-calls",
        "sdy-lift-inlined-meshes",
        "sdy-manual-axes-cleanup",
        "sdy-remove-size-one-axes",
        "sdy-sharding-group-import",
    ];
    match flag {
        f if IMPORT.contains(&f) => "sdy_import_passes",
        f if f.contains("propagat") || f.contains("populate") => "sdy_propagation_passes",
        _ => "sdy_export_passes",
    }
}

impl std::fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
