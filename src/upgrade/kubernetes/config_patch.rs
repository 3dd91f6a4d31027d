//! Patching one image field of a node's machine config, as `talosctl upgrade-k8s` does with its
//! stdpatches: `cluster.apiServer.image`, `cluster.controllerManager.image`,
//! `cluster.scheduler.image`, `cluster.proxy.image` or `machine.kubelet.image`, in the v1alpha1
//! document of a (possibly multi-document) config. Pure text in, text out.
use serde_json::{Map, Value};

use super::plan::Component;
use crate::versions::KubeVersion;

/// Why a config could not be patched; names the node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigPatchError {
    #[error("{node}: the machine config does not parse: {reason}")]
    Parse { node: String, reason: String },
    #[error("{node}: the machine config has no v1alpha1 document (no `machine` section)")]
    NoV1Alpha1 { node: String },
    #[error("{node}: cannot write the patched machine config: {reason}")]
    Encode { node: String, reason: String },
}

/// The outcome of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchedConfig {
    /// The image the field had, if any.
    pub old_image: Option<String>,
    pub new_image: String,
    /// The whole config with the field changed; `None` when it already had the new image.
    pub text: Option<String>,
}

/// The image field of `component` in a config's documents, if set.
pub fn current_image(docs: &[Value], component: Component) -> Option<String> {
    let (section, key) = component.config_path();
    docs.iter()
        .find(|d| d.get("machine").is_some())
        .and_then(|d| d[section][key]["image"].as_str())
        .map(str::to_string)
}

/// The repository part of an image reference (`registry.k8s.io/kube-apiserver:v1.34.1` →
/// `registry.k8s.io/kube-apiserver`), keeping a registry port.
pub fn image_repository(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    let slash = without_digest.rfind('/').map_or(0, |i| i + 1);
    match without_digest[slash..].find(':') {
        Some(colon) => &without_digest[..slash + colon],
        None => without_digest,
    }
}

/// The new image for `component`: the repository the node already uses (a mirror stays a
/// mirror), else talosctl's default, tagged with `target`. The kubelet keeps a suffix of its
/// current tag (`v1.34.1-custom` → `v1.35.0-custom`), as upstream does.
pub fn new_image(current: Option<&str>, component: Component, target: &KubeVersion) -> String {
    let repository = current
        .map(image_repository)
        .filter(|r| !r.is_empty())
        .unwrap_or(component.default_repository());
    let mut tag = target.to_string();
    if component == Component::Kubelet
        && let Some(current) = current
    {
        let current_tag = current
            .split('@')
            .next()
            .unwrap_or(current)
            .rsplit('/')
            .next()
            .and_then(|last| last.split_once(':'))
            .map(|(_, t)| t)
            .unwrap_or("");
        if let Some((_, suffix)) = current_tag.split_once('-')
            && target.pre.is_none()
        {
            tag = format!("{tag}-{suffix}");
        }
    }
    format!("{repository}:{tag}")
}

/// Sets `component`'s image for `target` in `config` (the text the MachineConfig resource holds).
pub fn patch_image(
    node: &str,
    config: &str,
    component: Component,
    target: &KubeVersion,
) -> Result<PatchedConfig, ConfigPatchError> {
    let mut docs: Vec<Value> =
        serde_saphyr::from_str_multiple(config).map_err(|e| ConfigPatchError::Parse {
            node: node.to_string(),
            reason: e.to_string(),
        })?;
    let old_image = current_image(&docs, component);
    let image = new_image(old_image.as_deref(), component, target);
    if old_image.as_deref() == Some(image.as_str()) {
        return Ok(PatchedConfig {
            old_image,
            new_image: image,
            text: None,
        });
    }
    let doc = docs
        .iter_mut()
        .find(|d| d.get("machine").is_some())
        .ok_or_else(|| ConfigPatchError::NoV1Alpha1 {
            node: node.to_string(),
        })?;
    let (section, key) = component.config_path();
    let field = object_at(object_at(doc, section), key);
    if let Value::Object(map) = field {
        map.insert("image".to_string(), Value::String(image.clone()));
    }
    let mut text = String::new();
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            text.push_str("---\n");
        }
        let encoded = serde_saphyr::to_string(d).map_err(|e| ConfigPatchError::Encode {
            node: node.to_string(),
            reason: e.to_string(),
        })?;
        text.push_str(&encoded);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    Ok(PatchedConfig {
        old_image,
        new_image: image,
        text: Some(text),
    })
}

/// `value[key]` as an object, created (or replaced when it is not one).
fn object_at<'a>(value: &'a mut Value, key: &str) -> &'a mut Value {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    // Indexing an object by a missing key inserts null, which is replaced below.
    let entry = &mut value[key];
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::versions::Version;

    const CONFIG: &str = "version: v1alpha1\nmachine:\n  type: controlplane\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.34.1\n    extraArgs:\n      rotate-server-certificates: \"true\"\ncluster:\n  clusterName: lab\n  apiServer:\n    image: registry.k8s.io/kube-apiserver:v1.34.1\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: cp-1\n";

    fn v(text: &str) -> KubeVersion {
        Version::parse(text).expect("version")
    }

    fn reparse(text: &str) -> Vec<Value> {
        serde_saphyr::from_str_multiple(text).expect("patched config parses")
    }

    #[test]
    fn patches_the_apiserver_image_and_keeps_the_rest() {
        let patched =
            patch_image("cp-1", CONFIG, Component::KubeApiserver, &v("1.35.0")).expect("patch");
        assert_eq!(
            patched.old_image.as_deref(),
            Some("registry.k8s.io/kube-apiserver:v1.34.1")
        );
        let docs = reparse(patched.text.as_deref().expect("changed"));
        assert_eq!(docs.len(), 2);
        assert_eq!(
            docs[0]["cluster"]["apiServer"]["image"],
            "registry.k8s.io/kube-apiserver:v1.35.0"
        );
        assert_eq!(
            docs[0]["machine"]["kubelet"]["extraArgs"]["rotate-server-certificates"],
            "true"
        );
        assert_eq!(docs[0]["cluster"]["clusterName"], "lab");
        assert_eq!(docs[1]["hostname"], "cp-1");
    }

    #[test]
    fn adds_a_missing_field_with_the_default_repository() {
        let patched =
            patch_image("cp-1", CONFIG, Component::KubeScheduler, &v("1.35.0")).expect("patch");
        assert_eq!(patched.old_image, None);
        let docs = reparse(patched.text.as_deref().expect("changed"));
        assert_eq!(
            docs[0]["cluster"]["scheduler"]["image"],
            "registry.k8s.io/kube-scheduler:v1.35.0"
        );
    }

    #[test]
    fn same_image_is_no_change() {
        let patched = patch_image("cp-1", CONFIG, Component::Kubelet, &v("1.34.1")).expect("patch");
        assert_eq!(patched.text, None);
    }

    #[test]
    fn mirrors_and_kubelet_suffixes_are_kept() {
        assert_eq!(
            new_image(
                Some("mirror.local:5000/kube-apiserver:v1.34.1"),
                Component::KubeApiserver,
                &v("1.35.0")
            ),
            "mirror.local:5000/kube-apiserver:v1.35.0"
        );
        assert_eq!(
            new_image(
                Some("ghcr.io/siderolabs/kubelet:v1.34.1-custom"),
                Component::Kubelet,
                &v("1.35.0")
            ),
            "ghcr.io/siderolabs/kubelet:v1.35.0-custom"
        );
        assert_eq!(
            image_repository("localhost:5000/kubelet"),
            "localhost:5000/kubelet"
        );
    }

    #[test]
    fn bad_configs_are_named() {
        let err = patch_image("cp-9", "machine: [", Component::Kubelet, &v("1.35.0"))
            .expect_err("parse error");
        assert!(
            err.to_string()
                .starts_with("cp-9: the machine config does not parse")
        );
        let err = patch_image(
            "cp-9",
            "version: v1alpha1\n",
            Component::Kubelet,
            &v("1.35.0"),
        )
        .expect_err("no machine");
        assert!(matches!(err, ConfigPatchError::NoV1Alpha1 { .. }));
    }
}
