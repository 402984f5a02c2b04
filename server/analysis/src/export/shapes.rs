//! Tensor types as the export passes see them: a static shape and an element type,
//! read from and written back to MLIR's type text, and the shapes a sharding asks
//! for (padded to divisibility, per device).

use crate::propagation::editor::reshards::{axis_size, tensor_shape};
use crate::sharding::{Mesh, TensorSharding};

/// A ranked tensor type with a static shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorTy {
    pub shape: Vec<i64>,
    pub elem: String,
}

impl TensorTy {
    /// `tensor<8x16xf32>`; `None` for other types and dynamic shapes.
    pub fn parse(ty: &str) -> Option<TensorTy> {
        let (shape, elem) = tensor_shape(ty)?;
        Some(TensorTy { shape, elem: elem.to_string() })
    }
    pub fn with_shape(&self, shape: Vec<i64>) -> TensorTy {
        TensorTy { shape, elem: self.elem.clone() }
    }
    /// The same shape with another element type.
    pub fn with_elem(&self, elem: &str) -> TensorTy {
        TensorTy { shape: self.shape.clone(), elem: elem.to_string() }
    }
    pub fn scalar(elem: &str) -> TensorTy {
        TensorTy { shape: Vec::new(), elem: elem.to_string() }
    }
    pub fn text(&self) -> String {
        crate::types::tensor_text(&self.shape, &self.elem)
    }
}

/// The number of shards of dimension `d` of `s` (the product of its axis sizes).
pub fn shard_count(s: &TensorSharding, d: usize, mesh: &Mesh) -> i64 {
    s.dims
        .get(d)
        .map(|ds| {
            ds.axes.iter().map(|a| axis_size(a, mesh).unwrap_or(1)).fold(1, i64::saturating_mul)
        })
        .unwrap_or(1)
}

/// `getDivisiblePaddedType`: each dimension rounded up to a multiple of its shard
/// count.
pub fn padded_shape(shape: &[i64], s: &TensorSharding, mesh: &Mesh) -> Vec<i64> {
    if s.dims.len() != shape.len() {
        return shape.to_vec();
    }
    shape
        .iter()
        .enumerate()
        .map(|(d, &n)| {
            let k = shard_count(s, d, mesh);
            if k > 1 && n % k != 0 {
                n.saturating_add(k - n % k)
            } else {
                n
            }
        })
        .collect()
}
