//! `sdy-lsp`: the language server (no arguments, or `serve`) and the CLI commands
//! `check`, `opt` and `explain`, all over the same analysis core.

#[macro_use]
mod cli;

/// The parser allocates many small nodes; mimalloc is markedly cheaper than glibc here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

/// Turns transparent huge pages off for this process. mimalloc asks for them (`madvise`),
/// and the first touch of each 2 MiB page can then stall in the kernel's memory compaction:
/// on a busy machine the first parse of a 30 MB file took 2 to 3 times as long as with 4 KiB
/// pages, later parses the same either way (`bench_incremental --thp` compares). Every CLI
/// run and every file the server opens is such a first parse.
fn disable_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE only sets a flag of the calling process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

const USAGE: &str = "\
usage: sdy-lsp [serve]                      run the language server on stdio
       sdy-lsp check [--format text|json] [--split-input-file] FILE...
       sdy-lsp opt FILE|- [sdy_opt flags]   parse, verify, run passes, print like sdy_opt
       sdy-lsp explain [--split-input-file] [--markdown] FILE|-:LINE:COL
                                            the hover there: what the sharding, mesh, axis,
                                            value or op means (also inside xla.sdy.* and
                                            mhlo.sharding strings)
       sdy-lsp cost [--strategy S] [--format text|json] FILE
                                            what the sharding costs: per function and op
                                            the collectives of Shardy's export with bytes
                                            per device, and memory per device
       sdy-lsp --version";

fn main() -> ExitCode {
    disable_transparent_huge_pages();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--version") | Some("-V") => cli::out::print_then(
            &format!("sdy-lsp {}\n", env!("CARGO_PKG_VERSION")),
            ExitCode::SUCCESS,
        ),
        Some("--help") | Some("-h") | Some("help") => {
            cli::out::print_then(&format!("{USAGE}\n"), ExitCode::SUCCESS)
        }
        Some("check") | Some("opt") | Some("explain") | Some("cost") => {
            sdy_lsp::alloc::keep_freed_memory();
            match args[0].as_str() {
                "check" => cli::check::run(&args[1..]),
                "opt" => cli::opt::run(&args[1..]),
                "cost" => cli::cost::run(&args[1..]),
                _ => cli::explain::run(&args[1..]),
            }
        }
        Some("serve") | None => {
            sdy_lsp::alloc::purge_freed_memory_at_once();
            sdy_lsp::lsp::run_stdio(sdy_lsp::lsp::Options::from_env())
        }
        Some(other) => {
            complain!("sdy-lsp: unknown command '{other}'\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
