//! The RollingUpdate strategy [pkg/controller/deployment/rolling.go]: scale the new
//! ReplicaSet up within maxSurge and old ones down within maxUnavailable.

use crate::json::Value;

use super::deployment_util::{by_creation, new_rs_new_replicas, rs_spec, rs_status};
use super::Sync;
use crate::runtime::{ReconcileAction, ReconcileError};

impl Sync<'_, '_> {
    pub(super) fn rollout_rolling(
        &mut self,
        rss: &mut Vec<Value>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let new_rs = self.new_rs(rss, true)?;
        // reconcileNewReplicaSet
        if let Some(n) = new_rs {
            let cur = rs_spec(&rss[n]);
            let scaled = if cur == self.spec.replicas {
                false
            } else if cur > self.spec.replicas {
                self.scale_if_needed(rss, n, self.spec.replicas)?
            } else {
                let total: i64 = rss.iter().map(rs_spec).sum();
                let next = new_rs_new_replicas(&self.spec, total, cur);
                self.scale_if_needed(rss, n, next)?
            };
            if scaled {
                return self.sync_rollout_status(rss, new_rs);
            }
        }
        if self.reconcile_old(rss, new_rs)? {
            return self.sync_rollout_status(rss, new_rs);
        }
        // `DeploymentComplete(d, &d.Status)`: the status already stored, not this sync's.
        if self.complete(self.status_ref()) {
            self.cleanup(rss, new_rs)?;
        }
        self.sync_rollout_status(rss, new_rs)
    }

    /// `reconcileOldReplicaSets`.
    pub(super) fn reconcile_old(
        &mut self,
        rss: &mut [Value],
        new_rs: Option<usize>,
    ) -> Result<bool, ReconcileError> {
        let mut olds: Vec<usize> = (0..rss.len()).filter(|i| Some(*i) != new_rs).collect();
        let old_pods: i64 = olds.iter().map(|i| rs_spec(&rss[*i])).sum();
        if old_pods == 0 {
            return Ok(false);
        }
        let all_pods: i64 = rss.iter().map(rs_spec).sum();
        let min_available = self.spec.replicas - self.spec.max_unavailable();
        let new_unavailable = new_rs.map_or(0, |n| {
            rs_spec(&rss[n]) - rs_status(&rss[n], "availableReplicas")
        });
        let max_scaled_down = all_pods - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return Ok(false);
        }
        olds.sort_by(|a, b| by_creation(&rss[*a], &rss[*b]));
        // cleanupUnhealthyReplicas
        let mut cleaned = 0;
        for &i in &olds {
            if cleaned >= max_scaled_down {
                break;
            }
            let spec_r = rs_spec(&rss[i]);
            let avail = rs_status(&rss[i], "availableReplicas");
            if spec_r == 0 || spec_r == avail {
                continue;
            }
            let down = (max_scaled_down - cleaned).min(spec_r - avail);
            self.scale(rss, i, spec_r - down)?;
            cleaned += down;
        }
        // scaleDownOldReplicaSetsForRollingUpdate
        let available: i64 = rss.iter().map(|r| rs_status(r, "availableReplicas")).sum();
        let mut scaled = 0;
        if available > min_available {
            let total_down = available - min_available;
            for &i in &olds {
                if scaled >= total_down {
                    break;
                }
                let spec_r = rs_spec(&rss[i]);
                if spec_r == 0 {
                    continue;
                }
                let down = spec_r.min(total_down - scaled);
                self.scale(rss, i, spec_r - down)?;
                scaled += down;
            }
        }
        Ok(cleaned + scaled > 0)
    }
}
