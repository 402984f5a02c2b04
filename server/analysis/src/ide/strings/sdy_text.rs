//! Reading the decoded text of a string as one MLIR attribute (what Shardy's import does
//! with `mlir::parseAttribute`), with the parser of the syntax layer: the text is read
//! as the value of an attribute of a generic op, so every sdy attribute and its errors
//! come out exactly as for an attribute written in the file.

use crate::verify::messages as msg;
use sdy_syntax::tree::{Attr, Op};
use sdy_syntax::Span;

const PREFIX: &str = "\"w.w\"() {a = ";
const SUFFIX: &str = "\n} : () -> ()";

/// The attribute read from a text, spans as the parser gives them (see [`Read::text_span`]).
pub struct Read {
    pub value: Option<Attr>,
    /// Errors, in text coordinates.
    pub errors: Vec<(Span, String)>,
    len: u32,
}

impl Read {
    /// A span of the read attribute in text coordinates.
    pub fn text_span(&self, s: Span) -> Span {
        let at = |x: u32| x.saturating_sub(PREFIX.len() as u32).min(self.len);
        Span::new(at(s.start), at(s.end.max(s.start)))
    }
}

/// Reads `text` as one attribute. As MLIR's `parseAttribute`, text left after a
/// well-formed attribute is an error at its first token.
pub fn read(text: &str) -> Read {
    let len = text.len() as u32;
    let end = attribute_end(text);
    let wrapped = format!("{PREFIX}{}{SUFFIX}", &text[..end]);
    let op: Option<std::sync::Arc<Op>> =
        sdy_syntax::parser::parse_top_level(&wrapped).into_iter().next().map(|c| c.op);
    let mut r = Read { value: None, errors: Vec::new(), len };
    let Some(op) = op else {
        r.errors.push((Span::empty(0), msg::ENCOUNTERED_UNEXPECTED_TOKEN.to_string()));
        return r;
    };
    r.value = op.attr("a").and_then(|a| a.value.clone());
    r.errors = op.errors.iter().map(|e| (r.text_span(e.span), e.message.clone())).collect();
    let rest = text[end..].trim_start();
    if r.errors.is_empty() && !rest.is_empty() {
        let at = len - rest.len() as u32;
        let next = rest.chars().next().map_or(0, char::len_utf8) as u32;
        r.errors.push((Span::new(at, at + next), msg::ENCOUNTERED_UNEXPECTED_TOKEN.into()));
    }
    r
}

/// Where the first attribute of `text` ends: after the brackets that close its first
/// token (`#sdy.sharding<...>`, `{...}`, a string), else at the next blank. Unbalanced
/// text runs to the end (the parser reports it).
fn attribute_end(text: &str) -> usize {
    let b = text.as_bytes();
    let mut i = b.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(b.len());
    if i == b.len() {
        return i;
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'-');
    match b[i] {
        b'#' | b'!' => {
            i += 1;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            if b.get(i) == Some(&b'<') {
                i = balanced(b, i);
            }
            i
        }
        b'{' | b'[' | b'(' | b'<' | b'"' => balanced(b, i),
        _ => b[i..].iter().position(u8::is_ascii_whitespace).map_or(b.len(), |n| i + n),
    }
}

/// The end of the bracketed group (or string) starting at `b[i]`.
fn balanced(b: &[u8], mut i: usize) -> usize {
    let mut stack: Vec<u8> = Vec::new();
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'-' if b.get(i + 1) == Some(&b'>') => i += 1,
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            b'(' => stack.push(b')'),
            b'<' => stack.push(b'>'),
            // A closer pops its group; a mismatched one ends the scan.
            c @ (b'}' | b']' | b')' | b'>') if stack.pop() != Some(c) => return b.len(),
            _ => {}
        }
        i += 1;
        if stack.is_empty() {
            return i.min(b.len());
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdy_syntax::sdy::SdyAttr;
    use sdy_syntax::tree::AttrKind;

    fn errors(text: &str) -> Vec<(String, String)> {
        let r = read(text);
        r.errors.iter().map(|(s, m)| (s.text(text).to_string(), m.clone())).collect()
    }

    #[test]
    fn reads_sdy_attributes() {
        let t = r#"#sdy.sharding<@mesh, [{"x"}, {}]>"#;
        let r = read(t);
        assert!(r.errors.is_empty());
        let v = r.value.clone().unwrap();
        assert_eq!(r.text_span(v.span), Span::new(0, t.len() as u32));
        let AttrKind::Sdy(s) = &v.kind else { panic!("{v:?}") };
        let SdyAttr::Sharding(s) = &**s else { panic!() };
        assert_eq!(r.text_span(s.dims[0].axes[0].name_span).text(t), "\"x\"");
        let r = read(r#"{mesh = #sdy.mesh<["a"=2]>}"#);
        assert!(r.errors.is_empty() && matches!(r.value.unwrap().kind, AttrKind::Dict(_)));
    }

    #[test]
    fn errors_land_in_the_text() {
        assert_eq!(
            errors(r#"#sdy.sharding<@mesh, [{"x"}]> junk"#),
            [("j".to_string(), "encountered unexpected token".to_string())]
        );
        let e = errors(r#"#sdy.sharding<@mesh, [{"x"}"#);
        assert!(!e.is_empty() && e.iter().all(|(at, _)| at.is_empty()), "{e:?}");
        // MLIR puts a missing `,` right after the previous token.
        let e = errors(r#"#sdy.sharding<@mesh, [{"x" "y"}]>"#);
        assert_eq!((e[0].0.as_str(), e[1].0.as_str()), ("", "\"y\""), "{e:?}");
        assert!(!errors("").is_empty());
        assert_eq!(
            errors(r#"{m = #sdy.mesh<["a"=2]>} }"#),
            [("}".to_string(), "encountered unexpected token".to_string())]
        );
        assert!(errors("#sdy.op_sharding_rule<([i])->([i]) {i=4}>").is_empty());
        // Text that would close the wrapper early.
        assert!(!errors("1} : () -> ()\n\"x.y\"() {b = 2").is_empty());
    }
}
