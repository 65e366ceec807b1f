//! `converge serve [SCENARIO] [--port 6443] [--kubeconfig FILE] [--speed X | --manual]`: the
//! simulated cluster as a Kubernetes API over HTTPS on 127.0.0.1, for kubectl and client
//! libraries. Every request is authenticated by its bearer token (one per principal, written to
//! the kubeconfig), may impersonate another user when RBAC lets its user `impersonate`, and is
//! answered by core's `rest::Session`, which turns it into an input of the world. HTTP is
//! hyper's on a single-threaded tokio runtime: the world is one value, and every request and
//! clock tick takes it in turn, so the same inputs give the same trace.

mod kubeconfig;
mod tls;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use clap::Args as ClapArgs;
use converge_core::api::{ApiError, StatusReason};
use converge_core::engine::{ClusterConfig, World};
use converge_core::rest::respond::Response as RestResponse;
use converge_core::rest::session::{HttpRequest, OpenWatch, Reply, Session};
use converge_core::scenario::ScenarioRun;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::{Request, Response};
use tokio::sync::mpsc;

use crate::{scenario_file, CliError, CommandResult};

/// kube-apiserver's request body limit (3 MiB).
const MAX_BODY: usize = 3 * 1024 * 1024;
/// Frames a watcher may have unread before it is dropped (a client that stops reading must
/// not hold the others back).
const WATCH_BUFFER: usize = 4096;
/// How often simulated time moves under `--speed`.
const TICK: Duration = Duration::from_millis(100);
/// The principals the kubeconfig has a context for, `admin` first (the current one).
const USERS: &[&str] = &["admin", "alice", "bob", "app"];

#[derive(Debug, ClapArgs)]
pub struct ServeArgs {
    /// A scenario to start from (its cluster, objects and scheduled actions); without one, an
    /// empty cluster of three nodes.
    #[arg(value_name = "SCENARIO")]
    scenario: Option<String>,
    /// The port on 127.0.0.1 (0 picks a free one; the address is printed).
    #[arg(long, default_value_t = 6443)]
    port: u16,
    /// The address to bind; only loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1")]
    address: IpAddr,
    /// Where to write the kubeconfig (mode 0600).
    #[arg(long, value_name = "FILE", default_value = "converge.kubeconfig")]
    kubeconfig: PathBuf,
    /// Simulated time runs at X times real time.
    #[arg(
        long,
        value_name = "X",
        default_value_t = 1.0,
        conflicts_with = "manual"
    )]
    speed: f64,
    /// Simulated time moves only through POST /converge/v1/step and /converge/v1/run.
    #[arg(long)]
    manual: bool,
    /// Accept requests without a token, as `system:anonymous` (RBAC still applies).
    #[arg(long)]
    anonymous: bool,
    /// The world's seed (default: the scenario's, or 1).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// How long a request's body may take to arrive before it is answered kube's 504 Timeout
    /// (kube-apiserver's --request-timeout, 1m by default).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = request_timeout)]
    request_timeout: Duration,
}

fn request_timeout(s: &str) -> Result<Duration, String> {
    let d = converge_core::scenario::Duration::parse(s)?;
    if d.ms() == 0 {
        return Err("the request timeout must be longer than 0".into());
    }
    Ok(Duration::from_millis(d.ms()))
}

/// One open watch and where its frames go.
struct Watcher {
    watch: OpenWatch,
    tx: mpsc::Sender<Bytes>,
}

/// Everything the connections share (one thread, so `Rc<RefCell<..>>`).
struct Server {
    session: Session,
    tokens: BTreeMap<String, String>,
    anonymous: bool,
    request_timeout: Duration,
    watchers: Vec<Watcher>,
}

impl Server {
    /// Sends every watcher the frames it has not seen; drops the ones that stopped reading.
    fn broadcast(&mut self) {
        let session = &self.session;
        self.watchers.retain_mut(|w| {
            for frame in session.frames(&mut w.watch) {
                if w.tx.try_send(line(&frame)).is_err() {
                    return false;
                }
            }
            !w.tx.is_closed()
        });
    }
}

/// One watch frame: a JSON document and a newline.
fn line(v: &converge_core::json::Value) -> Bytes {
    let mut s = serde_json::to_string(v).unwrap_or_default();
    s.push('\n');
    Bytes::from(s)
}

type BoxBody = UnsyncBoxBody<Bytes, Infallible>;

/// A watch's body: frames as they come, until the session drops the watcher.
struct WatchBody {
    rx: mpsc::Receiver<Bytes>,
}

impl Body for WatchBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

fn full(status: u16, content_type: &str, body: Vec<u8>) -> Response<BoxBody> {
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *r.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

fn json_response(r: &RestResponse) -> Response<BoxBody> {
    let mut body = serde_json::to_vec(&r.body).unwrap_or_default();
    body.push(b'\n');
    full(r.status, "application/json", body)
}

fn error_response(e: &ApiError) -> Response<BoxBody> {
    json_response(&RestResponse::error(e))
}

fn header<'a>(req: &'a Request<Incoming>, name: &str) -> &'a str {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[allow(
    clippy::result_large_err,
    reason = "ApiError mirrors metav1.Status; once per request"
)]
/// Who sent the request: the token's user, or (with `--anonymous`) `system:anonymous`; then
/// impersonation, which the real user needs `impersonate` on `users` for
/// [apiserver pkg/endpoints/filters/impersonation.go `WithImpersonation`].
fn principal(server: &Server, req: &Request<Incoming>) -> Result<String, ApiError> {
    let unauthorized = || ApiError::new(StatusReason::Unauthorized, "Unauthorized");
    let real = match header(req, "authorization").strip_prefix("Bearer ") {
        Some(token) => server
            .tokens
            .get(token.trim())
            .cloned()
            .ok_or_else(unauthorized)?,
        None if server.anonymous => "system:anonymous".to_owned(),
        None => return Err(unauthorized()),
    };
    let as_user = header(req, "impersonate-user");
    if as_user.is_empty() {
        if !header(req, "impersonate-group").is_empty()
            || !header(req, "impersonate-uid").is_empty()
        {
            return Err(ApiError::new(
                StatusReason::InternalError,
                "requested [groups or uid] without impersonating a user",
            ));
        }
        return Ok(real);
    }
    converge_core::rest::session::impersonate(server.session.world().api(), &real, as_user)
}

async fn handle(
    state: Rc<RefCell<Server>>,
    req: Request<Incoming>,
) -> Result<Response<BoxBody>, Infallible> {
    let who = principal(&state.borrow(), &req);
    let principal = match who {
        Ok(p) => p,
        Err(e) => return Ok(error_response(&e)),
    };
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let content_type = header(&req, "content-type").to_owned();
    let accept = header(&req, "accept").to_owned();
    // A body that stops arriving is answered as kube's handlers answer a request past its
    // deadline (`finishRequest`, apiserver endpoints/handlers/finisher).
    let timeout = state.borrow().request_timeout;
    let read = tokio::time::timeout(timeout, Limited::new(req.into_body(), MAX_BODY).collect());
    let Ok(read) = read.await else {
        return Ok(error_response(&ApiError::new(
            StatusReason::Timeout,
            "Timeout: request did not complete within requested timeout - context deadline exceeded",
        )));
    };
    let body = match read {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let too_large = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            let err = if too_large {
                ApiError::new(
                    StatusReason::RequestEntityTooLarge,
                    "Request entity too large: limit is 3145728",
                )
            } else {
                ApiError::new(
                    StatusReason::BadRequest,
                    format!("the request body could not be read: {e}"),
                )
            };
            return Ok(error_response(&err));
        }
    };
    let mut server = state.borrow_mut();
    let reply = server.session.serve(HttpRequest {
        principal: &principal,
        method: &method,
        path: &path,
        query: &query,
        content_type: &content_type,
        accept: &accept,
        body: &body,
    });
    let response = match reply {
        Reply::Json(r) => json_response(&r),
        Reply::JsonAs { body, content_type } => {
            let mut bytes = serde_json::to_vec(&body).unwrap_or_default();
            bytes.push(b'\n');
            full(200, content_type, bytes)
        }
        Reply::Text { status, body } => {
            full(status, "text/plain; charset=utf-8", body.into_bytes())
        }
        Reply::Watch(watch) => {
            let (tx, rx) = mpsc::channel(WATCH_BUFFER);
            let mut ok = true;
            for frame in &watch.initial {
                ok &= tx.try_send(line(frame)).is_ok();
            }
            if let Some(mark) = watch.bookmark(&server.session) {
                ok &= tx.try_send(line(&mark)).is_ok();
            }
            if ok && !watch.finished {
                server.watchers.push(Watcher { watch, tx });
            }
            let mut r = Response::new(WatchBody { rx }.boxed_unsync());
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("application/json"),
            );
            r
        }
    };
    // A write may have caused events: every open watch gets them now.
    server.broadcast();
    Ok(response)
}

/// The served session: a scenario's run (its faults and actions fire at their times), or an
/// empty cluster of three nodes.
fn build_session(args: &ServeArgs) -> Result<Session, CliError> {
    match &args.scenario {
        Some(path) => {
            let scenario = scenario_file::read_scenario(path)?;
            let name = scenario_file::label(path);
            let run = ScenarioRun::new(&scenario, args.seed)
                .map_err(|e| CliError::input(format!("{name}: {e}")))?;
            Ok(Session::for_scenario(run))
        }
        None => Ok(Session::new(World::new(ClusterConfig {
            seed: args.seed.unwrap_or(1),
            ..ClusterConfig::default()
        }))),
    }
}

pub fn run(args: &ServeArgs) -> CommandResult {
    if !(args.speed.is_finite() && args.speed > 0.0) {
        return Err(CliError::usage("--speed must be a positive number"));
    }
    if !args.manual {
        // In real time the simulated clock starts now, so kubectl's own age arithmetic
        // (describe's events, `kubectl events`) agrees with the server's tables.
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(converge_core::time::EPOCH_UNIX_MS, |d| {
                i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
            });
        converge_core::time::anchor_epoch(now_ms);
    }
    let session = build_session(args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the server: {e}")))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, serve(args, session))
}

async fn serve(args: &ServeArgs, session: Session) -> CommandResult {
    let addr = SocketAddr::new(args.address, args.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::input(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| CliError::input(format!("cannot read the bound address: {e}")))?;
    let identity = tls::identity(&args.address.to_string()).map_err(CliError::input)?;
    let mut tokens = BTreeMap::new();
    let mut users = Vec::new();
    for user in USERS {
        let token = kubeconfig::token().map_err(CliError::input)?;
        tokens.insert(token.clone(), (*user).to_owned());
        users.push(((*user).to_owned(), token));
    }
    let url = format!("https://{bound}");
    kubeconfig::write(
        &args.kubeconfig,
        &kubeconfig::render(&url, &identity.ca_pem, &users),
    )
    .map_err(CliError::input)?;
    // A closed stdout (a parent that read the address and went) must not stop the server.
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "converge serve: the cluster is at {url} (kubeconfig {}; contexts {})",
        args.kubeconfig.display(),
        USERS
            .iter()
            .map(|u| format!("converge-{u}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let time = if args.manual {
        "moves only through POST /converge/v1/step and /converge/v1/run".to_owned()
    } else {
        format!("runs at {}x real time", args.speed)
    };
    let _ = writeln!(out, "converge serve: simulated time {time}");
    let _ = out.flush();
    let state = Rc::new(RefCell::new(Server {
        session,
        tokens,
        anonymous: args.anonymous,
        request_timeout: args.request_timeout,
        watchers: Vec::new(),
    }));
    if !args.manual {
        let ticker = Rc::clone(&state);
        let step_ms = (TICK.as_millis() as f64 * args.speed).round().max(1.0) as u64;
        tokio::task::spawn_local(async move {
            let mut interval = tokio::time::interval(TICK);
            loop {
                interval.tick().await;
                let mut s = ticker.borrow_mut();
                s.session.advance(step_ms);
                s.broadcast();
            }
        });
    }
    let acceptor = tokio_rustls::TlsAcceptor::from(identity.config);
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(c) => c,
            Err(_) => continue,
        };
        let acceptor = acceptor.clone();
        let state = Rc::clone(&state);
        tokio::task::spawn_local(async move {
            // A client that never finishes its handshake is dropped after 10 s.
            let Ok(Ok(tls)) =
                tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)).await
            else {
                return;
            };
            let io = hyper_util::rt::TokioIo::new(tls);
            let service = hyper::service::service_fn(move |req| handle(Rc::clone(&state), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .header_read_timeout(Duration::from_secs(30))
                .timer(hyper_util::rt::TokioTimer::new())
                .serve_connection(io, service)
                .await;
        });
    }
}
