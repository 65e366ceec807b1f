//! "Why does this field have this value?": a chain walked from the engine's provenance records
//! ([`crate::engine::provenance`]), from the write that last changed the field back to a root.
//!
//! The chain is a view model for the CLI (`converge why`) and the playground: each hop names
//! its trace line, world step, simulated time and the object it touched, so a viewer can scrub
//! to it. A reconcile hop lists every queue entry the reconcile consumed and says which one the
//! chain follows: the entry that queued the key (the work queue coalesced the others into it),
//! unless that entry is the controller's own write coming back to it and another entry is not
//! (an echo of a write carries nothing the controller did not send itself). A requeue or a
//! back-off leads to the reconcile that asked for it; a watch delivery to the write it carried.
//! Runs of hops that repeat (a feedback loop, a sync period) are folded into one
//! [`Hop::Repeat`].

use crate::json::Value;
use serde::Serialize;

use crate::api::{ObjectKey, WatchEventType};
use crate::engine::provenance::{Cause, Origin, ReconcileRec, Root, WriteRec, WINDOW};
use crate::engine::world::{key_text, ms_text};
use crate::engine::World;
use crate::runtime::Explanation;
use crate::scenario::path::FieldPath;
use crate::time::SimTime;

#[cfg(test)]
mod tests;

/// Why `field` of `key` held `value` at `at`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Chain {
    pub key: ObjectKey,
    pub field: String,
    pub value: Value,
    pub at: SimTime,
    /// From the write that set the value back towards the root.
    pub hops: Vec<Hop>,
    pub root: Root,
    /// The chains of the fields the setter's decision about this field read (its
    /// explanation's inputs), each as it was when read: why the decision went that way.
    pub inputs: Vec<Chain>,
}

/// One hop of a chain.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "hop", rename_all = "camelCase")]
pub enum Hop {
    /// A write (one object change), who sent it, and the decisions it carries: the latest
    /// explanation per subject its reconcile recorded before sending it.
    #[serde(rename_all = "camelCase")]
    Write {
        write: WriteRec,
        explanations: Vec<Explanation>,
    },
    /// A reconcile, every queue entry it consumed, and the one the chain follows.
    #[serde(rename_all = "camelCase")]
    Reconcile {
        line: u64,
        step: u64,
        time: SimTime,
        controller: String,
        key: ObjectKey,
        /// The index in `causes` of the entry the chain follows.
        via: usize,
        /// The index in `causes` of the entry that queued the key.
        trigger: usize,
        causes: Vec<Cause>,
        explanations: Vec<Explanation>,
    },
    /// The `period` hops before this one repeat `times` more times, back to `until`.
    #[serde(rename_all = "camelCase")]
    Repeat {
        period: usize,
        times: usize,
        until: SimTime,
    },
}

/// Why a chain cannot be walked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WhyError {
    #[error("{object} does not exist at {at}")]
    UnknownObject { object: String, at: SimTime },
    #[error("{field} is not set on {object} at {at}")]
    FieldNotSet {
        field: String,
        object: String,
        at: SimTime,
    },
    #[error("{at} is after the world's time {now}")]
    Future { at: SimTime, now: SimTime },
}

impl World {
    /// Why `field` of `key` has its value at `at` (now when `None`): the write that last changed
    /// it, what sent that write, and so on to a root; and, for the decisions that write carries
    /// which name the fields they read, the chains of those fields' values as they were read.
    pub fn why(
        &self,
        key: &ObjectKey,
        field: &FieldPath,
        at: Option<SimTime>,
    ) -> Result<Chain, WhyError> {
        let now = self.now();
        let at = at.unwrap_or(now);
        if at > now {
            return Err(WhyError::Future { at, now });
        }
        let prov = self.provenance();
        let mut writes = prov
            .writes_of(key)
            .rev()
            .filter(|w| w.time <= at)
            .peekable();
        if writes.peek().is_none() {
            // Every change of an object that exists is older than the window.
            let evicted = prov.len().0 >= WINDOW;
            return match self.object(key) {
                Some(obj) if evicted && at == now => {
                    let value = field.get(obj).cloned().ok_or(WhyError::FieldNotSet {
                        field: field.text().to_owned(),
                        object: key_text(key),
                        at,
                    })?;
                    Ok(Chain {
                        key: key.clone(),
                        field: field.text().to_owned(),
                        value,
                        at,
                        hops: Vec::new(),
                        root: Root::Truncated,
                        inputs: Vec::new(),
                    })
                }
                _ => Err(WhyError::UnknownObject {
                    object: key_text(key),
                    at,
                }),
            };
        }
        let mut chain = self.chain_of(key, field, at, writes)?;
        let setter = match chain.hops.first() {
            Some(Hop::Write {
                write,
                explanations,
            }) => Some((write.clone(), explanations.clone())),
            _ => None,
        };
        if let Some((write, explanations)) = setter {
            for e in explanations
                .iter()
                .filter(|e| about(field.text(), &e.subject))
            {
                for input in &e.inputs {
                    let Ok(path) = FieldPath::parse(input) else {
                        continue;
                    };
                    // The value as it was before the write, as the reconcile read it.
                    let earlier = prov
                        .writes_of(&write.key)
                        .rev()
                        .filter(|w| w.resource_version < write.resource_version);
                    if let Ok(c) = self.chain_of(&write.key, &path, write.time, earlier) {
                        chain.inputs.push(c);
                    }
                }
            }
        }
        Ok(chain)
    }

    /// The chain of `field` of `key` in the newest of `writes` (newest first).
    fn chain_of<'a>(
        &'a self,
        key: &ObjectKey,
        field: &FieldPath,
        at: SimTime,
        mut writes: impl Iterator<Item = &'a WriteRec>,
    ) -> Result<Chain, WhyError> {
        let object = key_text(key);
        let Some(latest) = writes.next() else {
            return Err(WhyError::UnknownObject { object, at });
        };
        let Some(after) = latest.after.as_deref() else {
            return Err(WhyError::UnknownObject { object, at });
        };
        let Some(value) = field.get(after).cloned() else {
            return Err(WhyError::FieldNotSet {
                field: field.text().to_owned(),
                object,
                at,
            });
        };
        let changed = |w: &WriteRec| w.before.as_deref().and_then(|b| field.get(b)) != Some(&value);
        let setter = if changed(latest) {
            Some(latest)
        } else {
            writes.find(|w| changed(w))
        };
        let (hops, root) = match setter {
            Some(w) => self.walk(w),
            None => (Vec::new(), Root::Truncated),
        };
        Ok(Chain {
            key: key.clone(),
            field: field.text().to_owned(),
            value,
            at,
            hops: fold_repeats(hops),
            root,
            inputs: Vec::new(),
        })
    }

    /// The hops from a write back to its root.
    fn walk(&self, first: &WriteRec) -> (Vec<Hop>, Root) {
        let prov = self.provenance();
        let mut hops = Vec::new();
        let mut write = first;
        loop {
            hops.push(Hop::Write {
                write: write.clone(),
                explanations: prov.explanations_of(write),
            });
            let mut line = match &write.origin {
                Origin::Root(root) => return (hops, root.clone()),
                Origin::Reconcile { line } => *line,
            };
            // Reconciles, through the requeues and back-offs that chain them, to a write.
            loop {
                let Some(rec) = prov.reconcile(line) else {
                    return (hops, Root::Truncated);
                };
                let via = self.followed(rec);
                hops.push(Hop::Reconcile {
                    line: rec.line,
                    step: rec.step,
                    time: rec.time,
                    controller: rec.controller.clone(),
                    key: rec.key.clone(),
                    via,
                    trigger: rec.trigger,
                    causes: rec.causes.clone(),
                    explanations: rec.explanations.clone(),
                });
                match rec.causes.get(via) {
                    None => return (hops, Root::Truncated),
                    Some(Cause::Watch {
                        resource_version, ..
                    }) => match prov.write(*resource_version) {
                        Some(w) => {
                            write = w;
                            break;
                        }
                        None => return (hops, Root::Truncated),
                    },
                    Some(Cause::Requeue { line: l, .. } | Cause::Backoff { line: l, .. }) => {
                        line = *l;
                    }
                    Some(Cause::Restart {
                        line, time, input, ..
                    }) => {
                        let root = Root::Fault {
                            input: *input,
                            line: *line,
                            time: *time,
                            description: self.restart_fault_text(*input),
                        };
                        return (hops, root);
                    }
                }
            }
        }
    }

    /// The cause a reconcile hop follows: its trigger, unless that is an echo of the
    /// controller's own write and another cause is not.
    fn followed(&self, rec: &ReconcileRec) -> usize {
        let prov = self.provenance();
        let echo = |c: &Cause| match c {
            Cause::Watch {
                resource_version, ..
            } => prov
                .write(*resource_version)
                .is_some_and(|w| match w.origin {
                    Origin::Reconcile { line } => prov
                        .reconcile(line)
                        .is_some_and(|r| r.controller == rec.controller),
                    Origin::Root(_) => false,
                }),
            _ => false,
        };
        match rec.causes.get(rec.trigger) {
            Some(t) if echo(t) => rec
                .causes
                .iter()
                .position(|c| !echo(c))
                .unwrap_or(rec.trigger),
            _ => rec.trigger,
        }
    }
}

/// Whether a decision's subject (`Progressing`, `status.readyReplicas`) is what `field` asks
/// about (`status.conditions[type=Progressing].reason`, `status.readyReplicas`).
fn about(field: &str, subject: &str) -> bool {
    field == subject
        || field.starts_with(&format!("{subject}."))
        || field.contains(&format!("={subject}]"))
}

/// What makes two hops "the same" for folding repeats: who did what to which object (and, for
/// timers, after how long), not when.
fn signature(hop: &Hop) -> String {
    match hop {
        Hop::Write { write: w, .. } => format!(
            "w {} {} {:?} {:?} {}",
            w.principal,
            w.verb.as_str(),
            w.subresource,
            w.event_type,
            key_text(&w.key)
        ),
        Hop::Reconcile {
            controller,
            key,
            via,
            causes,
            ..
        } => {
            let via = match causes.get(*via) {
                Some(Cause::Watch { key, .. }) => format!("watch {}", key_text(key)),
                Some(Cause::Requeue { ms, .. }) => format!("requeue {ms}"),
                Some(Cause::Backoff { ms, .. }) => format!("backoff {ms}"),
                Some(Cause::Restart { .. }) => "restart".into(),
                None => String::new(),
            };
            format!("r {controller} {} {via}", key_text(key))
        }
        Hop::Repeat { period, times, .. } => format!("repeat {period} {times}"),
    }
}

/// The longest period folded (a loop of that many hops).
const MAX_PERIOD: usize = 12;

/// Folds each run of a repeating block of hops into the block and one [`Hop::Repeat`].
fn fold_repeats(hops: Vec<Hop>) -> Vec<Hop> {
    let sigs: Vec<String> = hops.iter().map(signature).collect();
    let mut out = Vec::with_capacity(hops.len());
    let mut i = 0;
    while i < hops.len() {
        let mut folded = false;
        for p in 1..=MAX_PERIOD {
            let mut times = 0;
            while i + p * (times + 2) <= hops.len()
                && sigs[i..i + p] == sigs[i + p * (times + 1)..i + p * (times + 2)]
            {
                times += 1;
            }
            if times > 0 {
                out.extend(hops[i..i + p].iter().cloned());
                let last = i + p * (times + 1) - 1;
                out.push(Hop::Repeat {
                    period: p,
                    times,
                    until: hop_time(&hops[last]),
                });
                i = last + 1;
                folded = true;
                break;
            }
        }
        if !folded {
            out.push(hops[i].clone());
            i += 1;
        }
    }
    out
}

fn hop_time(hop: &Hop) -> SimTime {
    match hop {
        Hop::Write { write: w, .. } => w.time,
        Hop::Reconcile { time, .. } => *time,
        Hop::Repeat { until, .. } => *until,
    }
}

fn event_name(t: WatchEventType) -> &'static str {
    match t {
        WatchEventType::Added => "ADDED",
        WatchEventType::Modified => "MODIFIED",
        WatchEventType::Deleted => "DELETED",
    }
}

/// `watch MODIFIED replicasets default/web-x rv=230 at t=1.000s`, `requeue after 1.000s`.
pub fn cause_text(c: &Cause) -> String {
    match c {
        Cause::Watch {
            line,
            time,
            event_type,
            key,
            resource_version,
            delay_ms,
        } => {
            let delay = if *delay_ms > 0 {
                format!(" (+{})", ms_text(*delay_ms))
            } else {
                String::new()
            };
            format!(
                "watch {} {} rv={resource_version} at {time}{delay} (line {})",
                event_name(*event_type),
                key_text(key),
                line + 1
            )
        }
        Cause::Requeue { time, ms, .. } => {
            format!("requeue after {} asked at {time}", ms_text(*ms))
        }
        Cause::Backoff { time, ms, .. } => {
            format!("retry after {} back-off, failed at {time}", ms_text(*ms))
        }
        Cause::Restart { time, .. } => format!("restart's initial list at {time}"),
    }
}

impl Hop {
    /// The hop as one line, e.g. `t=10.005s deployment-controller reconcile default/web, queued
    /// by watch MODIFIED deployments default/web rv=44 at t=10.005s (line 12)`.
    pub fn text(&self) -> String {
        match self {
            Hop::Write {
                write: w,
                explanations,
            } => {
                let sub = w
                    .subresource
                    .map_or(String::new(), |s| format!("/{}", s.as_str()));
                let mut s = format!(
                    "{} {} {}{sub} {} {} by {}",
                    w.time,
                    w.verb.as_str(),
                    w.resource(),
                    w.target(),
                    w.code,
                    w.principal,
                );
                // A write of another object than the request named (a binding, a dependent the
                // garbage collector deleted): the change too.
                if w.named.is_some() {
                    s.push_str(&format!(
                        " -> {} {}",
                        event_name(w.event_type),
                        key_text(&w.key)
                    ));
                }
                s.push_str(&format!(" (line {}, step {})", w.line + 1, w.step));
                if !explanations.is_empty() {
                    let e: Vec<String> = explanations.iter().map(|e| e.to_string()).collect();
                    s.push_str(&format!("; decided {}", e.join("; ")));
                }
                s
            }
            Hop::Reconcile {
                line,
                step,
                time,
                controller,
                key,
                via,
                causes,
                ..
            } => {
                let target = if key.namespace.is_empty() {
                    key.name.to_string()
                } else {
                    format!("{}/{}", key.namespace, key.name)
                };
                let mut s = format!("{time} {controller} reconcile {target}");
                if let Some(c) = causes.get(*via) {
                    s.push_str(&format!(", queued by {}", cause_text(c)));
                }
                if causes.len() > 1 {
                    s.push_str(&format!(" (+{} coalesced)", causes.len() - 1));
                }
                s.push_str(&format!(" (line {}, step {step})", line + 1));
                s
            }
            Hop::Repeat {
                period,
                times,
                until,
            } => format!(
                "... the {period} hop{} above repeat {times} more time{}, back to {until}",
                if *period == 1 { "" } else { "s" },
                if *times == 1 { "" } else { "s" },
            ),
        }
    }
}

/// The root as one line: `root: request by alice (input 0) at t=10.000s (line 150)`.
pub fn root_text(root: &Root) -> String {
    match root {
        Root::Request {
            principal,
            input,
            line,
            time,
        } => format!(
            "{time} root: request by {principal} (input {input}, line {})",
            line + 1
        ),
        Root::Fault {
            input,
            line,
            time,
            description,
        } => format!(
            "{time} root: fault {description} (input {input}, line {})",
            line + 1
        ),
        Root::Setup => "t=0.000s root: cluster set-up".into(),
        Root::EventTtl { line, time } => {
            format!(
                "{time} root: the API server's event TTL (line {})",
                line + 1
            )
        }
        Root::Truncated => format!(
            "root: history truncated (provenance keeps the newest {WINDOW} writes and reconciles)"
        ),
    }
}

impl Chain {
    /// One line per hop, root last; the first names the value.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.hops.len() + 2);
        out.push(format!(
            "{} {} = {} at {}",
            key_text(&self.key),
            self.field,
            self.value,
            self.at
        ));
        out.extend(self.hops.iter().map(Hop::text));
        out.push(root_text(&self.root));
        for input in &self.inputs {
            out.push(format!("decided from {}:", input.field));
            out.extend(input.lines().into_iter().map(|l| format!("  {l}")));
        }
        out
    }

    /// Whether the chain passes through a reconcile of `controller`.
    pub fn through_controller(&self, controller: &str) -> bool {
        self.hops.iter().any(|h| match h {
            Hop::Reconcile { controller: c, .. } => c == controller,
            _ => false,
        })
    }
}
