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
//! t=0.005s deployment-controller events ScalingReplicaSet -> create events default/web.1816687ec0a34b40 201
//! t=3.653s kubelet/node-1 events Pulled -> patch events default/web-x-abcde.1816687f9a135b40 200; Created -> patch ...
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
//! `<verb> <resource>[/status] <namespace>/<name> <code>`. An `events` line follows a reconcile
//! that reported Events: each reason with the writes it caused, `dropped` when client-go's spam
//! filter drops it, `counted` when an events.k8s.io series counts it in memory.

mod bootstrap;
pub(crate) mod checkpoint;
mod checks;
mod delivery;
#[cfg(test)]
mod endpointslice_tests;
mod faults;
pub mod history;
#[cfg(test)]
mod job_tests;
#[cfg(test)]
mod kubelet_tests;
#[cfg(test)]
mod objects_tests;
pub mod provenance;
pub mod report;
pub mod script;
#[cfg(test)]
mod script_tests;
#[cfg(test)]
mod statefulset_tests;
mod trace;
pub mod world;

// The runtime the controllers are built on moved to `crate::runtime`; these old paths stay.
pub use crate::runtime::{health, informer, workqueue};

/// The API server the engine runs (issue 3).
pub use crate::api::ApiServer;

pub use checkpoint::CheckpointError;
pub use history::History;
pub use report::{
    EventKind, EventRecord, FeedbackLoop, ObjectChange, ReconcileOutcome, RequestRecord,
    StepReport, StopReason,
};
pub use world::{ClusterConfig, ControllerSet, Fault, Input, NodeSpec, RunState, World};

/// FNV-1a 64's offset basis: the hash of no bytes.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64 of `bytes`, continued from `h` (start from [`FNV_OFFSET`]).
fn fnv1a_64(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A stable hash of bytes: FNV-1a 64 as 16 lower-case hex digits, the same natively and in
/// wasm. The playground names the action log a stored checkpoint was made from by it.
pub fn bytes_hash(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a_64(FNV_OFFSET, bytes))
}

/// A stable hash of a trace: FNV-1a 64 over every line followed by `\n`, as 16 lower-case hex
/// digits. The same on every platform (natively and in wasm), unlike std's randomized hasher,
/// so two builds can compare runs by this one value.
pub fn trace_hash<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let h = lines.into_iter().fold(FNV_OFFSET, |h, line| {
        fnv1a_64(fnv1a_64(h, line.as_bytes()), b"\n")
    });
    format!("{h:016x}")
}

impl World {
    /// [`trace_hash`] of this world's trace so far.
    pub fn trace_hash(&self) -> String {
        trace_hash(self.trace().iter().map(AsRef::as_ref))
    }
}

#[cfg(test)]
mod trace_hash_tests {
    #[test]
    fn trace_hash_is_fnv1a_64_of_the_lines() {
        // FNV-1a 64 of "" is the offset basis; of "a\n" a known constant.
        assert_eq!(super::trace_hash([]), "cbf29ce484222325");
        assert_eq!(super::trace_hash(["a"]), "089bdc07b544e7b2");
        assert_eq!(super::bytes_hash(b"a\n"), "089bdc07b544e7b2");
        assert_eq!(super::bytes_hash(b""), "cbf29ce484222325");
    }
}
