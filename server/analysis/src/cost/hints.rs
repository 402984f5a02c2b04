//! The cost's inlay hints: at the end of an op's (first) line, the collectives the
//! export inserts for it (`⇄ all-gather{"x"} 4.0 MiB`) and the bytes per device of its
//! results (`▣ 2.0 MiB`).

use super::text::op_hint;
use super::time::Bandwidth;
use super::{Cost, OpCollective};
use crate::model::Model;
use crate::propagation::editor::hints::{Hint, HintKind};
use crate::propagation::editor::reshards::human_bytes;
use crate::propagation::editor::Site;
use rustc_hash::FxHashMap as HashMap;

/// The hints of a chunk, sorted by offset (`src` is the chunk's text).
pub fn hints(model: &Model, src: &str, cost: &Cost, bw: &Bandwidth) -> Vec<Hint> {
    let by_start: HashMap<u32, usize> =
        model.ops.iter().enumerate().map(|(i, o)| (o.start, i)).collect();
    let line_end = |start: u32| -> Option<u32> {
        let op = model.ops.get(*by_start.get(&start)?)?;
        let span = op.span();
        let text = src.get(span.start as usize..span.end as usize)?;
        Some(span.start + text.find('\n').map_or(text.len(), |i| i) as u32)
    };
    let mut by_op: Vec<(u32, Vec<&OpCollective>)> = Vec::new();
    for c in cost.functions.iter().flat_map(|f| &f.collectives) {
        let Some(op) = c.op else { continue };
        match by_op.iter_mut().find(|(o, _)| *o == op) {
            Some((_, v)) => v.push(c),
            None => by_op.push((op, vec![c])),
        }
    }
    let mut out = Vec::new();
    for (op, cs) in by_op {
        let (Some(offset), Some(label)) = (line_end(op), op_hint(&cs, bw)) else { continue };
        out.push(Hint {
            offset,
            kind: HintKind::Communication,
            label,
            site: None,
            follows_operand: false,
            collectives_of: Some(op),
        });
    }
    let mut bytes: HashMap<u32, i64> = HashMap::default();
    for v in &cost.values {
        if let Site::OpResult { op, .. } = v.site {
            *bytes.entry(op).or_default() += v.bytes;
        }
    }
    for (op, b) in bytes {
        let Some(offset) = line_end(op) else { continue };
        out.push(Hint {
            offset,
            kind: HintKind::Memory,
            label: format!("▣ {}", human_bytes(b)),
            site: None,
            follows_operand: false,
            collectives_of: None,
        });
    }
    // Communication before memory at one place.
    out.sort_by_key(|h| (h.offset, h.kind == HintKind::Memory));
    out
}
