//! The timeline: one lane per actor, each entry an API request (with its answer) or a watch
//! event, carrying the object changes it caused.

use crate::engine::report::FieldChange;
use crate::engine::{EventKind, StepReport};

/// One request (with its answer) or watch event on an actor's lane.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEntry {
    /// The world step that produced it.
    pub step: u64,
    pub seq: u64,
    pub time_ms: u64,
    /// `PUT deployments default/web 200`, `watch MODIFIED deployments default/web`.
    pub label: String,
    /// HTTP code for requests, None for watch events and other events.
    pub code: Option<u16>,
    pub message: String,
    /// The terminal command line that sent this request, on the user's requests only.
    pub command: Option<String>,
    /// (object, field changes) the entry caused.
    pub changes: Vec<(String, Vec<FieldChange>)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// `user:alice`, `deployment-controller`, `kubelet/node-1`, ...
    pub actor: String,
    pub entries: Vec<TimelineEntry>,
}

/// Lanes for the given reports (step number, report, oldest first), holding the newest `limit`
/// entries. Only those entries are built: a long run's report can hold thousands of events.
/// `command` names the terminal command that made a step (the session log's
/// `SessionAction::command`), put on that step's user requests.
pub fn lanes(
    reports: &[(u64, &StepReport)],
    limit: usize,
    command: impl Fn(u64) -> Option<String>,
) -> Vec<Lane> {
    let mut all: Vec<(String, TimelineEntry)> = Vec::new();
    let mut budget = limit;
    let mut from = reports.len();
    let mut first_event = 0;
    while from > 0 && budget > 0 {
        from -= 1;
        let n = reports[from].1.events.len();
        if n >= budget {
            first_event = n - budget;
            budget = 0;
        } else {
            budget -= n;
        }
    }
    for (i, (step, r)) in reports[from..].iter().enumerate() {
        let step = *step;
        let skip = if i == 0 { first_event } else { 0 };
        for e in r.events.iter().skip(skip) {
            let changes: Vec<(String, Vec<FieldChange>)> = e
                .changes
                .iter()
                .map(|c| (crate::engine::world::key_text(&c.key), c.fields().to_vec()))
                .collect();
            if e.requests.is_empty() {
                let label = match &e.kind {
                    EventKind::Watch {
                        event_type, key, ..
                    } => format!(
                        "watch {} {}",
                        crate::json::to_value(event_type)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default(),
                        crate::engine::world::key_text(key)
                    ),
                    _ => e.line.to_string(),
                };
                all.push((
                    e.lane.clone(),
                    TimelineEntry {
                        step,
                        seq: e.seq,
                        time_ms: e.time.as_ms(),
                        label,
                        code: None,
                        message: String::new(),
                        command: None,
                        changes,
                    },
                ));
            } else {
                let command = if e.lane.starts_with("user:") {
                    command(step)
                } else {
                    None
                };
                for (i, req) in e.requests.iter().enumerate() {
                    all.push((
                        e.lane.clone(),
                        TimelineEntry {
                            step,
                            seq: e.seq,
                            time_ms: e.time.as_ms(),
                            label: req.summary(),
                            code: Some(req.code),
                            message: req.message.clone(),
                            command: command.clone(),
                            changes: if i == 0 { changes.clone() } else { Vec::new() },
                        },
                    ));
                }
            }
        }
    }
    let skip = all.len().saturating_sub(limit);
    let mut lanes: Vec<Lane> = Vec::new();
    for (actor, entry) in all.into_iter().skip(skip) {
        match lanes.iter_mut().find(|l| l.actor == actor) {
            Some(l) => l.entries.push(entry),
            None => lanes.push(Lane {
                actor,
                entries: vec![entry],
            }),
        }
    }
    lanes.sort_by_key(|l| (!l.actor.starts_with("user:"), l.actor.clone()));
    lanes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::session::{replay, Starter};

    /// The small starter's reports, with the step each ended.
    fn small_starter_reports() -> Vec<(u64, StepReport)> {
        let mut reports = Vec::new();
        replay(Starter::Small, 1, &Starter::Small.actions(), |w, r| {
            reports.push((w.steps(), r))
        });
        reports
    }

    #[test]
    fn the_user_lane_comes_first_and_holds_the_create() {
        let reports = small_starter_reports();
        let refs: Vec<(u64, &StepReport)> = reports.iter().map(|(s, r)| (*s, r)).collect();
        let lanes = lanes(&refs, 10_000, |_| None);
        assert_eq!(lanes[0].actor, "user:alice");
        assert!(
            lanes[0].entries[0].label.starts_with("create deployments"),
            "{:?}",
            lanes[0].entries[0]
        );
        assert_eq!(lanes[0].entries[0].code, Some(201));
        assert!(lanes.iter().any(|l| l.actor.contains("deployment")));
    }

    #[test]
    fn a_terminal_command_is_on_its_steps_user_requests_only() {
        let reports = small_starter_reports();
        let refs: Vec<(u64, &StepReport)> = reports.iter().map(|(s, r)| (*s, r)).collect();
        let cmd = "kubectl create deployment web --image=nginx:1.27";
        let lanes = lanes(&refs, 10_000, |step| (step == 1).then(|| cmd.to_owned()));
        assert_eq!(lanes[0].entries[0].command.as_deref(), Some(cmd));
        let others: Vec<&TimelineEntry> = lanes
            .iter()
            .flat_map(|l| l.entries.iter())
            .filter(|e| e.command.is_some())
            .collect();
        assert_eq!(others.len(), 1, "{others:?}");
    }
}
