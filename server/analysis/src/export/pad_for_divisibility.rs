//! `-sdy-pad-for-divisibility`: tensors whose sharding does not divide their shape are
//! padded to the next divisible shape, collectives work on the padded tensors, and
//! what gathers dimensions back is sliced to the original size again.
//!
//! Shardy runs this as a dialect conversion; here one walk over each function's ops
//! in order does the same: an op is rewritten when one of its values (as written) is
//! not divisible. A rewritten op's result keeps its value (so its uses stay), with the
//! padded type; when a trimming slice follows, the slice takes the value. Which values
//! are known to be padded with zeros is remembered (Shardy's `PaddingCache`), so a
//! contraction only masks padding it cannot vouch for.

use super::ops::{inherent, pad_amounts, retype, slice_bounds, Builder};
use super::shapes::{padded_shape, TensorTy};
use crate::ir::OpKind;
use crate::ir::{Attr, Module, NamedAttr, Op, Syntax, ValueId};
use crate::pass::{Pass, PassContext, PassFailed, PassOptions};
use crate::propagation::graph::{sharding_of, Graph};
use crate::propagation::pipeline::import::meshes;
use crate::rules::stablehlo_attrs::Value;
use crate::sharding::{Mesh, MeshRef, TensorSharding};
use rustc_hash::FxHashMap as HashMap;

pub struct PadForDivisibility;

pub fn create(_: &PassOptions) -> Box<dyn Pass> {
    Box::new(PadForDivisibility)
}

impl Pass for PadForDivisibility {
    fn flag(&self) -> &'static str {
        "sdy-pad-for-divisibility"
    }
    fn run(&mut self, cx: &mut PassContext<'_>) -> Result<(), PassFailed> {
        let g = Graph::build(cx.module);
        let sh: HashMap<ValueId, TensorSharding> = (0..cx.module.values.len() as ValueId)
            .filter_map(|v| Some((v, g.sharding(cx.module, v)?)))
            .collect();
        let ms = meshes(cx.module);
        let n = cx.module.body().len();
        for i in 0..n {
            if cx.module.body()[i].kind != OpKind::FuncFunc {
                continue;
            }
            let mut p = Padder {
                meshes: &ms,
                sh: sh.clone(),
                orig: HashMap::default(),
                zero: HashMap::default(),
            };
            if let Some((at, msg, generic)) = p.check_func_io(cx.module, &cx.module.body()[i]) {
                cx.error(at, msg, None);
                cx.error(
                    at,
                    format!("failed to legalize operation 'func.func' that was explicitly marked illegal: {generic}"),
                    None,
                );
                return Err(PassFailed);
            }
            let Some(body) = cx.module.body_mut() else { break };
            let mut regions = std::mem::take(&mut body[i].regions);
            let mut failure = None;
            for r in &mut regions {
                for b in &mut r.blocks {
                    let ops = std::mem::take(&mut b.ops);
                    match p.block(cx.module, ops) {
                        Ok(ops) => b.ops = ops,
                        Err(f) => failure = Some(f),
                    }
                }
            }
            if let Some(body) = cx.module.body_mut() {
                body[i].regions = regions;
            }
            if let Some((at, msg)) = failure {
                cx.error(at, msg, None);
                return Err(PassFailed);
            }
        }
        Ok(())
    }
}

/// Padding values known to be zero (Shardy's `PaddingValueKind::kZero`; the only kind
/// its patterns register).
type Known = HashMap<ValueId, ()>;

struct Padder<'a> {
    meshes: &'a HashMap<String, Mesh>,
    /// The sharding of every value (as written, and of the values made since).
    sh: HashMap<ValueId, TensorSharding>,
    /// The type a value had before it was padded.
    orig: HashMap<ValueId, String>,
    zero: Known,
}

/// An op that could not be rewritten: where, and Shardy's message.
type Failure = (u32, String);

impl Padder<'_> {
    fn mesh<'s>(&'s self, s: &'s TensorSharding) -> Option<&'s Mesh> {
        match &s.mesh {
            MeshRef::Symbol(n) => self.meshes.get(n),
            MeshRef::Inline(m) => Some(m),
        }
    }

    /// `getDivisiblePaddedType` of `ty` under `s` (the type itself when nothing pads).
    fn padded(&self, ty: &TensorTy, s: Option<&TensorSharding>) -> TensorTy {
        match s.and_then(|s| Some((s, self.mesh(s)?))) {
            Some((s, mesh)) => ty.with_shape(padded_shape(&ty.shape, s, mesh)),
            None => ty.clone(),
        }
    }

    fn ty(m: &Module, v: ValueId) -> Option<TensorTy> {
        TensorTy::parse(m.ty(v)?)
    }
    /// The type `v` had as written.
    fn orig_ty(&self, m: &Module, v: ValueId) -> Option<TensorTy> {
        match self.orig.get(&v) {
            Some(t) => TensorTy::parse(t),
            None => Self::ty(m, v),
        }
    }
    /// Whether `v` (as written) divides under its own sharding.
    fn legal(&self, m: &Module, v: ValueId) -> bool {
        self.orig_ty(m, v).is_none_or(|t| self.padded(&t, self.sh.get(&v)) == t)
    }
    fn legal_under(&self, m: &Module, v: ValueId, s: Option<&TensorSharding>) -> bool {
        self.orig_ty(m, v).is_none_or(|t| self.padded(&t, s) == t)
    }

    /// Gives value `v` the type `ty`, remembering the type it had.
    fn set_ty(&mut self, m: &mut Module, v: ValueId, ty: &TensorTy) {
        let text = ty.text();
        let Some(info) = m.values.get_mut(v as usize) else { return };
        if info.ty.as_deref() != Some(text.as_str()) {
            if let Some(old) = info.ty.replace(text) {
                self.orig.entry(v).or_insert(old);
            }
        }
    }

    /// `FuncOpPattern`: function inputs and outputs must divide.
    fn check_func_io(&self, m: &Module, f: &Op) -> Option<(u32, String, String)> {
        let info = f.func()?;
        let at = f.origin.unwrap_or(0);
        let bad = |ty: &str, s: Option<TensorSharding>| {
            TensorTy::parse(ty).is_some_and(|t| self.padded(&t, s.as_ref()) != t)
        };
        let _ = m;
        for (i, a) in info.args.iter().enumerate() {
            if bad(&a.ty, sharding_of(a.attr("sdy.sharding"))) {
                let msg = format!("'func.func' op argument #{i} has a non-divisible sharding. Shardy expects function IO to be divisible.");
                return Some((at, msg, generic_func_head(f)));
            }
        }
        for (i, r) in info.results.iter().enumerate() {
            if bad(&r.ty, sharding_of(r.attr("sdy.sharding"))) {
                let msg = format!("'func.func' op result #{i} has a non-divisible sharding. Shardy expects function IO to be divisible.");
                return Some((at, msg, generic_func_head(f)));
            }
        }
        None
    }

    fn block(&mut self, m: &mut Module, ops: Vec<Op>) -> Result<Vec<Op>, Failure> {
        let mut out = Vec::with_capacity(ops.len());
        for mut op in ops {
            let mut regions = std::mem::take(&mut op.regions);
            for r in &mut regions {
                for b in &mut r.blocks {
                    let inner = std::mem::take(&mut b.ops);
                    b.ops = self.block(m, inner)?;
                }
            }
            op.regions = regions;
            let mut b = Builder::new(m);
            self.op(&mut b, op)?;
            out.append(&mut b.ops);
        }
        Ok(out)
    }

    /// Rewrites `op` when it is illegal, adding it (or what replaces it) to `b`.
    fn op(&mut self, b: &mut Builder<'_>, op: Op) -> Result<(), Failure> {
        let m = &*b.m;
        let name = op.name.to_string();
        let values_legal = || op.operands.iter().chain(&op.results).all(|&v| self.legal(m, v));
        let out_sharding = sharding_of(op.prop("out_sharding"));
        let input = op.operands.first().copied();
        let legal = match name.as_str() {
            "sdy.all_slice" | "sdy.reduce_scatter" => {
                input.is_none_or(|v| self.legal_under(m, v, out_sharding.as_ref()))
            }
            "sdy.all_gather" => op.operands.iter().all(|&v| self.legal(m, v)),
            "sdy.all_to_all"
            | "sdy.all_reduce"
            | "sdy.sharded_to_unreduced"
            | "sdy.replicated_to_unreduced" => values_legal(),
            n if n.starts_with("stablehlo.") => values_legal(),
            _ => true,
        };
        if legal {
            b.ops.push(op);
            return Ok(());
        }
        match name.as_str() {
            "sdy.all_slice" | "sdy.reduce_scatter" => self.collective(b, op, false),
            "sdy.all_to_all" => self.collective(b, op, true),
            "sdy.all_gather" => self.all_gather(b, op),
            "stablehlo.slice" => self.slice(b, op),
            "stablehlo.pad" => self.pad(b, op),
            "stablehlo.dot_general" => self.dot_general(b, op),
            "stablehlo.convolution" => return self.convolution(b, op),
            _ => self.generic(b, op),
        }
        Ok(())
    }

    /// `padGenericOp`: the op on the padded operands, each result the larger of the
    /// type it infers and its own padded type.
    fn generic(&mut self, b: &mut Builder<'_>, mut op: Op) {
        let inferred = infer(b.m, &op);
        for (i, &r) in op.results.iter().enumerate() {
            let Some(t) = self.orig_ty(b.m, r) else { continue };
            let mut new = self.padded(&t, self.sh.get(&r));
            if let Some(inf) = inferred.get(i).and_then(|x| x.as_ref()) {
                if inf.len() == new.shape.len() {
                    for (d, &n) in inf.iter().enumerate() {
                        new.shape[d] = new.shape[d].max(n);
                    }
                }
            }
            self.set_ty(b.m, r, &new);
        }
        retype(b.m, &mut op);
        b.ops.push(op);
    }

    /// `createPaddedValue`: `v` padded at the high end to `to` with zeros.
    fn pad_value(
        &mut self,
        b: &mut Builder<'_>,
        v: ValueId,
        to: &TensorTy,
        known_zero: bool,
    ) -> ValueId {
        let Some(from) = Self::ty(b.m, v) else { return v };
        let cst = b.scalar(&to.elem, false);
        let high: Vec<i64> = to.shape.iter().zip(&from.shape).map(|(a, b)| a - b).collect();
        let zeros = vec![0; from.shape.len()];
        let s = self.sh.get(&v).cloned();
        let p = b.pad(v, cst, [&zeros, &high, &zeros], to, s.as_ref());
        if let Some(s) = s {
            self.sh.insert(p, s);
        }
        if known_zero {
            self.zero.insert(p, ());
        }
        p
    }

    /// `padCollectiveOp` for all_slice, reduce_scatter and all_to_all (which then
    /// trims its source dimensions back to the operand's size).
    fn collective(&mut self, b: &mut Builder<'_>, mut op: Op, all_to_all: bool) {
        let (Some(&input), Some(_)) = (op.operands.first(), op.results.first()) else {
            b.ops.push(op);
            return;
        };
        let out = sharding_of(op.prop("out_sharding"));
        let (Some(cur), Some(orig_in)) = (Self::ty(b.m, input), self.orig_ty(b.m, input)) else {
            b.ops.push(op);
            return;
        };
        let padded_in = self.padded(&cur, out.as_ref());
        let mut zero = self.zero.contains_key(&input);
        let known_before = zero;
        let padded_before = cur != orig_in;
        if padded_in != cur {
            // A fresh pad is zeros; padding more of an already padded value keeps its
            // kind only when that kind is known.
            zero = !padded_before || zero;
            op.operands[0] = self.pad_value(b, input, &padded_in, zero);
        }
        let trim_dims: Vec<usize> = match (all_to_all, op.prop("params")) {
            (true, Some(Attr::AllToAll(ps))) => ps.iter().map(|p| p.src_dim as usize).collect(),
            _ => Vec::new(),
        };
        let limits = self.trim_target(&padded_in, &orig_in, &trim_dims);
        self.push_trimmed(b, op, &padded_in, limits, out.as_ref(), zero, known_before);
    }

    /// Pushes collective `op`, whose result now has type `padded`: with `limits`, the
    /// op gets a fresh result and a slice to `limits` takes over the old one (`zero`:
    /// the op's result is zero-padded; `trim_zero`: so is the trimmed value).
    #[allow(clippy::too_many_arguments)]
    fn push_trimmed(
        &mut self,
        b: &mut Builder<'_>,
        mut op: Op,
        padded: &TensorTy,
        limits: Option<Vec<i64>>,
        out: Option<&TensorSharding>,
        zero: bool,
        trim_zero: bool,
    ) {
        let result = op.results[0];
        let Some(limits) = limits else {
            self.set_ty(b.m, result, padded);
            if zero {
                self.zero.insert(result, ());
            }
            b.ops.push(op);
            return;
        };
        let fresh = b.m.new_value(Some(padded.text()));
        op.results[0] = fresh;
        if let Some(s) = out {
            self.sh.insert(fresh, s.clone());
        }
        if zero {
            self.zero.insert(fresh, ());
        }
        b.ops.push(op);
        self.trim(b, fresh, result, padded, &limits, out, trim_zero);
    }

    /// The limits of a trimming slice of a `new`-typed value back to `orig` on
    /// `dims`, when one is needed.
    fn trim_target(&self, new: &TensorTy, orig: &TensorTy, dims: &[usize]) -> Option<Vec<i64>> {
        if new.shape.len() != orig.shape.len() {
            return None;
        }
        let mut needed = false;
        let limits = (0..new.shape.len())
            .map(|d| {
                if dims.contains(&d) && new.shape[d] > orig.shape[d] {
                    needed = true;
                    orig.shape[d]
                } else {
                    new.shape[d]
                }
            })
            .collect();
        needed.then_some(limits)
    }

    /// `trimOutputForDims`: a slice of `from` to `limits` that becomes value `to`.
    #[allow(clippy::too_many_arguments)]
    fn trim(
        &mut self,
        b: &mut Builder<'_>,
        from: ValueId,
        to: ValueId,
        ty: &TensorTy,
        limits: &[i64],
        s: Option<&TensorSharding>,
        zero: bool,
    ) {
        let bounds: Vec<(i64, i64, i64)> = limits.iter().map(|&l| (0, l, 1)).collect();
        let new_ty = ty.with_shape(limits.to_vec());
        let v = b.slice(from, &bounds, &new_ty, s);
        // The slice takes over `to`, so the uses of the original value stay.
        let made = b.ops.pop();
        if let Some(mut slice) = made {
            slice.results = vec![to];
            b.ops.push(slice);
        }
        let _ = v;
        self.set_ty(b.m, to, &new_ty);
        if let Some(s) = s {
            self.sh.insert(to, s.clone());
        }
        if zero {
            self.zero.insert(to, ());
        }
    }

    /// `AllGatherOpPattern`: gathered dimensions are trimmed back after the gather.
    fn all_gather(&mut self, b: &mut Builder<'_>, op: Op) {
        let (Some(&input), Some(&result)) = (op.operands.first(), op.results.first()) else {
            b.ops.push(op);
            return;
        };
        let out = sharding_of(op.prop("out_sharding"));
        let (Some(cur), Some(orig_res)) = (Self::ty(b.m, input), self.orig_ty(b.m, result)) else {
            b.ops.push(op);
            return;
        };
        let mut new = self.padded(&orig_res, out.as_ref());
        if cur.shape.len() == new.shape.len() {
            for (d, &n) in cur.shape.iter().enumerate() {
                new.shape[d] = new.shape[d].max(n);
            }
        }
        let zero = self.zero.contains_key(&input);
        let dims: Vec<usize> = match op.prop("gathering_axes") {
            Some(Attr::AxisLists(l)) => {
                l.iter().enumerate().filter(|(_, a)| !a.is_empty()).map(|(d, _)| d).collect()
            }
            _ => Vec::new(),
        };
        let limits = self.trim_target(&new, &orig_res, &dims);
        self.push_trimmed(b, op, &new, limits, out.as_ref(), zero, zero);
    }

    /// `StablehloSliceOpPattern`: a sharded slice takes more of its (padded) operand.
    fn slice(&mut self, b: &mut Builder<'_>, op: Op) {
        let Some(&r) = op.results.first() else { return b.ops.push(op) };
        let s = self.sh.get(&r).cloned();
        let (Some(res_ty), Some(bounds)) = (self.orig_ty(b.m, r), slice_bounds(&op)) else {
            return self.generic(b, op);
        };
        let padded = self.padded(&res_ty, s.as_ref());
        if padded == res_ty || bounds.len() != padded.shape.len() {
            return self.generic(b, op);
        }
        let bounds: Vec<(i64, i64, i64)> =
            bounds.iter().zip(&padded.shape).map(|(&(a, _, c), &n)| (a, a + n, c)).collect();
        b.slice(op.operands[0], &bounds, &padded, s.as_ref());
        if let Some(new) = b.ops.last_mut() {
            new.results = vec![r];
        }
        self.set_ty(b.m, r, &padded);
    }

    /// `StablehloPadOpPattern`: the high edge padding makes up the padded result size;
    /// where that is less than written, the input's own padding must hold the pad
    /// value.
    fn pad(&mut self, b: &mut Builder<'_>, op: Op) {
        let (Some(&r), &[input, value]) = (op.results.first(), &op.operands[..]) else {
            return b.ops.push(op);
        };
        let Some([low, high, interior]) = pad_amounts(&op) else { return b.ops.push(op) };
        let (Some(cur_in), Some(orig_in), Some(res_ty)) =
            (Self::ty(b.m, input), self.orig_ty(b.m, input), self.orig_ty(b.m, r))
        else {
            return b.ops.push(op);
        };
        let s = self.sh.get(&r).cloned();
        let padded = self.padded(&res_ty, s.as_ref());
        let rank = cur_in.shape.len();
        if [&low, &high, &interior].iter().any(|v| v.len() != rank) || padded.shape.len() != rank {
            return b.ops.push(op);
        }
        let mut reduced = false;
        let new_high: Vec<i64> = (0..rank)
            .map(|d| {
                let n = cur_in.shape[d];
                let h = padded.shape[d] - n - low[d] - (n - 1).max(0) * interior[d];
                reduced |= h < high[d];
                h
            })
            .collect();
        let input = match reduced {
            true => self.ensure_padding(b, input, &orig_in, value, None),
            false => input,
        };
        b.pad(input, value, [&low, &new_high, &interior], &padded, s.as_ref());
        if let Some(new) = b.ops.last_mut() {
            new.results = vec![r];
        }
        self.set_ty(b.m, r, &padded);
    }

    /// `ensurePaddingWithValue`: elements of `v` beyond `orig` (on `dims`, or every
    /// padded dimension) are replaced by the scalar `pad`.
    fn ensure_padding(
        &mut self,
        b: &mut Builder<'_>,
        v: ValueId,
        orig: &TensorTy,
        pad: ValueId,
        dims: Option<&[i64]>,
    ) -> ValueId {
        let Some(cur) = Self::ty(b.m, v) else { return v };
        if cur == *orig || cur.shape.len() != orig.shape.len() {
            return v;
        }
        let s = self.sh.get(&v).cloned();
        let s = s.as_ref();
        let i32s = cur.with_elem("i32");
        let mut mask: Option<ValueId> = None;
        for (d, &n) in orig.shape.iter().enumerate() {
            if n == cur.shape[d] || dims.is_some_and(|ds| !ds.contains(&(d as i64))) {
                continue;
            }
            let iota_dim = Attr::Int { value: d as i128, ty: "i64".into() };
            let iota = b.op(
                "stablehlo.iota",
                vec![],
                vec![NamedAttr::new("iota_dimension", iota_dim)],
                &i32s,
                s,
            );
            let limit = b.splat(&TensorTy::scalar("i32"), &n.to_string());
            let bcast = broadcast(b, limit, &i32s, s);
            let dir = Attr::Raw("#stablehlo<comparison_direction LT>".into());
            let props = vec![NamedAttr::new("comparison_direction", dir)];
            let lt = b.op("stablehlo.compare", vec![iota, bcast], props, &cur.with_elem("i1"), s);
            mask = Some(match mask {
                Some(prev) => {
                    b.op("stablehlo.and", vec![prev, lt], vec![], &cur.with_elem("i1"), s)
                }
                None => lt,
            });
        }
        let Some(mask) = mask else { return v };
        let fill = broadcast(b, pad, &cur, s);
        let out = b.op("stablehlo.select", vec![mask, v, fill], vec![], &cur, s);
        if let Some(s) = s {
            self.sh.insert(out, s.clone());
        }
        out
    }

    /// `ensurePaddingWithKind` with zeros.
    fn ensure_zero(
        &mut self,
        b: &mut Builder<'_>,
        v: ValueId,
        orig: &TensorTy,
        dims: Option<&[i64]>,
    ) -> ValueId {
        let Some(cur) = Self::ty(b.m, v) else { return v };
        if cur == *orig || self.zero.contains_key(&v) {
            return v;
        }
        let zero = b.scalar(&cur.elem, false);
        let out = self.ensure_padding(b, v, orig, zero, dims);
        if out != v && dims.is_none() {
            self.zero.insert(out, ());
        }
        out
    }

    /// `StablehloDotGeneralOpPattern`: contracting dimensions padded with zeros.
    fn dot_general(&mut self, b: &mut Builder<'_>, mut op: Op) {
        let Some(dims) = inherent(&op).dot_dims() else { return self.generic(b, op) };
        for (k, contracting) in [(0, &dims.lhs_contracting), (1, &dims.rhs_contracting)] {
            let Some(&v) = op.operands.get(k) else { continue };
            let Some(orig) = self.orig_operand_ty(b.m, &op, k) else { continue };
            op.operands[k] = self.ensure_zero(b, v, &orig, Some(contracting));
        }
        self.generic(b, op)
    }

    /// The written type of operand `k` of `op` (its value may have been padded).
    fn orig_operand_ty(&self, m: &Module, op: &Op, k: usize) -> Option<TensorTy> {
        self.orig_ty(m, *op.operands.get(k)?)
    }

    /// `StablehloConvolutionOpPattern`: the contracted dimensions (input feature,
    /// spatial) padded with zeros, the result sliced back on its spatial dimensions.
    fn convolution(&mut self, b: &mut Builder<'_>, mut op: Op) -> Result<(), Failure> {
        let attrs = inherent(&op);
        let (Some(dims), Some(&r)) = (attrs.conv_dims(), op.results.first()) else {
            self.generic(b, op);
            return Ok(());
        };
        let lhs_dims: Vec<i64> =
            std::iter::once(dims.input_feature).chain(dims.input_spatial.iter().copied()).collect();
        let rhs_dims: Vec<i64> = std::iter::once(dims.kernel_input_feature)
            .chain(dims.kernel_spatial.iter().copied())
            .collect();
        for (k, enforce) in [(0, &lhs_dims), (1, &rhs_dims)] {
            let Some(&v) = op.operands.get(k) else { continue };
            let Some(orig) = self.orig_operand_ty(b.m, &op, k) else { continue };
            op.operands[k] = self.ensure_zero(b, v, &orig, Some(enforce));
        }
        let (Some(lhs), Some(rhs), Some(res_ty)) = (
            op.operands.first().and_then(|&v| Self::ty(b.m, v)),
            op.operands.get(1).and_then(|&v| Self::ty(b.m, v)),
            self.orig_ty(b.m, r),
        ) else {
            b.ops.push(op);
            return Ok(());
        };
        let Some(shape) = conv_shape(&attrs, &dims, &lhs.shape, &rhs.shape, res_ty.shape.len())
        else {
            b.ops.push(op);
            return Ok(());
        };
        let s = self.sh.get(&r).cloned();
        let padded = self.padded(&res_ty, s.as_ref());
        for &d in &dims.output_spatial {
            let d = d as usize;
            if shape.get(d) < padded.shape.get(d) {
                let at = op.origin.unwrap_or(0);
                return Err((at, "failed to legalize operation 'stablehlo.convolution'".into()));
            }
        }
        let inferred = res_ty.with_shape(shape);
        // Shardy recreates the convolution: it prints in its canonical form.
        if let Some(new) = super::ops::conv_with_props(&op) {
            op = new;
        }
        let spatial: Vec<usize> = dims.output_spatial.iter().map(|&d| d as usize).collect();
        match self.trim_target(&inferred, &padded, &spatial) {
            Some(limits) => {
                let fresh = b.m.new_value(Some(inferred.text()));
                op.results[0] = fresh;
                retype(b.m, &mut op);
                if let Some(s) = &s {
                    self.sh.insert(fresh, s.clone());
                }
                b.ops.push(op);
                self.trim(b, fresh, r, &inferred, &limits, s.as_ref(), true);
            }
            None => {
                self.set_ty(b.m, r, &inferred);
                retype(b.m, &mut op);
                b.ops.push(op);
            }
        }
        Ok(())
    }
}

/// `stablehlo.broadcast_in_dim` of a scalar to `ty`.
fn broadcast(
    b: &mut Builder<'_>,
    v: ValueId,
    ty: &TensorTy,
    s: Option<&TensorSharding>,
) -> ValueId {
    let dims = NamedAttr::new("broadcast_dimensions", super::ops::i64_array(&[]));
    b.op("stablehlo.broadcast_in_dim", vec![v], vec![dims], ty, s)
}

/// The result shapes an op infers from its operands' current types, where this knows
/// the op (`InferTypeOpInterface`).
fn infer(m: &Module, op: &Op) -> Vec<Option<Vec<i64>>> {
    let shape =
        |k: usize| op.operands.get(k).and_then(|&v| TensorTy::parse(m.ty(v)?)).map(|t| t.shape);
    let name = op.name.as_str();
    let one = match name {
        "stablehlo.select" => shape(1),
        "stablehlo.dot_general" => {
            let (Some(l), Some(r), Some(d)) = (shape(0), shape(1), inherent(op).dot_dims()) else {
                return vec![None];
            };
            let pick = |s: &[i64], ds: &[i64]| {
                ds.iter().filter_map(|&i| s.get(i as usize).copied()).collect::<Vec<_>>()
            };
            let free = |s: &[i64], skip: &[&Vec<i64>]| {
                (0..s.len() as i64)
                    .filter(|i| skip.iter().all(|v| !v.contains(i)))
                    .map(|i| s[i as usize])
                    .collect::<Vec<_>>()
            };
            let mut out = pick(&l, &d.lhs_batching);
            out.extend(free(&l, &[&d.lhs_batching, &d.lhs_contracting]));
            out.extend(free(&r, &[&d.rhs_batching, &d.rhs_contracting]));
            Some(out)
        }
        "sdy.all_reduce" | "sdy.sharded_to_unreduced" | "sdy.replicated_to_unreduced" => shape(0),
        _ if op.kind.has_elementwise_form() => shape(0),
        _ => None,
    };
    let mut out = vec![one];
    out.resize(op.results.len().max(1), None);
    out
}

/// The result shape of a convolution on operands of these shapes.
fn conv_shape(
    a: &crate::rules::InherentAttrs,
    d: &crate::rules::stablehlo_attrs::ConvDims,
    lhs: &[i64],
    rhs: &[i64],
    rank: usize,
) -> Option<Vec<i64>> {
    let n = d.input_spatial.len();
    let window = a.get("window");
    let list = |custom: &str, generic: &str, default: i64| -> Option<Vec<i64>> {
        let v = window.and_then(|w| w.field(custom)).or_else(|| a.get(generic));
        match v {
            None => Some(vec![default; n]),
            Some(v) => v.as_ints().or_else(|| match v {
                Value::List(items) => items.iter().map(|x| x.as_bool().map(i64::from)).collect(),
                _ => None,
            }),
        }
    };
    let strides = list("stride", "window_strides", 1)?;
    let lhs_dil = list("lhs_dilate", "lhs_dilation", 1)?;
    let rhs_dil = list("rhs_dilate", "rhs_dilation", 1)?;
    let pads: Vec<(i64, i64)> =
        match window.and_then(|w| w.field("pad")).or_else(|| a.get("padding")) {
            None => vec![(0, 0); n],
            Some(Value::List(rows)) => rows
                .iter()
                .map(|r| r.as_ints().and_then(|p| (p.len() == 2).then(|| (p[0], p[1]))))
                .collect::<Option<_>>()?,
            Some(Value::Int(i)) => vec![(*i, *i); n],
            Some(_) => return None,
        };
    let batch_groups = a.int(&["batch_group_count"]).unwrap_or(1).max(1);
    let mut out = vec![0; rank];
    *out.get_mut(d.output_batch as usize)? = lhs.get(d.input_batch as usize)? / batch_groups;
    *out.get_mut(d.output_feature as usize)? = *rhs.get(d.kernel_output_feature as usize)?;
    for i in 0..n {
        let x = *lhs.get(*d.input_spatial.get(i)? as usize)?;
        let k = *rhs.get(*d.kernel_spatial.get(i)? as usize)?;
        let dilated = if x == 0 { 0 } else { (x - 1) * lhs_dil.get(i)? + 1 };
        let (lo, hi) = *pads.get(i)?;
        let padded = dilated + lo + hi;
        let kernel = if k == 0 { 0 } else { (k - 1) * rhs_dil.get(i)? + 1 };
        let stride = (*strides.get(i)?).max(1);
        *out.get_mut(*d.output_spatial.get(i)? as usize)? =
            if padded < kernel { 0 } else { (padded - kernel) / stride + 1 };
    }
    Some(out)
}

/// A function as MLIR's generic printer shows it in a diagnostic (`{...}` body).
fn generic_func_head(f: &Op) -> String {
    let Some(info) = f.func() else { return String::new() };
    let dicts = |slots: &[crate::ir::FuncSlot]| {
        let items: Vec<String> = slots
            .iter()
            .map(|s| {
                let mut d = String::new();
                crate::ir::attr::write_dict(&mut d, &s.attrs);
                if d.is_empty() {
                    "{}".to_string()
                } else {
                    d
                }
            })
            .collect();
        format!("[{}]", items.join(", "))
    };
    let mut props = Vec::new();
    if info.args.iter().any(|a| !a.attrs.is_empty()) {
        props.push(format!("arg_attrs = {}", dicts(&info.args)));
    }
    let ins: Vec<&str> = info.args.iter().map(|a| a.ty.as_str()).collect();
    let outs: Vec<&str> = info.results.iter().map(|a| a.ty.as_str()).collect();
    let out = if outs.len() == 1 { outs[0].to_string() } else { format!("({})", outs.join(", ")) };
    props.push(format!("function_type = ({}) -> {out}", ins.join(", ")));
    if info.results.iter().any(|a| !a.attrs.is_empty()) {
        props.push(format!("res_attrs = {}", dicts(&info.results)));
    }
    props.push(format!("sym_name = \"{}\"", info.sym));
    if let Some(v) = &info.visibility {
        props.push(format!("sym_visibility = \"{v}\""));
    }
    let _ = Syntax::Generic;
    format!("\"func.func\"() <{{{}}}> ({{...}}) : () -> ()", props.join(", "))
}
