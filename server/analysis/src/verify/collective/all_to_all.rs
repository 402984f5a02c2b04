//! `sdy.all_to_all`: parameters valid (axes, dimensions in range, distinct, sources
//! ascending), then each moves its axes from the source to the target dimension and
//! every other dimension stays as it is.

use super::super::messages as msg;
use super::super::sharding::verify_axis_list;
use super::super::{Ctx, Violation};
use super::per_dim::{expect_dim, gather_along_dim, slice_along_dim};
use super::Collective;
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{split, AxisRef, Spanned};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::Span;

/// One parameter: axes, source and target dimension (with spans).
struct Param {
    axes: Vec<Spanned<AxisRef>>,
    src: (i64, Span),
    tgt: (i64, Span),
}

fn params(cx: &Ctx, c: &Collective) -> Option<(Vec<Param>, Span)> {
    let op = cx.model.op(c.id);
    let attr = op.node.inherent_attr("params")?;
    let SdyAttr::AllToAllParams(list) = super::super::attrs::sdy(attr.value.as_ref())? else {
        return None;
    };
    let base = op.start;
    let params = list
        .iter()
        .map(|p| Param {
            axes: Spanned::list(&p.axes.axes, base),
            src: (p.src_dim.0, p.src_dim.1.shift(base)),
            tgt: (p.tgt_dim.0, p.tgt_dim.1.shift(base)),
        })
        .collect();
    Some((params, attr.span.shift(base)))
}

pub fn verify(cx: &Ctx, c: &Collective) -> Result<(), Violation> {
    let Some((params, span)) = params(cx, c) else { return Ok(()) };
    if params.is_empty() {
        return Err(Violation::of(C::Collective, msg::EMPTY_PARAMETER_LIST.to_string(), span));
    }
    let rank = cx.model.result_type(c.id, 0).and_then(|t| t.rank()).unwrap_or(c.out.dims.len());
    let mut seen_dims = vec![false; rank];
    let mut prev_src = -1;
    let split: Vec<_> = params.iter().map(|p| split(&p.axes)).collect();
    let mut seen = Vec::new();
    for (p, (axes, spans)) in params.iter().zip(&split) {
        verify_axis_list(axes, spans, &c.mesh, &mut seen)?;
        for (which, (dim, span)) in [("source", p.src), ("target", p.tgt)] {
            if dim < 0 || dim as usize >= rank {
                return Err(Violation::of(
                    C::Collective,
                    msg::dim_out_of_range(which, dim, rank),
                    span,
                ));
            }
        }
        for (dim, span) in [p.src, p.tgt] {
            if std::mem::replace(&mut seen_dims[dim as usize], true) {
                return Err(Violation::of(
                    C::Collective,
                    msg::overlapping_all_to_all_dims(dim),
                    span,
                ));
            }
        }
        if prev_src >= p.src.0 {
            return Err(Violation::of(
                C::Collective,
                msg::source_dims_not_sorted(p.src.0, prev_src),
                p.src.1,
            ));
        }
        prev_src = p.src.0;
    }
    let Some(operand) = &c.operand else { return Ok(()) };
    if operand.dims.len() < rank || c.out.dims.len() < rank {
        return Ok(());
    }
    for p in &params {
        let (src, tgt) = (p.src.0 as usize, p.tgt.0 as usize);
        let expected =
            gather_along_dim(&operand.dims[src].axes, &p.axes, src, &c.mesh, "all-to-all")?;
        expect_dim(c, src, &expected)?;
        expect_dim(c, tgt, &slice_along_dim(&operand.dims[tgt].axes, &p.axes, &c.mesh))?;
    }
    for (dim, d) in operand.dims.iter().enumerate() {
        if !seen_dims.get(dim).copied().unwrap_or(true) {
            expect_dim(c, dim, &d.axes)?;
        }
    }
    Ok(())
}
