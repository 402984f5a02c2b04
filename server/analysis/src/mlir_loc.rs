//! Where `mlir-opt`-style tools report a diagnostic of an op that has an explicit
//! location (`loc("model.py":12:3)`, `loc(#loc7)`, name, call-site and fused
//! locations): at the first `file:line:col` the location holds (in the order MLIR
//! prints it: a name before its child, a callee before its caller, fused parts in
//! order), else at the location itself (`loc("name")`), and nowhere for
//! `loc(unknown)`. Aliases (`#loc7 = loc(...)`) are resolved through `alias`.

/// The place a diagnostic is shown at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shown {
    /// `file:line:col` (the file name as written, escapes kept).
    File(String),
    /// No file position inside: the location as MLIR prints it (`loc("name")`).
    Raw(String),
    /// `loc(unknown)`: no place at all.
    Unknown,
}

/// Where a diagnostic at an op whose location is `text` (`loc(...)`) is shown; `None`
/// when the text is not a location this understands.
pub fn shown<'a>(text: &'a str, alias: &dyn Fn(&str) -> Option<&'a str>) -> Option<Shown> {
    let loc = parse(text, alias)?;
    Some(match loc.first_file() {
        Some(f) => Shown::File(f),
        None if matches!(loc, Loc::Unknown) => Shown::Unknown,
        None => Shown::Raw(format!("loc({})", loc.print())),
    })
}

/// A location as a user reads it: the names it carries (JAX's parameter paths such as
/// `params['embed']` and op paths such as `jit(train_step)/jvp(layer_0)/dot_general`),
/// outermost first, and its file positions, innermost first (the callee before its
/// callers, like a traceback read from the top).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceLoc {
    pub names: Vec<String>,
    pub frames: Vec<FilePos>,
}

/// `file:line:col` (the file name as written, escapes kept; 1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePos {
    pub file: String,
    pub line: u64,
    pub col: u64,
}

impl std::fmt::Display for FilePos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

impl SourceLoc {
    /// Whether there is nothing to show (`loc(unknown)`).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.frames.is_empty()
    }
}

/// The names and file positions of the location `text` (`loc(...)`), aliases resolved
/// through `alias`; `None` when the text is not a location this understands.
pub fn describe<'a>(text: &'a str, alias: &dyn Fn(&str) -> Option<&'a str>) -> Option<SourceLoc> {
    let loc = parse(text, alias)?;
    let mut out = SourceLoc::default();
    loc.collect(&mut out);
    Some(out)
}

/// The whole of `text` as one location.
fn parse<'a>(text: &'a str, alias: &dyn Fn(&str) -> Option<&'a str>) -> Option<Loc> {
    let mut p = Parser { s: text, at: 0, alias, depth: 0, nesting: 0 };
    let loc = p.loc()?;
    p.skip_ws();
    (p.at == text.len()).then_some(loc)
}

/// The definition of the location alias `name` (`#loc7`) in `src`: the text after
/// `#loc7 = ` on the line that defines it (aliases are top-level statements, one a
/// line, usually at the end of a JAX export).
pub fn alias_in<'a>(src: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("{name} = ");
    let start = if src.starts_with(&key) { 0 } else { src.rfind(&format!("\n{key}"))? + 1 };
    Some(alias_text(src, start + key.len()))
}

/// The rest of the line from `at`, trailing whitespace dropped.
fn alias_text(src: &str, at: usize) -> &str {
    src[at..].split('\n').next().unwrap_or_default().trim_end()
}

/// An index of the lines of a text that may define an alias (`#name = ...`), so that
/// [`AliasLines::find`] answers as [`alias_in`] does without a scan of the text per
/// lookup (a JAX export's locations chain through hundreds of thousands of aliases).
#[derive(Clone, Debug, Default)]
pub struct AliasLines {
    /// (hash of the name before ` = `, line start), by hash, then start.
    lines: Vec<(u64, u32)>,
}

impl AliasLines {
    pub fn new(src: &str) -> AliasLines {
        let starts =
            std::iter::once(0).chain(memchr::memchr_iter(b'\n', src.as_bytes()).map(|i| i + 1));
        let mut lines: Vec<(u64, u32)> = starts
            .filter(|&at| src.as_bytes().get(at) == Some(&b'#'))
            .filter_map(|at| {
                let line = &src[at..];
                let line = &line[..memchr::memchr(b'\n', line.as_bytes()).unwrap_or(line.len())];
                let name = &line[..memchr::memmem::find(line.as_bytes(), b" = ")?];
                Some((hash(name), at as u32))
            })
            .collect();
        lines.sort_unstable();
        AliasLines { lines }
    }

    /// [`alias_in`]`(src, name)`, `src` being the text the index was built from.
    pub fn find<'a>(&self, src: &'a str, name: &str) -> Option<&'a str> {
        let key_len = name.len() + 3;
        let defines = |at: usize| {
            src.get(at..at + key_len).is_some_and(|k| k.starts_with(name) && k.ends_with(" = "))
        };
        if defines(0) {
            return Some(alias_text(src, key_len));
        }
        // The index keys lines by what precedes their first ` = `: a name with a space
        // or line break, or without the `#`, may not be such a key.
        if !name.starts_with('#') || name.contains([' ', '\n']) {
            return alias_in(src, name);
        }
        let h = hash(name);
        let end = self.lines.partition_point(|&(k, _)| k <= h);
        let last = self.lines[..end].iter().rev().take_while(|&&(k, _)| k == h);
        let at = last.map(|&(_, at)| at as usize).find(|&at| defines(at))?;
        Some(alias_text(src, at + key_len))
    }
}

fn hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    name.hash(&mut h);
    h.finish()
}

enum Loc {
    Unknown,
    /// `"file":line:col`, with a range's ` to ...` kept as printed.
    File {
        file: String,
        line: u64,
        col: u64,
        range: String,
    },
    Name {
        name: String,
        child: Box<Loc>,
    },
    CallSite {
        callee: Box<Loc>,
        caller: Box<Loc>,
    },
    Fused {
        meta: Option<String>,
        parts: Vec<Loc>,
    },
}

impl Loc {
    fn collect(&self, out: &mut SourceLoc) {
        match self {
            Loc::Unknown => {}
            Loc::File { file, line, col, .. } => {
                let f = FilePos { file: file.clone(), line: *line, col: *col };
                if !out.frames.contains(&f) {
                    out.frames.push(f);
                }
            }
            Loc::Name { name, child } => {
                if !name.is_empty() && !out.names.contains(name) {
                    out.names.push(name.clone());
                }
                child.collect(out);
            }
            Loc::CallSite { callee, caller } => {
                callee.collect(out);
                caller.collect(out);
            }
            Loc::Fused { parts, .. } => parts.iter().for_each(|p| p.collect(out)),
        }
    }

    fn first_file(&self) -> Option<String> {
        match self {
            Loc::Unknown => None,
            Loc::File { file, line, col, .. } => Some(format!("{file}:{line}:{col}")),
            Loc::Name { child, .. } => child.first_file(),
            Loc::CallSite { callee, caller } => callee.first_file().or_else(|| caller.first_file()),
            Loc::Fused { parts, .. } => parts.iter().find_map(Loc::first_file),
        }
    }

    fn print(&self) -> String {
        match self {
            Loc::Unknown => "unknown".into(),
            Loc::File { file, line, col, range } => format!("\"{file}\":{line}:{col}{range}"),
            Loc::Name { name, child } => match **child {
                Loc::Unknown => format!("\"{name}\""),
                ref c => format!("\"{name}\"({})", c.print()),
            },
            Loc::CallSite { callee, caller } => {
                format!("callsite({} at {})", callee.print(), caller.print())
            }
            Loc::Fused { meta, parts } => {
                let parts: Vec<String> = parts.iter().map(Loc::print).collect();
                let meta = meta.as_ref().map_or(String::new(), |m| format!("<{m}>"));
                format!("fused{meta}[{}]", parts.join(", "))
            }
        }
    }
}

struct Parser<'a, 'f> {
    s: &'a str,
    at: usize,
    alias: &'f dyn Fn(&str) -> Option<&'a str>,
    /// Alias nesting, bounded so that a cycle of aliases ends.
    depth: u32,
    /// Location nesting, bounded like the parser's brackets: parsing, printing and
    /// dropping a location recurse into it.
    nesting: u32,
}

/// Locations nested deeper than this are not understood.
const MAX_NESTING: u32 = 256;

impl<'a> Parser<'a, '_> {
    fn rest(&self) -> &'a str {
        &self.s[self.at..]
    }
    fn skip_ws(&mut self) {
        let r = self.rest();
        self.at += r.len() - r.trim_start().len();
    }
    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(tok) {
            self.at += tok.len();
            true
        } else {
            false
        }
    }
    /// A keyword not followed by more identifier characters.
    fn eat_word(&mut self, word: &str) -> bool {
        self.skip_ws();
        let r = self.rest();
        let after = r.as_bytes().get(word.len()).copied();
        if r.starts_with(word) && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.at += word.len();
            true
        } else {
            false
        }
    }
    fn string(&mut self) -> Option<String> {
        self.skip_ws();
        let r = self.rest();
        let body = r.strip_prefix('"')?;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    self.at += i + 2;
                    return Some(body[..i].to_string());
                }
                _ => {}
            }
        }
        None
    }
    fn int(&mut self) -> Option<u64> {
        self.skip_ws();
        let r = self.rest();
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        let v = r[..n].parse().ok()?;
        self.at += n;
        Some(v)
    }

    /// `loc(...)` or a bare location (inside another one).
    fn loc(&mut self) -> Option<Loc> {
        if self.nesting >= MAX_NESTING {
            return None;
        }
        self.nesting += 1;
        let loc = self.loc_here();
        self.nesting -= 1;
        loc
    }

    fn loc_here(&mut self) -> Option<Loc> {
        if self.eat_word("loc") {
            if !self.eat("(") {
                return None;
            }
            let l = self.inner()?;
            return self.eat(")").then_some(l);
        }
        self.inner()
    }

    fn inner(&mut self) -> Option<Loc> {
        self.skip_ws();
        if self.eat_word("unknown") {
            return Some(Loc::Unknown);
        }
        if self.eat_word("callsite") {
            if !self.eat("(") {
                return None;
            }
            let callee = self.loc()?;
            if !self.eat_word("at") {
                return None;
            }
            let caller = self.loc()?;
            return self
                .eat(")")
                .then(|| Loc::CallSite { callee: Box::new(callee), caller: Box::new(caller) });
        }
        if self.eat_word("fused") {
            let meta = if self.eat("<") { Some(self.balanced_until('>')?) } else { None };
            if !self.eat("[") {
                return None;
            }
            let mut parts = Vec::new();
            if !self.eat("]") {
                loop {
                    parts.push(self.loc()?);
                    if self.eat("]") {
                        break;
                    }
                    if !self.eat(",") {
                        return None;
                    }
                }
            }
            return Some(Loc::Fused { meta, parts });
        }
        if self.rest().starts_with('#') {
            let name_len = self.rest()[1..]
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'-'))
                .count();
            let name = &self.rest()[..1 + name_len];
            self.at += 1 + name_len;
            let text = (self.alias)(name)?;
            if self.depth > 64 {
                return None;
            }
            let mut sub = Parser {
                s: text,
                at: 0,
                alias: self.alias,
                depth: self.depth + 1,
                nesting: self.nesting,
            };
            return sub.loc();
        }
        let s = self.string()?;
        if self.eat(":") {
            let line = self.int()?;
            if !self.eat(":") {
                return None;
            }
            let col = self.int()?;
            let mut range = String::new();
            if self.eat_word("to") {
                range.push_str(" to ");
                if self.eat(":") {
                    range.push_str(&format!(":{}", self.int()?));
                } else {
                    let l2 = self.int()?;
                    if !self.eat(":") {
                        return None;
                    }
                    range.push_str(&format!("{l2}:{}", self.int()?));
                }
            }
            return Some(Loc::File { file: s, line, col, range });
        }
        let child = if self.eat("(") {
            let c = self.loc()?;
            if !self.eat(")") {
                return None;
            }
            c
        } else {
            Loc::Unknown
        };
        Some(Loc::Name { name: s, child: Box::new(child) })
    }

    /// The text up to the `close` that ends the current bracket (nesting and strings
    /// respected), which is consumed.
    fn balanced_until(&mut self, close: char) -> Option<String> {
        let start = self.at;
        let mut depth = 0i32;
        let mut in_str = false;
        let mut escaped = false;
        for (i, c) in self.rest().char_indices() {
            if in_str {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_str = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_str = true,
                '<' | '(' | '[' | '{' => depth += 1,
                c if c == close && depth == 0 => {
                    let text = self.s[start..start + i].trim().to_string();
                    self.at = start + i + 1;
                    return Some(text);
                }
                '>' | ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> String {
        let aliases = |n: &str| match n {
            "#a" => Some("loc(\"alias.py\":7:8)"),
            "#n" => Some("loc(\"just\")"),
            "#cycle" => Some("loc(#cycle)"),
            _ => None,
        };
        match shown(text, &aliases) {
            Some(Shown::File(f)) => f,
            Some(Shown::Raw(r)) => format!("raw {r}"),
            Some(Shown::Unknown) => "unknown".into(),
            None => "none".into(),
        }
    }

    #[test]
    fn first_file_position_in_print_order() {
        assert_eq!(at(r#"loc("f.py":3:4)"#), "f.py:3:4");
        assert_eq!(at(r#"loc("named"("g.py":5:6))"#), "g.py:5:6");
        assert_eq!(at(r#"loc(callsite("h.py":1:2 at "i.py":3:4))"#), "h.py:1:2");
        assert_eq!(at(r#"loc(callsite("nm" at "y.py":8:8))"#), "y.py:8:8");
        assert_eq!(at(r#"loc(fused["nm", "k.py":3:4])"#), "k.py:3:4");
        assert_eq!(at(r#"loc(fused<"x">["j.py":1:2])"#), "j.py:1:2");
        assert_eq!(at(r#"loc("n1"("n2"("q.py":1:1)))"#), "q.py:1:1");
        assert_eq!(at(r#"loc("f.py":3:4 to :9)"#), "f.py:3:4");
        assert_eq!(at("loc(#a)"), "alias.py:7:8");
        assert_eq!(at("loc(callsite(#n at #a))"), "alias.py:7:8");
    }

    /// Deep nesting is refused, not recursed into (20,000 levels overflowed the stack).
    #[test]
    fn deep_nesting_is_not_understood() {
        for (open, close) in [("\"a\"(", ")"), ("callsite(", " at unknown)"), ("fused[", "]")] {
            let deep = |n| format!("loc({}\"f.py\":1:2{})", open.repeat(n), close.repeat(n));
            assert_eq!(at(&deep(200)), "f.py:1:2");
            assert_eq!(at(&deep(20_000)), "none");
        }
    }

    #[test]
    fn without_a_file_position() {
        assert_eq!(at("loc(unknown)"), "unknown");
        assert_eq!(at(r#"loc("justname")"#), r#"raw loc("justname")"#);
        assert_eq!(at(r#"loc(  "a"(unknown) )"#), r#"raw loc("a")"#);
        assert_eq!(at(r#"loc(fused["a","b"])"#), r#"raw loc(fused["a", "b"])"#);
        assert_eq!(at("loc(callsite(#n at #n))"), r#"raw loc(callsite("just" at "just"))"#);
    }

    #[test]
    fn described_like_a_traceback() {
        let src = "#loc1 = loc(\"m.py\":3:4)\n#loc12 = loc(\"m.py\":9:1)\n\
                   #loc2 = loc(callsite(#loc1 at #loc12))\n";
        assert_eq!(alias_in(src, "#loc1"), Some("loc(\"m.py\":3:4)"));
        assert_eq!(alias_in(src, "#loc12"), Some("loc(\"m.py\":9:1)"));
        assert_eq!(alias_in(src, "#loc3"), None);
        let d = describe(r#"loc("jit(f)/dot_general"(#loc2))"#, &|n| alias_in(src, n)).unwrap();
        assert_eq!(d.names, ["jit(f)/dot_general"]);
        let frames: Vec<String> = d.frames.iter().map(FilePos::to_string).collect();
        assert_eq!(frames, ["m.py:3:4", "m.py:9:1"]);
        let d = describe(r#"loc(fused["a", "b"("f.py":1:2), "a"])"#, &|_| None).unwrap();
        assert_eq!((d.names.len(), d.frames.len()), (2, 1));
        assert!(describe("loc(unknown)", &|_| None).unwrap().is_empty());
    }

    /// The index answers as the scan of the text does: the first line when it defines
    /// the name, else the last definition; redefinitions, prefixes of other names,
    /// definitions not at a line start, names with spaces, a text without a newline.
    #[test]
    fn alias_index_finds_what_the_scan_finds() {
        let texts = [
            "#loc1 = loc(\"a\")\n#loc12 = loc(\"b\")\n  #loc2 = loc(\"c\")\n#loc1 = loc(\"d\")  \n",
            "#loc = loc(unknown)\nmodule {}\n#loc = loc(\"e\")\n#a = b = c\n#a  = x\n#a =\n",
            "#loc1 = loc(\"only\")",
            "x\n#loc1 = loc(\"one\")\n#loc1 = \n#ü = loc(\"u\")\n",
            "",
        ];
        let names =
            ["#loc1", "#loc12", "#loc2", "#loc", "#a", "#a ", "#a = b", "#ü", "loc1", "", "#"];
        for src in texts {
            let index = AliasLines::new(src);
            for name in names {
                assert_eq!(index.find(src, name), alias_in(src, name), "{name:?} in {src:?}");
            }
        }
    }

    #[test]
    fn not_understood() {
        assert_eq!(at("loc(#missing)"), "none");
        assert_eq!(at("loc(#cycle)"), "none");
        assert_eq!(at(r#"loc("f.py":3)"#), "none");
        assert_eq!(at(r#"loc("f.py":3:4"#), "none");
        assert_eq!(at("loc(fused[)"), "none");
        assert_eq!(at(r#"loc("unterminated)"#), "none");
    }
}
