//! MLIR's lexical forms of names: string escapes (as LLVM's `printEscapedString`
//! writes them and MLIR's lexer reads them) and symbol references.

use std::fmt::Write;

/// `@name`, quoted when not an identifier.
pub fn symbol_ref(name: &str) -> String {
    let valid = {
        let b = name.as_bytes();
        !b.is_empty()
            && (b[0].is_ascii_alphabetic() || b[0] == b'_')
            && b.iter()
                .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-'))
    };
    if valid {
        format!("@{name}")
    } else {
        format!("@{}", escape_string(name.as_bytes()))
    }
}

/// A quoted string with LLVM's `printEscapedString` escapes (`\22`, `\0A`, `\\`).
pub fn escape_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &c in bytes {
        if c == b'\\' {
            out.push_str("\\\\");
        } else if (0x20..0x7f).contains(&c) && c != b'"' {
            out.push(c as char);
        } else {
            let _ = write!(out, "\\{c:02X}");
        }
    }
    out.push('"');
    out
}

/// [`escape_string`] written to `out`, without a copy when nothing needs escaping
/// (axis names, printed in every sharding).
pub fn write_escaped<W: Write + ?Sized>(out: &mut W, bytes: &[u8]) -> std::fmt::Result {
    let plain = bytes.iter().all(|&c| (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\');
    match std::str::from_utf8(bytes) {
        Ok(s) if plain => {
            out.write_char('"')?;
            out.write_str(s)?;
            out.write_char('"')
        }
        _ => out.write_str(&escape_string(bytes)),
    }
}

/// Decodes MLIR string escapes to bytes.
pub fn unescape_bytes(raw: &str) -> Vec<u8> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let c = b[i + 1];
            match c {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'"' | b'\\' => out.push(c),
                _ if i + 2 < b.len() && c.is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit() => {
                    let h = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("0");
                    out.push(u8::from_str_radix(h, 16).unwrap_or(0));
                    i += 3;
                    continue;
                }
                _ => {
                    out.push(b'\\');
                    out.push(c);
                }
            }
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Decodes MLIR string escapes (`\n`, `\t`, `\"`, `\\`, `\XX`) to text.
pub fn unescape(raw: &str) -> String {
    String::from_utf8_lossy(&unescape_bytes(raw)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        assert_eq!(symbol_ref("a b"), r#"@"a b""#);
        assert_eq!(symbol_ref("main"), "@main");
        assert_eq!(unescape_bytes(r"a\0Ab\22\n"), b"a\nb\"\n");
        assert_eq!(escape_string(b"a\nb\"\\"), r#""a\0Ab\22\\""#);
        assert_eq!(unescape(r#"x\22y"#), "x\"y");
    }
}
