//! OneFlow in the sim: service templates and services (roles, nodes with `vm_info`, state
//! numbers as `service.rb` / `role.rb` define them) over JSON with HTTP basic auth, and scaling
//! a role's cardinality, whose new VMs boot through the OpenNebula sim like any other.
use std::sync::Arc;

use serde_json::{Value as Json, json};

use super::cloud::{Cloud, OneCloud, now_unix};
use super::vm::{Lcm, VmState};

/// A role of a service template.
#[derive(Clone, Debug)]
pub(crate) struct RoleSpec {
    pub name: String,
    pub template_id: i64,
    pub cardinality: usize,
    pub parents: Vec<String>,
    /// The fewest and the most VMs the role may have. OneFlow keeps them as the role's
    /// optional `min_vms` / `max_vms` (OpenNebula/one src/flow/lib/models/role.rb:
    /// `min_cardinality` / `max_cardinality`, nil when the key is absent); `None` leaves the
    /// key out of the documents, as a template that does not set it.
    pub min_vms: Option<usize>,
    pub max_vms: Option<usize>,
    /// Extra template (OpenNebula syntax) every VM of the role is instantiated with.
    pub extra_template: String,
}

#[derive(Clone, Debug)]
pub(crate) struct ServiceTemplate {
    pub id: i64,
    pub name: String,
    pub roles: Vec<RoleSpec>,
}

#[derive(Clone, Debug)]
pub(crate) struct Role {
    pub spec: RoleSpec,
    pub nodes: Vec<i64>,
    pub disposed: Vec<i64>,
    pub last_vmname: usize,
    pub scaled: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Service {
    pub id: i64,
    pub name: String,
    pub start_time: i64,
    pub roles: Vec<Role>,
    pub log: Vec<(i64, String)>,
}

/// OneFlow's documents.
#[derive(Default)]
pub(crate) struct FlowState {
    pub templates: Vec<ServiceTemplate>,
    pub services: Vec<Service>,
    pub next_service: i64,
}

/// An HTTP answer: status and JSON body (`None` for 204).
pub(crate) type Answer = (u16, Option<Json>);

fn error(status: u16, message: &str) -> Answer {
    (status, Some(json!({"error": {"message": message}})))
}

/// Routes one request; `credentials` is the decoded `user:password` of basic auth.
pub(crate) fn answer(
    cloud: &Arc<OneCloud>,
    method: &str,
    path: &str,
    credentials: Option<&str>,
    body: &[u8],
) -> Answer {
    let authenticated = {
        let c = cloud.lock();
        credentials == Some(format!("{}:{}", c.owner.uname, c.password).as_str())
    };
    if !authenticated {
        return error(401, "User not authorized");
    }
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let body: Json = if body.is_empty() {
        Json::Null
    } else {
        match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => return error(400, &format!("Error parsing JSON: {e}")),
        }
    };
    let id = |i: usize| parts.get(i).and_then(|s| s.parse::<i64>().ok());
    match (method, parts.as_slice()) {
        ("GET", ["service_template"]) => {
            let c = cloud.lock();
            let docs: Vec<Json> = c
                .flow
                .templates
                .iter()
                .map(|t| template_doc(&c, t))
                .collect();
            (200, Some(json!({"DOCUMENT_POOL": {"DOCUMENT": docs}})))
        }
        ("GET", ["service_template", _]) => {
            let c = cloud.lock();
            match c.flow.templates.iter().find(|t| Some(t.id) == id(1)) {
                Some(t) => (200, Some(json!({"DOCUMENT": template_doc(&c, t)}))),
                None => error(404, "Error getting service template: not found"),
            }
        }
        ("POST", ["service_template", _, "action"]) => {
            let Some(template_id) = id(1) else {
                return error(404, "Error getting service template: not found");
            };
            let perform = body.pointer("/action/perform").and_then(Json::as_str);
            if perform != Some("instantiate") {
                return error(
                    400,
                    &format!("{} action is not supported", perform.unwrap_or("")),
                );
            }
            let merge = body.pointer("/action/params/merge_template");
            instantiate(cloud, template_id, merge)
        }
        ("GET", ["service"]) => {
            let c = cloud.lock();
            let docs: Vec<Json> = c.flow.services.iter().map(|s| service_doc(&c, s)).collect();
            (200, Some(json!({"DOCUMENT_POOL": {"DOCUMENT": docs}})))
        }
        ("GET", ["service", _]) => {
            let c = cloud.lock();
            match c.flow.services.iter().find(|s| Some(s.id) == id(1)) {
                Some(s) => (200, Some(json!({"DOCUMENT": service_doc(&c, s)}))),
                None => error(404, "Error getting service: not found"),
            }
        }
        ("DELETE", ["service", _]) => delete(cloud, id(1)),
        ("POST", ["service", _, "scale"]) => {
            let role = body.get("role_name").and_then(Json::as_str).unwrap_or("");
            let cardinality = body.get("cardinality").and_then(Json::as_u64);
            scale(cloud, id(1), role, cardinality)
        }
        ("POST" | "PUT", ["service", _, "role", role, "cardinality"]) => {
            let cardinality = body.get("cardinality").and_then(Json::as_u64);
            scale(cloud, id(1), role, cardinality)
        }
        _ => error(404, &format!("no route for {method} {path}")),
    }
}

/// `merge_template` as ServiceTemplate#instantiate deep-merges it (OpenNebula/one
/// src/oca/ruby/opennebula/flow/service_template.rb: roles merged by name): `name`, and per
/// role `cardinality` and the VM template additions — `template_contents` (a hash, 7.x) or
/// `vm_template_contents` (OpenNebula syntax, 6.x).
fn merged_roles(mut roles: Vec<RoleSpec>, merge: Option<&Json>) -> Result<Vec<RoleSpec>, Answer> {
    let Some(extra_roles) = merge.and_then(|m| m.get("roles")).and_then(Json::as_array) else {
        return Ok(roles);
    };
    for extra in extra_roles {
        let name = extra.get("name").and_then(Json::as_str).unwrap_or_default();
        let Some(role) = roles.iter_mut().find(|r| r.name == name) else {
            continue;
        };
        if let Some(n) = extra.get("cardinality") {
            role.cardinality = n
                .as_u64()
                .or_else(|| n.as_str().and_then(|s| s.parse().ok()))
                .ok_or_else(|| error(400, &format!("Role {name}: cardinality is not a number")))?
                as usize;
        }
        if let Some(text) = extra.get("vm_template_contents").and_then(Json::as_str) {
            role.extra_template.push('\n');
            role.extra_template.push_str(text);
        }
        if let Some(hash) = extra.get("template_contents").and_then(Json::as_object) {
            role.extra_template.push('\n');
            role.extra_template.push_str(&template_text(hash));
        }
    }
    Ok(roles)
}

/// The merged roles' cardinalities within their `min_vms` / `max_vms`, as OneFlow validates the
/// template it instantiates (OpenNebula/one src/oca/ruby/opennebula/flow/service_template.rb
/// `validate_vmvalues`, raised as a ParseException that oneflow-server.rb answers with
/// GENERAL_EC, 500).
fn within_bounds(roles: Vec<RoleSpec>) -> Result<Vec<RoleSpec>, Answer> {
    for r in &roles {
        let name = &r.name;
        if r.min_vms.is_some_and(|min| min > r.cardinality) {
            return Err(error(
                500,
                &format!("Role '{name}' 'cardinality' must be greater than or equal to 'min_vms'"),
            ));
        }
        if r.max_vms.is_some_and(|max| max < r.cardinality) {
            return Err(error(
                500,
                &format!("Role '{name}' 'cardinality' must be lower than or equal to 'max_vms'"),
            ));
        }
    }
    Ok(roles)
}

/// A `template_contents` hash in OpenNebula template syntax (`K = "v"`, `K = [ a = "b" ]`).
fn template_text(hash: &serde_json::Map<String, Json>) -> String {
    let quote = |v: &Json| {
        let text = match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    };
    let mut out = String::new();
    for (key, value) in hash {
        match value {
            Json::Object(inner) => {
                let pairs: Vec<String> = inner
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", quote(v)))
                    .collect();
                out.push_str(&format!("{key} = [ {} ]\n", pairs.join(", ")));
            }
            other => out.push_str(&format!("{key} = {}\n", quote(other))),
        }
    }
    out
}

/// `DELETE /service/:id` (oneflow-server.rb: `lcm.undeploy_action`): every role's VMs are
/// terminated and the service goes away.
fn delete(cloud: &Arc<OneCloud>, service: Option<i64>) -> Answer {
    let vms: Vec<i64> = {
        let mut c = cloud.lock();
        let Some(index) = c.flow.services.iter().position(|s| Some(s.id) == service) else {
            return error(404, "Error getting service: not found");
        };
        let removed = c.flow.services.remove(index);
        removed.roles.iter().flat_map(|r| r.nodes.clone()).collect()
    };
    for vm in vms {
        let _ = cloud.action("terminate", vm);
    }
    (204, None)
}

fn instantiate(cloud: &Arc<OneCloud>, template_id: i64, merge: Option<&Json>) -> Answer {
    let name = merge.and_then(|m| m.get("name")).and_then(Json::as_str);
    let (service_id, template) = {
        let mut c = cloud.lock();
        let Some(t) = c
            .flow
            .templates
            .iter()
            .find(|t| t.id == template_id)
            .cloned()
        else {
            return error(404, "Error getting service template: not found");
        };
        let t = ServiceTemplate {
            roles: match merged_roles(t.roles, merge).and_then(within_bounds) {
                Ok(roles) => roles,
                Err(answer) => return answer,
            },
            ..t
        };
        let id = c.flow.next_service;
        c.flow.next_service += 1;
        let service = Service {
            id,
            name: name
                .map(str::to_string)
                .unwrap_or_else(|| format!("{}-{id}", t.name)),
            start_time: now_unix(),
            roles: t
                .roles
                .iter()
                .map(|spec| Role {
                    spec: spec.clone(),
                    nodes: Vec::new(),
                    disposed: Vec::new(),
                    last_vmname: 0,
                    scaled: false,
                })
                .collect(),
            log: vec![(now_unix(), "New state: DEPLOYING".into())],
        };
        c.flow.services.push(service);
        (id, t)
    };
    for role in &template.roles {
        if let Err(e) = grow(cloud, service_id, &role.name, role.cardinality) {
            return e;
        }
    }
    let c = cloud.lock();
    match c.flow.services.iter().find(|s| s.id == service_id) {
        Some(s) => (201, Some(json!({"DOCUMENT": service_doc(&c, s)}))),
        None => error(500, "service vanished"),
    }
}

fn scale(
    cloud: &Arc<OneCloud>,
    service: Option<i64>,
    role: &str,
    cardinality: Option<u64>,
) -> Answer {
    let Some(service) = service else {
        return error(404, "Error getting service: not found");
    };
    let Some(cardinality) = cardinality else {
        return error(400, "cardinality is missing or not a number");
    };
    let cardinality = cardinality as usize;
    let current = {
        let mut c = cloud.lock();
        let Some(s) = c.flow.services.iter_mut().find(|s| s.id == service) else {
            return error(404, "Error getting service: not found");
        };
        let Some(r) = s.roles.iter_mut().find(|r| r.spec.name == role) else {
            return error(400, &format!("Role '{role}' not found"));
        };
        r.scaled = true;
        let current = r.nodes.len();
        s.log.push((
            now_unix(),
            format!("Role {role} scaling from {current} to {cardinality} nodes"),
        ));
        current
    };
    if cardinality > current {
        if let Err(e) = grow(cloud, service, role, cardinality) {
            return e;
        }
    } else {
        let gone: Vec<i64> = {
            let mut c = cloud.lock();
            let Some(r) = c
                .flow
                .services
                .iter_mut()
                .find(|s| s.id == service)
                .and_then(|s| s.roles.iter_mut().find(|r| r.spec.name == role))
            else {
                return error(404, "Error getting service: not found");
            };
            let gone = r.nodes.split_off(cardinality);
            r.disposed.extend(&gone);
            gone
        };
        for vm in gone {
            let _ = cloud.action("terminate", vm);
        }
    }
    (204, None)
}

/// Instantiates VMs into `role` until it has `cardinality` nodes.
fn grow(cloud: &Arc<OneCloud>, service: i64, role: &str, cardinality: usize) -> Result<(), Answer> {
    loop {
        let (spec, number) = {
            let mut c = cloud.lock();
            let r = c
                .flow
                .services
                .iter_mut()
                .find(|s| s.id == service)
                .and_then(|s| s.roles.iter_mut().find(|r| r.spec.name == role))
                .ok_or_else(|| error(400, &format!("Role '{role}' not found")))?;
            if r.nodes.len() >= cardinality {
                return Ok(());
            }
            let number = r.last_vmname;
            r.last_vmname += 1;
            (r.spec.clone(), number)
        };
        let name = format!("{role}_{number}_(service_{service})");
        let vm = cloud
            .instantiate(spec.template_id, &name, false, &spec.extra_template)
            .map_err(|e| error(500, &format!("cannot instantiate role {role}: {e:?}")))?;
        let mut c = cloud.lock();
        if let Some(r) = c
            .flow
            .services
            .iter_mut()
            .find(|s| s.id == service)
            .and_then(|s| s.roles.iter_mut().find(|r| r.spec.name == role))
        {
            r.nodes.push(vm);
        }
    }
}

/// `role.rb` numbers: 1 DEPLOYING, 2 RUNNING, 7 FAILED_DEPLOYING, 8 SCALING, 9 FAILED_SCALING.
fn role_state(c: &Cloud, r: &Role) -> i64 {
    let vms: Vec<_> = r.nodes.iter().filter_map(|id| c.vms.get(id)).collect();
    if vms.iter().any(|v| v.lcm.is_failure()) {
        return if r.scaled { 9 } else { 7 };
    }
    if vms
        .iter()
        .any(|v| v.state != VmState::Active || v.lcm != Lcm::Running)
    {
        return if r.scaled { 8 } else { 1 };
    }
    2
}

fn service_state(c: &Cloud, s: &Service) -> i64 {
    let states: Vec<i64> = s.roles.iter().map(|r| role_state(c, r)).collect();
    [9, 7, 8, 1]
        .into_iter()
        .find(|bad| states.contains(bad))
        .unwrap_or(2)
}

fn permissions() -> Json {
    json!({"OWNER_U": "1", "OWNER_M": "1", "OWNER_A": "0", "GROUP_U": "0", "GROUP_M": "0",
           "GROUP_A": "0", "OTHER_U": "0", "OTHER_M": "0", "OTHER_A": "0"})
}

fn template_doc(c: &Cloud, t: &ServiceTemplate) -> Json {
    let roles: Vec<Json> = t
        .roles
        .iter()
        .map(|r| {
            let mut doc = json!({"name": r.name, "type": "vm", "template_id": r.template_id,
                   "cardinality": r.cardinality, "parents": r.parents,
                   "elasticity_policies": [], "scheduled_policies": []});
            vm_limits(&mut doc, r);
            doc
        })
        .collect();
    let o = &c.owner;
    json!({"ID": t.id.to_string(), "UID": o.uid.to_string(), "GID": o.gid.to_string(),
           "UNAME": o.uname, "GNAME": o.gname,
           "NAME": t.name, "TYPE": "101", "PERMISSIONS": permissions(),
           "TEMPLATE": {"BODY": {"name": t.name, "deployment": "straight", "description": "",
               "shutdown_action": "terminate", "ready_status_gate": false,
               "automatic_deletion": false, "roles": roles, "registration_time": 0}}})
}

/// The role's `min_vms` / `max_vms`, only when set (role.rb reads an absent key as nil).
fn vm_limits(doc: &mut Json, spec: &RoleSpec) {
    for (key, value) in [("min_vms", spec.min_vms), ("max_vms", spec.max_vms)] {
        if let (Some(v), Some(map)) = (value, doc.as_object_mut()) {
            map.insert(key.into(), json!(v));
        }
    }
}

fn service_doc(c: &Cloud, s: &Service) -> Json {
    let roles: Vec<Json> = s
        .roles
        .iter()
        .map(|r| {
            let nodes: Vec<Json> = r
                .nodes
                .iter()
                .filter_map(|id| c.vms.get(id))
                .map(|vm| {
                    // A role's node carries only the VM's identity; state and NICs are read
                    // over XML-RPC (OpenNebula/one src/flow/lib/models/role.rb: `VM_INFO =
                    // ['ID', 'UID', 'GID', 'UNAME', 'GNAME', 'NAME']`, the keys kept in a
                    // node's `vm_info` when the VM is added to the role).
                    json!({"deploy_id": vm.id, "vm_info": {"VM": {
                        "ID": vm.id.to_string(), "NAME": vm.name,
                        "UID": vm.owner.uid.to_string(), "GID": vm.owner.gid.to_string(),
                        "UNAME": vm.owner.uname, "GNAME": vm.owner.gname}}})
                })
                .collect();
            let disposed: Vec<Json> = r.disposed.iter().map(|id| json!(id)).collect();
            let mut doc = json!({"name": r.spec.name, "type": "vm",
                   "template_id": r.spec.template_id,
                   "cardinality": r.nodes.len(), "state": role_state(c, r).to_string(),
                   "parents": r.spec.parents, "cooldown": 0,
                   "last_vmname": r.last_vmname, "nodes": nodes, "disposed_nodes": disposed,
                   "elasticity_policies": [], "scheduled_policies": []});
            vm_limits(&mut doc, &r.spec);
            doc
        })
        .collect();
    let log: Vec<Json> = s
        .log
        .iter()
        .map(|(t, m)| json!({"message": m, "severity": "I", "timestamp": t}))
        .collect();
    let o = &c.owner;
    json!({"ID": s.id.to_string(), "UID": o.uid.to_string(), "GID": o.gid.to_string(),
           "UNAME": o.uname, "GNAME": o.gname,
           "NAME": s.name, "TYPE": "100", "PERMISSIONS": permissions(),
           "TEMPLATE": {"BODY": {"name": s.name, "deployment": "straight",
               "state": service_state(c, s), "shutdown_action": "terminate",
               "ready_status_gate": false, "automatic_deletion": false,
               "start_time": s.start_time, "log": log, "roles": roles}}})
}
