//! The commands' output. A reader that closes the pipe early (`| head -1`) has what it
//! wanted: the command stops writing, quietly, and exits with the status it has anyway
//! (as ripgrep does, but keeping `check`'s verdict: under `set -o pipefail`,
//! `check f | head` still fails exactly when `f` has errors). Any other write error (a
//! full disk, `> /dev/full`) loses output the user asked for: a message and status 2.

use std::io::Write;
use std::process::ExitCode;

/// Status of a command whose output could not be written.
pub const WRITE_FAILED: u8 = 2;

/// Writes `text` to stdout and flushes it.
pub fn print(text: &str) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            complain!("sdy-lsp: cannot write the output: {e}");
            Err(ExitCode::from(WRITE_FAILED))
        }
        _ => Ok(()),
    }
}

/// `status`, unless `text` cannot be written to stdout.
pub fn print_then(text: &str, status: ExitCode) -> ExitCode {
    print(text).err().unwrap_or(status)
}

/// Writes `text` to stderr, ignoring failure.
pub fn to_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.write_all(b"\n"));
}
