//! Time of the navigation features of the analysis core on a file: document symbols,
//! folding ranges, find references and rename (a mesh, its first axis, an SSA value).
//!
//! ```text
//! cargo run --release -p sdy-lsp --example bench_navigation -- FILE [--runs N]
//! ```
//!
//! FILE may be `.mlir` or `.mlir.gz` (decompressed with `zcat`). Prints the median and
//! the maximum over `--runs` runs (default 9, after one warm-up) of each request as the
//! core answers it on an analysed chunk (the LSP layer adds position conversion and
//! JSON); the first `// -----` chunk only when the file is split.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use sdy_analysis::ide::references::{self as refs, Ctx};
use sdy_analysis::ide::symbols;
use sdy_analysis::model::Model;
use sdy_analysis::query::Index;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 9usize;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            f => file = Some(f.to_string()),
        }
    }
    let Some(file) = file else {
        eprintln!("usage: bench_navigation FILE [--runs N]");
        std::process::exit(2);
    };
    let src = if file.ends_with(".gz") {
        let out = std::process::Command::new("zcat").arg(&file).output().expect("zcat");
        String::from_utf8(out.stdout).expect("UTF-8 text")
    } else {
        std::fs::read_to_string(&file).expect("readable file")
    };
    let chunk = sdy_analysis::parse_chunks(&src, false).remove(0);
    let model = Model::build(&chunk);
    let index = Index::new(&model);
    let cx = Ctx { model: &model, index: &index, top: &chunk.top, src: &src };
    println!("{file}: {} bytes, {} ops, {} values", src.len(), model.ops.len(), model.values.len());

    time("documentSymbol", runs, || symbols::document_symbols(&model, &chunk.top, &src).len());
    time("foldingRange", runs, || symbols::folding_ranges(&model, &chunk.top, &src).len());

    let Some(mesh) = model.meshes.first() else { return };
    let at_mesh = mesh.name_span.start + 1;
    time("references of the mesh", runs, || references(&cx, at_mesh));
    time("rename the mesh", runs, || rename(&cx, at_mesh, "renamed_mesh"));
    if let Some(axis) = mesh.mesh.as_ref().and_then(|m| m.axis_spans.first()) {
        let at_axis = axis.start + 1;
        time("references of its first axis", runs, || references(&cx, at_axis));
        time("rename its first axis", runs, || rename(&cx, at_axis, "renamed_axis"));
    }
    // The value with the most uses.
    let busiest = (0..model.values.len() as u32).max_by_key(|&v| model.value(v).uses.len());
    if let Some(v) = busiest {
        let at_value = model.value(v).span.start + 1;
        let name = model.value(v).name.clone();
        time(&format!("references of {name}"), runs, || references(&cx, at_value));
        time(&format!("rename {name}"), runs, || rename(&cx, at_value, "%renamed_value"));
    }
}

fn references(cx: &Ctx, offset: u32) -> usize {
    refs::entity_at(cx, offset).map_or(0, |f| refs::references(cx, &f.entity, true).len())
}

fn rename(cx: &Ctx, offset: u32, new: &str) -> usize {
    match refs::rename(cx, offset, new) {
        Ok(Some(edits)) => edits.len(),
        Ok(None) => 0,
        Err(e) => panic!("rename refused: {e}"),
    }
}

/// Runs `f` once to warm up, then `runs` times; prints the median and the maximum.
fn time(what: &str, runs: usize, mut f: impl FnMut() -> usize) {
    let n = f();
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{what:32} median {:7.2} ms  max {:7.2} ms  ({n} results)",
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );
}
