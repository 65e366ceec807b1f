//! The deterministic reconciliation engine: clock, event queue, informers, work queues, steps.
//!
//! See [`world::World`] for the entry point. The engine talks to the API server only through
//! `handle`, like every client.

pub mod health;
pub mod history;
pub mod informer;
pub mod report;
pub mod scenario;
#[cfg(test)]
mod scenario_tests;
pub mod workqueue;
pub mod world;

/// The API server the engine runs (issue 3).
pub use crate::api::ApiServer;

pub use history::History;
pub use report::{
    EventKind, EventRecord, FeedbackLoop, ObjectChange, Outcome, RequestRecord, StepReport,
    StopReason,
};
pub use world::{ClusterConfig, ControllerSet, Fault, Input, NodeSpec, RunState, World};
