//! What the OpenNebula sim starts with, per sim cluster: Talos controlplane / worker templates
//! (and one that ends in BOOT_FAILURE), a VM for every existing node, a OneFlow service with
//! `controlplane` and `worker` roles; and the files it writes for clients into the state dir.
//!
//! # `taloscope.yaml` as the sim writes it
//!
//! ```yaml
//! providers:
//!   sim-opennebula:                 # a provider name clusters refer to
//!     kind: opennebula              # opennebula (XML-RPC) | oneflow (REST)
//!     endpoint: http://127.0.0.1:PORT/RPC2
//!     auth_file: DIR/one_auth       # `user:password`, like ONE_AUTH; or username + password
//!   sim-oneflow:
//!     kind: oneflow
//!     endpoint: http://127.0.0.1:PORT
//!     xmlrpc_endpoint: http://127.0.0.1:PORT/RPC2   # OneFlow VMs are followed and terminated here
//!     auth_file: DIR/one_auth
//!     service_template: talos-cluster               # new clusters' service template
//!   sim-oneflow-gateway:            # the same OneFlow, new clusters with a gateway role
//!     kind: oneflow
//!     ...
//!     service_template: talos-cluster-gateway
//! clusters:
//!   healthy:                        # the talosconfig context / cluster name
//!     provider: sim-opennebula      # where new VMs come from
//!     templates:                    # VM template per role, by name or numeric id
//!       controlplane: talos-healthy-controlplane
//!       worker: talos-healthy-worker
//!     service: 0                    # the cluster's OneFlow service id (use with the oneflow
//!                                   # provider; its roles are `controlplane` and `worker`)
//!     machine_configs:              # as `talosctl gen config` writes them
//!       controlplane: DIR/clusters/healthy/controlplane.yaml
//!       worker: DIR/clusters/healthy/worker.yaml
//! ```
//!
//! For new clusters there are `talos-controlplane` / `talos-worker` and the OneFlow service
//! templates `talos-cluster` and `talos-cluster-gateway` (see `add_new_cluster_templates`; their
//! VMs boot Talos from the image: opennebula/talos_boot.rs; the gateway's does not).
//!
//! Each cluster also has a template `talos-<cluster>-bootfail` whose VMs end in BOOT_FAILURE;
//! any template fails the same way with `TALOSCOPE_SIM_FAILURE="BOOT_FAILURE"` (or
//! `"PROLOG_FAILURE"`) in the `extra_template`.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::ONE_USER;
use super::cloud::{Cloud, OneCloud, now_unix};
use super::machine_config::{self, ConfigFor};
use super::oneflow::{FlowState, Role, RoleSpec, Service, ServiceTemplate};
use super::quota::Owner;
use super::template::{Template, Value};
use super::vm::VmTemplate;
use crate::model::error::SimError;
use crate::model::scenario::NodeRole;
use crate::model::scenario::{DEFAULT_TALOS, OneSpec};
use crate::model::state::FleetState;

/// The cloud to start with, and each cluster's generated machine configs.
pub(crate) struct Catalog {
    pub cloud: Cloud,
    /// cluster → (controlplane.yaml, worker.yaml).
    pub configs: BTreeMap<String, (String, String)>,
}

fn single(name: &str, value: &str) -> (String, Value) {
    (name.to_string(), Value::Single(value.to_string()))
}

fn vector(name: &str, pairs: &[(&str, &str)]) -> (String, Value) {
    let pairs = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (name.to_string(), Value::Vector(pairs))
}

pub(crate) fn talos_template(
    cluster: &str,
    role: &str,
    talos_version: &str,
    fail: bool,
) -> Template {
    let mut attrs = vec![
        single("CPU", if role == "controlplane" { "2" } else { "1" }),
        single("VCPU", "2"),
        single(
            "MEMORY",
            if role == "controlplane" {
                "4096"
            } else {
                "2048"
            },
        ),
        single(
            "DESCRIPTION",
            &format!("Talos {talos_version} {role} for cluster {cluster}"),
        ),
        vector(
            "DISK",
            &[
                ("IMAGE", &format!("talos-{talos_version}-nocloud")),
                ("IMAGE_UNAME", ONE_USER),
                ("SIZE", "20480"),
            ],
        ),
        vector(
            "NIC",
            &[
                ("NETWORK", &format!("talos-{cluster}")),
                ("NETWORK_UNAME", ONE_USER),
            ],
        ),
        vector("CONTEXT", &[("NETWORK", "YES"), ("TOKEN", "YES")]),
        vector("GRAPHICS", &[("LISTEN", "127.0.0.1"), ("TYPE", "VNC")]),
        vector("OS", &[("ARCH", "x86_64"), ("FIRMWARE", "UEFI")]),
        single("TALOS_CLUSTER", cluster),
        single("TALOS_ROLE", role),
    ];
    if fail {
        attrs.push(single("TALOSCOPE_SIM_FAILURE", "BOOT_FAILURE"));
    }
    Template { attrs }
}

/// The role's extra template: the template's own CONTEXT plus the machine config.
pub(crate) fn role_extra(config: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(config);
    format!(
        "CONTEXT = [ NETWORK = \"YES\", TOKEN = \"YES\", USER_DATA = \"{b64}\", USER_DATA_ENCODING = \"base64\" ]"
    )
}

pub(crate) fn catalog(
    fleet: &FleetState,
    ca_pem: &str,
    password: String,
    spec: &OneSpec,
) -> Catalog {
    let mut cloud = Cloud {
        owner: match spec.user_quota {
            Some(_) => Owner::tenant(),
            None => Owner::oneadmin(),
        },
        user_quota: spec.user_quota.clone(),
        password,
        templates: Vec::new(),
        vms: BTreeMap::new(),
        next_vm: 0,
        clusters: fleet
            .clusters()
            .iter()
            .map(|c| c.name().to_string())
            .collect(),
        flow: FlowState::default(),
        new_network: (fleet.clusters().len(), new_network_octets()),
    };
    let mut configs = BTreeMap::new();
    let regtime = now_unix() - 86_400;
    for (ci, cluster) in fleet.clusters().iter().enumerate() {
        let name = cluster.name();
        let nodes = cluster.nodes();
        let first = nodes.first().map(|n| n.status());
        let talos = first
            .as_ref()
            .map_or("v1.11.3", |s| s.talos_version.as_str());
        let k8s = first
            .as_ref()
            .map_or("v1.34.1", |s| s.kubernetes.kubelet.version.as_str());
        let cp_address = nodes
            .iter()
            .find(|n| n.role() == NodeRole::ControlPlane)
            .or(nodes.first())
            .map(|n| n.address().to_string())
            .unwrap_or_else(|| "127.0.0.1".into());
        let endpoint = format!("https://{cp_address}:6443");
        let seed = ci as u64 * 0x9e37_79b9 + name.len() as u64;
        let config = |role| {
            machine_config::generate(&ConfigFor {
                cluster: name,
                endpoint: &endpoint,
                role,
                talos_version: talos,
                kubernetes_version: k8s,
                ca_pem,
                seed,
            })
        };
        let (cp_yaml, worker_yaml) = (config(NodeRole::ControlPlane), config(NodeRole::Worker));
        let base = cloud.templates.len() as i64;
        for (offset, (role, fail, suffix)) in [
            ("controlplane", false, "controlplane"),
            ("worker", false, "worker"),
            ("worker", true, "bootfail"),
        ]
        .into_iter()
        .enumerate()
        {
            cloud.templates.push(VmTemplate {
                id: base + offset as i64,
                name: format!("talos-{name}-{suffix}"),
                regtime,
                cluster: ci,
                template: talos_template(name, role, talos, fail),
            });
        }
        let max_vms = |role: &str| {
            let mut limits = cluster.oneflow_max_vms.iter();
            limits.find(|(r, _)| r == role).map(|(_, max)| *max)
        };
        let mut roles = Vec::new();
        for (role, template_id, yaml, parents) in [
            (NodeRole::ControlPlane, base, &cp_yaml, vec![]),
            (
                NodeRole::Worker,
                base + 1,
                &worker_yaml,
                vec!["controlplane".to_string()],
            ),
        ] {
            let spec = RoleSpec {
                name: role.as_str().to_string(),
                template_id,
                cardinality: nodes.iter().filter(|n| n.role() == role).count(),
                parents,
                min_vms: Some(0),
                max_vms: max_vms(role.as_str()),
                extra_template: role_extra(yaml),
            };
            let vms = nodes
                .iter()
                .filter(|n| n.role() == role)
                .map(|n| OneCloud::adopt(&mut cloud, template_id, n.name(), n.address()))
                .collect::<Vec<_>>();
            roles.push(Role {
                last_vmname: vms.len(),
                spec,
                nodes: vms,
                disposed: Vec::new(),
                scaled: false,
            });
        }
        let id = ci as i64;
        cloud.flow.templates.push(ServiceTemplate {
            id,
            name: format!("talos-{name}"),
            roles: roles.iter().map(|r| r.spec.clone()).collect(),
        });
        cloud.flow.services.push(Service {
            id,
            name: format!("talos-{name}"),
            start_time: regtime,
            roles,
            log: vec![(regtime, "New state: RUNNING".into())],
        });
        cloud.flow.next_service = id + 1;
        configs.insert(name.to_string(), (cp_yaml, worker_yaml));
    }
    add_new_cluster_templates(&mut cloud, regtime);
    limit_new_cluster_roles(&mut cloud, &spec.new_cluster_max_vms);
    Catalog { cloud, configs }
}

/// The scenario's `max_vms` on the roles of the new-cluster service templates.
fn limit_new_cluster_roles(cloud: &mut Cloud, max_vms: &[(String, usize)]) {
    let new_cluster = [NEW_CLUSTER_SERVICE, NEW_CLUSTER_GATEWAY_SERVICE];
    for t in cloud.flow.templates.iter_mut() {
        if !new_cluster.contains(&t.name.as_str()) {
            continue;
        }
        for role in t.roles.iter_mut() {
            if let Some((_, max)) = max_vms.iter().find(|(name, _)| *name == role.name) {
                role.max_vms = Some(*max);
            }
        }
    }
}

/// `127.A.B.0/24` with A in 64..=126 and any B: away from the scenario's 127.10.x.y.
fn new_network_octets() -> [u8; 2] {
    let r = crate::model::clock::random_u64();
    [64 + (r % 63) as u8, (r >> 8) as u8]
}

/// Templates that boot Talos with no cluster of the sim's in mind, for new clusters:
/// `talos-controlplane` and `talos-worker` on the `talos-new` network, and a OneFlow service
/// template `talos-cluster` with roles `controlplane` (3) and `worker` (2, after the control
/// planes) and no USER_DATA of its own: the machine configs come in the instantiate call's
/// `merge_template` (or the VMs boot into maintenance mode).
fn add_new_cluster_templates(cloud: &mut Cloud, regtime: i64) {
    let network = cloud.new_network.0;
    let base = cloud.templates.len() as i64;
    for (offset, role) in ["controlplane", "worker"].into_iter().enumerate() {
        let mut template = talos_template("new", role, DEFAULT_TALOS, false);
        template.attrs.retain(|(name, _)| name != "TALOS_CLUSTER");
        cloud.templates.push(VmTemplate {
            id: base + offset as i64,
            name: format!("talos-{role}"),
            regtime,
            cluster: network,
            template,
        });
    }
    let role = |name: &str, template_id, cardinality, parents: Vec<String>| RoleSpec {
        name: name.to_string(),
        template_id,
        cardinality,
        parents,
        min_vms: Some(0),
        max_vms: None,
        extra_template: String::new(),
    };
    let id = cloud
        .flow
        .next_service
        .max(cloud.flow.templates.len() as i64);
    cloud.flow.templates.push(ServiceTemplate {
        id,
        name: NEW_CLUSTER_SERVICE.to_string(),
        roles: vec![
            role("controlplane", base, 3, vec![]),
            role("worker", base + 1, 2, vec!["controlplane".to_string()]),
        ],
    });
    add_gateway_service_template(cloud, regtime, id + 1, role);
}

/// A service template as platform teams build it for Talos on OpenNebula: the cluster's roles
/// plus a `gateway` role whose VM (no Talos: a load balancer image) forwards the Kubernetes
/// API, so the endpoint is the gateway's address. Roles without parents deploy at once, a role
/// with parents once they are running (OpenNebula/one src/flow/lib/strategy/straight.rb).
/// The gateway VM only boots and leases an address (cloud.rs `boot_plan`: not a Talos
/// image); the sim's Kubernetes API of the cluster answers on `controlPlane.endpoint`
/// (node_life/formation.rs), which stands in for the gateway forwarding to the control planes.
fn add_gateway_service_template(
    cloud: &mut Cloud,
    regtime: i64,
    id: i64,
    role: impl Fn(&str, i64, usize, Vec<String>) -> RoleSpec,
) {
    let network = cloud.new_network.0;
    let gateway_id = cloud.templates.len() as i64;
    let mut gateway = talos_template("new", "gateway", DEFAULT_TALOS, false);
    gateway
        .attrs
        .retain(|(name, _)| !name.starts_with("TALOS_") && name != "DISK" && name != "DESCRIPTION");
    gateway.attrs.push(single(
        "DESCRIPTION",
        "HAProxy forwarding TCP 6443 to the control planes",
    ));
    gateway.attrs.push(vector(
        "DISK",
        &[
            ("IMAGE", GATEWAY_IMAGE),
            ("IMAGE_UNAME", ONE_USER),
            ("SIZE", "2048"),
        ],
    ));
    cloud.templates.push(VmTemplate {
        id: gateway_id,
        name: GATEWAY_VM_TEMPLATE.to_string(),
        regtime,
        cluster: network,
        template: gateway,
    });
    let (controlplane, worker) = (gateway_id - 2, gateway_id - 1);
    cloud.flow.templates.push(ServiceTemplate {
        id,
        name: NEW_CLUSTER_GATEWAY_SERVICE.to_string(),
        roles: vec![
            role("controlplane", controlplane, 3, vec![]),
            role("worker", worker, 2, vec!["controlplane".to_string()]),
            role("gateway", gateway_id, 1, vec![]),
        ],
    });
}

/// The gateway VM's image: not Talos, so the VM boots and runs without a Talos API.
const GATEWAY_IMAGE: &str = "haproxy-gateway";
/// The gateway role's VM template.
const GATEWAY_VM_TEMPLATE: &str = "cluster-gateway";
/// The OneFlow service template for new clusters with a `gateway` role.
pub(crate) const NEW_CLUSTER_GATEWAY_SERVICE: &str = "talos-cluster-gateway";

/// The OneFlow service template for new clusters.
pub(crate) const NEW_CLUSTER_SERVICE: &str = "talos-cluster";

/// Where the sim's client files go.
pub(crate) struct Written {
    pub one_auth: PathBuf,
    pub config: PathBuf,
    dir: PathBuf,
}

impl Written {
    pub fn in_dir(dir: &Path) -> Written {
        Written {
            one_auth: dir.join("one_auth"),
            config: dir.join("taloscope.yaml"),
            dir: dir.to_path_buf(),
        }
    }

    pub fn machine_config(&self, cluster: &str, role: NodeRole) -> PathBuf {
        self.dir
            .join("clusters")
            .join(cluster)
            .join(format!("{}.yaml", role.as_str()))
    }
}

/// A YAML double-quoted scalar.
fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

pub(crate) fn write_files(
    files: &Written,
    cloud: &Cloud,
    configs: &BTreeMap<String, (String, String)>,
    xmlrpc_url: &str,
    oneflow_url: &str,
) -> Result<(), SimError> {
    use crate::model::pki::write_private;
    write_private(
        &files.one_auth,
        &format!("{}:{}\n", cloud.owner.uname, cloud.password),
    )?;
    let auth = quoted(&files.one_auth.display().to_string());
    let [a, b] = cloud.new_network.1;
    let service_id = cloud
        .flow
        .templates
        .iter()
        .find(|t| t.name == NEW_CLUSTER_SERVICE)
        .map_or(-1, |t| t.id);
    let mut yaml = format!(
        "# Written by the taloscope sim: OpenNebula providers for its clusters.\n\
         # New clusters: VM templates talos-controlplane / talos-worker, OneFlow service template\n\
         # {NEW_CLUSTER_SERVICE} (id {service_id}); their VMs lease 127.{a}.{b}.1, .2, ... in order.\n\
         providers:\n  sim-opennebula:\n    kind: opennebula\n    endpoint: {}\n    auth_file: {auth}\n\
         \x20 sim-oneflow:\n    kind: oneflow\n    endpoint: {}\n    xmlrpc_endpoint: {}\n    auth_file: {auth}\n    service_template: {NEW_CLUSTER_SERVICE}\n\
         \x20 sim-oneflow-gateway:\n    kind: oneflow\n    endpoint: {}\n    xmlrpc_endpoint: {}\n    auth_file: {auth}\n    service_template: {NEW_CLUSTER_GATEWAY_SERVICE}\n\
         clusters:\n",
        quoted(xmlrpc_url),
        quoted(oneflow_url),
        quoted(xmlrpc_url),
        quoted(oneflow_url),
        quoted(xmlrpc_url)
    );
    for (ci, name) in cloud.clusters.iter().enumerate() {
        let Some((cp, worker)) = configs.get(name) else {
            continue;
        };
        let cp_path = files.machine_config(name, NodeRole::ControlPlane);
        let worker_path = files.machine_config(name, NodeRole::Worker);
        if let Some(dir) = cp_path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| SimError::WriteState {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        write_private(&cp_path, cp)?;
        write_private(&worker_path, worker)?;
        yaml.push_str(&format!(
            "  {}:\n    provider: sim-opennebula\n    templates:\n      controlplane: {}\n      worker: {}\n    service: {ci}\n    machine_configs:\n      controlplane: {}\n      worker: {}\n",
            quoted(name),
            quoted(&format!("talos-{name}-controlplane")),
            quoted(&format!("talos-{name}-worker")),
            quoted(&cp_path.display().to_string()),
            quoted(&worker_path.display().to_string()),
        ));
    }
    write_private(&files.config, &yaml)
}
