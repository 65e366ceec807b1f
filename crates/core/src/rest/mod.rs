//! The Kubernetes HTTP API over the simulated cluster, for `converge serve`. [`session`] holds
//! the served world and answers requests; [`route`] reads paths, methods and query strings;
//! [`respond`] turns the API server's answers into HTTP responses; [`fields`] reads field
//! selectors; [`discovery`] and [`openapi`] serve what clients read first; [`watch`] filters
//! watch streams; [`table`] prints the Tables `kubectl get` shows. No I/O: the CLI owns the
//! sockets, the clock and the tokens.

#![allow(
    clippy::result_large_err,
    reason = "ApiError mirrors metav1.Status, as in api; requests are not a hot path"
)]

pub mod discovery;
pub mod fields;
pub mod openapi;
pub mod protobuf;
pub mod respond;
pub mod route;
pub mod schema;
pub mod session;
pub mod table;
pub mod watch;
