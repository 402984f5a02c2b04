//! CPU time and memory, for timing traces and benchmarks: on a loaded machine wall time
//! mostly measures waiting for a core, CPU time does not. Linux only (`None` elsewhere).

use std::time::Duration;

/// User + system CPU time the whole process has used.
pub fn process() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `r` is valid and writable for the duration of the call.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) } != 0 {
            return None;
        }
        let t = |v: libc::timeval| {
            Duration::from_secs(v.tv_sec.max(0) as u64)
                + Duration::from_micros(v.tv_usec.max(0) as u64)
        };
        Some(t(r.ru_utime) + t(r.ru_stime))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// CPU time the calling thread has used.
pub fn thread() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `t` is valid and writable for the duration of the call.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
        ok.then(|| Duration::new(t.tv_sec.max(0) as u64, t.tv_nsec.max(0) as u32))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The process's resident memory and its peak (`VmRSS`, `VmHWM`), in MB, for traces.
pub fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: f64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(format!("{:.1}", kb / 1024.0))
    };
    match (field("VmRSS:"), field("VmHWM:")) {
        (Some(rss), Some(peak)) => format!("rss {rss} MB, peak {peak} MB"),
        _ => "rss unknown".to_string(),
    }
}

/// The CPU time spent between two readings (`None` if either is missing).
pub fn since(start: Option<Duration>, now: Option<Duration>) -> Option<Duration> {
    Some(now?.saturating_sub(start?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn clocks_advance_with_work() {
        let (p0, t0) = (super::process(), super::thread());
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        if cfg!(target_os = "linux") {
            assert!(super::since(t0, super::thread()).unwrap() > std::time::Duration::ZERO);
            assert!(super::since(p0, super::process()).is_some());
        }
    }
}
