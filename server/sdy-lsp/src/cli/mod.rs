//! Command-line front ends over the analysis core.

/// `eprintln!` that cannot fail: with stderr gone or full there is nowhere left to say so.
macro_rules! complain {
    ($($t:tt)*) => {
        $crate::cli::out::to_stderr(&format!($($t)*))
    };
}

pub mod check;
pub mod cost;
pub mod explain;
pub mod input;
pub mod opt;
pub mod out;
pub mod report;

pub use input::read_input;
