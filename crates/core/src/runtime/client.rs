//! The client a reconciler talks to the API server through, and the context it runs in.
//!
//! Requests are built with [`ApiRequest`]'s constructors; the two helpers below cover the
//! controllers' common case of writing back an object they hold, whose namespace and name the
//! body already carries.

#![allow(
    clippy::result_large_err,
    reason = "ApiResult, the API contract type, carries kube's full error by value"
)]

use crate::json::Value;
use rand_chacha::ChaCha8Rng;

use super::environment::Environment;
use super::events::EventNote;
use super::explain::Explanation;
use super::informer::Informer;
use crate::api::{meta, ApiRequest, ApiResult, GroupResource};
use crate::time::SimTime;

/// The client a reconciler writes through; the engine records every request and applies faults.
pub trait Client {
    fn send(&mut self, req: ApiRequest) -> ApiResult;
    /// Told before each request how many explanations the reconcile has recorded so far, so
    /// each write can be tied to the decisions made before it (provenance).
    fn explained(&mut self, _count: usize) {}
}

/// Everything a reconcile may look at or use.
pub struct Ctx<'a> {
    pub now: SimTime,
    pub cache: &'a Informer,
    pub client: &'a mut dyn Client,
    pub rng: &'a mut ChaCha8Rng,
    pub env: &'a Environment,
    /// What the reconcile reported (`recorder.Eventf`); the engine's event broadcaster writes
    /// them after the reconcile.
    pub events: &'a mut Vec<EventNote>,
    /// The rules the reconcile decided by, with their inputs ([`Ctx::explain`]): side data the
    /// engine keeps with the reconcile's provenance, never written into an object.
    pub explanations: &'a mut Vec<Explanation>,
}

impl Ctx<'_> {
    pub fn send(&mut self, req: ApiRequest) -> ApiResult {
        self.client.explained(self.explanations.len());
        self.client.send(req)
    }

    /// Reports an event about an object (`recorder.Eventf`).
    pub fn record(&mut self, note: EventNote) {
        self.events.push(note);
    }

    /// Records why the reconcile decided something, as the deciding code computed it.
    pub fn explain(&mut self, explanation: Explanation) {
        self.explanations.push(explanation);
    }
}

/// `PUT` of `body` at the namespace and name it carries ([`ApiRequest::update`]).
pub fn update_object(principal: &str, gr: GroupResource, body: Value) -> ApiRequest {
    let (namespace, name) = (
        meta::namespace(&body).to_owned(),
        meta::name(&body).to_owned(),
    );
    ApiRequest::update(principal, gr, &namespace, &name, body)
}

/// `PUT .../status` of `body` at the namespace and name it carries
/// ([`ApiRequest::update_status`]).
pub fn update_status_object(principal: &str, gr: GroupResource, body: Value) -> ApiRequest {
    let (namespace, name) = (
        meta::namespace(&body).to_owned(),
        meta::name(&body).to_owned(),
    );
    ApiRequest::update_status(principal, gr, &namespace, &name, body)
}
