//! Diagnostics inside strings: what Shardy's import and verifier would say about the
//! attribute a string holds (read errors, wrong kind of attribute, then the verifier's
//! sharding and mesh rules with their messages), and GSPMD strings XLA would reject.
//! They are never part of `opt`'s MLIR view: to MLIR these are plain strings.

use super::gspmd::{self, Hlo};
use super::sdy_text::{self, Read};
use super::sites::{self, Embedded, Kind, Place};
use super::{find_mesh, read_shardings, Scope, SpanMap, StringMesh};
use crate::diag::DiagnosticCode as C;
use crate::diag::{Diagnostic, Note, Origin, Severity};
use crate::explain;
use crate::model::sharding::{MeshRef, SpannedSharding, TensorSharding};
use crate::verify::attrs::{operand_types, result_types, verify_per_value};
use crate::verify::messages as msg;
use crate::verify::parse_time::{mesh_problem, MeshProblem};
use crate::verify::sharding::{verify_sharding, TypeArg};
use crate::verify::{Ctx, Violation};
use sdy_syntax::sdy::SdyAttr;
use sdy_syntax::tree::{AttrKind, Custom, Type, TypeKind};
use sdy_syntax::Span;
use std::collections::HashMap;

pub fn diagnostics(scope: &Scope) -> Vec<Diagnostic> {
    let strings = sites::all(scope.model, scope.src, scope.module);
    if strings.is_empty() {
        return Vec::new();
    }
    let meshes: Vec<StringMesh> = strings.iter().flat_map(super::string_meshes).collect();
    // Exports repeat a few strings thousands of times: each text is read once.
    let mut reads: HashMap<&str, Read> = HashMap::new();
    for e in strings.iter().filter(|e| e.kind != Kind::Gspmd) {
        reads.entry(&e.text.text).or_insert_with(|| sdy_text::read(&e.text.text));
    }
    let shardings: HashMap<Place, &Embedded> =
        strings.iter().filter(|e| e.kind == Kind::Sharding).map(|e| (e.place, e)).collect();
    let mut mismatches = Mismatches::new();
    let mut out = Vec::new();
    for e in &strings {
        match e.kind {
            Kind::Gspmd => {
                let beside = shardings.get(&e.place).map(|s| (*s, &reads[s.text.text.as_str()]));
                check_gspmd(scope, &meshes, e, beside, &mut mismatches, &mut out)
            }
            _ => check_sdy(scope, &meshes, e, &reads[e.text.text.as_str()], &mut out),
        }
    }
    out.sort_by_key(|d| d.span.start);
    out
}

fn error(span: Span, message: String) -> Diagnostic {
    Diagnostic::error(span, message, Origin::Lint).with_code(C::StringAttribute)
}

fn from_violation(v: Violation) -> Diagnostic {
    let mut d = error(v.focus, v.message).with_code(v.code.unwrap_or(C::StringAttribute));
    d.notes = v.notes.into_iter().map(|(span, message)| Note { span, message }).collect();
    d
}

fn check_sdy(
    scope: &Scope,
    meshes: &[StringMesh],
    e: &Embedded,
    read: &Read,
    out: &mut Vec<Diagnostic>,
) {
    if !read.errors.is_empty() {
        out.extend(read.errors.iter().map(|(s, m)| error(e.text.source_span(*s), m.clone())));
        return;
    }
    let Some(value) = &read.value else { return };
    let map = SpanMap { read, e };
    let whole = map.span(value.span);
    let sdy = match &value.kind {
        AttrKind::Sdy(s) => Some(&**s),
        _ => None,
    };
    match e.kind {
        Kind::Sharding | Kind::InShardings | Kind::OutShardings => {
            let Some((per_value, shardings)) = read_shardings(read, e) else {
                out.push(error(whole, expected_kind(e)));
                return;
            };
            let resolved: Vec<SpannedSharding> =
                shardings.into_iter().map(|s| resolve(scope, meshes, s)).collect();
            if let Err(v) = verify(scope, e, per_value, &resolved, whole) {
                out.push(from_violation(v));
            }
        }
        Kind::Meshes => {
            let AttrKind::Dict(d) = &value.kind else {
                out.push(error(
                    whole,
                    msg::string_attr_kind(e.kind.key(), "a dictionary of meshes"),
                ));
                return;
            };
            for entry in &d.entries {
                let mesh = entry.value.as_ref().and_then(|v| match &v.kind {
                    AttrKind::Sdy(s) => match &**s {
                        SdyAttr::Mesh(m) => Some(m),
                        _ => None,
                    },
                    _ => None,
                });
                let Some(m) = mesh else {
                    let span = map.span(entry.span);
                    out.push(error(span, msg::string_attr_kind(e.kind.key(), "#sdy.mesh values")));
                    continue;
                };
                match mesh_problem(m, 0) {
                    Some(MeshProblem::Axis(span, text)) => out.push(error(map.span(span), text)),
                    Some(MeshProblem::Mesh(text)) => out.push(error(map.span(m.span), text)),
                    None => {}
                }
            }
        }
        Kind::Rule if !matches!(sdy, Some(SdyAttr::Rule(_))) => {
            out.push(error(whole, msg::EXPECTED_SHARDING_RULE.to_string()))
        }
        Kind::ManualAxes | Kind::Rule | Kind::Gspmd => {}
    }
}

/// The message for a string of the wrong attribute kind: the verifier's, as Shardy
/// checks the imported attribute.
fn expected_kind(e: &Embedded) -> String {
    match (e.kind, e.place) {
        (Kind::Sharding, Place::FuncArg { .. } | Place::FuncResult { .. }) => {
            msg::EXPECTED_TENSOR_SHARDING.to_string()
        }
        (Kind::Sharding, _) => msg::EXPECTED_PER_VALUE.to_string(),
        (k, _) => msg::string_attr_kind(k.key(), "a #sdy.sharding_per_value"),
    }
}

/// Binds a sharding naming a mesh of the module's `xla.sdy.meshes` to that mesh, so that
/// the verifier (which knows only `sdy.mesh` ops) checks it against it.
fn resolve(scope: &Scope, meshes: &[StringMesh], mut s: SpannedSharding) -> SpannedSharding {
    if let MeshRef::Symbol(name) = &s.value.mesh {
        if scope.model.mesh(name).is_none() {
            if let Some(m) = meshes.iter().find(|m| m.name == *name) {
                s.value.mesh = MeshRef::Inline(m.mesh.value.clone());
            }
        }
    }
    s
}

/// The verifier's checks of the shardings where the string sits, with its prefixes.
fn verify(
    scope: &Scope,
    e: &Embedded,
    per_value: bool,
    shardings: &[SpannedSharding],
    whole: Span,
) -> Result<(), Violation> {
    let cx = Ctx::new(scope.model, scope.src);
    match (e.kind, e.place) {
        (Kind::Sharding, Place::FuncArg { func, index } | Place::FuncResult { func, index }) => {
            let kind = if matches!(e.place, Place::FuncArg { .. }) { "arg" } else { "result" };
            let prefix = msg::indexed_prefix(kind, index as usize);
            let ([s], false) = (shardings, per_value) else {
                return Err(Violation::of(
                    C::StringAttribute,
                    msg::EXPECTED_TENSOR_SHARDING.into(),
                    whole,
                ));
            };
            let ty = func_value_type(scope, e.place);
            verify_sharding(scope.model, s, TypeArg::from(ty), func)
                .map_err(|v| v.prefixed(&prefix))
        }
        (_, Place::Op(op)) => {
            if !per_value {
                return Err(Violation::of(
                    C::StringAttribute,
                    msg::EXPECTED_PER_VALUE.into(),
                    whole,
                ));
            }
            let (types, kind) = match e.kind {
                Kind::InShardings => (operand_types(scope.model, op), "operand"),
                _ => (result_types(scope.model, op), "result"),
            };
            verify_per_value(&cx, shardings, &types, op, kind)
        }
        // Elsewhere (on the module, in/out shardings on a function) Shardy's import
        // ignores them.
        _ => Ok(()),
    }
}

/// The type of the function argument or result a string sits on.
fn func_value_type<'m>(scope: &Scope<'m>, place: Place) -> Option<&'m Type> {
    let (func, index, arg) = match place {
        Place::FuncArg { func, index } => (func, index, true),
        Place::FuncResult { func, index } => (func, index, false),
        _ => return None,
    };
    let Custom::Func(f) = &scope.model.op(func).node.custom else { return None };
    if arg {
        f.args.get(index as usize).map(|a| &a.ty)
    } else {
        f.results.get(index as usize).map(|r| &r.ty)
    }
}

/// The value types a GSPMD string on `place` describes (one per tuple element).
fn value_types<'m>(scope: &Scope<'m>, place: Place) -> Vec<Option<&'m Type>> {
    match place {
        Place::FuncArg { .. } | Place::FuncResult { .. } => {
            let ty = func_value_type(scope, place);
            match ty.map(|t| &*t.kind) {
                Some(TypeKind::Tuple(items)) => items.iter().map(Some).collect(),
                _ => vec![ty],
            }
        }
        Place::Op(op) => {
            let n = scope.model.op(op).results.len();
            (0..n).map(|i| scope.model.result_type(op, i)).collect()
        }
        Place::Module => Vec::new(),
    }
}

/// Hint texts found for (`xla.sdy.sharding`, `mhlo.sharding`) pairs of texts.
type Mismatches<'s> = HashMap<(&'s str, &'s str), Option<String>>;

/// `beside`: the `xla.sdy.sharding` on the same value, read.
fn check_gspmd<'s>(
    scope: &Scope,
    meshes: &[StringMesh],
    e: &'s Embedded,
    beside: Option<(&'s Embedded, &Read)>,
    mismatches: &mut Mismatches<'s>,
    out: &mut Vec<Diagnostic>,
) {
    let (hlo, span) = match gspmd::parse(&e.text.text) {
        Ok(h) => h,
        Err(p) => {
            out.push(error(e.text.source_span(p.span), p.message));
            return;
        }
    };
    let mut problems = Vec::new();
    gspmd::check(&hlo, span, &mut problems);
    if !problems.is_empty() {
        out.extend(problems.into_iter().map(|p| error(e.text.source_span(p.span), p.message)));
        return;
    }
    let types = value_types(scope, e.place);
    match &hlo {
        Hlo::Tuple(items) => {
            if !types.is_empty() && items.len() != types.len() {
                out.push(error(
                    e.text.source_span(span),
                    msg::gspmd_tuple_count(items.len(), types.len()),
                ));
                return;
            }
            for ((h, _), ty) in items.iter().zip(&types) {
                check_rank(h, *ty, e, out);
            }
        }
        h => {
            if let [ty] = types.as_slice() {
                check_rank(h, *ty, e, out);
            }
        }
    }
    if let Some((sdy, read)) = beside {
        // The same pairs of strings come back on value after value.
        let key = (sdy.text.text.as_str(), e.text.text.as_str());
        let found = match mismatches.get(&key) {
            Some(found) => found.clone(),
            None => {
                let found = mismatch(scope, meshes, &hlo, sdy, read);
                mismatches.insert(key, found.clone());
                found
            }
        };
        if let Some(exported) = found {
            let whole = e.text.source_span(Span::new(0, e.text.text.len() as u32));
            let mut d = error(whole, msg::gspmd_differs(&exported));
            d.severity = Severity::Hint;
            out.push(d);
        }
    }
}

fn check_rank(h: &Hlo, ty: Option<&Type>, e: &Embedded, out: &mut Vec<Diagnostic>) {
    let (Hlo::Tiled(t), Some(rank)) = (h, ty.and_then(Type::rank)) else { return };
    if t.data_dims().len() != rank {
        let at = e.text.source_span(t.dims_span);
        out.push(error(at, msg::gspmd_rank(t.data_dims().len(), rank)));
    }
}

/// A GSPMD string beside an `xla.sdy.sharding` on the same value should be that
/// sharding's export: what it exports to, when their layouts differ.
fn mismatch(
    scope: &Scope,
    meshes: &[StringMesh],
    hlo: &Hlo,
    sdy: &Embedded,
    read: &Read,
) -> Option<String> {
    if !read.errors.is_empty() {
        return None;
    }
    let (_, shardings) = read_shardings(read, sdy)?;
    let exported = export(scope, meshes, &shardings)?;
    let (theirs, _) = gspmd::parse(&exported).ok()?;
    let theirs = gspmd::meaning(&theirs)?;
    (Some(theirs) != gspmd::meaning(hlo)).then_some(exported)
}

/// The GSPMD string the shardings export to (a tuple for several).
fn export(scope: &Scope, meshes: &[StringMesh], shardings: &[SpannedSharding]) -> Option<String> {
    let one = |s: &TensorSharding| {
        let mesh = match &s.mesh {
            MeshRef::Inline(m) => m,
            MeshRef::Symbol(name) => &find_mesh(scope.model, meshes, name)?.value,
        };
        explain::gspmd::hlo_sharding(mesh, s).ok()
    };
    match shardings {
        [s] => one(s),
        many => {
            let parts: Option<Vec<String>> = many.iter().map(|s| one(s)).collect();
            Some(format!("{{{}}}", parts?.join(", ")))
        }
    }
}
