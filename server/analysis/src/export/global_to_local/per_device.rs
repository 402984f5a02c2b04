//! Values whose content depends on the device: a sharded pad, iota or dense
//! constant becomes a local op plus this device's offset.

use super::*;

impl Localizer<'_> {
    /// `StablehloPadOpPattern` for a sharded operand: a local pad when every device
    /// pads alike, else a pad wide enough for every device and this device's slice
    /// of it.
    pub(super) fn pad(&self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let (&[input, value], &r) = (&op.operands[..], op.results.first()?) else { return None };
        let (in_s, out_s) = (self.sh.get(&input)?, self.sh.get(&r)?);
        if in_s.dims.iter().all(|d| d.axes.is_empty()) {
            return None;
        }
        let mesh = self.mesh(&in_s.mesh)?;
        let gin = TensorTy::parse(self.global.get(&input)?)?;
        let gout = TensorTy::parse(self.global.get(&r)?)?;
        let [low, _, interior] = crate::export::ops::pad_amounts(op)?;
        let rank = gin.shape.len();
        let devices: i64 = mesh.axes.iter().map(|a| a.1).product();
        let mut offsets = vec![vec![0i64; devices as usize]; rank];
        for i in 0..rank {
            let (ia, oa) = (&in_s.dims.get(i)?.axes, &out_s.dims.get(i)?.axes);
            if ia != oa {
                return None;
            }
            let k: i64 = ia.iter().map(|a| axis_size(a, &mesh)).product::<Option<i64>>()?.max(1);
            let (s_in, s_out) = (gin.shape[i] / k, gout.shape[i] / k);
            for (dev, o) in offsets[i].iter_mut().enumerate() {
                let (k_in, k_out) =
                    (shard_index(dev as i64, &mesh, ia), shard_index(dev as i64, &mesh, oa));
                *o = k_in * s_in * (interior[i] + 1) + low[i] - k_out * s_out;
            }
        }
        let lres = TensorTy::parse(m.ty(r)?)?;
        let lin = TensorTy::parse(m.ty(input)?)?;
        let expanded = |i: usize| (lin.shape[i] - 1) * (interior[i] + 1) + 1;
        let uniform: Vec<bool> = offsets.iter().map(|o| o.iter().all(|x| *x == o[0])).collect();
        let mut b = Builder::new(m);
        if uniform.iter().all(|u| *u) {
            let l: Vec<i64> = (0..rank).map(|i| offsets[i][0]).collect();
            let h: Vec<i64> = (0..rank).map(|i| lres.shape[i] - (expanded(i) + l[i])).collect();
            b.pad(input, value, [&l, &h, &interior], &lres, None);
            b.ops.last_mut()?.results = vec![r];
            return Some(b.ops);
        }
        let mut k_low = Vec::new();
        let mut k_high = Vec::new();
        let mut safe = Vec::new();
        for (i, dim_offsets) in offsets.iter().enumerate() {
            let max = *dim_offsets.iter().max()?;
            let min = *dim_offsets.iter().min()?;
            let lo = max.max(0);
            let hi = (lres.shape[i] - min - expanded(i)).max(0);
            k_low.push(lo);
            k_high.push(hi);
            safe.push(lo + expanded(i) + hi);
        }
        let padded =
            b.pad(input, value, [&k_low, &k_high, &interior], &lres.with_shape(safe), None);
        let id = self.device_id(&mut b);
        let index = TensorTy::scalar("i64");
        let mut starts = Vec::new();
        for i in 0..rank {
            let table: Vec<i64> = offsets[i].iter().map(|o| k_low[i] - o).collect();
            if uniform[i] {
                starts.push(b.splat(&index, &table[0].to_string()));
                continue;
            }
            let text: Vec<String> = table.iter().map(i64::to_string).collect();
            let table_ty = TensorTy { shape: vec![devices], elem: "i64".into() };
            let t = b.splat(&table_ty, &format!("[{}]", text.join(", ")));
            let one = TensorTy { shape: vec![1], elem: "i64".into() };
            let sizes = NamedAttr::new("slice_sizes", i64_array(&[1]));
            let sl = b.op("stablehlo.dynamic_slice", vec![t, id], vec![sizes], &one, None);
            starts.push(b.op("stablehlo.reshape", vec![sl], vec![], &index, None));
        }
        let mut operands = vec![padded];
        operands.extend(starts);
        let sizes = NamedAttr::new("slice_sizes", i64_array(&lres.shape));
        b.op("stablehlo.dynamic_slice", operands, vec![sizes], &lres, None);
        b.ops.last_mut()?.results = vec![r];
        Some(b.ops)
    }

    /// `StablehloIotaOpPattern`: a local iota, plus this device's offset along a
    /// sharded iota dimension.
    pub(super) fn iota(&self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let &r = op.results.first()?;
        let s = per_value_ref(op.attr("sdy.sharding"), 0)?.clone();
        if s.dims.iter().all(|d| d.axes.is_empty()) {
            return None;
        }
        let mesh = self.mesh(&s.mesh)?;
        let dim = crate::export::ops::inherent(op).int(&["dim", "iota_dimension"])?;
        let local = TensorTy::parse(m.ty(r)?)?;
        let axes = s.dims.get(dim as usize)?.axes.clone();
        let mut b = Builder::new(m);
        let iota_dim = Attr::Int { value: dim as i128, ty: "i64".into() };
        let props = vec![NamedAttr::new("iota_dimension", iota_dim)];
        let iota = b.op("stablehlo.iota", vec![], props, &local, None);
        if axes.is_empty() {
            b.ops.last_mut()?.results = vec![r];
            return Some(b.ops);
        }
        let size = *local.shape.get(dim as usize)?;
        let offset = self.dimension_offset(&mut b, &mesh, &axes, size);
        let elem = TensorTy::scalar(&local.elem);
        let offset = b.op("stablehlo.convert", vec![offset], vec![], &elem, None);
        let dims = NamedAttr::new("broadcast_dimensions", i64_array(&[]));
        let bcast = b.op("stablehlo.broadcast_in_dim", vec![offset], vec![dims], &local, None);
        b.op("stablehlo.add", vec![iota, bcast], vec![], &local, None);
        b.ops.last_mut()?.results = vec![r];
        Some(b.ops)
    }

    /// `ConstantOpPattern` for a sharded dense value: the global constant, sliced.
    pub(super) fn dense_constant(&self, m: &mut Module, op: &Op) -> Option<Vec<Op>> {
        let &r = op.results.first()?;
        let Some(Attr::Raw(value)) = op.prop("value") else { return None };
        let (body, global) = value.rsplit_once(" : ")?;
        if is_splat(value) || m.ty(r) == Some(global) {
            return None;
        }
        let s = per_value_ref(op.attr("sdy.sharding"), 0)?.clone();
        let mesh = self.mesh(&s.mesh)?;
        let local = TensorTy::parse(m.ty(r)?)?;
        let global_ty = TensorTy::parse(global)?;
        let axes: Vec<Vec<AxisRef>> = s.dims.iter().map(|d| d.axes.clone()).collect();
        let body = body.strip_prefix("dense<")?.strip_suffix('>')?.to_string();
        let mut b = Builder::new(m);
        let g = b.splat(&global_ty, &body);
        self.dynamic_slice_for_axes(&mut b, g, &mesh, &axes, &local, r);
        Some(b.ops)
    }
}
