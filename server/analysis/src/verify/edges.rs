//! Propagation-edges debug attributes (§11): `#sdy.propagation_edges<...>` is read from
//! its text (the syntax tree keeps it opaque); its own rules run at parse time, the
//! rules relating it to the op run with the op's attribute hooks.

use super::messages as msg;
use super::sharding::resolve_mesh;
use super::values::{same_mesh, value_sharding};
use super::{Ctx, Violation};
use crate::diag::DiagnosticCode as C;
use crate::model::sharding::{Mesh, TensorSharding};
use crate::model::OpId;
use crate::sharding::axis::MeshAxes;
use crate::sharding::AxisRef;
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{Attr, AttrKind, NamedAttr};

const MNEMONIC: &str = "#sdy.propagation_edges";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    Operand,
    Result,
}

/// `operand-1` / `result-0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueRef {
    pub kind: ValueKind,
    pub index: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub axis: AxisRef,
    pub source: ValueRef,
    pub targets: Vec<ValueRef>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub index: i64,
    pub entries: Vec<Entry>,
}

/// A parsed `#sdy.propagation_edges<...>` and the offset of its `<`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edges {
    pub steps: Vec<Step>,
    pub at: u32,
}

/// Whether `attr` (spans relative to `base`) is a propagation-edges attribute.
pub fn is_edges_attr(src: &str, attr: &Attr, base: u32) -> bool {
    matches!(&attr.kind, AttrKind::Sdy(s) if matches!(**s, SdyAttr::Opaque))
        && attr_text(src, attr, base).starts_with(MNEMONIC)
}

fn attr_text<'s>(src: &'s str, attr: &Attr, base: u32) -> &'s str {
    let span = attr.span.shift(base);
    src.get(span.start as usize..span.end as usize).unwrap_or("")
}

/// Reads a propagation-edges attribute; `None` when it is not one we can read.
pub fn parse(src: &str, attr: &Attr, base: u32) -> Option<Edges> {
    if !is_edges_attr(src, attr, base) {
        return None;
    }
    let text = attr_text(src, attr, base);
    let mut r = Reader { s: text.as_bytes(), pos: MNEMONIC.len() };
    r.skip_ws();
    let at = attr.span.start + base + r.pos as u32;
    r.eat(b'<')?;
    let steps = r.list(b'[', b']', Reader::step)?;
    r.eat(b'>')?;
    Some(Edges { steps, at })
}

struct Reader<'s> {
    s: &'s [u8],
    pos: usize,
}

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }
    fn eat(&mut self, b: u8) -> Option<()> {
        self.skip_ws();
        (self.s.get(self.pos) == Some(&b)).then(|| self.pos += 1)
    }
    fn eat_str(&mut self, word: &str) -> Option<()> {
        self.skip_ws();
        self.s[self.pos..].starts_with(word.as_bytes()).then(|| self.pos += word.len())
    }
    fn int(&mut self) -> Option<i64> {
        self.skip_ws();
        let start = self.pos;
        if self.s.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos]).ok()?.parse().ok()
    }
    /// `open item (',' item)* close`, possibly empty.
    fn list<T>(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        self.eat(open)?;
        let mut out = Vec::new();
        if self.eat(close).is_some() {
            return Some(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat(b',').is_none() {
                break;
            }
        }
        self.eat(close)?;
        Some(out)
    }
    fn step(&mut self) -> Option<Step> {
        self.eat(b'{')?;
        self.eat_str("step-")?;
        let index = self.int()?;
        self.eat(b'=')?;
        let entries = self.list(b'[', b']', Reader::entry)?;
        self.eat(b'}')?;
        Some(Step { index, entries })
    }
    fn entry(&mut self) -> Option<Entry> {
        self.eat(b'{')?;
        let axis = self.axis()?;
        self.eat(b'=')?;
        let source = self.value_ref()?;
        self.eat_str("->")?;
        let targets = self.list(b'[', b']', Reader::value_ref)?;
        self.eat(b'}')?;
        Some(Entry { axis, source, targets })
    }
    fn axis(&mut self) -> Option<AxisRef> {
        self.eat(b'"')?;
        let start = self.pos;
        while self.s.get(self.pos).is_some_and(|&b| b != b'"') {
            self.pos += 1;
        }
        let name =
            sdy_syntax::escape::unescape(std::str::from_utf8(&self.s[start..self.pos]).ok()?);
        self.eat(b'"')?;
        let mut sub = None;
        if self.eat(b':').is_some() {
            self.eat(b'(')?;
            let pre = self.int()?;
            self.eat(b')')?;
            sub = Some((pre, self.int()?));
        }
        Some(AxisRef { name: name.into(), sub })
    }
    fn value_ref(&mut self) -> Option<ValueRef> {
        let kind = if self.eat_str("operand").is_some() {
            ValueKind::Operand
        } else {
            self.eat_str("result")?;
            ValueKind::Result
        };
        self.eat(b'-')?;
        Some(ValueRef { kind, index: self.int()? })
    }
}

/// The attribute's own rules (parse time, no op prefix): step indices non-negative
/// and unique, targets distinct and different from the source.
pub fn verify_parsed(edges: &Edges) -> Option<String> {
    let mut seen_steps: Vec<i64> = Vec::new();
    for step in &edges.steps {
        if step.index < 0 {
            return Some(msg::edges_negative_step(step.index));
        }
        if seen_steps.contains(&step.index) {
            return Some(msg::edges_duplicate_step(step.index));
        }
        seen_steps.push(step.index);
        for entry in &step.entries {
            let mut seen: Vec<ValueRef> = Vec::new();
            for t in &entry.targets {
                if *t == entry.source {
                    return Some(msg::EDGES_SOURCE_IS_TARGET.to_string());
                }
                if seen.contains(t) {
                    return Some(msg::edges_duplicate_target(step.index, &entry.axis.name));
                }
                seen.push(*t);
            }
        }
    }
    None
}

/// The op's value an edge endpoint names, when in range.
fn endpoint_value(cx: &Ctx, op: OpId, r: ValueRef) -> Option<u32> {
    let info = cx.model.op(op);
    let index = usize::try_from(r.index).ok()?;
    match r.kind {
        ValueKind::Operand => info.operands.get(index).copied().flatten(),
        ValueKind::Result => info.results.get(index).copied(),
    }
}

/// Shardy's common mesh of shardings: empty meshes are ignored; `None` when two differ.
pub fn common_mesh<'m, S: AsRef<TensorSharding>>(
    cx: &'m Ctx,
    shardings: &'m [S],
) -> Option<&'m Mesh> {
    let mut mesh: Option<&Mesh> = None;
    for s in shardings {
        let other = resolve_mesh(cx.model, s.as_ref());
        match mesh {
            None => mesh = other,
            Some(m) if m.is_empty() => mesh = other,
            Some(m) => match other {
                Some(o) if o.is_empty() => {}
                Some(o) if same_mesh(o, m) => {}
                _ => return None,
            },
        }
    }
    mesh
}

/// `sdy.propagation_edges` on an op: referenced values carry shardings on one mesh, the
/// axes are in it, and the value indices are in range.
pub fn verify_op_attr(cx: &Ctx, id: OpId, attr: &NamedAttr) -> Result<(), Violation> {
    let op = cx.model.op(id);
    let focus = attr.span.shift(op.start);
    let Some(edges) = attr.value.as_ref().and_then(|v| parse(cx.src, v, op.start)) else {
        return Err(Violation::of(
            C::PropagationEdges,
            msg::EXPECTED_EDGES_ATTR.to_string(),
            focus,
        ));
    };
    let mut shardings = Vec::new();
    for entry in edges.steps.iter().flat_map(|s| &s.entries) {
        for r in std::iter::once(&entry.source).chain(&entry.targets) {
            if let Some(s) = endpoint_value(cx, id, *r).and_then(|v| value_sharding(cx.model, v)) {
                shardings.push(s);
            }
        }
    }
    if shardings.is_empty() {
        return Err(Violation::of(
            C::PropagationEdges,
            msg::EDGES_WITHOUT_SHARDING.to_string(),
            focus,
        ));
    }
    let Some(mesh) = common_mesh(cx, &shardings) else {
        return Err(Violation::of(
            C::PropagationEdges,
            msg::EDGES_WITHOUT_COMMON_MESH.to_string(),
            focus,
        ));
    };
    let check_index = op.name() != "sdy.func_data_flow_edge";
    for entry in edges.steps.iter().flat_map(|s| &s.entries) {
        if mesh.axis_position(&entry.axis.name).is_none() {
            return Err(Violation::of(
                C::PropagationEdges,
                msg::EDGES_AXIS_NOT_IN_MESH.to_string(),
                focus,
            ));
        }
        for r in std::iter::once(&entry.source).chain(&entry.targets).filter(|_| check_index) {
            let (kind, count) = match r.kind {
                ValueKind::Operand => ("operand", op.operands.len()),
                ValueKind::Result => ("result", op.results.len()),
            };
            if r.index < 0 || r.index as usize >= count {
                return Err(Violation::of(
                    C::PropagationEdges,
                    msg::edge_index_out_of_range(kind, count, r.index),
                    focus,
                ));
            }
        }
    }
    Ok(())
}

/// `sdy.result_propagation_edges` / `sdy.block_arg_propagation_edges`: arrays of
/// propagation-edges attributes.
pub fn verify_array_attr(cx: &Ctx, id: OpId, attr: &NamedAttr) -> Result<(), Violation> {
    let base = cx.model.op(id).start;
    let ok = match attr.value.as_ref().map(|v| &v.kind) {
        Some(AttrKind::Array(items)) => items.iter().all(|a| is_edges_attr(cx.src, a, base)),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Violation::of(
            C::PropagationEdges,
            msg::EXPECTED_EDGES_ARRAY.to_string(),
            attr.span.shift(base),
        ))
    }
}
