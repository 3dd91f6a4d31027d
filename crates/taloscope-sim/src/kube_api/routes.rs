//! Request routing for the Kubernetes API sim: paths, query parameters, label
//! and field selectors, server-side print tables, node watches and patches, pod evictions.
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use super::{
    ApiState, Body, CustomRequest, CustomResources, etcd_down, leases, objects, workloads,
};

fn json(status: StatusCode, value: &Value) -> Response<Body> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)).boxed())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed()))
}

fn ok(value: &Value) -> Response<Body> {
    json(StatusCode::OK, value)
}

fn not_found(message: &str) -> Response<Body> {
    json(
        StatusCode::NOT_FOUND,
        &objects::status_error(404, "NotFound", message),
    )
}

fn query(req: &Request<Incoming>) -> BTreeMap<String, String> {
    req.uri()
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(kv), String::new()),
        })
        .collect()
}

/// `k=v`, `k==v`, `k!=v` and `k` terms, comma-separated, all of which must hold.
fn selector_matches(selector: Option<&String>, fields: &dyn Fn(&str) -> Option<String>) -> bool {
    let Some(sel) = selector.filter(|s| !s.is_empty()) else {
        return true;
    };
    sel.split(',').all(|term| {
        let term = term.trim();
        if let Some((k, v)) = term.split_once("!=") {
            fields(k.trim()).as_deref() != Some(v.trim())
        } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
            fields(k.trim()).as_deref() == Some(v.trim())
        } else {
            fields(term).is_some()
        }
    })
}

pub(crate) fn object_matches(obj: &Value, q: &BTreeMap<String, String>) -> bool {
    let labels = |k: &str| {
        obj["metadata"]["labels"]
            .get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let fields = |k: &str| match k {
        "metadata.name" => obj["metadata"]["name"].as_str().map(str::to_string),
        "metadata.namespace" => obj["metadata"]["namespace"].as_str().map(str::to_string),
        "spec.nodeName" => obj["spec"]["nodeName"].as_str().map(str::to_string),
        "spec.unschedulable" => obj["spec"]["unschedulable"]
            .as_bool()
            .map(|b| b.to_string()),
        _ => None,
    };
    selector_matches(q.get("labelSelector"), &labels)
        && selector_matches(q.get("fieldSelector"), &fields)
}

fn wants_table(req: &Request<Incoming>) -> bool {
    req.headers()
        .get("accept")
        .and_then(|a| a.to_str().ok())
        .map(|a| a.split(',').next().unwrap_or("").contains("as=Table"))
        .unwrap_or(false)
}

use crate::model::clock::now_unix;
use crate::model::percent::percent_decode;

pub(crate) fn node_objects(state: &ApiState) -> Vec<Value> {
    let facts = state.facts.borrow().clone();
    let rv = state.resource_version();
    facts
        .nodes
        .iter()
        .map(|n| {
            let mut node = objects::node(&facts, n, state.is_cordoned(&n.name), rv);
            if let Ok(all) = state.node_annotations.lock()
                && let Some(annotations) = all.get(&n.name)
            {
                for (k, v) in annotations {
                    node["metadata"]["annotations"][k] = Value::String(v.clone());
                }
            }
            node
        })
        .collect()
}

fn kube_system_pods(state: &ApiState) -> Vec<Value> {
    let facts = state.facts.borrow().clone();
    facts
        .nodes
        .iter()
        .flat_map(|n| n.static_pods.iter().map(move |p| (n, p)))
        .map(|(n, p)| objects::static_pod(&facts, n, p))
        .collect()
}

pub(crate) async fn handle(
    state: Arc<ApiState>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path().trim_end_matches('/').to_string();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let q = query(&req);
    let rv = state.resource_version();
    let method = req.method().clone();
    let storage_unreachable = state.facts.borrow().storage_unreachable;
    if let Some(health) = etcd_down::health(&segments, storage_unreachable) {
        return Ok(health);
    }
    if storage_unreachable && etcd_down::needs_storage(&segments, &q) {
        return Ok(json(
            StatusCode::GATEWAY_TIMEOUT,
            &etcd_down::timeout_status(),
        ));
    }
    if let Some(custom) = state.custom.get().cloned()
        && custom.owns(&segments)
    {
        return Ok(custom_answer(custom.as_ref(), req, &method, &segments, &q).await);
    }
    let response = match (&method, segments.as_slice()) {
        (&Method::GET, ["version"]) => match state.facts.borrow().server_version() {
            Some(v) => ok(&objects::version(v)),
            None => json(
                StatusCode::SERVICE_UNAVAILABLE,
                &objects::status_error(503, "ServiceUnavailable", "no kube-apiserver is ready"),
            ),
        },
        (&Method::GET, ["api"]) => ok(&objects::core_api_versions(
            state.server_url.trim_start_matches("https://"),
        )),
        (&Method::GET, ["apis"]) => {
            let mut groups = objects::api_group_list();
            if let Some(custom) = state.custom.get()
                && let Some(list) = groups["groups"].as_array_mut()
            {
                list.extend(custom.api_groups());
            }
            ok(&groups)
        }
        (&Method::GET, ["api", "v1"]) => {
            let mut list = objects::resource_list("v1").unwrap_or_default();
            if let Some(custom) = state.custom.get()
                && let Some(resources) = list["resources"].as_array_mut()
            {
                resources.extend(custom.core_resources());
            }
            ok(&list)
        }
        (&Method::GET, ["apis", g, v]) => match objects::resource_list(&format!("{g}/{v}")) {
            Some(list) => ok(&list),
            None => not_found(&format!(
                "the server could not find the requested resource (group {g}/{v})"
            )),
        },
        (_, ["apis", "coordination.k8s.io", "v1", rest @ ..]) if !rest.is_empty() => {
            let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            let wants_table = wants_table(&req);
            let body = body_bytes(req).await;
            let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
            let (status, answer) = leases::handle(
                &state,
                &leases::LeaseRequest {
                    method: &method,
                    path: &rest,
                    query: &q,
                    wants_table,
                    body: &body,
                    now_unix: now_unix(),
                },
            );
            return Ok(json(status, &answer));
        }
        (&Method::GET, ["api", "v1", "nodes"])
            if q.get("watch").is_some_and(|w| w == "true" || w == "1") =>
        {
            watch_nodes(state.clone(), &q)
        }
        (&Method::GET, ["api", "v1", "nodes"]) => {
            let nodes: Vec<Value> = node_objects(&state)
                .into_iter()
                .filter(|n| object_matches(n, &q))
                .collect();
            if wants_table(&req) {
                let created = state.facts.borrow().created_unix;
                ok(&objects::node_table(&nodes, now_unix(), created, rv))
            } else {
                ok(&objects::list("NodeList", "v1", nodes, rv))
            }
        }
        (&Method::GET, ["api", "v1", "nodes", name]) => {
            match node_objects(&state)
                .into_iter()
                .find(|n| n["metadata"]["name"] == *name)
            {
                Some(node) => ok(&node),
                None => not_found(&format!("nodes \"{name}\" not found")),
            }
        }
        (&Method::PATCH, ["api", "v1", "nodes", name]) => {
            let name = name.to_string();
            let body = body_bytes(req).await;
            return Ok(patch_node(&state, &name, &body));
        }
        (&Method::GET, ["api", "v1", "namespaces"]) => {
            let created = state.facts.borrow().created_unix;
            let items = ["default", "kube-system"]
                .iter()
                .map(|n| objects::namespace(n, created))
                .collect();
            ok(&objects::list("NamespaceList", "v1", items, rv))
        }
        (&Method::GET, ["api", "v1", "namespaces", ns])
            if *ns == "default" || *ns == "kube-system" =>
        {
            ok(&objects::namespace(ns, state.facts.borrow().created_unix))
        }
        (&Method::GET, ["api", "v1", "pods"])
        | (&Method::GET, ["api", "v1", "namespaces", _, "pods"]) => {
            let namespace = segments.get(3).copied();
            let pods = workloads::all_pods(&state, kube_system_pods(&state))
                .into_iter()
                .filter(|p| namespace.is_none_or(|ns| p["metadata"]["namespace"] == ns))
                .filter(|p| object_matches(p, &q))
                .collect();
            ok(&objects::list("PodList", "v1", pods, rv))
        }
        (&Method::GET, ["api", "v1", "namespaces", ns, "pods", name]) => {
            match workloads::all_pods(&state, kube_system_pods(&state))
                .into_iter()
                .find(|p| p["metadata"]["namespace"] == *ns && p["metadata"]["name"] == *name)
            {
                Some(pod) => ok(&pod),
                None => not_found(&format!("pods \"{name}\" not found")),
            }
        }
        (&Method::GET, ["apis", "policy", "v1", "poddisruptionbudgets"])
        | (
            &Method::GET,
            [
                "apis",
                "policy",
                "v1",
                "namespaces",
                _,
                "poddisruptionbudgets",
            ],
        ) => {
            let namespace = segments.get(4).copied();
            let items = workloads::disruption_budgets(&state, namespace);
            ok(&objects::list(
                "PodDisruptionBudgetList",
                "policy/v1",
                items,
                rv,
            ))
        }
        (&Method::POST, ["api", "v1", "namespaces", ns, "pods", name, "eviction"]) => {
            let (status, answer) = workloads::evict(&state, ns, name);
            json(status, &answer)
        }
        (&Method::GET, ["apis", "apps", "v1", "daemonsets"])
        | (
            &Method::GET,
            [
                "apis",
                "apps",
                "v1",
                "namespaces",
                "kube-system",
                "daemonsets",
            ],
        ) => {
            let items = kube_proxy(&state)
                .into_iter()
                .filter(|ds| object_matches(ds, &q))
                .collect();
            ok(&objects::list("DaemonSetList", "apps/v1", items, rv))
        }
        (
            method,
            [
                "apis",
                "apps",
                "v1",
                "namespaces",
                "kube-system",
                "daemonsets",
                "kube-proxy",
            ],
        ) if method == Method::GET || method == Method::PATCH => {
            if method == Method::PATCH {
                let body = body_bytes(req).await;
                return Ok(patch_kube_proxy(&state, &body));
            }
            match kube_proxy(&state) {
                Some(ds) => ok(&ds),
                None => not_found("daemonsets.apps \"kube-proxy\" not found"),
            }
        }
        (&Method::GET, ["apis", _, _, _]) if stored_count(&state, &path).is_some() => {
            let count = stored_count(&state, &path).unwrap_or(0);
            ok(&objects::stored_list(&path, count, rv))
        }
        _ => not_found("the server could not find the requested resource"),
    };
    Ok(response)
}

/// A request on the management cluster's custom resources (the CAPI objects).
async fn custom_answer(
    custom: &dyn CustomResources,
    req: Request<Incoming>,
    method: &Method,
    segments: &[&str],
    q: &BTreeMap<String, String>,
) -> Response<Body> {
    let wants_table = wants_table(&req);
    let content_type = req
        .headers()
        .get("content-type")
        .and_then(|c| c.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = body_bytes(req).await;
    let (status, answer) = custom.answer(&CustomRequest {
        method,
        segments,
        query: q,
        wants_table,
        content_type: &content_type,
        body: &body,
    });
    json(status, &answer)
}

/// A request's whole body (empty if it cannot be read).
async fn body_bytes(req: Request<Incoming>) -> Bytes {
    req.into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default()
}

/// The kube-proxy DaemonSet as the API shows it, if the cluster has one.
fn kube_proxy(state: &ApiState) -> Option<Value> {
    let ds = state.kube_proxy.lock().ok()?.clone()?;
    Some(objects::kube_proxy_daemonset(&state.facts.borrow(), &ds))
}

/// A client's patch of the kube-proxy DaemonSet (as `talosctl upgrade-k8s` sends,
/// siderolabs/talos pkg/cluster/kubernetes/talos_managed.go); its pods roll at once.
fn patch_kube_proxy(state: &ApiState, body: &[u8]) -> Response<Body> {
    let patched = match state.kube_proxy.lock() {
        Ok(mut guard) => match guard.as_mut() {
            Some(ds) => ds.patch(body).map(|()| true),
            None => Ok(false),
        },
        Err(_) => Ok(false),
    };
    match patched {
        Ok(true) => {
            state.generation.send_modify(|g| *g += 1);
            match kube_proxy(state) {
                Some(ds) => ok(&ds),
                None => not_found("daemonsets.apps \"kube-proxy\" not found"),
            }
        }
        Ok(false) => not_found("daemonsets.apps \"kube-proxy\" not found"),
        Err(message) => json(
            StatusCode::UNPROCESSABLE_ENTITY,
            &objects::status_error(422, "Invalid", &message),
        ),
    }
}

/// How many objects are stored under a list path of a removed API version, if any are.
fn stored_count(state: &ApiState, path: &str) -> Option<usize> {
    let stored = state.removed_api_objects.lock().ok()?;
    stored.iter().find(|(p, _)| p == path).map(|(_, n)| *n)
}

/// Cordon and uncordon: a merge or strategic-merge patch of
/// `spec.unschedulable`, or a JSON patch of `/spec/unschedulable`.
fn patch_node(state: &ApiState, name: &str, body: &[u8]) -> Response<Body> {
    if !state.facts.borrow().nodes.iter().any(|n| n.name == name) {
        return not_found(&format!("nodes \"{name}\" not found"));
    }
    let Ok(patch) = serde_json::from_slice::<Value>(body) else {
        return json(
            StatusCode::BAD_REQUEST,
            &objects::status_error(400, "BadRequest", "patch body is not JSON"),
        );
    };
    let unschedulable = match &patch {
        // A merge patch with `unschedulable: null` removes the field: uncordon.
        Value::Object(_) => match &patch["spec"]["unschedulable"] {
            Value::Bool(b) => Some(*b),
            Value::Null if patch["spec"].get("unschedulable").is_some() => Some(false),
            _ => None,
        },
        Value::Array(ops) => ops
            .iter()
            .find(|op| op["path"] == "/spec/unschedulable")
            .map(|op| op["op"] != "remove" && op["value"].as_bool().unwrap_or(false)),
        _ => None,
    };
    // A merge patch of metadata.annotations: a string sets a key, null removes it.
    if let Some(changes) = patch["metadata"]["annotations"].as_object()
        && let Ok(mut all) = state.node_annotations.lock()
    {
        let annotations = all.entry(name.to_string()).or_default();
        for (k, v) in changes {
            match v.as_str() {
                Some(v) => annotations.insert(k.clone(), v.to_string()),
                None => annotations.remove(k),
            };
        }
        state.generation.send_modify(|g| *g += 1);
    }
    if let Some(value) = unschedulable {
        if let Ok(mut cordoned) = state.cordoned.lock() {
            if value {
                cordoned.insert(name.to_string());
            } else {
                cordoned.remove(name);
            }
        }
        state.workloads.note_cordon(name, value);
        state.generation.send_modify(|g| *g += 1);
    }
    match node_objects(state)
        .into_iter()
        .find(|n| n["metadata"]["name"] == name)
    {
        Some(node) => ok(&node),
        None => not_found(&format!("nodes \"{name}\" not found")),
    }
}

/// A node watch: ADDED for every node (or, resuming from an older
/// resourceVersion, MODIFIED), then MODIFIED/ADDED/DELETED as nodes change,
/// until `timeoutSeconds` or the client goes away.
fn watch_nodes(state: Arc<ApiState>, q: &BTreeMap<String, String>) -> Response<Body> {
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(300)
        .min(1800);
    let resume_from = q
        .get("resourceVersion")
        .and_then(|rv| rv.parse::<u64>().ok())
        .filter(|rv| *rv > 0);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, Infallible>>(64);
    tokio::spawn(async move {
        let mut generation = state.generation.subscribe();
        let deadline = tokio::time::sleep(Duration::from_secs(timeout));
        tokio::pin!(deadline);
        let mut last: BTreeMap<String, Value> = BTreeMap::new();
        let mut first = true;
        loop {
            // Without etcd no event reaches the watch (kube_api::etcd_down): it stays open.
            let frames = if state.facts.borrow().storage_unreachable {
                Vec::new()
            } else {
                let frames = node_changes(&state, &mut last, first, resume_from);
                first = false;
                frames
            };
            for frame in frames {
                if tx.send(Ok(Frame::data(frame))).await.is_err() {
                    return;
                }
            }
            tokio::select! {
                _ = &mut deadline => return,
                changed = generation.changed() => if changed.is_err() { return },
                _ = tx.closed() => return,
            }
        }
    });
    Response::builder()
        .header("content-type", "application/json")
        .body(StreamBody::new(tokio_stream::wrappers::ReceiverStream::new(rx)).boxed())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed()))
}

/// The watch events since `last` (the nodes as the watch last sent them, which it updates):
/// ADDED for every node at first (MODIFIED resuming from an older resourceVersion, nothing
/// from the current one), then MODIFIED, ADDED and DELETED as nodes change.
fn node_changes(
    state: &ApiState,
    last: &mut BTreeMap<String, Value>,
    first: bool,
    resume_from: Option<u64>,
) -> Vec<Bytes> {
    let current_rv = state.resource_version();
    let mut frames = Vec::new();
    let nodes = node_objects(state);
    let names: Vec<String> = nodes
        .iter()
        .filter_map(|n| n["metadata"]["name"].as_str().map(String::from))
        .collect();
    for (name, node) in names.iter().zip(nodes) {
        let mut comparable = node.clone();
        comparable["metadata"]["resourceVersion"] = Value::Null;
        let kind = match (last.get(name), first, resume_from) {
            (None, true, Some(rv)) if rv >= current_rv => None,
            (None, true, Some(_)) => Some("MODIFIED"),
            (None, _, _) => Some("ADDED"),
            (Some(prev), _, _) if *prev != comparable => Some("MODIFIED"),
            _ => None,
        };
        if let Some(kind) = kind {
            frames.push(watch_event(kind, &node));
        }
        last.insert(name.clone(), comparable);
    }
    let gone: Vec<String> = last
        .keys()
        .filter(|k| !names.contains(k))
        .cloned()
        .collect();
    for name in gone {
        if let Some(prev) = last.remove(&name) {
            frames.push(watch_event("DELETED", &prev));
        }
    }
    frames
}

fn watch_event(kind: &str, object: &Value) -> Bytes {
    let mut line = serde_json::to_vec(&serde_json::json!({"type": kind, "object": object}))
        .unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}
