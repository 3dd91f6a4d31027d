//! The API versions Kubernetes stopped serving, as the sim knows them: a scenario names objects
//! stored in them (`flowschemas.v1beta3.flowcontrol.apiserver.k8s.io`) and the API sim lists
//! them at their old path. From the Deprecated API Migration Guide, kubernetes/website
//! `content/en/docs/reference/using-api/deprecation-guide.md` ("Removed APIs by release").

/// One group/version of one resource that a release no longer serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RemovedVersion {
    /// Empty for the core group.
    group: &'static str,
    version: &'static str,
    resource: &'static str,
}

/// Release by release (the release that stopped serving them in each comment), as the guide
/// lists them.
const REMOVED_VERSIONS: &[RemovedVersion] = &[
    // v1.32: flow control v1beta3.
    removed("flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas"),
    removed(
        "flowcontrol.apiserver.k8s.io",
        "v1beta3",
        "prioritylevelconfigurations",
    ),
    // v1.29: flow control v1beta2.
    removed("flowcontrol.apiserver.k8s.io", "v1beta2", "flowschemas"),
    removed(
        "flowcontrol.apiserver.k8s.io",
        "v1beta2",
        "prioritylevelconfigurations",
    ),
    // v1.27: CSIStorageCapacity.
    removed("storage.k8s.io", "v1beta1", "csistoragecapacities"),
    // v1.26: flow control v1beta1, HorizontalPodAutoscaler v2beta2.
    removed("flowcontrol.apiserver.k8s.io", "v1beta1", "flowschemas"),
    removed(
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        "prioritylevelconfigurations",
    ),
    removed("autoscaling", "v2beta2", "horizontalpodautoscalers"),
    // v1.25: CronJob, EndpointSlice, Event, HorizontalPodAutoscaler v2beta1,
    // PodDisruptionBudget, PodSecurityPolicy, RuntimeClass.
    removed("batch", "v1beta1", "cronjobs"),
    removed("discovery.k8s.io", "v1beta1", "endpointslices"),
    removed("events.k8s.io", "v1beta1", "events"),
    removed("autoscaling", "v2beta1", "horizontalpodautoscalers"),
    removed("policy", "v1beta1", "poddisruptionbudgets"),
    removed("policy", "v1beta1", "podsecuritypolicies"),
    removed("node.k8s.io", "v1beta1", "runtimeclasses"),
    // v1.22: the v1beta1 webhook, CRD, APIService, CSR, Lease, Ingress, IngressClass, RBAC,
    // PriorityClass and storage resources (reviews are not stored, so they are not here).
    removed(
        "admissionregistration.k8s.io",
        "v1beta1",
        "mutatingwebhookconfigurations",
    ),
    removed(
        "admissionregistration.k8s.io",
        "v1beta1",
        "validatingwebhookconfigurations",
    ),
    removed(
        "apiextensions.k8s.io",
        "v1beta1",
        "customresourcedefinitions",
    ),
    removed("apiregistration.k8s.io", "v1beta1", "apiservices"),
    removed(
        "certificates.k8s.io",
        "v1beta1",
        "certificatesigningrequests",
    ),
    removed("coordination.k8s.io", "v1beta1", "leases"),
    removed("extensions", "v1beta1", "ingresses"),
    removed("networking.k8s.io", "v1beta1", "ingresses"),
    removed("networking.k8s.io", "v1beta1", "ingressclasses"),
    removed("rbac.authorization.k8s.io", "v1beta1", "clusterroles"),
    removed(
        "rbac.authorization.k8s.io",
        "v1beta1",
        "clusterrolebindings",
    ),
    removed("rbac.authorization.k8s.io", "v1beta1", "roles"),
    removed("rbac.authorization.k8s.io", "v1beta1", "rolebindings"),
    removed("scheduling.k8s.io", "v1beta1", "priorityclasses"),
    removed("storage.k8s.io", "v1beta1", "csidrivers"),
    removed("storage.k8s.io", "v1beta1", "csinodes"),
    removed("storage.k8s.io", "v1beta1", "storageclasses"),
    removed("storage.k8s.io", "v1beta1", "volumeattachments"),
    // v1.16: the extensions/v1beta1 and apps/v1beta1, v1beta2 workload and network resources.
    removed("extensions", "v1beta1", "networkpolicies"),
    removed("extensions", "v1beta1", "daemonsets"),
    removed("apps", "v1beta2", "daemonsets"),
    removed("extensions", "v1beta1", "deployments"),
    removed("apps", "v1beta1", "deployments"),
    removed("apps", "v1beta2", "deployments"),
    removed("apps", "v1beta1", "statefulsets"),
    removed("apps", "v1beta2", "statefulsets"),
    removed("extensions", "v1beta1", "replicasets"),
    removed("apps", "v1beta1", "replicasets"),
    removed("apps", "v1beta2", "replicasets"),
];

const fn removed(
    group: &'static str,
    version: &'static str,
    resource: &'static str,
) -> RemovedVersion {
    RemovedVersion {
        group,
        version,
        resource,
    }
}

impl RemovedVersion {
    /// `resource.version.group` (`resource.version` in the core group), the name
    /// `kubectl api-resources` and Talos's pre-upgrade checks give it.
    fn qualified_name(&self) -> String {
        [self.resource, self.version, self.group]
            .iter()
            .filter(|part| !part.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(".")
    }

    /// Where its objects were listed: `/apis/GROUP/VERSION/RESOURCE`, `/api/VERSION/RESOURCE`
    /// in the core group.
    fn list_path(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}/{}", self.version, self.resource)
        } else {
            format!("/apis/{}/{}/{}", self.group, self.version, self.resource)
        }
    }
}

/// The list path of a removed version named `resource.version.group`, if it is one.
pub(crate) fn list_path_of(qualified_name: &str) -> Option<String> {
    REMOVED_VERSIONS
        .iter()
        .find(|removed| removed.qualified_name() == qualified_name)
        .map(RemovedVersion::list_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_their_old_list_paths() {
        assert_eq!(
            list_path_of("flowschemas.v1beta3.flowcontrol.apiserver.k8s.io").as_deref(),
            Some("/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas")
        );
        assert_eq!(
            list_path_of("flowschemas.v1.flowcontrol.apiserver.k8s.io"),
            None
        );
        assert_eq!(
            list_path_of("cronjobs.v1beta1.batch").as_deref(),
            Some("/apis/batch/v1beta1/cronjobs")
        );
    }

    #[test]
    fn every_entry_is_listed_once() {
        let mut names: Vec<String> = REMOVED_VERSIONS
            .iter()
            .map(|r| r.qualified_name())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), REMOVED_VERSIONS.len());
        assert_eq!(removed("", "v1", "x").list_path(), "/api/v1/x");
    }
}
