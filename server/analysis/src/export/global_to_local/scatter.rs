//! `stablehlo.scatter` on sharded operands: indices shifted into this device's shard
//! of each sharded indexed operand dimension; with updates sharded on batch dimensions
//! the operand does not share (reduced by the `sdy.all_reduce` after it), only one
//! device of each reduction group keeps the inputs, the others start from the
//! reduction's identity.

use super::gather::Indexing;
use super::*;
use crate::export::ops::inherent;
use crate::rules::stablehlo_attrs::Value;

fn replicated(s: Option<&TensorSharding>) -> bool {
    s.is_none_or(|s| s.dims.iter().all(|d| d.axes.is_empty()))
}

impl Localizer<'_> {
    pub(super) fn scatter(&mut self, m: &mut Module, op: &Op) -> Result<Option<Vec<Op>>, Failure> {
        let n = op.results.len();
        if n == 0 || op.operands.len() != 2 * n + 1 {
            return Ok(None);
        }
        let (input, indices, update) = (op.operands[0], op.operands[n], op.operands[n + 1]);
        let (in_s, up_s) = (self.sh.get(&input).cloned(), self.sh.get(&update).cloned());
        if replicated(in_s.as_ref()) && replicated(up_s.as_ref()) {
            return Ok(None);
        }
        let mesh = match (&in_s, &up_s) {
            (Some(s), _) | (None, Some(s)) => self.mesh(&s.mesh),
            (None, None) => None,
        };
        let Some(mesh) = mesh else {
            return Err(Failure::error(op, messages::G2L_SCATTER_NO_MESH));
        };
        let a = inherent(op);
        let Some(dn) = a.scatter_dims() else { return Ok(None) };
        let map = a
            .get("scatter_dimension_numbers")
            .and_then(|d| d.field("scatter_dims_to_operand_dims"))
            .and_then(Value::as_ints)
            .unwrap_or_default();
        // Axes of update batch dimensions that do not shard the operand.
        let mut reduction: Vec<AxisRef> = Vec::new();
        if let Some(us) = up_s.as_ref().filter(|s| !replicated(Some(s))) {
            for (i, d) in us.dims.iter().enumerate() {
                if dn.offset_dims.contains(&(i as i64)) {
                    continue;
                }
                for axis in &d.axes {
                    let in_operand = !replicated(in_s.as_ref())
                        && in_s
                            .as_ref()
                            .is_some_and(|s| s.dims.iter().any(|x| x.axes.contains(axis)));
                    if !in_operand {
                        reduction.push(axis.clone());
                    }
                }
            }
        }
        if reduction.is_empty() && replicated(in_s.as_ref()) {
            return Ok(None);
        }
        let Some(lin) = m.ty(input).and_then(TensorTy::parse) else { return Ok(None) };
        let mut b = Builder::new(m);
        let mut inputs: Vec<ValueId> = op.operands[..n].to_vec();
        if !reduction.is_empty() {
            let Some(identity) = reduction_identity(&mut b, op, &lin.elem) else {
                return Err(Failure::error(op, messages::G2L_SCATTER_NO_IDENTITY));
            };
            let devices: i64 = mesh.axes.iter().map(|x| x.1).product();
            let table: Vec<&str> = (0..devices)
                .map(|d| if shard_index(d, &mesh, &reduction) == 0 { "true" } else { "false" })
                .collect();
            let id = self.device_id(&mut b);
            let table_ty = TensorTy { shape: vec![devices], elem: "i1".into() };
            let t = b.splat(&table_ty, &format!("[{}]", table.join(", ")));
            let one = TensorTy { shape: vec![1], elem: "i1".into() };
            let sizes = NamedAttr::new("slice_sizes", i64_array(&[1]));
            let leader = b.op("stablehlo.dynamic_slice", vec![t, id], vec![sizes], &one, None);
            let dims = NamedAttr::new("broadcast_dimensions", i64_array(&[0]));
            let leader = b.op(
                "stablehlo.broadcast_in_dim",
                vec![leader],
                vec![dims],
                &lin.with_elem("i1"),
                None,
            );
            let dims = NamedAttr::new("broadcast_dimensions", i64_array(&[]));
            let fill = b.op("stablehlo.broadcast_in_dim", vec![identity], vec![dims], &lin, None);
            for v in &mut inputs {
                let ty = TensorTy::parse(b.m.ty(*v).unwrap_or_default()).unwrap_or(lin.clone());
                *v = b.op("stablehlo.select", vec![leader, *v, fill], vec![], &ty, None);
            }
        }
        let mut indexed = Vec::new();
        if let Some(s) = in_s.as_ref().filter(|s| !replicated(Some(s))) {
            for (i, d) in s.dims.iter().enumerate() {
                if d.axes.is_empty() {
                    continue;
                }
                if map.contains(&(i as i64)) {
                    indexed.push(i as i64);
                } else if dn.collapsed_slice_dims.contains(&(i as i64)) {
                    return Err(Failure::op(op, &messages::scatter_unindexed_inserted_dim(i)));
                }
            }
        }
        if indexed.is_empty() && reduction.is_empty() {
            return Ok(None);
        }
        let mut local_indices = indices;
        if let Some(s) = in_s.as_ref().filter(|s| !replicated(Some(s))) {
            let gin =
                self.global.get(&input).and_then(|t| TensorTy::parse(t)).unwrap_or(lin.clone());
            let ix = Indexing { start_index_map: map, index_vector_dim: dn.index_vector_dim };
            local_indices = self
                .local_indices_and_mask(&mut b, indices, s, &mesh, &gin, &lin, &ix, &indexed, false)
                .0;
        }
        let mut new = op.clone();
        let mut operands = inputs;
        operands.push(local_indices);
        operands.extend_from_slice(&op.operands[n + 1..]);
        new.operands = operands;
        new.syntax = Syntax::Generic;
        let inherent_names = ["scatter_dimension_numbers", "indices_are_sorted", "unique_indices"];
        for name in inherent_names {
            if new.prop(name).is_none() {
                if let Some(v) = op.attr(name) {
                    new.set_prop(name, v.clone());
                }
            }
        }
        new.attrs.retain(|x| !inherent_names.contains(&x.name.as_str()));
        for flag in ["indices_are_sorted", "unique_indices"] {
            let on = a.bool(&[flag]).unwrap_or(false);
            new.set_prop(flag, Attr::Raw(on.to_string()));
        }
        new.props.sort_by(|x, y| x.name.cmp(&y.name));
        b.ops.push(new);
        Ok(Some(b.ops))
    }
}

/// `getScatterReductionIdentity`: the identity of the one reduction the update
/// computation applies (add, and, or, multiply, maximum, minimum) as a scalar constant.
fn reduction_identity(b: &mut Builder<'_>, op: &Op, elem: &str) -> Option<ValueId> {
    let body = op.regions.first()?.blocks.first()?;
    let kinds: Vec<&str> =
        body.ops.iter().filter(|o| !o.name.ends_with(".return")).map(|o| o.name.as_str()).collect();
    let kind = *kinds.first()?;
    if kinds.iter().any(|k| *k != kind) {
        return None;
    }
    let float = elem.starts_with('f') || elem.starts_with("bf");
    let bits: u32 = elem.trim_start_matches(|c: char| c.is_ascii_alphabetic()).parse().ok()?;
    if !(1..=64).contains(&bits) {
        return None;
    }
    let value = match kind {
        "stablehlo.add" | "stablehlo.or" => crate::export::ops::scalar_text(elem, false),
        "stablehlo.and" | "stablehlo.multiply" => crate::export::ops::scalar_text(elem, true),
        "stablehlo.maximum" | "stablehlo.minimum" => {
            let max = kind == "stablehlo.minimum";
            if float {
                let text = match elem {
                    "f32" => "3.40282347E+38",
                    "f64" => "1.7976931348623157E+308",
                    "bf16" => "3.38953139E+38",
                    "f16" => "6.550400e+04",
                    _ => return None,
                };
                if max {
                    text.to_string()
                } else {
                    format!("-{text}")
                }
            } else if elem == "i1" {
                (if max { "true" } else { "false" }).to_string()
            } else if elem.starts_with('u') {
                if max {
                    (u128::MAX >> (128 - bits)).to_string()
                } else {
                    "0".to_string()
                }
            } else {
                let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
                if max {
                    hi.to_string()
                } else {
                    lo.to_string()
                }
            }
        }
        _ => return None,
    };
    Some(b.splat(&TensorTy::scalar(elem), &value))
}
