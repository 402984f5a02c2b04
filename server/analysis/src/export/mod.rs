//! Shardy's export passes that run after propagation (explicit reshards, collectives,
//! padding, global-to-local, ...): one module per pass. The passes of the propagation
//! pipeline's own export stage live in `propagation::pipeline::export`.

pub mod device_groups;
pub mod global_to_local;
pub mod ops;
pub mod pad_for_divisibility;
pub mod shapes;
