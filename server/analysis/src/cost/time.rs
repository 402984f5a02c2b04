//! Bytes into an estimated time, from per-axis bandwidth settings (GB/s, `"*"` for
//! the axes not named). A collective takes `bytes per device / bandwidth of the
//! slowest axis it works on`: its devices move their bytes in parallel, and the
//! slowest link of the group bounds the transfer. A collective permute names no axes:
//! it takes the `"*"` bandwidth. No latency, overlap or topology is modelled.

use crate::collectives::Collective;

/// Bandwidth per mesh axis name, in GB/s (10⁹ bytes per second).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bandwidth {
    pub axes: Vec<(String, f64)>,
    /// For the axes not named (`"*"`).
    pub default: Option<f64>,
}

impl Bandwidth {
    pub fn is_empty(&self) -> bool {
        self.axes.is_empty() && self.default.is_none()
    }

    /// Sets axis `name` (`"*"`: the default); ignores a bandwidth that is not a finite
    /// positive number.
    pub fn set(&mut self, name: &str, gbps: f64) {
        if !(gbps.is_finite() && gbps > 0.0) {
            return;
        }
        if name == "*" {
            self.default = Some(gbps);
        } else if let Some(e) = self.axes.iter_mut().find(|(n, _)| n == name) {
            e.1 = gbps;
        } else {
            self.axes.push((name.to_string(), gbps));
        }
    }

    /// Parses `AXIS=GBPS` (the CLI's `--bandwidth`).
    pub fn parse_assignment(&mut self, s: &str) -> Result<(), String> {
        let (name, v) = s.split_once('=').ok_or_else(|| format!("'{s}' is not AXIS=GBPS"))?;
        let gbps: f64 = v.trim().parse().map_err(|_| format!("'{v}' is not a number"))?;
        if name.trim().is_empty() || !(gbps.is_finite() && gbps > 0.0) {
            return Err(format!("'{s}': the bandwidth must be positive, the axis named"));
        }
        self.set(name.trim(), gbps);
        Ok(())
    }

    /// GB/s of axis `name`.
    pub fn of(&self, name: &str) -> Option<f64> {
        self.axes.iter().find(|(n, _)| n == name).map(|e| e.1).or(self.default)
    }

    /// Seconds `c` takes (`None`: unknown bytes or an axis without a bandwidth).
    pub fn seconds(&self, c: &Collective) -> Option<f64> {
        let bytes = c.bytes_sent?;
        if bytes == 0 {
            return Some(0.0);
        }
        let mut slowest: Option<f64> = None;
        for a in c.axes.iter().flat_map(|d| &d.axes) {
            let g = self.of(&a.name)?;
            slowest = Some(slowest.map_or(g, |s: f64| s.min(g)));
        }
        let gbps = slowest.or(self.default)?;
        Some(bytes as f64 / (gbps * 1e9))
    }

    /// Seconds of several collectives, one after the other (`None`: one is unknown).
    pub fn total<'a>(&self, cs: impl IntoIterator<Item = &'a Collective>) -> Option<f64> {
        cs.into_iter().try_fold(0.0, |sum, c| Some(sum + self.seconds(c)?))
    }
}

/// `1.5 µs`, `12.0 ms`, `2.1 s`.
pub fn human_seconds(s: f64) -> String {
    let (v, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    format!("{v:.1} {unit}")
}

/// ` ≈ 1.5 µs` after bytes, or nothing without a bandwidth for it.
pub fn suffix(bw: &Bandwidth, c: &Collective) -> String {
    if bw.is_empty() {
        return String::new();
    }
    bw.seconds(c).map_or(String::new(), |s| format!(" ≈ {}", human_seconds(s)))
}

/// The time of several collectives (` ≈ 3.0 µs`), when every one has one.
pub fn total_suffix<'a>(bw: &Bandwidth, cs: impl IntoIterator<Item = &'a Collective>) -> String {
    if bw.is_empty() {
        return String::new();
    }
    bw.total(cs).map_or(String::new(), |s| format!(" ≈ {}", human_seconds(s)))
}
