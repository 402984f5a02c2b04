//! `sdy.all_to_all`: one `stablehlo.all_to_all` for one parameter; for several, their
//! target dimensions are split and their factors moved to one leading dimension that
//! a single all-to-all exchanges, then moved next to their source dimensions.

use super::reduce_scatter::int_attr;
use super::*;
use crate::ir::sdy::AllToAllParam;

impl Localizer<'_> {
    pub(super) fn all_to_all(
        &mut self,
        m: &mut Module,
        op: &Op,
    ) -> Result<Option<Vec<Op>>, Failure> {
        let (Some(Attr::AllToAll(params)), Some(out), Some(&input), Some(&r)) = (
            op.prop("params"),
            sharding_of(op.prop("out_sharding")),
            op.operands.first(),
            op.results.first(),
        ) else {
            return Ok(None);
        };
        let Some(mesh) = self.mesh(&out.mesh) else {
            return Err(Failure::op(op, messages::G2L_NO_MESH));
        };
        let Some(lin) = m.ty(input).and_then(TensorTy::parse) else { return Ok(None) };
        let size = |axes: &[AxisRef]| -> Option<i64> {
            axes.iter().map(|a| axis_size(a, &mesh)).product()
        };
        let mut b = Builder::new(m);
        if let [p] = &params[..] {
            if p.axes.is_empty() {
                return Err(Failure::op(op, messages::G2L_NO_AXES));
            }
            let (Some(groups), Some(n)) = (self.replica_groups(&p.axes, &out.mesh), size(&p.axes))
            else {
                return Ok(None);
            };
            let (src, tgt) = (p.src_dim as usize, p.tgt_dim as usize);
            let mut shape = lin.shape.clone();
            if src >= shape.len() || tgt >= shape.len() {
                return Ok(None);
            }
            if shape[tgt] % n != 0 {
                return Err(Failure::op(op, messages::G2L_ALL_TO_ALL_NOT_DIVISIBLE));
            }
            shape[src] *= n;
            shape[tgt] /= n;
            let ty = lin.with_shape(shape);
            self.stablehlo_all_to_all(&mut b, input, (tgt, src, n), groups, &ty);
            return Ok(Some(ending_in(b.ops, r)));
        }
        if self.all_to_all_params(&mut b, op, params, input, &lin, &out.mesh, &mesh)?.is_none() {
            return Ok(None);
        }
        Ok(Some(ending_in(b.ops, r)))
    }

    /// `rewriteAllToAllMultipleParams`.
    #[allow(clippy::too_many_arguments)]
    fn all_to_all_params(
        &mut self,
        b: &mut Builder<'_>,
        op: &Op,
        params: &[AllToAllParam],
        input: ValueId,
        lin: &TensorTy,
        mesh_ref: &MeshRef,
        mesh: &Mesh,
    ) -> Result<Option<()>, Failure> {
        let rank = lin.shape.len();
        let n = params.len();
        let mut sorted: Vec<usize> = (0..n).collect();
        sorted.sort_by_key(|&i| params[i].tgt_dim);
        let mut per_param = Vec::new();
        let mut all = Vec::new();
        for &i in &sorted {
            let s: Option<i64> = params[i].axes.iter().map(|a| axis_size(a, mesh)).product();
            let Some(s) = s else { return Ok(None) };
            per_param.push(s.max(1));
            all.extend(params[i].axes.iter().cloned());
        }
        let mut shape0 = Vec::new();
        let mut perm0: Vec<usize> = Vec::new();
        for d in 0..rank {
            let Some(j) = sorted.iter().position(|&i| params[i].tgt_dim == d as i64) else {
                shape0.push(lin.shape[d]);
                continue;
            };
            perm0.push(shape0.len());
            shape0.push(per_param[j]);
            if lin.shape[d] % per_param[j] != 0 {
                return Err(Failure::op(op, messages::G2L_ALL_TO_ALL_PARAM_NOT_DIVISIBLE));
            }
            shape0.push(lin.shape[d] / per_param[j]);
        }
        for i in 0..shape0.len() {
            if !perm0.contains(&i) {
                perm0.push(i);
            }
        }
        let reshape0 =
            b.op("stablehlo.reshape", vec![input], vec![], &lin.with_shape(shape0.clone()), None);
        let t0_shape: Vec<i64> = perm0.iter().map(|&p| shape0[p]).collect();
        let t0_ty = lin.with_shape(t0_shape.clone());
        let transpose0 = transpose(b, reshape0, &perm0, &t0_ty);
        let Some(groups) = self.replica_groups(&all, mesh_ref) else { return Ok(None) };
        let group: i64 = per_param.iter().product();
        let shape1: Vec<i64> =
            [group].iter().chain(&t0_shape[n.min(t0_shape.len())..]).copied().collect();
        let ty1 = lin.with_shape(shape1);
        let reshape1 = b.op("stablehlo.reshape", vec![transpose0], vec![], &ty1, None);
        let exchanged = self.stablehlo_all_to_all(b, reshape1, (0, 0, group), groups, &ty1);
        let reshape2 = b.op("stablehlo.reshape", vec![exchanged], vec![], &t0_ty, None);
        let mut perm1: Vec<usize> = (0..rank).map(|i| i + n).collect();
        for (i, &p) in sorted.iter().enumerate() {
            let src = params[p].src_dim as usize + n;
            let at = perm1.iter().position(|&x| x == src).unwrap_or(perm1.len());
            perm1.insert(at, i);
        }
        let t1_shape: Vec<i64> =
            perm1.iter().map(|&p| t0_shape.get(p).copied().unwrap_or(1)).collect();
        let transpose1 = transpose(b, reshape2, &perm1, &lin.with_shape(t1_shape.clone()));
        let mut fin = Vec::new();
        let mut i = 0;
        while i < t1_shape.len() {
            if perm1[i] < n && i + 1 < t1_shape.len() {
                fin.push(t1_shape[i] * t1_shape[i + 1]);
                i += 2;
            } else {
                fin.push(t1_shape[i]);
                i += 1;
            }
        }
        b.op("stablehlo.reshape", vec![transpose1], vec![], &lin.with_shape(fin), None);
        Ok(Some(()))
    }

    /// A `stablehlo.all_to_all` of `v` splitting `split` into `count` parts and
    /// concatenating them along `concat`.
    fn stablehlo_all_to_all(
        &mut self,
        b: &mut Builder<'_>,
        v: ValueId,
        (split, concat, count): (usize, usize, i64),
        groups: Attr,
        ty: &TensorTy,
    ) -> ValueId {
        let props = vec![
            NamedAttr::new("channel_handle", self.channel()),
            NamedAttr::new("concat_dimension", int_attr(concat as i64)),
            NamedAttr::new("replica_groups", groups),
            NamedAttr::new("split_count", int_attr(count)),
            NamedAttr::new("split_dimension", int_attr(split as i64)),
        ];
        let r = b.op("stablehlo.all_to_all", vec![v], props, ty, None);
        if let Some(last) = b.ops.last_mut() {
            last.syntax = Syntax::Generic;
        }
        r
    }
}

/// `stablehlo.transpose` of `v` by `perm` into `ty`.
pub(super) fn transpose(b: &mut Builder<'_>, v: ValueId, perm: &[usize], ty: &TensorTy) -> ValueId {
    let perm: Vec<i64> = perm.iter().map(|&p| p as i64).collect();
    let props = vec![NamedAttr::new("permutation", i64_array(&perm))];
    b.op("stablehlo.transpose", vec![v], props, ty, None)
}
