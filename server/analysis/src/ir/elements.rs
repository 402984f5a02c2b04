//! The body of `dense<...>` as MLIR prints it: all-equal elements collapse to a splat,
//! floats get MLIR's spelling, `1`/`0` of `i1` print as `true`/`false`.

use super::float::{canonical_float, FloatSem};

#[derive(Debug, Clone, PartialEq)]
enum Lit {
    List(Vec<Lit>),
    Scalar(String),
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn lit(&mut self) -> Option<Lit> {
        self.ws();
        match self.b.get(self.i)? {
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Some(Lit::List(items));
                }
                loop {
                    items.push(self.lit()?);
                    self.ws();
                    match self.b.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(Lit::List(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'(' | b'"' => None,
            _ => {
                let start = self.i;
                while self.i < self.b.len()
                    && !matches!(self.b[self.i], b',' | b']' | b' ' | b'\n' | b'\t' | b'\r')
                {
                    self.i += 1;
                }
                let s = std::str::from_utf8(&self.b[start..self.i]).ok()?;
                if s.is_empty() {
                    return None;
                }
                Some(Lit::Scalar(s.to_string()))
            }
        }
    }
}

fn scalars<'a>(l: &'a Lit, out: &mut Vec<&'a str>) {
    match l {
        Lit::Scalar(s) => out.push(s),
        Lit::List(v) => v.iter().for_each(|x| scalars(x, out)),
    }
}

fn is_int_type(t: &str) -> bool {
    let d = t.strip_prefix("si").or_else(|| t.strip_prefix("ui")).or_else(|| t.strip_prefix('i'));
    d.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) || t == "index"
}

fn scalar(s: &str, elem: &str) -> Option<String> {
    if FloatSem::of_type(elem).is_some() {
        if s == "true" || s == "false" {
            return None;
        }
        return canonical_float(s, elem);
    }
    if is_int_type(elem) {
        if elem == "i1" {
            return match s {
                "true" | "1" => Some("true".into()),
                "false" | "0" => Some("false".into()),
                _ => None,
            };
        }
        let (neg, digits) = match s.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, s),
        };
        let v: i128 = if let Some(h) = digits.strip_prefix("0x") {
            i128::from_str_radix(h, 16).ok()?
        } else {
            digits.parse().ok()?
        };
        let v = if neg { -v } else { v };
        return Some(if v == 0 { "0".into() } else { v.to_string() });
    }
    None
}

fn render(l: &Lit, elem: &str, out: &mut String) -> Option<()> {
    match l {
        Lit::Scalar(s) => out.push_str(&scalar(s, elem)?),
        Lit::List(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render(x, elem, out)?;
            }
            out.push(']');
        }
    }
    Some(())
}

/// Normalises the text between `dense<` and `>` for element type `elem`; `None` when
/// the literal is not one we model (hex strings, complex numbers): keep the source.
pub fn normalize_dense(inner: &str, elem: &str) -> Option<String> {
    let inner = inner.trim();
    if inner.is_empty() {
        return Some(String::new());
    }
    let mut p = P { b: inner.as_bytes(), i: 0 };
    let lit = p.lit()?;
    p.ws();
    if p.i != p.b.len() {
        return None;
    }
    let mut leaves = Vec::new();
    scalars(&lit, &mut leaves);
    let canon: Vec<String> = leaves.iter().map(|s| scalar(s, elem)).collect::<Option<_>>()?;
    if !canon.is_empty() && canon.iter().all(|c| c == &canon[0]) {
        return Some(canon[0].clone());
    }
    let mut out = String::new();
    render(&lit, elem, &mut out)?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn dense() {
        assert_eq!(normalize_dense("[1.0, 1.0]", "f32").unwrap(), "1.000000e+00");
        assert_eq!(normalize_dense("[[1,2],[3,4]]", "i32").unwrap(), "[[1, 2], [3, 4]]");
        assert_eq!(normalize_dense("true", "i1").unwrap(), "true");
        assert_eq!(normalize_dense("[1, 2]", "f32").unwrap(), "[1.000000e+00, 2.000000e+00]");
        assert_eq!(normalize_dense("\"0xDEAD\"", "i16"), None);
    }
}
