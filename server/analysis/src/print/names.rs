//! SSA value names, assigned exactly like MLIR's `SSANameState`:
//!
//! * A region is numbered as a whole before any region nested in it: its entry block
//!   arguments get `%argN`, other block arguments and op results `%N` (one number per op,
//!   `%0:2` for several results), in order.
//! * Every region nested in the ops of that region then starts from the counters
//!   (value, argument, name-conflict) as they were after the parent region: sibling
//!   regions reuse the same numbers, and numbering in a nested region does not advance
//!   the parent's counters.
//! * Name hints (`OpAsmOpInterface`): `stablehlo.constant` results are `%c` (integer
//!   elements) or `%cst`; `stablehlo.while` block arguments are `%iterArg`; ops with
//!   several named ODS results use those names (`%output_state, %output`). A hint
//!   already visible in the enclosing regions gets `_N` from the conflict counter.

use crate::ir::{Module, Op, Region, ValueId};
use crate::types::element_type;
use std::collections::HashSet;

/// The printed name of a value: `%<text>` or, in a result group of several values,
/// `%<text>#<index>` when used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueName {
    pub text: String,
    /// Index in its result group (`None` for block arguments).
    pub index: Option<u32>,
    /// Size of its result group.
    pub group: u32,
}

pub struct Names {
    pub values: Vec<Option<ValueName>>,
}

impl Names {
    /// `%name` or `%name#i` as a use.
    pub fn use_of(&self, v: ValueId) -> String {
        match self.values.get(v as usize).and_then(|n| n.as_ref()) {
            Some(n) => match n.index {
                Some(i) if n.group > 1 => format!("%{}#{i}", n.text),
                _ => format!("%{}", n.text),
            },
            None => "<<UNKNOWN SSA VALUE>>".to_string(),
        }
    }
    /// The result list of an op (`%0:2`, `%output_state, %output`), without ` = `.
    pub fn results_of(&self, results: &[ValueId]) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < results.len() {
            let n = self.values.get(results[i] as usize).and_then(|n| n.as_ref());
            if i > 0 {
                out.push_str(", ");
            }
            match n {
                Some(n) => {
                    out.push('%');
                    out.push_str(&n.text);
                    if n.group > 1 {
                        out.push_str(&format!(":{}", n.group));
                    }
                    i += n.group.max(1) as usize;
                }
                None => {
                    out.push_str("<<UNKNOWN SSA VALUE>>");
                    i += 1;
                }
            }
        }
        out
    }
}

struct Namer<'m> {
    module: &'m Module,
    values: Vec<Option<ValueName>>,
    scopes: Vec<HashSet<String>>,
    next_value: u32,
    next_arg: u32,
    next_conflict: u32,
}

/// Names every value of the module.
pub fn assign(module: &Module) -> Names {
    let mut n = Namer {
        module,
        values: vec![None; module.values.len()],
        scopes: vec![HashSet::new()],
        next_value: 0,
        next_arg: 0,
        next_conflict: 0,
    };
    // (region, parent op name, counters, number of scopes that stay).
    let mut stack: Vec<(&Region, &str, [u32; 3], usize)> = Vec::new();
    n.number_op(&module.top);
    for r in module.top.regions.iter() {
        stack.push((r, &module.top.name, [0, 0, 0], 1));
    }
    while let Some((region, parent, counters, depth)) = stack.pop() {
        [n.next_value, n.next_arg, n.next_conflict] = counters;
        n.scopes.truncate(depth);
        n.scopes.push(HashSet::new());
        n.number_region(region, parent);
        let c = [n.next_value, n.next_arg, n.next_conflict];
        for b in &region.blocks {
            for op in &b.ops {
                for r in &op.regions {
                    stack.push((r, &op.name, c, depth + 1));
                }
            }
        }
    }
    Names { values: n.values }
}

impl Namer<'_> {
    fn is_set(&self, v: ValueId) -> bool {
        self.values.get(v as usize).is_some_and(|n| n.is_some())
    }

    fn set(&mut self, v: ValueId, name: ValueName) {
        if let Some(slot) = self.values.get_mut(v as usize) {
            *slot = Some(name);
        }
    }

    /// `setValueName` for a value that is not an op result in a group.
    fn set_named(&mut self, v: ValueId, hint: &str) -> String {
        let text = if hint.is_empty() {
            let id = self.next_value;
            self.next_value += 1;
            id.to_string()
        } else {
            self.unique(hint)
        };
        self.set(v, ValueName { text: text.clone(), index: None, group: 1 });
        text
    }

    fn used(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    /// `uniqueValueName`: the hint, or `hint_N` with the next free conflict number.
    fn unique(&mut self, hint: &str) -> String {
        let hint = sanitize(hint);
        let name = if !self.used(&hint) {
            hint
        } else {
            loop {
                let probe = format!("{hint}_{}", self.next_conflict);
                self.next_conflict += 1;
                if !self.used(&probe) {
                    break probe;
                }
            }
        };
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.clone());
        }
        name
    }

    fn number_region(&mut self, region: &Region, parent: &str) {
        if parent == "stablehlo.while" {
            if let Some(b) = region.blocks.first() {
                for &a in &b.args {
                    self.set_named(a, "iterArg");
                }
            }
        }
        for (i, b) in region.blocks.iter().enumerate() {
            for &a in &b.args {
                if self.is_set(a) {
                    continue;
                }
                if i == 0 {
                    let hint = format!("arg{}", self.next_arg);
                    self.next_arg += 1;
                    self.set_named(a, &hint);
                } else {
                    self.set_named(a, "");
                }
            }
            for op in &b.ops {
                self.number_op(op);
            }
        }
    }

    fn number_op(&mut self, op: &Op) {
        if op.results.is_empty() {
            return;
        }
        // Names from OpAsmOpInterface: (result index, hint).
        let hints = result_hints(self.module, op);
        let mut starts: Vec<usize> = vec![0];
        let mut texts: Vec<Option<String>> = vec![None; op.results.len()];
        for (i, hint) in hints {
            if i < op.results.len() && texts[i].is_none() {
                texts[i] = Some(self.unique(&hint));
                if i != 0 {
                    starts.push(i);
                }
            }
        }
        if texts[0].is_none() {
            texts[0] = Some(self.next_value.to_string());
            self.next_value += 1;
        }
        starts.sort_unstable();
        starts.dedup();
        for (g, &start) in starts.iter().enumerate() {
            let end = starts.get(g + 1).copied().unwrap_or(op.results.len());
            let text = texts[start].clone().unwrap_or_default();
            for (k, &v) in op.results[start..end].iter().enumerate() {
                self.set(
                    v,
                    ValueName {
                        text: text.clone(),
                        index: Some(k as u32),
                        group: (end - start) as u32,
                    },
                );
            }
        }
    }
}

/// `SSANameState::sanitizeIdentifier`: characters outside `[A-Za-z0-9_$.]` become `_`,
/// and a leading digit gets a `_` prefix.
fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    if name.as_bytes().first().is_some_and(|c| c.is_ascii_digit()) {
        out.push('_');
    }
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.' {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    out
}

/// The element type of a tensor type text (`tensor<8xi32>` -> `i32`); other types as
/// they are.
fn is_integer_type(t: &str) -> bool {
    let digits =
        t.strip_prefix("si").or_else(|| t.strip_prefix("ui")).or_else(|| t.strip_prefix('i'));
    digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The result names an op suggests (`getAsmResultNames`).
fn result_hints(module: &Module, op: &Op) -> Vec<(usize, String)> {
    match op.name.as_str() {
        "chlo.top_k" if op.results.len() == 2 => {
            vec![(0, "values".to_string()), (1, "indices".to_string())]
        }
        "stablehlo.constant" => {
            let ty = op.results.first().and_then(|&r| module.ty(r)).unwrap_or("");
            let name = if is_integer_type(element_type(ty)) { "c" } else { "cst" };
            vec![(0, name.to_string())]
        }
        "arith.constant" => {
            let ty = op.results.first().and_then(|&r| module.ty(r)).unwrap_or("");
            let hint = match op.prop("value") {
                Some(crate::ir::Attr::Int { value, ty: vty }) if !ty.starts_with("tensor") => {
                    if vty == "i1" {
                        if *value != 0 {
                            "true".to_string()
                        } else {
                            "false".to_string()
                        }
                    } else if vty == "index" {
                        format!("c{value}")
                    } else {
                        format!("c{value}_{vty}")
                    }
                }
                Some(crate::ir::Attr::Bool(b)) => b.to_string(),
                _ => "cst".to_string(),
            };
            vec![(0, hint)]
        }
        "stablehlo.rng_bit_generator" => named(&["output_state", "output"]),
        "stablehlo.batch_norm_training" => named(&["output", "batch_mean", "batch_var"]),
        "stablehlo.batch_norm_grad" => named(&["grad_operand", "grad_scale", "grad_offset"]),
        _ => Vec::new(),
    }
}

fn named(names: &[&str]) -> Vec<(usize, String)> {
    names.iter().enumerate().map(|(i, n)| (i, n.to_string())).collect()
}
