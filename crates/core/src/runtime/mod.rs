//! The controller runtime (kube-runtime's place): what every controller is built on and
//! nothing controller-specific. Informer caches, the rate-limited work queue, the client a
//! reconciler writes through, the reconcile contract with its retry policy, and the
//! environment controllers may observe.
//!
//! Layering: `engine` drives `controllers`, which are built on `runtime`, which reads `api`.
//! Nothing here imports a controller or the engine, so a controller can be tested with a
//! runtime alone and the engine can host any [`Reconciler`].

pub mod client;
pub mod environment;
pub mod events;
pub mod explain;
pub mod health;
pub mod informer;
pub mod reconcile;
pub mod workqueue;

pub use client::{Client, Ctx};
pub use environment::{Environment, ImageBehaviour, KubeletTiming};
pub use events::{EventApi, EventBroadcaster, EventNote, EventType, EventWrite, ObjectRef};
pub use explain::Explanation;
pub use informer::Informer;
pub use reconcile::{ReconcileAction, ReconcileError, ReconcileOutcome, Reconciler};
pub use workqueue::WorkQueue;
