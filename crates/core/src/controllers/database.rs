//! The example custom resource `Database` (`example.com/v1`) and its controller: it owns a
//! ConfigMap `<name>-config` and a Deployment `<name>-db`, and reports `Ready`, `Reconciling`
//! and `Stalled` conditions (kstatus' abnormal-true conventions) with observedGeneration.

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::{json, Value};

use super::owner_key;
use super::util::{configmaps, databases, deployments};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{ApiRequest, GroupResource, ObjectKey, PatchType, StatusReason, WatchEvent};
use crate::conditions::{self, Cond};
use crate::runtime::client;
use crate::runtime::Informer;
use crate::runtime::{Ctx, ReconcileAction, ReconcileError, Reconciler};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DatabaseController {}

impl DatabaseController {
    pub fn new() -> Self {
        Self::default()
    }
}

fn desired_deployment(db: &Value) -> Value {
    let name = meta::name(db);
    let version = db
        .at("/spec/version")
        .and_then(Value::as_str)
        .unwrap_or("16");
    let replicas = meta::i64_at(db, "/spec/replicas").unwrap_or(1);
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": format!("{name}-db"),
            "namespace": meta::namespace(db),
            "labels": {"app.kubernetes.io/name": "database", "app.kubernetes.io/instance": name},
            "ownerReferences": [meta::owner_reference(db, true)],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "database", "app.kubernetes.io/instance": name}},
                "spec": {"containers": [{
                    "name": "postgres",
                    "image": format!("postgres:{version}"),
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                }]},
            },
        },
    })
}

impl Reconciler for DatabaseController {
    fn name(&self) -> String {
        "database-controller".into()
    }

    fn principal(&self) -> String {
        crate::api::principals::DATABASE_CONTROLLER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == databases() || *gr == deployments() || *gr == configmaps()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.key.gr == databases() {
            return vec![ObjectKey::clone(&ev.key)];
        }
        owner_key(new, &ev.key, "Database", databases())
            .or_else(|| old.and_then(|o| owner_key(o, &ev.key, "Database", databases())))
            .into_iter()
            .collect()
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(db) = ctx.cache.get(key).map(|d| d.as_ref().clone()) else {
            return Ok(ReconcileAction::AwaitChange);
        };
        let principal = self.principal();
        let name = meta::name(&db).to_owned();
        let ns = key.namespace.clone();
        let generation = meta::generation(&db);
        let version = db
            .at("/spec/version")
            .and_then(Value::as_str)
            .unwrap_or("16");
        // ConfigMap child.
        let cm_key = ObjectKey::new(configmaps(), &ns, &format!("{name}-config"));
        let cm_data = json!({"version": version});
        match ctx.cache.get(&cm_key) {
            None => {
                let cm = json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": cm_key.name, "namespace": ns, "ownerReferences": [meta::owner_reference(&db, true)]},
                    "data": cm_data,
                });
                match ctx.send(ApiRequest::create(&principal, configmaps(), &ns, cm)) {
                    Ok(_) => {}
                    Err(e) if e.reason == StatusReason::AlreadyExists => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Some(cm) if cm.field("data") != Some(&cm_data) => {
                ctx.send(ApiRequest::patch(
                    &principal,
                    configmaps(),
                    &ns,
                    &cm_key.name,
                    PatchType::Merge,
                    json!({"data": cm_data}),
                ))?;
            }
            Some(_) => {}
        }
        // Deployment child.
        let want = desired_deployment(&db);
        let dep_key = ObjectKey::new(deployments(), &ns, &format!("{name}-db"));
        let dep = ctx.cache.get(&dep_key).cloned();
        match &dep {
            None => match ctx.send(ApiRequest::create(
                &principal,
                deployments(),
                &ns,
                want.clone(),
            )) {
                Ok(_) => {}
                Err(e) if e.reason == StatusReason::AlreadyExists => {}
                Err(e) => return Err(e.into()),
            },
            Some(d) => {
                let replicas = d.at("/spec/replicas") != want.at("/spec/replicas");
                let image = d.at("/spec/template/spec/containers/0/image")
                    != want.at("/spec/template/spec/containers/0/image");
                if replicas || image {
                    let patch = json!({"spec": {
                        "replicas": want.at("/spec/replicas"),
                        "template": want.at("/spec/template"),
                    }});
                    ctx.send(ApiRequest::patch(
                        &principal,
                        deployments(),
                        &ns,
                        &dep_key.name,
                        PatchType::Merge,
                        patch,
                    ))?;
                }
            }
        }
        // Status from what the cache shows of the Deployment.
        let mut status = db.field("status").cloned().unwrap_or_else(|| json!({}));
        let before = status.clone();
        let replicas = meta::i64_at(&want, "/spec/replicas").unwrap_or(1);
        let (ready, stalled, msg) = match &dep {
            None => (
                false,
                false,
                format!("Creating deployment \"{}\"", dep_key.name),
            ),
            Some(d) => {
                let available = meta::i64_at(d, "/status/availableReplicas").unwrap_or(0);
                let updated = meta::i64_at(d, "/status/updatedReplicas").unwrap_or(0);
                let total = meta::i64_at(d, "/status/replicas").unwrap_or(0);
                let observed = meta::i64_at(d, "/status/observedGeneration").unwrap_or(0);
                let timed_out = d
                    .field("status")
                    .and_then(|s| conditions::find_condition(s, "Progressing"))
                    .is_some_and(|c| str_at(c, "/reason") == "ProgressDeadlineExceeded");
                let matches_spec = d.at("/spec/replicas") == want.at("/spec/replicas")
                    && d.at("/spec/template/spec/containers/0/image")
                        == want.at("/spec/template/spec/containers/0/image");
                let done = matches_spec
                    && observed >= meta::generation(d)
                    && available == replicas
                    && updated == replicas
                    && total == replicas;
                (
                    done,
                    timed_out,
                    format!(
                        "Waiting for deployment \"{}\": {available}/{replicas} replicas available",
                        dep_key.name
                    ),
                )
            }
        };
        let now = ctx.now;
        let set = |status: &mut Value, t, s, r, m: &str| {
            conditions::set_status_condition(
                status,
                Cond {
                    type_: t,
                    status: s,
                    reason: r,
                    message: m,
                },
                generation,
                now,
            );
        };
        if ready {
            set(
                &mut status,
                "Ready",
                "True",
                "Available",
                "Database is ready",
            );
            conditions::remove_condition(&mut status, "Reconciling");
            conditions::remove_condition(&mut status, "Stalled");
        } else if stalled {
            let m = format!(
                "Deployment \"{}\" exceeded its progress deadline",
                dep_key.name
            );
            set(&mut status, "Ready", "False", "DeploymentStalled", &m);
            conditions::remove_condition(&mut status, "Reconciling");
            set(&mut status, "Stalled", "True", "DeploymentStalled", &m);
        } else {
            set(&mut status, "Ready", "False", "Progressing", &msg);
            set(&mut status, "Reconciling", "True", "Progressing", &msg);
            conditions::remove_condition(&mut status, "Stalled");
        }
        status["observedGeneration"] = json!(generation);
        if status != before {
            let mut body = db.clone();
            body["status"] = status;
            ctx.send(client::update_status_object(&principal, databases(), body))?;
        }
        Ok(ReconcileAction::AwaitChange)
    }
}
