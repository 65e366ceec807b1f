//! A replayable playground session: a starter cluster, a seed and the user's actions. Replaying
//! the actions on a fresh world from the same seed reproduces the same timeline (the engine is
//! deterministic), which is how workspaces are saved and shared.

use serde::{Deserialize, Serialize};

use crate::api::{ApiRequest, GroupResource};
use crate::engine::script::deployment;
use crate::engine::{ClusterConfig, Input, NodeSpec, StepReport, World};

/// Event bound for one "Run until converged".
pub const RUN_MAX_EVENTS: u64 = 50_000;
/// Simulated-time bound for one "Run until converged" (10 minutes).
pub const RUN_MAX_MS: u64 = 600_000;

/// One thing the user did to the world; each is exactly one world step. Its serde form (in
/// saves and share links) is `share::link::ActionV1`'s.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "actions are few and short-lived; boxing would only obscure the log"
)]
pub enum SessionAction {
    /// Process one event.
    Step,
    /// Jump to the next scheduled time and process everything due then.
    NextEvent,
    RunUntilConverged,
    /// A user request or fault, applied now.
    Apply {
        input: Input,
        /// The terminal's command line that sent this request (`kubectl scale deploy web
        /// --replicas=5`), shown on its timeline card and carried by saves and share links. It
        /// is the log's, not the engine's: the world sees only `input`, so traces and hashes do
        /// not depend on it. None for the editor, the fault panel and the scenarios.
        command: Option<String>,
    },
}

impl SessionAction {
    /// `input` applied now, sent by no terminal command.
    pub fn apply(input: Input) -> SessionAction {
        SessionAction::Apply {
            input,
            command: None,
        }
    }

    /// The terminal command line that sent this action's request, if one did.
    pub fn command(&self) -> Option<&str> {
        match self {
            SessionAction::Apply {
                command: Some(c), ..
            } => Some(c),
            _ => None,
        }
    }
}

/// The fault panel's RBAC switch: the engine's [`Input::SetRbac`] (a scenario's
/// `rbac.enforce` fault), applied now, so replays, share links and the trace keep it.
pub fn set_rbac(enforced: bool) -> SessionAction {
    SessionAction::apply(Input::SetRbac { enforced })
}

/// The starter clusters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Starter {
    /// Three nodes and Deployment `web` (3 replicas of nginx), converged.
    #[default]
    Small,
    /// Twelve large nodes and Deployment `web` with 960 replicas: about 1,000 objects.
    Large,
}

impl Starter {
    pub fn replicas(self) -> i64 {
        match self {
            Starter::Small => 3,
            Starter::Large => 960,
        }
    }

    pub fn config(self, seed: u64) -> ClusterConfig {
        let mut config = ClusterConfig {
            seed,
            ..ClusterConfig::default()
        };
        if self == Starter::Large {
            config.nodes = (1..=12)
                .map(|i| NodeSpec {
                    pods: 110,
                    ..NodeSpec::new(&format!("node-{i}"), "64", "256Gi")
                })
                .collect();
        }
        config
    }

    /// The actions that build the starter: `alice` creates the Deployment, then the cluster
    /// runs until converged.
    pub fn actions(self) -> Vec<SessionAction> {
        let body = deployment("default", "web", self.replicas(), "nginx:1.27");
        let request = ApiRequest::create(
            "alice",
            GroupResource::new("apps", "deployments"),
            "default",
            body,
        );
        vec![
            SessionAction::apply(Input::Request { request }),
            SessionAction::RunUntilConverged,
        ]
    }
}

/// Performs one action: exactly one world step.
pub fn perform(world: &mut World, action: &SessionAction) -> StepReport {
    match action {
        SessionAction::Step => world.step(),
        SessionAction::NextEvent => world.step_to_next_time(),
        SessionAction::RunUntilConverged => world.run_until_converged(RUN_MAX_EVENTS, RUN_MAX_MS),
        SessionAction::Apply { input, .. } => world.apply(input.clone()),
    }
}

/// A fresh world for `starter` and `seed`, with `actions` replayed; `each` sees every report.
pub fn replay(
    starter: Starter,
    seed: u64,
    actions: &[SessionAction],
    each: impl FnMut(&World, StepReport),
) -> World {
    replay_on(World::new(starter.config(seed)), actions, each)
}

/// `actions` replayed on `world` (a starter's fresh world, or a scenario's world at t=0 from
/// `Scenario::playground_world`); `each` sees every report.
pub fn replay_on(
    mut world: World,
    actions: &[SessionAction],
    mut each: impl FnMut(&World, StepReport),
) -> World {
    for a in actions {
        let report = perform(&mut world, a);
        each(&world, report);
    }
    world
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_action_is_one_world_step() {
        let mut actions = Starter::Small.actions();
        actions.push(SessionAction::Step);
        let w = replay(Starter::Small, 7, &actions, |_, _| {});
        assert_eq!(w.steps(), 3);
    }

    #[test]
    fn the_small_starter_converges_with_three_ready_pods() {
        let w = replay(Starter::Small, 1, &Starter::Small.actions(), |_, _| {});
        assert!(w.is_converged());
        let pods = w.objects().filter(|(k, _)| k.gr.resource == "pods").count();
        assert_eq!(pods, 3);
    }

    #[test]
    fn short_reports_keep_the_first_and_newest_events_and_the_whole_trace() {
        let actions = Starter::Small.actions();
        let mut full = Vec::new();
        let a = replay(Starter::Small, 1, &actions, |_, r| full.push(r));
        let mut short = Vec::new();
        let mut base = World::new(Starter::Small.config(1));
        base.keep_reports_short(5);
        let b = replay_on(base, &actions, |_, r| short.push(r));
        assert_eq!(a.trace_text(), b.trace_text(), "the world behaves the same");
        let run = (&full[1], &short[1]);
        assert!(run.0.events.len() > 6, "the starter's run is long");
        assert_eq!(
            run.1.processed,
            run.0.events.len() as u64,
            "every event is counted"
        );
        assert_eq!(run.0.processed, run.0.events.len() as u64);
        let lines = |r: &StepReport| r.lines().map(str::to_owned).collect::<Vec<_>>();
        let mut want = lines(run.0);
        want.drain(1..want.len() - 5);
        assert_eq!(lines(run.1), want);
        assert!(run.1.watch.is_empty() && !run.0.watch.is_empty());
    }

    #[test]
    fn replaying_the_same_actions_gives_the_same_trace() {
        let mut actions = Starter::Small.actions();
        actions.extend([
            SessionAction::Step,
            SessionAction::NextEvent,
            SessionAction::Step,
        ]);
        let a = replay(Starter::Small, 3, &actions, |_, _| {});
        let b = replay(Starter::Small, 3, &actions, |_, _| {});
        assert_eq!(a.trace_text(), b.trace_text());
    }

    #[test]
    fn actions_round_trip_through_json() {
        let actions = Starter::Small.actions();
        let text = serde_json::to_string(&actions).unwrap_or_default();
        let back: Vec<SessionAction> = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back, actions);
    }

    #[test]
    fn switching_rbac_off_is_one_step_that_lets_app_write_status_and_replays() {
        use crate::api::ObjectKey;
        let mut actions = Starter::Small.actions();
        actions.push(SessionAction::Step);
        let before = replay(Starter::Small, 1, &actions, |_, _| {});
        actions.push(set_rbac(false));
        let key = ObjectKey::new(GroupResource::new("apps", "deployments"), "default", "web");
        let mut spoofed = before.object(&key).cloned().unwrap_or_default();
        spoofed["status"]["readyReplicas"] = 1.into();
        spoofed["status"]["availableReplicas"] = 1.into();
        let request = ApiRequest::update_status(
            "app",
            GroupResource::new("apps", "deployments"),
            "default",
            "web",
            spoofed,
        );
        actions.push(SessionAction::apply(Input::Request { request }));
        let mut codes = Vec::new();
        let after = replay(Starter::Small, 1, &actions, |_, r| {
            codes.extend(r.requests().map(|q| q.code))
        });
        assert_eq!(after.steps(), before.steps() + 2);
        assert_eq!(
            after.now(),
            before.now(),
            "the switch takes no simulated time"
        );
        assert!(!after.api().rbac_enforced());
        assert_eq!(codes.last(), Some(&200), "{codes:?}");
        assert_eq!(
            after
                .object(&key)
                .and_then(|o| o.pointer("/status/readyReplicas")),
            Some(&crate::json::Value::from(1))
        );
        let text = serde_json::to_string(&actions).unwrap_or_default();
        let back: Vec<SessionAction> = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back, actions, "the switch survives a share link: {text}");
    }

    #[test]
    fn switched_back_on_rbac_refuses_apps_status_write_again() {
        let mut actions = Starter::Small.actions();
        actions.push(set_rbac(false));
        actions.push(set_rbac(true));
        let w = replay(Starter::Small, 1, &actions, |_, _| {});
        let key =
            crate::api::ObjectKey::new(GroupResource::new("apps", "deployments"), "default", "web");
        let request = ApiRequest::update_status(
            "app",
            GroupResource::new("apps", "deployments"),
            "default",
            "web",
            w.object(&key).cloned().unwrap_or_default(),
        );
        actions.push(SessionAction::apply(Input::Request { request }));
        let mut codes = Vec::new();
        let w = replay(Starter::Small, 1, &actions, |_, r| {
            codes.extend(r.requests().map(|q| q.code))
        });
        assert!(w.api().rbac_enforced());
        assert_eq!(codes.last(), Some(&403), "{codes:?}");
    }

    #[test]
    fn the_large_starter_holds_about_a_thousand_objects() {
        let w = replay(Starter::Large, 1, &Starter::Large.actions(), |_, _| {});
        assert!(w.object_count() >= 950, "{}", w.object_count());
    }
}
