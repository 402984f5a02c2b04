//! Where in the user's program an op or value comes from: its `loc(...)` (JAX exports
//! carry parameter paths such as `params['embed']`, op paths such as
//! `jit(train_step)/jvp(layer_0)/dot_general`, and Python file positions, mostly
//! through `#locN` aliases) read as names and a traceback.

use super::locate::{self, Target};
use crate::mlir_loc::{self, FilePos, SourceLoc};
use crate::model::{Model, OpId, ValueDef, ValueId};
use sdy_syntax::tree::Custom;
use sdy_syntax::Span;

/// How many file positions of a traceback are shown.
const MAX_FRAMES: usize = 4;

/// The location written at `span` (absolute), read with the aliases of `src`.
fn read(model: &Model, src: &str, span: Span) -> Option<SourceLoc> {
    let text = src.get(span.start as usize..span.end as usize)?;
    mlir_loc::describe(text, &|name| model.loc_alias(src, name)).filter(|l| !l.is_empty())
}

/// The location of an op.
pub fn op_source(model: &Model, src: &str, op: OpId) -> Option<SourceLoc> {
    let info = model.op(op);
    read(model, src, info.node.loc?.shift(info.start))
}

/// The location of a value: its function argument's or block argument's `loc(...)`,
/// or its defining op's.
pub fn value_source(model: &Model, src: &str, v: ValueId) -> Option<SourceLoc> {
    match model.value(v).def {
        ValueDef::Result { op, .. } => op_source(model, src, op),
        ValueDef::BlockArg { op, region, block, index } => {
            let info = model.op(op);
            let loc = match &info.node.custom {
                Custom::Func(f) if region == 0 && block == 0 => f.args.get(index as usize)?.loc,
                _ => {
                    let b = info.node.regions.get(region as usize)?.blocks.get(block as usize)?;
                    b.args.get(index as usize)?.loc
                }
            };
            read(model, src, loc?.shift(info.start))
        }
    }
}

/// The location of result `index` of the function `func` (its `loc(...)` in the
/// signature).
pub fn func_result_source(model: &Model, src: &str, func: OpId, index: usize) -> Option<SourceLoc> {
    let info = model.op(func);
    let Custom::Func(f) = &info.node.custom else { return None };
    read(model, src, f.results.get(index)?.loc?.shift(info.start))
}

/// The location of what a diagnostic reported at `offset` (where MLIR reports it) is
/// about: the value (a function or block argument) defined there, a function result's
/// type in a signature, else the innermost op.
pub fn at_diagnostic(model: &Model, src: &str, offset: u32) -> Option<SourceLoc> {
    if let Some(Target::Value { value, span }) = locate::locate(model, offset) {
        if model.value(value).span == span {
            return value_source(model, src, value);
        }
    }
    let op = crate::query::innermost_op(model, offset, false)?;
    let info = model.op(op);
    if let Custom::Func(f) = &info.node.custom {
        let result = f.results.iter().position(|r| r.ty.span.shift(info.start).contains(offset));
        if let Some(index) = result {
            return func_result_source(model, src, op, index);
        }
    }
    op_source(model, src, op)
}

/// `` `params['embed']` `` / `` `jit(f)/dot_general` at `m.py:3:4` (called from `m.py:9:1`) ``.
pub fn render(l: &SourceLoc) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(name) = l.names.first() {
        parts.push(format!("`{name}`"));
    }
    if let Some((first, callers)) = l.frames.split_first() {
        let mut s = format!("at `{first}`");
        if !callers.is_empty() {
            let shown: Vec<String> =
                callers.iter().take(MAX_FRAMES - 1).map(|f| format!("`{f}`")).collect();
            let more = if callers.len() > MAX_FRAMES - 1 { ", …" } else { "" };
            s.push_str(&format!(" (called from {}{more})", shown.join(", ")));
        }
        parts.push(s);
    }
    parts.join(" ")
}

/// The short form for one line of a message: the first name, else the first file
/// position.
pub fn short(l: &SourceLoc) -> Option<String> {
    l.names.first().cloned().or_else(|| l.frames.first().map(FilePos::to_string))
}

/// The file position a go-to-definition at `offset` (absolute) leads to: the innermost
/// frame of the location of the op whose name or `loc(...)` is under the cursor, or
/// of the value defined there. Whether the file exists is for the front end to check.
pub fn definition_at(model: &Model, src: &str, offset: u32) -> Option<FilePos> {
    let loc = match locate::locate(model, offset) {
        Some(Target::OpName { op }) => op_source(model, src, op),
        Some(Target::Value { value, span }) if model.value(value).span == span => {
            value_source(model, src, value)
        }
        _ => {
            let op = crate::query::innermost_op(model, offset, false)?;
            let info = model.op(op);
            let on_loc = info.node.loc.is_some_and(|l| l.shift(info.start).contains(offset));
            if !on_loc {
                return None;
            }
            op_source(model, src, op)
        }
    }?;
    loc.frames.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diagnostic's place: an argument, a result type in the signature, an op.
    #[test]
    fn diagnostic_places() {
        let src = "func.func @f(%a: tensor<8xf32> loc(\"arg\"(#loc1))) -> (tensor<8xf32> loc(\"out\")) {\n  %0 = stablehlo.abs %a : tensor<8xf32> loc(\"m.py\":7:3)\n  return %0 : tensor<8xf32>\n}\n#loc1 = loc(\"m.py\":2:1)\n";
        let chunk = crate::parse_chunks(src, false).remove(0);
        let a = crate::analyze_chunk(src, &chunk);
        let at = |needle: &str| {
            let l = at_diagnostic(&a.model, src, src.find(needle).unwrap() as u32)
                .map_or("-".to_string(), |l| render(&l));
            format!("{needle}: {l}")
        };
        let got = ["%a", "tensor<8xf32> loc(\"out", "stablehlo.abs", "return"].map(at);
        expect_test::expect![[r#"
            [
                "%a: `arg` at `m.py:2:1`",
                "tensor<8xf32> loc(\"out: `out`",
                "stablehlo.abs: at `m.py:7:3`",
                "return: -",
            ]
        "#]]
        .assert_debug_eq(&got);
    }
}
