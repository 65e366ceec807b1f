//! kstatus: the health verdict (`status.Compute`) of sigs.k8s.io/cli-utils/pkg/kstatus.
