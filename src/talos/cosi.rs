//! COSI resource reads (`cosi.resource.State` Get/List/Watch) on one node at a
//! time, decoding the YAML spec the server sends into typed values: machine
//! status, cluster members, Talos version.
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::client::{MAX_MESSAGE_SIZE, Retry, TalosClient};
use super::error::TalosError;
use super::types::{MachineStage, MachineStatus, UnmetCondition};
use crate::proto::cosi::resource::{self as pb, state_client::StateClient};

pub const MACHINE_STATUS_TYPE: &str = "MachineStatuses.runtime.talos.dev";
pub const MEMBER_TYPE: &str = "Members.cluster.talos.dev";
pub const VERSION_TYPE: &str = "Versions.runtime.talos.dev";
/// The active machine config resource, as upstream reads it.
pub const MACHINE_CONFIG_TYPE: &str = "MachineConfigs.config.talos.dev";
pub const CONFIG_NAMESPACE: &str = "config";
pub const ACTIVE_CONFIG_ID: &str = "v1alpha1";

/// A resource with its spec decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedResource<T> {
    pub namespace: String,
    pub id: String,
    pub version: String,
    pub spec: T,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceEventKind {
    Created,
    Updated,
    Destroyed,
    /// A kind watch finished sending the resources that already existed.
    Bootstrapped,
    Errored,
    Noop,
}

/// One change seen by a watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEvent<T> {
    pub kind: ResourceEventKind,
    /// Absent on `Bootstrapped`/`Errored` markers.
    pub resource: Option<TypedResource<T>>,
    pub error: Option<String>,
}

/// A node of the cluster as cluster discovery sees it (`Members.cluster.talos.dev`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterMember {
    /// The resource id (the Kubernetes node name).
    pub id: String,
    pub hostname: String,
    pub addresses: Vec<String>,
    /// `controlplane`, `worker`, `init` or `unknown`.
    pub machine_type: String,
    /// e.g. `Talos (v1.11.3)`.
    pub operating_system: String,
}

impl ClusterMember {
    pub fn is_control_plane(&self) -> bool {
        matches!(self.machine_type.as_str(), "controlplane" | "init")
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct MachineStatusSpec {
    stage: MachineStage,
    status: Option<MachineReadinessSpec>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct MachineReadinessSpec {
    ready: bool,
    unmet_conditions: Option<Vec<UnmetCondition>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct MemberSpec {
    hostname: String,
    addresses: Option<Vec<String>>,
    machine_type: String,
    operating_system: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct VersionSpec {
    version: String,
}

/// Decodes a `yaml_spec` (the same text `talosctl get -o yaml` prints under `spec:`).
pub fn decode_spec<T: DeserializeOwned>(yaml: &str) -> Result<T, String> {
    serde_saphyr::from_str(yaml).map_err(|e| e.to_string())
}

/// `resource.config.MachineConfigSpec`: the config bytes "as submitted to the node".
#[derive(Clone, PartialEq, prost::Message)]
struct MachineConfigSpec {
    #[prost(bytes = "vec", tag = "1")]
    yaml_marshalled: Vec<u8>,
}

/// The machine config text of a MachineConfig resource: from `proto_spec` when the server sent
/// it (as talosctl reads it), else from the YAML spec, which up to Talos 1.11 *is* the config
/// document (a mapping) and from 1.12 is a string holding it. Follows
/// pkg/machinery/resources/config/machine_config.go and api/resource/config/config.proto.
pub(crate) fn machine_config_text(proto_spec: &[u8], yaml_spec: &str) -> Result<String, String> {
    use prost::Message;
    if !proto_spec.is_empty() {
        let spec = MachineConfigSpec::decode(proto_spec)
            .map_err(|e| format!("proto spec is not a MachineConfigSpec: {e}"))?;
        return String::from_utf8(spec.yaml_marshalled)
            .map_err(|_| "the machine config is not UTF-8".to_string());
    }
    if yaml_spec.trim().is_empty() {
        return Err("the resource carries no spec".into());
    }
    match serde_saphyr::from_str::<String>(yaml_spec) {
        Ok(text) => Ok(text),
        // Not a string: the spec is the document itself (Talos ≤ 1.11).
        Err(_) => Ok(yaml_spec.to_string()),
    }
}

impl From<MachineStatusSpec> for MachineStatus {
    fn from(spec: MachineStatusSpec) -> Self {
        let status = spec.status.unwrap_or_default();
        MachineStatus {
            stage: spec.stage,
            ready: status.ready,
            unmet_conditions: status.unmet_conditions.unwrap_or_default(),
        }
    }
}

#[cfg(test)]
fn decode_machine_status(yaml: &str) -> Result<MachineStatus, String> {
    decode_spec::<MachineStatusSpec>(yaml).map(MachineStatus::from)
}

fn typed<T: DeserializeOwned>(
    node: &str,
    call: &'static str,
    r: pb::Resource,
) -> Result<TypedResource<T>, TalosError> {
    let md = r.metadata.unwrap_or_default();
    let yaml = r.spec.map(|s| s.yaml_spec).unwrap_or_default();
    let spec = decode_spec(&yaml).map_err(|reason| TalosError::Decode {
        node: node.to_string(),
        call,
        reason: format!("{} {}/{}: {reason}", md.r#type, md.namespace, md.id),
    })?;
    Ok(TypedResource {
        namespace: md.namespace,
        id: md.id,
        version: md.version,
        spec,
    })
}

fn state(ch: tonic::transport::Channel) -> StateClient<tonic::transport::Channel> {
    StateClient::new(ch).max_decoding_message_size(MAX_MESSAGE_SIZE)
}

fn event_kind(n: i32) -> ResourceEventKind {
    match pb::EventType::try_from(n) {
        Ok(pb::EventType::Created) => ResourceEventKind::Created,
        Ok(pb::EventType::Updated) => ResourceEventKind::Updated,
        Ok(pb::EventType::Destroyed) => ResourceEventKind::Destroyed,
        Ok(pb::EventType::Bootstrapped) => ResourceEventKind::Bootstrapped,
        Ok(pb::EventType::Errored) => ResourceEventKind::Errored,
        _ => ResourceEventKind::Noop,
    }
}

impl TalosClient {
    /// One resource, spec decoded into `T`.
    pub async fn cosi_get<T: DeserializeOwned>(
        &self,
        node: &str,
        namespace: &str,
        resource_type: &str,
        id: &str,
    ) -> Result<TypedResource<T>, TalosError> {
        let resource = self
            .cosi_get_resource(node, namespace, resource_type, id)
            .await?;
        typed(node, "cosi Get", resource)
    }

    /// The node's active machine configuration (`MachineConfigs.config.talos.dev`
    /// `config/v1alpha1`) as the text it was submitted in.
    pub async fn machine_config(&self, node: &str) -> Result<TypedResource<String>, TalosError> {
        let r = self
            .cosi_get_resource(
                node,
                CONFIG_NAMESPACE,
                MACHINE_CONFIG_TYPE,
                ACTIVE_CONFIG_ID,
            )
            .await?;
        let md = r.metadata.unwrap_or_default();
        let spec = r.spec.unwrap_or_default();
        let text = machine_config_text(&spec.proto_spec, &spec.yaml_spec).map_err(|reason| {
            TalosError::Decode {
                node: node.to_string(),
                call: "cosi Get",
                reason: format!(
                    "{MACHINE_CONFIG_TYPE} {CONFIG_NAMESPACE}/{ACTIVE_CONFIG_ID}: {reason}"
                ),
            }
        })?;
        Ok(TypedResource {
            namespace: md.namespace,
            id: md.id,
            version: md.version,
            spec: text,
        })
    }

    async fn cosi_get_resource(
        &self,
        node: &str,
        namespace: &str,
        resource_type: &str,
        id: &str,
    ) -> Result<pb::Resource, TalosError> {
        const CALL: &str = "cosi Get";
        let t = Some(self.options().call_timeout);
        let req = pb::GetRequest {
            namespace: namespace.into(),
            r#type: resource_type.into(),
            id: id.into(),
            options: None,
        };
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| {
                let req = req.clone();
                async move {
                    state(ch)
                        .get(
                            self.request(node, CALL, req, t)
                                .map_err(super::calls::to_status)?,
                        )
                        .await
                }
            })
            .await?;
        resp.resource.ok_or_else(|| TalosError::Decode {
            node: node.to_string(),
            call: CALL,
            reason: format!("no resource in the reply for {resource_type} {namespace}/{id}"),
        })
    }

    /// Every resource of a type in a namespace; the whole list is bounded by the call timeout.
    pub async fn cosi_list<T: DeserializeOwned>(
        &self,
        node: &str,
        namespace: &str,
        resource_type: &str,
    ) -> Result<Vec<TypedResource<T>>, TalosError> {
        const CALL: &str = "cosi List";
        let timeout = self.options().call_timeout;
        let req = pb::ListRequest {
            namespace: namespace.into(),
            r#type: resource_type.into(),
            options: None,
        };
        let list = async {
            let mut stream = self
                .call(node, CALL, Retry::Idempotent, |ch| {
                    let req = req.clone();
                    async move {
                        state(ch)
                            .list(
                                self.request(node, CALL, req, Some(timeout))
                                    .map_err(super::calls::to_status)?,
                            )
                            .await
                    }
                })
                .await?;
            let mut out = Vec::new();
            loop {
                match stream.message().await {
                    Ok(Some(item)) => {
                        if let Some(r) = item.resource {
                            out.push(typed(node, CALL, r)?);
                        }
                    }
                    Ok(None) => return Ok(out),
                    Err(status) => return Err(TalosError::from_status(node, CALL, &status)),
                }
            }
        };
        super::client::whole_read_within(node, CALL, timeout, list).await
    }

    /// Watches one resource (`id`) or a whole kind (`None`: existing resources
    /// first, then a `Bootstrapped` marker). Only the opening is bounded.
    pub async fn cosi_watch<T: DeserializeOwned + Send + 'static>(
        &self,
        node: &str,
        namespace: &str,
        resource_type: &str,
        id: Option<&str>,
    ) -> Result<BoxStream<'static, Result<ResourceEvent<T>, TalosError>>, TalosError> {
        const CALL: &str = "cosi Watch";
        let req = pb::WatchRequest {
            namespace: namespace.into(),
            r#type: resource_type.into(),
            id: id.map(str::to_string),
            options: Some(pb::WatchOptions {
                bootstrap_contents: id.is_none(),
                ..Default::default()
            }),
            api_version: 1,
        };
        let stream = self
            .open_stream(node, CALL, Retry::Idempotent, |ch| {
                let req = req.clone();
                async move {
                    state(ch)
                        .watch(
                            self.request(node, CALL, req, None)
                                .map_err(super::calls::to_status)?,
                        )
                        .await
                }
            })
            .await?;
        let node = node.to_string();
        // The first response is empty ("watch is ready"); flattening skips it.
        Ok(stream
            .flat_map(move |item| {
                let items: Vec<Result<ResourceEvent<T>, TalosError>> = match item {
                    Err(status) => vec![Err(TalosError::from_status(&node, CALL, &status))],
                    Ok(resp) => resp
                        .event
                        .into_iter()
                        .map(|e| {
                            let resource = e.resource.map(|r| typed(&node, CALL, r)).transpose()?;
                            Ok(ResourceEvent {
                                kind: event_kind(e.event_type),
                                resource,
                                error: e.error,
                            })
                        })
                        .collect(),
                };
                stream::iter(items)
            })
            .boxed())
    }

    /// Stage and readiness (`MachineStatuses.runtime.talos.dev`, runtime/machine).
    pub async fn machine_status(&self, node: &str) -> Result<MachineStatus, TalosError> {
        let r: TypedResource<MachineStatusSpec> = self
            .cosi_get(node, "runtime", MACHINE_STATUS_TYPE, "machine")
            .await?;
        Ok(r.spec.into())
    }

    /// The cluster's nodes as this node's discovery sees them.
    pub async fn cluster_members(&self, node: &str) -> Result<Vec<ClusterMember>, TalosError> {
        let list: Vec<TypedResource<MemberSpec>> =
            self.cosi_list(node, "cluster", MEMBER_TYPE).await?;
        Ok(list
            .into_iter()
            .map(|r| ClusterMember {
                id: r.id,
                hostname: r.spec.hostname,
                addresses: r.spec.addresses.unwrap_or_default(),
                machine_type: r.spec.machine_type,
                operating_system: r.spec.operating_system,
            })
            .collect())
    }

    /// The Talos version from `Versions.runtime.talos.dev` (Talos ≥ 1.10).
    pub async fn talos_version_resource(&self, node: &str) -> Result<String, TalosError> {
        let r: TypedResource<VersionSpec> = self
            .cosi_get(node, "runtime", VERSION_TYPE, "version")
            .await?;
        Ok(r.spec.version)
    }

    /// Follows the machine status of one node.
    pub async fn watch_machine_status(
        &self,
        node: &str,
    ) -> Result<BoxStream<'static, Result<MachineStatus, TalosError>>, TalosError> {
        let events = self
            .cosi_watch::<MachineStatusSpec>(node, "runtime", MACHINE_STATUS_TYPE, Some("machine"))
            .await?;
        Ok(events
            .filter_map(|item| {
                let out = match item {
                    Err(e) => Some(Err(e)),
                    Ok(ev) => ev.resource.map(|r| Ok(MachineStatus::from(r.spec))),
                };
                futures::future::ready(out)
            })
            .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "version: v1alpha1\nmachine:\n  type: controlplane # keep\n";

    #[test]
    fn machine_config_from_proto_spec_keeps_the_submitted_bytes() {
        use prost::Message;
        let proto = MachineConfigSpec {
            yaml_marshalled: CONFIG.as_bytes().to_vec(),
        }
        .encode_to_vec();
        assert_eq!(
            machine_config_text(&proto, "ignored: true").unwrap(),
            CONFIG
        );
    }

    #[test]
    fn machine_config_yaml_spec_as_a_mapping_is_the_document() {
        // Talos ≤ 1.11: the YAML spec is the config document itself.
        assert_eq!(machine_config_text(&[], CONFIG).unwrap(), CONFIG);
    }

    #[test]
    fn machine_config_yaml_spec_as_a_string_holds_the_document() {
        // Talos ≥ 1.12: a string (with the talos.dev/yaml-spec annotation).
        let spec = "|\n  version: v1alpha1\n  machine:\n    type: controlplane # keep\n";
        assert_eq!(machine_config_text(&[], spec).unwrap(), CONFIG);
    }

    #[test]
    fn machine_config_without_a_spec_is_an_error() {
        assert!(machine_config_text(&[], "  ").is_err());
        assert!(machine_config_text(&[0xff, 0xff], "").is_err());
    }

    #[test]
    fn machine_status_yaml_decodes() {
        let yaml = "stage: running\nstatus:\n    ready: false\n    unmetConditions:\n        - name: services\n          reason: etcd is not healthy\n";
        let s = decode_machine_status(yaml).expect("decodes");
        assert_eq!(s.stage, MachineStage::Running);
        assert!(!s.ready);
        assert_eq!(s.unmet_conditions.len(), 1);
        assert_eq!(s.unmet_conditions[0].reason, "etcd is not healthy");
        let s = decode_machine_status(
            "stage: shutting down\nstatus:\n    ready: true\n    unmetConditions: []\n",
        )
        .expect("decodes");
        assert_eq!(s.stage, MachineStage::ShuttingDown);
        assert!(decode_machine_status("stage: sideways\n").is_err());
    }

    #[test]
    fn member_yaml_decodes_and_ignores_unknown_keys() {
        let yaml = "nodeId: abc\naddresses:\n    - 127.10.0.2\nhostname: cp-1\nmachineType: controlplane\noperatingSystem: Talos (v1.11.3)\ncontrolPlane:\n    apiServerPort: 6443\n";
        let m: MemberSpec = decode_spec(yaml).expect("decodes");
        assert_eq!(m.hostname, "cp-1");
        assert_eq!(m.addresses, Some(vec!["127.10.0.2".to_string()]));
        assert_eq!(m.machine_type, "controlplane");
    }
}
