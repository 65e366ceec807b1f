//! The session's mechanics: how one action runs on the live world (forking first when the
//! timeline is scrubbed back), how the editor's text becomes an API request, and the derived
//! data the panels format (status view, timeline lanes, the editor's resourceVersion drift).

use std::collections::VecDeque;

use converge_core::api::{ApiRequest, ObjectKey};
use converge_core::engine::{Fault, Input, StepReport};
use converge_core::parse;
use converge_core::view;
use converge_core::view::chart::{chart, Chart};
use converge_core::view::events::{events_of, EventRow};
use converge_core::view::sequence::{sequence, Sequence};
use converge_core::view::session::{self, SessionAction};
use converge_core::view::status::{status_view, StatusView};
use converge_core::view::timeline::{self, Lane};
use converge_core::view::why::{badge_field_path, badge_note, why_view};

use super::{FaultMsg, Model, Target, WhyOf, MAX_EVENTS_PER_TICK, REPORTS_KEPT, SPEEDS, TICK_MS};

/// Timeline entries shown at once.
pub const TIMELINE_ENTRIES: usize = 80;

/// kube's answer to the last Apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyOutcome {
    pub code: u16,
    pub message: String,
    /// What to type on a real cluster for the same request, with the editor's text on stdin
    /// (`kubectl replace -f -`); `None` when nothing was sent.
    pub equivalent: Option<String>,
}

/// The kubectl command that sends what an editor Apply sends: `create -f -` (POST), `replace
/// -f -` (PUT) or `replace --subresource=status -f -` (PUT of /status), as `principal`.
pub fn equivalent_command(principal: &str, exists: bool, target: Target) -> String {
    let who = if principal == converge_core::kubectl::terminal::USER {
        String::new()
    } else {
        format!("--as {principal} ")
    };
    let verb = match (exists, target) {
        (false, _) => "create -f -",
        (true, Target::Main) => "replace -f -",
        (true, Target::Status) => "replace --subresource=status -f -",
    };
    format!("kubectl {who}{verb}")
}

impl ApplyOutcome {
    pub fn is_error(&self) -> bool {
        self.code >= 400
    }

    /// kubectl's way of printing it.
    pub fn text(&self) -> String {
        let reason = match self.code {
            403 => "Forbidden",
            404 => "NotFound",
            409 => "Conflict",
            422 => "Invalid",
            400 => "BadRequest",
            _ => "",
        };
        match (self.is_error(), reason) {
            (false, _) => format!("{} OK: applied", self.code),
            (true, "") => format!("Error from server ({}): {}", self.code, self.message),
            (true, r) => format!("Error from server ({r}): {}", self.message),
        }
    }
}

/// The editor holds an object loaded at an older resourceVersion than the stored one: Apply
/// will be refused with 409 Conflict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditorDrift {
    /// The resourceVersion in the editor's text.
    pub in_editor: String,
    /// The resourceVersion of the stored object.
    pub stored: String,
}

/// One controller's row in the fault panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerRow {
    pub name: String,
    /// Its run state as the engine prints it (Running, Paused, Crashed...).
    pub state: String,
}

impl Model {
    pub(super) fn tick(&mut self) {
        match SPEEDS.get(self.speed).and_then(|s| s.1) {
            Some(per_second) => self.perform(SessionAction::apply(Input::Advance {
                ms: per_second * u64::from(TICK_MS) / 1000,
            })),
            None => {
                for _ in 0..MAX_EVENTS_PER_TICK {
                    if self.world.is_converged() || self.world.next_event_time().is_none() {
                        self.playing = false;
                        break;
                    }
                    self.perform(SessionAction::NextEvent);
                }
            }
        }
    }

    /// Runs one action on the live world (forking first when scrubbed back) and logs it.
    pub(super) fn perform(&mut self, action: SessionAction) {
        if self.cursor.is_some() {
            self.fork();
        }
        let report = session::perform(&mut self.world, &action);
        self.actions.push(action);
        self.history.push(&self.world);
        keep_report(&mut self.reports, self.world.steps(), report);
        self.lessons.follow(&self.world);
        if let Some(key) = self.lessons.take_focus() {
            if self.selected.as_ref() != Some(&key) {
                self.load(Some(key));
            }
        }
    }

    pub(super) fn fork(&mut self) {
        let Some(step) = self.cursor.take() else {
            return;
        };
        if let Some(world) = self.history.fork(step) {
            // Each action is one world step, on top of the steps that built the base world (a
            // scenario's objects): keep the actions that led to the snapshot.
            let base_steps = self.base_steps();
            self.lessons.fork(&world);
            self.world = world;
            self.actions
                .truncate(step.saturating_sub(base_steps) as usize);
            self.reports.retain(|(s, _)| *s <= step);
            self.notice = Some(format!("Forked at step {step}: later steps were dropped."));
        }
    }

    pub(super) fn default_selection(&self) -> Option<ObjectKey> {
        self.selected.clone().or_else(|| {
            self.world
                .objects()
                .map(|(k, _)| k)
                .find(|k| k.gr.resource == "deployments")
                .cloned()
        })
    }

    /// Loads `key` from the shown world into the editor and the status panel.
    pub(super) fn load(&mut self, key: Option<ObjectKey>) {
        self.outcome = None;
        self.selected = key;
        if let Some(obj) = self.selected.as_ref().and_then(|k| self.shown().object(k)) {
            self.editor_text = view::print(&view::editable(obj), self.syntax);
        }
        self.check_editor();
    }

    pub(super) fn check_editor(&mut self) {
        self.diagnostics = match parse::parse_documents(&self.editor_text) {
            Ok(_) => Vec::new(),
            Err(e) => vec![e],
        };
    }

    /// Sends the editor's object as an update (or a create, if it does not exist) through the
    /// API server as the chosen principal. The editor keeps the text on refusal.
    pub(super) fn apply(&mut self) {
        let doc = match parse::parse_documents(&self.editor_text) {
            Ok(docs) => docs.into_iter().next(),
            Err(e) => {
                self.diagnostics = vec![e];
                return;
            }
        };
        let Some(doc) = doc else {
            self.outcome = Some(ApplyOutcome {
                code: 400,
                message: "the editor holds no object".into(),
                equivalent: None,
            });
            return;
        };
        let world = self.shown();
        let key = match world.api().key_for_manifest(&doc) {
            Ok(k) => k,
            Err(e) => {
                self.outcome = Some(ApplyOutcome {
                    code: e.code(),
                    message: e.message,
                    equivalent: None,
                });
                return;
            }
        };
        let p = self.principal.as_str();
        let exists = world.api().get(&key).is_some();
        let equivalent = equivalent_command(p, exists, self.target);
        let request = match (exists, self.target) {
            (false, _) => ApiRequest::create(p, key.gr.clone(), &key.namespace, doc),
            (true, Target::Main) => {
                ApiRequest::update(p, key.gr.clone(), &key.namespace, &key.name, doc)
            }
            (true, Target::Status) => {
                ApiRequest::update_status(p, key.gr.clone(), &key.namespace, &key.name, doc)
            }
        };
        self.perform(SessionAction::apply(Input::Request { request }));
        let answer = self
            .reports
            .back()
            .and_then(|(_, r)| r.requests().next().cloned());
        if let Some(rec) = answer {
            self.outcome = Some(ApplyOutcome {
                code: rec.code,
                message: rec.message,
                equivalent: Some(equivalent),
            });
            if rec.code < 400 {
                self.first_edit_hint = false;
                let outcome = self.outcome.take();
                self.load(Some(key));
                self.outcome = outcome;
            }
        }
    }

    /// The status panel's view of the selected object in the shown world, with what changed
    /// since the step before.
    pub fn status_view(&self) -> Option<StatusView> {
        let w = self.shown();
        let obj = self.selected.as_ref().and_then(|k| w.object(k))?;
        let before = self
            .selected
            .as_ref()
            .and_then(|k| self.previous().and_then(|p| p.object(k)));
        Some(status_view(obj, before, w.now()))
    }

    /// The Events about the selected object in the shown world, as `kubectl describe` lists
    /// them.
    pub fn events_view(&self) -> Vec<EventRow> {
        let w = self.shown();
        self.selected
            .as_ref()
            .map(|k| events_of(w, k, w.now()))
            .unwrap_or_default()
    }

    /// The reports up to the shown step.
    fn shown_reports(&self) -> Vec<(u64, &StepReport)> {
        let upto = self.shown().steps();
        self.reports
            .iter()
            .filter(|(s, _)| *s <= upto)
            .map(|(s, r)| (*s, r))
            .collect()
    }

    /// Whether the shown step is the one the session was read back at from a checkpoint, whose
    /// requests and watch events were not kept.
    pub fn shown_step_restored(&self) -> bool {
        self.restored_at == Some(self.shown().steps()) && self.shown_reports().is_empty()
    }

    /// The timeline's lanes up to the shown step.
    pub fn timeline_lanes(&self) -> Vec<Lane> {
        timeline::lanes(&self.shown_reports(), TIMELINE_ENTRIES, |step| {
            self.action_at(step)
                .and_then(SessionAction::command)
                .map(str::to_owned)
        })
    }

    /// The steps that built the base world (a scenario's objects) before the logged actions.
    fn base_steps(&self) -> u64 {
        self.world.steps().saturating_sub(self.actions.len() as u64)
    }

    /// The logged action that made world step `step` (each action is one step, on top of the
    /// steps that built the base world).
    fn action_at(&self, step: u64) -> Option<&SessionAction> {
        let i = step.checked_sub(self.base_steps() + 1)?;
        self.actions.get(usize::try_from(i).ok()?)
    }

    /// The sequence diagram of the same events as the cards (the newest `TIMELINE_ENTRIES`
    /// up to the shown step), the open chain and the selected object highlighted.
    pub fn sequence_view(&self) -> Sequence {
        let reports = self.shown_reports();
        // The events the cards would show: the newest TIMELINE_ENTRIES.
        let mut budget = TIMELINE_ENTRIES;
        let mut from = reports.len();
        while from > 0 && budget > 0 {
            from -= 1;
            budget = budget.saturating_sub(reports[from].1.events.len());
        }
        let why = self.why.as_deref().and_then(|w| w.as_ref().ok());
        sequence(
            &reports[from..],
            !self.page.idle_deliveries,
            why,
            self.selected.as_ref(),
        )
    }

    /// The selected object's convergence chart over the live world's remembered changes, the
    /// cursor at the shown moment.
    pub fn chart_view(&self) -> Option<Chart> {
        let key = self.selected.as_ref()?;
        chart(&self.world, key, self.shown().now())
    }

    /// Opens the chain of `of` on `key` in the shown world, and selects `key`.
    pub(super) fn open_why(&mut self, key: ObjectKey, of: WhyOf) {
        let w = self.shown();
        let chain = match (&of, w.object(&key)) {
            (_, None) => Err(format!(
                "{} does not exist at {}",
                converge_core::engine::world::key_text(&key),
                w.now()
            )),
            (WhyOf::Field(f), Some(_)) => why_view(w, &key, f, None),
            (WhyOf::Badge, Some(obj)) => why_view(
                w,
                &key,
                badge_field_path(obj),
                badge_note(obj, w.now().unix_ms()),
            ),
        };
        self.why = Some(std::rc::Rc::new(chain));
        if self.selected.as_ref() != Some(&key) {
            self.load(Some(key));
        }
    }

    /// Follows a hop: the world after its step (live when that is the newest), its object
    /// selected. A step older than the kept history is not followed.
    pub(super) fn follow_hop(&mut self, step: u64, key: ObjectKey) {
        if step < self.world.steps() && self.history.at(step).is_none() {
            return;
        }
        self.playing = false;
        self.cursor = (step < self.world.steps()).then_some(step);
        self.load(Some(key));
    }

    /// The first step the timeline can be scrubbed back to.
    pub fn first_kept_step(&self) -> u64 {
        self.history.steps().next().unwrap_or(0)
    }

    /// Whether the editor's object is older than the stored one it was loaded from.
    pub fn editor_drift(&self) -> Option<EditorDrift> {
        let resource_version = |o: &converge_core::json::Value| {
            o.pointer("/metadata/resourceVersion")
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        let stored = self
            .selected
            .as_ref()
            .and_then(|k| self.shown().object(k))
            .and_then(resource_version)?;
        let in_editor = parse::parse_documents(&self.editor_text)
            .ok()
            .and_then(|d| d.into_iter().next())
            .and_then(|o| resource_version(&o))?;
        (stored != in_editor).then_some(EditorDrift { in_editor, stored })
    }

    /// The live world's controllers and their run states, for the fault panel.
    pub fn controller_rows(&self) -> Vec<ControllerRow> {
        let w = &self.world;
        w.controller_names()
            .into_iter()
            .map(|name| ControllerRow {
                state: w
                    .controller_state(&name)
                    .map(|s| format!("{s:?}"))
                    .unwrap_or_default(),
                name,
            })
            .collect()
    }

    /// The live world's node names (each has a kubelet whose image pulls can fail).
    pub fn node_names(&self) -> Vec<String> {
        self.world
            .objects()
            .filter(|(k, _)| k.gr.resource == "nodes")
            .map(|(k, _)| k.name.to_string())
            .collect()
    }
}

pub(super) fn keep_report(
    reports: &mut VecDeque<(u64, StepReport)>,
    step: u64,
    mut report: StepReport,
) {
    // The timeline shows the newest TIMELINE_ENTRIES events up to the shown step, so no more
    // of a long run is ever shown (a run until converged of the large starter is ~40,000).
    report.keep_newest(TIMELINE_ENTRIES);
    if reports.len() == REPORTS_KEPT {
        reports.pop_front();
    }
    reports.push_back((step, report));
}

pub(super) fn fault_for(f: FaultMsg, nodes: &[String]) -> Fault {
    match f {
        FaultMsg::Pause(controller) => Fault::PauseController { controller },
        FaultMsg::Resume(controller) => Fault::ResumeController { controller },
        FaultMsg::Crash(controller) => Fault::CrashController { controller },
        FaultMsg::Restart(controller) => Fault::RestartController { controller },
        FaultMsg::WatchLatency(ms) => Fault::WatchLatency {
            controller: None,
            ms,
        },
        FaultMsg::ImagePull { node, failing } => Fault::ImagePullFailure { node, failing },
        FaultMsg::AddNode => {
            let name = (1..)
                .map(|i| format!("node-{i}"))
                .find(|n| !nodes.contains(n))
                .unwrap_or_default();
            Fault::AddNode {
                node: converge_core::engine::NodeSpec::new(&name, "4", "8Gi"),
            }
        }
        FaultMsg::RemoveNode(node) => Fault::RemoveNode { node },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Msg;
    use converge_core::json::Value;
    use converge_core::view::tree::Row;

    fn deployment(m: &Model) -> Value {
        m.world
            .objects()
            .find(|(k, _)| k.gr.resource == "deployments")
            .map(|(_, o)| o.as_ref().clone())
            .unwrap_or(Value::Null)
    }

    #[test]
    fn the_starter_loads_the_deployment_into_the_editor() {
        let m = Model::default();
        assert!(
            m.editor_text.contains("\"replicas\": 3"),
            "{}",
            m.editor_text
        );
        assert!(m.diagnostics.is_empty());
    }

    #[test]
    fn scaling_to_five_bumps_generation_and_converges() {
        let mut m = Model::default();
        let text = m.editor_text.replace("\"replicas\": 3", "\"replicas\": 5");
        m.update(Msg::EditorInput(text));
        m.update(Msg::Apply);
        assert_eq!(m.outcome.as_ref().map(|o| o.code), Some(200));
        assert_eq!(
            deployment(&m).pointer("/metadata/generation"),
            Some(&Value::from(2))
        );
        m.update(Msg::RunUntilConverged);
        assert_eq!(
            deployment(&m).pointer("/status/readyReplicas"),
            Some(&Value::from(5))
        );
    }

    #[test]
    fn a_stale_edit_is_refused_with_409_and_the_text_is_kept() {
        let mut m = Model::default();
        let text = m.editor_text.replace("\"replicas\": 3", "\"replicas\": 4");
        m.update(Msg::EditorInput(text));
        m.update(Msg::Apply);
        let loaded = m.editor_text.clone();
        m.update(Msg::RunUntilConverged);
        let edited = loaded.replace("\"replicas\": 4", "\"replicas\": 6");
        m.update(Msg::EditorInput(edited.clone()));
        m.update(Msg::Apply);
        assert_eq!(
            m.outcome.as_ref().map(|o| o.code),
            Some(409),
            "{:?}",
            m.outcome
        );
        assert_eq!(m.editor_text, edited);
    }

    #[test]
    fn app_may_not_write_status() {
        let mut m = Model::default();
        m.update(Msg::SetPrincipal("app".into()));
        m.update(Msg::SetTarget(Target::Status));
        m.update(Msg::Apply);
        let o = m.outcome.clone().unwrap_or(ApplyOutcome {
            code: 0,
            message: String::new(),
            equivalent: None,
        });
        assert_eq!(o.code, 403);
        assert!(
            o.text().starts_with("Error from server (Forbidden): "),
            "{}",
            o.text()
        );
    }

    #[test]
    fn scrubbing_back_and_forking_drops_later_steps() {
        let mut m = Model::default();
        m.update(Msg::Step);
        m.update(Msg::Step);
        assert_eq!(m.world.steps(), 4);
        m.update(Msg::Scrub(Some(2)));
        assert_eq!(m.shown().steps(), 2);
        m.update(Msg::Fork);
        assert_eq!(m.world.steps(), 2);
        assert_eq!(m.actions.len(), 2);
    }

    #[test]
    fn the_workspace_replays_to_the_same_trace() {
        let mut m = Model::default();
        m.update(Msg::Step);
        m.update(Msg::NextEvent);
        let again = Model::from_workspace(m.workspace());
        assert_eq!(again.world.trace_text(), m.world.trace_text());
    }

    #[test]
    fn the_rbac_switch_is_logged_and_survives_a_replay() {
        let mut m = Model::default();
        m.update(Msg::SetRbacEnforced(false));
        assert!(!m.world.api().rbac_enforced());
        m.update(Msg::SetPrincipal("app".into()));
        m.update(Msg::SetTarget(Target::Status));
        m.update(Msg::Apply);
        assert_eq!(
            m.outcome.as_ref().map(|o| o.code),
            Some(200),
            "{:?}",
            m.outcome
        );
        let again = Model::from_workspace(m.workspace());
        assert!(!again.world.api().rbac_enforced());
        assert_eq!(again.world.trace_text(), m.world.trace_text());
    }

    #[test]
    fn the_tree_follows_the_world_and_the_scrubbed_snapshot() {
        let mut m = Model::default();
        let pods = |m: &Model| {
            m.rows
                .iter()
                .filter(|r| matches!(r, Row::Object(o) if o.kind == "Pod"))
                .count()
        };
        assert_eq!(pods(&m), 3);
        let text = m.editor_text.replace("\"replicas\": 3", "\"replicas\": 5");
        m.update(Msg::EditorInput(text));
        m.update(Msg::Apply);
        m.update(Msg::RunUntilConverged);
        assert_eq!(pods(&m), 5);
        m.update(Msg::Scrub(Some(2)));
        assert_eq!(pods(&m), 3);
    }

    /// The fault panel's node buttons: "Add a node" joins the next free `node-<n>`, "remove
    /// node" takes one away; the panel's list follows the world's Nodes.
    #[test]
    fn nodes_join_and_leave_from_the_fault_panel() {
        let mut m = Model::default();
        m.update(Msg::RunUntilConverged);
        let before = m.node_names();
        m.update(Msg::Fault(FaultMsg::AddNode));
        m.update(Msg::Step);
        let joined = m.node_names();
        assert_eq!(joined.len(), before.len() + 1);
        let new = format!("node-{}", before.len() + 1);
        assert!(joined.contains(&new), "{joined:?}");
        m.update(Msg::Fault(FaultMsg::RemoveNode(new.clone())));
        m.update(Msg::Step);
        assert_eq!(m.node_names(), before);
    }

    /// The panels' props are built from these: equal props are not rendered again, so typing
    /// redraws the editor panel only.
    #[test]
    fn typing_in_the_editor_leaves_the_other_panels_inputs_as_they_were() {
        let mut m = Model::default();
        m.update(Msg::Step);
        let before = (
            m.rows.clone(),
            m.status_view(),
            m.timeline_lanes(),
            m.controller_rows(),
            m.node_names(),
        );
        let text = m.editor_text.replace("\"replicas\": 3", "\"replicas\": 4");
        m.update(Msg::EditorInput(text));
        let after = (
            m.rows.clone(),
            m.status_view(),
            m.timeline_lanes(),
            m.controller_rows(),
            m.node_names(),
        );
        assert_eq!(before, after);
        assert!(m.editor_drift().is_none());
    }
}
