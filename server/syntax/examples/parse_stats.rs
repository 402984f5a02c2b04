//! Parses files and prints error counts (a development aid).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use sdy_syntax::tree::Child;

fn walk(
    children: &[Child],
    base: u32,
    src: &str,
    errs: &mut usize,
    ops: &mut usize,
    show: &mut usize,
) {
    for c in children {
        let start = base + c.offset;
        *ops += 1;
        for e in &c.op.errors {
            *errs += 1;
            if *show > 0 {
                *show -= 1;
                let at = (start + e.span.start) as usize;
                let line = src[..at].matches('\n').count() + 1;
                let l = src[at..].lines().next().unwrap_or("");
                eprintln!("  line {line}: {} | {}", e.message, &l[..l.len().min(120)]);
            }
        }
        for r in &c.op.regions {
            for b in &r.blocks {
                walk(&b.ops, start, src, errs, ops, show);
            }
        }
    }
}

fn main() {
    sizes();
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        let t = std::time::Instant::now();
        let top = sdy_syntax::parser::parse_top_level(&text);
        let dt = t.elapsed();
        let (mut errs, mut ops, mut show) = (0, 0, 5);
        walk(&top, 0, &text, &mut errs, &mut ops, &mut show);
        println!(
            "{path}: {ops} stmts, {errs} errors, {:.1} ms, {:.0} MB/s",
            dt.as_secs_f64() * 1e3,
            text.len() as f64 / dt.as_secs_f64() / 1e6
        );
    }
}
#[allow(dead_code)]
fn sizes() {
    use sdy_syntax::tree::*;
    eprintln!(
        "Op {} Type {} Attr {} NamedAttr {} ValueRef {} Signature {} Region {} Child {}",
        std::mem::size_of::<Op>(),
        std::mem::size_of::<Type>(),
        std::mem::size_of::<Attr>(),
        std::mem::size_of::<NamedAttr>(),
        std::mem::size_of::<ValueRef>(),
        std::mem::size_of::<Signature>(),
        std::mem::size_of::<Region>(),
        std::mem::size_of::<Child>()
    );
}
