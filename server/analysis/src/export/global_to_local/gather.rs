//! `stablehlo.gather` on a sharded operand: slice sizes of sharded full-slice
//! dimensions become local. Sharded dimensions sliced one element at a time
//! ("trivial" ones, whose sharding is reduced by the `sdy.all_reduce` after the gather)
//! are gathered locally: indices shifted by this device's offset, and the elements
//! whose index falls outside this device's shard zeroed.

use super::*;
use crate::export::ops::inherent;
use crate::rules::stablehlo_attrs::Value;

/// A gather's or scatter's indexing: which operand dimension each index component
/// addresses, and where the index vector sits in the indices.
pub(super) struct Indexing {
    pub start_index_map: Vec<i64>,
    pub index_vector_dim: i64,
}

impl Localizer<'_> {
    pub(super) fn gather(&mut self, m: &mut Module, op: &Op) -> Result<Option<Vec<Op>>, Failure> {
        let (Some(&operand), Some(&indices), Some(&r)) =
            (op.operands.first(), op.operands.get(1), op.results.first())
        else {
            return Ok(None);
        };
        let Some(s) = self.sh.get(&operand).filter(|s| s.dims.iter().any(|d| !d.axes.is_empty()))
        else {
            return Ok(None);
        };
        let s = s.clone();
        let Some(mesh) = self.mesh(&s.mesh) else {
            return Err(Failure::op(op, messages::G2L_NO_MESH));
        };
        let a = inherent(op);
        let (Some(dn), Some(sizes)) = (a.gather_dims(), a.ints(&["slice_sizes"])) else {
            return Ok(None);
        };
        let map = a
            .get("dimension_numbers")
            .and_then(|d| d.field("start_index_map"))
            .and_then(Value::as_ints)
            .unwrap_or_default();
        let indexing = Indexing { start_index_map: map, index_vector_dim: dn.index_vector_dim };
        let (Some(gin), Some(lin), Some(lres)) = (
            self.global.get(&operand).and_then(|t| TensorTy::parse(t)),
            m.ty(operand).and_then(TensorTy::parse),
            m.ty(r).and_then(TensorTy::parse),
        ) else {
            return Ok(None);
        };
        let size =
            |axes: &[AxisRef]| -> i64 { axes.iter().filter_map(|x| axis_size(x, &mesh)).product() };
        let batching = |i: usize| dn.operand_batching_dims.contains(&(i as i64));
        let mut trivial = Vec::new();
        let mut local_sizes = sizes.clone();
        for (i, d) in s.dims.iter().enumerate() {
            let n = size(&d.axes);
            let slice = sizes.get(i).copied().unwrap_or(1);
            if d.axes.is_empty() || batching(i) {
                continue;
            }
            if slice == 1 {
                if n > 1 {
                    trivial.push(i as i64);
                }
                continue;
            }
            if slice != gin.shape.get(i).copied().unwrap_or(-1) || slice % n.max(1) != 0 {
                return Err(Failure::check(op, messages::G2L_GATHER_PARTIAL_SLICE.into()));
            }
            local_sizes[i] = slice / n.max(1);
        }
        let mut b = Builder::new(m);
        let mut gather = op.clone();
        gather.syntax = Syntax::Generic;
        gather.props.retain(|p| p.name != "slice_sizes" && p.name != "indices_are_sorted");
        gather.attrs.retain(|p| {
            !matches!(p.name.as_str(), "slice_sizes" | "indices_are_sorted" | "dimension_numbers")
        });
        if gather.prop("dimension_numbers").is_none() {
            if let Some(dims) = op.attr("dimension_numbers") {
                gather.set_prop("dimension_numbers", dims.clone());
            }
        }
        let sorted = a.bool(&["indices_are_sorted"]).unwrap_or(false);
        gather.set_prop("indices_are_sorted", Attr::Raw(sorted.to_string()));
        gather.set_prop("slice_sizes", i64_array(&local_sizes));
        gather.props.sort_by(|x, y| x.name.cmp(&y.name));
        if trivial.is_empty() {
            return Ok(Some(vec![gather]));
        }
        let (local_indices, mask) = self.local_indices_and_mask(
            &mut b, indices, &s, &mesh, &gin, &lin, &indexing, &trivial, true,
        );
        gather.operands[1] = local_indices;
        let gathered = b.m.new_value(Some(lres.text()));
        gather.results = vec![gathered];
        b.ops.push(gather);
        let Some(mut mask) = mask else { return Ok(None) };
        let mut mask_ty =
            TensorTy::parse(b.m.ty(mask).unwrap_or_default()).unwrap_or(lres.with_elem("i1"));
        let ivd = dn.index_vector_dim;
        if !mask_ty.shape.is_empty() && (ivd as usize) < mask_ty.shape.len() {
            let mut reduced = mask_ty.shape.clone();
            reduced.remove(ivd as usize);
            let init = b.splat(&TensorTy::scalar("i1"), "true");
            let props = vec![NamedAttr::new("dimensions", i64_array(&[ivd]))];
            let reduced_ty = mask_ty.with_shape(reduced);
            mask = b.op("stablehlo.reduce", vec![mask, init], props, &reduced_ty, None);
            let body = super::collectives::binary_body(b.m, "i1", "stablehlo.and");
            if let Some(last) = b.ops.last_mut() {
                last.regions = vec![body];
            }
            mask_ty = reduced_ty;
        }
        let dims: Vec<i64> = if mask_ty.shape.is_empty() {
            Vec::new()
        } else {
            (0..lres.shape.len() as i64).filter(|i| !dn.offset_dims.contains(i)).collect()
        };
        let props = vec![NamedAttr::new("broadcast_dimensions", i64_array(&dims))];
        let wide =
            b.op("stablehlo.broadcast_in_dim", vec![mask], props, &lres.with_elem("i1"), None);
        let zero = b.splat(&lres, &crate::export::ops::scalar_text(&lres.elem, false));
        b.op("stablehlo.select", vec![wide, gathered, zero], vec![], &lres, None);
        Ok(Some(ending_in(b.ops, r)))
    }

    /// `computeLocalIndicesAndMask` (a gather clamps its indices and masks; a scatter
    /// does neither): the indices shifted into this device's shard of
    /// each trivial indexed dimension, and (with `with_mask`) where they fall inside
    /// it and, for trivial dimensions not indexed, whether this device holds their
    /// start.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn local_indices_and_mask(
        &self,
        b: &mut Builder<'_>,
        indices: ValueId,
        s: &TensorSharding,
        mesh: &Mesh,
        gin: &TensorTy,
        lin: &TensorTy,
        ix: &Indexing,
        trivial: &[i64],
        gather: bool,
    ) -> (ValueId, Option<ValueId>) {
        let with_mask = gather;
        let ity = TensorTy::parse(b.m.ty(indices).unwrap_or_default())
            .unwrap_or_else(|| TensorTy::scalar("i64"));
        let elem = TensorTy::scalar(&ity.elem);
        let ivd = ix.index_vector_dim;
        let rank = ity.shape.len() as i64;
        let axes = |d: i64| s.dims.get(d as usize).map(|x| x.axes.clone()).unwrap_or_default();
        let local_size = |d: i64| lin.shape.get(d as usize).copied().unwrap_or(1);
        let mut adjusted = indices;
        let mut mask = None;
        if trivial.iter().any(|d| ix.start_index_map.contains(d)) {
            let base = if gather {
                let like = |b: &mut Builder<'_>, values: &[i64]| -> ValueId {
                    if ivd < rank && values.len() > 1 {
                        let text: Vec<String> = values.iter().map(i64::to_string).collect();
                        let vty =
                            TensorTy { shape: vec![values.len() as i64], elem: ity.elem.clone() };
                        let c = b.splat(&vty, &format!("[{}]", text.join(", ")));
                        let props = vec![NamedAttr::new("broadcast_dimensions", i64_array(&[ivd]))];
                        return b.op("stablehlo.broadcast_in_dim", vec![c], props, &ity, None);
                    }
                    b.splat(&ity, &values[0].to_string())
                };
                let lo = like(b, &[0]);
                let max: Vec<i64> = ix
                    .start_index_map
                    .iter()
                    .map(|&d| gin.shape.get(d as usize).copied().unwrap_or(1) - 1)
                    .collect();
                let hi = like(b, &max);
                b.op("stablehlo.clamp", vec![lo, indices, hi], vec![], &ity, None)
            } else {
                indices
            };
            let (mut mins, mut maxs) = (Vec::new(), Vec::new());
            for &d in &ix.start_index_map {
                if !trivial.contains(&d) {
                    mins.push(b.splat(&elem, "0"));
                    if with_mask {
                        let last = gin.shape.get(d as usize).copied().unwrap_or(1) - 1;
                        maxs.push(b.splat(&elem, &last.to_string()));
                    }
                    continue;
                }
                let offset = self.dimension_offset(b, mesh, &axes(d), local_size(d));
                let offset = b.op("stablehlo.convert", vec![offset], vec![], &elem, None);
                mins.push(offset);
                if with_mask {
                    let c = b.splat(&elem, &(local_size(d) - 1).to_string());
                    maxs.push(b.op("stablehlo.add", vec![offset, c], vec![], &elem, None));
                }
            }
            let bounds = |b: &mut Builder<'_>, vs: &[ValueId]| -> ValueId {
                if ivd >= rank || ity.shape.get(ivd as usize) == Some(&1) {
                    let props = vec![NamedAttr::new("broadcast_dimensions", i64_array(&[]))];
                    return b.op("stablehlo.broadcast_in_dim", vec![vs[0]], props, &ity, None);
                }
                let one = TensorTy { shape: vec![1], elem: ity.elem.clone() };
                let parts: Vec<ValueId> = vs
                    .iter()
                    .map(|&v| b.op("stablehlo.reshape", vec![v], vec![], &one, None))
                    .collect();
                let all = TensorTy { shape: vec![vs.len() as i64], elem: ity.elem.clone() };
                let dim = NamedAttr::new("dimension", super::reduce_scatter::int_attr(0));
                let joined = b.op("stablehlo.concatenate", parts, vec![dim], &all, None);
                let props = vec![NamedAttr::new("broadcast_dimensions", i64_array(&[ivd]))];
                b.op("stablehlo.broadcast_in_dim", vec![joined], props, &ity, None)
            };
            let min = bounds(b, &mins);
            let max = with_mask.then(|| bounds(b, &maxs));
            adjusted = b.op("stablehlo.subtract", vec![base, min], vec![], &ity, None);
            if let Some(max) = max {
                let ge = compare(b, "GE", base, min, &ity);
                let le = compare(b, "LE", base, max, &ity);
                mask =
                    Some(b.op("stablehlo.and", vec![ge, le], vec![], &ity.with_elem("i1"), None));
            }
        }
        if !with_mask {
            return (adjusted, None);
        }
        let mut on_start: Option<ValueId> = None;
        for &d in trivial.iter().filter(|d| !ix.start_index_map.contains(d)) {
            let offset = self.dimension_offset(b, mesh, &axes(d), local_size(d));
            let i64s = TensorTy::scalar("i64");
            let zero = b.splat(&i64s, "0");
            let eq = compare(b, "EQ", offset, zero, &i64s);
            on_start = Some(match on_start {
                Some(prev) => {
                    b.op("stablehlo.and", vec![prev, eq], vec![], &TensorTy::scalar("i1"), None)
                }
                None => eq,
            });
        }
        if let Some(p) = on_start {
            mask = Some(match mask {
                Some(m) => {
                    let mty = ity.with_elem("i1");
                    let props = vec![NamedAttr::new("broadcast_dimensions", i64_array(&[]))];
                    let wide = b.op("stablehlo.broadcast_in_dim", vec![p], props, &mty, None);
                    b.op("stablehlo.and", vec![m, wide], vec![], &mty, None)
                }
                None => p,
            });
        }
        (adjusted, mask)
    }
}

/// `stablehlo.compare DIR, a, b` of two values of type `ty`.
fn compare(b: &mut Builder<'_>, dir: &str, x: ValueId, y: ValueId, ty: &TensorTy) -> ValueId {
    let d = Attr::Raw(format!("#stablehlo<comparison_direction {dir}>"));
    let props = vec![NamedAttr::new("comparison_direction", d)];
    b.op("stablehlo.compare", vec![x, y], props, &ty.with_elem("i1"), None)
}
