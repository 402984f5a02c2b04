//! Rules MLIR checks while parsing, found on the model: attribute verifiers that run as
//! attributes are built (meshes M1–M6, propagation edges), static shapes of `dense`
//! literals, the type kinds of sdy ops' custom syntax, operand types against earlier
//! uses, and undeclared SSA names. They are parse errors: MLIR stops at the first.

use super::edges;
use super::generic::differ;
use super::messages as msg;
use super::values::{is_collective, is_shaped, type_string};
use super::Ctx;
use crate::diag::{Diagnostic, DiagnosticCode as C, Note, Origin, Stage};
use crate::model::{written_operand_type, OpId, OpInfo, ValueDef, ValueId};
use sdy_syntax::sdy::{MeshAst, MeshRefAst, SdyAttr};
use sdy_syntax::tree::{Attr, AttrKind, Custom, SigForm, Type, TypeKind};
use sdy_syntax::Span;

/// The parse-time checks of one op: its attributes, the type kinds of its custom
/// syntax, and its operand types (forward uses are collected for `check_module`).
pub fn check_op(cx: &Ctx, id: OpId, forward: &mut Vec<ForwardUse>, out: &mut Vec<Diagnostic>) {
    let op = cx.model.op(id);
    super::op_names::check(cx.model, op, out);
    if let Custom::Mesh { .. } = op.node.custom {
        mesh_op(cx, op, out);
    }
    for_each_attr(op, |attr, custom| walk_attr(cx, op, attr, custom, out));
    custom_type_kind(op, out);
    property_kinds(cx, op, out);
    operand_types(cx, id, forward, out);
}

/// Which module-wide parse-time check a diagnostic comes from, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ModulePart {
    Undefined,
    Forward,
    Redefinition,
    ArgumentInUse,
}

/// The module-wide parse-time checks: undeclared names, forward uses against each other
/// and their definition, redefinitions, forward references to block arguments.
pub fn check_module(cx: &Ctx, forward: Vec<ForwardUse>) -> Vec<(ModulePart, Diagnostic)> {
    let mut out = Vec::new();
    for u in &cx.model.undefined_uses {
        let span = cx.model.use_span(u);
        let mut d = Diagnostic::error(
            span,
            msg::UNDECLARED_VALUE,
            Origin::Parse { first_of_failure: true },
        )
        .with_code(C::SsaValue);
        d.focus = span;
        out.push((ModulePart::Undefined, d));
    }
    let mut tagged = |part: ModulePart, ds: Vec<Diagnostic>| {
        out.extend(ds.into_iter().map(|d| (part, d)));
    };
    let mut ds = Vec::new();
    forward_uses(cx, forward, &mut ds);
    tagged(ModulePart::Forward, std::mem::take(&mut ds));
    redefinitions(cx, &mut ds);
    tagged(ModulePart::Redefinition, std::mem::take(&mut ds));
    arguments_in_use(cx, &mut ds);
    tagged(ModulePart::ArgumentInUse, ds);
    out
}

/// A failure: its first error and the chained lines, each at its offset.
fn failure(code: C, lines: Vec<(u32, String)>, focus: Span, out: &mut Vec<Diagnostic>) {
    for (i, (at, m)) in lines.into_iter().enumerate() {
        let first_of_failure = i == 0;
        let d = Diagnostic::error(Span::empty(at), m, Origin::Parse { first_of_failure });
        let mut d = d.with_code(code);
        d.focus = focus;
        out.push(d);
    }
}

/// Calls `f` on each attribute of an op with whether it is written in the op's custom
/// syntax (errors then get the `custom op '<name>' ` prefix).
fn for_each_attr<'m>(op: &'m OpInfo, mut f: impl FnMut(&'m Attr, bool)) {
    let custom = !op.node.generic;
    op.node.inherent.iter().filter_map(|a| a.value.as_ref()).for_each(|a| f(a, custom));
    let values =
        |d: &'m sdy_syntax::tree::AttrDict| d.entries.iter().filter_map(|a| a.value.as_ref());
    op.node.attrs.iter().flat_map(values).for_each(|a| f(a, false));
    if let Custom::Func(f_) = &op.node.custom {
        let dicts = f_.args.iter().map(|a| &a.attrs).chain(f_.results.iter().map(|r| &r.attrs));
        let dicts = dicts.chain(std::iter::once(&f_.fn_attrs));
        dicts.flatten().flat_map(values).for_each(|a| f(a, false));
    }
}

/// The offset of the first token at or after `offset`.
fn next_token(src: &str, offset: u32) -> u32 {
    let rest = src.get(offset as usize..).unwrap_or("");
    offset + (rest.len() - rest.trim_start().len()) as u32
}

/// An attribute and everything inside it.
fn walk_attr(cx: &Ctx, op: &OpInfo, attr: &Attr, custom: bool, out: &mut Vec<Diagnostic>) {
    match &attr.kind {
        AttrKind::Array(items) => items.iter().for_each(|a| walk_attr(cx, op, a, custom, out)),
        AttrKind::Dict(d) => d
            .entries
            .iter()
            .filter_map(|a| a.value.as_ref())
            .for_each(|a| walk_attr(cx, op, a, custom, out)),
        AttrKind::Sdy(s) => match &**s {
            SdyAttr::Sharding(sh) => inline_mesh(cx, op, &sh.mesh, custom, out),
            // The custom `sdy.mesh` syntax is checked with its op.
            SdyAttr::Mesh(m) if !custom => standalone_mesh(cx, op, m, "", out),
            SdyAttr::PerValue(p) => {
                p.shardings.iter().for_each(|sh| inline_mesh(cx, op, &sh.mesh, custom, out))
            }
            SdyAttr::Opaque => {
                if let Some(e) = edges::parse(cx.src, attr, op.start) {
                    if let Some(m) = edges::verify_parsed(&e) {
                        failure(
                            C::PropagationEdges,
                            vec![(e.at, m)],
                            attr.span.shift(op.start),
                            out,
                        );
                    }
                }
            }
            _ => {}
        },
        AttrKind::Elements { ty: Some(ty) } => {
            let span = attr.span.shift(op.start);
            let dense = span.text(cx.src).starts_with("dense<");
            let dynamic = match &*ty.kind {
                TypeKind::Tensor { shape: None, .. } => true,
                TypeKind::Tensor { shape: Some(dims), .. } => {
                    dims.iter().any(|d| matches!(d, sdy_syntax::tree::Dim::Dynamic))
                }
                _ => false,
            };
            if dense && dynamic {
                failure(
                    C::ParseCheck,
                    vec![(span.start, msg::ELEMENTS_STATIC_SHAPE.to_string())],
                    span,
                    out,
                );
            }
        }
        _ => {}
    }
}

/// What is wrong with a mesh, M1 (an axis) or M2–M6 (the mesh).
pub(crate) enum MeshProblem {
    /// A bad axis size: the axis span (absolute).
    Axis(Span, String),
    Mesh(String),
}

/// M1–M6 on a mesh as written.
pub(crate) fn mesh_problem(m: &MeshAst, base: u32) -> Option<MeshProblem> {
    if let Some(a) = m.axes.iter().find(|a| a.size <= 0) {
        return Some(MeshProblem::Axis(a.span.shift(base), msg::axis_size_at_least_one(a.size)));
    }
    let total = m.axes.iter().fold(1i64, |acc, a| acc.saturating_mul(a.size));
    let mut ids: Vec<i64> =
        m.device_ids.as_ref().map_or_else(Vec::new, |d| d.ids.iter().map(|(v, _)| *v).collect());
    // Iota device ids are dropped while the attribute is built.
    if crate::shape::is_iota_device_ids(m.axes.iter().map(|a| a.size), &ids) {
        ids.clear();
    }
    if let Some(id) = ids.iter().find(|&&id| id < 0) {
        return Some(MeshProblem::Mesh(msg::device_id_negative(*id)));
    }
    if m.axes.is_empty() {
        return (ids.len() > 1)
            .then(|| MeshProblem::Mesh(msg::AXES_EMPTY_MANY_DEVICE_IDS.to_string()));
    }
    for (i, a) in m.axes.iter().enumerate() {
        if m.axes[..i].iter().any(|b| b.name == a.name) {
            return Some(MeshProblem::Mesh(msg::duplicate_axis_name(&a.name)));
        }
    }
    if ids.is_empty() {
        return None;
    }
    if total != ids.len() as i64 {
        return Some(MeshProblem::Mesh(msg::device_count_mismatch(total, ids.len())));
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted.iter().enumerate().any(|(i, v)| *v != i as i64) {
        return Some(MeshProblem::Mesh(msg::device_ids_not_permutation(&sorted)));
    }
    None
}

/// `sdy.mesh @m = <...>`: its mesh is parsed by the op's custom syntax.
fn mesh_op(cx: &Ctx, op: &OpInfo, out: &mut Vec<Diagnostic>) {
    let Some(attr) = op.node.inherent_attr("mesh").and_then(|a| a.value.as_ref()) else { return };
    let AttrKind::Sdy(s) = &attr.kind else { return };
    if let SdyAttr::Mesh(m) = &**s {
        standalone_mesh(cx, op, m, &msg::custom_op_prefix("sdy.mesh"), out);
    }
}

/// A mesh parsed on its own (`sdy.mesh` syntax, or `#sdy.mesh<...>`): a bad axis adds
/// the axes chain line, a bad mesh is one line.
fn standalone_mesh(cx: &Ctx, op: &OpInfo, m: &MeshAst, prefix: &str, out: &mut Vec<Diagnostic>) {
    match mesh_problem(m, op.start) {
        Some(MeshProblem::Axis(span, m)) => {
            let after = next_token(cx.src, span.end);
            failure(
                C::Mesh,
                vec![
                    (span.start, format!("{prefix}{m}")),
                    (after, format!("{prefix}{}", msg::FAILED_TO_PARSE_MESH_AXES)),
                ],
                span,
                out,
            );
        }
        Some(MeshProblem::Mesh(text)) => {
            let span = m.span.shift(op.start);
            failure(C::Mesh, vec![(span.start, format!("{prefix}{text}"))], span, out);
        }
        None => {}
    }
}

/// An inline mesh (`mesh<...>`) in a sharding; `custom`: written in the op's custom
/// syntax (errors get the `custom op '<name>' ` prefix).
fn inline_mesh(cx: &Ctx, op: &OpInfo, mesh: &MeshRefAst, custom: bool, out: &mut Vec<Diagnostic>) {
    let MeshRefAst::Inline(m) = mesh else { return };
    let Some(problem) = mesh_problem(m, op.start) else { return };
    let prefix = if custom { msg::custom_op_prefix(op.name()) } else { String::new() };
    let attr_failed = format!("{prefix}{}", msg::FAILED_TO_PARSE_MESH_ATTR);
    match problem {
        MeshProblem::Axis(span, text) => {
            let after = next_token(cx.src, span.end);
            let lines = vec![
                (span.start, format!("{prefix}{text}")),
                (after, format!("{prefix}{}", msg::FAILED_TO_PARSE_MESH_AXES)),
                (after, attr_failed),
            ];
            failure(C::Mesh, lines, span, out);
        }
        MeshProblem::Mesh(text) => {
            let span = m.span.shift(op.start);
            let after = next_token(cx.src, span.end);
            failure(
                C::Mesh,
                vec![(span.start, format!("{prefix}{text}")), (after, attr_failed)],
                span,
                out,
            );
        }
    }
}

/// The custom syntax of sdy ops parses their type as a ranked tensor or a shaped type.
fn custom_type_kind(op: &OpInfo, out: &mut Vec<Diagnostic>) {
    if op.node.generic {
        return;
    }
    let name = op.name();
    let ranked = matches!(name, "sdy.sharding_group" | "sdy.propagation_barrier");
    let shaped =
        matches!(name, "sdy.data_flow_edge" | "sdy.func_data_flow_edge") || is_collective(name);
    if !ranked && !shaped {
        return;
    }
    let Some(ty) = op.node.sig.inputs.first() else { return };
    let span = ty.span.shift(op.start);
    if ranked && !matches!(&*ty.kind, TypeKind::Tensor { shape: Some(_), .. }) && known_kind(ty) {
        let m = msg::invalid_type_kind_expected("builtin.tensor", &type_string(ty));
        let prefix = msg::custom_op_prefix(name);
        failure(C::ParseCheck, vec![(span.start, format!("{prefix}{m}"))], span, out);
    } else if shaped && !is_shaped(ty) && known_kind(ty) {
        let prefix = msg::custom_op_prefix(name);
        failure(
            C::ParseCheck,
            vec![(span.start, format!("{prefix}{}", msg::INVALID_TYPE_KIND))],
            span,
            out,
        );
    }
}

/// The sdy attribute kind a property of an sdy op must have, by op and property name.
fn property_kind(op: &str, name: &str) -> Option<fn(&SdyAttr) -> bool> {
    let sharding: fn(&SdyAttr) -> bool = |a| matches!(a, SdyAttr::Sharding(_));
    let per_value: fn(&SdyAttr) -> bool = |a| matches!(a, SdyAttr::PerValue(_));
    match (op, name) {
        ("sdy.sharding_constraint" | "sdy.reshard" | "sdy.data_flow_edge", "sharding") => {
            Some(sharding)
        }
        (n, "out_sharding") if is_collective(n) => Some(sharding),
        ("sdy.manual_computation" | "sdy.named_computation", "in_shardings" | "out_shardings") => {
            Some(per_value)
        }
        _ => None,
    }
}

/// Generic-form properties of sdy ops with the wrong kind of attribute: MLIR cannot
/// convert them when it creates the op.
fn property_kinds(cx: &Ctx, op: &OpInfo, out: &mut Vec<Diagnostic>) {
    if !op.node.generic || !op.name().starts_with("sdy.") {
        return;
    }
    let text = |a: &Attr| a.span.shift(op.start).text(cx.src).to_string();
    for prop in &op.node.inherent {
        let (Some(is_kind), Some(value)) = (property_kind(op.name(), &prop.name), &prop.value)
        else {
            continue;
        };
        let ok = match &value.kind {
            AttrKind::Sdy(s) => is_kind(s),
            AttrKind::AliasRef(_) => true,
            _ => false,
        };
        if ok {
            continue;
        }
        let mut entries: Vec<(&str, String)> = op
            .node
            .inherent
            .iter()
            .map(|p| (&*p.name, p.value.as_ref().map_or_else(String::new, text)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let dict = entries
            .iter()
            .map(|(n, v)| if v.is_empty() { n.to_string() } else { format!("{n} = {v}") })
            .collect::<Vec<_>>()
            .join(", ");
        let m =
            msg::invalid_properties(&format!("{{{dict}}}"), op.name(), &prop.name, &text(value));
        let mut d =
            Diagnostic::error(Span::empty(op.loc()), m, Origin::Parse { first_of_failure: true })
                .with_code(C::ParseCheck);
        d.focus = value.span.shift(op.start);
        d.stage = Some(Stage::ParseAt(op.span().end));
        out.push(d);
        return;
    }
}

/// Types whose kind we know for sure (not aliases).
fn known_kind(ty: &sdy_syntax::tree::Type) -> bool {
    !matches!(&*ty.kind, TypeKind::Alias(_))
}

/// Ops whose written types are the types of their operands: generic form, sdy ops,
/// returns and calls, StableHLO ops written with a function type, and the StableHLO
/// ops whose custom syntax writes one type for all operands and the result.
fn types_operands(op: &OpInfo) -> bool {
    let name = op.name();
    op.node.generic
        || name.starts_with("sdy.")
        || matches!(name, "func.return" | "func.call" | "stablehlo.return")
        || match name.strip_prefix("stablehlo.") {
            // Not the ops that interleave operands with their init values (but the
            // pretty `reduce`, mapped by `ReduceOrder`).
            Some("reduce_window" | "scatter" | "select_and_scatter") => false,
            // `stablehlo.while(%iterArg = %x, ...) : T, ...`: one type per operand.
            Some("while") => true,
            Some(n) => op.node.sig.form == SigForm::Function || same_operands_and_result_type(n),
            None => false,
        }
}

/// StableHLO ops printed with `custom<SameOperandsAndResultType>`: `: T` types every
/// operand and the result (not `stablehlo.tuple`, whose one type is the result's).
fn same_operands_and_result_type(op: &str) -> bool {
    matches!(
        op,
        "abs"
            | "add"
            | "and"
            | "atan2"
            | "cbrt"
            | "ceil"
            | "clamp"
            | "convert"
            | "cosine"
            | "count_leading_zeros"
            | "divide"
            | "exponential"
            | "exponential_minus_one"
            | "floor"
            | "log"
            | "log_plus_one"
            | "logistic"
            | "maximum"
            | "minimum"
            | "multiply"
            | "negate"
            | "not"
            | "optimization_barrier"
            | "or"
            | "popcnt"
            | "power"
            | "reduce_precision"
            | "remainder"
            | "round_nearest_afz"
            | "round_nearest_even"
            | "rsqrt"
            | "shift_left"
            | "shift_right_arithmetic"
            | "shift_right_logical"
            | "sign"
            | "sine"
            | "sqrt"
            | "subtract"
            | "tan"
            | "tanh"
            | "xor"
    )
}

/// A typed use of a value that is not defined yet where MLIR resolves it (a forward
/// reference): the parser gives it a placeholder of the written type, checked against
/// later uses and against the definition.
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardUse {
    pub value: ValueId,
    /// Where the parser resolves the use: the end of the using op.
    pub at: u32,
    pub span: Span,
    pub written: Type,
    pub name: String,
}

/// An operand written with another type than the value's: MLIR's parser rejects the use
/// when it resolves the op's operands, at the end of the op.
fn operand_types(cx: &Ctx, id: OpId, forward: &mut Vec<ForwardUse>, out: &mut Vec<Diagnostic>) {
    let op = cx.model.op(id);
    if !types_operands(op) {
        return;
    }
    let at = cx.model.use_time(id);
    let reduce = reduce_operand_order(op);
    for (i, operand) in op.operands.iter().enumerate() {
        let Some(v) = *operand else { continue };
        let Some(written) = written_operand_type(&op.node, reduce.map_or(i, |n| n.of(i))) else {
            continue;
        };
        let use_ref = &op.node.operands[i];
        let use_span = use_ref.span.shift(op.start);
        let name = || match use_ref.index {
            Some(k) => format!("{}#{k}", use_ref.name),
            None => use_ref.name.to_string(),
        };
        if cx.model.def_time(v) >= at {
            let written = written.clone();
            forward.push(ForwardUse { value: v, at, span: use_span, written, name: name() });
            continue;
        }
        let value = cx.model.value(v);
        let Some(def) = value.ty.as_ref() else { continue };
        if !differ(written, def) {
            continue;
        }
        let m = msg::value_type_mismatch(&name(), &type_string(written), &type_string(def));
        out.push(parse_error_at(at, use_span, m, value.span, msg::PRIOR_USE_HERE.to_string()));
    }
}

/// The pretty `stablehlo.reduce(%in0 init: %init0), (%in1 init: %init1)` writes its
/// operands pairwise, its function type inputs first then init values.
#[derive(Clone, Copy)]
struct ReduceOrder(usize);

impl ReduceOrder {
    /// The index in the signature of the `i`-th operand as written.
    fn of(self, i: usize) -> usize {
        if i.is_multiple_of(2) {
            i / 2
        } else {
            self.0 + i / 2
        }
    }
}

fn reduce_operand_order(op: &OpInfo) -> Option<ReduceOrder> {
    let n = op.operands.len();
    (op.name() == "stablehlo.reduce" && !op.node.generic && n.is_multiple_of(2))
        .then_some(ReduceOrder(n / 2))
}

/// A parse error located at `span` that MLIR reports when its parser reaches `at`, with
/// a note at `note_at`.
fn parse_error_at(at: u32, span: Span, message: String, note_at: Span, note: String) -> Diagnostic {
    let mut d = Diagnostic::error(
        Span::empty(span.start),
        message,
        Origin::Parse { first_of_failure: true },
    )
    .with_code(C::SsaValue);
    d.focus = span;
    d.stage = Some(Stage::ParseAt(at));
    d.notes.push(Note { span: Span::empty(note_at.start), message: note });
    d
}

/// Forward references: each later forward use against the first one's type, then the
/// definition against it (MLIR defines an op's results after resolving its operands).
fn forward_uses(cx: &Ctx, mut uses: Vec<ForwardUse>, out: &mut Vec<Diagnostic>) {
    uses.sort_by_key(|u| (u.value, u.at, u.span.start));
    for group in uses.chunk_by(|a, b| a.value == b.value) {
        let first = &group[0];
        for u in &group[1..] {
            if differ(&u.written, &first.written) {
                let m = msg::value_type_mismatch(
                    &u.name,
                    &type_string(&u.written),
                    &type_string(&first.written),
                );
                out.push(parse_error_at(u.at, u.span, m, first.span, msg::PRIOR_USE_HERE.into()));
            }
        }
        let value = cx.model.value(first.value);
        let (Some(def), ValueDef::Result { op, index }) = (value.ty.as_ref(), &value.def) else {
            continue;
        };
        if !differ(&first.written, def) {
            continue;
        }
        // The name of the result group and the index in it: `%0#1`, `%5#0`.
        let info = cx.model.op(*op);
        let mut k = *index;
        let Some(group) = info.node.results.iter().find(|g| {
            let found = k < g.count;
            if !found {
                k -= g.count;
            }
            found
        }) else {
            continue;
        };
        let m = msg::definition_type_mismatch(&format!("{}#{k}", group.name), &type_string(def));
        let note = msg::previously_used_with_type(&type_string(&first.written));
        out.push(parse_error_at(
            cx.model.def_time(first.value) + 1,
            value.span,
            m,
            first.span,
            note,
        ));
    }
}

/// Forward references to block arguments: MLIR rejects the region's arguments as
/// already in use when the region starts.
fn arguments_in_use(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for u in &cx.model.forward_references {
        let Some(Some(v)) = cx.model.op(u.op).operands.get(u.operand as usize) else { continue };
        let value = cx.model.value(*v);
        if let ValueDef::BlockArg { .. } = value.def {
            let m = msg::region_argument_in_use(&value.name);
            let note = msg::PREVIOUSLY_REFERENCED_HERE.to_string();
            let at = cx.model.use_span(u);
            out.push(parse_error_at(cx.model.def_time(*v), value.span, m, at, note));
        }
    }
}

/// Names defined again while an earlier definition is in scope: at the end of the op for
/// results, where the region starts for block arguments.
fn redefinitions(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for &(new, old) in &cx.model.redefinitions {
        let value = cx.model.value(new);
        let name = value.name.split('#').next().unwrap_or("");
        let (at, m, note) = match value.def {
            ValueDef::Result { .. } => {
                (cx.model.def_time(new) + 1, msg::redefinition(name), msg::PREVIOUSLY_DEFINED_HERE)
            }
            ValueDef::BlockArg { .. } => (
                cx.model.def_time(new),
                msg::region_argument_in_use(name),
                msg::PREVIOUSLY_REFERENCED_HERE,
            ),
        };
        out.push(parse_error_at(at, value.span, m, cx.model.value(old).span, note.into()));
    }
}
