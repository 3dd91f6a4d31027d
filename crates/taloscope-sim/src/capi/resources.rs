//! The CAPI and provider resources the management cluster serves: tables (group, versions,
//! kind, plural, short names, categories, subresources) from which API discovery and the
//! CustomResourceDefinition objects are both built, so they cannot disagree. A group's
//! preferred version is the highest any of its CRDs serves, as the API server computes it.
use serde_json::{Value, json};

/// One served custom resource.
pub(crate) struct Resource {
    pub group: &'static str,
    /// Served versions; the first is the storage version.
    pub versions: &'static [&'static str],
    pub kind: &'static str,
    pub plural: &'static str,
    pub short: &'static [&'static str],
    pub categories: &'static [&'static str],
    /// Serves `/scale` (`specpath=.spec.replicas`, `statuspath=.status.replicas`).
    pub scale: bool,
}

pub(crate) const CORE: &str = "cluster.x-k8s.io";
pub(crate) const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io";
pub(crate) const BOOTSTRAP: &str = "bootstrap.cluster.x-k8s.io";
pub(crate) const INFRASTRUCTURE: &str = "infrastructure.cluster.x-k8s.io";

/// kubernetes-sigs/cluster-api api/core/v1beta2/*_types.go (`+kubebuilder:resource` markers,
/// v1beta2 the storage version since v1.11; v1beta1 still served, api/core/v1beta1);
/// siderolabs/cluster-api-control-plane-provider-talos api/v1alpha3/taloscontrolplane_types.go;
/// siderolabs/cluster-api-bootstrap-provider-talos api/v1alpha3/talosconfig*_types.go;
/// OpenNebula/cluster-api-provider-opennebula api/v1beta1/one*_types.go (no short names there).
pub(crate) const RESOURCES: &[Resource] = &[
    core("Cluster", "clusters", &["cl"], false),
    core("Machine", "machines", &["ma"], false),
    core("MachineSet", "machinesets", &["ms"], true),
    core("MachineDeployment", "machinedeployments", &["md"], true),
    provider(
        CONTROL_PLANE,
        &["v1alpha3"],
        "TalosControlPlane",
        "taloscontrolplanes",
        &["tcp"],
        true,
    ),
    provider(
        BOOTSTRAP,
        &["v1alpha3"],
        "TalosConfig",
        "talosconfigs",
        &[],
        false,
    ),
    provider(
        BOOTSTRAP,
        &["v1alpha3"],
        "TalosConfigTemplate",
        "talosconfigtemplates",
        &[],
        false,
    ),
    provider(
        INFRASTRUCTURE,
        &["v1beta1"],
        "ONECluster",
        "oneclusters",
        &[],
        false,
    ),
    provider(
        INFRASTRUCTURE,
        &["v1beta1"],
        "ONEMachine",
        "onemachines",
        &[],
        false,
    ),
    provider(
        INFRASTRUCTURE,
        &["v1beta1"],
        "ONEMachineTemplate",
        "onemachinetemplates",
        &[],
        false,
    ),
];

/// What `clusterctl init --infrastructure opennebula,aws` adds beside the Talos providers:
/// kubeadm's bootstrap and control-plane providers (its defaults; kubernetes-sigs/cluster-api
/// bootstrap/kubeadm/config/crd and controlplane/kubeadm/config/crd: v1beta2 the storage
/// version, v1beta1 served) and a second infrastructure provider, Cluster API Provider AWS
/// (kubernetes-sigs/cluster-api-provider-aws api/v1beta2, v1beta1 served).
pub(crate) const CLUSTERCTL_DEFAULTS: &[Resource] = &[
    provider(
        CONTROL_PLANE,
        &["v1beta2", "v1beta1"],
        "KubeadmControlPlane",
        "kubeadmcontrolplanes",
        &["kcp"],
        true,
    ),
    provider(
        CONTROL_PLANE,
        &["v1beta2", "v1beta1"],
        "KubeadmControlPlaneTemplate",
        "kubeadmcontrolplanetemplates",
        &[],
        false,
    ),
    provider(
        BOOTSTRAP,
        &["v1beta2", "v1beta1"],
        "KubeadmConfig",
        "kubeadmconfigs",
        &[],
        false,
    ),
    provider(
        BOOTSTRAP,
        &["v1beta2", "v1beta1"],
        "KubeadmConfigTemplate",
        "kubeadmconfigtemplates",
        &[],
        false,
    ),
    provider(
        INFRASTRUCTURE,
        &["v1beta2", "v1beta1"],
        "AWSCluster",
        "awsclusters",
        &[],
        false,
    ),
    provider(
        INFRASTRUCTURE,
        &["v1beta2", "v1beta1"],
        "AWSMachine",
        "awsmachines",
        &[],
        false,
    ),
    provider(
        INFRASTRUCTURE,
        &["v1beta2", "v1beta1"],
        "AWSMachineTemplate",
        "awsmachinetemplates",
        &[],
        false,
    ),
];

const fn core(
    kind: &'static str,
    plural: &'static str,
    short: &'static [&'static str],
    scale: bool,
) -> Resource {
    Resource {
        group: CORE,
        versions: &["v1beta2", "v1beta1"],
        kind,
        plural,
        short,
        categories: &["cluster-api"],
        scale,
    }
}

const fn provider(
    group: &'static str,
    versions: &'static [&'static str],
    kind: &'static str,
    plural: &'static str,
    short: &'static [&'static str],
    scale: bool,
) -> Resource {
    Resource {
        group,
        versions,
        kind,
        plural,
        short,
        categories: &["cluster-api"],
        scale,
    }
}

impl Resource {
    pub fn storage_version(&self) -> &'static str {
        self.versions[0]
    }
}

/// Where a version ranks (k8s.io/apimachinery pkg/version/helpers.go
/// `CompareKubeAwareVersionStrings`): GA before beta before alpha, then the higher major, then
/// the higher pre-release number; anything else last.
fn version_rank(version: &str) -> (u8, u32, u32) {
    let Some(rest) = version.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let Ok(major) = rest[..digits].parse::<u32>() else {
        return (0, 0, 0);
    };
    let (stage, number) = match &rest[digits..] {
        "" => return (3, major, 0),
        tail if tail.starts_with("beta") => (2, &tail[4..]),
        tail if tail.starts_with("alpha") => (1, &tail[5..]),
        _ => return (0, 0, 0),
    };
    match number.parse::<u32>() {
        Ok(n) => (stage, major, n),
        Err(_) => (0, 0, 0),
    }
}

/// The custom resources one management cluster has installed.
#[derive(Clone)]
pub(crate) struct Installed(Vec<&'static Resource>);

impl Default for Installed {
    fn default() -> Installed {
        Installed(RESOURCES.iter().collect())
    }
}

impl Installed {
    /// The Talos and OpenNebula providers' resources, and with `clusterctl_defaults` the
    /// kubeadm providers' and a second infrastructure provider's beside them.
    pub fn new(clusterctl_defaults: bool) -> Installed {
        let mut all = Installed::default();
        if clusterctl_defaults {
            all.0.extend(CLUSTERCTL_DEFAULTS.iter());
        }
        all
    }

    pub fn all(&self) -> impl Iterator<Item = &'static Resource> + '_ {
        self.0.iter().copied()
    }

    /// The resource served at `group/version` under `plural`.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<&'static Resource> {
        self.all()
            .find(|r| r.group == group && r.plural == plural && r.versions.contains(&version))
    }

    fn groups(&self) -> Vec<&'static str> {
        let mut out: Vec<&str> = Vec::new();
        for r in self.all() {
            if !out.contains(&r.group) {
                out.push(r.group);
            }
        }
        out.push("apiextensions.k8s.io");
        out
    }

    /// Every version any CRD of the group serves, highest first
    /// (k8s.io/apiextensions-apiserver pkg/apiserver/customresource_discovery_controller.go
    /// sorts them so; the first is the group's preferred version).
    fn versions_of(&self, group: &str) -> Vec<&'static str> {
        if group == "apiextensions.k8s.io" {
            return vec!["v1"];
        }
        let mut versions: Vec<&'static str> = Vec::new();
        for r in self.all().filter(|r| r.group == group) {
            for v in r.versions {
                if !versions.contains(v) {
                    versions.push(v);
                }
            }
        }
        versions.sort_by(|a, b| version_rank(b).cmp(&version_rank(a)).then(a.cmp(b)));
        versions
    }

    /// An `APIGroup` as `/apis/GROUP` and the group list show it.
    pub fn api_group(&self, group: &str) -> Option<Value> {
        let versions = self.versions_of(group);
        let preferred = versions.first()?;
        let gv = |v: &str| json!({"groupVersion": format!("{group}/{v}"), "version": v});
        Some(
            json!({"kind": "APIGroup", "apiVersion": "v1", "name": group,
            "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
            "preferredVersion": gv(preferred)}),
        )
    }

    /// The groups the management cluster adds to `/apis`.
    pub fn api_groups(&self) -> Vec<Value> {
        self.groups()
            .into_iter()
            .filter_map(|g| self.api_group(g))
            .collect()
    }

    /// `/apis/GROUP/VERSION`: each resource with its `/status` and, when it scales, `/scale`
    /// (k8s.io/apiextensions-apiserver: a CRD's subresources are listed as `plural/status`).
    pub fn resource_list(&self, group: &str, version: &str) -> Option<Value> {
        resource_list(self.all(), group, version)
    }
}

/// The core `secrets` resource the management cluster adds to `/api/v1` (read only in the sim).
pub(crate) fn secrets_resource() -> Value {
    json!({"name": "secrets", "singularName": "secret", "namespaced": true, "kind": "Secret",
        "verbs": ["get", "list"], "shortNames": []})
}

fn resource_list(
    installed: impl Iterator<Item = &'static Resource>,
    group: &str,
    version: &str,
) -> Option<Value> {
    let verbs = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    let mut resources = Vec::new();
    if group == "apiextensions.k8s.io" && version == "v1" {
        resources.push(json!({"name": "customresourcedefinitions",
            "singularName": "customresourcedefinition", "namespaced": false,
            "kind": "CustomResourceDefinition", "verbs": verbs, "shortNames": ["crd", "crds"],
            "categories": ["api-extensions"]}));
    }
    for r in installed.filter(|r| r.group == group && r.versions.contains(&version)) {
        resources.push(
            json!({"name": r.plural, "singularName": r.kind.to_lowercase(),
            "namespaced": true, "kind": r.kind, "verbs": verbs, "shortNames": r.short,
            "categories": r.categories, "storageVersionHash": ""}),
        );
        resources.push(
            json!({"name": format!("{}/status", r.plural), "singularName": "",
            "namespaced": true, "kind": r.kind, "verbs": ["get", "patch", "update"]}),
        );
        if r.scale {
            resources.push(
                json!({"name": format!("{}/scale", r.plural), "singularName": "",
                "namespaced": true, "group": "autoscaling", "version": "v1", "kind": "Scale",
                "verbs": ["get", "patch", "update"]}),
            );
        }
    }
    if resources.is_empty() {
        return None;
    }
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1",
        "groupVersion": format!("{group}/{version}"), "resources": resources}))
}

/// The CustomResourceDefinition of `r` (apiextensions.k8s.io/v1), with a permissive schema
/// (`x-kubernetes-preserve-unknown-fields`) and the status/scale subresources.
pub(crate) fn crd(r: &Resource, created: &str) -> Value {
    let name = format!("{}.{}", r.plural, r.group);
    let versions: Vec<Value> = r
        .versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut sub = json!({"status": {}});
            if r.scale {
                sub["scale"] = json!({"specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.selector"});
            }
            json!({"name": v, "served": true, "storage": i == 0, "subresources": sub,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}})
        })
        .collect();
    let mut labels = json!({});
    // clusterctl finds a provider's CRDs by this label (cluster-api
    // cmd/clusterctl/client/cluster/components.go) and the contract version by
    // `cluster.x-k8s.io/<contract>: <versions>` (docs/book/src/developer/providers/contracts).
    labels[format!("{CORE}/v1beta2")] = json!(r.versions.join("_"));
    labels[format!("{CORE}/v1beta1")] = json!(r.versions.join("_"));
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name, "uid": super::store::uid_of(&name), "labels": labels,
            "resourceVersion": "1", "creationTimestamp": created},
        "spec": {"group": r.group, "scope": "Namespaced",
            "names": {"plural": r.plural, "singular": r.kind.to_lowercase(), "kind": r.kind,
                "listKind": format!("{}List", r.kind), "shortNames": r.short,
                "categories": r.categories},
            "versions": versions,
            "conversion": {"strategy": if r.versions.len() > 1 { "Webhook" } else { "None" }}},
        "status": {"storedVersions": [r.storage_version()], "acceptedNames": {"plural": r.plural,
            "kind": r.kind}, "conditions": [{"type": "Established", "status": "True",
            "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}]}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_lists_short_names_scale_and_both_core_versions() {
        let installed = Installed::default();
        let core = installed.api_group(CORE).expect("core group");
        assert_eq!(core["preferredVersion"]["version"], "v1beta2");
        assert_eq!(core["versions"].as_array().map(Vec::len), Some(2));
        let list = installed
            .resource_list(CONTROL_PLANE, "v1alpha3")
            .expect("tcp");
        let names: Vec<&str> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "taloscontrolplanes",
                "taloscontrolplanes/status",
                "taloscontrolplanes/scale"
            ]
        );
        assert!(installed.resource_list(CORE, "v1alpha1").is_none());
        assert_eq!(
            installed.find(CORE, "v1beta1", "machines").map(|r| r.kind),
            Some("Machine")
        );
    }

    #[test]
    fn the_kubeadm_providers_make_their_groups_prefer_v1beta2() {
        let talos_only = Installed::default();
        assert_eq!(
            talos_only.api_group(CONTROL_PLANE).expect("group")["preferredVersion"]["version"],
            "v1alpha3"
        );
        let clusterctl = Installed::new(true);
        for group in [CONTROL_PLANE, BOOTSTRAP, INFRASTRUCTURE] {
            let g = clusterctl.api_group(group).expect("group");
            assert_eq!(g["preferredVersion"]["version"], "v1beta2", "{group}");
        }
        let versions: Vec<String> = clusterctl.api_group(CONTROL_PLANE).expect("group")["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["version"].as_str().map(String::from))
            .collect();
        assert_eq!(versions, ["v1beta2", "v1beta1", "v1alpha3"]);
        // The preferred version's list has no TalosControlPlane; v1alpha3's has.
        let kinds = |v: &str| -> Vec<String> {
            clusterctl.resource_list(CONTROL_PLANE, v).expect("list")["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["kind"].as_str().map(String::from))
                .collect()
        };
        assert!(!kinds("v1beta2").contains(&"TalosControlPlane".to_string()));
        assert!(kinds("v1alpha3").contains(&"TalosControlPlane".to_string()));
        assert!(version_rank("v1") > version_rank("v1beta2"));
        assert!(version_rank("v2alpha1") < version_rank("v1beta1"));
    }
}
