//! An OCI registry on loopback that lists tags, for learning Talos releases at run time:
//! `GET /v2/<name>/tags/list` with `n`/`last` pagination in lexical order and a
//! `Link: <...>; rel="next"` header while more remain (opencontainers/distribution-spec
//! spec.md, "Listing Tags"), `NAME_UNKNOWN` for another repository (spec.md, "Error Codes").
//! As an upstream registry it wants a token for anonymous pulls: a 401 with
//! `WWW-Authenticate: Bearer realm=..,service=..,scope=..`, a `/token` realm answering
//! `{"token": ..}` (distribution/distribution docs/spec/auth/token.md, as ghcr.io does); as a
//! mirror it answers without one and notes the `ns` it was asked for (containerd
//! docs/hosts.md).
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::model::error::SimError;
use crate::model::percent::percent_decode;

/// What a simulated registry serves.
#[derive(Debug, Clone, Default)]
pub struct RegistrySpec {
    /// Repository (`siderolabs/installer`) to its tags.
    pub repositories: BTreeMap<String, Vec<String>>,
    /// Whether the tags listing wants a token (an upstream such as ghcr.io) or not (a mirror).
    pub token_flow: bool,
    /// The most tags one page holds whatever `n` asks, so listings paginate.
    pub page_limit: usize,
}

impl RegistrySpec {
    /// The installer repository with `tags`, as ghcr.io serves it: token flow, pages of 2.
    pub fn installer(tags: &[&str]) -> RegistrySpec {
        RegistrySpec {
            repositories: BTreeMap::from([(
                "siderolabs/installer".to_string(),
                tags.iter().map(|t| t.to_string()).collect(),
            )]),
            token_flow: true,
            page_limit: 2,
        }
    }

    /// The same repositories served as a mirror: no token asked.
    pub fn as_mirror(mut self) -> RegistrySpec {
        self.token_flow = false;
        self
    }
}

/// One request the registry answered, for tests to check the flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryRequest {
    /// Path and query as asked.
    pub target: String,
    /// Whether it carried a token this registry issued.
    pub with_token: bool,
    pub status: u16,
}

struct Served {
    spec: RegistrySpec,
    addr: SocketAddr,
    tokens: Mutex<Vec<String>>,
    requests: Mutex<Vec<RegistryRequest>>,
}

/// A running registry; stops when dropped.
pub struct RegistrySim {
    served: Arc<Served>,
    server: tokio::task::JoinHandle<()>,
}

impl RegistrySim {
    /// Listens on 127.0.0.1 (a free port) and serves `spec`.
    pub async fn start(spec: RegistrySpec) -> Result<RegistrySim, SimError> {
        let bind = SocketAddr::from(([127, 0, 0, 1], 0));
        let listen_err = |source| SimError::Listen {
            cluster: "registry".into(),
            node: "registry".into(),
            address: bind.to_string(),
            source,
        };
        let listener = TcpListener::bind(bind).await.map_err(listen_err)?;
        let addr = listener.local_addr().map_err(listen_err)?;
        let served = Arc::new(Served {
            spec,
            addr,
            tokens: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
        });
        let server = tokio::spawn(serve(listener, served.clone()));
        Ok(RegistrySim { served, server })
    }

    /// `http://127.0.0.1:PORT`, as a registry or mirror endpoint is written.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.served.addr)
    }

    /// Every request answered so far, oldest first.
    pub fn requests(&self) -> Vec<RegistryRequest> {
        self.served
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Drop for RegistrySim {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn serve(listener: TcpListener, served: Arc<Served>) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        };
        let served = served.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let served = served.clone();
                async move { Ok::<_, Infallible>(handle(&served, &req)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
}

fn handle<B>(served: &Served, req: &Request<B>) -> Response<Full<Bytes>> {
    let target = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().path().to_string(), |p| p.to_string());
    let token = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let with_token = token.is_some_and(|t| {
        served
            .tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|issued| issued == t)
    });
    let response = route(
        served,
        req.uri().path(),
        &query(req.uri().query()),
        with_token,
    );
    served
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(RegistryRequest {
            target,
            with_token,
            status: response.status().as_u16(),
        });
    response
}

fn query(text: Option<&str>) -> BTreeMap<String, String> {
    text.unwrap_or("")
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), percent_decode(v)))
        .collect()
}

fn route(
    served: &Served,
    path: &str,
    query: &BTreeMap<String, String>,
    with_token: bool,
) -> Response<Full<Bytes>> {
    if path == "/token" {
        return issue_token(served, query);
    }
    let Some(name) = path
        .strip_prefix("/v2/")
        .and_then(|rest| rest.strip_suffix("/tags/list"))
    else {
        return error(StatusCode::NOT_FOUND, "UNSUPPORTED", "not served here");
    };
    if served.spec.token_flow && !with_token {
        let challenge = format!(
            "Bearer realm=\"http://{}/token\",service=\"sim-registry\",scope=\"repository:{name}:pull\"",
            served.addr
        );
        let mut response = error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "authentication required",
        );
        if let Ok(v) = challenge.parse() {
            response
                .headers_mut()
                .insert(hyper::header::WWW_AUTHENTICATE, v);
        }
        return response;
    }
    let Some(tags) = served.spec.repositories.get(name) else {
        return error(
            StatusCode::NOT_FOUND,
            "NAME_UNKNOWN",
            "repository name not known to registry",
        );
    };
    tags_page(served, name, tags, query)
}

fn issue_token(served: &Served, query: &BTreeMap<String, String>) -> Response<Full<Bytes>> {
    let scope = query.get("scope").cloned().unwrap_or_default();
    let known = scope
        .strip_prefix("repository:")
        .and_then(|s| s.strip_suffix(":pull"))
        .is_some_and(|name| served.spec.repositories.contains_key(name));
    if query.get("service").map(String::as_str) != Some("sim-registry") || !known {
        return error(
            StatusCode::UNAUTHORIZED,
            "DENIED",
            "no such service or scope",
        );
    }
    let mut tokens = served.tokens.lock().unwrap_or_else(|p| p.into_inner());
    let token = format!("sim-token-{}", tokens.len() + 1);
    tokens.push(token.clone());
    json(
        StatusCode::OK,
        serde_json::json!({ "token": token, "access_token": token }),
    )
}

/// One page: tags in lexical order after `last`, at most `n` (and the page limit), with a
/// `Link` to the next page while more remain.
fn tags_page(
    served: &Served,
    name: &str,
    tags: &[String],
    query: &BTreeMap<String, String>,
) -> Response<Full<Bytes>> {
    let mut sorted: Vec<&String> = tags.iter().collect();
    sorted.sort();
    let after: Vec<&String> = match query.get("last") {
        Some(last) => sorted
            .into_iter()
            .filter(|t| t.as_str() > last.as_str())
            .collect(),
        None => sorted,
    };
    let asked = query
        .get("n")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(usize::MAX);
    let take = asked.min(served.spec.page_limit.max(1));
    let page: Vec<&String> = after.iter().take(take).copied().collect();
    let mut response = json(
        StatusCode::OK,
        serde_json::json!({ "name": name, "tags": page }),
    );
    if after.len() > page.len()
        && let Some(last) = page.last()
    {
        let link = format!("</v2/{name}/tags/list?n={take}&last={last}>; rel=\"next\"");
        if let Ok(v) = link.parse() {
            response.headers_mut().insert(hyper::header::LINK, v);
        }
    }
    response
}

fn error(status: StatusCode, code: &str, message: &str) -> Response<Full<Bytes>> {
    json(
        status,
        serde_json::json!({ "errors": [{ "code": code, "message": message }] }),
    )
}

fn json(status: StatusCode, body: serde_json::Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_decoded() {
        let q = query(Some(
            "scope=repository%3Asiderolabs%2Finstaller%3Apull&n=2&x=a+b",
        ));
        assert_eq!(q["scope"], "repository:siderolabs/installer:pull");
        assert_eq!(q["n"], "2");
        assert_eq!(q["x"], "a b");
        assert_eq!(percent_decode("100%"), "100%");
    }
}
