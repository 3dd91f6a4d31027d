//! The one table of Kubernetes API versions removed per release (from the
//! Kubernetes deprecation guide and Talos's upgrade checks), and which of them
//! an upgrade from one minor to another crosses.
use serde::Serialize;

/// An API version of a resource that stops being served in `removed_in`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RemovedApi {
    /// Kubernetes minor (1.x) in which it is no longer served.
    pub removed_in: u32,
    /// Empty for the core group.
    pub group: &'static str,
    pub version: &'static str,
    pub resource: &'static str,
    /// Where to move the objects.
    pub replacement: &'static str,
}

const fn api(
    removed_in: u32,
    group: &'static str,
    version: &'static str,
    resource: &'static str,
    replacement: &'static str,
) -> RemovedApi {
    RemovedApi {
        removed_in,
        group,
        version,
        resource,
        replacement,
    }
}

pub const REMOVED_APIS: &[RemovedApi] = &[
    api(
        22,
        "admissionregistration.k8s.io",
        "v1beta1",
        "mutatingwebhookconfigurations",
        "admissionregistration.k8s.io/v1",
    ),
    api(
        22,
        "admissionregistration.k8s.io",
        "v1beta1",
        "validatingwebhookconfigurations",
        "admissionregistration.k8s.io/v1",
    ),
    api(
        22,
        "apiextensions.k8s.io",
        "v1beta1",
        "customresourcedefinitions",
        "apiextensions.k8s.io/v1",
    ),
    api(
        22,
        "apiregistration.k8s.io",
        "v1beta1",
        "apiservices",
        "apiregistration.k8s.io/v1",
    ),
    api(
        22,
        "certificates.k8s.io",
        "v1beta1",
        "certificatesigningrequests",
        "certificates.k8s.io/v1",
    ),
    api(
        22,
        "coordination.k8s.io",
        "v1beta1",
        "leases",
        "coordination.k8s.io/v1",
    ),
    api(
        22,
        "extensions",
        "v1beta1",
        "ingresses",
        "networking.k8s.io/v1",
    ),
    api(
        22,
        "networking.k8s.io",
        "v1beta1",
        "ingresses",
        "networking.k8s.io/v1",
    ),
    api(
        22,
        "networking.k8s.io",
        "v1beta1",
        "ingressclasses",
        "networking.k8s.io/v1",
    ),
    api(
        22,
        "rbac.authorization.k8s.io",
        "v1beta1",
        "clusterroles",
        "rbac.authorization.k8s.io/v1",
    ),
    api(
        22,
        "rbac.authorization.k8s.io",
        "v1beta1",
        "clusterrolebindings",
        "rbac.authorization.k8s.io/v1",
    ),
    api(
        22,
        "rbac.authorization.k8s.io",
        "v1beta1",
        "roles",
        "rbac.authorization.k8s.io/v1",
    ),
    api(
        22,
        "rbac.authorization.k8s.io",
        "v1beta1",
        "rolebindings",
        "rbac.authorization.k8s.io/v1",
    ),
    api(
        22,
        "scheduling.k8s.io",
        "v1beta1",
        "priorityclasses",
        "scheduling.k8s.io/v1",
    ),
    api(
        22,
        "storage.k8s.io",
        "v1beta1",
        "csidrivers",
        "storage.k8s.io/v1",
    ),
    api(
        22,
        "storage.k8s.io",
        "v1beta1",
        "csinodes",
        "storage.k8s.io/v1",
    ),
    api(
        22,
        "storage.k8s.io",
        "v1beta1",
        "storageclasses",
        "storage.k8s.io/v1",
    ),
    api(
        22,
        "storage.k8s.io",
        "v1beta1",
        "volumeattachments",
        "storage.k8s.io/v1",
    ),
    api(25, "batch", "v1beta1", "cronjobs", "batch/v1"),
    api(
        25,
        "discovery.k8s.io",
        "v1beta1",
        "endpointslices",
        "discovery.k8s.io/v1",
    ),
    api(25, "events.k8s.io", "v1beta1", "events", "events.k8s.io/v1"),
    api(
        25,
        "autoscaling",
        "v2beta1",
        "horizontalpodautoscalers",
        "autoscaling/v2",
    ),
    api(25, "policy", "v1beta1", "poddisruptionbudgets", "policy/v1"),
    api(
        25,
        "policy",
        "v1beta1",
        "podsecuritypolicies",
        "Pod Security Admission",
    ),
    api(
        25,
        "node.k8s.io",
        "v1beta1",
        "runtimeclasses",
        "node.k8s.io/v1",
    ),
    api(
        26,
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        "flowschemas",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    api(
        26,
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        "prioritylevelconfigurations",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    api(
        26,
        "autoscaling",
        "v2beta2",
        "horizontalpodautoscalers",
        "autoscaling/v2",
    ),
    api(
        27,
        "storage.k8s.io",
        "v1beta1",
        "csistoragecapacities",
        "storage.k8s.io/v1",
    ),
    api(
        29,
        "flowcontrol.apiserver.k8s.io",
        "v1beta2",
        "flowschemas",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    api(
        29,
        "flowcontrol.apiserver.k8s.io",
        "v1beta2",
        "prioritylevelconfigurations",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    api(
        29,
        "networking.k8s.io",
        "v1alpha1",
        "clustercidrs",
        "none (feature removed)",
    ),
    api(
        32,
        "flowcontrol.apiserver.k8s.io",
        "v1beta3",
        "flowschemas",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    api(
        32,
        "flowcontrol.apiserver.k8s.io",
        "v1beta3",
        "prioritylevelconfigurations",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    api(
        32,
        "resource.k8s.io",
        "v1alpha3",
        "podschedulingcontexts",
        "none (feature removed)",
    ),
    api(
        37,
        "scheduling.k8s.io",
        "v1alpha2",
        "workloads",
        "scheduling.k8s.io (newer version)",
    ),
    api(
        37,
        "scheduling.k8s.io",
        "v1alpha2",
        "podgroups",
        "scheduling.k8s.io (newer version)",
    ),
];

impl RemovedApi {
    /// The list path, e.g. `/apis/batch/v1beta1/cronjobs`.
    pub fn list_path(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}/{}", self.version, self.resource)
        } else {
            format!("/apis/{}/{}/{}", self.group, self.version, self.resource)
        }
    }

    /// `cronjobs.v1beta1.batch`, as Talos's checks print it.
    pub fn name(&self) -> String {
        if self.group.is_empty() {
            format!("{}.{}", self.resource, self.version)
        } else {
            format!("{}.{}.{}", self.resource, self.version, self.group)
        }
    }
}

/// The Kubernetes minor of a version string: `v1.34.1` → 34.
pub fn minor_of(version: &str) -> Option<u32> {
    let mut parts = version.trim().trim_start_matches('v').split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}

/// API versions that stop being served somewhere in (from, to].
pub fn removed_between(from_minor: u32, to_minor: u32) -> Vec<&'static RemovedApi> {
    REMOVED_APIS
        .iter()
        .filter(|r| r.removed_in > from_minor && r.removed_in <= to_minor)
        .collect()
}

/// How many objects are still stored in one removed API version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RemovedApiCount {
    pub api: String,
    pub removed_in: String,
    pub replacement: String,
    pub count: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minors() {
        assert_eq!(minor_of("v1.34.1"), Some(34));
        assert_eq!(minor_of("1.35.0"), Some(35));
        assert_eq!(minor_of("v2.0.0"), None);
        assert_eq!(minor_of("garbage"), None);
    }

    #[test]
    fn crossing_releases() {
        let names: Vec<String> = removed_between(31, 32).iter().map(|r| r.name()).collect();
        assert!(names.contains(&"flowschemas.v1beta3.flowcontrol.apiserver.k8s.io".to_string()));
        assert!(!names.iter().any(|n| n.contains("v1beta2")));
        assert!(removed_between(34, 34).is_empty());
        assert_eq!(removed_between(24, 25).len(), 7);
    }

    #[test]
    fn paths() {
        assert_eq!(
            REMOVED_APIS[0].list_path(),
            "/apis/admissionregistration.k8s.io/v1beta1/mutatingwebhookconfigurations"
        );
    }
}
