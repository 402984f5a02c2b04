//! The user's settings that can change while the server runs: propagation, inlay
//! hints and the cost view's bandwidth. They arrive as `initializationOptions` and with every
//! `workspace/didChangeConfiguration` (`{"settings": {"sdy": {...}}}`), in the shape of
//! `editors/default-init-options.json`. Unknown keys are ignored; a key that is missing
//! or has a value the server does not know keeps its current value.

use sdy_analysis::cost::time::Bandwidth;
use sdy_analysis::propagation::editor::Strategy;
use serde_json::Value;
use std::sync::RwLock;

/// When propagation runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Never; the commands say so.
    Off,
    /// On `sdy.propagate` (command or code lens).
    #[default]
    OnDemand,
    /// After each save, and on demand.
    OnSave,
    /// After edits (debounced), on open, and on demand.
    OnChange,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "off" => Mode::Off,
            "onDemand" => Mode::OnDemand,
            "onSave" => Mode::OnSave,
            "onChange" => Mode::OnChange,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub mode: Mode,
    pub strategy: Strategy,
    /// All inlay hints.
    pub hints: bool,
    /// Per-device shapes after sharded values' types.
    pub shape_hints: bool,
    /// Propagated shardings of values with none written.
    pub sharding_hints: bool,
    /// `→ ...` after a written sharding propagation extended or changed.
    pub extension_hints: bool,
    /// Leave out the hints of op results sharded like one of their operands.
    pub compact_hints: bool,
    /// `⇄ all-gather{"x"} 4 MiB` after ops the export inserts collectives for.
    pub communication_hints: bool,
    /// `▣ 2 MiB` after ops: their results' bytes per device.
    pub memory_hints: bool,
    /// GB/s per mesh axis (`"*"`: the others): estimated times next to bytes.
    pub bandwidth: Bandwidth,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            mode: Mode::OnDemand,
            strategy: Strategy::Pipeline,
            hints: true,
            shape_hints: true,
            sharding_hints: true,
            extension_hints: true,
            compact_hints: false,
            communication_hints: true,
            memory_hints: false,
            bandwidth: Bandwidth::default(),
        }
    }
}

impl Settings {
    /// Applies an options object (`{"propagation": {...}, "inlayHints": {...}}`).
    pub fn apply(&mut self, v: &Value) {
        let p = &v["propagation"];
        if let Some(m) = p["mode"].as_str().and_then(Mode::parse) {
            self.mode = m;
        }
        if let Some(s) = p["strategy"].as_str().and_then(Strategy::parse) {
            self.strategy = s;
        }
        let h = &v["inlayHints"];
        if let Some(b) = h["enable"].as_bool() {
            self.hints = b;
        }
        if let Some(b) = h["perDeviceShapes"].as_bool() {
            self.shape_hints = b;
        }
        if let Some(b) = h["propagatedShardings"].as_bool() {
            self.sharding_hints = b;
        }
        if let Some(b) = h["extensions"].as_bool() {
            self.extension_hints = b;
        }
        if let Some(b) = h["compact"].as_bool() {
            self.compact_hints = b;
        }
        if let Some(b) = h["communication"].as_bool() {
            self.communication_hints = b;
        }
        if let Some(b) = h["memory"].as_bool() {
            self.memory_hints = b;
        }
        // A map replaces the previous one; entries that are not positive numbers are
        // left out.
        if let Some(map) = v["cost"]["bandwidth"].as_object() {
            let mut bw = Bandwidth::default();
            for (axis, gbps) in map {
                if let Some(g) = gbps.as_f64() {
                    bw.set(axis, g);
                }
            }
            self.bandwidth = bw;
        }
    }

    /// Applies `workspace/didChangeConfiguration` settings: `{"sdy": {...}}`, or the
    /// options object itself.
    pub fn apply_configuration(&mut self, settings: &Value) {
        match settings.get("sdy") {
            Some(v) => self.apply(v),
            None => self.apply(settings),
        }
    }
}

/// The settings, shared by the handlers and the propagation worker.
#[derive(Debug, Default)]
pub struct Shared(RwLock<Settings>);

impl Shared {
    pub fn get(&self) -> Settings {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Updates the settings; returns the old and the new ones.
    pub fn update(&self, f: impl FnOnce(&mut Settings)) -> (Settings, Settings) {
        let mut s = self.0.write().unwrap_or_else(|e| e.into_inner());
        let old = s.clone();
        f(&mut s);
        (old, s.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn applies_what_it_knows_and_keeps_the_rest() {
        let mut s = Settings::default();
        let defaults: Value =
            serde_json::from_str(include_str!("../../../../editors/default-init-options.json"))
                .unwrap();
        s.apply(&defaults);
        assert_eq!(s, Settings::default());
        s.apply_configuration(
            &json!({"sdy": {"propagation": {"mode": "onSave", "strategy": "op-priority"}}}),
        );
        assert_eq!((s.mode, s.strategy), (Mode::OnSave, Strategy::OpPriority));
        s.apply_configuration(&json!({"inlayHints": {"perDeviceShapes": false}, "x": 1}));
        assert!(!s.shape_hints && s.hints && s.sharding_hints && s.extension_hints);
        s.apply(&json!({"inlayHints": {"extensions": false}}));
        assert!(!s.extension_hints && s.sharding_hints);
        s.apply(&json!({"inlayHints": {"compact": true}}));
        assert!(s.compact_hints && !s.extension_hints);
        s.apply(&json!({"propagation": {"mode": "sometimes", "strategy": 3}}));
        assert_eq!((s.mode, s.strategy), (Mode::OnSave, Strategy::OpPriority));
        s.apply(&json!({"cost": {"bandwidth": {"x": 50, "*": 12.5, "y": "fast", "z": 0}}}));
        assert_eq!(s.bandwidth.axes, vec![("x".to_string(), 50.0)]);
        assert_eq!(s.bandwidth.default, Some(12.5));
        s.apply(&json!({"cost": {"bandwidth": {}}}));
        assert!(s.bandwidth.is_empty());
    }
}
