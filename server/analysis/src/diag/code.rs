//! What a diagnostic is, as a stable identifier: its [`DiagnosticCode`]. The editor
//! shows it (LSP `code`, with a link to the rules it stands for), quick fixes are keyed
//! by it, and `check --format json` prints it. The text output stays MLIR's.

/// Defines [`DiagnosticCode`] from one table: each code, the string the client sees,
/// what it stands for.
macro_rules! codes {
    ($($(#[$doc:meta])* $code:ident = $text:literal,)*) => {
        /// The identity of a diagnostic: one per parse-error family, verifier rule family
        /// (Shardy's rule groups: meshes M, shardings S, per-value shardings P, functions
        /// F, manual computations MC, collectives C, sharding rules R), hint, and pass.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum DiagnosticCode {
            $($(#[$doc])* $code,)*
            /// A diagnostic of an `opt` pass, by the pass's flag.
            Pass(&'static str),
        }

        impl DiagnosticCode {
            /// Every code but [`DiagnosticCode::Pass`] (one per pass flag).
            pub const ALL: &'static [DiagnosticCode] = &[$(DiagnosticCode::$code,)*];

            /// The code as the client sees it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(DiagnosticCode::$code => $text,)*
                    DiagnosticCode::Pass(flag) => flag,
                }
            }
        }
    };
}

codes! {
    /// The syntax layer's parse errors (tokens, grammar, sdy attribute grammar).
    Syntax = "syntax",
    /// Op names MLIR's parser does not know (unregistered dialects, unknown ops).
    OpName = "op-name",
    /// SSA values as MLIR's parser resolves them: undeclared, redefined, typed unlike
    /// an earlier use, region arguments in use.
    SsaValue = "ssa-value",
    /// Other checks MLIR runs while parsing (attribute kinds, literal shapes, types of
    /// an op's custom syntax).
    ParseCheck = "parse-check",
    /// Mesh rules (M1–M7).
    Mesh = "mesh",
    /// Tensor sharding rules (S1–S20) not named below.
    Sharding = "sharding",
    /// S1: a sharding names a mesh that does not exist.
    UnknownMesh = "unknown-mesh",
    /// S9–S11: an axis referenced twice.
    DuplicateAxis = "duplicate-axis",
    /// S11: two sub-axes next to each other that make one.
    MergeableSubAxes = "mergeable-sub-axes",
    /// S12/S13: replicated, unreduced (or reduction) axes not in mesh order.
    UnsortedAxes = "unsorted-axes",
    /// S8: an empty closed dimension with a priority.
    EmptyClosedWithPriority = "empty-closed-with-priority",
    /// Per-value shardings and the op-level `sdy.sharding` attribute (P1–P4).
    ShardingPerValue = "sharding-per-value",
    /// Function argument and result shardings (F1–F2).
    FuncSharding = "func-sharding",
    /// Unreduced-axes transitions between shardings.
    UnreducedTransition = "unreduced-transition",
    /// `sdy.data_flow_edge`, `sdy.func_data_flow_edge`, `sdy.propagation_barrier`.
    DataFlow = "data-flow",
    /// `sdy.named_computation`.
    NamedComputation = "named-computation",
    /// `sdy.manual_computation` (MC1–MC7).
    ManualComputation = "manual-computation",
    /// The collective ops (C1–C4 and each collective's own rules).
    Collective = "collective",
    /// Op sharding rules (R0–R13).
    ShardingRule = "sharding-rule",
    /// Propagation edges (`sdy.propagation_edges`).
    PropagationEdges = "propagation-edges",
    /// MLIR's generic verifiers: parents, same types, symbols, regions isolated from
    /// above, dominance, returns.
    Structure = "structure",
    /// A verifier rule without a code of its own.
    Verifier = "verifier",
    /// Hint: a dimension padded to divide among its shards.
    PaddedDimension = "padded-dimension",
    /// Hint: manual axes not in mesh order.
    UnsortedManualAxes = "unsorted-manual-axes",
    /// Hint: meshes of the module with different device counts.
    MeshDeviceCount = "mesh-device-count",
    /// Hint: a mesh nothing references.
    UnusedMesh = "unused-mesh",
    /// Shardings and meshes written inside strings (`xla.sdy.*`, `mhlo.sharding`).
    StringAttribute = "string-attribute",
    /// The module after a pass does not verify.
    VerifyAfterPass = "verify-after-pass",
    /// Editor: a reshard propagation leaves (the LSP layer's `"reshard"`).
    Reshard = "reshard",
    /// Editor: propagation could not run (the LSP layer's `"propagation-failed"`).
    PropagationFailed = "propagation-failed",
    /// Editor: a function argument or result propagation leaves replicated.
    Replicated = "replicated",
    /// Editor: the cost view's export of the propagated module failed.
    CostExportFailed = "cost",
}

const DIALECT: &str = "https://openxla.org/shardy/sdy_dialect";

impl DiagnosticCode {
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
