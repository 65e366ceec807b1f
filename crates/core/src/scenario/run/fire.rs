//! Firing an action: its request sent (a `bodyFrom` copy of an earlier answer, merge-edited,
//! as its body), the answer recorded and the expectations on that answer decided at once.

use super::{ActionResponse, ExpectationResult, RunProblem, ScenarioRun};
use crate::api::RequestBody;
use crate::engine::Input;
use crate::scenario::predicates::Check;

impl ScenarioRun {
    pub(super) fn fire(&mut self, i: usize) {
        let action = self.actions[i].clone();
        let now = self.now_ms();
        let mut request = action.request.clone();
        let mut key = action.key.clone();
        if let Some(select) = &action.select {
            let Some(picked) = select.pick(&self.world) else {
                self.problems.push(RunProblem {
                    path: format!("actions[{i}].target"),
                    time_ms: now,
                    message: format!("no object matches the target of {}", action.label),
                });
                return;
            };
            request.name = picked.name.to_string();
            key = Some(picked);
        }
        if let Some(j) = action.body_from {
            let Some(mut copy) = self.copies[j].clone() else {
                self.problems.push(RunProblem {
                    path: format!("actions[{i}].bodyFrom"),
                    time_ms: now,
                    message: format!(
                        "action {} left no copy of the object to start from",
                        self.actions[j].label
                    ),
                });
                return;
            };
            if let Some(edit) = &action.edit {
                crate::api::meta::merge_patch(&mut copy, edit.clone());
            }
            request.body = RequestBody::Object(copy);
        }
        self.sent[i] = Some(request.clone());
        self.sources
            .push((self.world.inputs().len(), super::Source::Action(i)));
        let report = self.world.apply(Input::Request { request });
        let (code, message) = report
            .requests()
            .next()
            .map(|r| (r.code, r.message.clone()))
            .unwrap_or((0, String::new()));
        self.absorb(report);
        let id = action.id.clone();
        if code == 404 && !self.has_response_expectation(i) {
            self.problems.push(RunProblem {
                path: format!("actions[{i}]"),
                time_ms: now,
                message: format!("the target of {} does not exist: {message}", action.label),
            });
        }
        if code < 400 {
            if let Some(key) = &key {
                self.copies[i] = self.world.api().get(key).cloned();
            }
        }
        self.responses[i] = Some(ActionResponse {
            index: i,
            id,
            time_ms: now,
            code,
            message: message.clone(),
        });
        for (k, e) in self.expectations.iter().enumerate() {
            if let Check::Response {
                action,
                code: want_code,
                message: want_message,
            } = &e.check
            {
                if *action != i || self.results[k].is_some() {
                    continue;
                }
                let passed = want_code.is_none_or(|c| c == code)
                    && want_message.as_ref().is_none_or(|m| *m == message);
                let expected = response_text(*want_code, want_message.as_deref());
                let got = response_text(
                    want_code.map(|_| code),
                    want_message.as_ref().map(|_| message.as_str()),
                );
                self.results[k] = Some(ExpectationResult {
                    index: k,
                    description: e.description.clone(),
                    passed,
                    time_ms: now,
                    expected,
                    got,
                });
            }
        }
    }

    fn has_response_expectation(&self, i: usize) -> bool {
        self.expectations
            .iter()
            .any(|e| matches!(e.check, Check::Response { action, .. } if action == i))
    }
}

fn response_text(code: Option<u16>, message: Option<&str>) -> String {
    match (code, message) {
        (Some(c), Some(m)) => format!("{c} {m:?}"),
        (Some(c), None) => c.to_string(),
        (None, Some(m)) => format!("{m:?}"),
        (None, None) => String::new(),
    }
}

pub(super) fn response_text_for(c: &Check) -> String {
    match c {
        Check::Response { code, message, .. } => response_text(*code, message.as_deref()),
        _ => String::new(),
    }
}
