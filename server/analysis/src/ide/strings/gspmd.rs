//! GSPMD `HloSharding` strings (`mhlo.sharding = "{devices=[2,1]<=[2]}"`) as XLA prints
//! them: read, checked, and reduced to what they mean (which device holds which tile).
//!
//! Forms: `{replicated}`, `{manual}`, `{unknown}`, `{maximal device=N}`,
//! `{devices=[d0,...]<ids>}` with the ids listed (`0,1,2,3`) or as an iota
//! (`<=[8]`, `<=[2,4]T(1,0)`), then `last_tile_dim_replicate` or
//! `last_tile_dims={replicated, manual, unreduced}`; `metadata={...}`, `shard_as N` and
//! `shard_like N` are skipped; a tuple is `{{...}, {...}}`. Spans are byte offsets in the
//! string's decoded text.

use crate::verify::messages as msg;
use sdy_syntax::Span;

/// Tile assignments with more devices than this are not expanded.
pub const MAX_DEVICES: i64 = 1 << 16;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hlo {
    Replicated,
    Manual,
    Unknown,
    Maximal(i64),
    Tiled(Tiled),
    Tuple(Vec<(Hlo, Span)>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tiled {
    /// `devices=[...]`: every tile dimension, subgroup dimensions last.
    pub dims: Vec<i64>,
    pub dims_span: Span,
    pub devices: Devices,
    pub devices_span: Span,
    /// The kinds of the trailing subgroup dimensions (`last_tile_dim_replicate` is one
    /// replicated subgroup).
    pub subgroups: Vec<Subgroup>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subgroup {
    Replicated,
    Manual,
    Unreduced,
}

impl Subgroup {
    pub fn as_str(self) -> &'static str {
        match self {
            Subgroup::Replicated => "replicated",
            Subgroup::Manual => "manual",
            Subgroup::Unreduced => "unreduced",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Devices {
    List(Vec<i64>),
    /// `<=[reshape]T(perm)`: `iota(product)` reshaped, transposed by `perm`, flattened.
    Iota {
        reshape: Vec<i64>,
        perm: Option<Vec<usize>>,
    },
}

impl Tiled {
    /// The tile dimensions of the data (without the subgroup dimensions).
    pub fn data_dims(&self) -> &[i64] {
        &self.dims[..self.dims.len().saturating_sub(self.subgroups.len())]
    }

    /// The product of the tile dimensions (`None` on overflow).
    pub fn tile_count(&self) -> Option<i64> {
        self.dims.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d))
    }

    /// The device of each tile position, in row-major order of `dims`; `None` when the
    /// assignment is inconsistent or too large.
    pub fn expand(&self) -> Option<Vec<i64>> {
        let n = self.tile_count().filter(|&n| (1..=MAX_DEVICES).contains(&n))?;
        let ids = match &self.devices {
            Devices::List(ids) => ids.clone(),
            Devices::Iota { reshape, perm } => iota(reshape, perm.as_deref())?,
        };
        (ids.len() as i64 == n).then_some(ids)
    }
}

/// `iota(product(reshape))` reshaped to `reshape`, transposed by `perm`, flattened.
fn iota(reshape: &[i64], perm: Option<&[usize]>) -> Option<Vec<i64>> {
    let total = reshape
        .iter()
        .try_fold(1i64, |acc, &d| if d < 1 { None } else { acc.checked_mul(d) })
        .filter(|&n| n <= MAX_DEVICES)?;
    let identity: Vec<usize> = (0..reshape.len()).collect();
    let perm = perm.unwrap_or(&identity);
    if !is_permutation(perm, reshape.len()) {
        return None;
    }
    let mut strides = vec![1i64; reshape.len()];
    for i in (0..reshape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * reshape[i + 1];
    }
    let shape: Vec<i64> = perm.iter().map(|&p| reshape[p]).collect();
    let mut index = vec![0i64; shape.len()];
    let mut out = Vec::with_capacity(total as usize);
    for _ in 0..total {
        out.push(index.iter().zip(perm).map(|(&x, &p)| x * strides[p]).sum());
        for i in (0..shape.len()).rev() {
            index[i] += 1;
            if index[i] < shape[i] {
                break;
            }
            index[i] = 0;
        }
    }
    Some(out)
}

fn is_permutation(perm: &[usize], n: usize) -> bool {
    let mut seen = vec![false; n];
    perm.len() == n && perm.iter().all(|&p| p < n && !std::mem::replace(&mut seen[p], true))
}

/// A problem found while reading or checking a GSPMD sharding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub span: Span,
    pub message: String,
}

/// Reads a GSPMD sharding string.
pub fn parse(text: &str) -> Result<(Hlo, Span), Problem> {
    let mut p = Reader { s: text.as_bytes(), pos: 0 };
    p.skip_ws();
    let hlo = p.sharding(0)?;
    p.skip_ws();
    if p.pos < p.s.len() {
        return Err(p.problem("the end of the sharding"));
    }
    Ok(hlo)
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
}

/// Tuples nest at most this deep.
const MAX_DEPTH: usize = 64;

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn problem(&self, what: &str) -> Problem {
        let end = (self.pos + 1).min(self.s.len());
        Problem { span: Span::new(self.pos as u32, end as u32), message: msg::gspmd_expected(what) }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.s[self.pos..].starts_with(token.as_bytes()) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), Problem> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.problem(&format!("'{token}'")))
        }
    }

    fn word(&mut self) -> Option<&str> {
        self.skip_ws();
        let start = self.pos;
        while self.s.get(self.pos).is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_') {
            self.pos += 1;
        }
        (self.pos > start).then(|| std::str::from_utf8(&self.s[start..self.pos]).unwrap_or(""))
    }

    fn int(&mut self) -> Result<i64, Problem> {
        self.skip_ws();
        let start = self.pos;
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        digits.parse().map_err(|_| {
            self.pos = start;
            self.problem("an integer")
        })
    }

    /// `[1,2,3]`
    fn int_list(&mut self) -> Result<(Vec<i64>, Span), Problem> {
        self.skip_ws();
        let start = self.pos as u32;
        self.expect("[")?;
        let mut out = Vec::new();
        if !self.eat("]") {
            loop {
                out.push(self.int()?);
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok((out, Span::new(start, self.pos as u32)))
    }

    fn sharding(&mut self, depth: usize) -> Result<(Hlo, Span), Problem> {
        self.skip_ws();
        let start = self.pos as u32;
        self.expect("{")?;
        self.skip_ws();
        if self.s.get(self.pos) == Some(&b'{') {
            if depth >= MAX_DEPTH {
                return Err(self.problem("a shallower tuple"));
            }
            let mut items = vec![self.sharding(depth + 1)?];
            while self.eat(",") {
                items.push(self.sharding(depth + 1)?);
            }
            self.expect("}")?;
            return Ok((Hlo::Tuple(items), Span::new(start, self.pos as u32)));
        }
        if self.eat("}") {
            // `{}`: an empty tuple.
            return Ok((Hlo::Tuple(Vec::new()), Span::new(start, self.pos as u32)));
        }
        let hlo = match self.word() {
            Some("replicated") => Hlo::Replicated,
            Some("manual") => Hlo::Manual,
            Some("unknown") => Hlo::Unknown,
            Some("maximal") => {
                self.expect("device")?;
                self.expect("=")?;
                Hlo::Maximal(self.int()?)
            }
            Some("devices") => {
                self.expect("=")?;
                Hlo::Tiled(self.tiled()?)
            }
            _ => {
                return Err(self.problem(
                    "'replicated', 'manual', 'unknown', 'maximal' or 'devices=' (a sharding)",
                ))
            }
        };
        let mut hlo = hlo;
        self.trailer(&mut hlo)?;
        self.expect("}")?;
        Ok((hlo, Span::new(start, self.pos as u32)))
    }

    fn tiled(&mut self) -> Result<Tiled, Problem> {
        let (dims, dims_span) = self.int_list()?;
        if dims.is_empty() {
            return Err(Problem {
                span: dims_span,
                message: msg::gspmd_expected("tile dimensions"),
            });
        }
        self.skip_ws();
        let start = self.pos as u32;
        let devices = if self.eat("<=") {
            let (reshape, _) = self.int_list()?;
            let perm = if self.eat("T") {
                self.expect("(")?;
                let mut perm = Vec::new();
                loop {
                    perm.push(self.int()? as usize);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
                Some(perm)
            } else {
                None
            };
            Devices::Iota { reshape, perm }
        } else {
            let mut ids = vec![self.int()?];
            while self.peek_comma_int() {
                self.expect(",")?;
                ids.push(self.int()?);
            }
            Devices::List(ids)
        };
        let devices_span = Span::new(start, self.pos as u32);
        Ok(Tiled { dims, dims_span, devices, devices_span, subgroups: Vec::new() })
    }

    /// A `,` followed by a device id (not by the next element of a tuple).
    fn peek_comma_int(&mut self) -> bool {
        let save = self.pos;
        let yes = self.eat(",") && {
            self.skip_ws();
            self.s.get(self.pos).is_some_and(u8::is_ascii_digit)
        };
        self.pos = save;
        yes
    }

    /// Flags after the body: subgroups, metadata, `shard_as`/`shard_like`.
    fn trailer(&mut self, hlo: &mut Hlo) -> Result<(), Problem> {
        loop {
            self.skip_ws();
            let save = self.pos;
            match self.word() {
                Some("last_tile_dim_replicate") => match hlo {
                    Hlo::Tiled(t) => t.subgroups = vec![Subgroup::Replicated],
                    _ => {
                        self.pos = save;
                        return Err(self.problem("'}'"));
                    }
                },
                Some("last_tile_dims") => {
                    self.expect("=")?;
                    self.expect("{")?;
                    let mut kinds = Vec::new();
                    loop {
                        let at = self.pos;
                        kinds.push(match self.word() {
                            Some("replicated") => Subgroup::Replicated,
                            Some("manual") => Subgroup::Manual,
                            Some("unreduced") => Subgroup::Unreduced,
                            _ => {
                                self.pos = at;
                                self.skip_ws();
                                return Err(self.problem("'replicated', 'manual' or 'unreduced'"));
                            }
                        });
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                    }
                    match hlo {
                        Hlo::Tiled(t) => t.subgroups = kinds,
                        _ => {
                            self.pos = save;
                            return Err(self.problem("'}'"));
                        }
                    }
                }
                Some("metadata") => {
                    self.expect("=")?;
                    self.skip_balanced()?;
                }
                Some("shard_as") | Some("shard_like") => {
                    self.int()?;
                }
                Some(_) => {
                    self.pos = save;
                    return Err(self.problem("'}'"));
                }
                None => return Ok(()),
            }
        }
    }

    /// `{...}` with nested braces and quoted strings.
    fn skip_balanced(&mut self) -> Result<(), Problem> {
        self.expect("{")?;
        let mut depth = 1;
        let mut in_str = false;
        while let Some(&b) = self.s.get(self.pos) {
            self.pos += 1;
            match (in_str, b) {
                (true, b'\\') => self.pos += 1,
                (true, b'"') => in_str = false,
                (false, b'"') => in_str = true,
                (false, b'{') => depth += 1,
                (false, b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        self.pos = self.s.len();
        Err(self.problem("'}'"))
    }
}

/// The consistency problems of a parsed sharding (XLA would reject it).
pub fn check(hlo: &Hlo, span: Span, out: &mut Vec<Problem>) {
    match hlo {
        Hlo::Tuple(items) => {
            for (h, s) in items {
                check(h, *s, out);
            }
        }
        Hlo::Tiled(t) => check_tiled(t, out),
        Hlo::Maximal(_) | Hlo::Replicated | Hlo::Manual | Hlo::Unknown => {
            let _ = span;
        }
    }
}

fn check_tiled(t: &Tiled, out: &mut Vec<Problem>) {
    let problem = |span: Span, message: String| Problem { span, message };
    if let Some(&d) = t.dims.iter().find(|&&d| d < 1) {
        out.push(problem(t.dims_span, msg::gspmd_tile_dim(d)));
        return;
    }
    if t.subgroups.len() > t.dims.len() {
        out.push(problem(t.dims_span, msg::gspmd_too_few_dims(t.dims.len(), t.subgroups.len())));
        return;
    }
    let Some(count) = t.tile_count() else { return };
    match &t.devices {
        Devices::List(ids) => {
            if ids.len() as i64 != count {
                out.push(problem(t.devices_span, msg::gspmd_device_count(ids.len(), count)));
                return;
            }
            let mut seen = std::collections::HashSet::new();
            if let Some(id) = ids.iter().find(|&&id| !seen.insert(id)) {
                out.push(problem(t.devices_span, msg::gspmd_duplicate_device(*id)));
            }
        }
        Devices::Iota { reshape, perm } => {
            let total = reshape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d.max(0)));
            if total != Some(count) {
                let n = total.unwrap_or(i64::MAX);
                out.push(problem(t.devices_span, msg::gspmd_iota_count(n, count)));
                return;
            }
            if let Some(perm) = perm {
                if !is_permutation(perm, reshape.len()) {
                    out.push(problem(t.devices_span, msg::gspmd_bad_transpose(reshape.len())));
                }
            }
        }
    }
}

/// What a sharding means, independent of how it is written: which devices hold which
/// tile of the data, and how the remaining devices relate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Meaning {
    Replicated,
    Manual,
    Unknown,
    Maximal(i64),
    /// `tiles[d]`: the data tile coordinates of device `d` (devices sorted); subgroup
    /// kinds other than replication.
    Tiled {
        data_dims: Vec<i64>,
        tiles: Vec<(i64, Vec<i64>)>,
        kinds: Vec<Subgroup>,
    },
    Tuple(Vec<Meaning>),
}

/// The meaning of a sharding (`None` if its tile assignment is inconsistent).
pub fn meaning(hlo: &Hlo) -> Option<Meaning> {
    Some(match hlo {
        Hlo::Replicated => Meaning::Replicated,
        Hlo::Manual => Meaning::Manual,
        Hlo::Unknown => Meaning::Unknown,
        Hlo::Maximal(d) => Meaning::Maximal(*d),
        Hlo::Tuple(items) => {
            Meaning::Tuple(items.iter().map(|(h, _)| meaning(h)).collect::<Option<_>>()?)
        }
        Hlo::Tiled(t) => {
            let ids = t.expand()?;
            let data = t.data_dims().to_vec();
            let kinds: Vec<Subgroup> =
                t.subgroups.iter().copied().filter(|k| *k != Subgroup::Replicated).collect();
            if data.iter().all(|&d| d == 1) && kinds.is_empty() {
                return Some(Meaning::Replicated);
            }
            if data.iter().all(|&d| d == 1) && kinds == [Subgroup::Manual] {
                return Some(Meaning::Manual);
            }
            let per_tile: i64 = t.dims[data.len()..].iter().product();
            let mut tiles: Vec<(i64, Vec<i64>)> = ids
                .iter()
                .enumerate()
                .map(|(pos, &id)| (id, unflatten(pos as i64 / per_tile.max(1), &data)))
                .collect();
            tiles.sort();
            Meaning::Tiled { data_dims: data, tiles, kinds }
        }
    })
}

/// Row-major coordinates of `index` in `dims`.
pub fn unflatten(mut index: i64, dims: &[i64]) -> Vec<i64> {
    let mut out = vec![0; dims.len()];
    for (i, &d) in dims.iter().enumerate().rev() {
        if d > 0 {
            out[i] = index % d;
            index /= d;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> Hlo {
        parse(s).unwrap_or_else(|e| panic!("{s}: {e:?}")).0
    }

    #[test]
    fn forms() {
        assert_eq!(read("{replicated}"), Hlo::Replicated);
        assert_eq!(read(" { maximal device=3 } "), Hlo::Maximal(3));
        let Hlo::Tiled(t) = read("{devices=[2,1,4]<=[8] last_tile_dim_replicate}") else {
            panic!()
        };
        assert_eq!(t.data_dims(), &[2, 1]);
        assert_eq!(t.expand().unwrap(), (0..8).collect::<Vec<_>>());
        let Hlo::Tiled(t) = read("{devices=[2,2]<=[2,2]T(1,0)}") else { panic!() };
        assert_eq!(t.expand().unwrap(), vec![0, 2, 1, 3]);
        let Hlo::Tiled(t) = read("{devices=[2,2]0,2,1,3 metadata={op_name=\"a}b\"}}") else {
            panic!()
        };
        assert_eq!(t.devices, Devices::List(vec![0, 2, 1, 3]));
        let Hlo::Tuple(items) = read("{{replicated}, {devices=[2]0,1}}") else { panic!() };
        assert_eq!(items.len(), 2);
        let Hlo::Tiled(t) = read("{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}")
        else {
            panic!()
        };
        assert_eq!(t.subgroups, vec![Subgroup::Manual, Subgroup::Replicated]);
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = parse("{devices=[2,1]<=[2]").unwrap_err();
        assert_eq!(
            (e.span, e.message.as_str()),
            (Span::new(19, 19), "expected '}' in the GSPMD sharding")
        );
        let e = parse("{devices=[2,1]<=[2] bogus}").unwrap_err();
        assert_eq!(e.span, Span::new(20, 21));
        let e = parse("{replicated} x").unwrap_err();
        assert_eq!(e.span, Span::new(13, 14));
        assert!(parse("").is_err());
        assert!(parse("{devices=[]0}").is_err());
        let mut out = Vec::new();
        let (h, s) = parse("{devices=[2,2]0,1,2}").unwrap();
        check(&h, s, &mut out);
        assert_eq!(out[0].message, "the tile assignment lists 3 devices but its dimensions hold 4");
        out.clear();
        let (h, s) = parse("{devices=[2,2]<=[2,2]T(0,0)}").unwrap();
        check(&h, s, &mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn meanings_compare_layouts() {
        let m = |s: &str| meaning(&read(s)).unwrap();
        assert_eq!(m("{devices=[1,1,4]<=[4] last_tile_dim_replicate}"), Meaning::Replicated);
        assert_eq!(m("{devices=[2,2]<=[2,2]T(1,0)}"), m("{devices=[2,2]0,2,1,3}"));
        // Replicas within a group may be listed in any order.
        assert_eq!(
            m("{devices=[2,2]0,1,2,3 last_tile_dim_replicate}"),
            m("{devices=[2,2]1,0,3,2 last_tile_dim_replicate}")
        );
        assert_ne!(m("{devices=[2,2]<=[4]}"), m("{devices=[2,2]<=[2,2]T(1,0)}"));
    }
}
