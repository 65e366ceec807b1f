//! The Kubernetes HTTP API over the simulated API server, for `converge serve`: paths, methods
//! and query strings to requests ([`route`]), answers to HTTP responses ([`respond`]), field selectors ([`fields`]), and the discovery documents clients read
//! first ([`discovery`]), watch streams ([`watch`]) and the
//! Tables `kubectl get` prints ([`table`]). Pure functions with no I/O; the CLI owns the sockets, the clock and the
//! tokens.

#![allow(
    clippy::result_large_err,
    reason = "ApiError mirrors metav1.Status, as in api; requests are not a hot path"
)]

pub mod discovery;
pub mod fields;
pub mod respond;
pub mod route;
pub mod table;
pub mod watch;
