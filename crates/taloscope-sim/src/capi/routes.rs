//! The management cluster's REST paths for the CAPI objects: discovery of the CAPI groups, the
//! CustomResourceDefinitions, and list/get/create/patch/replace/delete plus `/status` and
//! `/scale` of every served resource in every served version (k8s.io/apiextensions-apiserver
//! serves custom resources this way), and the cluster's Secrets (the kubeconfig secret).

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use super::admission::{self, Operation};
use super::convert;
use super::resources::{self, CORE, Resource};
use super::store::{CapiStore, StoreError, now_unix};
use super::table;
use crate::kube_api::CustomResources;
use crate::kube_api::objects::{list, rfc3339, status_error};
use crate::kube_api::patch::{json_patch, merge_patch};

/// One request the kube API sim hands over.
pub(crate) use crate::kube_api::CustomRequest as CapiRequest;

/// The management cluster's API serves the store as custom resources.
impl CustomResources for CapiStore {
    fn owns(&self, segments: &[&str]) -> bool {
        owns(self, segments)
    }

    fn answer(&self, request: &CapiRequest<'_>) -> Answer {
        answer(self, request)
    }

    fn api_groups(&self) -> Vec<Value> {
        self.installed.api_groups()
    }

    fn core_resources(&self) -> Vec<Value> {
        vec![resources::secrets_resource()]
    }
}

type Answer = (StatusCode, Value);

fn error(code: StatusCode, reason: &str, message: &str) -> Answer {
    (code, status_error(code.as_u16(), reason, message))
}

fn not_found(what: &str, name: &str) -> Answer {
    error(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!("{what} \"{name}\" not found"),
    )
}

fn store_error(e: StoreError, what: &str) -> Answer {
    match e {
        StoreError::AlreadyExists(n) => error(
            StatusCode::CONFLICT,
            "AlreadyExists",
            &format!("{what} \"{n}\" already exists"),
        ),
        StoreError::NotFound(n) => not_found(what, &n),
        StoreError::Invalid(m) => error(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", &m),
    }
}

/// Whether a path belongs to the CAPI side (the rest stays with the workload-style routes).
pub(crate) fn owns(store: &CapiStore, segments: &[&str]) -> bool {
    match segments {
        ["apis", group, ..] => {
            *group == "apiextensions.k8s.io" || store.installed.api_group(group).is_some()
        }
        ["api", "v1", "secrets"] | ["api", "v1", "namespaces", _, "secrets", ..] => true,
        _ => false,
    }
}

/// The object as served in `version` (converting from the storage version).
fn served(r: &Resource, stored: &Value, version: &str) -> Value {
    if version == r.storage_version() {
        let mut out = stored.clone();
        out["apiVersion"] = json!(format!("{}/{version}", r.group));
        out
    } else {
        convert::down(r.kind, stored)
    }
}

/// A client's object in `version` back into the storage version.
fn stored(r: &Resource, sent: Value, version: &str, old_status: &Value) -> Value {
    if version == r.storage_version() {
        let mut out = sent;
        out["apiVersion"] = json!(format!("{}/{}", r.group, r.storage_version()));
        out
    } else {
        convert::up(r.kind, &sent, old_status)
    }
}

pub(crate) fn answer(store: &CapiStore, req: &CapiRequest<'_>) -> Answer {
    let rv = store.resource_version();
    match (req.method, req.segments) {
        (
            &Method::GET,
            [
                "apis",
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
            ],
        ) => {
            let created = rfc3339(now_unix() - 86_400);
            let items = store
                .installed
                .all()
                .map(|r| resources::crd(r, &created))
                .collect();
            (
                StatusCode::OK,
                list(
                    "CustomResourceDefinitionList",
                    "apiextensions.k8s.io/v1",
                    items,
                    rv,
                ),
            )
        }
        (
            &Method::GET,
            [
                "apis",
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                name,
            ],
        ) => {
            let created = rfc3339(now_unix() - 86_400);
            store
                .installed
                .all()
                .find(|r| format!("{}.{}", r.plural, r.group) == *name)
                .map(|r| (StatusCode::OK, resources::crd(r, &created)))
                .unwrap_or_else(|| {
                    not_found("customresourcedefinitions.apiextensions.k8s.io", name)
                })
        }
        (&Method::GET, ["apis", group]) => match store.installed.api_group(group) {
            Some(g) => (StatusCode::OK, g),
            None => not_found("group", group),
        },
        (&Method::GET, ["apis", group, version]) => {
            match store.installed.resource_list(group, version) {
                Some(l) => (StatusCode::OK, l),
                None => not_found("group version", &format!("{group}/{version}")),
            }
        }
        (&Method::GET, ["api", "v1", "secrets"]) => secrets(store, None, rv),
        (&Method::GET, ["api", "v1", "namespaces", ns, "secrets"]) => secrets(store, Some(ns), rv),
        (&Method::GET, ["api", "v1", "namespaces", ns, "secrets", name]) => store
            .get("secrets", ns, name)
            .map(|s| (StatusCode::OK, s))
            .unwrap_or_else(|| not_found("secrets", name)),
        (_, ["apis", group, version, plural]) => {
            collection(store, req, group, version, None, plural, rv)
        }
        (_, ["apis", group, version, "namespaces", ns, plural]) => {
            collection(store, req, group, version, Some(ns), plural, rv)
        }
        (
            _,
            [
                "apis",
                group,
                version,
                "namespaces",
                ns,
                plural,
                name,
                rest @ ..,
            ],
        ) => {
            let Some(r) = store.installed.find(group, version, plural) else {
                return not_found("resource", plural);
            };
            object(store, req, r, version, ns, name, rest.first().copied())
        }
        _ => error(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        ),
    }
}

fn secrets(store: &CapiStore, ns: Option<&str>, rv: u64) -> Answer {
    let items = store.list("secrets", ns);
    (StatusCode::OK, list("SecretList", "v1", items, rv))
}

fn collection(
    store: &CapiStore,
    req: &CapiRequest<'_>,
    group: &str,
    version: &str,
    ns: Option<&str>,
    plural: &str,
    rv: u64,
) -> Answer {
    let Some(r) = store.installed.find(group, version, plural) else {
        return not_found("resource", plural);
    };
    match (req.method, ns) {
        (&Method::GET, _) => {
            let items: Vec<Value> = store
                .list(r.plural, ns)
                .iter()
                .map(|o| served(r, o, version))
                .filter(|o| crate::kube_api::object_matches(o, req.query))
                .collect();
            if req.wants_table {
                (
                    StatusCode::OK,
                    table::table(r.kind, version, &items, now_unix(), rv),
                )
            } else {
                let kind = format!("{}List", r.kind);
                let api_version = format!("{}/{version}", r.group);
                (StatusCode::OK, list(&kind, &api_version, items, rv))
            }
        }
        (&Method::POST, Some(ns)) => {
            let Ok(mut sent) = serde_json::from_slice::<Value>(req.body) else {
                return error(StatusCode::BAD_REQUEST, "BadRequest", "body is not JSON");
            };
            sent["metadata"]["namespace"] = json!(ns);
            sent["kind"] = json!(r.kind);
            let obj = stored(r, sent, version, &Value::Null);
            if let Some(refused) = admit(store, r, Operation::Create, None, &obj) {
                return refused;
            }
            match store.create(r.plural, obj) {
                Ok(made) => (StatusCode::CREATED, served(r, &made, version)),
                Err(e) => store_error(e, &format!("{}.{}", r.plural, r.group)),
            }
        }
        _ => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        ),
    }
}

/// A `/scale` view: autoscaling/v1 Scale from `.spec.replicas`, `.status.replicas`,
/// `.status.selector` (the CRDs' `+kubebuilder:subresource:scale` paths).
fn scale_of(o: &Value) -> Value {
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": o["metadata"]["name"], "namespace": o["metadata"]["namespace"],
            "uid": o["metadata"]["uid"], "resourceVersion": o["metadata"]["resourceVersion"],
            "creationTimestamp": o["metadata"]["creationTimestamp"]},
        "spec": {"replicas": o["spec"]["replicas"].as_i64().unwrap_or(0)},
        "status": {"replicas": o["status"]["replicas"].as_i64().unwrap_or(0),
            "selector": o["status"]["selector"].as_str().unwrap_or_default()}})
}

/// Applies a client's patch body as its content type says.
fn apply_patch(target: &mut Value, content_type: &str, body: &[u8]) -> Result<(), Answer> {
    let Ok(patch) = serde_json::from_slice::<Value>(body) else {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "patch body is not JSON",
        ));
    };
    if content_type.starts_with("application/json-patch+json") {
        let ops = patch.as_array().cloned().unwrap_or_default();
        json_patch(target, &ops).map_err(|m| error(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", &m))
    } else {
        merge_patch(target, &patch);
        Ok(())
    }
}

fn object(
    store: &CapiStore,
    req: &CapiRequest<'_>,
    r: &Resource,
    version: &str,
    ns: &str,
    name: &str,
    sub: Option<&str>,
) -> Answer {
    let what = format!("{}.{}", r.plural, r.group);
    let Some(current) = store.get(r.plural, ns, name) else {
        return not_found(&what, name);
    };
    if sub == Some("scale") && !r.scale {
        return not_found(&what, &format!("{name}/scale"));
    }
    let view = served(r, &current, version);
    let mut next = match (req.method, sub) {
        (&Method::GET, Some("scale")) => return (StatusCode::OK, scale_of(&view)),
        (&Method::GET, _) => return (StatusCode::OK, view),
        (&Method::DELETE, None) => {
            // A Machine holds the machine controller's finalizer: it stays, deleting, until
            // its deletion phases ran (machine_deletion.rs); other objects go at once.
            return match store.request_deletion(r.plural, ns, name) {
                Some(left) if !left["metadata"]["deletionTimestamp"].is_null() => {
                    (StatusCode::OK, served(r, &left, version))
                }
                _ => (StatusCode::OK, view),
            };
        }
        (&Method::PATCH, Some("scale")) => {
            let mut scale = scale_of(&view);
            if let Err(e) = apply_patch(&mut scale, req.content_type, req.body) {
                return e;
            }
            let mut next = view.clone();
            next["spec"]["replicas"] = scale["spec"]["replicas"].clone();
            next
        }
        (&Method::PUT, Some("scale")) => {
            let Ok(scale) = serde_json::from_slice::<Value>(req.body) else {
                return error(StatusCode::BAD_REQUEST, "BadRequest", "body is not JSON");
            };
            let mut next = view.clone();
            next["spec"]["replicas"] = scale["spec"]["replicas"].clone();
            next
        }
        (&Method::PATCH, None | Some("status")) => {
            let mut next = view.clone();
            if let Err(e) = apply_patch(&mut next, req.content_type, req.body) {
                return e;
            }
            next
        }
        (&Method::PUT, None | Some("status")) => match serde_json::from_slice::<Value>(req.body) {
            Ok(sent) => sent,
            Err(_) => return error(StatusCode::BAD_REQUEST, "BadRequest", "body is not JSON"),
        },
        _ => {
            return error(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            );
        }
    };
    if next["metadata"]["name"] != view["metadata"]["name"] {
        return error(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "the name of the object does not match the name on the URL",
        );
    }
    if sub != Some("status") {
        next["status"] = view["status"].clone();
    }
    let mut obj = stored(r, next, version, &current["status"]);
    if sub == Some("status") && version != r.storage_version() {
        obj["status"] = current["status"].clone();
    }
    if sub.is_none()
        && let Some(refused) = admit(store, r, Operation::Update, Some(&current), &obj)
    {
        return refused;
    }
    match store.replace(r.plural, obj) {
        Ok(saved) if sub == Some("scale") => {
            (StatusCode::OK, scale_of(&served(r, &saved, version)))
        }
        Ok(saved) => (StatusCode::OK, served(r, &saved, version)),
        Err(e) => store_error(e, &what),
    }
}

/// The validating webhooks' review of a write: the 400 the API server answers when one
/// refuses it (k8s.io/apiserver pkg/admission/plugin/webhook/errors/statuserror.go keeps the
/// webhook's code and prefixes its message), logged in the store.
fn admit(
    store: &CapiStore,
    r: &Resource,
    operation: Operation,
    old: Option<&Value>,
    new: &Value,
) -> Option<Answer> {
    let refusal = admission::review(r.kind, operation, old, new)?;
    let answer = error(StatusCode::BAD_REQUEST, "BadRequest", &refusal.message);
    store.refused(refusal);
    Some(answer)
}

/// The group/version objects of the core group are stored in.
pub(crate) fn core_api_version() -> String {
    format!("{CORE}/v1beta2")
}
