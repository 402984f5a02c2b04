//! Arithmetic on shapes and meshes shared by every vocabulary of shardings (the model's,
//! the printer's, the syntax tree's): written once here, below all of them.

/// `n / d` rounded up, as a device's padded shard of `n` elements over `d` shards;
/// 0 for empty or negative `n`, `n` for a non-positive `d`.
pub fn ceil_div(n: i64, d: i64) -> i64 {
    if n <= 0 || d <= 0 {
        return n.max(0);
    }
    (n - 1) / d + 1
}

/// Whether `ids` are the iota device ids of a mesh with axes of `sizes`: Shardy drops
/// them while it builds the mesh (a mesh without axes keeps its ids).
pub fn is_iota_device_ids(sizes: impl IntoIterator<Item = i64>, ids: &[i64]) -> bool {
    let mut sizes = sizes.into_iter().peekable();
    sizes.peek().is_some()
        && sizes.try_fold(1i64, |p, s| p.checked_mul(s)) == Some(ids.len() as i64)
        && ids.iter().enumerate().all(|(i, &v)| v == i as i64)
}

/// The `[start:limit(:stride)?, ...]` ranges of a slice written in custom form
/// (`text` from the op's name on), as `(start, limit, stride)`.
pub fn slice_ranges(text: &str) -> Option<Vec<(i64, i64, i64)>> {
    let open = text.find('[')?;
    let close = open + text[open..].find(']')?;
    let body = &text[open + 1..close];
    if body.trim().is_empty() {
        return Some(Vec::new());
    }
    body.split(',')
        .map(|dim| {
            let parts: Vec<i64> =
                dim.split(':').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
            match parts[..] {
                [a, b] => Some((a, b, 1)),
                [a, b, c] => Some((a, b, c)),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_div_rounds_up() {
        assert_eq!([ceil_div(8, 2), ceil_div(9, 2), ceil_div(0, 3), ceil_div(5, 0)], [4, 5, 0, 5]);
    }

    #[test]
    fn iota_ids_need_axes_and_the_device_count() {
        assert!(is_iota_device_ids([2, 2], &[0, 1, 2, 3]));
        assert!(!is_iota_device_ids([2, 2], &[0, 1, 3, 2]));
        assert!(!is_iota_device_ids([2, 4], &[0, 1, 2, 3]));
        assert!(!is_iota_device_ids([], &[0]));
        assert!(!is_iota_device_ids([i64::MAX, 2], &[0, 1]));
    }
}
