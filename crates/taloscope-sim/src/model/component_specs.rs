//! The flags each Kubernetes component of a simulated node runs with: the `extraArgs` of its
//! machine config section merged over the flags Talos sets, and the COSI resources that show
//! them (`StaticPods` and `KubeletSpecs`, namespace `k8s`), as Talos renders them.
use std::collections::BTreeMap;

use serde_json::{Value, json};

pub use super::component_names::ExtraArgs;
use super::component_names::{
    KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KUBELET, SECTIONS,
};
use super::kube_components::config_image;
use super::state::SimNode;

/// Every component's `extraArgs` in a machine config (components without any are absent).
/// Unparsable text has none: ApplyConfiguration refuses it before this is asked.
pub fn parse_extra_args(data: &[u8]) -> BTreeMap<&'static str, ExtraArgs> {
    let text = String::from_utf8_lossy(data);
    let docs: Vec<Value> = serde_saphyr::from_str_multiple(&text).unwrap_or_default();
    let mut out = BTreeMap::new();
    for doc in docs.iter().filter(|d| d.is_object()) {
        for (component, section, key) in SECTIONS {
            let Some(args) = doc[section][key]["extraArgs"].as_object() else {
                continue;
            };
            let flags: ExtraArgs = args
                .iter()
                .map(|(k, v)| {
                    let value = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), value)
                })
                .collect();
            out.entry(component).or_insert(flags);
        }
    }
    out
}

/// The components whose `extraArgs` differ between two configs.
pub(crate) fn changed_args(old: &[u8], new: &[u8]) -> Vec<&'static str> {
    let (old, new) = (parse_extra_args(old), parse_extra_args(new));
    SECTIONS
        .iter()
        .map(|(c, _, _)| *c)
        .filter(|c| old.get(c) != new.get(c))
        .collect()
}

/// A few of the flags Talos always sets (internal/app/machined/pkg/controllers/k8s/
/// control_plane_static_pod.go, the `builder` of each component; kubelet_spec.go, `args`).
fn base_args(component: &str) -> ExtraArgs {
    let pairs: &[(&str, &str)] = match component {
        KUBE_APISERVER => &[
            ("profiling", "false"),
            ("secure-port", "6443"),
            (
                "kubelet-preferred-address-types",
                "InternalIP,ExternalIP,Hostname",
            ),
        ],
        KUBE_CONTROLLER_MANAGER => &[
            ("profiling", "false"),
            ("use-service-account-credentials", "true"),
        ],
        KUBE_SCHEDULER => &[("profiling", "false"), ("leader-elect", "true")],
        _ => &[
            ("cert-dir", "/var/lib/kubelet/pki"),
            ("config", "/etc/kubernetes/kubelet.yaml"),
            ("kubeconfig", "/etc/kubernetes/kubeconfig-kubelet"),
        ],
    };
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `--flag=value` for every flag, extra flags over Talos's own, sorted by flag as
/// pkg/argsbuilder's `Args()` returns them. (Talos merges `feature-gates` and
/// `enable-admission-plugins` additively; it sets neither by default, so the extra value is
/// the whole value here.)
fn command_args(component: &str, extra: Option<&ExtraArgs>) -> Vec<String> {
    let mut args = base_args(component);
    if let Some(extra) = extra {
        args.extend(extra.clone());
    }
    args.into_iter()
        .map(|(k, v)| format!("--{k}={v}"))
        .collect()
}

/// The `StaticPods.kubernetes.talos.dev` spec of one control-plane component: the pod itself
/// (pkg/machinery/resources/k8s/static_pod.go marshals the `v1.Pod` as the spec), its command
/// `/usr/local/bin/<component>` and the flags, annotated with the config version it was
/// rendered from (control_plane_static_pod.go).
pub(crate) fn static_pod_spec(node: &SimNode, component: &str, config_version: u64) -> String {
    let config = super::kube_components::current_config(node);
    let extra = parse_extra_args(config.as_bytes());
    let image = config_image(&config, component).unwrap_or_default();
    let mut command = vec![format!("/usr/local/bin/{component}")];
    command.extend(command_args(component, extra.get(component)));
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": component,
            "namespace": "kube-system",
            "annotations": {"talos.dev/config-version": config_version.to_string()},
            "labels": {"k8s-app": component, "tier": "control-plane"},
        },
        "spec": {
            "hostNetwork": true,
            "containers": [{"name": component, "image": image, "command": command}],
        },
    });
    serde_saphyr::to_string(&pod).unwrap_or_default()
}

/// The `KubeletSpecs.kubernetes.talos.dev` spec (pkg/machinery/resources/k8s/kubelet_spec.go:
/// `image`, `args`), the flags from kubelet_spec.go's `args` merged with `extraArgs`.
pub(crate) fn kubelet_spec(node: &SimNode) -> String {
    let config = super::kube_components::current_config(node);
    let image = config_image(&config, KUBELET).unwrap_or_default();
    let extra = parse_extra_args(config.as_bytes());
    let spec = json!({
        "image": image,
        "args": command_args(KUBELET, extra.get(KUBELET)),
    });
    serde_saphyr::to_string(&spec).unwrap_or_default()
}

/// `extraArgs:` lines for a config section, at `indent` spaces.
pub(crate) fn render_extra_args(extra: Option<&ExtraArgs>, indent: usize) -> String {
    let Some(extra) = extra.filter(|e| !e.is_empty()) else {
        return String::new();
    };
    let pad = " ".repeat(indent);
    let mut text = format!("{pad}extraArgs:\n");
    for (k, v) in extra {
        text.push_str(&format!("{pad}  {k}: {v:?}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_compares_extra_args() {
        let old = b"machine:\n  kubelet:\n    extraArgs:\n      cloud-config: /x\ncluster:\n  apiServer:\n    extraArgs:\n      feature-gates: AppArmor=true\n      v: 2\n";
        let args = parse_extra_args(old);
        assert_eq!(args[KUBE_APISERVER]["feature-gates"], "AppArmor=true");
        assert_eq!(args[KUBE_APISERVER]["v"], "2");
        assert_eq!(args[KUBELET]["cloud-config"], "/x");
        let new = b"machine:\n  kubelet:\n    extraArgs:\n      cloud-config: /x\n";
        assert_eq!(changed_args(old, new), vec![KUBE_APISERVER]);
        assert!(changed_args(old, old).is_empty());
        assert_eq!(
            command_args(KUBE_SCHEDULER, args.get(KUBE_SCHEDULER)),
            vec!["--leader-elect=true", "--profiling=false"]
        );
    }
}
