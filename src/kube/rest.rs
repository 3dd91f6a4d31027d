//! The Kubernetes API over HTTPS: JSON requests to one API server with one
//! context's TLS and credentials, and its refusals decoded from `Status`
//! objects. No retries: callers poll again, a call stays within its timeout,
//! and an answer is read only up to 32 MiB.
use kube::config::Config;
use reqwest::{Method, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::client::KubeTimeouts;
use super::credentials::{self, Credentials, Identity};
use crate::bounded::{HTTP_BODY_LIMIT, read_body};
use crate::error_chain as chain;

/// A refusal from the API server: its `Status` object, or the HTTP status when
/// the body was not one.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub(super) struct ApiStatus {
    #[serde(default)]
    pub code: u16,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
}

/// Why a call failed.
#[derive(Debug)]
pub(super) enum CallError {
    /// The server answered and refused.
    Api(ApiStatus),
    /// No usable answer (connect, TLS, timeout, an unreadable body): the whole error chain.
    Transport(String),
    /// The credentials could not be had (an exec plugin failed, a token file is gone).
    Credentials(String),
}

/// A request body and its content type.
pub(super) struct Body {
    content_type: &'static str,
    bytes: Vec<u8>,
}

impl Body {
    pub fn json(value: &impl Serialize) -> Body {
        Body::with_type("application/json", value)
    }

    pub fn merge_patch(value: &impl Serialize) -> Body {
        Body::with_type("application/merge-patch+json", value)
    }

    /// A strategic merge patch: lists of containers merge by name.
    pub fn strategic_merge_patch(value: &impl Serialize) -> Body {
        Body::with_type("application/strategic-merge-patch+json", value)
    }

    fn with_type(content_type: &'static str, value: &impl Serialize) -> Body {
        Body {
            content_type,
            // Serializing k8s-openapi objects and json! values cannot fail.
            bytes: serde_json::to_vec(value).unwrap_or_default(),
        }
    }
}

/// One API server as one context reaches it. Cheap to clone.
#[derive(Clone)]
pub(super) struct Rest {
    http: reqwest::Client,
    base: Url,
    credentials: std::sync::Arc<Credentials>,
}

impl Rest {
    /// A client for `config`'s server with its TLS, proxy and credentials. May
    /// run the exec plugin.
    pub async fn connect(config: &Config, timeouts: KubeTimeouts) -> Result<Rest, String> {
        let (credentials, identity) = credentials::from_auth_info(&config.auth_info).await?;
        let mut base = Url::parse(&config.cluster_url.to_string())
            .map_err(|e| format!("server URL {}: {e}", config.cluster_url))?;
        // API paths go below the server URL's own path (a proxy's `/k8s/clusters/c-1`).
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        crate::install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .timeout(timeouts.call)
            .tls_danger_accept_invalid_certs(config.accept_invalid_certs)
            .default_headers(impersonation(config)?);
        if let Some(roots) = &config.root_cert {
            let certs = roots
                .iter()
                .map(|der| reqwest::Certificate::from_der(der))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("certificate-authority: {}", chain(&e)))?;
            builder = builder.tls_certs_only(certs);
        }
        if let Some(Identity(pem)) = identity {
            let identity = reqwest::Identity::from_pem(&pem)
                .map_err(|e| format!("client certificate and key: {}", chain(&e)))?;
            builder = builder.identity(identity);
        }
        builder = match &config.proxy_url {
            Some(proxy) => builder.proxy(
                reqwest::Proxy::all(proxy.to_string())
                    .map_err(|e| format!("proxy-url {proxy}: {}", chain(&e)))?
                    .no_proxy(reqwest::NoProxy::from_env()),
            ),
            None => builder.no_proxy(),
        };
        if let Some(name) = &config.tls_server_name {
            builder = verify_as(builder, &mut base, name).await?;
        }
        let http = builder.build().map_err(|e| chain(&e))?;
        Ok(Rest {
            http,
            base,
            credentials: std::sync::Arc::new(credentials),
        })
    }

    pub async fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T, CallError> {
        self.call(Method::GET, path, query, None).await
    }

    /// `None` when the object does not exist (404).
    pub async fn get_opt<T: DeserializeOwned>(&self, path: &str) -> Result<Option<T>, CallError> {
        match self.get(path, &[]).await {
            Ok(object) => Ok(Some(object)),
            Err(CallError::Api(status)) if status.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Body>,
    ) -> Result<T, CallError> {
        let mut url = self
            .base
            .join(path.trim_start_matches('/'))
            .map_err(|e| CallError::Transport(format!("{path}: {e}")))?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut req = self
            .http
            .request(method, url)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(body) = body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, body.content_type)
                .body(body.bytes);
        }
        let req = self
            .credentials
            .authorize(req)
            .await
            .map_err(CallError::Credentials)?;
        let resp = req
            .send()
            .await
            .map_err(|e| CallError::Transport(chain(&e)))?;
        let status = resp.status();
        let bytes = read_body(resp, HTTP_BODY_LIMIT)
            .await
            .map_err(|e| CallError::Transport(format!("reading the answer to {path}: {e}")))?;
        if !status.is_success() {
            return Err(CallError::Api(refusal(status, &bytes)));
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| CallError::Transport(format!("decoding the answer to {path}: {e}")))
    }
}

/// The `Status` in a refusal's body, or one made of the HTTP status.
fn refusal(status: reqwest::StatusCode, body: &[u8]) -> ApiStatus {
    let parsed: Option<ApiStatus> = serde_json::from_slice(body).ok();
    let mut api = parsed.unwrap_or_default();
    api.code = status.as_u16();
    if api.message.is_empty() {
        let text = String::from_utf8_lossy(body);
        api.message = match text.trim() {
            "" => status.to_string(),
            text => text.chars().take(200).collect(),
        };
    }
    api
}

/// The kubeconfig's `as`/`as-groups` as Impersonate headers.
fn impersonation(config: &Config) -> Result<reqwest::header::HeaderMap, String> {
    let mut headers = reqwest::header::HeaderMap::new();
    let auth = &config.auth_info;
    let values = auth.impersonate.iter().map(|u| ("impersonate-user", u));
    let groups = auth
        .impersonate_groups
        .iter()
        .flatten()
        .map(|g| ("impersonate-group", g));
    for (name, value) in values.chain(groups) {
        let value = value
            .parse()
            .map_err(|_| format!("{name} {value:?} is not a header value"))?;
        headers.append(name, value);
    }
    Ok(headers)
}

/// `tls-server-name`: connect to the server's address but verify (and send
/// SNI) as `name`, by addressing `name` and resolving it to the server.
async fn verify_as(
    builder: reqwest::ClientBuilder,
    base: &mut Url,
    name: &str,
) -> Result<reqwest::ClientBuilder, String> {
    let host = base.host_str().unwrap_or_default().to_string();
    let port = base.port_or_known_default().unwrap_or(443);
    let addrs: Vec<std::net::SocketAddr> =
        tokio::net::lookup_host((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|e| format!("resolving {host}: {e}"))?
            .collect();
    base.set_host(Some(name))
        .map_err(|e| format!("tls-server-name {name:?}: {e}"))?;
    Ok(builder.resolve_to_addrs(name, &addrs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_its_status_or_made_of_the_http_status() {
        let body = br#"{"kind":"Status","code":409,"reason":"Conflict","message":"changed"}"#;
        let status = refusal(reqwest::StatusCode::CONFLICT, body);
        assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
        assert_eq!(status.message, "changed");
        let plain = refusal(reqwest::StatusCode::SERVICE_UNAVAILABLE, b"");
        assert_eq!(plain.code, 503);
        assert_eq!(plain.message, "503 Service Unavailable");
    }

    #[tokio::test]
    async fn paths_go_below_the_server_urls_own_path() {
        let config = Config::new("https://127.0.0.1:6443/k8s/clusters/c-1".parse().unwrap());
        let rest = Rest::connect(&config, KubeTimeouts::default())
            .await
            .unwrap();
        let url = rest.base.join("api/v1/nodes").unwrap();
        assert_eq!(
            url.as_str(),
            "https://127.0.0.1:6443/k8s/clusters/c-1/api/v1/nodes"
        );
    }
}
