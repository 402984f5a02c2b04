//! The custom forms MLIR prints for StableHLO ops written in the generic form (the ops
//! whose form is a fixed arrangement of operands, a few inherent attributes and types,
//! plus convolution, reduce, while, rng_bit_generator and some CHLO ops; elementwise ops are in `printer.rs`; other ops with
//! regions or structured dimension numbers keep the generic form).

use super::attr::Attr;
use super::ir::{Op, ValueId};

/// The integers of an `array<i64: ...>` property.
pub fn i64_array(a: Option<&Attr>) -> Option<Vec<i64>> {
    let Some(Attr::Raw(text)) = a else { return None };
    let inner = text.strip_prefix("array<i64")?.strip_suffix('>')?;
    let Some(list) = inner.strip_prefix(':') else {
        return inner.is_empty().then(Vec::new);
    };
    list.split(',').map(|x| x.trim().parse().ok()).collect()
}

/// The value of an integer property.
pub fn int(a: Option<&Attr>) -> Option<i128> {
    match a {
        Some(Attr::Int { value, .. }) => Some(*value),
        _ => None,
    }
}

/// The keyword of an enum property `#stablehlo<kind KEYWORD>`.
pub fn enum_keyword<'a>(a: Option<&'a Attr>, kind: &str) -> Option<&'a str> {
    let Some(Attr::Raw(text)) = a else { return None };
    let rest = text.strip_prefix("#stablehlo<")?.strip_suffix('>')?;
    rest.strip_prefix(kind)?.strip_prefix(' ')
}

/// The booleans of an `array<i1: ...>` property.
pub fn bool_array(a: Option<&Attr>) -> Option<Vec<bool>> {
    let Some(Attr::Raw(text)) = a else { return None };
    let inner = text.strip_prefix("array<i1")?.strip_suffix('>')?;
    let Some(list) = inner.strip_prefix(':') else {
        return inner.is_empty().then(Vec::new);
    };
    list.split(',').map(|x| x.trim().parse().ok()).collect()
}

/// The `(low, high)` pairs of a convolution's `padding = dense<...> : tensor<Nx2xi64>`.
pub fn padding_pairs(a: Option<&Attr>) -> Option<Vec<(i64, i64)>> {
    let Some(Attr::Raw(text)) = a else { return None };
    let (dense, ty) = text.strip_prefix("dense<")?.rsplit_once("> : tensor<")?;
    let rows: usize = ty.strip_suffix("x2xi64>")?.parse().ok()?;
    let values: Vec<i64> = dense
        .split(['[', ']', ','])
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let flat = match values.len() {
        1 => vec![values[0]; rows * 2],
        n if n == rows * 2 => values,
        _ => return None,
    };
    Some(flat.chunks(2).map(|p| (p[0], p[1])).collect())
}

/// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` of a `#stablehlo.conv<...>` property in
/// that compact form.
pub fn conv_dims(a: Option<&Attr>) -> Option<&str> {
    let Some(Attr::Raw(text)) = a else { return None };
    let inner = text.strip_prefix("#stablehlo.conv<")?.strip_suffix('>')?;
    inner.starts_with('[').then_some(inner)
}

/// The window attributes of a convolution, in the order its custom form prints them.
pub const CONV_WINDOW: [(&str, &str); 5] = [
    ("window_strides", "stride"),
    ("padding", "pad"),
    ("lhs_dilation", "lhs_dilate"),
    ("rhs_dilation", "rhs_dilate"),
    ("window_reversal", "reverse"),
];

/// `stride = [2, 1], pad = [[0, 1], [1, 0]], reverse = [true, false]`: the window
/// attributes the convolution has.
pub fn conv_window(op: &Op) -> String {
    let mut parts = Vec::new();
    for (prop, word) in CONV_WINDOW {
        let a = op.prop(prop);
        let items: Option<Vec<String>> = match prop {
            "padding" => {
                padding_pairs(a).map(|ps| ps.iter().map(|(l, h)| format!("[{l}, {h}]")).collect())
            }
            "window_reversal" => bool_array(a).map(|bs| bs.iter().map(bool::to_string).collect()),
            _ => i64_array(a).map(|xs| xs.iter().map(i64::to_string).collect()),
        };
        if let Some(items) = items {
            parts.push(format!("{word} = [{}]", items.join(", ")));
        }
    }
    parts.join(", ")
}

/// The StableHLO ops a reduce prints compactly (`applies NAME`): binary, commutative.
const COMMUTATIVE: [&str; 7] = [
    "stablehlo.add",
    "stablehlo.multiply",
    "stablehlo.maximum",
    "stablehlo.minimum",
    "stablehlo.and",
    "stablehlo.or",
    "stablehlo.xor",
];

/// The op a `stablehlo.reduce` applies, when its body is just that op on the block
/// arguments (in order), of the element type of the first input, whose result is
/// returned: then MLIR prints `applies NAME` instead of the body.
pub fn compact_reducer<'a>(op: &'a Op, ty: &dyn Fn(ValueId) -> String) -> Option<&'a str> {
    let block = op.regions.first()?.blocks.first()?;
    let [inner, ret] = &block.ops[..] else { return None };
    let same_type =
        inner.operands.iter().chain(&inner.results).all(|&v| ty(v) == ty(inner.results[0]));
    let first = ty(*op.operands.first()?);
    let elem = element_type(&first)?;
    let fits = COMMUTATIVE.contains(&inner.name.as_str())
        && inner.regions.is_empty()
        && inner.operands.len() == 2
        && inner.results.len() == 1
        && same_type
        && ty(inner.operands[0]) == format!("tensor<{elem}>")
        && inner.operands == block.args
        && ret.name.rsplit_once('.').is_some_and(|(_, n)| n == "return")
        && ret.operands == inner.results;
    fits.then_some(inner.name.as_str())
}

/// `f32` of `tensor<8x?xf32>` (an encoding left out).
fn element_type(ty: &str) -> Option<&str> {
    crate::types::read_tensor(ty).map(|t| t.elem())
}

/// The unary elementwise CHLO ops (`chlo.square %x : T -> R`).
pub const CHLO_UNARY: [&str; 21] = [
    "chlo._asin_acos_kernel",
    "chlo.acos",
    "chlo.acosh",
    "chlo.asin",
    "chlo.asinh",
    "chlo.atan",
    "chlo.atanh",
    "chlo.bessel_i1e",
    "chlo.conj",
    "chlo.cosh",
    "chlo.sinh",
    "chlo.tan",
    "chlo.digamma",
    "chlo.erf",
    "chlo.erf_inv",
    "chlo.erfc",
    "chlo.is_inf",
    "chlo.is_neg_inf",
    "chlo.is_pos_inf",
    "chlo.lgamma",
    "chlo.square",
];

/// `[1, 0]`
pub fn list(xs: &[i64]) -> String {
    let items: Vec<String> = xs.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The dimension lists of a `#stablehlo.dot<...>` property by field name (absent fields
/// are empty); `None` when it has another field or is not such an attribute.
pub fn dot_dims(a: Option<&Attr>) -> Option<[Vec<i64>; 4]> {
    const FIELDS: [&str; 4] = [
        "lhs_batching_dimensions",
        "rhs_batching_dimensions",
        "lhs_contracting_dimensions",
        "rhs_contracting_dimensions",
    ];
    let Some(Attr::Raw(text)) = a else { return None };
    let mut rest = text.strip_prefix("#stablehlo.dot<")?.strip_suffix('>')?.trim();
    let mut dims: [Vec<i64>; 4] = Default::default();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let i = FIELDS.iter().position(|f| *f == key.trim())?;
        let after = after.trim_start().strip_prefix('[')?;
        let (items, tail) = after.split_once(']')?;
        dims[i] = if items.trim().is_empty() {
            Vec::new()
        } else {
            items.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?
        };
        rest = tail.trim_start().strip_prefix(',').unwrap_or(tail).trim_start();
    }
    Some(dims)
}

/// `[DEFAULT, HIGHEST]` of a `precision_config` property (`None`: unreadable).
pub fn precisions(a: &Attr) -> Option<String> {
    let Attr::Array(items) = a else { return None };
    let words: Option<Vec<&str>> =
        items.iter().map(|p| enum_keyword(Some(p), "precision")).collect();
    Some(format!("[{}]", words?.join(", ")))
}

/// The fields of the dimension-number attributes, in the order StableHLO prints them.
const STRUCTS: &[(&str, &[&str])] = &[
    (
        "#stablehlo.gather<",
        &[
            "offset_dims",
            "collapsed_slice_dims",
            "operand_batching_dims",
            "start_indices_batching_dims",
            "start_index_map",
            "index_vector_dim",
        ],
    ),
    (
        "#stablehlo.scatter<",
        &[
            "update_window_dims",
            "inserted_window_dims",
            "input_batching_dims",
            "scatter_indices_batching_dims",
            "scatter_dims_to_operand_dims",
            "index_vector_dim",
        ],
    ),
    (
        "#stablehlo.dot<",
        &[
            "lhs_batching_dimensions",
            "rhs_batching_dimensions",
            "lhs_contracting_dimensions",
            "rhs_contracting_dimensions",
        ],
    ),
];

/// The fields of the dimension-number attribute that starts with `prefix`
/// (`#stablehlo.gather<`), in the order StableHLO prints them.
pub fn struct_field_order(prefix: &str) -> &'static [&'static str] {
    STRUCTS.iter().find(|(p, _)| *p == prefix).map_or(&[], |(_, order)| order)
}

/// A `#stablehlo.gather/scatter/dot<...>` attribute as StableHLO prints it: fields in
/// their order, empty lists and a zero `index_vector_dim` left out. Any other text, or
/// one with a field this does not know, is returned as it is.
pub fn canonical_struct(text: String) -> String {
    let Some((prefix, order)) = STRUCTS.iter().find(|(p, _)| text.starts_with(p)) else {
        return text;
    };
    let Some(fields) = struct_fields(&text[prefix.len()..]) else { return text };
    if fields.iter().any(|(k, _)| !order.contains(k)) {
        return text;
    }
    let kept: Vec<String> = order
        .iter()
        .filter_map(|name| fields.iter().find(|(k, _)| k == name))
        .filter(|(k, v)| !(*v == "[]" || (*k == "index_vector_dim" && *v == "0")))
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    format!("{prefix}{}>", kept.join(", "))
}

/// The top-level `name = value` fields (values are lists or integers) of a
/// dimension-number attribute's body, after its `#stablehlo.gather<` and up to its `>`.
pub fn struct_fields(body: &str) -> Option<Vec<(&str, &str)>> {
    let body = body.strip_suffix('>')?;
    let mut fields: Vec<(&str, &str)> = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in body.char_indices().chain([(body.len(), ',')]) {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                let field = body[start..i].trim();
                if !field.is_empty() {
                    let (k, v) = field.split_once('=')?;
                    fields.push((k.trim(), v.trim()));
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    Some(fields)
}

/// Whether the generic-form `op` can be printed in its custom form: it has exactly the
/// properties that form shows, readable.
pub fn custom_printable(op: &Op) -> bool {
    let props: Vec<&str> = op.props.iter().map(|p| p.name.as_str()).collect();
    let only = |names: &[&str]| props.iter().all(|p| names.contains(p));
    let arr = |n: &str| i64_array(op.prop(n)).is_some();
    let n = op.operands.len();
    if op.name == "stablehlo.reduce" {
        let block_args = op.regions.first().and_then(|r| r.blocks.first()).map(|b| b.args.len());
        return n >= 2
            && n.is_multiple_of(2)
            && op.results.len() == n / 2
            && op.regions.len() == 1
            && block_args == Some(n)
            && only(&["dimensions"])
            && arr("dimensions");
    }
    if op.name == "stablehlo.while" {
        let args =
            |i: usize| op.regions.get(i).and_then(|r| r.blocks.first()).map(|b| b.args.len());
        return op.regions.len() == 2
            && args(0) == Some(n)
            && args(1) == Some(n)
            && op.results.len() == n
            && props.is_empty();
    }
    if op.name == "stablehlo.rng_bit_generator" {
        return n == 1
            && op.results.len() == 2
            && op.regions.is_empty()
            && props.len() == 1
            && enum_keyword(op.prop("rng_algorithm"), "rng_algorithm").is_some();
    }
    if op.name == "chlo.top_k" {
        return n == 1
            && op.results.len() == 2
            && op.regions.is_empty()
            && only(&["k", "is_stable"])
            && int(op.prop("k")).is_some()
            && op.prop("is_stable").is_none_or(|b| matches!(b, Attr::Bool(_)));
    }
    let one_result = op.results.len() == 1 && op.regions.is_empty();
    if !one_result {
        return false;
    }
    match op.name.as_str() {
        "stablehlo.transpose" => n == 1 && only(&["permutation"]) && arr("permutation"),
        "stablehlo.broadcast_in_dim" => {
            n == 1 && only(&["broadcast_dimensions"]) && arr("broadcast_dimensions")
        }
        "stablehlo.reshape" => n == 1 && props.is_empty(),
        "stablehlo.concatenate" => {
            n >= 1 && only(&["dimension"]) && int(op.prop("dimension")).is_some()
        }
        "stablehlo.dynamic_update_slice" => n >= 2 && props.is_empty(),
        "stablehlo.reverse" => n == 1 && only(&["dimensions"]) && arr("dimensions"),
        "stablehlo.iota" => {
            n == 0 && only(&["iota_dimension"]) && int(op.prop("iota_dimension")).is_some()
        }
        "stablehlo.select" => n == 3 && props.is_empty(),
        "stablehlo.clamp" => n == 3 && props.is_empty(),
        "stablehlo.pad" => {
            let keys = ["edge_padding_low", "edge_padding_high", "interior_padding"];
            n == 2 && props.len() == 3 && only(&keys) && keys.iter().all(|k| arr(k))
        }
        "stablehlo.dynamic_slice" => n >= 1 && only(&["slice_sizes"]) && arr("slice_sizes"),
        "stablehlo.slice" => {
            let keys = ["start_indices", "limit_indices", "strides"];
            let lens: Vec<Option<usize>> =
                keys.iter().map(|k| i64_array(op.prop(k)).map(|v| v.len())).collect();
            n == 1
                && props.len() == 3
                && only(&keys)
                && lens[0].is_some()
                && lens.iter().all(|l| *l == lens[0])
        }
        "stablehlo.dot_general" => {
            n == 2
                && only(&["dot_dimension_numbers", "precision_config"])
                && dot_dims(op.prop("dot_dimension_numbers")).is_some()
                && op.prop("precision_config").is_none_or(|p| precisions(p).is_some())
        }
        "stablehlo.dot" => {
            n == 2
                && only(&["precision_config"])
                && op.prop("precision_config").is_none_or(|p| precisions(p).is_some())
        }
        "stablehlo.tuple" => props.is_empty(),
        "stablehlo.partition_id" | "stablehlo.replica_id" => n == 0 && props.is_empty(),
        name if CHLO_UNARY.contains(&name) => n == 1 && props.is_empty(),
        "chlo.next_after" | "chlo.polygamma" | "chlo.zeta" => n == 2 && props.is_empty(),
        "stablehlo.cholesky" => {
            n == 1
                && only(&["lower"])
                && op.prop("lower").is_none_or(|l| matches!(l, Attr::Bool(_)))
        }
        "stablehlo.fft" => {
            n == 1
                && props.len() == 2
                && enum_keyword(op.prop("fft_type"), "fft_type").is_some()
                && arr("fft_length")
        }
        "stablehlo.convolution" => {
            let window_readable = CONV_WINDOW.iter().all(|(p, _)| match *p {
                "padding" => op.prop(p).is_none_or(|a| padding_pairs(Some(a)).is_some()),
                "window_reversal" => op.prop(p).is_none_or(|a| bool_array(Some(a)).is_some()),
                _ => op.prop(p).is_none_or(|a| i64_array(Some(a)).is_some()),
            });
            n == 2 && conv_dims(op.prop("dimension_numbers")).is_some() && window_readable
        }
        "stablehlo.compare" => {
            n == 2
                && only(&["comparison_direction", "compare_type"])
                && enum_keyword(op.prop("comparison_direction"), "comparison_direction").is_some()
                && op
                    .prop("compare_type")
                    .is_none_or(|t| enum_keyword(Some(t), "comparison_type").is_some())
        }
        _ => false,
    }
}

/// `[0:2, 0:8:2]`: each dimension's `start:limit`, with `:stride` when it is not 1.
pub fn slice_ranges(op: &Op) -> String {
    let get = |k: &str| i64_array(op.prop(k)).unwrap_or_default();
    let (starts, limits, strides) = (get("start_indices"), get("limit_indices"), get("strides"));
    let dims: Vec<String> = (0..starts.len())
        .map(|i| {
            let (a, b, s) = (starts[i], limits[i], strides[i]);
            if s == 1 {
                format!("{a}:{b}")
            } else {
                format!("{a}:{b}:{s}")
            }
        })
        .collect();
    format!("[{}]", dims.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_properties() {
        let raw = |s: &str| Attr::Raw(s.to_string());
        assert_eq!(i64_array(Some(&raw("array<i64: 1, 0>"))), Some(vec![1, 0]));
        assert_eq!(i64_array(Some(&raw("array<i64>"))), Some(vec![]));
        assert_eq!(i64_array(Some(&raw("array<i32: 1>"))), None);
        assert_eq!(i64_array(Some(&raw("dense<1> : tensor<1xi64>"))), None);
        let dir = raw("#stablehlo<comparison_direction GT>");
        assert_eq!(enum_keyword(Some(&dir), "comparison_direction"), Some("GT"));
        assert_eq!(enum_keyword(Some(&dir), "comparison_type"), None);
        assert_eq!(list(&[]), "[]");
        let dot = raw("#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2, 1], rhs_contracting_dimensions = [1, 2]>");
        assert_eq!(dot_dims(Some(&dot)), Some([vec![0], vec![0], vec![2, 1], vec![1, 2]]));
        assert_eq!(dot_dims(Some(&raw("#stablehlo.dot<>"))), Some(Default::default()));
        assert_eq!(dot_dims(Some(&raw("#stablehlo.dot<lhs_x = [0]>"))), None);
    }

    #[test]
    fn reads_window_properties() {
        let raw = |s: &str| Attr::Raw(s.to_string());
        let pad = |s: &str| padding_pairs(Some(&raw(s)));
        assert_eq!(pad("dense<0> : tensor<2x2xi64>"), Some(vec![(0, 0), (0, 0)]));
        assert_eq!(pad("dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>"), Some(vec![(0, 1), (2, 3)]));
        assert_eq!(pad("dense<[[0, 1]]> : tensor<2x2xi64>"), None);
        assert_eq!(bool_array(Some(&raw("array<i1: true, false>"))), Some(vec![true, false]));
        assert_eq!(
            conv_dims(Some(&raw("#stablehlo.conv<[b, f]x[o, i]->[b, f]>"))),
            Some("[b, f]x[o, i]->[b, f]")
        );
        assert_eq!(conv_dims(Some(&raw("#stablehlo.conv<raw input_batch_dimension = 0>"))), None);
        assert_eq!(element_type("tensor<8x?xf32>"), Some("f32"));
        assert_eq!(element_type("tensor<complex<f32>>"), Some("complex<f32>"));
        assert_eq!(element_type("tensor<4xi1, #enc<[1, 2]>>"), Some("i1"));
    }

    #[test]
    fn dimension_numbers_print_canonically() {
        let c = |s: &str| canonical_struct(s.to_string());
        assert_eq!(
            c("#stablehlo.gather<offset_dims = [], start_index_map = [1, 0], collapsed_slice_dims = [0, 1], index_vector_dim = 0>"),
            "#stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [1, 0]>"
        );
        assert_eq!(
            c("#stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>"),
            "#stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>"
        );
        assert_eq!(c("#stablehlo.gather<unknown = [1]>"), "#stablehlo.gather<unknown = [1]>");
        assert_eq!(
            c("#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>"),
            "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>"
        );
        assert_eq!(list(&[1, 0]), "[1, 0]");
    }
}
