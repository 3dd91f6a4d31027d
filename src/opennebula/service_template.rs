//! OneFlow service templates (`GET /service_template`) as a new cluster is made from them: each
//! role's name, VM template and cardinality; and instantiating one with per-role cardinality and
//! extra VM template (`merge_template.roles`, OpenNebula/one src/flow/lib/models/service.rb
//! `merge_template`), and deleting a service with its VMs (`DELETE /service/:id`).
use serde_json::{Value as Json, json};

use super::{FlowClient, Service, body, loose_str, loose_u64, parse_service, pool_documents};
use crate::opennebula::OneError;

/// One role of a service template.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TemplateRole {
    pub name: String,
    /// The VM template the role's VMs are instantiated from.
    pub template_id: u64,
    pub cardinality: u64,
    /// The fewest and the most VMs the role may have (`min_vms` / `max_vms`; OneFlow refuses
    /// a service outside them).
    pub min_vms: Option<u64>,
    pub max_vms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ServiceTemplate {
    pub id: u64,
    pub name: String,
    pub roles: Vec<TemplateRole>,
}

impl ServiceTemplate {
    pub fn role(&self, name: &str) -> Option<&TemplateRole> {
        self.roles.iter().find(|r| r.name == name)
    }
}

/// What one role gets at instantiation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleMerge {
    pub name: String,
    pub cardinality: u64,
    /// Extra VM template text (a whole CONTEXT with USER_DATA, say); never logged.
    pub vm_template_contents: Option<String>,
}

/// Decodes a service template document.
pub fn parse_service_template(d: &Json) -> Option<ServiceTemplate> {
    let id = loose_u64(d.get("ID")?)?;
    let roles = body(d)
        .and_then(|b| b.get("roles"))
        .and_then(Json::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| TemplateRole {
                    name: loose_str(r.get("name")),
                    template_id: r.get("template_id").and_then(loose_u64).unwrap_or(0),
                    cardinality: r.get("cardinality").and_then(loose_u64).unwrap_or(0),
                    min_vms: r.get("min_vms").and_then(loose_u64),
                    max_vms: r.get("max_vms").and_then(loose_u64),
                })
                .collect()
        })
        .unwrap_or_default();
    Some(ServiceTemplate {
        id,
        name: loose_str(d.get("NAME")),
        roles,
    })
}

impl FlowClient {
    /// `GET /service_template`.
    pub async fn service_templates(&self) -> Result<Vec<ServiceTemplate>, OneError> {
        let doc = self
            .request(reqwest::Method::GET, "/service_template", None)
            .await?;
        Ok(pool_documents(&doc)
            .iter()
            .filter_map(parse_service_template)
            .collect())
    }

    /// A service template by id or name.
    pub async fn service_template(
        &self,
        wanted: &crate::config::NameOrId,
    ) -> Result<ServiceTemplate, OneError> {
        let all = self.service_templates().await?;
        let known: Vec<String> = all.iter().map(|t| t.name.clone()).collect();
        all.into_iter()
            .find(|t| wanted.id() == Some(t.id) || t.name == wanted.to_string())
            .ok_or_else(|| OneError::NotFound {
                at: self.origin().clone(),
                what: "OneFlow service template",
                name: wanted.to_string(),
                hint: format!("service templates here: {}", known.join(", ")),
            })
    }

    /// `POST /service_template/:id/action` instantiate, naming the service and giving roles
    /// their cardinality and extra VM template.
    pub async fn instantiate_roles(
        &self,
        template_id: u64,
        name: &str,
        roles: &[RoleMerge],
    ) -> Result<Service, OneError> {
        let path = format!("/service_template/{template_id}/action");
        let roles: Vec<Json> = roles
            .iter()
            .map(|r| {
                let mut role = json!({"name": r.name, "cardinality": r.cardinality});
                if let (Some(extra), Some(map)) = (&r.vm_template_contents, role.as_object_mut()) {
                    map.insert("vm_template_contents".into(), json!(extra));
                }
                role
            })
            .collect();
        let body = json!({"action": {"perform": "instantiate",
            "params": {"merge_template": {"name": name, "roles": roles}}}});
        let doc = self
            .request(reqwest::Method::POST, &path, Some(body))
            .await?;
        let d = doc.get("DOCUMENT").unwrap_or(&doc);
        parse_service(d).ok_or_else(|| OneError::Decode {
            at: self.origin().clone(),
            call: path,
            message: "no service document in the answer".into(),
        })
    }

    /// `DELETE /service/:id`: the service and its VMs.
    pub async fn delete_service(&self, id: u64) -> Result<(), OneError> {
        self.request(reqwest::Method::DELETE, &format!("/service/{id}"), None)
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_template_with_its_roles() {
        let doc = json!({"ID": "4", "NAME": "talos", "TEMPLATE": {"BODY": {"roles": [
            {"name": "controlplane", "template_id": "7", "cardinality": 3},
            {"name": "worker", "template_id": 8, "cardinality": "2", "max_vms": 9},
            {"name": "gateway", "template_id": 9, "cardinality": 1}]}}});
        let t = parse_service_template(&doc).unwrap();
        assert_eq!((t.id, t.name.as_str()), (4, "talos"));
        assert_eq!(t.role("controlplane").unwrap().template_id, 7);
        assert_eq!(t.role("worker").unwrap().max_vms, Some(9));
        assert!(t.role("gateway").is_some() && t.role("etcd").is_none());
    }
}
