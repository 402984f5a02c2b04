//! The pass framework of `sdy-lsp opt`: `sdy_opt`-style pass flags with options, and
//! a pipeline that runs passes in order over the printable IR ([`ir::Module`]) of a
//! chunk, with the chunk's semantic [`Model`] at hand.
//!
//! * [`PASSES`] lists every pass flag `opt` knows, with its options (Shardy's names and
//!   kinds) and its constructor; passes not written yet have no constructor and are
//!   refused with a clear message. Adding a pass = writing a [`Pass`] and filling in
//!   `create` in its [`PassInfo`].
//! * [`parse_pass_flag`] reads `-name`, `--name`, `-name=opts`, `-name="a=1 b=2"`,
//!   `-name='a=1,b=2'`, `-name={a=1 b=2}`; options are validated against the pass.
//!   [`parse_pass_pipeline`] reads MLIR's textual pipeline (`-pass-pipeline=...`).
//! * [`Pipeline::run`] builds the chunk's IR, runs the passes in order and returns the
//!   module (to print) and the diagnostics the passes emitted. A pass that fails has
//!   reported an error; the chunk then prints nothing, like `sdy_opt`.
//! * A [`Session`] spans one process (all chunks of a `-split-input-file` run): it holds
//!   MLIR's once-per-process warning flags and whether ops are printed in notes.

mod pipeline_text;
pub(crate) mod populate_rules;
pub(crate) mod verify_after;

pub use crate::pass::parse_bool;
pub use pipeline_text::parse_pass_pipeline;

use crate::diag::{Diagnostic, DiagnosticCode, Severity};
use crate::ir::Module;
use crate::model::Model;
pub use crate::pass::{
    opt, CreatePass, OptKind, OptionInfo, Pass, PassContext, PassFailed, PassInfo, PassOptions,
    PassSpec, Session,
};
use sdy_syntax::tree::Chunk;

const BASIC_OPTIONS: &[OptionInfo] = &[
    opt("keep-sharding-rules", OptKind::Bool, "false"),
    opt("module-dump-directory", OptKind::Str, ""),
    opt("conservative-propagation", OptKind::Bool, "false"),
    opt("debug-sharding-origins", OptKind::Bool, "false"),
    opt("debug-propagation-edge-sharding", OptKind::Bool, "false"),
];
const STRATEGIES: &[&str] = &["basic", "aggressive", "basic-then-aggressive"];
const AGGRESSIVE_OPTIONS: &[OptionInfo] = &[
    opt("keep-sharding-rules", OptKind::Bool, "false"),
    opt("module-dump-directory", OptKind::Str, ""),
    opt("conservative-propagation", OptKind::Bool, "false"),
    opt("debug-sharding-origins", OptKind::Bool, "false"),
    opt("debug-propagation-edge-sharding", OptKind::Bool, "false"),
    opt("propagation-strategy", OptKind::Enum(STRATEGIES), "aggressive"),
];
const OP_PRIORITY_OPTIONS: &[OptionInfo] = &[
    opt("keep-sharding-rules", OptKind::Bool, "false"),
    opt("module-dump-directory", OptKind::Str, ""),
    opt("conservative-propagation", OptKind::Bool, "false"),
    opt("debug-sharding-origins", OptKind::Bool, "false"),
    opt("debug-propagation-edge-sharding", OptKind::Bool, "false"),
    opt("propagation-strategy", OptKind::Enum(STRATEGIES), "aggressive"),
    opt("run-op-priority-propagation", OptKind::Bool, "true"),
];

/// Every pass flag `opt` accepts (Shardy's names and options).
pub static PASSES: &[PassInfo] = &[
    PassInfo {
        flag: "sdy-populate-op-sharding-rules",
        summary: "attaches the registry's sharding rule to every op in functions",
        options: &[opt("conservative-propagation", OptKind::Bool, "false")],
        create: Some(populate_rules::create),
    },
    PassInfo {
        flag: "sdy-basic-propagate",
        summary: "basic sharding propagation",
        options: BASIC_OPTIONS,
        create: Some(crate::propagation::passes::create_basic),
    },
    PassInfo {
        flag: "sdy-aggressive-propagate",
        summary: "aggressive sharding propagation",
        options: AGGRESSIVE_OPTIONS,
        create: Some(crate::propagation::passes::create_aggressive),
    },
    PassInfo {
        flag: "sdy-op-priority-propagate",
        summary: "op-priority sharding propagation",
        options: OP_PRIORITY_OPTIONS,
        create: Some(crate::propagation::passes::create_op_priority),
    },
    PassInfo {
        flag: "sdy-user-priority-propagate",
        summary: "user-priority sharding propagation",
        options: OP_PRIORITY_OPTIONS,
        create: Some(crate::propagation::passes::create_user_priority),
    },
    PassInfo {
        flag: "sdy-propagation-pipeline",
        summary: "import, user-priority propagation, export",
        options: &[opt("dedup-functions-fully", OptKind::Bool, "false")],
        create: Some(crate::propagation::passes::create_pipeline),
    },
    PassInfo {
        flag: "sdy-add-data-flow-edges",
        summary: "inserts sdy.data_flow_edge after data-flow edge owners",
        options: &[],
        create: Some(crate::propagation::passes::create_add_data_flow_edges),
    },
    PassInfo {
        flag: "sdy-apply-sharding-constraints",
        summary: "moves sharding constraint shardings onto their inputs",
        options: &[
            opt("debug-sharding-origins", OptKind::Bool, "false"),
            opt("debug-propagation-edge-sharding", OptKind::Bool, "false"),
        ],
        create: Some(crate::propagation::passes::create_apply_sharding_constraints),
    },
    PassInfo {
        flag: "sdy-sink-data-flow-edges",
        summary: "moves data-flow edge shardings onto their owners",
        options: &[
            opt("sink-debug-sharding-origins", OptKind::Bool, "false"),
            opt("sink-debug-propagation-edge-sharding", OptKind::Bool, "false"),
        ],
        create: Some(crate::propagation::passes::create_sink_data_flow_edges),
    },
    PassInfo {
        flag: "sdy-reshard-to-collectives",
        summary: "reshards become all-slice, collective-permute, all-to-all and all-gather",
        options: &[opt("keep-redundant-reshards", OptKind::Bool, "false")],
        create: Some(crate::export::reshard_to_collectives::create),
    },
    PassInfo {
        flag: "sdy-export-pipeline",
        summary: "Shardy's export passes after propagation",
        options: crate::export::pipeline::OPTIONS,
        create: Some(crate::export::pipeline::create),
    },
    PassInfo {
        flag: "sdy-pad-for-divisibility",
        summary: "pads tensors with non-divisible shardings to divisible shapes",
        options: &[],
        create: Some(crate::export::pad_for_divisibility::create),
    },
    PassInfo {
        flag: "sdy-convert-global-to-local",
        summary: "converts the program from global to per-device (local) shapes",
        options: &[
            opt("per-dim-all-gather", OptKind::Bool, "false"),
            opt("combine-multi-dimension-reduce-scatter", OptKind::Bool, "false"),
            opt("enable-rgv3", OptKind::Bool, "false"),
            opt("replica-count", OptKind::Int, "1"),
            opt("partition-count", OptKind::Int, "1"),
        ],
        create: Some(crate::export::global_to_local::create),
    },
    PassInfo {
        flag: "canonicalize",
        summary: "MLIR's canonicalizer (sdy patterns)",
        options: &[
            opt("top-down", OptKind::Bool, "true"),
            opt("region-simplify", OptKind::Enum(&["disabled", "normal", "aggressive"]), "normal"),
            opt("max-iterations", OptKind::Int, "10"),
            opt("max-num-rewrites", OptKind::Int, "-1"),
            opt("test-convergence", OptKind::Bool, "false"),
        ],
        create: Some(crate::canonicalize::create),
    },
];

/// The pass registered under `flag` (without dashes).
pub fn pass_info(flag: &str) -> Option<&'static PassInfo> {
    PASSES
        .iter()
        .chain(crate::propagation::passes::EXTRA)
        .chain(crate::export::small_export_passes::SMALL_EXPORT_PASSES)
        .find(|p| p.flag == flag)
}

/// Reads a pass flag (`arg` with its leading `-`/`--`) of a registered pass. `Err` for
/// unknown passes, passes not written yet, and bad options.
pub fn parse_pass_flag(arg: &str) -> Result<PassSpec, String> {
    crate::pass::parse_flag(arg, pass_info)
}

/// A list of passes to run in order.
#[derive(Default)]
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
}

/// The result of running a pipeline on one chunk.
pub struct PipelineRun {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
    /// A pass failed: `sdy_opt` prints nothing for the chunk.
    pub failed: bool,
    /// The module as printed (verified after the last pass), unless a pass failed or
    /// the session does not verify after each pass (then print `module`).
    pub printed: Option<String>,
}

impl Pipeline {
    pub fn new() -> Pipeline {
        Pipeline::default()
    }
    /// Adds the pass of a parsed flag.
    pub fn add(&mut self, spec: &PassSpec) -> Result<(), String> {
        let info = pass_info(spec.flag).ok_or_else(|| format!("unknown pass '-{}'", spec.flag))?;
        let create =
            info.create.ok_or_else(|| format!("pass '-{}' is not implemented yet", spec.flag))?;
        self.passes.push(create(&spec.options));
        Ok(())
    }
    pub fn is_empty(&self) -> bool {
        self.passes.is_empty()
    }
    pub fn flags(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.flag()).collect()
    }

    /// Runs the passes on `module`, a module the running pass of `cx` built (an op it
    /// outlined): diagnostics go to `cx`.
    pub fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        module: &mut Module,
    ) -> Result<(), PassFailed> {
        let mut sub = PassContext {
            src: cx.src,
            chunk: cx.chunk,
            model: cx.model,
            module,
            session: &mut *cx.session,
            pass: cx.pass,
            diagnostics: Vec::new(),
        };
        let result = self.passes.iter_mut().try_for_each(|p| {
            sub.pass = p.flag();
            p.run(&mut sub)
        });
        let diagnostics = std::mem::take(&mut sub.diagnostics);
        cx.diagnostics.extend(diagnostics);
        result
    }

    /// Builds the chunk's module and runs the passes on it (stopping at the first
    /// failure). `model` is the chunk's semantic model.
    pub fn run(
        &mut self,
        src: &str,
        chunk: &Chunk,
        model: &Model,
        session: &mut Session,
    ) -> PipelineRun {
        // The registry's rules of the model's ops, built once for all passes.
        let _rules = crate::rules::memo::scope(model, src);
        let mut module = crate::ir::build_module(src, chunk);
        let mut cx = PassContext {
            src,
            chunk,
            model,
            module: &mut module,
            session,
            pass: "",
            diagnostics: Vec::new(),
        };
        let mut failed = false;
        let mut printed = None;
        for pass in &mut self.passes {
            cx.pass = pass.flag();
            if pass.run(&mut cx).is_err() {
                failed = true;
                break;
            }
            // MLIR verifies the IR after every pass (unless `-verify-each=false`); the
            // text of the last one is the output. Unverified, nothing is printed here:
            // the caller prints the module once (a print of the 100k-line corpus module
            // after each pass was 10% of `opt`'s instructions).
            if !cx.session.verify_each {
                continue;
            }
            let text = crate::print::print_module(cx.module);
            let error =
                verify_after::first_error_in(cx.module, &text, cx.session.allow_unregistered);
            if let Some((origin, message)) = error {
                let at = origin.map_or(0, |o| {
                    cx.model.ops.iter().find(|op| op.start == o).map_or(o, |op| op.loc())
                });
                cx.emit_with(Severity::Error, at, message, None);
                if let Some(d) = cx.diagnostics.last_mut() {
                    d.code = DiagnosticCode::VerifyAfterPass;
                }
                failed = true;
                break;
            }
            printed = Some(text);
        }
        let diagnostics = std::mem::take(&mut cx.diagnostics);
        crate::propagation::graph::Graph::release_shared();
        let printed = if failed { None } else { printed };
        PipelineRun { module, diagnostics, failed, printed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::split_options;

    #[test]
    fn flags() {
        let p = parse_pass_flag("-sdy-populate-op-sharding-rules").unwrap();
        assert_eq!(p.flag, "sdy-populate-op-sharding-rules");
        assert!(!p.options.bool("conservative-propagation"));
        for spelling in [
            "-sdy-populate-op-sharding-rules=conservative-propagation=true",
            "--sdy-populate-op-sharding-rules=\"conservative-propagation=true\"",
            "-sdy-populate-op-sharding-rules='conservative-propagation=1'",
            "-sdy-populate-op-sharding-rules={conservative-propagation}",
            "-sdy-populate-op-sharding-rules=conservative-propagation",
        ] {
            let p = parse_pass_flag(spelling).unwrap_or_else(|e| panic!("{spelling}: {e}"));
            assert!(p.options.bool("conservative-propagation"), "{spelling}");
        }
        assert_eq!(
            parse_pass_flag("-sdy-populate-op-sharding-rules=conservative=true").unwrap_err(),
            "pass '-sdy-populate-op-sharding-rules' has no option 'conservative'"
        );
        assert_eq!(
            parse_pass_flag("-sdy-populate-op-sharding-rules=conservative-propagation=maybe")
                .unwrap_err(),
            "invalid value 'maybe' for option 'conservative-propagation' of pass '-sdy-populate-op-sharding-rules'"
        );
        assert_eq!(parse_pass_flag("-sdy-nope").unwrap_err(), "unknown pass or option '-sdy-nope'");
        let p = parse_pass_flag("-sdy-basic-propagate='keep-sharding-rules=true'").unwrap();
        assert!(p.options.bool("keep-sharding-rules") && !p.options.bool("debug-sharding-origins"));
        for info in PASSES.iter().filter(|p| p.create.is_none()) {
            assert_eq!(
                parse_pass_flag(&format!("-{}", info.flag)).unwrap_err(),
                format!("pass '-{}' is not implemented yet", info.flag)
            );
        }
    }

    #[test]
    fn option_strings() {
        let any = |_: &str| true;
        let split = |s: &str| split_options(s, &any).unwrap();
        assert_eq!(
            split("'a=1 b=x,c=true, d'"),
            vec![
                ("a".to_string(), Some("1".to_string())),
                ("b".to_string(), Some("x".to_string())),
                ("c".to_string(), Some("true".to_string())),
                ("d".to_string(), None),
            ]
        );
        // A comma inside a value that does not start an option stays in the value.
        assert_eq!(
            split("l=1,2 m=\"x y\""),
            vec![
                ("l".to_string(), Some("1,2".to_string())),
                ("m".to_string(), Some("x y".to_string())),
            ]
        );
        assert!(split_options("a=\"x", &any).is_err());
        // A comma before a name that is no option stays in the value.
        let only_filter = |n: &str| n == "filter";
        assert_eq!(
            split_options("filter=dot,constant,reshard", &only_filter).unwrap(),
            vec![("filter".to_string(), Some("dot,constant,reshard".to_string()))]
        );
    }

    /// A pass that drops the meshes its module's shardings name: the module no longer
    /// verifies after it.
    struct DropMeshes;
    impl Pass for DropMeshes {
        fn flag(&self) -> &'static str {
            "drop-meshes"
        }
        fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
            for region in &mut cx.module.top.regions {
                for block in &mut region.blocks {
                    block.ops.retain(|op| op.kind != crate::ir::OpKind::SdyMesh);
                }
            }
            cx.warn(0, "meshes dropped".into(), None);
            Ok(())
        }
    }

    /// A pass's diagnostics carry its flag; a module that does not verify after it,
    /// [`DiagnosticCode::VerifyAfterPass`].
    #[test]
    fn codes_of_pass_diagnostics() {
        let src = "sdy.mesh @m = <[\"a\"=2]>\nfunc.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) -> tensor<8xf32> {\n  return %a : tensor<8xf32>\n}\n";
        let chunk = crate::parse_chunks(src, false).pop().unwrap();
        let analysis = crate::analyze_chunk(src, &chunk);
        assert_eq!(analysis.diagnostics, vec![]);
        let mut pipeline = Pipeline { passes: vec![Box::new(DropMeshes)] };
        let run = pipeline.run(src, &chunk, &analysis.model, &mut Session::new(false));
        let codes: Vec<_> = run.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            [DiagnosticCode::Pass("drop-meshes"), DiagnosticCode::VerifyAfterPass],
            "{:?}",
            run.diagnostics
        );
    }
}
