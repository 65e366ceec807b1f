//! A custom controller defined by data, not Rust: a list of steps run in order on every
//! reconcile of each parent object (level-triggered): create a child from a template, wait for
//! a child to be Ready (kstatus Current), set a condition. `{{name}}` and `{{namespace}}` in child
//! names and templates are replaced by the parent's. The controller writes `Reconciling` while a
//! step is pending, and observedGeneration.

use crate::api::meta::Fields;
use std::sync::Arc;

use crate::json::{json, Value};
use serde::{Deserialize, Serialize};

use crate::api::meta;
use crate::api::{ApiRequest, GroupResource, ObjectKey, StatusReason, WatchEvent};
use crate::conditions::{self, Cond};
use crate::runtime::client;
use crate::runtime::health::{self, Health};
use crate::runtime::Informer;
use crate::runtime::{Ctx, ReconcileAction, ReconcileError, Reconciler};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "camelCase")]
pub enum Step {
    /// Create `object` (a template) as a child owned by the parent, if it does not exist.
    CreateChild {
        resource: GroupResource,
        object: Value,
    },
    /// Wait until the named child is Ready (kstatus Current).
    WaitReady {
        resource: GroupResource,
        name: String,
    },
    /// Set a condition on the parent's status.
    SetCondition {
        #[serde(rename = "type")]
        type_: String,
        status: String,
        reason: String,
        message: String,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclarativeSpec {
    /// Lane name, e.g. `cache-controller`.
    pub name: String,
    pub principal: String,
    /// The parent resource it reconciles.
    pub parent: GroupResource,
    /// The parent's kind, as written in children's ownerReferences.
    pub parent_kind: String,
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeclarativeController {
    pub spec: DeclarativeSpec,
}

impl DeclarativeController {
    pub fn new(spec: DeclarativeSpec) -> Self {
        DeclarativeController { spec }
    }
}

fn substitute(v: &Value, name: &str, ns: &str) -> Value {
    match v {
        Value::String(s) => Value::String(
            s.replace("{{name}}", name)
                .replace("{{namespace}}", ns)
                .into(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, name, ns)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), substitute(x, name, ns)))
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Reconciler for DeclarativeController {
    fn name(&self) -> String {
        self.spec.name.clone()
    }

    fn principal(&self) -> String {
        self.spec.principal.clone()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == self.spec.parent
            || self.spec.steps.iter().any(|s| match s {
                Step::CreateChild { resource, .. } | Step::WaitReady { resource, .. } => {
                    resource == gr
                }
                Step::SetCondition { .. } => false,
            })
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.key.gr == self.spec.parent {
            return vec![ObjectKey::clone(&ev.key)];
        }
        let owner = |o: &Value| {
            meta::controller_of(o)
                .filter(|(k, _, _)| *k == self.spec.parent_kind)
                .map(|(_, n, _)| ObjectKey::new(self.spec.parent.clone(), &ev.key.namespace, n))
        };
        owner(new)
            .or_else(|| old.and_then(|o| owner(o)))
            .into_iter()
            .collect()
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(parent) = ctx.cache.get(key).map(|p| p.as_ref().clone()) else {
            return Ok(ReconcileAction::AwaitChange);
        };
        let principal = self.principal();
        let (name, ns) = (key.name.clone(), key.namespace.clone());
        let generation = meta::generation(&parent);
        let now = ctx.now;
        let mut status = parent.field("status").cloned().unwrap_or_else(|| json!({}));
        let before = status.clone();
        let mut pending: Option<String> = None;
        for step in &self.spec.steps {
            match step {
                Step::CreateChild { resource, object } => {
                    let mut obj = substitute(object, &name, &ns);
                    obj["metadata"]["namespace"] = json!(ns);
                    obj["metadata"]["ownerReferences"] =
                        json!([meta::owner_reference(&parent, true)]);
                    let child = ObjectKey::new(resource.clone(), &ns, meta::name(&obj));
                    if ctx.cache.get(&child).is_none() {
                        match ctx.send(ApiRequest::create(&principal, resource.clone(), &ns, obj)) {
                            Ok(_) => {}
                            Err(e) if e.reason == StatusReason::AlreadyExists => {}
                            Err(e) => return Err(e.into()),
                        }
                        pending = Some(format!(
                            "Creating {} \"{}\"",
                            resource.qualified(),
                            child.name
                        ));
                        break;
                    }
                }
                Step::WaitReady {
                    resource,
                    name: child,
                } => {
                    let child = substitute(&json!(child), &name, &ns);
                    let child = child.as_str().unwrap_or_default();
                    let key = ObjectKey::new(resource.clone(), &ns, child);
                    let ready = ctx
                        .cache
                        .get(&key)
                        .is_some_and(|c| health::compute(c, now) == Health::Current);
                    if !ready {
                        pending = Some(format!(
                            "Waiting for {} \"{child}\" to be Ready",
                            resource.qualified()
                        ));
                        break;
                    }
                }
                Step::SetCondition {
                    type_,
                    status: s,
                    reason,
                    message,
                } => {
                    let message = message
                        .replace("{{name}}", &name)
                        .replace("{{namespace}}", &ns);
                    conditions::set_status_condition(
                        &mut status,
                        Cond {
                            type_,
                            status: s,
                            reason,
                            message: &message,
                        },
                        generation,
                        now,
                    );
                }
            }
        }
        match &pending {
            Some(msg) => {
                conditions::set_status_condition(
                    &mut status,
                    Cond {
                        type_: "Reconciling",
                        status: "True",
                        reason: "StepPending",
                        message: msg,
                    },
                    generation,
                    now,
                );
            }
            None => {
                conditions::remove_condition(&mut status, "Reconciling");
            }
        }
        status["observedGeneration"] = json!(generation);
        if status != before {
            let mut body = parent.clone();
            body["status"] = status;
            ctx.send(client::update_status_object(
                &principal,
                self.spec.parent.clone(),
                body,
            ))?;
        }
        Ok(ReconcileAction::AwaitChange)
    }
}
