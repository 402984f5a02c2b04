//! StableHLO (and CHLO) properties read as values, and which ops written in the generic
//! form have a custom form MLIR prints (the builder marks them; [`crate::print`] prints
//! them).

use super::OpKind;
use super::{Attr, Op};

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

/// Whether the generic-form `op` can be printed in its custom form: it has exactly the
/// properties that form shows, readable.
pub fn custom_printable(op: &Op) -> bool {
    let props: Vec<&str> = op.props.iter().map(|p| p.name.as_str()).collect();
    let only = |names: &[&str]| props.iter().all(|p| names.contains(p));
    let arr = |n: &str| i64_array(op.prop(n)).is_some();
    let n = op.operands.len();
    if op.kind == OpKind::StablehloReduce {
        let block_args = op.regions.first().and_then(|r| r.blocks.first()).map(|b| b.args.len());
        return n >= 2
            && n.is_multiple_of(2)
            && op.results.len() == n / 2
            && op.regions.len() == 1
            && block_args == Some(n)
            && only(&["dimensions"])
            && arr("dimensions");
    }
    if op.kind == OpKind::StablehloWhile {
        let args =
            |i: usize| op.regions.get(i).and_then(|r| r.blocks.first()).map(|b| b.args.len());
        return op.regions.len() == 2
            && args(0) == Some(n)
            && args(1) == Some(n)
            && op.results.len() == n
            && props.is_empty();
    }
    if op.kind == OpKind::StablehloRngBitGenerator {
        return n == 1
            && op.results.len() == 2
            && op.regions.is_empty()
            && props.len() == 1
            && enum_keyword(op.prop("rng_algorithm"), "rng_algorithm").is_some();
    }
    if op.kind == OpKind::ChloTopK {
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
        _ if op.kind.is_chlo_unary() => n == 1 && props.is_empty(),
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
    }
}
