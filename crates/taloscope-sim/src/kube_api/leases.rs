//! Leases (`coordination.k8s.io/v1`) in the Kubernetes API sim, kept in memory
//! per simulated cluster: list, get, create, update with `resourceVersion`
//! optimistic concurrency, merge patch and delete with preconditions, answering
//! with the apiserver's Status bodies (NotFound, AlreadyExists, Conflict).
use std::collections::BTreeMap;
use std::sync::Mutex;

use hyper::{Method, StatusCode};
use k8s_openapi::api::coordination::v1::Lease;
use serde_json::{Value, json};

use super::patch::merge_patch;
use super::{ApiState, objects};

const GROUP: &str = "coordination.k8s.io";
/// The namespaces the sim has (see the namespace routes).
const NAMESPACES: &[&str] = &["default", "kube-system"];

/// One stored lease: its object as served, and when it was created (ages).
#[derive(Debug, Clone)]
struct StoredLease {
    object: Value,
    created_unix: i64,
}

/// Every lease of one simulated cluster, by namespace and name.
#[derive(Debug, Default)]
pub(crate) struct LeaseStore {
    leases: Mutex<BTreeMap<(String, String), StoredLease>>,
}

/// A status code and the JSON body to send with it.
pub(crate) type Answer = (StatusCode, Value);

/// A request under `/apis/coordination.k8s.io/v1/`; `path` is what follows.
pub(crate) struct LeaseRequest<'a> {
    pub method: &'a Method,
    pub path: &'a [&'a str],
    pub query: &'a BTreeMap<String, String>,
    pub wants_table: bool,
    pub body: &'a [u8],
    pub now_unix: i64,
}

pub(crate) fn handle(state: &ApiState, req: &LeaseRequest<'_>) -> Answer {
    let store = &state.leases;
    match (req.method, req.path) {
        (&Method::GET, ["leases"]) => store.list(state, None, req),
        (&Method::GET, ["namespaces", ns, "leases"]) => store.list(state, Some(ns), req),
        (&Method::POST, ["namespaces", ns, "leases"]) => store.create(state, ns, req),
        (&Method::GET, ["namespaces", ns, "leases", name]) => store.get(ns, name),
        (&Method::PUT, ["namespaces", ns, "leases", name]) => store.update(state, ns, name, req),
        (&Method::PATCH, ["namespaces", ns, "leases", name]) => store.patch(state, ns, name, req),
        (&Method::DELETE, ["namespaces", ns, "leases", name]) => store.delete(ns, name, req),
        (_, ["leases"]) | (_, ["namespaces", _, "leases", ..]) => failure(
            405,
            "MethodNotAllowed",
            &format!(
                "the server does not allow this method on leases: {}",
                req.method
            ),
            None,
        ),
        _ => failure(
            404,
            "NotFound",
            "the server could not find the requested resource",
            None,
        ),
    }
}

/// A Status failure as the apiserver sends it, with `details` naming the lease.
fn failure(code: u16, reason: &str, message: &str, name: Option<&str>) -> Answer {
    let mut body = objects::status_error(code, reason, message);
    if let Some(name) = name {
        body["details"] = json!({"name": name, "group": GROUP, "kind": "leases"});
    }
    (
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        body,
    )
}

fn not_found(name: &str) -> Answer {
    failure(
        404,
        "NotFound",
        &format!("leases.{GROUP} \"{name}\" not found"),
        Some(name),
    )
}

fn conflict(name: &str, why: &str) -> Answer {
    failure(
        409,
        "Conflict",
        &format!("Operation cannot be fulfilled on leases.{GROUP} \"{name}\": {why}"),
        Some(name),
    )
}

const MODIFIED: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

fn bad_request(message: &str) -> Answer {
    failure(400, "BadRequest", message, None)
}

fn namespace_missing(ns: &str) -> Option<Answer> {
    (!NAMESPACES.contains(&ns)).then(|| {
        let mut answer = failure(
            404,
            "NotFound",
            &format!("namespaces \"{ns}\" not found"),
            None,
        );
        answer.1["details"] = json!({"name": ns, "kind": "namespaces"});
        answer
    })
}

/// Decodes a Lease the way the apiserver would (timestamps must parse) and
/// re-encodes it, which also drops fields a Lease does not have.
fn decode_lease(body: &[u8], ns: &str, url_name: Option<&str>) -> Result<Value, Answer> {
    let raw: Value = serde_json::from_slice(body)
        .map_err(|e| bad_request(&format!("the request body is not JSON: {e}")))?;
    if let Some(kind) = raw["kind"].as_str().filter(|k| *k != "Lease") {
        return Err(bad_request(&format!(
            "the object kind {kind:?} is not a Lease"
        )));
    }
    let lease: Lease = serde_json::from_value(raw)
        .map_err(|e| bad_request(&format!("the request body is not a valid Lease: {e}")))?;
    let mut object = serde_json::to_value(&lease)
        .map_err(|e| bad_request(&format!("the Lease cannot be encoded: {e}")))?;
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    match url_name {
        Some(url) if !name.is_empty() && name != url => {
            return Err(bad_request(&format!(
                "the name of the object ({name}) does not match the name on the URL ({url})"
            )));
        }
        Some(url) => object["metadata"]["name"] = json!(url),
        None if name.is_empty() => {
            return Err(failure(
                422,
                "Invalid",
                "Lease.coordination.k8s.io \"\" is invalid: metadata.name: Required value: name is required",
                None,
            ));
        }
        None => {}
    }
    match object["metadata"]["namespace"].as_str() {
        Some(body_ns) if body_ns != ns => {
            return Err(bad_request(&format!(
                "the namespace of the provided object ({body_ns}) does not match the namespace sent on the request ({ns})"
            )));
        }
        _ => object["metadata"]["namespace"] = json!(ns),
    }
    Ok(object)
}

impl LeaseStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), StoredLease>> {
        // A panic while holding the lock cannot leave a half-written lease
        // (every write is one insert or remove), so a poisoned map is usable.
        self.leases.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bumps the cluster's resourceVersion; the new value belongs to the write.
    fn next_version(state: &ApiState) -> u64 {
        state.generation.send_modify(|g| *g += 1);
        state.resource_version()
    }

    fn list(&self, state: &ApiState, ns: Option<&str>, req: &LeaseRequest<'_>) -> Answer {
        if let Some(answer) = ns.and_then(namespace_missing) {
            return answer;
        }
        if req
            .query
            .get("watch")
            .is_some_and(|w| w == "true" || w == "1")
        {
            return failure(
                405,
                "MethodNotAllowed",
                "the Kubernetes API sim does not serve lease watches",
                None,
            );
        }
        let leases = self.lock();
        let matching: Vec<&StoredLease> = leases
            .iter()
            .filter(|((lease_ns, _), _)| ns.is_none_or(|ns| lease_ns.as_str() == ns))
            .map(|(_, lease)| lease)
            .filter(|lease| super::routes::object_matches(&lease.object, req.query))
            .collect();
        let rv = state.resource_version();
        if req.wants_table {
            let rows: Vec<(Value, i64)> = matching
                .iter()
                .map(|l| (l.object.clone(), l.created_unix))
                .collect();
            return (
                StatusCode::OK,
                objects::lease_table(&rows, req.now_unix, rv),
            );
        }
        let items = matching.iter().map(|l| l.object.clone()).collect();
        (
            StatusCode::OK,
            objects::list("LeaseList", "coordination.k8s.io/v1", items, rv),
        )
    }

    fn get(&self, ns: &str, name: &str) -> Answer {
        if let Some(answer) = namespace_missing(ns) {
            return answer;
        }
        match self.lock().get(&(ns.to_string(), name.to_string())) {
            Some(lease) => (StatusCode::OK, lease.object.clone()),
            None => not_found(name),
        }
    }

    fn create(&self, state: &ApiState, ns: &str, req: &LeaseRequest<'_>) -> Answer {
        if let Some(answer) = namespace_missing(ns) {
            return answer;
        }
        let mut object = match decode_lease(req.body, ns, None) {
            Ok(object) => object,
            Err(answer) => return answer,
        };
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let mut leases = self.lock();
        let key = (ns.to_string(), name.clone());
        if leases.contains_key(&key) {
            return failure(
                409,
                "AlreadyExists",
                &format!("leases.{GROUP} \"{name}\" already exists"),
                Some(&name),
            );
        }
        let rv = Self::next_version(state);
        let meta = &mut object["metadata"];
        meta["uid"] = json!(objects::uid("Lease", &format!("{ns}/{name}/{rv}")));
        meta["resourceVersion"] = json!(rv.to_string());
        meta["creationTimestamp"] = json!(objects::rfc3339(req.now_unix));
        leases.insert(
            key,
            StoredLease {
                object: object.clone(),
                created_unix: req.now_unix,
            },
        );
        (StatusCode::CREATED, object)
    }

    /// Stores `object` over the lease `ns/name` when `sent_version` (the
    /// client's `metadata.resourceVersion`) is the stored one.
    fn replace(
        &self,
        state: &ApiState,
        ns: &str,
        name: &str,
        mut object: Value,
        sent_version: Option<String>,
    ) -> Answer {
        let mut leases = self.lock();
        let key = (ns.to_string(), name.to_string());
        let Some(stored) = leases.get_mut(&key) else {
            return not_found(name);
        };
        let current = &stored.object["metadata"]["resourceVersion"];
        if let Some(sent) = sent_version
            && current.as_str() != Some(sent.as_str())
        {
            return conflict(name, MODIFIED);
        }
        let rv = Self::next_version(state);
        for kept in ["uid", "creationTimestamp"] {
            object["metadata"][kept] = stored.object["metadata"][kept].clone();
        }
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        stored.object = object.clone();
        (StatusCode::OK, object)
    }

    fn update(&self, state: &ApiState, ns: &str, name: &str, req: &LeaseRequest<'_>) -> Answer {
        if let Some(answer) = namespace_missing(ns) {
            return answer;
        }
        let object = match decode_lease(req.body, ns, Some(name)) {
            Ok(object) => object,
            Err(answer) => return answer,
        };
        // Leases refuse unconditional updates, as the apiserver's strategy does.
        let Some(sent) = object["metadata"]["resourceVersion"]
            .as_str()
            .filter(|rv| !rv.is_empty())
            .map(str::to_string)
        else {
            return failure(
                422,
                "Invalid",
                &format!(
                    "Lease.{GROUP} \"{name}\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
                ),
                Some(name),
            );
        };
        self.replace(state, ns, name, object, Some(sent))
    }

    /// A JSON merge patch (also taken for strategic merge: a Lease has no
    /// merge-keyed lists); a `metadata.resourceVersion` in it is a precondition.
    fn patch(&self, state: &ApiState, ns: &str, name: &str, req: &LeaseRequest<'_>) -> Answer {
        if let Some(answer) = namespace_missing(ns) {
            return answer;
        }
        let patch: Value = match serde_json::from_slice(req.body) {
            Ok(Value::Object(p)) => Value::Object(p),
            _ => return bad_request("the patch is not a JSON merge patch object"),
        };
        let Some(mut merged) = self
            .lock()
            .get(&(ns.to_string(), name.to_string()))
            .map(|l| l.object.clone())
        else {
            return not_found(name);
        };
        let sent = patch["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string);
        merge_patch(&mut merged, &patch);
        let body = serde_json::to_vec(&merged).unwrap_or_default();
        let object = match decode_lease(&body, ns, Some(name)) {
            Ok(object) => object,
            Err(answer) => return answer,
        };
        self.replace(state, ns, name, object, sent)
    }

    fn delete(&self, ns: &str, name: &str, req: &LeaseRequest<'_>) -> Answer {
        if let Some(answer) = namespace_missing(ns) {
            return answer;
        }
        let options: Value = if req.body.is_empty() {
            Value::Null
        } else {
            match serde_json::from_slice(req.body) {
                Ok(v) => v,
                Err(e) => return bad_request(&format!("the DeleteOptions are not JSON: {e}")),
            }
        };
        let mut leases = self.lock();
        let key = (ns.to_string(), name.to_string());
        let Some(stored) = leases.get(&key) else {
            return not_found(name);
        };
        let meta = &stored.object["metadata"];
        let preconditions = &options["preconditions"];
        if let Some(want) = preconditions["resourceVersion"].as_str() {
            let have = meta["resourceVersion"].as_str().unwrap_or("");
            if want != have {
                return conflict(
                    name,
                    &format!(
                        "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {have}"
                    ),
                );
            }
        }
        if let Some(want) = preconditions["uid"].as_str() {
            let have = meta["uid"].as_str().unwrap_or("");
            if want != have {
                return conflict(
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {want}, UID in object meta: {have}"
                    ),
                );
            }
        }
        let uid = meta["uid"].clone();
        leases.remove(&key);
        (
            StatusCode::OK,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                   "details": {"name": name, "group": GROUP, "kind": "leases", "uid": uid}}),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_with_a_bad_timestamp_is_refused() {
        let body = br#"{"metadata":{"name":"x"},"spec":{"renewTime":"yesterday"}}"#;
        let Err((status, body)) = decode_lease(body, "kube-system", None) else {
            panic!("a bad MicroTime must not decode");
        };
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["reason"], "BadRequest");
    }

    #[test]
    fn a_name_other_than_the_urls_is_refused() {
        let body = br#"{"metadata":{"name":"x"}}"#;
        let Err((status, _)) = decode_lease(body, "kube-system", Some("y")) else {
            panic!("the URL names another lease");
        };
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn a_lease_is_normalised_into_its_namespace() {
        let body = br#"{"metadata":{"name":"x"},"spec":{"holderIdentity":"a@b","leaseDurationSeconds":15}}"#;
        let object = decode_lease(body, "kube-system", None).expect("decodes");
        assert_eq!(object["metadata"]["namespace"], "kube-system");
        assert_eq!(object["kind"], "Lease");
        assert_eq!(object["apiVersion"], "coordination.k8s.io/v1");
        assert_eq!(object["spec"]["holderIdentity"], "a@b");
    }
}
