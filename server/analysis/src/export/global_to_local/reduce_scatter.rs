//! `sdy.reduce_scatter`: one `stablehlo.reduce_scatter` when one dimension is
//! scattered; several are either combined into one leading dimension
//! (`combine-multi-dimension-reduce-scatter`) or done as an all-reduce over all their
//! axes followed by this device's slice.

use super::*;

impl Localizer<'_> {
    pub(super) fn reduce_scatter(
        &mut self,
        m: &mut Module,
        op: &Op,
    ) -> Result<Option<Vec<Op>>, Failure> {
        let (Some(Attr::AxisLists(per_dim)), Some(&input), Some(&r)) =
            (op.prop("reduce_scatter_axes"), op.operands.first(), op.results.first())
        else {
            return Ok(None);
        };
        let Some(in_s) = self.sh.get(&input).cloned() else { return Ok(None) };
        let Some(mesh) = self.mesh(&in_s.mesh) else {
            return Err(Failure::op(op, messages::G2L_NO_MESH));
        };
        let (Some(lin), Some(lout)) =
            (m.ty(input).and_then(TensorTy::parse), m.ty(r).and_then(TensorTy::parse))
        else {
            return Ok(None);
        };
        let dims: Vec<usize> = (0..per_dim.len()).filter(|&d| !per_dim[d].is_empty()).collect();
        let all: Vec<AxisRef> = dims.iter().flat_map(|&d| per_dim[d].iter().cloned()).collect();
        let Some(groups) = self.replica_groups(&all, &in_s.mesh) else { return Ok(None) };
        let mut b = Builder::new(m);
        if let [d] = dims[..] {
            let dim = NamedAttr::new("scatter_dimension", int_attr(d as i64));
            let new = self.reducing(
                b.m,
                "stablehlo.reduce_scatter",
                vec![input],
                vec![r],
                groups,
                vec![dim],
                op,
                &lin.elem,
            );
            return Ok(Some(vec![new]));
        }
        if self.combine_reduce_scatter {
            let size = |d: usize| per_dim[d].iter().map(|a| axis_size(a, &mesh)).product();
            let factors: Vec<i64> =
                dims.iter().map(|&d| size(d)).collect::<Option<_>>().unwrap_or_default();
            let mut split = Vec::new();
            let mut factor_dims = Vec::new();
            for (i, &n) in lin.shape.iter().enumerate() {
                let Some(j) = dims.iter().position(|&d| d == i) else {
                    split.push(n);
                    continue;
                };
                let f = factors.get(j).copied().unwrap_or(1).max(1);
                if n % f != 0 {
                    return Err(Failure::op(op, messages::G2L_SCATTER_NOT_DIVISIBLE));
                }
                factor_dims.push(split.len());
                split.push(f);
                split.push(n / f);
            }
            let mut perm = factor_dims.clone();
            perm.extend((0..split.len()).filter(|i| !factor_dims.contains(i)));
            let reshaped = b.op(
                "stablehlo.reshape",
                vec![input],
                vec![],
                &lin.with_shape(split.clone()),
                None,
            );
            let moved = lin.with_shape(perm.iter().map(|&p| split[p]).collect());
            let props = vec![NamedAttr::new(
                "permutation",
                i64_array(&perm.iter().map(|&p| p as i64).collect::<Vec<_>>()),
            )];
            let xposed = b.op("stablehlo.transpose", vec![reshaped], props, &moved, None);
            let total: i64 = factors.iter().product();
            let lead = |n: i64| lin.with_shape([n].iter().chain(&lout.shape).copied().collect());
            let combined = b.op("stablehlo.reshape", vec![xposed], vec![], &lead(total), None);
            let scattered = b.m.new_value(Some(lead(1).text()));
            let dim = NamedAttr::new("scatter_dimension", int_attr(0));
            let new = self.reducing(
                b.m,
                "stablehlo.reduce_scatter",
                vec![combined],
                vec![scattered],
                groups,
                vec![dim],
                op,
                &lin.elem,
            );
            b.ops.push(new);
            b.op("stablehlo.reshape", vec![scattered], vec![], &lout, None);
            return Ok(Some(ending_in(b.ops, r)));
        }
        let reduced = b.m.new_value(Some(lin.text()));
        let new = self.reducing(
            b.m,
            "stablehlo.all_reduce",
            vec![input],
            vec![reduced],
            groups,
            vec![],
            op,
            &lin.elem,
        );
        b.ops.push(new);
        self.dynamic_slice_for_axes(&mut b, reduced, &mesh, per_dim, &lout, r);
        Ok(Some(b.ops))
    }
}

/// `N : i64`
pub(super) fn int_attr(n: i64) -> Attr {
    Attr::Int { value: n as i128, ty: "i64".into() }
}
