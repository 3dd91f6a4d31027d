//! Bounded reads of a management cluster's Cluster API objects: which `cluster.x-k8s.io`
//! version it serves (discovery of the group; v1beta2 preferred), the Clusters, Machines,
//! MachineDeployments, MachineSets and TalosControlPlanes of every namespace, the
//! infrastructure machines' template, and a workload cluster's kubeconfig secret's server.
//! A provider's kind is found in the group its reference names, in a version of that group
//! that serves the kind: a group's preferred version is the highest any of its CRDs serves
//! (with kubeadm's providers installed, `controlplane.*` prefers v1beta2, which has no
//! TalosControlPlane), so it is only the first version tried.
use std::collections::BTreeMap;

use serde::Deserialize;

use super::capi_model::{
    self, CapiCluster, CapiVersion, InfraMachine, Machine, MachineDeployment, MachineSet,
    TalosControlPlane,
};
use super::client::{KubeClient, KubeError};
use super::rest::CallError;

pub const CAPI_GROUP: &str = "cluster.x-k8s.io";
pub(super) const CONTROL_PLANE_GROUP: &str = "controlplane.cluster.x-k8s.io";
/// TalosControlPlane is served in v1alpha3 only (cluster-api-control-plane-provider-talos
/// api/v1alpha3): its `scale` subresource is addressed there.
pub(super) const TALOS_CONTROL_PLANE_API: &str = "/apis/controlplane.cluster.x-k8s.io/v1alpha3";
pub(super) const TALOS_CONTROL_PLANE: &str = "TalosControlPlane";
/// Objects asked for per page, and pages read per kind: a list stops at 5000 objects.
const PAGE: &str = "500";
const MAX_PAGES: usize = 10;
/// A kubeconfig secret larger than this is not read.
pub(super) const KUBECONFIG_LIMIT: usize = 1 << 20;

/// Everything a management cluster serves of Cluster API, in one model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapiObjects {
    /// The `cluster.x-k8s.io` version read; `None` when the objects came from elsewhere.
    pub version: Option<CapiVersion>,
    pub clusters: Vec<CapiCluster>,
    pub control_planes: Vec<TalosControlPlane>,
    pub machine_deployments: Vec<MachineDeployment>,
    pub machine_sets: Vec<MachineSet>,
    pub machines: Vec<Machine>,
    pub infra_machines: Vec<InfraMachine>,
    /// Lists cut at the page bound, by kind: what is shown may be incomplete.
    pub truncated: Vec<String>,
}

impl CapiObjects {
    /// The model of list answers already read (`…List` JSON texts), each named by its
    /// resource (`clusters`, `machines`, `machinedeployments`, `machinesets`,
    /// `taloscontrolplanes`; any other is an infrastructure machine list).
    pub fn from_list_texts(
        version: CapiVersion,
        lists: &[(&str, &str)],
    ) -> Result<CapiObjects, String> {
        let mut objects = CapiObjects {
            version: Some(version),
            ..CapiObjects::default()
        };
        for (resource, text) in lists {
            let list: serde_json::Value =
                serde_json::from_str(text).map_err(|e| format!("{resource}: {e}"))?;
            let items = list["items"].as_array().cloned().unwrap_or_default();
            match *resource {
                "clusters" => objects.clusters = decode_items(&items, capi_model::cluster_from)?,
                "machines" => objects.machines = decode_items(&items, capi_model::machine_from)?,
                "machinedeployments" => {
                    objects.machine_deployments =
                        decode_items(&items, capi_model::machine_deployment_from)?
                }
                "machinesets" => {
                    objects.machine_sets = decode_items(&items, capi_model::machine_set_from)?
                }
                "taloscontrolplanes" => {
                    objects.control_planes =
                        decode_items(&items, capi_model::talos_control_plane_from)?
                }
                _ => {
                    let kind = list["kind"].as_str().unwrap_or_default();
                    let kind = kind.strip_suffix("List").unwrap_or(kind);
                    for item in &items {
                        objects
                            .infra_machines
                            .push(capi_model::infra_machine_from(item, kind)?);
                    }
                }
            }
        }
        Ok(objects)
    }
}

/// `APIGroup`, from `/apis/<group>`.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ApiGroup {
    versions: Vec<GroupVersion>,
    preferred_version: Option<GroupVersion>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct GroupVersion {
    version: String,
}

/// `APIResourceList`, from `/apis/<group>/<version>`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ResourceList {
    resources: Vec<ApiResource>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ApiResource {
    name: String,
    kind: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ListPage {
    items: Vec<serde_json::Value>,
    metadata: ListMeta,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ListMeta {
    #[serde(rename = "continue")]
    next: Option<String>,
}

/// The versions of a group in the order a kind is looked for: the preferred one, then the
/// others as the server lists them.
fn versions_to_try(api: &ApiGroup) -> Vec<String> {
    let mut out: Vec<String> = api
        .preferred_version
        .iter()
        .map(|v| v.version.clone())
        .collect();
    for v in &api.versions {
        if !out.contains(&v.version) {
            out.push(v.version.clone());
        }
    }
    out
}

/// The version to read of the versions a server lists: v1beta2 when served, else v1beta1.
pub fn choose_capi_version(served: &[&str]) -> Option<CapiVersion> {
    if served.contains(&"v1beta2") {
        Some(CapiVersion::V1beta2)
    } else if served.contains(&"v1beta1") {
        Some(CapiVersion::V1beta1)
    } else {
        None
    }
}

/// The `server:` of the first cluster in a kubeconfig's text.
pub fn kubeconfig_server(text: &str) -> Option<String> {
    let config = kube::config::Kubeconfig::from_yaml(text).ok()?;
    config
        .clusters
        .iter()
        .find_map(|c| c.cluster.as_ref()?.server.clone())
}

impl KubeClient {
    /// The `cluster.x-k8s.io` version this server serves, `None` when it serves none (not a
    /// management cluster).
    pub async fn capi_version(&self) -> Result<Option<CapiVersion>, KubeError> {
        let group: Option<ApiGroup> = self
            .rest()
            .get_opt(&format!("/apis/{CAPI_GROUP}"))
            .await
            .map_err(|e| self.error(e))?;
        let Some(group) = group else {
            return Ok(None);
        };
        let served: Vec<&str> = group.versions.iter().map(|v| v.version.as_str()).collect();
        Ok(choose_capi_version(&served))
    }

    /// Every Cluster API object of every namespace, read in `version`.
    pub async fn capi_objects(&self, version: CapiVersion) -> Result<CapiObjects, KubeError> {
        let mut objects = CapiObjects {
            version: Some(version),
            ..CapiObjects::default()
        };
        let base = format!("/apis/{CAPI_GROUP}/{}", version.as_str());
        let clusters = self
            .list_pages(&format!("{base}/clusters"), &mut objects.truncated)
            .await?;
        objects.clusters = decode_all(clusters, capi_model::cluster_from, "Cluster", self)?;
        let mds = self
            .list_pages(
                &format!("{base}/machinedeployments"),
                &mut objects.truncated,
            )
            .await?;
        objects.machine_deployments = decode_all(
            mds,
            capi_model::machine_deployment_from,
            "MachineDeployment",
            self,
        )?;
        let sets = self
            .list_pages(&format!("{base}/machinesets"), &mut objects.truncated)
            .await?;
        objects.machine_sets = decode_all(sets, capi_model::machine_set_from, "MachineSet", self)?;
        let machines = self
            .list_pages(&format!("{base}/machines"), &mut objects.truncated)
            .await?;
        objects.machines = decode_all(machines, capi_model::machine_from, "Machine", self)?;
        // A management cluster without the Talos control-plane provider lists none.
        let tcps = match self
            .resource_path(CONTROL_PLANE_GROUP, TALOS_CONTROL_PLANE)
            .await?
        {
            Some(path) => self.list_pages(&path, &mut objects.truncated).await?,
            None => Vec::new(),
        };
        objects.control_planes = decode_all(
            tcps,
            capi_model::talos_control_plane_from,
            "TalosControlPlane",
            self,
        )?;
        objects.infra_machines = self
            .infra_machines(&objects.machines, &mut objects.truncated)
            .await?;
        Ok(objects)
    }

    /// The `server:` of `<cluster>-kubeconfig`'s kubeconfig in `namespace`; `None` when the
    /// secret is not there (yet).
    pub async fn capi_kubeconfig_server(
        &self,
        namespace: &str,
        cluster: &str,
    ) -> Result<Option<String>, KubeError> {
        let name = format!("{cluster}-kubeconfig");
        let text = self.capi_secret_text(namespace, &name, "value").await?;
        Ok(text.as_deref().and_then(kubeconfig_server))
    }

    /// The items of a list, page by page up to [`MAX_PAGES`]; a cut list is named in
    /// `truncated`, a list the server does not serve (404) is empty.
    async fn list_pages(
        &self,
        path: &str,
        truncated: &mut Vec<String>,
    ) -> Result<Vec<serde_json::Value>, KubeError> {
        let mut items = Vec::new();
        let mut next: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![("limit", PAGE)];
            if let Some(token) = next.as_deref() {
                query.push(("continue", token));
            }
            let page: ListPage = match self.rest().get(path, &query).await {
                Ok(page) => page,
                Err(CallError::Api(status)) if status.code == 404 => return Ok(items),
                Err(e) => return Err(self.error(e)),
            };
            items.extend(page.items);
            next = page.metadata.next.filter(|t| !t.is_empty());
            if next.is_none() {
                return Ok(items);
            }
        }
        truncated.push(path.to_string());
        Ok(items)
    }

    /// The infrastructure machines the Machines point at, each kind listed once across
    /// namespaces; its group's resources name the kind's plural.
    async fn infra_machines(
        &self,
        machines: &[Machine],
        truncated: &mut Vec<String>,
    ) -> Result<Vec<InfraMachine>, KubeError> {
        let mut kinds: BTreeMap<(String, String), ()> = BTreeMap::new();
        for m in machines {
            if !m.infrastructure.kind.is_empty() && !m.infrastructure_group.is_empty() {
                kinds.insert(
                    (
                        m.infrastructure_group.clone(),
                        m.infrastructure.kind.clone(),
                    ),
                    (),
                );
            }
        }
        let mut found = Vec::new();
        for (group, kind) in kinds.into_keys() {
            let Some(path) = self.resource_path(&group, &kind).await? else {
                continue;
            };
            for item in self.list_pages(&path, truncated).await? {
                let infra = capi_model::infra_machine_from(&item, &kind)
                    .map_err(|e| self.api_error(format!("{kind} in {path}: {e}")))?;
                found.push(infra);
            }
        }
        Ok(found)
    }

    /// `/apis/<group>/<version>/<plural of kind>`, from discovery: the group's preferred
    /// version when it serves the kind, else the first other served version that does;
    /// `None` when no version of the group serves it.
    pub(super) async fn resource_path(
        &self,
        group: &str,
        kind: &str,
    ) -> Result<Option<String>, KubeError> {
        let api: Option<ApiGroup> = self
            .rest()
            .get_opt(&format!("/apis/{group}"))
            .await
            .map_err(|e| self.error(e))?;
        let Some(api) = api else {
            return Ok(None);
        };
        for version in versions_to_try(&api) {
            let base = format!("/apis/{group}/{version}");
            let list: Option<ResourceList> = self
                .rest()
                .get_opt(&base)
                .await
                .map_err(|e| self.error(e))?;
            let found = list.and_then(|l| {
                l.resources
                    .into_iter()
                    .find(|r| r.kind == kind && !r.name.contains('/'))
            });
            if let Some(r) = found {
                return Ok(Some(format!("{base}/{}", r.name)));
            }
        }
        Ok(None)
    }

    pub(super) fn api_error(&self, message: String) -> KubeError {
        KubeError::Api {
            context: self.context().to_string(),
            message,
        }
    }
}

fn decode_items<T>(
    items: &[serde_json::Value],
    decode: fn(&serde_json::Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    items.iter().map(decode).collect()
}

fn decode_all<T>(
    items: Vec<serde_json::Value>,
    decode: fn(&serde_json::Value) -> Result<T, String>,
    kind: &str,
    client: &KubeClient,
) -> Result<Vec<T>, KubeError> {
    decode_items(&items, decode).map_err(|e| client.api_error(format!("decoding a {kind}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1beta2_is_preferred_when_served() {
        assert_eq!(
            choose_capi_version(&["v1beta1", "v1beta2"]),
            Some(CapiVersion::V1beta2)
        );
        assert_eq!(
            choose_capi_version(&["v1beta1"]),
            Some(CapiVersion::V1beta1)
        );
        assert_eq!(choose_capi_version(&["v1alpha4"]), None);
    }

    #[test]
    fn a_kind_is_looked_for_in_the_preferred_version_then_the_others() {
        let api: ApiGroup = serde_json::from_value(serde_json::json!({
            "versions": [{"version": "v1beta2"}, {"version": "v1beta1"}, {"version": "v1alpha3"}],
            "preferredVersion": {"version": "v1beta2"}}))
        .expect("group");
        assert_eq!(versions_to_try(&api), ["v1beta2", "v1beta1", "v1alpha3"]);
        let api: ApiGroup =
            serde_json::from_value(serde_json::json!({"versions": [{"version": "v1alpha3"}]}))
                .expect("group");
        assert_eq!(versions_to_try(&api), ["v1alpha3"]);
    }

    #[test]
    fn the_kubeconfig_secrets_server_is_its_first_clusters() {
        let text = "apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:6443\ncontexts: []\nusers: []\n";
        assert_eq!(
            kubeconfig_server(text).as_deref(),
            Some("https://127.0.0.1:6443")
        );
        assert_eq!(kubeconfig_server("not: [yaml"), None);
    }
}
