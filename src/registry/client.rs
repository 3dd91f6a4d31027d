//! A tags listing over the OCI distribution API: `GET /v2/<name>/tags/list`, paginated by the
//! `Link` header (opencontainers/distribution-spec spec.md, "Listing Tags"), with the token
//! flow registries use for anonymous pulls: a 401 names a realm, the realm gives a token, the
//! request is made again with it (distribution/distribution docs/spec/auth/token.md). Every
//! answer is read under a cap, and a listing stops after a bounded number of pages.
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, LINK, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};
use serde::Deserialize;

use super::headers::{BearerChallenge, bearer_challenge, next_link};

/// Tags asked for per page; registries may answer fewer.
const PAGE_SIZE: usize = 1000;
/// The most pages one listing reads (the installer has a few hundred tags).
const MAX_PAGES: usize = 50;
/// The most tags one listing keeps.
const MAX_TAGS: usize = 20_000;
/// The cap of one page or token answer.
const ANSWER_LIMIT: usize = 4 * 1024 * 1024;

/// Why a registry could not list tags; names the registry and what to check.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("registry {endpoint:?} is not an http(s) URL: {reason}")]
    Endpoint { endpoint: String, reason: String },
    #[error("registry {endpoint}: cannot reach it: {reason}")]
    Transport { endpoint: String, reason: String },
    #[error("registry {endpoint}: {what} answered {status}")]
    Status {
        endpoint: String,
        what: String,
        status: u16,
    },
    #[error("registry {endpoint}: asks for a token but {reason}")]
    Token { endpoint: String, reason: String },
    #[error("registry {endpoint}: {what}: {reason}")]
    Answer {
        endpoint: String,
        what: String,
        reason: String,
    },
    #[error("registry {endpoint}: the listing of {repository} goes past {limit}")]
    TooLong {
        endpoint: String,
        repository: String,
        limit: String,
    },
}

/// One registry (or mirror) endpoint. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Registry {
    /// Ends with `/`; `v2/...` is joined to it.
    base: Url,
    http: reqwest::Client,
    /// For a mirror, the registry it stands in for: sent as `ns=<host>`, as containerd does
    /// (containerd docs/hosts.md), so a mirror serving several upstreams can tell them apart.
    namespace: Option<String>,
}

#[derive(Deserialize)]
struct TagList {
    #[serde(default)]
    tags: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
}

impl Registry {
    /// A registry at `endpoint` (`https://ghcr.io`, `http://127.0.0.1:5000`, or a mirror's
    /// endpoint with a path); dials nothing yet.
    pub fn new(endpoint: &str, timeout: Duration) -> Result<Registry, RegistryError> {
        let bad = |reason: String| RegistryError::Endpoint {
            endpoint: crate::printable::line(endpoint),
            reason,
        };
        let mut base = Url::parse(endpoint.trim()).map_err(|e| bad(e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(bad(
                "expected http://HOST[:PORT] or https://HOST[:PORT]".into()
            ));
        }
        // A mirror endpoint may end in `/v2` (containerd's hosts.toml allows either).
        let path = base.path().trim_end_matches('/').to_string();
        let path = path.strip_suffix("/v2").unwrap_or(&path);
        base.set_path(&format!("{path}/"));
        base.set_query(None);
        crate::install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|e| bad(crate::error_chain(&e)))?;
        Ok(Registry {
            base,
            http,
            namespace: None,
        })
    }

    /// This endpoint as a mirror of `upstream_host` (`ghcr.io`).
    pub fn mirror_of(mut self, upstream_host: &str) -> Registry {
        self.namespace = Some(upstream_host.to_string());
        self
    }

    /// The endpoint as the operator would write it.
    pub fn endpoint(&self) -> String {
        self.base.as_str().trim_end_matches('/').to_string()
    }

    /// Every tag of `repository` (`siderolabs/installer`), in the order the pages gave them.
    pub async fn tags(&self, repository: &str) -> Result<Vec<String>, RegistryError> {
        let mut url = self
            .base
            .join(&format!("v2/{repository}/tags/list"))
            .map_err(|e| self.answer_err("the listing's URL", e.to_string()))?;
        url.query_pairs_mut()
            .append_pair("n", &PAGE_SIZE.to_string());
        if let Some(ns) = &self.namespace {
            url.query_pairs_mut().append_pair("ns", ns);
        }
        let mut token: Option<String> = None;
        let mut tags = Vec::new();
        for _ in 0..MAX_PAGES {
            let mut resp = self.get(&url, token.as_deref()).await?;
            if resp.status() == StatusCode::UNAUTHORIZED && token.is_none() {
                let challenge = resp
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|h| h.to_str().ok())
                    .and_then(bearer_challenge)
                    .ok_or_else(|| RegistryError::Token {
                        endpoint: self.endpoint(),
                        reason: "its 401 names no Bearer realm".into(),
                    })?;
                token = Some(self.token(&challenge, repository).await?);
                resp = self.get(&url, token.as_deref()).await?;
            }
            if !resp.status().is_success() {
                return Err(RegistryError::Status {
                    endpoint: self.endpoint(),
                    what: format!("the tags of {repository}"),
                    status: resp.status().as_u16(),
                });
            }
            let next = resp
                .headers()
                .get(LINK)
                .and_then(|h| h.to_str().ok())
                .and_then(next_link);
            let body = crate::bounded::read_body(resp, ANSWER_LIMIT)
                .await
                .map_err(|e| self.answer_err("the tags page", e))?;
            let page: TagList = serde_json::from_slice(&body)
                .map_err(|e| self.answer_err("the tags page", format!("not a tag list: {e}")))?;
            tags.extend(page.tags.unwrap_or_default());
            if tags.len() > MAX_TAGS {
                return Err(self.too_long(repository, format!("{MAX_TAGS} tags")));
            }
            let Some(next) = next else {
                return Ok(tags);
            };
            url = self.same_origin(&url, &next)?;
        }
        Err(self.too_long(repository, format!("{MAX_PAGES} pages")))
    }

    async fn get(
        &self,
        url: &Url,
        token: Option<&str>,
    ) -> Result<reqwest::Response, RegistryError> {
        let mut req = self.http.get(url.clone());
        if let Some(token) = token {
            req = req.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        req.send().await.map_err(|e| RegistryError::Transport {
            endpoint: self.endpoint(),
            reason: crate::error_chain(&e),
        })
    }

    /// An anonymous token for `repository`: `GET realm?service=..&scope=..`.
    async fn token(
        &self,
        challenge: &BearerChallenge,
        repository: &str,
    ) -> Result<String, RegistryError> {
        let token_err = |reason: String| RegistryError::Token {
            endpoint: self.endpoint(),
            reason,
        };
        let mut realm = Url::parse(&challenge.realm).map_err(|e| {
            token_err(format!(
                "its realm {:?} is not a URL: {e}",
                crate::printable::line(&challenge.realm)
            ))
        })?;
        if !matches!(realm.scheme(), "http" | "https") {
            return Err(token_err("its realm is not an http(s) URL".into()));
        }
        let scope = challenge
            .scope
            .clone()
            .unwrap_or_else(|| format!("repository:{repository}:pull"));
        {
            let mut query = realm.query_pairs_mut();
            if let Some(service) = &challenge.service {
                query.append_pair("service", service);
            }
            query.append_pair("scope", &scope);
        }
        let resp = self.http.get(realm).send().await.map_err(|e| {
            token_err(format!(
                "its realm cannot be reached: {}",
                crate::error_chain(&e)
            ))
        })?;
        if !resp.status().is_success() {
            return Err(token_err(format!(
                "its realm answered {}",
                resp.status().as_u16()
            )));
        }
        let body = crate::bounded::read_body(resp, ANSWER_LIMIT)
            .await
            .map_err(|e| token_err(format!("its realm's answer: {e}")))?;
        let answer: TokenAnswer = serde_json::from_slice(&body)
            .map_err(|e| token_err(format!("its realm's answer is not a token: {e}")))?;
        answer
            .token
            .or(answer.access_token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| token_err("its realm gave no token".into()))
    }

    /// The next page's URL, refused when it leaves this registry.
    fn same_origin(&self, current: &Url, next: &str) -> Result<Url, RegistryError> {
        let url = current
            .join(next)
            .map_err(|e| self.answer_err("the next page's link", e.to_string()))?;
        if url.origin() != self.base.origin() {
            return Err(self.answer_err(
                "the next page's link",
                format!("{} is another host", crate::printable::line(url.as_str())),
            ));
        }
        Ok(url)
    }

    fn answer_err(&self, what: &str, reason: String) -> RegistryError {
        RegistryError::Answer {
            endpoint: self.endpoint(),
            what: what.to_string(),
            reason,
        }
    }

    fn too_long(&self, repository: &str, limit: String) -> RegistryError {
        RegistryError::TooLong {
            endpoint: self.endpoint(),
            repository: repository.to_string(),
            limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_normalised_and_checked() {
        let t = Duration::from_secs(1);
        assert_eq!(
            Registry::new("https://ghcr.io", t).unwrap().endpoint(),
            "https://ghcr.io"
        );
        assert_eq!(
            Registry::new("http://127.0.0.1:5000/v2/", t)
                .unwrap()
                .endpoint(),
            "http://127.0.0.1:5000"
        );
        assert_eq!(
            Registry::new("http://127.0.0.1:5000/proxy", t)
                .unwrap()
                .endpoint(),
            "http://127.0.0.1:5000/proxy"
        );
        let err = Registry::new("ftp://x", t).unwrap_err().to_string();
        assert!(err.contains("ftp://x") && err.contains("http"), "{err}");
        assert!(Registry::new("not a url", t).is_err());
    }
}
