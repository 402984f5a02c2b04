//! Attribute values of the IR and their MLIR spelling (the builder expands aliases to
//! it; the printer prints it).

use super::sdy::{
    AllToAllDisplay, AllToAllParam, AxisListDisplay, AxisListsDisplay, OpShardingRule, PerValueList,
};
use crate::sharding::{AxisRef, Mesh, TensorSharding};
use sdy_syntax::escape::{escape_string, symbol_ref};
use std::fmt::Write;

/// `name = value`, or a unit attribute `name` (`value == Attr::Unit`).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedAttr {
    pub name: String,
    pub value: Attr,
}

impl NamedAttr {
    pub fn new(name: impl Into<String>, value: Attr) -> NamedAttr {
        NamedAttr { name: name.into(), value }
    }
}

/// An attribute value. Builtin attributes that need context-dependent printing are
/// structured; anything else is kept as its canonical text ([`Attr::Raw`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    Unit,
    Bool(bool),
    /// An integer; `ty` is the canonical type text (`i64` when unwritten).
    Int {
        value: i128,
        ty: String,
    },
    /// A float; `text` is already canonical (`1.000000e+00`), `ty` its type.
    Float {
        text: String,
        ty: String,
    },
    /// A string (escapes decoded).
    Str(Vec<u8>),
    /// `@sym` (the name, unquoted; nested references keep their `::@` text).
    Symbol(String),
    Array(Vec<Attr>),
    Dict(Vec<NamedAttr>),
    Type(String),
    /// Printed as is (`dense<...> : T`, `array<i64: 1>`, `#stablehlo.gather<...>`, ...).
    Raw(String),
    Sharding(TensorSharding),
    PerValue(Vec<TensorSharding>),
    Rule(OpShardingRule),
    Mesh(Mesh),
    /// `{"a", "b"}` (manual axes, all_reduce axes).
    AxisList(Vec<AxisRef>),
    /// `[{}, {"x"}]` (all_gather, all_slice, reduce_scatter, sharded_to_unreduced).
    AxisLists(Vec<Vec<AxisRef>>),
    /// `[{"x"}: 0->2]`
    AllToAll(Vec<AllToAllParam>),
}

/// Writes `attr` as MLIR does; `elide` is set inside arrays, where `i64` and `f64`
/// types are not printed.
pub fn write_attr(out: &mut String, attr: &Attr, elide: bool) {
    match attr {
        Attr::Unit => out.push_str("unit"),
        Attr::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Attr::Int { value, ty } => {
            if ty == "i1" {
                out.push_str(if *value != 0 { "true" } else { "false" });
                return;
            }
            let _ = write!(out, "{value}");
            if !(elide && ty == "i64") {
                let _ = write!(out, " : {ty}");
            }
        }
        Attr::Float { text, ty } => {
            out.push_str(text);
            if !(elide && ty == "f64") {
                let _ = write!(out, " : {ty}");
            }
        }
        Attr::Str(s) => out.push_str(&escape_string(s)),
        Attr::Symbol(s) => {
            if s.contains("::@") {
                out.push('@');
                out.push_str(s);
            } else {
                out.push_str(&symbol_ref(s));
            }
        }
        Attr::Array(items) => {
            out.push('[');
            for (i, a) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_attr(out, a, true);
            }
            out.push(']');
        }
        Attr::Dict(entries) => write_dict(out, entries),
        Attr::Type(t) | Attr::Raw(t) => out.push_str(t),
        Attr::Sharding(s) => out.push_str(&s.attr()),
        Attr::PerValue(v) => {
            let _ = write!(out, "#sdy.sharding_per_value<{}>", PerValueList(v));
        }
        Attr::Rule(r) => {
            let _ = write!(out, "{r}");
        }
        Attr::Mesh(m) => {
            let _ = write!(out, "#sdy.mesh{m}");
        }
        Attr::AxisList(v) => {
            let _ = write!(out, "{}", AxisListDisplay(v));
        }
        Attr::AxisLists(v) => {
            let _ = write!(out, "{}", AxisListsDisplay(v));
        }
        Attr::AllToAll(v) => {
            let _ = write!(out, "{}", AllToAllDisplay(v));
        }
    }
}

pub fn attr_to_string(attr: &Attr) -> String {
    let mut s = String::new();
    write_attr(&mut s, attr, false);
    s
}

/// `{a = 1 : i64, b}`, entries sorted by name as MLIR's dictionaries are.
pub fn write_dict(out: &mut String, entries: &[NamedAttr]) {
    write_dict_of(out, entries.iter().collect());
}

/// [`write_dict`] of borrowed entries (a filtered dictionary, uncopied).
pub fn write_dict_of(out: &mut String, mut sorted: Vec<&NamedAttr>) {
    sorted.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    out.push('{');
    for (i, e) in sorted.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_attr_name(out, &e.name);
        if e.value != Attr::Unit {
            out.push_str(" = ");
            write_attr(out, &e.value, false);
        }
    }
    out.push('}');
}

fn write_attr_name(out: &mut String, name: &str) {
    if is_bare_identifier(name) {
        out.push_str(name);
    } else {
        out.push_str(&escape_string(name.as_bytes()));
    }
}

/// `[A-Za-z_][A-Za-z0-9_$.]*`
pub fn is_bare_identifier(s: &str) -> bool {
    let mut chars = s.bytes();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == b'_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dicts_and_scalars() {
        let d = Attr::Dict(vec![
            NamedAttr::new("z", Attr::Int { value: 1, ty: "i64".into() }),
            NamedAttr::new("a", Attr::Str(b"a\nb\"c\\".to_vec())),
            NamedAttr::new("u", Attr::Unit),
            NamedAttr::new(
                "arr",
                Attr::Array(vec![
                    Attr::Int { value: 1, ty: "i64".into() },
                    Attr::Float { text: "2.500000e+00".into(), ty: "f32".into() },
                ]),
            ),
        ]);
        assert_eq!(
            attr_to_string(&d),
            r#"{a = "a\0Ab\22c\\", arr = [1, 2.500000e+00 : f32], u, z = 1 : i64}"#
        );
    }
}
