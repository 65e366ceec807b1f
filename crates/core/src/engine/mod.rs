//! The deterministic reconciliation engine: clock, event queue, informers, work queues, steps.
//!
//! See [`world::World`] for the entry point. The engine talks to the API server only through
//! `handle`, like every client.
//!
//! # Trace format
//! One line per processed event, stable so scenario snapshots and docs can rely on it:
//!
//! ```text
//! t=0.000s user:alice request -> create deployments default/web 201
//! t=0.005s deployment-controller watch ADDED deployments default/web rv=35 -> queue default/web
//! t=0.005s deployment-controller reconcile default/web -> create replicasets default/web-5cc4fd5dc8 201, update deployments/status default/web 200
//! t=0.010s deployment-controller reconcile default/web -> no writes; requeue after 600.990s
//! t=12.005s deployment-controller reconcile default/web -> update replicasets default/web-5cc4fd5dc8 409; error: Operation cannot be fulfilled on ...; retry after 10ms
//! t=3.000s kubelet/node-1 watch MODIFIED pods default/web-x-abcde rv=80 (stale, ignored)
//! t=8.000s fault crash replicaset-controller
//! t=5.000s environment load default/web = 250m
//! t=0.200s engine feedback-loop databases default/loop generation 21 climbing with no user write, written by <principal>
//! ```
//!
//! `t=` is simulated time; the lane (`user:<principal>`, a controller name, `kubelet/<node>`,
//! `fault`, `environment`, `engine`) is the timeline lane; requests read
//! `<verb> <resource>[/status] <namespace>/<name> <code>`.

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
