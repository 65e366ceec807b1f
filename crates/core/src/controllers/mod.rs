//! The simulated controllers: Deployment, ReplicaSet, scheduler, kubelets, autoscaler, custom.
