//! Syncing a Deployment [pkg/controller/deployment/sync.go]: finding or creating the new
//! ReplicaSet, scaling (proportionally mid-rollout), status calculation, cleanup of old
//! ReplicaSets and the paused check.

use crate::api::meta::Fields;
use crate::json::path;
use std::sync::Arc;

use crate::json::{json, Value};

use super::deployment_util::{
    add_label, annotations_only, available_rule, by_creation, counts, equal_ignore_hash,
    has_deadline, new_rs_new_replicas, num, pod_template_hash, proportion, replica_set_fraction,
    revision_of, rs_spec, rs_status, status_counts, strip_zero_counts, RsCounts,
};
use super::{Sync, DESIRED_REPLICAS, MAX_REPLICAS, POD_TEMPLATE_HASH, REVISION};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{ApiRequest, ObjectKey, StatusReason};
use crate::conditions::{self, Cond};
use crate::controllers::util::replicasets;
use crate::runtime::{EventType, Explanation, ReconcileAction, ReconcileError};

impl Sync<'_, '_> {
    /// `scaleReplicaSet`: returns whether the size changed.
    pub(super) fn scale(
        &mut self,
        rss: &mut [Value],
        i: usize,
        new_scale: i64,
    ) -> Result<bool, ReconcileError> {
        let size_changes = rs_spec(&rss[i]) != new_scale;
        let mut copy = rss[i].clone();
        let annotations_change = self.replicas_annotations(&mut copy);
        if !size_changes && !annotations_change {
            return Ok(false);
        }
        let old_scale = rs_spec(&rss[i]);
        copy["spec"]["replicas"] = json!(new_scale);
        rss[i] = self.update_rs(copy)?;
        if size_changes {
            let operation = if old_scale < new_scale { "up" } else { "down" };
            let message = format!(
                "Scaled {operation} replica set {} from {old_scale} to {new_scale}",
                meta::name(&rss[i])
            );
            self.event(EventType::Normal, "ScalingReplicaSet", message);
        }
        Ok(size_changes)
    }

    pub(super) fn scale_if_needed(
        &mut self,
        rss: &mut [Value],
        i: usize,
        new_scale: i64,
    ) -> Result<bool, ReconcileError> {
        if rs_spec(&rss[i]) == new_scale {
            return Ok(false);
        }
        self.scale(rss, i, new_scale)
    }

    /// `getNewReplicaSet`: finds (and annotates) or creates the new ReplicaSet. Returns the
    /// index of the new ReplicaSet in `rss` (old ReplicaSets sorted oldest first).
    pub(super) fn new_rs(
        &mut self,
        rss: &mut Vec<Value>,
        create: bool,
    ) -> Result<Option<usize>, ReconcileError> {
        let existing = {
            let template = self.d.at(path!("/spec/template")).unwrap_or(&Value::Null);
            rss.iter().position(|rs| {
                equal_ignore_hash(
                    rs.at(path!("/spec/template")).unwrap_or(&Value::Null),
                    template,
                )
            })
        };
        let max_old_revision = rss
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != existing)
            .map(|(_, rs)| revision_of(rs))
            .max()
            .unwrap_or(0);
        let new_revision = max_old_revision + 1;
        if let Some(i) = existing {
            // The annotations are tried on a copy of the annotations alone: the whole
            // ReplicaSet is copied only when it has to be written.
            let mut probe = annotations_only(&rss[i]);
            let annotations_updated = self.new_rs_annotations(&mut probe, new_revision, true);
            let min_ready = meta::i64_at(&rss[i], path!("/spec/minReadySeconds")).unwrap_or(0);
            if annotations_updated || min_ready != self.spec.min_ready_seconds {
                let mut copy = rss[i].clone();
                self.new_rs_annotations(&mut copy, new_revision, true);
                copy["spec"]["minReadySeconds"] = json!(self.spec.min_ready_seconds);
                rss[i] = self.update_rs(copy)?;
                return Ok(Some(i));
            }
            let rev = meta::annotation(&rss[i], REVISION)
                .unwrap_or_default()
                .to_owned();
            let annotate = Self::annotation_differs(&self.d, REVISION, &rev);
            let mut needs_update = annotate;
            let mut status = self.status();
            if has_deadline(&self.spec)
                && conditions::find_condition(&status, "Progressing").is_none()
            {
                let msg = format!("Found new replica set \"{}\"", meta::name(&rss[i]));
                self.ctx.explain(Explanation::new(
                    "Progressing",
                    "True",
                    format!(
                        "no Progressing condition yet, and the new ReplicaSet {} exists",
                        meta::name(&rss[i])
                    ),
                ));
                conditions::set_deployment_condition(
                    &mut status,
                    Cond {
                        type_: "Progressing",
                        status: "True",
                        reason: "FoundNewReplicaSet",
                        message: &msg,
                    },
                    self.ctx.now,
                );
                needs_update = true;
            }
            if needs_update {
                if annotate {
                    Self::set_annotation(&mut self.d, REVISION, rev);
                }
                self.update_status(status)?;
            }
            return Ok(Some(i));
        }
        if !create {
            return Ok(None);
        }
        let template = self
            .d
            .at(path!("/spec/template"))
            .cloned()
            .unwrap_or(Value::Null);
        let collision = meta::i64_at(&self.d, path!("/status/collisionCount"));
        let hash = pod_template_hash(&template, collision);
        let mut new_template = template.clone();
        add_label(&mut new_template, &hash);
        let mut selector = self
            .d
            .at(path!("/spec/selector"))
            .cloned()
            .unwrap_or(json!({}));
        selector["matchLabels"][POD_TEMPLATE_HASH] = json!(hash);
        let name = format!("{}-{hash}", meta::name(&self.d));
        let total: i64 = rss.iter().map(rs_spec).sum();
        let replicas = new_rs_new_replicas(&self.spec, total, 0);
        let mut rs = json!({
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta::namespace(&self.d),
                "labels": new_template.at(path!("/metadata/labels")).cloned().unwrap_or(json!({})),
                "ownerReferences": [meta::owner_reference(&self.d, true)],
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": self.spec.min_ready_seconds,
                "selector": selector,
                "template": new_template,
            },
        });
        self.new_rs_annotations(&mut rs, new_revision, false);
        let ns = meta::namespace(&self.d).to_owned();
        let created =
            match self
                .ctx
                .send(ApiRequest::create(&self.principal, replicasets(), &ns, rs))
            {
                Ok(rs) => Some(rs),
                Err(e) if e.reason == StatusReason::AlreadyExists => {
                    let key = ObjectKey::new(replicasets(), &ns, &name);
                    match self.ctx.cache.get(&key) {
                        Some(rs)
                            if equal_ignore_hash(
                                rs.at(path!("/spec/template")).unwrap_or(&Value::Null),
                                &template,
                            ) =>
                        {
                            None
                        }
                        _ => {
                            let mut status = self.status();
                            status["collisionCount"] = json!(collision.unwrap_or(0) + 1);
                            self.update_status(status)?;
                            return Err(e.into());
                        }
                    }
                }
                // `HasStatusCause(err, NamespaceTerminatingCause)`: every later create fails
                // too, so nothing is reported.
                Err(e) if e.namespace_terminating() => {
                    return Err(e.into());
                }
                Err(e) => {
                    let msg = format!("Failed to create new replica set \"{name}\": {e}");
                    if has_deadline(&self.spec) {
                        let mut status = self.status();
                        self.ctx.explain(Explanation::new(
                            "Progressing",
                            "False",
                            format!("creating the new ReplicaSet {name} failed: {e}"),
                        ));
                        conditions::set_deployment_condition(
                            &mut status,
                            Cond {
                                type_: "Progressing",
                                status: "False",
                                reason: "ReplicaSetCreateError",
                                message: &msg,
                            },
                            self.ctx.now,
                        );
                        // kube ignores this write's error: the create's is the one to report.
                        let _ = self.update_status(status);
                    }
                    self.event(EventType::Warning, "ReplicaSetCreateError", msg);
                    return Err(e.into());
                }
            };
        let already_existed = created.is_none();
        let rs = match created {
            Some(rs) => Arc::unwrap_or_clone(rs),
            None => {
                let key = ObjectKey::new(replicasets(), &ns, &name);
                match self.ctx.cache.get(&key) {
                    Some(rs) => rs.as_ref().clone(),
                    None => return Err(ReconcileError::Other("replica set vanished".into())),
                }
            }
        };
        if !already_existed && replicas > 0 {
            let message = format!(
                "Scaled up replica set {} from 0 to {replicas}",
                meta::name(&rs)
            );
            self.event(EventType::Normal, "ScalingReplicaSet", message);
        }
        let mut d = self.d.clone();
        let mut needs_update = Self::set_annotation(&mut d, REVISION, new_revision.to_string());
        let mut status = self.status();
        if !already_existed && has_deadline(&self.spec) {
            let msg = format!("Created new replica set \"{name}\"");
            self.ctx.explain(Explanation::new(
                "Progressing",
                "True",
                format!("the controller created the new ReplicaSet {name} for the template"),
            ));
            conditions::set_deployment_condition(
                &mut status,
                Cond {
                    type_: "Progressing",
                    status: "True",
                    reason: "NewReplicaSetCreated",
                    message: &msg,
                },
                self.ctx.now,
            );
            needs_update = true;
        }
        rss.push(rs);
        if needs_update {
            self.d = d;
            self.update_status(status)?;
        }
        Ok(Some(rss.len() - 1))
    }

    /// `calculateStatus`.
    pub(super) fn calculate_status(&mut self, rss: &[Value], new_rs: Option<usize>) -> Value {
        let all: Vec<RsCounts> = rss.iter().map(counts).collect();
        let [replicas, updated, ready, available, unavailable] =
            status_counts(&all, new_rs.map(|i| &all[i]));
        let old = self.status_ref();
        let mut status = json!({
            "observedGeneration": meta::generation(&self.d),
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
            "unavailableReplicas": unavailable,
        });
        if let Some(c) = old.field("collisionCount") {
            status["collisionCount"] = c.clone();
        }
        status["conditions"] = old.field("conditions").cloned().unwrap_or(json!([]));
        let (ok, why) = available_rule(&self.spec, available);
        self.ctx.explain(why);
        let (s, reason, msg) = if ok {
            (
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
        } else {
            (
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        };
        conditions::set_deployment_condition(
            &mut status,
            Cond {
                type_: "Available",
                status: s,
                reason,
                message: msg,
            },
            self.ctx.now,
        );
        strip_zero_counts(&mut status);
        status
    }

    /// `syncDeploymentStatus` (scaling and paused syncs).
    pub(super) fn sync_status(
        &mut self,
        rss: &[Value],
        new_rs: Option<usize>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let status = self.calculate_status(rss, new_rs);
        if status != *self.status_ref() {
            self.update_status(status)?;
        }
        Ok(ReconcileAction::AwaitChange)
    }

    /// `dc.scale`: proportional scaling.
    pub(super) fn proportional_scale(
        &mut self,
        rss: &mut [Value],
        new_rs: Option<usize>,
    ) -> Result<(), ReconcileError> {
        let active: Vec<usize> = (0..rss.len()).filter(|i| rs_spec(&rss[*i]) > 0).collect();
        let olds_newest_first: Vec<usize> = {
            let mut v: Vec<usize> = (0..rss.len()).filter(|i| Some(*i) != new_rs).collect();
            v.sort_by(|a, b| by_creation(&rss[*b], &rss[*a]));
            v
        };
        if new_rs.is_some() || !olds_newest_first.is_empty() {
            let target = match active.len() {
                0 => new_rs.or(olds_newest_first.first().copied()),
                1 => Some(active[0]),
                _ => None,
            };
            if let Some(i) = target {
                if rs_spec(&rss[i]) != self.spec.replicas {
                    self.scale_if_needed(rss, i, self.spec.replicas)?;
                }
                return Ok(());
            }
        }
        if let Some(n) = new_rs {
            let rs = &rss[n];
            let saturated = meta::annotation(rs, DESIRED_REPLICAS).and_then(|s| s.parse().ok())
                == Some(self.spec.replicas)
                && rs_spec(rs) == self.spec.replicas
                && rs_status(rs, "availableReplicas") == self.spec.replicas;
            if saturated {
                for i in active {
                    if Some(i) != new_rs {
                        self.scale_if_needed(rss, i, 0)?;
                    }
                }
                return Ok(());
            }
        }
        if self.spec.recreate {
            return Ok(());
        }
        let mut order = active;
        let total: i64 = order.iter().map(|i| rs_spec(&rss[*i])).sum();
        let allowed = if self.spec.replicas > 0 {
            self.spec.replicas + self.spec.max_surge()
        } else {
            0
        };
        let to_add = allowed - total;
        order.sort_by(|a, b| {
            let (ra, rb) = (&rss[*a], &rss[*b]);
            rs_spec(rb).cmp(&rs_spec(ra)).then_with(|| {
                if to_add > 0 {
                    by_creation(rb, ra)
                } else {
                    by_creation(ra, rb)
                }
            })
        });
        let status_replicas = num(self.status_ref(), "replicas");
        let mut added = 0;
        let mut sizes = Vec::with_capacity(order.len());
        for &i in &order {
            let spec_r = rs_spec(&rss[i]);
            if to_add != 0 {
                let max_ann = meta::annotation(&rss[i], MAX_REPLICAS).and_then(|s| s.parse().ok());
                let fraction = replica_set_fraction(&self.spec, spec_r, max_ann, status_replicas);
                let p = proportion(fraction, spec_r, to_add, added);
                sizes.push(spec_r + p);
                added += p;
            } else {
                sizes.push(spec_r);
            }
        }
        for (pos, &i) in order.iter().enumerate() {
            let mut size = sizes[pos];
            if pos == 0 && to_add != 0 {
                size = (size + to_add - added).max(0);
            }
            self.scale(rss, i, size)?;
        }
        Ok(())
    }

    /// `cleanupDeployment`: old ReplicaSets beyond revisionHistoryLimit, oldest first.
    /// `cleanupDeployment` [pkg/controller/deployment/sync.go]: with more alive old
    /// ReplicaSets than `revisionHistoryLimit`, the oldest by revision (`ReplicaSetsByRevision`)
    /// go first, but only those that are empty and observed; a non-empty one among the first
    /// `diff` is skipped, not replaced by a later one.
    pub(super) fn cleanup(
        &mut self,
        rss: &[Value],
        new_rs: Option<usize>,
    ) -> Result<(), ReconcileError> {
        let mut alive: Vec<&Value> = rss
            .iter()
            .enumerate()
            .filter(|(i, rs)| Some(*i) != new_rs && !meta::is_terminating(rs))
            .map(|(_, rs)| rs)
            .collect();
        let diff = alive.len() as i64 - self.spec.revision_history_limit;
        if diff <= 0 {
            return Ok(());
        }
        // Revision where both have one, else creation: not a strict weak order when some
        // lack the annotation (see `sort_by_less`).
        crate::controllers::util::sort_by_less(&mut alive, |a, b| {
            let order = match (
                meta::annotation(a, REVISION).and_then(|r| r.parse::<i64>().ok()),
                meta::annotation(b, REVISION).and_then(|r| r.parse::<i64>().ok()),
            ) {
                (Some(x), Some(y)) if x != y => x.cmp(&y),
                _ => by_creation(a, b),
            };
            order == std::cmp::Ordering::Less
        });
        let victims: Vec<(String, String)> = alive
            .iter()
            .take(diff as usize)
            .filter(|rs| {
                rs_spec(rs) == 0
                    && rs_status(rs, "replicas") == 0
                    && meta::generation(rs) <= rs_status(rs, "observedGeneration")
            })
            .map(|rs| (meta::namespace(rs).to_owned(), meta::name(rs).to_owned()))
            .collect();
        for (ns, name) in victims {
            match self.ctx.send(ApiRequest::delete(
                &self.principal,
                replicasets(),
                &ns,
                &name,
            )) {
                Ok(_) => {}
                Err(e) if e.reason == StatusReason::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// `checkPausedConditions`.
    pub(super) fn check_paused(&mut self) -> Result<(), ReconcileError> {
        if !has_deadline(&self.spec) {
            return Ok(());
        }
        let mut status = self.status();
        let reason = conditions::find_condition(&status, "Progressing")
            .map(|c| str_at(c, path!("/reason")).to_owned())
            .unwrap_or_default();
        if reason == "ProgressDeadlineExceeded" {
            return Ok(());
        }
        let paused_exists = reason == "DeploymentPaused";
        let (r, m) = if self.spec.paused && !paused_exists {
            ("DeploymentPaused", "Deployment is paused")
        } else if !self.spec.paused && paused_exists {
            ("DeploymentResumed", "Deployment is resumed")
        } else {
            return Ok(());
        };
        self.ctx.explain(Explanation::new(
            "Progressing",
            "Unknown",
            format!(
                "spec.paused is {} and the condition's reason was {reason:?}",
                self.spec.paused
            ),
        ));
        conditions::set_deployment_condition(
            &mut status,
            Cond {
                type_: "Progressing",
                status: "Unknown",
                reason: r,
                message: m,
            },
            self.ctx.now,
        );
        self.update_status(status)
    }
}
