//! The world outside the API server that controllers may observe: the image registry, the
//! kubelet's timings and faults, and the simulated load the autoscaler reads as a metric.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// How one container image behaves when a kubelet runs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "behaviour")]
pub enum ImageBehaviour {
    /// Pulls in `pull_ms` and runs.
    Ok { pull_ms: u64 },
    /// The registry does not have it: ErrImagePull, then ImagePullBackOff.
    PullFails,
    /// Starts, then exits with code 1 after `run_ms`: CrashLoopBackOff under restartPolicy
    /// Always or OnFailure, a Failed pod under Never.
    Crashes { run_ms: u64 },
    /// Starts, then exits with code 0 after `run_ms`: a Succeeded pod under restartPolicy
    /// Never or OnFailure (a Job's pod), restarted under Always.
    Completes { run_ms: u64 },
    /// Runs, but its readiness probe fails (no effect on a container without one): with an
    /// `image` fault, a probe that fails from a given time.
    ProbeFails,
}

impl ImageBehaviour {
    /// How long a container of this image runs and the code it exits with, if it exits.
    pub fn exit(&self) -> Option<(u64, i32)> {
        match *self {
            ImageBehaviour::Crashes { run_ms } => Some((run_ms, 1)),
            ImageBehaviour::Completes { run_ms } => Some((run_ms, 0)),
            ImageBehaviour::Ok { .. } | ImageBehaviour::PullFails | ImageBehaviour::ProbeFails => {
                None
            }
        }
    }
}

/// Timings of the simulated kubelet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeletTiming {
    /// Image pull time range in ms for images without a configured behaviour.
    pub pull_min_ms: u64,
    pub pull_max_ms: u64,
    /// From pulled to container running.
    pub start_ms: u64,
    /// From running to the readiness probe passing (when the container has no probe).
    pub ready_ms: u64,
    /// From SIGTERM (after any preStop hook) to the container's exit, when a pod is deleted.
    #[serde(default = "default_stop_ms")]
    pub stop_ms: u64,
}

fn default_stop_ms() -> u64 {
    KubeletTiming::default().stop_ms
}

impl Default for KubeletTiming {
    fn default() -> Self {
        KubeletTiming {
            pull_min_ms: 500,
            pull_max_ms: 1500,
            start_ms: 300,
            ready_ms: 200,
            stop_ms: 500,
        }
    }
}

/// The world outside the API server that controllers can observe: image registry, kubelet
/// timings and faults, and the simulated load the autoscaler reads as a metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    pub images: BTreeMap<String, ImageBehaviour>,
    pub kubelet: KubeletTiming,
    /// Nodes whose kubelet fails every image pull.
    pub pull_failing_nodes: BTreeSet<String>,
    /// Total CPU demand in millicores per scale target (`namespace/name` of a Deployment).
    pub load_millicores: BTreeMap<String, u64>,
}
