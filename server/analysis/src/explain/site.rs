//! Where a sharding sits: the value it describes (words and type), and the manual axes
//! of a manual computation.

use super::locate::Site;
use crate::model::{Model, OpId, ValueDef, ValueId};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{AttrKind, Custom, Type};

/// The type of the value a sharding at `site` of `op` describes.
pub fn site_type(model: &Model, op: OpId, site: &Site) -> Option<Type> {
    let info = model.op(op);
    let func = match &info.node.custom {
        Custom::Func(f) => Some(f),
        _ => None,
    };
    match site {
        Site::Result(i) => model.result_type(op, *i as usize).cloned(),
        Site::FuncArg(i) => func?.args.get(*i as usize).map(|a| a.ty.clone()),
        Site::FuncResult(i) => func?.results.get(*i as usize).map(|r| r.ty.clone()),
        Site::BlockArg { region, block, index } => {
            model.value(block_arg(model, op, *region, *block, *index)?).ty.clone()
        }
        Site::Inherent { key, index } => match (key.as_str(), index) {
            ("in_shardings", Some(i)) => model.operand_type(op, *i as usize).cloned(),
            ("out_shardings", Some(i)) => model.result_type(op, *i as usize).cloned(),
            ("sharding" | "out_sharding", None) => {
                model.result_type(op, 0).or_else(|| model.operand_type(op, 0)).cloned()
            }
            _ => None,
        },
        Site::Other(_) => None,
    }
}

/// Words for the value a sharding at `site` of `op` describes.
pub fn site_label(model: &Model, op: OpId, site: &Site) -> String {
    let info = model.op(op);
    let name = info.name();
    let func = match &info.node.custom {
        Custom::Func(f) => format!("`@{}`", f.sym.text),
        _ => format!("`{name}`"),
    };
    let result = |i: u32| info.results.get(i as usize).map(|&v| model.value(v).name.to_string());
    let operand = |i: u32| {
        info.node.operands.get(i as usize).map(|r| match r.index {
            Some(k) => format!("{}#{k}", r.name),
            None => r.name.to_string(),
        })
    };
    let named = |what: String, v: Option<String>| match v {
        Some(v) => format!("`{v}` ({what})"),
        None => what,
    };
    match site {
        Site::Result(0) if info.results.len() == 1 => {
            named(format!("the result of `{name}`"), result(0))
        }
        Site::Result(i) => named(format!("result {i} of `{name}`"), result(*i)),
        Site::FuncArg(i) => {
            let arg = info.region_args.first().and_then(|a| a.get(*i as usize));
            named(format!("argument {i} of {func}"), arg.map(|&v| model.value(v).name.to_string()))
        }
        Site::FuncResult(i) => format!("result {i} of {func}"),
        Site::BlockArg { region, block, index } => named(
            format!("block argument {index} of `{name}`"),
            block_arg(model, op, *region, *block, *index).map(|v| model.value(v).name.to_string()),
        ),
        Site::Inherent { key, index: Some(i) } if key == "in_shardings" => {
            named(format!("operand {i} of `{name}`"), operand(*i))
        }
        Site::Inherent { key, index: Some(i) } if key == "out_shardings" => {
            named(format!("result {i} of `{name}`"), result(*i))
        }
        Site::Inherent { key, index: None } if key == "sharding" || key == "out_sharding" => {
            named(format!("the result of `{name}`"), result(0))
        }
        Site::Inherent { key, .. } | Site::Other(key) => format!("`{key}` of {func}"),
    }
}

/// The manual axes of a `sdy.manual_computation`.
pub(crate) fn manual_axes(model: &Model, op: OpId) -> Vec<String> {
    let attr = model.op(op).node.inherent_attr("manual_axes").and_then(|a| a.value.as_ref());
    match attr.map(|a| &a.kind) {
        Some(AttrKind::Sdy(s)) => match &**s {
            SdyAttr::ManualAxes(axes) => axes.iter().map(|a| a.name.to_string()).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The value of block argument `index` of block `block` of region `region` of `op`.
fn block_arg(model: &Model, op: OpId, region: u32, block: u32, index: u32) -> Option<ValueId> {
    if block == 0 {
        return model.op(op).region_args.get(region as usize)?.get(index as usize).copied();
    }
    let want = ValueDef::BlockArg { op, region, block, index };
    model.values.iter().position(|v| v.def == want).map(|i| i as ValueId)
}
