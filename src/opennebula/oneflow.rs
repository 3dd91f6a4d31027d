//! The OneFlow REST client (HTTP Basic, JSON): service templates, instantiate,
//! a service with its roles and VMs, and a role's cardinality. Documents are
//! read tolerantly: OneFlow writes numbers as strings in places.
use std::fmt;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value as Json, json};

use super::auth::Credentials;
use super::client::{http_client, send};
use super::errors::{FailureKind, OneError, Origin};
use super::vm::{serialize_by_name, state_name};

#[path = "service_template.rs"]
mod service_template;
pub use service_template::{RoleMerge, ServiceTemplate, TemplateRole, parse_service_template};

const SERVICE_STATES: [&str; 16] = [
    "PENDING",
    "DEPLOYING",
    "RUNNING",
    "UNDEPLOYING",
    "WARNING",
    "DONE",
    "FAILED_UNDEPLOYING",
    "FAILED_DEPLOYING",
    "SCALING",
    "FAILED_SCALING",
    "COOLDOWN",
    "DEPLOYING_NETS",
    "UNDEPLOYING_NETS",
    "FAILED_DEPLOYING_NETS",
    "FAILED_UNDEPLOYING_NETS",
    "HOLD",
];

/// A service's state (`service.rb`), shown by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceState(pub u32);

impl ServiceState {
    pub fn name(self) -> String {
        state_name(&SERVICE_STATES, self.0, "STATE")
    }
}

/// A role's state (`role.rb`): the service's names for 0–10, then HOLD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleState(pub u32);

impl RoleState {
    pub fn name(self) -> String {
        match self.0 {
            0..=10 => ServiceState(self.0).name(),
            11 => "HOLD".into(),
            n => format!("STATE_{n}"),
        }
    }
}

serialize_by_name!(ServiceState);
serialize_by_name!(RoleState);

/// A VM of a role as the service document names it: OneFlow keeps only the VM's ID, UID,
/// GID, UNAME, GNAME and NAME in a node's `vm_info` (OpenNebula/one
/// src/flow/lib/models/role.rb), so its state and IPs come from `one.vm.info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceVm {
    pub id: u64,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceRole {
    pub name: String,
    /// The VM template the role's VMs are instantiated from (0 when the document lacks it).
    pub template_id: u64,
    pub cardinality: u64,
    /// The most VMs the role may have (OneFlow's `max_vms`), when the service sets it.
    pub max_vms: Option<u64>,
    pub state: RoleState,
    pub vms: Vec<ServiceVm>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Service {
    pub id: u64,
    pub name: String,
    pub state: ServiceState,
    pub roles: Vec<ServiceRole>,
}

impl Service {
    pub fn role(&self, name: &str) -> Option<&ServiceRole> {
        self.roles.iter().find(|r| r.name == name)
    }
}

/// A client for one provider's OneFlow endpoint (e.g. `http://host:2474`).
#[derive(Clone)]
pub struct FlowClient {
    http: reqwest::Client,
    at: Origin,
    base: String,
    credentials: Credentials,
}

impl std::fmt::Debug for FlowClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowClient")
            .field("at", &self.at)
            .field("username", &self.credentials.username)
            .finish_non_exhaustive()
    }
}

impl FlowClient {
    pub fn new(
        provider: &str,
        endpoint: &str,
        credentials: Credentials,
        timeout: Duration,
    ) -> Result<FlowClient, OneError> {
        let at = Origin::new(provider, endpoint);
        let http = http_client(&at, timeout)?;
        Ok(FlowClient {
            http,
            base: endpoint.trim_end_matches('/').to_string(),
            at,
            credentials,
        })
    }

    pub fn origin(&self) -> &Origin {
        &self.at
    }

    async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Json>,
    ) -> Result<Json, OneError> {
        let call = format!("{method} {path}");
        tracing::debug!(provider = %self.at.provider, %call, "OneFlow call");
        let transport = |message: String| OneError::Transport {
            at: self.at.clone(),
            call: call.clone(),
            message,
        };
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base))
            .basic_auth(
                &self.credentials.username,
                Some(self.credentials.password()),
            );
        if let Some(b) = body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(b.to_string());
        }
        let (status, text) = send(req, &transport).await?;
        if !status.is_success() {
            return Err(OneError::Failed {
                at: self.at.clone(),
                call,
                kind: FailureKind::from_http(status.as_u16()),
                message: format!("HTTP {}: {}", status.as_u16(), error_message(&text)),
            });
        }
        if text.trim().is_empty() {
            return Ok(Json::Null);
        }
        serde_json::from_str(&text).map_err(|e| OneError::Decode {
            at: self.at.clone(),
            call,
            message: format!("not JSON: {e}"),
        })
    }

    fn decode_error(&self, call: &str, message: impl Into<String>) -> OneError {
        OneError::Decode {
            at: self.at.clone(),
            call: call.to_string(),
            message: message.into(),
        }
    }

    /// `POST /service_template/:id/action` instantiate; the new service.
    pub async fn instantiate(&self, template_id: u64, name: &str) -> Result<Service, OneError> {
        let path = format!("/service_template/{template_id}/action");
        let body = json!({"action": {"perform": "instantiate",
            "params": {"merge_template": {"name": name}}}});
        let doc = self
            .request(reqwest::Method::POST, &path, Some(body))
            .await?;
        let d = doc.get("DOCUMENT").unwrap_or(&doc);
        parse_service(d)
            .ok_or_else(|| self.decode_error(&path, "no service document in the answer"))
    }

    /// `GET /service/:id`.
    pub async fn service(&self, id: u64) -> Result<Service, OneError> {
        let path = format!("/service/{id}");
        let doc = self.request(reqwest::Method::GET, &path, None).await?;
        let d = doc.get("DOCUMENT").unwrap_or(&doc);
        parse_service(d)
            .ok_or_else(|| self.decode_error(&path, "no service document in the answer"))
    }

    /// `GET /service`: every service the user may see.
    pub async fn services(&self) -> Result<Vec<Service>, OneError> {
        let doc = self.request(reqwest::Method::GET, "/service", None).await?;
        Ok(services_from_pool(&doc))
    }

    /// A service by name (the pool).
    pub async fn service_named(&self, name: &str) -> Result<Service, OneError> {
        let services = self.services().await?;
        let known: Vec<String> = services.iter().map(|s| s.name.clone()).collect();
        services
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| OneError::NotFound {
                at: self.at.clone(),
                what: "OneFlow service",
                name: name.to_string(),
                hint: format!("services here: {}", known.join(", ")),
            })
    }

    /// `POST /service/:id/scale`: sets a role's cardinality.
    pub async fn scale(&self, service: u64, role: &str, cardinality: u64) -> Result<(), OneError> {
        let body = json!({"role_name": role, "cardinality": cardinality, "force": false});
        self.request(
            reqwest::Method::POST,
            &format!("/service/{service}/scale"),
            Some(body),
        )
        .await
        .map(|_| ())
    }
}

/// `{"error": {"message": …}}` as OneFlow writes it, else the body's start.
pub fn error_message(text: &str) -> String {
    let parsed: Option<Json> = serde_json::from_str(text).ok();
    let from_json = parsed.as_ref().and_then(|j| {
        j.pointer("/error/message")
            .or_else(|| j.get("error"))
            .or_else(|| j.get("message"))
            .map(|m| loose_str(Some(m)))
    });
    let message = from_json.unwrap_or_else(|| text.trim().to_string());
    message.chars().take(300).collect()
}

/// The services of a `GET /service` answer; documents that are not services
/// are skipped.
pub fn services_from_pool(doc: &Json) -> Vec<Service> {
    pool_documents(doc)
        .iter()
        .filter_map(parse_service)
        .collect()
}

/// `DOCUMENT_POOL.DOCUMENT` is an array, a single object, or absent.
fn pool_documents(doc: &Json) -> Vec<Json> {
    match doc.pointer("/DOCUMENT_POOL/DOCUMENT") {
        Some(Json::Array(items)) => items.clone(),
        Some(one @ Json::Object(_)) => vec![one.clone()],
        _ => Vec::new(),
    }
}

fn body(doc: &Json) -> Option<&Json> {
    doc.pointer("/TEMPLATE/BODY")
}

fn loose_u64(v: &Json) -> Option<u64> {
    match v {
        Json::Number(n) => n.as_u64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn loose_str(v: Option<&Json>) -> String {
    match v {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Decodes a service document (`DOCUMENT{ID, NAME, TEMPLATE{BODY{…}}}`).
pub fn parse_service(d: &Json) -> Option<Service> {
    let id = loose_u64(d.get("ID")?)?;
    let b = body(d);
    let state = b
        .and_then(|b| b.get("state"))
        .and_then(loose_u64)
        .unwrap_or(0);
    let roles = b
        .and_then(|b| b.get("roles"))
        .and_then(Json::as_array)
        .map(|rs| rs.iter().map(parse_role).collect())
        .unwrap_or_default();
    Some(Service {
        id,
        name: loose_str(d.get("NAME")),
        state: ServiceState(state as u32),
        roles,
    })
}

fn parse_role(r: &Json) -> ServiceRole {
    let vms = r
        .get("nodes")
        .and_then(Json::as_array)
        .map(|ns| ns.iter().filter_map(parse_node).collect())
        .unwrap_or_default();
    ServiceRole {
        name: loose_str(r.get("name")),
        template_id: r.get("template_id").and_then(loose_u64).unwrap_or(0),
        cardinality: r.get("cardinality").and_then(loose_u64).unwrap_or(0),
        max_vms: r.get("max_vms").and_then(loose_u64),
        state: RoleState(r.get("state").and_then(loose_u64).unwrap_or(0) as u32),
        vms,
    }
}

fn parse_node(n: &Json) -> Option<ServiceVm> {
    let vm = n.pointer("/vm_info/VM");
    let id = n
        .get("deploy_id")
        .and_then(loose_u64)
        .or_else(|| vm.and_then(|v| v.get("ID")).and_then(loose_u64))?;
    Some(ServiceVm {
        id,
        name: loose_str(vm.and_then(|v| v.get("NAME"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_document_with_string_numbers() {
        let doc = json!({"DOCUMENT": {"ID": "3", "NAME": "talos-prod", "TEMPLATE": {"BODY": {
        "state": 2,
        "roles": [
            {"name": "controlplane", "cardinality": 3, "state": "2", "nodes": [
                {"deploy_id": 10, "vm_info": {"VM": {"ID": "10", "UID": "0", "GID": "0",
                    "UNAME": "oneadmin", "GNAME": "oneadmin", "NAME": "cp-0"}}}]},
            {"name": "worker", "cardinality": "2", "state": 8, "nodes": [
                {"deploy_id": "11", "vm_info": {"VM": {"ID": "11"}}},
                {"deploy_id": 12}]}
        ]}}}});
        let s = parse_service(&doc["DOCUMENT"]).unwrap();
        assert_eq!(
            (s.id, s.name.as_str(), s.state.name()),
            (3, "talos-prod", "RUNNING".into())
        );
        let cp = s.role("controlplane").unwrap();
        assert_eq!(
            cp.vms[0],
            ServiceVm {
                id: 10,
                name: "cp-0".into()
            }
        );
        let w = s.role("worker").unwrap();
        assert_eq!((w.cardinality, w.state.name()), (2, "SCALING".into()));
        assert_eq!(w.vms.iter().map(|v| v.id).collect::<Vec<_>>(), [11, 12]);
        assert_eq!(w.vms[1].name, "");
        assert_eq!(RoleState(11).name(), "HOLD");
        assert_eq!(ServiceState(11).name(), "DEPLOYING_NETS");
    }

    #[test]
    fn pools_and_error_bodies() {
        let one = json!({"DOCUMENT_POOL": {"DOCUMENT": {"ID": 1}}});
        assert_eq!(pool_documents(&one).len(), 1);
        assert!(pool_documents(&json!({"DOCUMENT_POOL": {}})).is_empty());
        assert_eq!(
            error_message(r#"{"error":{"message":"Role 'x' not found"}}"#),
            "Role 'x' not found"
        );
        assert_eq!(error_message("  plain text \n"), "plain text");
        assert!(parse_service(&json!({"NAME": "no id"})).is_none());
    }
}
