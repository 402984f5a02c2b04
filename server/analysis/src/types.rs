//! Tensor types as the printable IR keeps them (text): one reader and one printer of
//! `tensor<DxDx...xELEM[, ENCODING]>`, instead of one hand-written copy per pass.

/// A tensor type read from its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorText<'a> {
    /// The dimensions (`None`: `?`, or a size past `i64`, which MLIR rejects), or
    /// `None` for an unranked tensor (`tensor<*xf32>`).
    pub dims: Option<Vec<Option<i64>>>,
    /// What follows the dimensions: the element type, then any encoding.
    rest: &'a str,
}

impl<'a> TensorText<'a> {
    /// The element type, an encoding (`, #enc`) left out.
    pub fn elem(&self) -> &'a str {
        let mut depth = 0i32;
        for (i, c) in self.rest.char_indices() {
            match c {
                '<' | '(' | '[' | '{' => depth += 1,
                '>' | ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => return self.rest[..i].trim_end(),
                _ => {}
            }
        }
        self.rest.trim_end()
    }
    /// The shape when ranked and every dimension is static.
    pub fn static_dims(&self) -> Option<Vec<i64>> {
        self.dims.as_ref()?.iter().copied().collect()
    }
}

/// Reads `tensor<...>`; `None` for any other type (`f32`, `tuple<...>`, `!token`).
pub fn read_tensor(ty: &str) -> Option<TensorText<'_>> {
    let inner = ty.strip_prefix("tensor<")?.strip_suffix('>')?;
    if let Some(rest) = inner.strip_prefix("*x") {
        return Some(TensorText { dims: None, rest });
    }
    let mut dims = Vec::new();
    let mut rest = inner;
    while let Some((dim, after)) = first_dim(rest) {
        dims.push(dim);
        rest = after;
    }
    Some(TensorText { dims: Some(dims), rest })
}

/// The dimension `rest` starts with (`8x`: `Some(8)`, `?x` or past `i64`: `None`) and
/// the text after it; `None` when it starts with no dimension.
fn first_dim(rest: &str) -> Option<(Option<i64>, &str)> {
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest.as_bytes().get(digits) == Some(&b'x') {
        Some((rest[..digits].parse::<i64>().ok(), &rest[digits + 1..]))
    } else {
        rest.strip_prefix("?x").map(|after| (None, after))
    }
}

/// Whether `ty` is a rank-0 tensor (`tensor<f32>`), read no further than its first
/// dimension (no allocation).
pub fn is_rank0_tensor(ty: &str) -> bool {
    let Some(inner) = ty.strip_prefix("tensor<").and_then(|r| r.strip_suffix('>')) else {
        return false;
    };
    first_dim(inner).is_none() && !inner.starts_with("*x")
}

/// `tensor<8x16xf32>` of a static shape and an element type.
pub fn tensor_text(shape: &[i64], elem: &str) -> String {
    let mut t = String::with_capacity(10 + 4 * shape.len() + elem.len());
    t.push_str("tensor<");
    for d in shape {
        t.push_str(&d.to_string());
        t.push('x');
    }
    t.push_str(elem);
    t.push('>');
    t
}

/// The element type of a tensor type text (`f32` of `tensor<8xf32>`); other types as
/// they are.
pub fn element_type(ty: &str) -> &str {
    read_tensor(ty).map_or(ty, |t| t.elem())
}

/// A value's type as propagation sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueType {
    /// A ranked tensor; `None` for dynamic dimensions.
    Ranked(Vec<Option<i64>>),
    Tuple(String),
    /// Tokens, unranked tensors, anything else.
    Other(String),
}

impl ValueType {
    pub fn parse(s: &str) -> ValueType {
        let s = s.trim();
        if s.starts_with("tuple<") {
            return ValueType::Tuple(s.to_string());
        }
        match crate::types::read_tensor(s).and_then(|t| t.dims) {
            Some(dims) => ValueType::Ranked(dims),
            None => ValueType::Other(s.to_string()),
        }
    }
    /// Whether `s` parses as a rank-0 tensor, without building the type.
    pub fn is_scalar_text(s: &str) -> bool {
        crate::types::is_rank0_tensor(s.trim())
    }
    /// The static shape of a ranked tensor with no dynamic dimension.
    pub fn static_shape(&self) -> Option<Vec<i64>> {
        match self {
            ValueType::Ranked(d) => d.iter().copied().collect(),
            _ => None,
        }
    }
    pub fn rank(&self) -> usize {
        match self {
            ValueType::Ranked(d) => d.len(),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_shapes_element_types_and_encodings() {
        let t = read_tensor("tensor<8x?x4xf32>").unwrap();
        assert_eq!(t.dims, Some(vec![Some(8), None, Some(4)]));
        assert_eq!((t.elem(), t.static_dims()), ("f32", None));
        let t = read_tensor("tensor<2xcomplex<f32>, #sparse<a, b>>").unwrap();
        assert_eq!((t.elem(), t.static_dims()), ("complex<f32>", Some(vec![2])));
        assert_eq!(read_tensor("tensor<f32>").unwrap().static_dims(), Some(vec![]));
        let unranked = read_tensor("tensor<*xi8>").unwrap();
        assert_eq!((unranked.elem(), unranked.dims), ("i8", None));
        assert_eq!(read_tensor("tuple<tensor<f32>>"), None);
        // A size past i64 (MLIR rejects it) reads as unknown, not as a wrong number.
        assert_eq!(read_tensor("tensor<99999999999999999999xf32>").unwrap().dims, Some(vec![None]));
        assert_eq!(tensor_text(&[8, 16], "bf16"), "tensor<8x16xbf16>");
        assert!(is_rank0_tensor("tensor<f32>") && !is_rank0_tensor("tensor<1xf32>"));
        assert!(!is_rank0_tensor("tensor<*xf32>") && !is_rank0_tensor("tuple<>"));
    }

    #[test]
    fn element_types() {
        assert_eq!(element_type("tensor<8x?xi32>"), "i32");
        assert_eq!(element_type("tensor<f32>"), "f32");
        assert_eq!(
            element_type("tensor<3x!quant.uniform<i32:f32, 2.0:15>>"),
            "!quant.uniform<i32:f32, 2.0:15>"
        );
        assert_eq!(element_type("tensor<4xi1, #enc>"), "i1");
    }
}
