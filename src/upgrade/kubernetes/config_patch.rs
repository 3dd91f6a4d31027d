//! Patching one image field of a node's machine config, as `talosctl upgrade-k8s` does with its
//! stdpatches: the `image` of the component's own document when the config has one (Talos
//! 1.14's `KubeAPIServerConfig`, `KubeControllerManagerConfig`, `KubeSchedulerConfig`,
//! `KubeProxyConfig`, `KubeletConfig`; stdpatches/guess.go at v1.14.0-rc.1), else
//! `cluster.apiServer.image`, `cluster.controllerManager.image`, `cluster.scheduler.image`,
//! `cluster.proxy.image` or `machine.kubelet.image` in the v1alpha1 document. Pure text in,
//! text out, and lossless: the one scalar changes, every other byte (comments, anchors, `0644`,
//! `on`, quoting) stays.
use std::str::FromStr;

use yaml_edit::{Document, Mapping, YamlFile};

use super::plan::Component;
use crate::versions::KubeVersion;

/// Why a config could not be patched; names the node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigPatchError {
    #[error("{node}: the machine config does not parse: {reason}")]
    Parse { node: String, reason: String },
    #[error("{node}: the machine config has no v1alpha1 document (no `machine` section)")]
    NoV1Alpha1 { node: String },
    #[error("{node}: cannot add `{path}` to the machine config")]
    Edit { node: String, path: String },
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

/// The image field of `component` in a machine config's text, if set.
pub fn current_image(
    node: &str,
    config: &str,
    component: Component,
) -> Result<Option<String>, ConfigPatchError> {
    let file = parse(node, config)?;
    if let Some(doc) = component_document(&file, component) {
        return Ok(document_image(&doc));
    }
    let doc = v1alpha1(node, &file)?;
    Ok(image_of(&doc, component))
}

/// The component's own document (Talos 1.14+), if the config has one.
fn component_document(file: &YamlFile, component: Component) -> Option<Document> {
    file.documents().find(|d| {
        d.get("kind")
            .and_then(|k| k.as_scalar().map(|s| s.as_string()))
            .is_some_and(|kind| kind == component.document_kind())
    })
}

fn document_image(doc: &Document) -> Option<String> {
    doc.get("image")?.as_scalar().map(|s| s.as_string())
}

fn parse(node: &str, config: &str) -> Result<YamlFile, ConfigPatchError> {
    YamlFile::from_str(config).map_err(|e| ConfigPatchError::Parse {
        node: node.to_string(),
        reason: e.to_string(),
    })
}

/// The v1alpha1 document: the one with a `machine` section.
fn v1alpha1(node: &str, file: &YamlFile) -> Result<Document, ConfigPatchError> {
    file.documents()
        .find(|d| d.get("machine").is_some())
        .ok_or_else(|| ConfigPatchError::NoV1Alpha1 {
            node: node.to_string(),
        })
}

fn image_of(doc: &Document, component: Component) -> Option<String> {
    let (section, key) = component.config_path();
    let image = doc.get_mapping(section)?.get_mapping(key)?.get("image")?;
    image.as_scalar().map(|s| s.as_string())
}

/// `mapping[key]` as a block mapping, added when missing.
fn mapping_at(mapping: &Mapping, key: &str) -> Option<Mapping> {
    if let Some(found) = mapping.get_mapping(key) {
        return Some(found);
    }
    mapping.set(key, Mapping::new());
    mapping.get_mapping(key)
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

/// The kubelet image flavours a new tag keeps.
const KUBELET_FLAVOURS: [&str; 2] = ["fat", "slim"];

/// The new image for `component`: the repository the node already uses (a mirror stays a
/// mirror), else talosctl's default, tagged with `target`. The kubelet keeps the `-fat` or
/// `-slim` flavour of its current tag (`v1.34.1-fat` → `v1.35.0-fat`) and nothing else, as
/// upstream's kubelet image rule does (pkg/cluster/kubernetes/kubelet.go).
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
        // Upstream: `strings.HasSuffix(imageRef, "-fat")`, then `-slim`
        // (pkg/cluster/kubernetes/kubelet.go, extractKubeletVersionSuffix).
        if let Some(flavour) = KUBELET_FLAVOURS.iter().find(|f| {
            current_tag
                .strip_suffix(**f)
                .is_some_and(|t| t.ends_with('-'))
        }) {
            tag = format!("{tag}-{flavour}");
        }
    }
    format!("{repository}:{tag}")
}

/// Sets `component`'s image for `target` in `config` (the text the MachineConfig resource
/// holds), editing only that scalar in a lossless YAML tree (yaml-edit), as upstream's
/// stdpatches edit one key (pkg/cluster/kubernetes/talos_managed.go, patchNodeConfig).
pub fn patch_image(
    node: &str,
    config: &str,
    component: Component,
    target: &KubeVersion,
) -> Result<PatchedConfig, ConfigPatchError> {
    let file = parse(node, config)?;
    let own = component_document(&file, component);
    let v1alpha1_doc = match own {
        Some(_) => None,
        None => Some(v1alpha1(node, &file)?),
    };
    let old_image = match (&own, &v1alpha1_doc) {
        (Some(doc), _) => document_image(doc),
        (None, Some(doc)) => image_of(doc, component),
        (None, None) => None,
    };
    let image = new_image(old_image.as_deref(), component, target);
    if old_image.as_deref() == Some(image.as_str()) {
        return Ok(PatchedConfig {
            old_image,
            new_image: image,
            text: None,
        });
    }
    let field = match (own, v1alpha1_doc) {
        (Some(doc), _) => doc.as_mapping().ok_or_else(|| ConfigPatchError::Edit {
            node: node.to_string(),
            path: format!("{}.image", component.document_kind()),
        })?,
        (None, doc) => {
            let root =
                doc.and_then(|d| d.as_mapping())
                    .ok_or_else(|| ConfigPatchError::NoV1Alpha1 {
                        node: node.to_string(),
                    })?;
            let (section, key) = component.config_path();
            mapping_at(&root, section)
                .and_then(|m| mapping_at(&m, key))
                .ok_or_else(|| ConfigPatchError::Edit {
                    node: node.to_string(),
                    path: format!("{section}.{key}.image"),
                })?
        }
    };
    field.set("image", image.as_str());
    Ok(PatchedConfig {
        old_image,
        new_image: image,
        text: Some(file.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::versions::Version;

    const CONFIG: &str = "version: v1alpha1\nmachine:\n  type: controlplane\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.34.1\n    extraArgs:\n      rotate-server-certificates: \"true\"\ncluster:\n  clusterName: lab\n  apiServer:\n    image: registry.k8s.io/kube-apiserver:v1.34.1\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: cp-1\n";

    fn v(text: &str) -> KubeVersion {
        Version::parse(text).expect("version")
    }

    fn reparse(text: &str) -> Vec<serde_json::Value> {
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

    /// A Talos 1.14 config keeps each image in the component's own document; that one changes
    /// and no v1alpha1 field is added (stdpatches.go `WithKubeAPIServerImage` etc. at
    /// v1.14.0-rc.1).
    #[test]
    fn a_v1_14_config_is_patched_in_the_components_document() {
        let config = "version: v1alpha1\nmachine:\n  type: controlplane\ncluster:\n  token: a.b\n---\napiVersion: v1alpha1\nkind: KubeletConfig\nimage: ghcr.io/siderolabs/kubelet:v1.37.0\nconfig: {}\n---\napiVersion: v1alpha1\nkind: KubeAPIServerConfig\nimage: registry.k8s.io/kube-apiserver:v1.37.0\n";
        let apiserver =
            patch_image("cp-1", config, Component::KubeApiserver, &v("1.37.1")).expect("patch");
        assert_eq!(
            apiserver.old_image.as_deref(),
            Some("registry.k8s.io/kube-apiserver:v1.37.0")
        );
        let text = apiserver.text.expect("changed");
        let docs = reparse(&text);
        assert_eq!(docs[2]["image"], "registry.k8s.io/kube-apiserver:v1.37.1");
        assert!(docs[0]["cluster"].get("apiServer").is_none(), "{text}");
        assert_eq!(
            text,
            config.replace("kube-apiserver:v1.37.0", "kube-apiserver:v1.37.1")
        );
        let kubelet = current_image("cp-1", config, Component::Kubelet).expect("read");
        assert_eq!(
            kubelet.as_deref(),
            Some("ghcr.io/siderolabs/kubelet:v1.37.0")
        );
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

    /// Everything but the one image line survives byte for byte: octal-looking modes, YAML 1.1
    /// booleans, leading zeros, quoting, comments, anchors and the other documents.
    #[test]
    fn the_patch_changes_only_the_image_line() {
        let config = r#"# machine config, written by hand
version: v1alpha1 # the version
machine:
  type: controlplane
  files:
    - content: |
        hello
      permissions: 0644
      path: /var/etc/x # comment
      op: create
  sysctls:
    a: "on"
    b: on
    c: yes
  kubelet:
    image: ghcr.io/siderolabs/kubelet:v1.34.1 # pinned
    extraArgs: &args
      rotate: "true"
  install:
    serial: 012345
cluster:
  apiServer:
    image: registry.k8s.io/kube-apiserver:v1.34.1 # api
    certSANs: [a, 'b']
    extraArgs: *args
---
apiVersion: v1alpha1
kind: ExtensionServiceConfig
name: foo # other doc
---
apiVersion: v1alpha1
kind: HostnameConfig
hostname: cp-1
"#;
        let patched =
            patch_image("cp-1", config, Component::KubeApiserver, &v("1.35.0")).expect("patch");
        let expected = config.replace(
            "kube-apiserver:v1.34.1 # api",
            "kube-apiserver:v1.35.0 # api",
        );
        assert_eq!(patched.text.as_deref(), Some(expected.as_str()));
        let kubelet = patch_image("cp-1", config, Component::Kubelet, &v("1.35.0")).expect("patch");
        let expected = config.replace("kubelet:v1.34.1 # pinned", "kubelet:v1.35.0 # pinned");
        assert_eq!(kubelet.text.as_deref(), Some(expected.as_str()));
    }

    #[test]
    fn a_missing_section_is_added_and_the_rest_kept() {
        let config =
            "machine:\n  type: worker # w\ncluster:\n  network:\n    dnsDomain: cluster.local\n";
        let patched =
            patch_image("w-1", config, Component::KubeProxy, &v("1.35.0")).expect("patch");
        let text = patched.text.expect("changed");
        assert!(text.starts_with(config), "{text}");
        assert_eq!(
            reparse(&text)[0]["cluster"]["proxy"]["image"],
            "registry.k8s.io/kube-proxy:v1.35.0"
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
                Some("ghcr.io/siderolabs/kubelet:v1.34.1-fat"),
                Component::Kubelet,
                &v("1.35.0")
            ),
            "ghcr.io/siderolabs/kubelet:v1.35.0-fat"
        );
        assert_eq!(
            new_image(
                Some("ghcr.io/siderolabs/kubelet:v1.34.1-slim"),
                Component::Kubelet,
                &v("1.35.0")
            ),
            "ghcr.io/siderolabs/kubelet:v1.35.0-slim"
        );
        // Any other suffix names a build of the old release only.
        assert_eq!(
            new_image(
                Some("ghcr.io/siderolabs/kubelet:v1.34.1-custom"),
                Component::Kubelet,
                &v("1.35.0")
            ),
            "ghcr.io/siderolabs/kubelet:v1.35.0"
        );
        // The flavour is the tag's end, whatever comes before it.
        assert_eq!(
            new_image(
                Some("ghcr.io/siderolabs/kubelet:v1.35.0-rc.1-fat"),
                Component::Kubelet,
                &v("1.35.0")
            ),
            "ghcr.io/siderolabs/kubelet:v1.35.0-fat"
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
