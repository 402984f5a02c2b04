//! `dim N is empty and closed but has a priority`: open the dimension (`{}p1` →
//! `{?}p1`), or drop the priority (`{}`). Both are valid; neither is preferred.

use super::{Edit, Found};
use crate::diag::{Diagnostic, DiagnosticCode};
use crate::explain::locate::{locate, Target};
use crate::model::Model;
use sdy_syntax::Span;

pub(super) fn fixes(model: &Model, src: &str, d: &Diagnostic) -> Option<Vec<Found>> {
    if d.code != DiagnosticCode::EmptyClosedWithPriority {
        return None;
    }
    let Target::Sharding { sharding, .. } = locate(model, d.focus.start)? else { return None };
    let n = sharding.dim_spans.iter().position(|x| *x == d.focus)?;
    let dim = sharding.dim_spans[n];
    let text = src.get(dim.start as usize..dim.end as usize)?;
    let close = dim.start + text.rfind('}')? as u32;
    let open = Edit { span: Span::empty(dim.start + 1), text: "?".into() };
    let drop = Edit { span: Span::new(close + 1, dim.end), text: String::new() };
    Some(vec![
        (
            format!("Open dimension {n}: {{?}}{}", &text[(close - dim.start + 1) as usize..]),
            vec![open],
            false,
        ),
        (format!("Remove the priority of dimension {n}"), vec![drop], false),
    ])
}
