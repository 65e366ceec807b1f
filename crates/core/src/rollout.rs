//! `kubectl rollout status`: the status line and verdict for Deployments, DaemonSets and StatefulSets.
