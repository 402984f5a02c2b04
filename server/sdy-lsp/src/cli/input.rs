//! The commands' input: a file, or standard input for `-`.
//!
//! Offsets in the analysis are 32-bit, so input is refused past [`MAX_INPUT`] bytes
//! rather than cut short: a file by its size before any of it is read, a stream once
//! more than that has arrived.

use std::io::Read;

/// The most input the analysis can address (offsets are `u32`).
pub const MAX_INPUT: u64 = u32::MAX as u64;

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &str) -> std::io::Result<String> {
    if path == "-" {
        read_limited(std::io::stdin().lock(), stdin_size())
    } else {
        let f = std::fs::File::open(path)?;
        let size = f.metadata()?.len();
        read_limited(f, Some(size))
    }
}

/// The size of standard input when it is a regular file (`< FILE`).
fn stdin_size() -> Option<u64> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    meta.is_file().then_some(meta.len())
}

/// Reads all of `r` (`size` bytes, if known) as UTF-8, refusing more than [`MAX_INPUT`].
fn read_limited(r: impl Read, size: Option<u64>) -> std::io::Result<String> {
    let too_big = |n: &dyn std::fmt::Display| {
        std::io::Error::other(format!(
            "the input is {n} bytes; at most {MAX_INPUT} (4 GiB - 1) are supported"
        ))
    };
    if let Some(size) = size.filter(|&s| s > MAX_INPUT) {
        return Err(too_big(&size));
    }
    let mut bytes = Vec::with_capacity(size.unwrap_or(0) as usize);
    r.take(MAX_INPUT + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(too_big(&format!("more than {MAX_INPUT}")));
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream is cut off just past the limit, not read to its end.
    #[test]
    fn a_stream_past_the_limit_is_refused() {
        let endless = std::io::repeat(b'a');
        // Only the size check is exercised here: 4 GiB would not fit a test's memory.
        let e = read_limited(endless.take(10), Some(MAX_INPUT + 1)).unwrap_err();
        assert!(e.to_string().contains("is 4294967296 bytes"), "{e}");
        assert_eq!(read_limited(&b"ok"[..], None).unwrap(), "ok");
    }
}
