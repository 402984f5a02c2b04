//! The collectives: `sdy.all_reduce`, `sdy.all_gather` and `sdy.all_slice` as
//! StableHLO collectives over the device groups of their axes.

use super::*;

impl Localizer<'_> {
    /// `AllSliceOpPattern`: this device's slice of the operand.
    pub(super) fn all_slice(&self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let (Some(Attr::AxisLists(axes)), Some(out)) =
            (op.prop("slicing_axes"), sharding_of(op.prop("out_sharding")))
        else {
            return None;
        };
        let mesh = self.mesh(&out.mesh)?;
        let (&input, &r) = (op.operands.first()?, op.results.first()?);
        let local = TensorTy::parse(m.ty(r)?)?;
        let mut b = Builder::new(m);
        self.dynamic_slice_for_axes(&mut b, input, &mesh, axes, &local, r);
        Some(b.ops)
    }

    /// `AllGatherOpPattern`: a `stablehlo.all_gather` per gathered dimension (last
    /// first), or one over all their axes on a new leading dimension that is then
    /// split and moved next to the dimensions it grows.
    pub(super) fn all_gather(&mut self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let (Some(Attr::AxisLists(axes)), Some(out)) =
            (op.prop("gathering_axes"), sharding_of(op.prop("out_sharding")))
        else {
            return None;
        };
        let mesh = self.mesh(&out.mesh)?;
        let (&input, &r) = (op.operands.first()?, op.results.first()?);
        let local = TensorTy::parse(m.ty(input)?)?;
        let dims: Vec<usize> = (0..axes.len()).filter(|&d| !axes[d].is_empty()).collect();
        let size = |a: &[AxisRef]| a.iter().map(|x| axis_size(x, &mesh)).product::<Option<i64>>();
        let mut b = Builder::new(m);
        if self.per_dim || dims.len() == 1 {
            let mut cur = input;
            let mut shape = local.shape.clone();
            for &d in dims.iter().rev() {
                *shape.get_mut(d)? *= size(&axes[d])?;
                cur = self.stablehlo_all_gather(
                    &mut b,
                    cur,
                    d,
                    &axes[d],
                    &out.mesh,
                    &local.with_shape(shape.clone()),
                )?;
            }
            b.ops.last_mut()?.results = vec![r];
            return Some(b.ops);
        }
        let factors: Vec<i64> = dims.iter().map(|&d| size(&axes[d])).collect::<Option<_>>()?;
        let all: Vec<AxisRef> = dims.iter().flat_map(|&d| axes[d].iter().cloned()).collect();
        let with =
            |lead: &[i64]| local.with_shape(lead.iter().chain(&local.shape).copied().collect());
        let one = b.op("stablehlo.reshape", vec![input], vec![], &with(&[1]), None);
        let group: i64 = factors.iter().product();
        let gathered =
            self.stablehlo_all_gather(&mut b, one, 0, &all, &out.mesh, &with(&[group]))?;
        let split = b.op("stablehlo.reshape", vec![gathered], vec![], &with(&factors), None);
        let n = dims.len();
        let mut perm = Vec::new();
        let mut next = 0;
        for i in 0..local.shape.len() {
            if dims.contains(&i) {
                perm.push(next);
                next += 1;
            }
            perm.push(i + n);
        }
        let split_shape: Vec<i64> = factors.iter().chain(&local.shape).copied().collect();
        let moved = local.with_shape(perm.iter().map(|&p| split_shape[p]).collect());
        let props = vec![NamedAttr::new(
            "permutation",
            i64_array(&perm.iter().map(|&p| p as i64).collect::<Vec<_>>()),
        )];
        let xposed = b.op("stablehlo.transpose", vec![split], props, &moved, None);
        let mut fin = local.shape.clone();
        for (j, &d) in dims.iter().enumerate() {
            fin[d] *= factors[j];
        }
        b.op("stablehlo.reshape", vec![xposed], vec![], &local.with_shape(fin), None);
        b.ops.last_mut()?.results = vec![r];
        Some(b.ops)
    }

    /// A `stablehlo.all_gather` of `v` along `dim` over `axes`, of type `ty`.
    pub(super) fn stablehlo_all_gather(
        &mut self,
        b: &mut Builder<'_>,
        v: ValueId,
        dim: usize,
        axes: &[AxisRef],
        mesh: &MeshRef,
        ty: &TensorTy,
    ) -> Option<ValueId> {
        let groups = self.replica_groups(axes, mesh)?;
        let props = vec![
            NamedAttr::new("all_gather_dim", Attr::Int { value: dim as i128, ty: "i64".into() }),
            NamedAttr::new("channel_handle", self.channel()),
            NamedAttr::new("replica_groups", groups),
            NamedAttr::new("use_global_device_ids", Attr::Unit),
        ];
        let r = b.op("stablehlo.all_gather", vec![v], props, ty, None);
        if let Some(last) = b.ops.last_mut() {
            last.syntax = Syntax::Generic;
        }
        Some(r)
    }

    pub(super) fn channel(&mut self) -> Attr {
        let h = self.next_channel;
        self.next_channel += 1;
        Attr::Raw(format!("#stablehlo.channel_handle<handle = {h}, type = 1>"))
    }

    /// `AllReduceOpPattern`: a `stablehlo.all_reduce` over the reduction axes' device
    /// groups, reducing with the op's reduction.
    pub(super) fn all_reduce(&mut self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let (Some(Attr::AxisList(axes)), Some(out)) =
            (op.prop("reduction_axes"), sharding_of(op.prop("out_sharding")))
        else {
            return None;
        };
        let groups = self.replica_groups(axes, &out.mesh)?;
        let elem = TensorTy::parse(m.ty(*op.results.first()?)?)?.elem;
        let new = self.reducing(
            m,
            "stablehlo.all_reduce",
            op.operands.clone(),
            op.results.clone(),
            groups,
            vec![],
            op,
            &elem,
        );
        Some(vec![new])
    }

    /// A StableHLO collective with a reduction body (`buildReduceComputation`): a
    /// fresh channel, `groups`, `extra` properties, and the reduction of `op`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn reducing(
        &mut self,
        m: &mut Module,
        name: &str,
        operands: Vec<ValueId>,
        results: Vec<ValueId>,
        groups: Attr,
        extra: Vec<NamedAttr>,
        op: &Op,
        elem: &str,
    ) -> Op {
        let reducer = match op.prop("reduction_op").map(crate::ir::attr::attr_to_string) {
            Some(r) if r == "max" => "stablehlo.maximum",
            Some(r) if r == "min" => "stablehlo.minimum",
            _ => "stablehlo.add",
        };
        let mut props = vec![
            NamedAttr::new("channel_handle", self.channel()),
            NamedAttr::new("replica_groups", groups),
        ];
        props.extend(extra);
        props.push(NamedAttr::new("use_global_device_ids", Attr::Unit));
        let mut new = Op::pretty(name, operands, results, props);
        new.regions = vec![binary_body(m, elem, reducer)];
        new.origin = op.origin;
        new.syntax = Syntax::Generic;
        new
    }
}

/// A reduction body: `reducer` on two scalars of `elem`, returned.
pub(super) fn binary_body(m: &mut Module, elem: &str, reducer: &str) -> Region {
    let scalar = TensorTy::scalar(elem).text();
    let (a, b) = (m.new_value(Some(scalar.clone())), m.new_value(Some(scalar.clone())));
    let r = m.new_value(Some(scalar));
    let body = Block {
        args: vec![a, b],
        ops: vec![
            Op::pretty(reducer, vec![a, b], vec![r], vec![]),
            Op::pretty("stablehlo.return", vec![r], vec![], vec![]),
        ],
    };
    Region { blocks: vec![body] }
}
