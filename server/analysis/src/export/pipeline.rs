//! `-sdy-export-pipeline`: Shardy's export passes after propagation, in the order of
//! `export_pipeline.cc`, with its options.
//!
//! Each step is looked up by its flag in the pass registry ([`crate::passes::pass_info`]),
//! so a pass written later joins the pipeline by being registered; a step whose pass
//! is not registered yet is skipped. The two canonicalizer
//! runs enable only the patterns of one label, as Shardy does.

use crate::canonicalize::{collective_label_patterns, reshard_label_patterns, rewrite_greedily};
use crate::pass::{opt, OptKind, OptionInfo, Pass, PassContext, PassFailed, PassOptions};
use crate::passes::{parse_pass_flag, pass_info};

/// Shardy's `ExportOptions`.
pub const OPTIONS: &[OptionInfo] = &[
    opt("replica-count", OptKind::Int, "1"),
    opt("partition-count", OptKind::Int, "1"),
    opt("dump-directory", OptKind::Str, ""),
    opt("avoid-export-for-partitioning", OptKind::Bool, "false"),
    opt("enable-insert-explicit-collectives", OptKind::Bool, "false"),
    opt("remove-all-gather-reduce-scatter-for-cmv1", OptKind::Bool, "false"),
    opt("enable-per-instruction-partitioning", OptKind::Bool, "false"),
    opt("per-instruction-partitioning-filter", OptKind::Str, ""),
    opt("keep-sharding-rules", OptKind::Bool, "false"),
    opt("dump-sharding-origins", OptKind::Bool, "false"),
    opt("dump-propagation-edges", OptKind::Bool, "false"),
    opt("avoid-reshards-on-calls", OptKind::Bool, "false"),
    opt("update-non-divisible-input-output-shardings", OptKind::Bool, "true"),
    opt("inline-meshes", OptKind::Bool, "true"),
];

/// One step of the pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A registered pass, as its flag with options (`-sdy-close-shardings`).
    Pass(String),
    /// The canonicalizer with only the `sdy-reshard` patterns.
    CanonicalizeReshards,
    /// The canonicalizer with only the `sdy-collective` patterns.
    CanonicalizeCollectives,
}

/// The steps for these options (`addExportPipeline`; module dumps left out).
pub fn steps(o: &PassOptions) -> Vec<Step> {
    let pass = |s: String| Step::Pass(s);
    let avoid = o.bool("avoid-export-for-partitioning");
    let collectives = o.bool("enable-insert-explicit-collectives");
    let per_instruction = o.bool("enable-per-instruction-partitioning");
    let mut v = vec![
        pass("-sdy-constant-or-scalar-merger".into()),
        pass(format!(
            "-sdy-sink-data-flow-edges=sink-debug-sharding-origins={} sink-debug-propagation-edge-sharding={}",
            o.bool("dump-sharding-origins"),
            o.bool("dump-propagation-edges")
        )),
    ];
    if !avoid {
        v.push(pass("-sdy-remove-sharding-groups".into()));
        v.push(pass("-sdy-sharding-constraint-to-reshard".into()));
    }
    if o.bool("update-non-divisible-input-output-shardings") {
        v.push(pass("-sdy-update-non-divisible-input-output-shardings".into()));
        v.push(pass("-sdy-remove-sub-axes-in-input-output-shardings".into()));
    }
    v.push(pass("-sdy-close-shardings".into()));
    if !avoid {
        // `runShardyPartitioner`.
        v.push(pass("-sdy-verify-unreduced-axes".into()));
        v.push(pass(format!(
            "-sdy-insert-explicit-reshards=enable-full-version={}",
            collectives || per_instruction
        )));
        if per_instruction {
            v.push(pass(format!(
                "-sdy-per-instruction-partitioning=filter='{}' replica-count={} partition-count={}",
                o.get("per-instruction-partitioning-filter").unwrap_or(""),
                o.int("replica-count").unwrap_or(1),
                o.int("partition-count").unwrap_or(1)
            )));
        } else if collectives {
            v.push(Step::CanonicalizeReshards);
            v.push(pass("-sdy-reshard-to-collectives".into()));
        }
        v.push(Step::CanonicalizeCollectives);
        if collectives && o.bool("remove-all-gather-reduce-scatter-for-cmv1") {
            v.push(pass("-sdy-remove-all-gather-reduce-scatter-for-cmv1".into()));
        }
    }
    if o.bool("dump-propagation-edges") || o.bool("dump-sharding-origins") {
        v.push(pass("-sdy-remove-propagation-debug-info".into()));
    }
    if !o.bool("keep-sharding-rules") {
        v.push(pass("-sdy-drop-sharding-rules".into()));
    }
    if !avoid && o.bool("inline-meshes") {
        v.push(pass("-sdy-inline-meshes".into()));
    }
    v
}

enum Runnable {
    Pass(Box<dyn Pass>),
    Canonicalize(crate::canonicalize::driver::ApplyPatterns),
}

struct ExportPipeline {
    steps: Vec<Runnable>,
}

/// The pass of `-sdy-export-pipeline`.
pub fn create(o: &PassOptions) -> Box<dyn Pass> {
    let mut runnable = Vec::new();
    for step in steps(o) {
        match step {
            Step::Pass(flag) => {
                let Ok(spec) = parse_pass_flag(&flag) else { continue };
                if let Some(create) = pass_info(spec.flag).and_then(|p| p.create) {
                    runnable.push(Runnable::Pass(create(&spec.options)));
                }
            }
            Step::CanonicalizeReshards => {
                runnable.push(Runnable::Canonicalize(reshard_label_patterns))
            }
            Step::CanonicalizeCollectives => {
                runnable.push(Runnable::Canonicalize(collective_label_patterns))
            }
        }
    }
    Box::new(ExportPipeline { steps: runnable })
}

impl Pass for ExportPipeline {
    fn flag(&self) -> &'static str {
        "sdy-export-pipeline"
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        for step in &mut self.steps {
            match step {
                Runnable::Pass(p) => p.run(cx)?,
                Runnable::Canonicalize(patterns) => {
                    let cfg = crate::canonicalize::driver::Config::default();
                    let outcome = rewrite_greedily(cx.module, &cfg, *patterns);
                    if let Some((origin, message)) = outcome.errors.into_iter().next() {
                        let at = origin.map_or(0, |o| {
                            cx.model.ops.iter().find(|op| op.start == o).map_or(o, |op| op.loc())
                        });
                        cx.error(at, message, origin);
                        return Err(PassFailed);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_the_options() {
        let flags = |opts: &str| -> Vec<String> {
            let spec = parse_pass_flag(&format!("-sdy-export-pipeline={opts}")).unwrap();
            steps(&spec.options)
                .into_iter()
                .map(|s| match s {
                    Step::Pass(f) => f.split('=').next().unwrap_or("").to_string(),
                    other => format!("{other:?}"),
                })
                .collect()
        };
        let default = flags("");
        assert!(default.contains(&"-sdy-inline-meshes".to_string()));
        assert!(!default.contains(&"-sdy-reshard-to-collectives".to_string()));
        assert!(!default.contains(&"CanonicalizeReshards".to_string()));
        let explicit = flags("enable-insert-explicit-collectives=true inline-meshes=false");
        let at = |f: &str| explicit.iter().position(|x| x == f).unwrap();
        assert!(at("-sdy-insert-explicit-reshards") < at("CanonicalizeReshards"));
        assert!(at("CanonicalizeReshards") < at("-sdy-reshard-to-collectives"));
        assert!(at("-sdy-reshard-to-collectives") < at("CanonicalizeCollectives"));
        assert!(!explicit.contains(&"-sdy-inline-meshes".to_string()));
        let avoid = flags("avoid-export-for-partitioning=true");
        assert!(!avoid.contains(&"-sdy-insert-explicit-reshards".to_string()));
    }
}
