//! `cosi.resource.State` (Get/List/Watch) for the resources the console reads:
//! MachineStatuses.runtime.talos.dev, Versions.runtime.talos.dev, Members.cluster.talos.dev and
//! the (sensitive, os:admin only) MachineConfigs.config.talos.dev, the control-plane component
//! configs, static pods and kubelet spec, and the disks, volumes and network of
//! cosi_storage_network, with `yaml_spec` in Talos's keys. One node per call; other types are
//! refused.
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::apid::{Role, Route, Target, require, route, slow_down};
use super::cosi_storage_network;
use crate::model::core::Core;
use crate::model::events::unmet_conditions;
use crate::model::scenario::{NodeRole, parse_version};
use taloscope_proto::cosi::resource::state_server::State;
use taloscope_proto::cosi::resource::*;

const MACHINE_STATUS: &str = "MachineStatuses.runtime.talos.dev";
const VERSION: &str = "Versions.runtime.talos.dev";
const MEMBER: &str = "Members.cluster.talos.dev";
const MACHINE_CONFIG: &str = "MachineConfigs.config.talos.dev";
/// The static pods Talos renders and the kubelet's spec, namespace `k8s`
/// (pkg/machinery/resources/k8s/static_pod.go, kubelet_spec.go; neither is sensitive).
const STATIC_POD: &str = "StaticPods.kubernetes.talos.dev";
const KUBELET_SPEC: &str = "KubeletSpecs.kubernetes.talos.dev";
/// The control-plane component configs, one per static pod, id the component's name
/// (siderolabs/talos pkg/machinery/resources/k8s/apiserver_config.go,
/// controllermanager_config.go, scheduler_config.go; namespace `controlplane`, k8s.go).
const COMPONENT_CONFIGS: [(&str, &str); 3] = [
    ("APIServerConfigs.kubernetes.talos.dev", "kube-apiserver"),
    (
        "ControllerManagerConfigs.kubernetes.talos.dev",
        "kube-controller-manager",
    ),
    ("SchedulerConfigs.kubernetes.talos.dev", "kube-scheduler"),
];

/// Sensitive types: reading them needs os:admin (siderolabs/talos internal/app/resources/access.go
/// refuses a `meta.Sensitive` type to a caller without `role.Admin`;
/// pkg/machinery/resources/config/machine_config.go declares MachineConfigs `Sensitive`).
fn require_for_type<T>(req: &Request<T>, kind: &str) -> Result<(), Status> {
    if kind == MACHINE_CONFIG {
        require(req, Role::Admin)?;
    }
    Ok(())
}

/// The COSI state API of every simulated node.
pub struct StateApi {
    core: Arc<Core>,
}

impl StateApi {
    pub(crate) fn new(core: Arc<Core>) -> StateApi {
        StateApi { core }
    }

    fn target<T>(&self, req: &Request<T>, method: &str) -> Result<Target, Status> {
        require(req, Role::Reader)?;
        match route(
            &self.core,
            req,
            &format!("/cosi.resource.State/{method}"),
            false,
        )? {
            Route::One(t) => Ok(t),
            Route::Many(_) => Err(Status::invalid_argument(
                "one-2-many proxying is not supported",
            )),
        }
    }
}

/// The namespace a supported type lives in, or Talos's refusal.
fn namespace_of(t: &Target, kind: &str) -> Result<&'static str, Status> {
    let version_ok = parse_version(&t.node.status.borrow().talos_version)
        .is_some_and(|(major, minor, _)| (major, minor) >= (1, 10));
    match kind {
        MACHINE_STATUS => Ok("runtime"),
        VERSION if version_ok => Ok("runtime"),
        MEMBER => Ok("cluster"),
        MACHINE_CONFIG => Ok("config"),
        _ if component_of(kind).is_some() => Ok("controlplane"),
        STATIC_POD | KUBELET_SPEC => Ok("k8s"),
        _ if let Some(home) = cosi_storage_network::home(kind) => Ok(home),
        _ => Err(Status::permission_denied(format!(
            "resource type {kind:?} is not supported"
        ))),
    }
}

fn not_found(kind: &str, namespace: &str, id: &str) -> Status {
    Status::not_found(format!(
        "resource {kind}({namespace}/{id}@undefined) doesn't exist"
    ))
}

pub(super) fn resource(
    namespace: &str,
    kind: &str,
    id: &str,
    version: u64,
    owner: &str,
    yaml: String,
) -> Resource {
    let now = prost_types::Timestamp::from(SystemTime::now());
    Resource {
        metadata: Some(Metadata {
            namespace: namespace.into(),
            r#type: kind.into(),
            id: id.into(),
            version: version.to_string(),
            owner: owner.into(),
            phase: "running".into(),
            created: Some(now),
            updated: Some(now),
            finalizers: vec![],
            labels: Default::default(),
            annotations: Default::default(),
        }),
        spec: Some(Spec {
            proto_spec: vec![],
            yaml_spec: yaml,
        }),
    }
}

fn machine_status(t: &Target) -> Resource {
    let s = t.node.status();
    // A stopped etcd is a required service not running on a control plane: the services check
    // fails with "etcd not running" (siderolabs/talos
    // internal/app/machined/pkg/controllers/runtime/machine_status.go `servicesCheck`).
    let ready = s.ready && !s.etcd_stopped;
    let mut yaml = format!("stage: {}\nstatus:\n  ready: {}\n", s.stage.as_str(), ready);
    let mut unmet = unmet_conditions(s.stage, ready);
    if s.etcd_stopped {
        unmet.push(("services", "etcd not running"));
    }
    if unmet.is_empty() {
        yaml.push_str("  unmetConditions: []\n");
    } else {
        yaml.push_str("  unmetConditions:\n");
        for (name, reason) in unmet {
            let _ = write!(yaml, "    - name: {name}\n      reason: {reason:?}\n");
        }
    }
    let version = s.boot * 8 + s.stage as u64;
    resource(
        "runtime",
        MACHINE_STATUS,
        "machine",
        version,
        "runtime.MachineStatusController",
        yaml,
    )
}

fn version(t: &Target) -> Resource {
    let v = t.node.status.borrow().talos_version.clone();
    let yaml = format!("version: {v}\nname: Talos\n");
    resource(
        "runtime",
        VERSION,
        "version",
        1,
        "runtime.VersionController",
        yaml,
    )
}

/// The active machine config (`v1alpha1`) as Talos marshals it
/// (siderolabs/talos pkg/machinery/resources/config/machine_config.go): up to v1.11 the YAML
/// spec is the config document itself (a mapping); from v1.12 it is the document as a YAML
/// string, flagged by the `talos.dev/yaml-spec` annotation. `proto_spec` is, in both, the
/// protobuf `MachineConfigSpec { bytes yaml_marshalled = 1; }` holding the document (its
/// `MarshalProto`, api/resource/config/config.proto).
fn machine_config(t: &Target) -> Resource {
    let text = crate::model::kube_components::current_config(&t.node);
    let generation = t.node.status.borrow().kubernetes.config_generation;
    let as_string = parse_version(&t.node.status.borrow().talos_version)
        .is_some_and(|(major, minor, _)| (major, minor) >= (1, 12));
    let yaml = if as_string {
        serde_saphyr::to_string(&text).unwrap_or_default()
    } else {
        text.clone()
    };
    let mut r = resource(
        "config",
        MACHINE_CONFIG,
        "v1alpha1",
        generation,
        "config.MachineConfigController",
        yaml,
    );
    if let Some(spec) = r.spec.as_mut() {
        spec.proto_spec = machine_config_spec(text.into_bytes());
    }
    if let (true, Some(md)) = (as_string, r.metadata.as_mut()) {
        md.annotations
            .insert("talos.dev/yaml-spec".to_string(), "1".to_string());
    }
    r
}

/// `MachineConfigSpec { yaml_marshalled: yaml }` as protobuf bytes: field 1, length-delimited.
fn machine_config_spec(yaml: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(yaml.len() + 11);
    prost::encoding::bytes::encode(1, &yaml, &mut out);
    out
}

/// The namespaces a Talos node registers (siderolabs/talos pkg/machinery/resources/*/: the
/// `NamespaceName` constants); a read in any other one is refused by the API's access policy
/// (internal/app/resources/access.go, `AccessPolicy`), a read in a known one that holds no
/// such resource finds nothing.
const NAMESPACES: &[&str] = &[
    "block",
    "cluster",
    "config",
    "controlplane",
    "cri",
    "etcd",
    "files",
    "hardware",
    "k8s",
    "kubespan",
    "meta",
    "network",
    "network-config",
    "perf",
    "runtime",
    "secrets",
    "siderolink",
    "v1alpha1",
];

fn check_namespace(namespace: &str) -> Result<(), Status> {
    if NAMESPACES.contains(&namespace) {
        Ok(())
    } else {
        Err(Status::permission_denied(format!(
            "namespace {namespace:?} is not supported"
        )))
    }
}

/// The static pod a component-config type configures.
fn component_of(kind: &str) -> Option<&'static str> {
    COMPONENT_CONFIGS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, component)| *component)
}

/// A control plane's config for one component, its version bumped by every config change
/// that reaches the component; workers have none.
fn component_config(t: &Target, kind: &str) -> Option<Resource> {
    let component = component_of(kind)?;
    let status = t.node.status();
    let c = status
        .kubernetes
        .static_pods
        .iter()
        .find(|c| c.name == component)?;
    let config = crate::model::kube_components::current_config(&t.node);
    let image = crate::model::kube_components::config_image(&config, component)
        .unwrap_or_else(|| format!("registry.k8s.io/{component}:{}", c.version));
    Some(resource(
        "controlplane",
        kind,
        component,
        c.config_resource_version,
        "k8s.ControlPlaneController",
        format!(
            "image: {image}
"
        ),
    ))
}

/// A control plane's rendered static pods (workers have none), each at the version of the
/// config it was rendered from.
fn static_pods(t: &Target) -> Vec<Resource> {
    t.node
        .status()
        .kubernetes
        .static_pods
        .iter()
        .map(|c| {
            let spec = crate::model::component_specs::static_pod_spec(
                &t.node,
                &c.name,
                c.config_resource_version,
            );
            resource(
                "k8s",
                STATIC_POD,
                &c.name,
                c.config_resource_version,
                "k8s.ControlPlaneStaticPodController",
                spec,
            )
        })
        .collect()
}

fn kubelet_spec(t: &Target) -> Resource {
    let version = t.node.status().kubernetes.kubelet.config_resource_version;
    resource(
        "k8s",
        KUBELET_SPEC,
        "kubelet",
        version,
        "k8s.KubeletSpecController",
        crate::model::component_specs::kubelet_spec(&t.node),
    )
}

/// The cluster's Members as every node lists them; none with discovery off: Talos writes the
/// local Affiliate only when `DiscoveryEnabled` (siderolabs/talos
/// internal/app/machined/pkg/controllers/cluster/local_affiliate.go, the flag from config.go)
/// and MemberController makes Members from Affiliates alone (member.go).
fn members(t: &Target) -> Vec<Resource> {
    if t.cluster.discovery_disabled {
        return Vec::new();
    }
    t.cluster
        .nodes
        .iter()
        .map(|n| {
            let s = n.status();
            let mut yaml = format!(
                "nodeId: {:016x}\naddresses:\n  - {}\nhostname: {}\nmachineType: {}\noperatingSystem: Talos ({})\n",
                n.etcd_member_id(),
                s.address,
                s.name,
                s.role.as_str(),
                s.talos_version
            );
            if s.role == NodeRole::ControlPlane {
                yaml.push_str("controlPlane:\n  apiServerPort: 6443\n");
            }
            resource("cluster", MEMBER, &s.name, s.boot, "cluster.MemberController", yaml)
        })
        .collect()
}

/// Every resource of `kind` the node has, in `namespace`.
fn all(t: &Target, namespace: &str, kind: &str) -> Result<Vec<Resource>, Status> {
    let home = namespace_of(t, kind)?;
    check_namespace(namespace)?;
    if namespace != home {
        return Ok(vec![]);
    }
    Ok(match kind {
        MACHINE_STATUS => vec![machine_status(t)],
        VERSION => vec![version(t)],
        MACHINE_CONFIG => vec![machine_config(t)],
        _ if component_of(kind).is_some() => component_config(t, kind).into_iter().collect(),
        STATIC_POD => static_pods(t),
        KUBELET_SPEC => vec![kubelet_spec(t)],
        MEMBER => members(t),
        _ => cosi_storage_network::resources(t, kind),
    })
}

fn id_of(r: &Resource) -> &str {
    r.metadata.as_ref().map(|m| m.id.as_str()).unwrap_or("")
}

fn spec_of(r: &Resource) -> &str {
    r.spec.as_ref().map(|s| s.yaml_spec.as_str()).unwrap_or("")
}

fn event(resource: Resource, kind: EventType) -> Event {
    Event {
        resource: Some(resource),
        event_type: kind as i32,
        old: None,
        error: None,
        bookmark: None,
    }
}

#[tonic::async_trait]
impl State for StateApi {
    async fn get(&self, request: Request<GetRequest>) -> Result<Response<GetResponse>, Status> {
        let t = self.target(&request, "Get")?;
        require_for_type(&request, &request.get_ref().r#type)?;
        slow_down(&t.node).await;
        let req = request.into_inner();
        let found = all(&t, &req.namespace, &req.r#type)?
            .into_iter()
            .find(|r| id_of(r) == req.id);
        match found {
            Some(resource) => Ok(Response::new(GetResponse {
                resource: Some(resource),
            })),
            None => Err(not_found(&req.r#type, &req.namespace, &req.id)),
        }
    }

    type ListStream = ReceiverStream<Result<ListResponse, Status>>;

    async fn list(
        &self,
        request: Request<ListRequest>,
    ) -> Result<Response<Self::ListStream>, Status> {
        let t = self.target(&request, "List")?;
        require_for_type(&request, &request.get_ref().r#type)?;
        slow_down(&t.node).await;
        let req = request.into_inner();
        let resources = all(&t, &req.namespace, &req.r#type)?;
        let (tx, rx) = mpsc::channel(resources.len().max(1));
        for r in resources {
            let _ = tx.try_send(Ok(ListResponse { resource: Some(r) }));
        }
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    type WatchStream = ReceiverStream<Result<WatchResponse, Status>>;

    async fn watch(
        &self,
        request: Request<WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let t = self.target(&request, "Watch")?;
        require_for_type(&request, &request.get_ref().r#type)?;
        slow_down(&t.node).await;
        let req = request.into_inner();
        let options = req.options.clone().unwrap_or_default();
        if req.id.is_some() && (options.bootstrap_contents || !options.label_query.is_empty()) {
            return Err(Status::unimplemented(
                "bootstrap contents and label queries are not supported for single resource watch",
            ));
        }
        // Validate the type before the stream starts.
        all(&t, &req.namespace, &req.r#type)?;
        let (tx, rx) = mpsc::channel(16);
        let mut changes = self.core.fleet.subscribe();
        let mut stop = self.core.stop.subscribe();
        let mut node_status = t.node.subscribe();
        let boot = node_status.borrow().boot;
        tokio::spawn(async move {
            let send = |events: Vec<Event>| {
                let tx = tx.clone();
                async move { tx.send(Ok(WatchResponse { event: events })).await.is_ok() }
            };
            // "watch is ready"
            if !send(vec![]).await {
                return;
            }
            let select = |all: Vec<Resource>| -> Vec<Resource> {
                match &req.id {
                    Some(id) => all.into_iter().filter(|r| id_of(r) == id).collect(),
                    None => all,
                }
            };
            let mut last = select(all(&t, &req.namespace, &req.r#type).unwrap_or_default());
            if req.id.is_some() || options.bootstrap_contents {
                for r in &last {
                    if !send(vec![event(r.clone(), EventType::Created)]).await {
                        return;
                    }
                }
                if req.id.is_none() && req.api_version >= 1 {
                    let marker = Event {
                        resource: None,
                        event_type: EventType::Bootstrapped as i32,
                        old: None,
                        error: None,
                        bookmark: None,
                    };
                    if !send(vec![marker]).await {
                        return;
                    }
                }
            }
            loop {
                tokio::select! {
                    changed = changes.changed() => if changed.is_err() { return },
                    _ = stop.wait_for(|s| *s) => return,
                    _ = node_status.wait_for(|s| !s.up || s.boot != boot) => return,
                }
                let now = select(all(&t, &req.namespace, &req.r#type).unwrap_or_default());
                let mut events = Vec::new();
                for r in &now {
                    match last.iter().find(|o| id_of(o) == id_of(r)) {
                        None => events.push(event(r.clone(), EventType::Created)),
                        Some(old) if spec_of(old) != spec_of(r) => {
                            let mut e = event(r.clone(), EventType::Updated);
                            e.old = Some(old.clone());
                            events.push(e);
                        }
                        Some(_) => {}
                    }
                }
                last = now;
                for e in events {
                    if !send(vec![e]).await {
                        return;
                    }
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
