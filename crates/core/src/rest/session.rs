//! A simulated cluster served over the Kubernetes HTTP API: one [`World`], the requests clients
//! send it (each one input of the world, so the trace shows them as any user's), the watch
//! history watches start from, and the control API (`/converge/v1/step`, `/run`, `/trace`)
//! that moves simulated time. Deterministic and free of I/O: the CLI's `converge serve` owns
//! sockets, tokens and the wall clock, and feeds this type parsed requests.

use crate::api::meta::Fields;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::json::{json, Value};

use super::respond::{response, Response};
use super::route::{self, Operation, PathTarget, WatchRequest};
use super::table::{self, IncludeObject};
use super::watch::{self, WatchFilter, WatchStart};
use super::{discovery, openapi};
use crate::api::{ApiError, ApiRequest, StatusReason, Verb, WatchEvent};
use crate::engine::{StepReport, World};
use crate::scenario::ScenarioRun;

/// How many watch events the session keeps for watches that start from a resourceVersion
/// (kube's watch cache keeps a window too; older versions get 410 Expired).
pub const WATCH_HISTORY: usize = 10_000;

/// One HTTP request, already authenticated.
#[derive(Clone, Copy, Debug)]
pub struct HttpRequest<'a> {
    /// The user the bearer token (or impersonation) names.
    pub principal: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    /// The raw query string, without `?`.
    pub query: &'a str,
    pub content_type: &'a str,
    pub accept: &'a str,
    pub body: &'a [u8],
}

/// What the server answers.
#[derive(Debug)]
pub enum Reply {
    /// A complete JSON response.
    Json(Response),
    /// Plain text (the control API's trace).
    Text { status: u16, body: String },
    /// A JSON document of another media type (aggregated discovery).
    JsonAs {
        body: Value,
        content_type: &'static str,
    },
    /// An open watch: the frames to send now, then [`OpenWatch::frames`] after every change.
    Watch(OpenWatch),
}

/// A watch the CLI keeps open: it asks for frames each time the session reports new events.
#[derive(Debug)]
pub struct OpenWatch {
    filter: WatchFilter,
    /// Frames to send at once (the current objects, or the history after the asked version).
    pub initial: Vec<Value>,
    /// Events up to this index of the session's history have been offered to this watch.
    next: u64,
    /// `kubectl get -w` asks for each event's object as a one-row Table.
    as_table: Option<(IncludeObject, bool)>,
    /// The watch ended with an ERROR frame (410): the CLI closes it after `initial`.
    pub finished: bool,
}

/// What moves the served world: a bare world, or a scenario's run (its faults and actions fire
/// at their times, and `run?until=converged` means what `converge run` means, so a scenario
/// served with `--manual` gives `converge run`'s trace).
#[derive(Debug)]
enum Driver {
    World(Box<World>),
    Scenario(Box<ScenarioRun>),
}

/// The served cluster.
#[derive(Debug)]
pub struct Session {
    driver: Driver,
    /// Watch events with their sequence number (0-based, over the session's life).
    history: VecDeque<(u64, WatchEvent, Arc<Value>)>,
    next_seq: u64,
    /// Every write sent as a world input, in order (the playground logs them as its actions).
    sent: Vec<ApiRequest>,
}

fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table") && first.contains("g=meta.k8s.io"))
}

/// `SelfSubjectReview` (`kubectl auth whoami`): who the request is, after impersonation, with
/// the groups the authenticator gives; every authenticated user may ask (`system:basic-user`)
/// [pkg/registry/authentication/selfsubjectreview/rest.go `Create`].
fn self_subject_review(principal: &str) -> Response {
    Response {
        status: 201,
        body: json!({
            "kind": "SelfSubjectReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "status": {"userInfo": {
                "username": principal,
                "groups": crate::api::rbac::groups_of(principal),
            }},
        }),
    }
}

/// `SelfSubjectAccessReview` (`kubectl auth can-i`): whether the requesting user may do what
/// the review's `resourceAttributes` describe, decided by the same RBAC check every request
/// passes [pkg/registry/authorization/selfsubjectaccessreview/rest.go `Create`]. Subresources
/// other than `status` and `scale` are not simulated and answer `allowed: false` with an
/// `evaluationError` that says so.
fn self_subject_access_review(
    api: &crate::api::ApiServer,
    principal: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let review: Value = match super::protobuf::self_subject_access_review(body) {
        Some(v) => v,
        None => serde_json::from_slice(body).map_err(|e| {
            crate::api::errors::bad_request(format!("the request body is not JSON: {e}"))
        })?,
    };
    let attrs = review
        .pointer("/spec/resourceAttributes")
        .cloned()
        .unwrap_or(Value::Null);
    let s = |k: &str| {
        attrs
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let gr = crate::api::GroupResource::new(&s("group"), &s("resource"));
    let (allowed, error) = match s("subresource").as_str() {
        "" => (None, None),
        "status" => (Some(crate::api::Subresource::Status), None),
        "scale" => (Some(crate::api::Subresource::Scale), None),
        other => (
            None,
            Some(format!(
                "the subresource {other:?} is not simulated by Converge"
            )),
        ),
    }
    .pipe(|(sub, err)| match err {
        Some(e) => (false, Some(e)),
        None => (
            api.authorize(principal, &s("verb"), &gr, sub, &s("namespace"), &s("name"))
                .is_ok(),
            None,
        ),
    });
    let mut status = json!({"allowed": allowed});
    if let Some(e) = error {
        status["evaluationError"] = json!(e);
    }
    let mut out = review;
    out["status"] = status;
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("creationTimestamp", Value::Null);
    }
    Ok(Response {
        status: 201,
        body: out,
    })
}

trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}
impl<T> Pipe for T {}

/// Impersonation: `real` acting as `as_user`, which needs `impersonate` on `users` (or on
/// `serviceaccounts` in its namespace for `system:serviceaccount:<ns>:<name>`)
/// [apiserver pkg/endpoints/filters/impersonation.go `WithImpersonation`,
/// `buildImpersonationRequests`]. `converge serve` and the playground's terminal (`--as`) share it.
pub fn impersonate(
    api: &crate::api::ApiServer,
    real: &str,
    as_user: &str,
) -> Result<String, ApiError> {
    match as_user
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((ns, name)) => {
            let sas = crate::api::GroupResource::new("", "serviceaccounts");
            api.authorize(real, "impersonate", &sas, None, ns, name)?;
        }
        None => {
            let users = crate::api::GroupResource::new("", "users");
            api.authorize(real, "impersonate", &users, None, "", as_user)?;
        }
    }
    Ok(as_user.to_owned())
}

impl Session {
    /// A session over a bare world.
    pub fn new(world: World) -> Session {
        Session {
            driver: Driver::World(Box::new(world)),
            history: VecDeque::new(),
            next_seq: 0,
            sent: Vec::new(),
        }
    }

    /// A session over a scenario's run.
    pub fn for_scenario(mut run: ScenarioRun) -> Session {
        run.keep_watch_events();
        Session {
            driver: Driver::Scenario(Box::new(run)),
            history: VecDeque::new(),
            next_seq: 0,
            sent: Vec::new(),
        }
    }

    /// The writes sent as world inputs so far, in order.
    pub fn sent(&self) -> &[ApiRequest] {
        &self.sent
    }

    pub fn world(&self) -> &World {
        match &self.driver {
            Driver::World(w) => w,
            Driver::Scenario(r) => r.world(),
        }
    }

    /// Keeps watch events for watches.
    fn record(&mut self, events: Vec<(WatchEvent, Arc<Value>)>) {
        for (ev, obj) in events {
            self.history.push_back((self.next_seq, ev, obj));
            self.next_seq += 1;
            if self.history.len() > WATCH_HISTORY {
                self.history.pop_front();
            }
        }
    }

    /// What the driver did since the last call, as trace lines and watch events.
    fn moved(&mut self, report: Option<StepReport>, from_line: usize) -> Vec<String> {
        let (lines, watch) = match (&mut self.driver, report) {
            (Driver::World(_), Some(r)) => (r.lines().map(str::to_owned).collect(), r.watch),
            (Driver::Scenario(run), _) => (
                run.world()
                    .trace()
                    .iter()
                    .skip(from_line)
                    .map(|l| l.to_string())
                    .collect(),
                run.take_watch_events(),
            ),
            (Driver::World(_), None) => (Vec::new(), Vec::new()),
        };
        self.record(watch);
        lines
    }

    /// Lets `ms` of simulated time pass; returns the trace lines of what happened.
    pub fn advance(&mut self, ms: u64) -> Vec<String> {
        let from = self.world().trace().len();
        let report = match &mut self.driver {
            Driver::World(w) => Some(w.advance(ms)),
            Driver::Scenario(run) => {
                let end = run.now_ms() + ms;
                run.run(
                    crate::scenario::Until::Time(crate::scenario::Duration(end)),
                    &crate::scenario::RunOptions::default(),
                );
                None
            }
        };
        self.moved(report, from)
    }

    /// Processes the next event (or the scenario's next fault or action).
    pub fn step(&mut self) -> Vec<String> {
        let from = self.world().trace().len();
        let report = match &mut self.driver {
            Driver::World(w) => Some(w.step()),
            Driver::Scenario(run) => {
                run.step();
                None
            }
        };
        self.moved(report, from)
    }

    /// Runs until the cluster converges (bounded); for a scenario, as `converge run` does.
    pub fn run_until_converged(&mut self, max_events: u64, max_ms: u64) -> Vec<String> {
        let from = self.world().trace().len();
        let report = match &mut self.driver {
            Driver::World(w) => Some(w.run_until_converged(max_events, max_ms)),
            Driver::Scenario(run) => {
                run.run(
                    crate::scenario::Until::Converged,
                    &crate::scenario::RunOptions::default(),
                );
                None
            }
        };
        self.moved(report, from)
    }

    /// Sends a write as an input of the world.
    fn send(&mut self, req: ApiRequest) -> crate::api::ApiResult {
        self.sent.push(req.clone());
        let from = self.world().trace().len();
        match &mut self.driver {
            Driver::World(w) => {
                let (result, report) = w.request(req);
                self.moved(Some(report), from);
                result
            }
            Driver::Scenario(run) => {
                let result = run.request(req);
                self.moved(None, from);
                result
            }
        }
    }

    /// Answers one request.
    pub fn serve(&mut self, req: HttpRequest<'_>) -> Reply {
        match self.serve_inner(req) {
            Ok(reply) => reply,
            Err(e) => Reply::Json(Response::error(&e)),
        }
    }

    fn serve_inner(&mut self, req: HttpRequest<'_>) -> Result<Reply, ApiError> {
        if let Some(control) = req.path.strip_prefix("/converge/v1/") {
            return Ok(self.control(control, req));
        }
        if req.method == "POST" && req.path == "/apis/authentication.k8s.io/v1/selfsubjectreviews" {
            return Ok(Reply::Json(self_subject_review(req.principal)));
        }
        if req.method == "POST"
            && req.path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
        {
            return self_subject_access_review(self.world().api(), req.principal, req.body)
                .map(Reply::Json);
        }
        if req.method == "GET" {
            let path = req.path.trim_end_matches('/');
            if path == "/openapi/v3" {
                return Ok(Reply::Json(Response {
                    status: 200,
                    body: openapi::root(self.world().api()),
                }));
            }
            if let Some(gv) = path.strip_prefix("/openapi/v3/") {
                return openapi::group_version(self.world().api(), gv)
                    .map(|body| Reply::Json(Response { status: 200, body }))
                    .ok_or_else(crate::api::errors::unknown_resource);
            }
        }
        let target = route::parse_path(req.path)?;
        let query = route::parse_query(req.query)?;
        let include = IncludeObject::parse(
            form_urlencoded::parse(req.query.as_bytes())
                .find(|(k, _)| k == "includeObject")
                .map(|(_, v)| v.into_owned())
                .as_deref(),
        )
        .map_err(crate::api::errors::bad_request)?;
        let op = route::operation(
            self.world().api(),
            req.principal,
            req.method,
            target,
            &query,
            req.content_type,
            req.body,
        )?;
        let table = wants_table(req.accept);
        match op {
            Operation::Discovery(target)
                if matches!(target, PathTarget::LegacyVersions | PathTarget::Groups)
                    && discovery::wants_aggregated(req.accept) =>
            {
                Ok(Reply::JsonAs {
                    body: discovery::aggregated(
                        self.world().api(),
                        target == PathTarget::LegacyVersions,
                    ),
                    content_type: discovery::AGGREGATED,
                })
            }
            Operation::Discovery(target) => Ok(Reply::Json(Response {
                status: 200,
                body: discovery::document(self.world().api(), &target)?,
            })),
            Operation::Watch(w) => self.open_watch(&w, table.then_some(include)),
            Operation::Request(api_req) => {
                if query.dry_run && api_req.verb != Verb::Get && api_req.verb != Verb::List {
                    return Err(ApiError::new(
                        StatusReason::BadRequest,
                        "dryRun is not simulated by Converge yet; send the request without it",
                    ));
                }
                let verb = api_req.verb;
                let header = ApiRequest {
                    body: crate::api::RequestBody::None,
                    ..api_req.clone()
                };
                let result = if matches!(verb, Verb::Get | Verb::List) {
                    // Reads change nothing: answered without a world step, as an informer or
                    // kubectl reading the cluster would not show up in the trace either.
                    let mut api = self.world().api().clone();
                    api.handle(self.world().now(), api_req)
                } else {
                    self.send(api_req)
                };
                let mut resp = response(self.world().api(), &header, result, &query);
                if table && resp.status == 200 && matches!(verb, Verb::Get | Verb::List) {
                    resp.body = self.as_table(&header, resp.body, include);
                }
                Ok(Reply::Json(resp))
            }
        }
    }

    /// The Table of a get or list answer.
    fn as_table(&self, req: &ApiRequest, body: Value, include: IncludeObject) -> Value {
        let (items, list_meta) = match body.field("items").and_then(Value::as_array) {
            Some(items) => (
                items.clone(),
                body.field("metadata").cloned().unwrap_or_else(|| json!({})),
            ),
            None => {
                let rv = body
                    .pointer("/metadata/resourceVersion")
                    .cloned()
                    .unwrap_or(Value::Null);
                (vec![body], json!({"resourceVersion": rv}))
            }
        };
        let custom = self.printer_columns(req);
        table::table(
            &req.gr,
            &items,
            list_meta,
            self.world().now(),
            include,
            custom.as_deref(),
        )
    }

    /// A custom resource's `additionalPrinterColumns` (its storage version's), or `None` for
    /// a built-in resource.
    fn printer_columns(&self, req: &ApiRequest) -> Option<Vec<Value>> {
        if crate::api::kinds::Registry::is_builtin(&req.gr) {
            return None;
        }
        let key = crate::api::ObjectKey::new(
            crate::api::GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
            "",
            &format!("{}.{}", req.gr.resource, req.gr.group),
        );
        let crd = self.world().api().get(&key)?;
        let versions = crd.pointer("/spec/versions").and_then(Value::as_array)?;
        let version = versions
            .iter()
            .find(|v| v.field("storage").and_then(Value::as_bool) == Some(true))
            .or_else(|| versions.first())?;
        Some(
            version
                .field("additionalPrinterColumns")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        )
    }

    fn open_watch(
        &mut self,
        w: &WatchRequest,
        as_table: Option<IncludeObject>,
    ) -> Result<Reply, ApiError> {
        self.world()
            .api()
            .authorize(&w.principal, "watch", &w.gr, None, &w.namespace, "")?;
        let (mut filter, start) = WatchFilter::new(w)?;
        let mut watch = OpenWatch {
            filter: filter.clone(),
            initial: Vec::new(),
            next: self.next_seq,
            as_table: as_table.map(|i| (i, true)),
            finished: false,
        };
        match start {
            WatchStart::Current => {
                let frames = filter.initial(self.world().api());
                watch.filter = filter;
                watch.initial = frames
                    .into_iter()
                    .map(|f| self.table_frame(&mut watch.as_table, &w.gr, f))
                    .collect();
            }
            WatchStart::After(rv) => {
                let current = self.world().api().resource_version();
                let oldest_kept = self
                    .history
                    .front()
                    .map_or(current, |(_, e, _)| e.resource_version.saturating_sub(1));
                if rv < oldest_kept && rv < current {
                    watch.initial = vec![watch::error_frame(&watch::expired(rv, oldest_kept + 1))];
                    watch.finished = true;
                    return Ok(Reply::Watch(watch));
                }
                // The client has the list at `rv`: what it holds is what existed then, which
                // is the current objects minus what happened after (replayed below).
                filter.assume_present(self.world().api());
                let after: Vec<(WatchEvent, Arc<Value>)> = self
                    .history
                    .iter()
                    .filter(|(_, e, _)| e.resource_version > rv)
                    .map(|(_, e, o)| (e.clone(), Arc::clone(o)))
                    .collect();
                // Objects created after `rv` were not in the client's list; objects deleted
                // after it were.
                for (e, o) in &after {
                    match e.event_type {
                        crate::api::WatchEventType::Added => filter.forget(&e.key),
                        crate::api::WatchEventType::Deleted => filter.remember(&e.key, o),
                        crate::api::WatchEventType::Modified => {}
                    }
                }
                let mut frames = Vec::new();
                for (e, o) in &after {
                    if let Some(f) = filter.frame(e, o) {
                        frames.push(f);
                    }
                }
                watch.filter = filter;
                watch.initial = frames
                    .into_iter()
                    .map(|f| self.table_frame(&mut watch.as_table, &w.gr, f))
                    .collect();
            }
        }
        Ok(Reply::Watch(watch))
    }

    /// A frame whose object becomes a one-row Table (the first with its columns).
    fn table_frame(
        &self,
        as_table: &mut Option<(IncludeObject, bool)>,
        gr: &crate::api::GroupResource,
        mut frame: Value,
    ) -> Value {
        let Some((include, first)) = as_table else {
            return frame;
        };
        if frame.member("type") == "ERROR" || frame.member("type") == "BOOKMARK" {
            return frame;
        }
        let object = frame["object"].take();
        let rv = object
            .pointer("/metadata/resourceVersion")
            .cloned()
            .unwrap_or(Value::Null);
        let req = ApiRequest::get("", gr.clone(), "", "");
        let mut t = self.as_table(&req, object, *include);
        t["metadata"] = json!({"resourceVersion": rv});
        if !*first {
            t["columnDefinitions"] = Value::Null;
        }
        *first = false;
        frame["object"] = t;
        frame
    }

    /// The frames `watch` has not seen yet, from the session's history.
    pub fn frames(&self, watch: &mut OpenWatch) -> Vec<Value> {
        let mut out = Vec::new();
        let start = watch.next;
        let gr = watch.filter_gr();
        for (seq, e, o) in self.history.iter().filter(|(s, _, _)| *s >= start) {
            watch.next = seq + 1;
            if let Some(f) = watch.filter.frame(e, o) {
                out.push(self.table_frame(&mut watch.as_table, &gr, f));
            }
        }
        out
    }

    /// `/converge/v1/...`: move time and read the trace.
    fn control(&mut self, path: &str, req: HttpRequest<'_>) -> Reply {
        let query: Vec<(String, String)> = form_urlencoded::parse(req.query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let get = |k: &str| query.iter().find(|(q, _)| q == k).map(|(_, v)| v.as_str());
        match (req.method, path) {
            ("GET", "trace") => Reply::Text {
                status: 200,
                body: self.world().trace_text(),
            },
            ("POST", "step") => {
                let lines = self.step();
                Reply::Json(Response {
                    status: 200,
                    body: json!({"time_ms": self.world().now().as_ms(), "lines": lines}),
                })
            }
            ("POST", "run") => {
                let lines = match get("until") {
                    None | Some("converged") => self.run_until_converged(200_000, 3_600_000),
                    Some(d) => match crate::scenario::Until::parse(d) {
                        Ok(crate::scenario::Until::Time(t)) => self.advance(t.0),
                        _ => {
                            return Reply::Json(Response::error(&crate::api::errors::bad_request(
                                format!("until must be converged or a duration such as 30s, not {d:?}"),
                            )))
                        }
                    },
                };
                Reply::Json(Response {
                    status: 200,
                    body: json!({
                        "time_ms": self.world().now().as_ms(),
                        "converged": self.world().is_converged(),
                        "lines": lines,
                    }),
                })
            }
            _ => Reply::Json(Response::error(&ApiError::new(
                StatusReason::NotFound,
                "the control API serves GET /converge/v1/trace, POST /converge/v1/step and POST /converge/v1/run?until=converged|DURATION",
            ))),
        }
    }
}

impl OpenWatch {
    fn filter_gr(&self) -> crate::api::GroupResource {
        self.filter.group_resource().clone()
    }

    /// A BOOKMARK frame at the server's current version, when the client asked for them.
    pub fn bookmark(&self, session: &Session) -> Option<Value> {
        self.filter.bookmark(
            session.world().api(),
            session.world().api().resource_version(),
        )
    }
}
