//! `converge serve` under load, on loopback: 50 watchers of ConfigMaps and a writer at 200
//! writes/s for 30 s, with one more watcher that never reads. Every write must succeed, every
//! reading watcher must see every event of its resource in resourceVersion order, and the one
//! that stopped reading must not hold the others back, and is dropped once a burst of larger
//! writes overflows its buffer. The latency of the writes
//! (p50/p99) and the server's peak memory are printed for BENCHMARKS.md.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;

const WATCHERS: usize = 50;
const WRITES_PER_SECOND: u64 = 200;
const SECONDS: u64 = 30;
/// Writes of 4 KiB after the measured run, to overflow a watcher that never reads.
const BURST: usize = 6_000;

struct Server {
    child: Child,
    addr: String,
    token: String,
    tls: TlsConnector,
    _stdout: BufReader<std::process::ChildStdout>,
    dir: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The value after `key:` on the first line that has it.
fn yaml_value<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .map_or("", str::trim)
}

fn start() -> Server {
    start_with("load", &[])
}

fn start_with(name: &str, extra: &[&str]) -> Server {
    let dir = std::env::temp_dir().join(format!("converge-serve-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let kubeconfig = dir.join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_converge"))
        .args(["serve", "--manual", "--port", "0", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .expect("converge serve starts");
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    out.read_line(&mut line).expect("reads");
    let text = std::fs::read_to_string(&kubeconfig).expect("the kubeconfig is written");
    let addr = yaml_value(&text, "server:")
        .trim_start_matches("https://")
        .to_owned();
    let token = yaml_value(&text, "token:").to_owned();
    let ca = base64::engine::general_purpose::STANDARD
        .decode(yaml_value(&text, "certificate-authority-data:"))
        .expect("base64");
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(&ca).expect("a PEM certificate"))
        .expect("a CA");
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Server {
        child,
        addr,
        token,
        tls: TlsConnector::from(Arc::new(config)),
        _stdout: out,
        dir,
    }
}

async fn connect<B>(s: &Server) -> SendRequest<B>
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let tcp = TcpStream::connect(&s.addr).await.expect("connects");
    let name = ServerName::try_from("127.0.0.1").expect("a name");
    let tls = s.tls.connect(name, tcp).await.expect("TLS handshake");
    let (sender, conn) = http1::handshake(TokioIo::new(tls))
        .await
        .expect("HTTP handshake");
    tokio::spawn(conn);
    sender
}

/// Sends one write on `writer`'s connection and reads its answer whole: the status.
async fn write(
    s: &Server,
    writer: &mut SendRequest<Full<Bytes>>,
    method: &str,
    path: &str,
    body: &converge_core::json::Value,
) -> hyper::StatusCode {
    writer
        .ready()
        .await
        .expect("the connection takes the next request");
    let resp = writer
        .send_request(request(
            s,
            method,
            path,
            Full::new(Bytes::from(body.to_string())),
        ))
        .await
        .expect("the write is answered");
    let status = resp.status();
    let _ = resp.into_body().collect().await;
    status
}

fn request<B>(s: &Server, method: &str, path: &str, body: B) -> Request<B> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", s.addr.as_str())
        .header("authorization", format!("Bearer {}", s.token))
        .header("content-type", "application/json")
        .body(body)
        .expect("a request")
}

/// Reads a watch until `expected` events arrived (or the stream ends), returning their
/// resourceVersions in order.
async fn watch(s: Arc<Server>, from_rv: String, expected: usize) -> Vec<u64> {
    let mut sender = connect::<Empty<Bytes>>(&s).await;
    let path =
        format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={from_rv}");
    let resp = sender
        .send_request(request(&s, "GET", &path, Empty::new()))
        .await
        .expect("the watch opens");
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let mut pending = Vec::new();
    let mut rvs = Vec::new();
    while rvs.len() < expected {
        let Some(frame) = body.frame().await else {
            break;
        };
        let Ok(data) = frame.expect("the stream stays whole").into_data() else {
            continue;
        };
        pending.extend_from_slice(&data);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let event: converge_core::json::Value =
                serde_json::from_slice(&line).expect("one JSON event per line");
            let rv = event["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|r| r.parse().ok())
                .expect("a resourceVersion");
            rvs.push(rv);
        }
    }
    rvs
}

fn peak_memory_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_watchers_see_every_write_at_200_per_second_and_a_stalled_one_is_dropped() {
    let s = Arc::new(start());
    let total = (WRITES_PER_SECOND * SECONDS) as usize;
    // The version watches start after: the server's current one, from an empty list.
    let mut lister = connect::<Empty<Bytes>>(&s).await;
    let list = lister
        .send_request(request(
            &s,
            "GET",
            "/api/v1/namespaces/default/configmaps",
            Empty::new(),
        ))
        .await
        .expect("lists");
    let list: converge_core::json::Value =
        serde_json::from_slice(&list.into_body().collect().await.expect("a body").to_bytes())
            .expect("JSON");
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("a version")
        .to_owned();

    // One watcher that never reads its stream.
    let mut stalled = connect::<Empty<Bytes>>(&s).await;
    let stalled_path =
        format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}");
    let stalled_resp = stalled
        .send_request(request(&s, "GET", &stalled_path, Empty::new()))
        .await
        .expect("the stalled watch opens");
    let watchers: Vec<_> = (0..WATCHERS)
        .map(|_| tokio::spawn(watch(Arc::clone(&s), rv.clone(), total)))
        .collect();

    // The writer: a create, then updates of a few objects, at a steady rate.
    let mut writer = connect::<Full<Bytes>>(&s).await;
    let mut latencies = Vec::with_capacity(total);
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / WRITES_PER_SECOND));
    let started = Instant::now();
    for i in 0..total {
        tick.tick().await;
        let name = format!("cm-{}", i % 20);
        let (method, path) = if i < 20 {
            ("POST", "/api/v1/namespaces/default/configmaps".to_owned())
        } else {
            (
                "PUT",
                format!("/api/v1/namespaces/default/configmaps/{name}"),
            )
        };
        let body = converge_core::json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}, "data": {"write": i.to_string()}});
        let at = Instant::now();
        let status = write(&s, &mut writer, method, &path, &body).await;
        latencies.push(at.elapsed());
        assert!(
            status.is_success(),
            "write {i} ({method} {name}) got {status}"
        );
    }
    let elapsed = started.elapsed();
    for w in watchers {
        let rvs = w.await.expect("the watcher finished");
        assert_eq!(rvs.len(), total, "a watcher missed events");
        assert!(
            rvs.windows(2).all(|p| p[0] < p[1]),
            "events out of resourceVersion order"
        );
    }
    // The stalled watcher slowed nobody (the checks above); the sockets and the server's buffer
    // of 4,096 frames still hold all it missed. A burst of 4 KiB writes overflows both, and the
    // server must then drop it rather than hold every event for a client that never reads.
    // The measured run's peak memory, before the burst's buffered frames add to it.
    let peak_kib = peak_memory_kib(s.child.id());
    let pad = "x".repeat(4096);
    for i in 0..BURST {
        let name = format!("cm-{}", i % 20);
        let body = converge_core::json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}, "data": {"pad": pad, "write": i.to_string()}});
        let path = format!("/api/v1/namespaces/default/configmaps/{name}");
        let status = write(&s, &mut writer, "PUT", &path, &body).await;
        assert!(status.is_success(), "burst write {i} got {status}");
    }
    // Reading it now gives what was buffered, then the end of the stream.
    let mut stalled_body = stalled_resp.into_body();
    let mut stalled_bytes = 0usize;
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(frame) = stalled_body.frame().await {
            match frame {
                Ok(f) => stalled_bytes += f.into_data().map_or(0, |d| d.len()),
                Err(_) => break,
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the stalled watch is still open: the server kept it ({stalled_bytes} bytes read)"
    );
    let sent = total * 200 + BURST * 4096;
    assert!(
        stalled_bytes < sent,
        "the stalled watcher read {stalled_bytes} bytes, at least {sent} were written: it was never dropped"
    );
    latencies.sort();
    let p = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    println!(
        "serve load: {total} writes in {:.1} s with {WATCHERS} watchers; write latency p50 {:?} p99 {:?}; server peak RSS {} KiB",
        elapsed.as_secs_f64(),
        p(0.50),
        p(0.99),
        peak_kib
    );
}

/// A TLS connection to the server that writes raw bytes, as a broken or slow client does.
async fn raw(s: &Server) -> tokio_rustls::client::TlsStream<TcpStream> {
    let tcp = TcpStream::connect(&s.addr).await.expect("connects");
    let name = ServerName::try_from("127.0.0.1").expect("a name");
    s.tls.connect(name, tcp).await.expect("TLS handshake")
}

/// The head of a POST of a ConfigMap whose body claims `length` bytes.
fn post_head(s: &Server, length: usize) -> String {
    format!(
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nhost: {}\r\nauthorization: Bearer {}\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n",
        s.addr, s.token
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_arriving_gets_kubes_timeout_and_a_cut_one_hangs_nothing() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = start_with("timeouts", &["--request-timeout", "1s"]);
    let started = Instant::now();
    let mut slow = raw(&s).await;
    slow.write_all(post_head(&s, 100).as_bytes())
        .await
        .expect("writes");
    slow.write_all(br#"{"apiVersion":"#).await.expect("writes");
    slow.flush().await.expect("flushes");
    // The rest never comes: the server answers on its own.
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !answer.ends_with(b"}\n") {
        let n = tokio::time::timeout(Duration::from_secs(30), slow.read(&mut buf))
            .await
            .expect("the server answers a stalled body")
            .expect("reads");
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 504"), "{text}");
    assert!(
        text.contains(r#""message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","code":504"#),
        "{text}"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "answered before the timeout"
    );

    // A body cut off by the client closing: nothing waits for it, and the next client is served.
    let mut cut = raw(&s).await;
    cut.write_all(post_head(&s, 100).as_bytes())
        .await
        .expect("writes");
    cut.write_all(br#"{"apiVersion":"v1","kind":"Conf"#)
        .await
        .expect("writes");
    cut.shutdown().await.expect("closes");
    drop(cut);
    let mut next = connect::<Full<Bytes>>(&s).await;
    let body = converge_core::json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "after", "namespace": "default"}});
    let resp = next
        .send_request(request(
            &s,
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Full::new(Bytes::from(body.to_string())),
        ))
        .await
        .expect("answered");
    assert_eq!(resp.status(), 201);
}
