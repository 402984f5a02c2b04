//! Where the sharding values of the source are written: a value of `crate::sharding`
//! (the one family, names decoded) with its absolute spans kept beside it for
//! diagnostics and navigation. The value is read through `Deref`, so the verifier,
//! explain and the editor read the same value the passes do, without converting.

pub use crate::sharding::{AxisRef, DimSharding, Mesh, MeshRef, TensorSharding};
use sdy_syntax::sdy::{AxisRefAst, MeshAst, PerValueAst, ShardingAst};
use sdy_syntax::Span;
use std::ops::Deref;

/// A value and where it is written (axis refs of axis lists: `manual_axes`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl Spanned<AxisRef> {
    pub fn from_ast(a: &AxisRefAst, base: u32) -> Spanned<AxisRef> {
        Spanned { value: AxisRef::from_ast(a), span: a.span.shift(base) }
    }
    /// The refs of an axis list, with their spans.
    pub fn list(v: &[AxisRefAst], base: u32) -> Vec<Spanned<AxisRef>> {
        v.iter().map(|a| Spanned::from_ast(a, base)).collect()
    }
}

/// The values of a list of spanned refs.
pub fn values(list: &[Spanned<AxisRef>]) -> Vec<AxisRef> {
    list.iter().map(|a| a.value.clone()).collect()
}

/// The values of a list of spanned refs and their spans, apart (as a sharding keeps them).
pub fn split(list: &[Spanned<AxisRef>]) -> (Vec<AxisRef>, Vec<Span>) {
    list.iter().map(|a| (a.value.clone(), a.span)).unzip()
}

/// A mesh of the source: the value, the span of its `<...>` and of each axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpannedMesh {
    pub value: Mesh,
    pub span: Span,
    pub axis_spans: Vec<Span>,
}

impl Deref for SpannedMesh {
    type Target = Mesh;
    fn deref(&self) -> &Mesh {
        &self.value
    }
}

impl SpannedMesh {
    /// Moves every span through `f` (a string's decoded text to the source).
    pub fn map_spans(&mut self, f: impl Fn(Span) -> Span) {
        self.span = f(self.span);
        self.axis_spans.iter_mut().for_each(|s| *s = f(*s));
    }
    pub fn from_ast(ast: &MeshAst, base: u32) -> SpannedMesh {
        SpannedMesh {
            value: Mesh::from_ast(ast),
            span: ast.span.shift(base),
            axis_spans: ast.axes.iter().map(|a| a.span.shift(base)).collect(),
        }
    }
}

/// A tensor sharding of the source: the value and where its parts are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpannedSharding {
    pub value: TensorSharding,
    pub span: Span,
    /// The `[...]` of the dimension shardings.
    pub dims_span: Span,
    /// `@name` of a symbol mesh, the `<...>` of an inline one.
    pub mesh_span: Span,
    /// The axes of an inline mesh.
    pub mesh_axis_spans: Vec<Span>,
    /// Each dimension sharding `{...}`.
    pub dim_spans: Vec<Span>,
    /// Each axis ref, in [`TensorSharding::all_axes`] order.
    axis_spans: Vec<Span>,
}

impl Deref for SpannedSharding {
    type Target = TensorSharding;
    fn deref(&self) -> &TensorSharding {
        &self.value
    }
}

impl AsRef<TensorSharding> for SpannedSharding {
    fn as_ref(&self) -> &TensorSharding {
        &self.value
    }
}

impl SpannedSharding {
    pub fn from_ast(s: &ShardingAst, base: u32) -> SpannedSharding {
        let (mesh_span, mesh_axis_spans) = match &s.mesh {
            sdy_syntax::sdy::MeshRefAst::Symbol { span, .. } => (span.shift(base), Vec::new()),
            sdy_syntax::sdy::MeshRefAst::Inline(m) => {
                (m.span.shift(base), m.axes.iter().map(|a| a.span.shift(base)).collect())
            }
        };
        let lists = s.dims.iter().map(|d| &d.axes[..]);
        let lists = lists
            .chain(s.replicated.as_ref().map(|r| &r.axes[..]))
            .chain(s.unreduced.as_ref().map(|u| &u.list.axes[..]));
        SpannedSharding {
            value: TensorSharding::from_ast(s),
            span: s.span.shift(base),
            dims_span: s.dims_span.shift(base),
            mesh_span,
            mesh_axis_spans,
            dim_spans: s.dims.iter().map(|d| d.span.shift(base)).collect(),
            axis_spans: lists.flatten().map(|a| a.span.shift(base)).collect(),
        }
    }

    pub fn per_value(p: &PerValueAst, base: u32) -> Vec<SpannedSharding> {
        p.shardings.iter().map(|s| SpannedSharding::from_ast(s, base)).collect()
    }

    /// Moves every span through `f` (a string's decoded text to the source).
    pub fn map_spans(&mut self, f: impl Fn(Span) -> Span) {
        for s in [&mut self.span, &mut self.dims_span, &mut self.mesh_span] {
            *s = f(*s);
        }
        let lists = [&mut self.mesh_axis_spans, &mut self.dim_spans, &mut self.axis_spans];
        lists.into_iter().flatten().for_each(|s| *s = f(*s));
    }
    /// The sharding with its value replaced by `value` (same dimensions, axes removed:
    /// the manual axes of a manual computation erased); the axes lose their spans.
    pub fn with_value(self, value: TensorSharding) -> SpannedSharding {
        SpannedSharding { value, axis_spans: Vec::new(), ..self }
    }
    /// The spans of the axes of dimension `d` (none after [`SpannedSharding::with_value`]).
    pub fn dim_axis_spans(&self, d: usize) -> &[Span] {
        let start: usize = self.value.dims[..d].iter().map(|x| x.axes.len()).sum();
        self.axis_spans.get(start..start + self.value.dims[d].axes.len()).unwrap_or(&[])
    }
    /// The spans of the replicated axes.
    pub fn replicated_spans(&self) -> &[Span] {
        let end = self.axis_spans.len().saturating_sub(self.value.unreduced.len());
        self.axis_spans.get(end.saturating_sub(self.value.replicated.len())..end).unwrap_or(&[])
    }
    /// The spans of the unreduced axes.
    pub fn unreduced_spans(&self) -> &[Span] {
        let n = self.axis_spans.len().saturating_sub(self.value.unreduced.len());
        &self.axis_spans[n..]
    }
    /// The inline mesh with its spans.
    pub fn inline_mesh(&self) -> Option<SpannedMesh> {
        match &self.value.mesh {
            MeshRef::Inline(m) => Some(SpannedMesh {
                value: m.clone(),
                span: self.mesh_span,
                axis_spans: self.mesh_axis_spans.clone(),
            }),
            MeshRef::Symbol(_) => None,
        }
    }
    /// Every axis ref with its span, in [`TensorSharding::all_axes`] order.
    pub fn axes_with_spans(&self) -> impl Iterator<Item = (&AxisRef, Span)> {
        self.value.all_axes().zip(self.axis_spans.iter().copied())
    }
}

#[cfg(test)]
mod tests {

    /// Axis refs (in messages, hovers, quick fixes) print as Shardy prints them, as
    /// do the shardings and meshes they are in, whatever escapes they were written with.
    #[test]
    fn names_print_escaped() {
        let text = r#"sdy.mesh @m = <["x"=2, "a\"b\n"=2, "c\\d"=2]>
func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x\22q":(1)2, ?}p0], replicated={"c\\d"}>}) {
  return
}"#;
        let chunk = &crate::parse_chunks(text, false)[0];
        let a = crate::analyze_chunk(text, chunk);
        let mesh = a.model.mesh("m").and_then(|m| m.mesh.as_ref()).unwrap();
        assert_eq!(mesh.to_string(), r#"<["x"=2, "a\22b\0A"=2, "c\\d"=2]>"#);
        use crate::sharding::axis::MeshAxes;
        assert_eq!(mesh.axis_position("a\"b\n"), Some(1));
        let s = crate::verify::attrs::func_arg_sharding(&a.model, a.model.funcs["f"], 0).unwrap();
        assert_eq!(s.attr(), r#"#sdy.sharding<@m, [{"x\22q":(1)2, ?}p0], replicated={"c\\d"}>"#);
        let spans: Vec<&str> = s.axes_with_spans().map(|(_, sp)| sp.text(text)).collect();
        assert_eq!(spans, [r#""x\22q":(1)2"#, r#""c\\d""#]);
        assert_eq!(s.dim_axis_spans(0).len(), 1);
        assert_eq!(s.replicated_spans()[0].text(text), r#""c\\d""#);
        assert!(s.unreduced_spans().is_empty());
    }

    /// Names compare decoded, whatever escapes they were written with, and messages
    /// print them as Shardy does (checked against the oracle).
    #[test]
    fn names_compare_decoded() {
        let check = |text: &str| {
            let chunk = &crate::parse_chunks(text, false)[0];
            let a = crate::analyze_chunk(text, chunk);
            a.diagnostics.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
        };
        let text = |axes: &str| {
            format!(
                "sdy.mesh @m = <[\"a\\22b\"=2]>\nfunc.func @f(%a: tensor<8xf32> \
                 {{sdy.sharding = #sdy.sharding<@m, [{{{axes}}}]>}}) {{\n  return\n}}\n"
            )
        };
        let duplicate = check(&text(r#""a\"b", "a\22b""#));
        assert!(duplicate[0].ends_with(r#"duplicate axis ref: "a\22b""#), "{duplicate:?}");
        let unknown = check(&text(r#""x\22y""#));
        assert!(unknown[0].ends_with(r#"unknown axis name: "x"y""#), "{unknown:?}");
    }
}
