//! The CAPI and Talos-provider resources the management cluster serves: one table (group,
//! versions, kind, plural, short names, categories, subresources) from which API discovery and
//! the CustomResourceDefinition objects are both built, so they cannot disagree.
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

/// The resource served at `group/version` under `plural`.
pub(crate) fn find(group: &str, version: &str, plural: &str) -> Option<&'static Resource> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.plural == plural && r.versions.contains(&version))
}

impl Resource {
    pub fn storage_version(&self) -> &'static str {
        self.versions[0]
    }
}

fn groups() -> Vec<&'static str> {
    let mut out: Vec<&str> = Vec::new();
    for r in RESOURCES {
        if !out.contains(&r.group) {
            out.push(r.group);
        }
    }
    out.push("apiextensions.k8s.io");
    out
}

fn versions_of(group: &str) -> &'static [&'static str] {
    if group == "apiextensions.k8s.io" {
        return &["v1"];
    }
    RESOURCES
        .iter()
        .find(|r| r.group == group)
        .map(|r| r.versions)
        .unwrap_or(&[])
}

/// An `APIGroup` as `/apis/GROUP` and the group list show it; the storage version is preferred.
pub(crate) fn api_group(group: &str) -> Option<Value> {
    let versions = versions_of(group);
    let preferred = versions.first()?;
    let gv = |v: &str| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    Some(
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": group,
        "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
        "preferredVersion": gv(preferred)}),
    )
}

/// The core `secrets` resource the management cluster adds to `/api/v1` (read only in the sim).
pub(crate) fn secrets_resource() -> Value {
    json!({"name": "secrets", "singularName": "secret", "namespaced": true, "kind": "Secret",
        "verbs": ["get", "list"], "shortNames": []})
}

/// The groups the management cluster adds to `/apis`.
pub(crate) fn api_groups() -> Vec<Value> {
    groups().into_iter().filter_map(api_group).collect()
}

/// `/apis/GROUP/VERSION`: each resource with its `/status` and, when it scales, `/scale`
/// (k8s.io/apiextensions-apiserver: a CRD's subresources are listed as `plural/status`).
pub(crate) fn resource_list(group: &str, version: &str) -> Option<Value> {
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
    for r in RESOURCES
        .iter()
        .filter(|r| r.group == group && r.versions.contains(&version))
    {
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
        let core = api_group(CORE).expect("core group");
        assert_eq!(core["preferredVersion"]["version"], "v1beta2");
        assert_eq!(core["versions"].as_array().map(Vec::len), Some(2));
        let list = resource_list(CONTROL_PLANE, "v1alpha3").expect("tcp");
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
        assert!(resource_list(CORE, "v1alpha1").is_none());
        assert_eq!(
            find(CORE, "v1beta1", "machines").map(|r| r.kind),
            Some("Machine")
        );
    }
}
