//! The connection side of the Talos client: one lazily dialled channel per
//! context, endpoints dialled together (the first in failover order that answers
//! wins), per-call timeouts, the `node` metadata key on every per-node call.
//! Bounded fan-out over nodes is in `fan_out`.
use std::future::Future;

use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;

use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Response, Status};

use super::error::TalosError;
pub use super::fan_out::{fan_out, fan_out_stream};
use super::tls::{self, ClientCertificate, Roles};
use crate::discovery::TalosContext;
use crate::proto::common;

/// The context's endpoints that can be dialled (`host:port`), and the others
/// with why they cannot.
fn usable_endpoints(written: &[String]) -> (Vec<String>, Vec<String>) {
    let mut usable = Vec::new();
    let mut invalid = Vec::new();
    for raw in written {
        let e = endpoint_with_port(raw);
        if e.is_empty() {
            continue;
        }
        if Endpoint::from_shared(format!("https://{e}")).is_ok() {
            usable.push(e);
        } else {
            invalid.push(format!("{raw:?}: not a valid host:port"));
        }
    }
    (usable, invalid)
}

/// apid's port, added to endpoints written without one.
pub const APID_PORT: u16 = 50000;
/// The port of an endpoint written as an `https://` URL without one.
const HTTPS_PORT: u16 = 443;
/// How much later than our own timer the grpc-timeout sent to the server expires.
const DEADLINE_MARGIN: Duration = Duration::from_millis(500);
/// Talos' own limit on gRPC message size.
pub(crate) const MAX_MESSAGE_SIZE: usize = 32 * 1024 * 1024;

/// Timeouts and fan-out width of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientOptions {
    /// Bound on dialling one endpoint (TCP + TLS).
    pub connect_timeout: Duration,
    /// Bound on one unary call to one node.
    pub call_timeout: Duration,
    /// Bound on opening a server stream (image pull, LifecycleService, Events, Logs): Talos
    /// sends the response headers only with the first message, which may come much later
    /// than a unary answer (grpc-go's `ServerStream.SendMsg` writes them lazily).
    pub stream_open_timeout: Duration,
    /// How many nodes are asked at once when fanning out.
    pub concurrency: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(3),
            call_timeout: Duration::from_secs(5),
            stream_open_timeout: Duration::from_secs(60),
            concurrency: 32,
        }
    }
}

/// Whether a failed call may be sent again through another endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Reads: retry on any transport failure.
    Idempotent,
    /// Actions: retry only when the connection was never made.
    OnlyIfNotSent,
}

/// A client for one talosconfig context. Cheap to clone; clones share the channel.
#[derive(Clone)]
pub struct TalosClient {
    inner: Arc<Inner>,
}

struct Inner {
    context: String,
    endpoints: Vec<String>,
    /// Endpoints of the context that are not a valid `host:port`, with why;
    /// the others are still used, and a failure names these too.
    invalid_endpoints: Vec<String>,
    tls: ClientTlsConfig,
    certificate: ClientCertificate,
    options: ClientOptions,
    connection: tokio::sync::Mutex<Connection>,
}

#[derive(Default)]
struct Connection {
    /// The endpoint to try first next time.
    next: usize,
    current: Option<(usize, Channel)>,
    /// When every endpoint just failed: callers within a connect timeout of it
    /// get the same answer instead of each dialling every endpoint again.
    last_failure: Option<(std::time::Instant, TalosError)>,
}

impl std::fmt::Debug for TalosClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TalosClient")
            .field("context", &self.inner.context)
            .field("endpoints", &self.inner.endpoints)
            .field("roles", &self.inner.certificate.roles)
            .finish_non_exhaustive()
    }
}

impl TalosClient {
    /// Checks the context's certificates and endpoints; dials nothing yet.
    pub fn new(ctx: &TalosContext, options: ClientOptions) -> Result<Self, TalosError> {
        let tls =
            tls::client_tls(ctx, crate::clock::unix_now() as i64).map_err(TalosError::from_tls)?;
        let (endpoints, invalid_endpoints) = usable_endpoints(&ctx.endpoints);
        if endpoints.is_empty() && invalid_endpoints.is_empty() {
            return Err(TalosError::NoEndpoints {
                context: ctx.name.clone(),
            });
        }
        if endpoints.is_empty() {
            return Err(TalosError::EndpointsUnreachable {
                context: ctx.name.clone(),
                endpoints: ctx.endpoints.join(", "),
                reason: invalid_endpoints.join("; "),
            });
        }
        for bad in &invalid_endpoints {
            tracing::warn!(context = %ctx.name, "endpoint skipped: {bad}");
        }
        Ok(TalosClient {
            inner: Arc::new(Inner {
                context: ctx.name.clone(),
                endpoints,
                invalid_endpoints,
                tls: tls.config,
                certificate: tls.certificate,
                options: ClientOptions {
                    concurrency: options.concurrency.max(1),
                    ..options
                },
                connection: tokio::sync::Mutex::new(Connection::default()),
            }),
        })
    }

    pub fn context(&self) -> &str {
        &self.inner.context
    }

    /// Endpoints as dialled (`host:port`).
    pub fn endpoints(&self) -> &[String] {
        &self.inner.endpoints
    }

    /// The roles of the client certificate; the UI disables what they forbid.
    pub fn roles(&self) -> &Roles {
        &self.inner.certificate.roles
    }

    pub fn options(&self) -> ClientOptions {
        self.inner.options
    }

    /// The endpoint currently in use, if connected.
    pub async fn current_endpoint(&self) -> Option<String> {
        let conn = self.inner.connection.lock().await;
        conn.current
            .as_ref()
            .map(|(i, _)| self.inner.endpoints[*i].clone())
    }

    /// A request for one node: the `node` key (one-to-one proxying; never the
    /// deprecated `nodes`) and, for unary calls, a grpc-timeout.
    pub(crate) fn request<M>(
        &self,
        node: &str,
        call: &'static str,
        msg: M,
        timeout: Option<Duration>,
    ) -> Result<Request<M>, TalosError> {
        let mut req = Request::new(msg);
        if let Some(t) = timeout {
            // The server learns the deadline; tonic enforces grpc-timeout on the
            // client side too, so give it a margin and let our own timer fire first.
            req.set_timeout(t + DEADLINE_MARGIN);
        }
        if !node.is_empty() {
            let value = MetadataValue::try_from(node).map_err(|_| TalosError::Rpc {
                node: node.to_string(),
                call,
                code: tonic::Code::InvalidArgument,
                message: "the node address is not valid gRPC metadata".into(),
            })?;
            req.metadata_mut().insert("node", value);
        }
        Ok(req)
    }

    /// Returns the connected channel. Every endpoint is dialled at once; the
    /// first in failover order (from the last good one) that connects is used,
    /// so a context of silent endpoints costs one connect timeout, not one
    /// each. Concurrent callers wait for one dial instead of each dialling.
    async fn channel(&self) -> Result<(usize, Channel), TalosError> {
        let mut conn = self.inner.connection.lock().await;
        if let Some((i, ch)) = &conn.current {
            return Ok((*i, ch.clone()));
        }
        if let Some((at, err)) = &conn.last_failure
            && at.elapsed() < self.inner.options.connect_timeout
        {
            return Err(err.clone());
        }
        let n = self.inner.endpoints.len();
        let order: Vec<usize> = (0..n).map(|k| (conn.next + k) % n).collect();
        let mut dials: futures::stream::FuturesUnordered<_> = order
            .iter()
            .enumerate()
            .map(|(rank, &i)| async move { (rank, self.dial(i).await) })
            .collect();
        let mut results: Vec<Option<Result<Channel, String>>> = vec![None; n];
        while let Some((rank, result)) = dials.next().await {
            results[rank] = Some(result);
            // The first endpoint in order that has not failed decides.
            let decided = results.iter().position(|r| !matches!(r, Some(Err(_))));
            if let Some(rank) = decided
                && let Some(Ok(ch)) = &results[rank]
            {
                let i = order[rank];
                conn.current = Some((i, ch.clone()));
                conn.next = i;
                conn.last_failure = None;
                return Ok((i, ch.clone()));
            }
        }
        let mut reasons = Vec::new();
        let mut tls_failure = None;
        for (rank, result) in results.into_iter().enumerate() {
            if let Some(Err(reason)) = result {
                let named = format!("{}: {reason}", self.inner.endpoints[order[rank]]);
                if is_tls_failure(&reason) && tls_failure.is_none() {
                    tls_failure = Some(named.clone());
                }
                reasons.push(named);
            }
        }
        reasons.extend(self.inner.invalid_endpoints.iter().cloned());
        let err = match tls_failure {
            Some(reason) => TalosError::Tls {
                context: self.inner.context.clone(),
                reason,
            },
            None => TalosError::EndpointsUnreachable {
                context: self.inner.context.clone(),
                endpoints: self.inner.endpoints.join(", "),
                reason: reasons.join("; "),
            },
        };
        conn.last_failure = Some((std::time::Instant::now(), err.clone()));
        Err(err)
    }

    async fn dial(&self, index: usize) -> Result<Channel, String> {
        let timeout = self.inner.options.connect_timeout;
        let endpoint = Endpoint::from_shared(format!("https://{}", self.inner.endpoints[index]))
            .map_err(|e| error_chain(&e))?
            .tls_config(self.inner.tls.clone())
            .map_err(|e| error_chain(&e))?
            .connect_timeout(timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_timeout(Duration::from_secs(10));
        match tokio::time::timeout(timeout, endpoint.connect()).await {
            Err(_) => Err(format!("connect timed out after {timeout:?}")),
            Ok(Err(e)) => Err(error_chain(&e)),
            Ok(Ok(ch)) => Ok(ch),
        }
    }

    /// Drops the channel of a failed endpoint so the next call dials the next one.
    async fn fail_over(&self, index: usize) {
        let mut conn = self.inner.connection.lock().await;
        if matches!(conn.current, Some((i, _)) if i == index) {
            conn.current = None;
            conn.next = (index + 1) % self.inner.endpoints.len();
        }
    }

    /// Runs one unary call for one node: dial (with failover), bound by the call
    /// timeout, map the status to a typed error. `f` builds the call on a channel.
    pub(crate) async fn call<R, F, Fut>(
        &self,
        node: &str,
        call: &'static str,
        retry: Retry,
        f: F,
    ) -> Result<R, TalosError>
    where
        F: Fn(Channel) -> Fut,
        Fut: Future<Output = Result<Response<R>, Status>>,
    {
        self.call_within(node, call, retry, self.inner.options.call_timeout, f)
            .await
    }

    /// Opens a server stream for one node, bound by the stream-opening timeout
    /// rather than the unary one (the headers come with the first message).
    pub(crate) async fn open_stream<R, F, Fut>(
        &self,
        node: &str,
        call: &'static str,
        retry: Retry,
        f: F,
    ) -> Result<R, TalosError>
    where
        F: Fn(Channel) -> Fut,
        Fut: Future<Output = Result<Response<R>, Status>>,
    {
        let bound = self.inner.options.stream_open_timeout;
        self.call_within(node, call, retry, bound, f).await
    }

    /// [`Self::call`] with an explicit bound, for calls the server answers only
    /// after long work of its own (the legacy Upgrade pulls the installer first).
    pub(crate) async fn call_within<R, F, Fut>(
        &self,
        node: &str,
        call: &'static str,
        retry: Retry,
        timeout: Duration,
        f: F,
    ) -> Result<R, TalosError>
    where
        F: Fn(Channel) -> Fut,
        Fut: Future<Output = Result<Response<R>, Status>>,
    {
        let attempts = self.inner.endpoints.len();
        let mut last = None;
        for _ in 0..attempts {
            let (index, channel) = self.channel().await?;
            let status = match tokio::time::timeout(timeout, f(channel)).await {
                Err(_) => {
                    return Err(TalosError::Timeout {
                        node: node.to_string(),
                        call,
                        after: timeout,
                    });
                }
                Ok(Ok(resp)) => return Ok(resp.into_inner()),
                Ok(Err(status)) => status,
            };
            if is_deadline(&status) {
                return Err(TalosError::Timeout {
                    node: node.to_string(),
                    call,
                    after: timeout,
                });
            }
            if !is_transport(&status) {
                return Err(TalosError::from_status(node, call, &status));
            }
            // The endpoint, not the node, failed: the connection broke or was refused.
            let reason = status_chain(&status);
            if is_tls_failure(&reason) {
                return Err(TalosError::Tls {
                    context: self.inner.context.clone(),
                    reason,
                });
            }
            self.fail_over(index).await;
            let retriable = retry == Retry::Idempotent || is_not_sent(&reason);
            last = Some(reason);
            if !retriable {
                break;
            }
        }
        Err(TalosError::Unreachable {
            node: node.to_string(),
            reason: format!(
                "the connection to the endpoint failed: {}",
                last.unwrap_or_default()
            ),
        })
    }
}

/// The server's deadline passed, or tonic's own grpc-timeout timer fired.
fn is_deadline(status: &Status) -> bool {
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        if e.is::<tonic::TimeoutExpired>() {
            return true;
        }
        source = e.source();
    }
    status.code() == tonic::Code::DeadlineExceeded && !is_transport(status)
}

/// A status made by the client's transport (connection refused, reset, TLS
/// alert) rather than sent by a server: tonic keeps the cause as its source.
fn is_transport(status: &Status) -> bool {
    std::error::Error::source(status).is_some()
}

fn is_tls_failure(reason: &str) -> bool {
    let r = reason.to_ascii_lowercase();
    r.contains("certificate") || r.contains("alert") || r.contains("handshake")
}

fn is_not_sent(reason: &str) -> bool {
    let r = reason.to_ascii_lowercase();
    r.contains("connect") || r.contains("refused")
}

fn status_chain(status: &Status) -> String {
    let mut out = status.message().to_string();
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        let text = e.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = e.source();
    }
    out
}

/// An error and its causes on one line: tonic's own messages are terse.
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = e.source();
    }
    out
}

/// `10.0.0.2` → `10.0.0.2:50000`; `[fd00::1]`/`fd00::1` → `[fd00::1]:50000`; a port
/// already given is kept. An `https://` URL without a port is dialled on 443, as talosctl
/// dials it (pkg/machinery/client endpoint parsing: a URL keeps its scheme's port).
pub fn endpoint_with_port(endpoint: &str) -> String {
    let e = endpoint.trim();
    let (e, default_port) = match e.strip_prefix("https://") {
        Some(rest) => (rest, HTTPS_PORT),
        None => (e.strip_prefix("tcp://").unwrap_or(e), APID_PORT),
    };
    let e = e.trim_end_matches('/');
    if e.is_empty() {
        return String::new();
    }
    if let Some(rest) = e.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((_, port)) if port.starts_with(':') => e.to_string(),
            _ => format!("{e}:{default_port}"),
        };
    }
    match e.matches(':').count() {
        0 => format!("{e}:{default_port}"),
        1 => e.to_string(),
        _ => format!("[{e}]:{default_port}"),
    }
}

/// Picks this node's entry of a `messages` wrapper and surfaces its
/// `Metadata.error`. One-to-one replies carry one entry with no metadata; a
/// proxy answering one-to-many may carry several, named by `hostname`.
pub(crate) fn node_message<M>(
    node: &str,
    call: &'static str,
    messages: Vec<M>,
    metadata: impl Fn(&M) -> Option<&common::Metadata>,
) -> Result<M, TalosError> {
    let index = messages
        .iter()
        .position(|m| metadata(m).is_some_and(|md| md.hostname == node))
        .unwrap_or(0);
    let Some(message) = messages.into_iter().nth(index) else {
        return Err(TalosError::Decode {
            node: node.to_string(),
            call,
            reason: "the reply holds no message".into(),
        });
    };
    metadata_error(node, call, metadata(&message))?;
    Ok(message)
}

/// A whole read (a stream opened and drained) within `timeout`, else the node's timeout error.
pub(crate) async fn whole_read_within<T>(
    node: &str,
    call: &'static str,
    timeout: Duration,
    read: impl Future<Output = Result<T, TalosError>>,
) -> Result<T, TalosError> {
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or_else(|_| {
            Err(TalosError::Timeout {
                node: node.to_string(),
                call,
                after: timeout,
            })
        })
}

/// The error a reply's (or a stream item's) `Metadata.error` carries, for this node.
pub(crate) fn metadata_error(
    node: &str,
    call: &'static str,
    metadata: Option<&common::Metadata>,
) -> Result<(), TalosError> {
    match metadata {
        Some(md) if !md.error.is_empty() => Err(TalosError::from_metadata(
            node,
            call,
            &md.error,
            md.status.as_ref(),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_get_the_apid_port() {
        assert_eq!(endpoint_with_port("10.0.0.2"), "10.0.0.2:50000");
        assert_eq!(endpoint_with_port("10.0.0.2:6000"), "10.0.0.2:6000");
        assert_eq!(endpoint_with_port("https://cp.lab/"), "cp.lab:443");
        assert_eq!(endpoint_with_port("https://cp.lab:8443"), "cp.lab:8443");
        assert_eq!(endpoint_with_port("https://[fd00::1]"), "[fd00::1]:443");
        assert_eq!(endpoint_with_port("tcp://cp.lab"), "cp.lab:50000");
        assert_eq!(endpoint_with_port("fd00::1"), "[fd00::1]:50000");
        assert_eq!(endpoint_with_port("[fd00::1]"), "[fd00::1]:50000");
        assert_eq!(endpoint_with_port("[fd00::1]:7"), "[fd00::1]:7");
        assert_eq!(endpoint_with_port("  "), "");
    }

    fn md(hostname: &str, error: &str) -> Option<common::Metadata> {
        Some(common::Metadata {
            hostname: hostname.into(),
            error: error.into(),
            status: None,
        })
    }

    #[test]
    fn one_to_one_reply_without_metadata_is_taken() {
        let got = node_message("10.0.0.2", "version", vec![(None, 1)], |m| m.0.as_ref());
        assert_eq!(got.map(|m| m.1).ok(), Some(1));
    }

    #[test]
    fn one_to_many_reply_picks_the_node_and_its_error() {
        let msgs = vec![
            (md("10.0.0.3", ""), 3),
            (md("10.0.0.2", "connection refused"), 2),
        ];
        let err = node_message("10.0.0.2", "version", msgs.clone(), |m| m.0.as_ref())
            .expect_err("error entry");
        assert!(err.to_string().contains("10.0.0.2"), "{err}");
        assert!(err.to_string().contains("connection refused"), "{err}");
        let ok = node_message("10.0.0.3", "version", msgs, |m| m.0.as_ref());
        assert_eq!(ok.map(|m| m.1).ok(), Some(3));
    }

    #[test]
    fn empty_reply_is_a_decode_error() {
        let err = node_message(
            "n",
            "version",
            Vec::<(Option<common::Metadata>, u8)>::new(),
            |m| m.0.as_ref(),
        );
        assert!(matches!(err, Err(TalosError::Decode { .. })));
    }

    #[tokio::test]
    async fn fan_out_keeps_node_order_and_bounds_concurrency() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let nodes: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let results = fan_out(&nodes, 4, |node| {
            let running = running.clone();
            let peak = peak.clone();
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                // later nodes finish first
                let n: u64 = node[1..].parse().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(20 - n)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                node.len()
            }
        })
        .await;
        let order: Vec<&str> = results.iter().map(|(n, _)| n.as_str()).collect();
        let expected: Vec<&str> = nodes.iter().map(String::as_str).collect();
        assert_eq!(order, expected);
        assert!(peak.load(Ordering::SeqCst) <= 4);
    }
}
