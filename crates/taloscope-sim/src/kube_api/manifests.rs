//! The bootstrap manifests Talos puts into the API (the kube-proxy DaemonSet): created once from
//! the config the cluster booted with and never updated by Talos afterwards; only a client's
//! patch through the API changes it (then its pods roll to the new image).
use serde_json::Value;

/// The kube-proxy DaemonSet as stored in the API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KubeProxyDaemonSet {
    pub image: String,
    /// `metadata.generation`: bumped by every spec change.
    pub generation: u64,
}

impl KubeProxyDaemonSet {
    /// Created from the boot-time config's `cluster.proxy.image`. Talos's manifest applier
    /// creates missing objects and skips existing ones
    /// (siderolabs/talos internal/app/machined/pkg/controllers/k8s/manifest_apply.go: an
    /// object found on the server is left alone), so a later config change never reaches it.
    pub fn created(version: &str) -> KubeProxyDaemonSet {
        KubeProxyDaemonSet {
            image: format!("registry.k8s.io/kube-proxy:{version}"),
            generation: 1,
        }
    }

    /// Applies a client's patch of the kube-proxy container's image: a merge or strategic-merge
    /// patch of `spec.template.spec.containers[name=kube-proxy].image`, or a JSON patch of
    /// `/spec/template/spec/containers/<i>/image`. Anything else is refused.
    pub fn patch(&mut self, body: &[u8]) -> Result<(), String> {
        let patch: Value =
            serde_json::from_slice(body).map_err(|_| "patch body is not JSON".to_string())?;
        let image = match &patch {
            Value::Array(ops) => ops
                .iter()
                .find(|op| {
                    op["path"].as_str().is_some_and(|p| {
                        p.starts_with("/spec/template/spec/containers/") && p.ends_with("/image")
                    })
                })
                .and_then(|op| op["value"].as_str()),
            _ => patch["spec"]["template"]["spec"]["containers"]
                .as_array()
                .and_then(|containers| {
                    containers
                        .iter()
                        .find(|c| c["name"] == "kube-proxy")
                        .or(containers.first())
                })
                .and_then(|c| c["image"].as_str()),
        };
        let image = image.ok_or("the sim only patches the kube-proxy container's image")?;
        if image != self.image {
            self.image = image.to_string();
            self.generation += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_patch_changes_the_image() {
        let mut ds = KubeProxyDaemonSet::created("v1.34.1");
        assert_eq!(ds.image, "registry.k8s.io/kube-proxy:v1.34.1");
        let merge = br#"{"spec":{"template":{"spec":{"containers":[{"name":"kube-proxy","image":"registry.k8s.io/kube-proxy:v1.34.2"}]}}}}"#;
        ds.patch(merge).unwrap();
        assert_eq!(ds.image, "registry.k8s.io/kube-proxy:v1.34.2");
        assert_eq!(ds.generation, 2);
        let json = br#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.k8s.io/kube-proxy:v1.35.0"}]"#;
        ds.patch(json).unwrap();
        assert_eq!(ds.image, "registry.k8s.io/kube-proxy:v1.35.0");
        assert_eq!(ds.generation, 3);
        assert!(ds.patch(br#"{"metadata":{"labels":{"a":"b"}}}"#).is_err());
    }
}
