//! `sdy-lsp`: the language server (no arguments, or `serve`) and the CLI commands
//! `check`, `opt` and `explain`, all over the same analysis core.

mod cli;

/// The parser allocates many small nodes; mimalloc is markedly cheaper than glibc here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

const USAGE: &str = "\
usage: sdy-lsp [serve]                      run the language server on stdio
       sdy-lsp check [--format text|json] [--split-input-file] FILE...
       sdy-lsp opt FILE|- [sdy_opt flags]   parse, verify, run passes, print like sdy_opt
       sdy-lsp explain [--split-input-file] [--markdown] FILE:LINE:COL
                                            the hover there: what the sharding, mesh, axis,
                                            value or op means (also inside xla.sdy.* and
                                            mhlo.sharding strings)
       sdy-lsp --version";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--version") | Some("-V") => {
            println!("sdy-lsp {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("--help") | Some("-h") | Some("help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("check") => cli::check::run(&args[1..]),
        Some("opt") => cli::opt::run(&args[1..]),
        Some("explain") => cli::explain::run(&args[1..]),
        Some("serve") | None => sdy_lsp::lsp::run_stdio(sdy_lsp::lsp::Options::from_env()),
        Some(other) => {
            eprintln!("sdy-lsp: unknown command '{other}'\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
