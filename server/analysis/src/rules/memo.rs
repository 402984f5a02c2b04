//! The registry's verdict on each op of a [`Model`], computed once per run and shared
//! by the passes that ask for it (propagation, explicit reshards, the cost view): a
//! verdict depends only on the model, the text and the options, all fixed for a run.
//! Ops alike (same name, types, attributes and facts) share one rule.
//!
//! A memo lives while a [`Scope`] of its model is alive (the scope borrows the model
//! and the text, so nothing can change under it); without one, every lookup computes
//! the verdict. Scopes nest: a scope of a model that already has one adds nothing.

use super::{create_rule, AttrCache, OpDesc, OpShardingRule, RuleLookup, RuleOptions, Unknown};
use crate::model::{Model, OpId};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

/// What the registry says about an op, its rule shared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Rule(Arc<OpShardingRule>),
    NoRule,
    Unknown(Unknown),
}

impl Verdict {
    pub fn of(lookup: RuleLookup) -> Verdict {
        match lookup {
            RuleLookup::Created(r) | RuleLookup::Existing(r) => Verdict::Rule(Arc::new(r)),
            RuleLookup::NoRule => Verdict::NoRule,
            RuleLookup::Unknown(u) => Verdict::Unknown(u),
        }
    }
    /// As [`create_rule`] returns it.
    pub fn lookup(&self) -> RuleLookup {
        match self {
            Verdict::Rule(r) => RuleLookup::Created(OpShardingRule::clone(r)),
            Verdict::NoRule => RuleLookup::NoRule,
            Verdict::Unknown(u) => RuleLookup::Unknown(u.clone()),
        }
    }
}

/// Verdicts of one model's ops.
struct Memo {
    serial: u64,
    /// The addresses of the model and the text (compared only) and their sizes.
    model: usize,
    ops: usize,
    src: (usize, usize),
    /// Per op, per `conservative` option.
    by_op: Vec<[Option<Verdict>; 2]>,
    /// Rules of the ops described so far, by a hash of name and types.
    by_desc: FxHashMap<u64, Vec<(OpDesc, bool, Verdict)>>,
    attrs: AttrCache,
}

impl Memo {
    fn is_of(&self, model: &Model, src: &str) -> bool {
        self.model == model as *const Model as usize
            && self.ops == model.ops.len()
            && self.src == (src.as_ptr() as usize, src.len())
    }
}

thread_local! {
    /// The memos of the scopes alive on this thread, innermost last.
    static MEMOS: RefCell<Vec<Memo>> = const { RefCell::new(Vec::new()) };
    static SERIAL: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Keeps the verdicts of `model`'s ops while alive (see the module docs).
pub struct Scope<'a> {
    /// The memo this scope added, if any.
    serial: Option<u64>,
    _borrows: PhantomData<(&'a Model, &'a str)>,
}

/// Opens a scope for `model` (with its text `src`).
pub fn scope<'a>(model: &'a Model, src: &'a str) -> Scope<'a> {
    let serial = MEMOS.with(|m| {
        let mut m = m.borrow_mut();
        if m.iter().any(|memo| memo.is_of(model, src)) {
            return None;
        }
        let serial = SERIAL.with(|s| {
            s.set(s.get() + 1);
            s.get()
        });
        m.push(Memo {
            serial,
            model: model as *const Model as usize,
            ops: model.ops.len(),
            src: (src.as_ptr() as usize, src.len()),
            by_op: vec![[None, None]; model.ops.len()],
            by_desc: FxHashMap::default(),
            attrs: AttrCache::default(),
        });
        Some(serial)
    });
    Scope { serial, _borrows: PhantomData }
}

/// A memo taken out of its scope ([`Scope::keep`]), to [`resume`] for the same model
/// and text: the cost view after a propagation run reads the rules the run built.
pub struct Kept(Memo);

impl Scope<'_> {
    /// Ends the scope, handing back its memo (`None` if it added none).
    pub fn keep(mut self) -> Option<Kept> {
        let serial = self.serial.take()?;
        MEMOS.with(|m| {
            let mut m = m.borrow_mut();
            let at = m.iter().position(|memo| memo.serial == serial)?;
            Some(Kept(m.remove(at)))
        })
    }
}

/// Opens a scope for `model` and `src` with the verdicts of `kept` when they are of
/// the same model and text (else a fresh scope).
pub fn resume<'a>(kept: Option<Kept>, model: &'a Model, src: &'a str) -> Scope<'a> {
    let Some(Kept(memo)) = kept.filter(|k| k.0.is_of(model, src)) else {
        return scope(model, src);
    };
    let serial = MEMOS.with(|m| {
        let mut m = m.borrow_mut();
        if m.iter().any(|memo| memo.is_of(model, src)) {
            return None;
        }
        let serial = memo.serial;
        m.push(memo);
        Some(serial)
    });
    Scope { serial, _borrows: PhantomData }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        if let Some(serial) = self.serial {
            // Removed wherever it is, so that no memo outlives the borrows of its scope.
            let _ = MEMOS.try_with(|m| m.borrow_mut().retain(|memo| memo.serial != serial));
        }
    }
}

/// The registry's verdict on op `id` of `model` (its explicit rule, if any, is not
/// looked at): [`create_rule`] of [`OpDesc::from_model`], memoized in a scope.
pub fn registry(model: &Model, id: OpId, src: &str, opts: &RuleOptions) -> Verdict {
    let hit = MEMOS.with(|m| {
        let mut m = m.borrow_mut();
        let memo = m.iter_mut().rev().find(|memo| memo.is_of(model, src))?;
        Some(match &memo.by_op[id as usize][opts.conservative as usize] {
            Some(v) => v.clone(),
            None => {
                let v = compute(model, id, src, opts, Some(memo));
                memo.by_op[id as usize][opts.conservative as usize] = Some(v.clone());
                v
            }
        })
    });
    hit.unwrap_or_else(|| compute(model, id, src, opts, None))
}

fn compute(
    model: &Model,
    id: OpId,
    src: &str,
    opts: &RuleOptions,
    memo: Option<&mut Memo>,
) -> Verdict {
    let Some(memo) = memo else {
        return Verdict::of(create_rule(&OpDesc::from_model(model, id, src), opts));
    };
    let desc = OpDesc::from_model_cached(model, id, src, &mut memo.attrs);
    let key = desc.shape_key();
    let alike = memo.by_desc.entry(key).or_default();
    if let Some((_, _, v)) =
        alike.iter().find(|(d, conservative, _)| *conservative == opts.conservative && *d == desc)
    {
        return v.clone();
    }
    let v = Verdict::of(create_rule(&desc, opts));
    alike.push((desc, opts.conservative, v.clone()));
    v
}
