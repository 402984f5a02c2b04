//! Rename: SSA values (a result group as a whole), mesh and function symbols, mesh axes
//! (in the mesh, every sharding on it and every axis list tied to it).
//!
//! A rename is refused, with the reason, when the text after it could parse or verify
//! differently: an invalid new name, one already in use where it would be seen, an axis
//! list whose op mixes meshes, or a mesh that Shardy treats as the same mesh as another.

use super::{entity_at, references, value_group, Ctx, Entity};
use crate::ir::attr::is_bare_identifier;
use crate::model::{Model, OpId, ValueDef, ValueId};
use crate::query::occurrences::{list_meshes, op_occurrences, AxisScope, Occurrence};
use crate::query::AxisOf;
use sdy_syntax::tree::{Attr, AttrDict, AttrKind, Custom, Op, StmtKind};
use sdy_syntax::Span;

/// What a rename at a position would change: the name's range there (without `@` or
/// quotes) and its current text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenameTarget {
    pub span: Span,
    pub placeholder: String,
}

/// Replace `span` by `text`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edit {
    pub span: Span,
    pub text: String,
}

/// What is renamed, validated.
enum Plan {
    /// A value group; `name` is its name as defined (`%0`, `%arg1`).
    Values {
        group: Vec<ValueId>,
        name: String,
    },
    Symbol {
        name: String,
    },
    Axis {
        of: AxisOf,
        name: String,
    },
}

/// The range and current name of what can be renamed at `offset`; `Ok(None)` when
/// nothing is there, `Err` (the reason) when the thing there cannot be renamed.
pub fn prepare_rename(cx: &Ctx, offset: u32) -> Result<Option<RenameTarget>, String> {
    let Some(found) = entity_at(cx, offset) else { return Ok(None) };
    let plan = plan(cx, found.entity)?;
    let text = text_of(cx.src, found.span);
    let (span, placeholder) = match &plan {
        // At a use of `%0#1`, the name is the `%0` part.
        Plan::Values { name, .. } if text.starts_with(name.as_str()) => {
            (Span::new(found.span.start, found.span.start + name.len() as u32), name.clone())
        }
        Plan::Values { .. } => return Err("cannot rename this value here".to_string()),
        Plan::Symbol { name } => (unquoted(found.span, text), name.clone()),
        Plan::Axis { name, .. } => (unquoted(found.span, text), name.clone()),
    };
    Ok(Some(RenameTarget { span, placeholder }))
}

/// The edits renaming what is at `offset` to `new_name`; `Ok(None)` when nothing is
/// there, `Err` (the reason) when it cannot be renamed or `new_name` cannot be used.
pub fn rename(cx: &Ctx, offset: u32, new_name: &str) -> Result<Option<Vec<Edit>>, String> {
    let Some(found) = entity_at(cx, offset) else { return Ok(None) };
    let edits = match plan(cx, found.entity)? {
        Plan::Values { group, name } => rename_values(cx.model, &group, &name, new_name)?,
        Plan::Symbol { name } => rename_symbol(cx, &name, new_name)?,
        Plan::Axis { of, name } => rename_axis(cx, of, &name, new_name)?,
    };
    let mut edits = edits;
    edits.sort_unstable();
    edits.dedup();
    Ok(Some(edits))
}

/// Checks that the entity can be renamed at all.
fn plan(cx: &Ctx, entity: Entity) -> Result<Plan, String> {
    match entity {
        Entity::Values(values) => {
            let first = *values.first().ok_or("no value here")?;
            let group = value_group(cx.model, first);
            let name = text_of(cx.src, cx.model.value(first).span).to_string();
            Ok(Plan::Values { group, name })
        }
        Entity::Symbol(name) => {
            if cx.model.mesh(&name).is_none() && !cx.model.funcs.contains_key(&name) {
                return Err(format!("`@{name}` is not defined in this module"));
            }
            if let Some(holder) = string_naming(cx, &format!("@{name}")) {
                return Err(format!(
                    "a string attribute of `{holder}` names `@{name}` (a round-trip export): \
                     rename it there by hand"
                ));
            }
            Ok(Plan::Symbol { name })
        }
        Entity::Axis { of, name } => {
            check_axis(cx, &of, &name)?;
            Ok(Plan::Axis { of, name })
        }
    }
}

/// The text of a span (empty if the span is not in the text).
fn text_of(src: &str, span: Span) -> &str {
    src.get(span.start as usize..span.end as usize).unwrap_or("")
}

/// The range of a name without its `@` and quotes.
fn unquoted(span: Span, text: &str) -> Span {
    let lead = text.bytes().take_while(|&b| b == b'@' || b == b'"').count() as u32;
    let trail = u32::from(text.len() > lead as usize && text.ends_with('"'));
    Span::new(span.start + lead, span.end - trail)
}

// ----- SSA values -----

fn rename_values(
    model: &Model,
    group: &[ValueId],
    old: &str,
    new_name: &str,
) -> Result<Vec<Edit>, String> {
    let suffix = new_name.strip_prefix('%').unwrap_or(new_name);
    if !is_ssa_suffix(suffix) {
        return Err(format!(
            "`{new_name}` is not an SSA value name (`%` then digits, or a letter or one of \
             `$._-` followed by letters, digits and `$._-`)"
        ));
    }
    let new = format!("%{suffix}");
    if new != old {
        check_value_name_free(model, group, &new)?;
    }
    let mut edits = Vec::new();
    for &v in group {
        let info = model.value(v);
        edits.push(Edit { span: info.span, text: new.clone() });
        for u in &info.uses {
            // A use is `%name` or `%name#k`: only the name changes.
            let at = model.use_span(u).start;
            let span = Span::new(at, at + old.len() as u32);
            edits.push(Edit { span, text: new.clone() });
        }
    }
    Ok(edits)
}

/// `digit+` or `(letter | [$._-]) (letter | digit | [$._-])*` (MLIR's `suffix-id`).
fn is_ssa_suffix(s: &str) -> bool {
    let b = s.as_bytes();
    let punct = |c: u8| matches!(c, b'$' | b'.' | b'_' | b'-');
    match b.first() {
        None => false,
        Some(c) if c.is_ascii_digit() => b.iter().all(u8::is_ascii_digit),
        Some(_) => b.iter().all(|&c| c.is_ascii_alphanumeric() || punct(c)),
    }
}

/// Where names are looked up: the region holding a definition (`None`: the module
/// body). MLIR's parser sees a region's names in every region nested in it.
type Scope = Option<(OpId, u32)>;

fn op_scope(model: &Model, op: OpId) -> Scope {
    let info = model.op(op);
    info.parent.map(|p| (p, info.region))
}

fn value_scope(model: &Model, v: ValueId) -> Scope {
    match model.value(v).def {
        ValueDef::Result { op, .. } => op_scope(model, op),
        ValueDef::BlockArg { op, region, .. } => Some((op, region)),
    }
}

/// The scope and every scope enclosing it.
fn scope_chain(model: &Model, mut s: Scope) -> Vec<Scope> {
    let mut chain = vec![s];
    while let Some((op, _)) = s {
        s = op_scope(model, op);
        chain.push(s);
    }
    chain
}

/// Whether a name defined in one scope is seen in the other (one encloses the other).
fn related(model: &Model, a: Scope, b: Scope) -> bool {
    scope_chain(model, a).contains(&b) || scope_chain(model, b).contains(&a)
}

/// The new name may not be defined, or used without a definition, where the renamed
/// values are seen or where their region sees it.
fn check_value_name_free(model: &Model, group: &[ValueId], new: &str) -> Result<(), String> {
    let Some(&first) = group.first() else { return Ok(()) };
    let scope = value_scope(model, first);
    for (v, info) in model.values.iter().enumerate() {
        let v = v as ValueId;
        if info.name.split('#').next() == Some(new)
            && !group.contains(&v)
            && related(model, scope, value_scope(model, v))
        {
            return Err(format!("`{new}` already names a value in scope here"));
        }
    }
    for u in &model.undefined_uses {
        let used = model.op(u.op).node.operands.get(u.operand as usize).map(|r| r.name.as_str());
        if used == Some(new) && related(model, scope, op_scope(model, u.op)) {
            return Err(format!("`{new}` is used in scope here (undefined)"));
        }
    }
    Ok(())
}

// ----- symbols -----

fn rename_symbol(cx: &Ctx, old: &str, new_name: &str) -> Result<Vec<Edit>, String> {
    let new = new_name.strip_prefix('@').unwrap_or(new_name);
    if !is_bare_identifier(new) {
        return Err(format!(
            "`{new_name}` is not a symbol name (a letter or `_`, then letters, digits and `_$.`)"
        ));
    }
    let taken = cx.model.mesh(new).is_some() || cx.model.funcs.contains_key(new);
    if new != old && taken {
        return Err(format!("`@{new}` is already defined in this module"));
    }
    let refs = references(cx, &Entity::Symbol(old.to_string()), true);
    Ok(refs
        .into_iter()
        .map(|r| {
            // The `sym_name = "m"` of a generic `sdy.mesh` is a string.
            let text = if text_of(cx.src, r.span).starts_with('"') {
                format!("\"{new}\"")
            } else {
                format!("@{new}")
            };
            Edit { span: r.span, text }
        })
        .collect())
}

// ----- axes -----

/// Whether renaming axis `name` of `of` keeps every sharding and axis list valid.
fn check_axis(cx: &Ctx, of: &AxisOf, name: &str) -> Result<(), String> {
    let model = cx.model;
    match of {
        AxisOf::List(op) => {
            let meshes: Vec<String> =
                list_meshes(model, *op).iter().map(|m| format!("`@{m}`")).collect();
            Err(if meshes.is_empty() {
                format!("no mesh of `{}` defines axis \"{name}\"", model.op(*op).name())
            } else {
                format!(
                    "the shardings of `{}` are on several meshes ({}): the axis list \
                     belongs to none of them alone",
                    model.op(*op).name(),
                    meshes.join(", ")
                )
            })
        }
        AxisOf::Inline(mesh) => {
            // An axis list of the op holding the inline mesh would name the axis too.
            let mut holders: Vec<OpId> = Vec::new();
            for id in 0..model.ops.len() as OpId {
                op_occurrences(model, id, &mut |o| {
                    if matches!(o, Occurrence::Axis { scope: AxisScope::Inline(s), .. } if s == *mesh)
                        && !holders.contains(&id)
                    {
                        holders.push(id);
                    }
                });
            }
            for &id in &holders {
                if op_lists_name(model, id, name) {
                    return Err(format!(
                        "an axis list of `{}` names \"{name}\" too",
                        model.op(id).name()
                    ));
                }
            }
            Ok(())
        }
        AxisOf::Mesh(m) => {
            let sym =
                model.mesh(m).ok_or_else(|| format!("`@{m}` is not defined in this module"))?;
            let mesh = sym.mesh.as_ref().ok_or_else(|| format!("`@{m}` cannot be read"))?;
            if mesh.axis(name).is_none() {
                return Err(format!("`@{m}` has no axis \"{name}\""));
            }
            // Shardy compares meshes by value: a mesh equal to this one can meet it on an
            // op, and would not be equal any more.
            let twin = model
                .meshes
                .iter()
                .find(|o| o.name != *m && o.mesh.as_ref().is_some_and(|om| same_mesh(om, mesh)));
            if let Some(twin) = twin {
                return Err(format!(
                    "`@{}` has the same axes as `@{m}`, and Shardy treats the two as one mesh: \
                     rename the axis in both by hand",
                    twin.name
                ));
            }
            if let Some(holder) = string_naming(cx, &format!("@{m}")) {
                return Err(format!(
                    "a string attribute of `{holder}` names `@{m}` (a round-trip export): \
                     rename the axis there by hand"
                ));
            }
            if let Some(id) = debug_attr_naming(cx, name) {
                return Err(format!(
                    "a propagation debug attribute of `{}` names \"{name}\" (edit it by hand)",
                    model.op(id).name()
                ));
            }
            for id in 0..model.ops.len() as OpId {
                let meshes = list_meshes(model, id);
                if meshes.len() > 1
                    && meshes.contains(&m.as_str())
                    && op_lists_name(model, id, name)
                {
                    return Err(format!(
                        "an axis list of `{}` names \"{name}\" while its shardings are on \
                         several meshes",
                        model.op(id).name()
                    ));
                }
            }
            Ok(())
        }
    }
}

/// The op carrying a debug attribute of propagation (`sdy.sharding_origins`,
/// `sdy.propagation_edges`, their `block_arg_`/`result_` forms) that mentions `axis`:
/// those keep axis names in text a rename does not follow.
fn debug_attr_naming(cx: &Ctx, axis: &str) -> Option<OpId> {
    let is_debug = |n: &str| {
        n.starts_with("sdy.")
            && (n.ends_with("sharding_origins") || n.ends_with("propagation_edges"))
    };
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-');
    for (id, info) in cx.model.ops.iter().enumerate() {
        let node = &info.node;
        let mut dicts: Vec<&AttrDict> = node.attrs.iter().collect();
        if let Custom::Func(f) = &node.custom {
            dicts.extend(f.args.iter().filter_map(|a| a.attrs.as_ref()));
            dicts.extend(f.results.iter().filter_map(|r| r.attrs.as_ref()));
        }
        for a in dicts.iter().flat_map(|d| &d.entries).filter(|a| is_debug(&a.name)) {
            let text = text_of(cx.src, a.span.shift(info.start)).as_bytes();
            let named = memchr::memmem::find_iter(text, axis.as_bytes()).any(|i| {
                let before = i.checked_sub(1).map(|j| text[j]);
                let after = text.get(i + axis.len()).copied();
                !before.is_some_and(word) && !after.is_some_and(word)
            });
            if named {
                return Some(id as OpId);
            }
        }
    }
    None
}

/// The op (or `builtin.module`) with a string attribute mentioning `needle` as a whole
/// word (`@mesh` in `"#sdy.sharding<@mesh, ...>"`): text a rename does not follow.
fn string_naming<'a>(cx: &Ctx<'a>, needle: &str) -> Option<&'a str> {
    fn in_attr(a: &Attr, needle: &str) -> bool {
        match &a.kind {
            AttrKind::String { raw } => mentions(raw.as_bytes(), needle),
            AttrKind::Array(items) => items.iter().any(|i| in_attr(i, needle)),
            AttrKind::Dict(d) => in_dict(d, needle),
            _ => false,
        }
    }
    fn in_dict(d: &AttrDict, needle: &str) -> bool {
        d.entries.iter().filter_map(|e| e.value.as_ref()).any(|v| in_attr(v, needle))
    }
    fn in_op(node: &Op, needle: &str) -> bool {
        let mut dicts: Vec<&AttrDict> = node.attrs.iter().collect();
        match &node.custom {
            Custom::Func(f) => {
                dicts.extend(f.args.iter().filter_map(|a| a.attrs.as_ref()));
                dicts.extend(f.results.iter().filter_map(|r| r.attrs.as_ref()));
                dicts.extend(f.fn_attrs.as_ref());
            }
            Custom::Module(m) => dicts.extend(m.attrs.as_ref()),
            _ => {}
        }
        let inherent = node.inherent.iter().filter_map(|a| a.value.as_ref());
        dicts.into_iter().any(|d| in_dict(d, needle))
            || inherent.into_iter().any(|v| in_attr(v, needle))
    }
    // Most names are in no string at all.
    memchr::memmem::find(cx.src.as_bytes(), needle.as_bytes())?;
    let module =
        cx.top.iter().find(|c| c.op.kind == StmtKind::Op && c.op.full_name() == "builtin.module");
    if module.is_some_and(|m| in_op(m.op, needle)) {
        return Some("builtin.module");
    }
    cx.model.ops.iter().find(|info| in_op(&info.node, needle)).map(|info| info.name())
}

/// Whether `text` holds `needle` not followed by an identifier character.
fn mentions(text: &[u8], needle: &str) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-');
    memchr::memmem::find_iter(text, needle.as_bytes())
        .any(|i| !text.get(i + needle.len()).is_some_and(|&c| word(c)))
}

/// Whether an axis list of op `id` names axis `name`.
fn op_lists_name(model: &Model, id: OpId, name: &str) -> bool {
    let mut hit = false;
    op_occurrences(model, id, &mut |o| {
        hit |=
            matches!(o, Occurrence::Axis { scope: AxisScope::List(_), name: n, .. } if n == name);
    });
    hit
}

fn same_mesh(a: &crate::model::sharding::Mesh, b: &crate::model::sharding::Mesh) -> bool {
    a.device_ids == b.device_ids
        && a.axes.len() == b.axes.len()
        && a.axes.iter().zip(&b.axes).all(|(x, y)| x.0 == y.0 && x.1 == y.1)
}

fn rename_axis(cx: &Ctx, of: AxisOf, old: &str, new: &str) -> Result<Vec<Edit>, String> {
    if new.is_empty() || new.chars().any(|c| c == '"' || c == '\\' || c.is_control()) {
        return Err(format!(
            "`{new}` cannot be an axis name here (it must be non-empty, without quotes, \
             backslashes or control characters)"
        ));
    }
    if new != old {
        let taken = match &of {
            AxisOf::Mesh(m) => {
                let mesh = cx.model.mesh(m).and_then(|s| s.mesh.as_ref());
                mesh.is_some_and(|m| m.axis(new).is_some())
            }
            // An inline mesh: whether it defines the new name.
            other => {
                let e = Entity::Axis { of: other.clone(), name: new.to_string() };
                references(cx, &e, true).iter().any(|r| r.is_def)
            }
        };
        if taken {
            return Err(format!("the mesh already has an axis \"{new}\""));
        }
    }
    let refs = references(cx, &Entity::Axis { of, name: old.to_string() }, true);
    Ok(refs.into_iter().map(|r| Edit { span: r.span, text: format!("\"{new}\"") }).collect())
}
