//! What one full parse costs: statements, errors, time, allocations, page faults.
//!
//! ```text
//! cargo run --release -p sdy-syntax --example parse_stats -- FILE...
//! ```
//!
//! The allocator counts calls and bytes around mimalloc (what the binary uses), so the
//! figures show how much memory the tree takes and how many allocations build it.

use sdy_syntax::tree::Children;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        let live = LIVE.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(live, Relaxed);
        unsafe { mimalloc::MiMalloc.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        unsafe { mimalloc::MiMalloc.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        let live = LIVE.fetch_add(new, Relaxed) + new - l.size();
        LIVE.fetch_sub(l.size(), Relaxed);
        PEAK.fetch_max(live, Relaxed);
        unsafe { mimalloc::MiMalloc.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// How many statements have each optional part (`--census`).
#[derive(Default, Debug)]
struct Census {
    results: [usize; 4],
    operands: [usize; 4],
    inputs: [usize; 4],
    outputs: [usize; 4],
    inherent: usize,
    attrs: usize,
    regions: usize,
    custom: usize,
    loc: usize,
    alias: usize,
    long_names: usize,
}

fn census(children: &Children, c: &mut Census) {
    for ch in children {
        let op = &ch.op;
        c.results[op.results.len().min(3)] += 1;
        c.operands[op.operands.len().min(3)] += 1;
        c.inputs[op.sig.inputs.len().min(3)] += 1;
        c.outputs[op.sig.outputs.len().min(3)] += 1;
        c.inherent += !op.inherent.is_empty() as usize;
        c.attrs += op.attrs.is_some() as usize;
        c.regions += !op.regions.is_empty() as usize;
        c.custom += !matches!(op.custom, sdy_syntax::tree::Custom::None) as usize;
        c.loc += op.loc.is_some() as usize;
        c.alias += (op.kind == sdy_syntax::tree::StmtKind::AliasDef) as usize;
        c.long_names += (op.name.text.len() > 15) as usize;
        for r in &op.regions {
            for b in &r.blocks {
                census(&b.ops, c);
            }
        }
    }
}

fn walk(children: &Children, base: u32, src: &str, errs: &mut usize, ops: &mut usize) {
    for c in children {
        let start = base + c.offset;
        *ops += 1;
        for e in &c.op.errors {
            *errs += 1;
            if *errs <= 5 {
                let at = (start + e.span.start) as usize;
                let line = src[..at].matches('\n').count() + 1;
                let l = src[at..].lines().next().unwrap_or("");
                eprintln!("  line {line}: {} | {}", e.message, &l[..l.len().min(120)]);
            }
        }
        for r in &c.op.regions {
            for b in &r.blocks {
                walk(&b.ops, start, src, errs, ops);
            }
        }
    }
}

/// Minor page faults of the process so far (field 10 of /proc/self/stat).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_comm = stat.rsplit(')').next().unwrap_or("");
    after_comm.split_whitespace().nth(7).and_then(|f| f.parse().ok()).unwrap_or(0)
}

fn main() {
    use sdy_syntax::tree::*;
    println!(
        "sizes: Op {} Name {} ResultGroup {} ValueRef {} Signature {} Type {} Attr {} NamedAttr {}",
        std::mem::size_of::<Op>(),
        std::mem::size_of::<Name>(),
        std::mem::size_of::<ResultGroup>(),
        std::mem::size_of::<ValueRef>(),
        std::mem::size_of::<Signature>(),
        std::mem::size_of::<Type>(),
        std::mem::size_of::<Attr>(),
        std::mem::size_of::<NamedAttr>(),
    );
    let census_wanted = std::env::args().any(|a| a == "--census");
    for path in std::env::args().skip(1).filter(|a| !a.starts_with("--")) {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mb = text.len() as f64 / 1e6;
        let (allocs, live, faults) = (ALLOCS.load(Relaxed), LIVE.load(Relaxed), minor_faults());
        PEAK.store(live, Relaxed);
        let t = std::time::Instant::now();
        let top = sdy_syntax::parser::parse_top_level(&text);
        let dt = t.elapsed();
        let allocs = ALLOCS.load(Relaxed) - allocs;
        let kept = LIVE.load(Relaxed) - live;
        let peak = PEAK.load(Relaxed) - live;
        let faults = minor_faults() - faults;
        let (mut errs, mut ops) = (0, 0);
        let top = Children::from(top);
        walk(&top, 0, &text, &mut errs, &mut ops);
        if census_wanted {
            let mut c = Census::default();
            census(&top, &mut c);
            println!("  {c:?}");
        }
        let t = std::time::Instant::now();
        drop(top);
        let drop_time = t.elapsed();
        println!(
            "{path}: {ops} stmts, {errs} errors, parse {:.1} ms ({:.0} MB/s), drop {:.1} ms",
            dt.as_secs_f64() * 1e3,
            mb / dt.as_secs_f64(),
            drop_time.as_secs_f64() * 1e3,
        );
        println!(
            "  {allocs} allocations ({:.2} per stmt), tree {:.1} MB ({:.1}x the text, {:.0} B per stmt), peak {:.1} MB, {faults} minor faults",
            allocs as f64 / ops as f64,
            kept as f64 / 1e6,
            kept as f64 / text.len() as f64,
            kept as f64 / ops as f64,
            peak as f64 / 1e6,
        );
    }
}
