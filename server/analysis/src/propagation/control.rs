//! How a front end steers a long propagation run. The engine calls the run's
//! [`Control`] at its pause points (between ops of the driver's worklist, between the
//! pipeline's passes); a front end with more urgent work may block there (an editor
//! analysing a keystroke), and a run nobody wants any more (cancelled, superseded) is
//! told to stop: it returns at once, dropping what it built, instead of running on.

/// Whether a run goes on after a pause point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Go,
    Stop,
}

/// What a propagation run calls at its pause points.
pub trait Control {
    fn pause(&self) -> Flow;
}

/// Runs to the end without pausing (`opt`, tests).
pub struct RunToEnd;

impl Control for RunToEnd {
    fn pause(&self) -> Flow {
        Flow::Go
    }
}

impl<F: Fn() -> Flow> Control for F {
    fn pause(&self) -> Flow {
        self()
    }
}

/// A run was told to stop before it ended: it has no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stopped;
