//! Command-line front ends over the analysis core.
pub mod check;
pub mod explain;
pub mod opt;
pub mod report;

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &str) -> std::io::Result<String> {
    if path == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
        Ok(s)
    } else {
        std::fs::read_to_string(path)
    }
}
