//! What the API server answers while it cannot reach etcd (`KubeClusterFacts::
//! storage_unreachable`): every request that reads or writes storage times out, a watch hears
//! nothing, the health endpoints fail their etcd checks; discovery and `/version`, served from
//! memory, answer (`KubeClusterFacts::server_version`).
use std::collections::BTreeMap;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Response, StatusCode};
use serde_json::Value;

use super::{Body, objects};

/// The message of a request that ran out of time: the etcd client's calls wait for a
/// connection until the request's deadline (kube-apiserver's `--request-timeout`, 60 s by
/// default, set by k8s.io/apiserver pkg/endpoints/filters/request_deadline.go), and then
/// writes end in `finisher.FinishRequest` (pkg/endpoints/handlers/finisher/finisher.go:
/// `NewTimeoutError("request did not complete within requested timeout - " + ctx.Err())`) and
/// reads in the timeout filter (pkg/server/filters/timeout.go, `baseTimeoutWriter.timeout`:
/// 504 and the Status). The sim answers at once with what the client gets at the deadline.
pub(crate) const TIMEOUT_MESSAGE: &str =
    "Timeout: request did not complete within requested timeout - context deadline exceeded";

/// The Status body of a timed-out request: `apierrors.NewTimeoutError` (k8s.io/apimachinery
/// pkg/api/errors/errors.go): reason Timeout, code 504 (http.StatusGatewayTimeout).
pub(crate) fn timeout_status() -> Value {
    objects::status_error(504, "Timeout", TIMEOUT_MESSAGE)
}

/// Whether a request needs storage. Discovery (`/version`, `/api`, `/apis`, `/api/v1`,
/// `/apis/GROUP`, `/apis/GROUP/VERSION`) is served from the apiserver's memory, the health endpoints run
/// their own checks; a watch is long-running, so no timeout ends it: it stays open and hears
/// nothing, since the etcd client's watch waits to reconnect without an error (go.etcd.io/etcd
/// client/v3/watch.go) and the watch cache (k8s.io/apiserver pkg/storage/cacher) gets no
/// events to send. Everything else reads or writes etcd through the etcd3 store
/// (pkg/storage/etcd3/store.go).
pub(crate) fn needs_storage(segments: &[&str], query: &BTreeMap<String, String>) -> bool {
    let watch = query.get("watch").is_some_and(|w| w == "true" || w == "1");
    let discovery_or_health = matches!(
        segments,
        ["version"]
            | ["api"]
            | ["apis"]
            | ["api", _]
            | ["apis", _]
            | ["apis", _, _]
            | ["openapi", ..]
    ) || health_check(segments).is_some();
    !watch && !discovery_or_health
}

/// `/livez`, `/readyz` and `/healthz` (the sim serves no single check by name): the etcd check is a
/// health check (livez, readyz and healthz) and `etcd-readiness` a readyz check
/// (k8s.io/apiserver pkg/server/options/etcd.go, `addEtcdHealthEndpoint`); each fails while
/// etcd does not answer. The body is healthz.go's (`handleRootHealth`): `[+]NAME ok` or
/// `[-]NAME failed: reason withheld` per check, then `ENDPOINT check failed`, with 500; `ok`
/// with 200 when every check passes.
pub(crate) fn health(segments: &[&str], storage_unreachable: bool) -> Option<Response<Body>> {
    let endpoint = health_check(segments)?;
    let mut checks = vec!["ping", "log", "etcd"];
    if endpoint == "readyz" {
        checks.push("etcd-readiness");
    }
    if !storage_unreachable {
        return Some(text(StatusCode::OK, "ok".into()));
    }
    let mut body = String::new();
    for check in checks {
        if check.starts_with("etcd") {
            body.push_str(&format!("[-]{check} failed: reason withheld\n"));
        } else {
            body.push_str(&format!("[+]{check} ok\n"));
        }
    }
    body.push_str(&format!("{endpoint} check failed\n"));
    Some(text(StatusCode::INTERNAL_SERVER_ERROR, body))
}

/// The health endpoint a path names, if it names one.
fn health_check(segments: &[&str]) -> Option<&'static str> {
    match segments {
        ["livez"] => Some("livez"),
        ["readyz"] => Some("readyz"),
        ["healthz"] => Some("healthz"),
        _ => None,
    }
}

fn text(status: StatusCode, body: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(Full::new(Bytes::from(body)).boxed())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn reads_and_writes_need_storage_discovery_health_and_watches_do_not() {
        let none = query(&[]);
        for path in [
            &["api", "v1", "nodes"][..],
            &["api", "v1", "nodes", "cp-1"],
            &[
                "apis",
                "coordination.k8s.io",
                "v1",
                "namespaces",
                "kube-system",
                "leases",
            ],
            &["apis", "cluster.x-k8s.io", "v1beta2", "machines"],
        ] {
            assert!(needs_storage(path, &none), "{path:?}");
        }
        for path in [
            &["version"][..],
            &["api"],
            &["apis"],
            &["api", "v1"],
            &["apis", "cluster.x-k8s.io"],
            &["apis", "apps", "v1"],
            &["livez"],
            &["readyz"],
        ] {
            assert!(!needs_storage(path, &none), "{path:?}");
        }
        assert!(!needs_storage(
            &["api", "v1", "nodes"],
            &query(&[("watch", "true")])
        ));
    }

    #[tokio::test]
    async fn health_fails_its_etcd_checks_only_while_storage_is_unreachable() {
        let body = |r: Response<Body>| async move {
            let status = r.status();
            let bytes = r.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8_lossy(&bytes).into_owned())
        };
        let (status, text) = body(health(&["readyz"], true).unwrap()).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            text,
            "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n\
             [-]etcd-readiness failed: reason withheld\nreadyz check failed\n"
        );
        let (status, text) = body(health(&["livez"], false).unwrap()).await;
        assert_eq!((status, text.as_str()), (StatusCode::OK, "ok"));
        assert!(health(&["api", "v1"], true).is_none());
    }
}
