//! How mimalloc gives freed memory back to the system, per kind of process.

/// mimalloc's `mi_option_purge_delay` (15 in its v2 and v3 `mi_option_t`).
const MI_OPTION_PURGE_DELAY: i32 = 15;

extern "C" {
    fn mi_option_set(option: i32, value: std::ffi::c_long);
}

/// The language server: freed memory goes back at once instead of 10 ms later. The first
/// analysis of a big file frees tens of MB its next steps allocate again on other
/// threads; held back, that memory was 10 to 15 MB of extra peak resident memory in
/// `lsp_bench` on a 10 MB file, and no measurable CPU time when given back.
pub fn purge_freed_memory_at_once() {
    // SAFETY: sets one of mimalloc's options; any value is valid for this one.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
}

/// A CLI command (one file, then exit): freed memory is kept for reuse. The pipeline
/// frees and rebuilds large indexes and modules; given back and faulted in again, that
/// was 13% of `opt -sdy-propagation-pipeline` on the 300k-line corpus module (kernel
/// page clearing), and nothing on the 10k-line one.
pub fn keep_freed_memory() {
    // SAFETY: as above; -1 means never purge.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}
