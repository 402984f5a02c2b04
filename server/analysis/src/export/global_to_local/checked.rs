//! Ops converted as they are once their shardings are checked: a concatenation along
//! a replicated dimension, a slice that needs no communication, windowed ops on
//! pass-through dimensions, a convolution (whose group counts become local).

use super::*;
use crate::export::ops::{conv_with_props, inherent, slice_bounds};

/// The axes of dimension `d` of `s` (none without a sharding).
fn dim_axes(s: Option<&TensorSharding>, d: usize) -> &[AxisRef] {
    s.and_then(|s| s.dims.get(d)).map_or(&[], |x| &x.axes[..])
}

fn replicated(s: Option<&TensorSharding>) -> bool {
    s.is_none_or(|s| s.dims.iter().all(|d| d.axes.is_empty()))
}

/// `["x", "y":(1)2]` (`strippedAttrsString`).
fn axes_text(axes: &[AxisRef]) -> String {
    let items: Vec<String> = axes.iter().map(ToString::to_string).collect();
    format!("[{}]", items.join(", "))
}

impl Localizer<'_> {
    fn sharding(&self, v: Option<&ValueId>) -> Option<&TensorSharding> {
        self.sh.get(v?)
    }

    fn global_shape(&self, v: ValueId) -> Option<Vec<i64>> {
        Some(TensorTy::parse(self.global.get(&v)?)?.shape)
    }

    /// `StablehloConcatenateOpPattern`: the concatenated dimension must be replicated
    /// and every other dimension sharded as the result is.
    pub(super) fn concatenate(&self, op: &Op) -> Result<Option<Vec<Op>>, Failure> {
        let Some(dim) = inherent(op).int(&["dim", "dimension"]) else { return Ok(None) };
        let out = self.sharding(op.results.first());
        if !dim_axes(out, dim as usize).is_empty() {
            return Err(Failure::op(op, &messages::concat_on_sharded_dim(dim)));
        }
        for (index, v) in op.operands.iter().enumerate() {
            let s = self.sh.get(v);
            if replicated(s) {
                continue;
            }
            if !dim_axes(s, dim as usize).is_empty() {
                return Err(Failure::op(op, &messages::concat_operand_sharded(index, dim)));
            }
            let rank = s.map_or(0, |s| s.dims.len());
            for i in (0..rank).filter(|&i| i != dim as usize) {
                let (a, b) = (dim_axes(s, i), dim_axes(out, i));
                if a != b {
                    let msg = messages::mismatched_sharding_axes(i, &axes_text(a), &axes_text(b));
                    return Err(Failure::op(op, &msg));
                }
            }
        }
        Ok(None)
    }

    /// `StablehloSliceOpPattern`: sharded dimensions must be sliced whole, or so that
    /// each device keeps a prefix of its own shard.
    pub(super) fn slice(&self, m: &mut Module, op: &Op) -> Result<Option<Vec<Op>>, Failure> {
        let (Some(&input), Some(&r)) = (op.operands.first(), op.results.first()) else {
            return Ok(None);
        };
        let (s_in, s_out) = (self.sh.get(&input), self.sh.get(&r));
        if replicated(s_in) && replicated(s_out) {
            return Ok(None);
        }
        let (Some(bounds), Some(gin), Some(gout)) =
            (slice_bounds(op), self.global_shape(input), self.global_shape(r))
        else {
            return Ok(None);
        };
        let (Some(lin), Some(lout)) =
            (m.ty(input).and_then(TensorTy::parse), m.ty(r).and_then(TensorTy::parse))
        else {
            return Ok(None);
        };
        let mut local = Vec::new();
        for (i, &(start, limit, stride)) in bounds.iter().enumerate() {
            let (a, b) = (dim_axes(s_in, i), dim_axes(s_out, i));
            if a != b {
                let msg = messages::mismatched_sharding_axes(i, &axes_text(a), &axes_text(b));
                return Err(Failure::op(op, &msg));
            }
            if a.is_empty() {
                local.push((start, limit, stride));
                continue;
            }
            let full = gin.get(i).copied().unwrap_or(0);
            let shards =
                s_in.and_then(|s| Some(shard_count(s, i, &self.mesh(&s.mesh)?))).unwrap_or(1);
            let free = shards <= 1
                || (start == 0
                    && stride == 1
                    && ceil_div(full, shards)
                        == ceil_div(gout.get(i).copied().unwrap_or(0), shards));
            if start != 0 || (limit != full && !free) {
                return Err(Failure::op(op, &messages::slice_needs_communication(i)));
            }
            let keep = if limit == full { lin.shape.get(i) } else { lout.shape.get(i) };
            local.push((0, keep.copied().unwrap_or(0), stride));
        }
        let mut b = Builder::new(m);
        b.slice(input, &local, &lout, None);
        let last = b.ops.last_mut().map(|o| {
            o.results = vec![r];
            o.attrs = op.attrs.clone();
            o.origin = op.origin;
        });
        Ok(last.map(|_| b.ops))
    }

    /// `StablehloWindowedOpPattern`: every sharded dimension of the windowed operand
    /// must be a pass-through one (no padding; windows that do not overlap).
    pub(super) fn windowed(&self, op: &Op) -> Result<Option<Vec<Op>>, Failure> {
        let s = self.sharding(op.operands.first());
        let Some(s) = s.filter(|s| !replicated(Some(s))) else { return Ok(None) };
        let Some(mesh) = self.mesh(&s.mesh) else {
            return Err(Failure::op(op, messages::G2L_NO_MESH));
        };
        let a = inherent(op);
        let rank = s.dims.len();
        let padding = a.int_matrix("padding", rank);
        let window = a.ints(&["window_dimensions"]).unwrap_or_default();
        let strides = a.ints(&["window_strides"]).unwrap_or_default();
        for (d, dim) in s.dims.iter().enumerate() {
            let size: i64 = dim.axes.iter().filter_map(|x| axis_size(x, &mesh)).product();
            if dim.axes.is_empty() || size <= 1 {
                continue;
            }
            let padded = padding
                .as_ref()
                .is_some_and(|p| p.get(d).is_some_and(|row| row.iter().take(2).any(|&x| x != 0)));
            let (w, st) = (window.get(d).copied(), strides.get(d).copied());
            let apart = matches!((w, st), (Some(w), Some(st)) if st >= w);
            let pass = !padded
                && (strides.is_empty() || st == Some(1) || (!window.is_empty() && apart))
                && (window.is_empty() || w == Some(1) || (!strides.is_empty() && apart));
            if !pass {
                return Err(Failure::check(op, messages::not_pass_through(&op.name, d)));
            }
        }
        Ok(None)
    }

    /// `StablehloConvolutionOpPattern`: the feature and batch group counts divided by
    /// the shards of the kernel's output feature and the input's batch dimension.
    pub(super) fn convolution(&self, m: &mut Module, op: &Op) -> Result<Option<Vec<Op>>, Failure> {
        let (lhs, rhs, res) = (
            self.sharding(op.operands.first()),
            self.sharding(op.operands.get(1)),
            self.sharding(op.results.first()),
        );
        if replicated(lhs) && replicated(rhs) && replicated(res) {
            return Ok(None);
        }
        let Some(mesh) = [lhs, rhs, res].into_iter().flatten().find_map(|s| self.mesh(&s.mesh))
        else {
            return Err(Failure::op(op, messages::G2L_NO_MESH));
        };
        let a = inherent(op);
        let Some(d) = a.conv_dims() else { return Ok(None) };
        let local_count = |global: i64, axes: &[AxisRef]| -> i64 {
            if global <= 1 || axes.is_empty() {
                return global;
            }
            let size: i64 = axes.iter().filter_map(|x| axis_size(x, &mesh)).product();
            let divisor = global.min(size).max(1);
            global / divisor
        };
        // Written in the attribute dictionary of the custom form, or as properties.
        let count = |name: &str| match op.attr(name) {
            Some(Attr::Int { value, .. }) => *value as i64,
            _ => a.int(&[name]).unwrap_or(1),
        };
        let features = local_count(
            count("feature_group_count"),
            dim_axes(rhs, d.kernel_output_feature as usize),
        );
        let batches =
            local_count(count("batch_group_count"), dim_axes(lhs, d.input_batch as usize));
        // Recreated from its inherent attributes only: its sharding is dropped.
        let mut new = conv_with_props(op).unwrap_or_else(|| op.clone());
        new.attrs.retain(|x| x.name == "precision_config");
        for (name, n) in [("batch_group_count", batches), ("feature_group_count", features)] {
            new.set_prop(name, Attr::Int { value: n as i128, ty: "i64".into() });
        }
        retype(m, &mut new);
        Ok(Some(vec![new]))
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b.max(1)
}
