//! Kubernetes JSON objects the API sim serves: nodes, static pods, the
//! kube-proxy DaemonSet, discovery documents, server-side print tables and
//! Status errors, in the shapes kubectl and client-go expect.
use serde_json::{Value, json};

use super::facts::{KubeClusterFacts, KubeNodeFacts, StaticPodFacts};
use crate::model::clock::calendar_date;

const CONTROL_PLANE_LABEL: &str = "node-role.kubernetes.io/control-plane";

/// A `metav1.Time` as the API server writes it: RFC 3339 in UTC, whole seconds
/// (kubernetes/apimachinery `pkg/apis/meta/v1/time.go`, `MarshalJSON`).
pub(crate) fn rfc3339(unix: i64) -> String {
    let (year, month, day) = calendar_date(unix.div_euclid(86_400));
    let secs = unix.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

pub(crate) fn uid(kind: &str, name: &str) -> String {
    // Stable per object: a hash of kind and name laid out like a UUID.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in kind.bytes().chain(name.bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let s = format!("{h:016x}{:016x}", h.rotate_left(17));
    format!(
        "{}-{}-{}-{}-{}",
        &s[0..8],
        &s[8..12],
        &s[12..16],
        &s[16..20],
        &s[20..32]
    )
}

pub fn node(facts: &KubeClusterFacts, n: &KubeNodeFacts, cordoned: bool, rv: u64) -> Value {
    let mut labels = json!({
        "kubernetes.io/hostname": n.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
    });
    if n.control_plane {
        labels[CONTROL_PLANE_LABEL] = json!("");
    }
    let mut taints = Vec::new();
    if n.control_plane {
        taints.push(json!({"key": CONTROL_PLANE_LABEL, "effect": "NoSchedule"}));
    }
    if cordoned {
        taints.push(json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}));
    }
    if !n.ready {
        taints.push(json!({"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}));
    }
    let created = rfc3339(facts.created_unix);
    let (status, reason, message) = if n.ready {
        ("True", "KubeletReady", "kubelet is posting ready status")
    } else {
        (
            "Unknown",
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
        )
    };
    json!({
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": n.name,
            "uid": uid("Node", &n.name),
            "resourceVersion": rv.to_string(),
            "creationTimestamp": created,
            "labels": labels,
            "annotations": {"talos.dev/owned-labels": "[]"},
        },
        "spec": {
            "podCIDR": "10.244.0.0/24",
            "unschedulable": cordoned,
            "taints": taints,
        },
        "status": {
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                 "lastHeartbeatTime": created, "lastTransitionTime": created},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
                 "lastHeartbeatTime": created, "lastTransitionTime": created},
                {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
                 "lastHeartbeatTime": created, "lastTransitionTime": created},
                {"type": "Ready", "status": status, "reason": reason, "message": message,
                 "lastHeartbeatTime": created, "lastTransitionTime": created},
            ],
            "addresses": [
                {"type": "InternalIP", "address": n.address.to_string()},
                {"type": "Hostname", "address": n.name},
            ],
            "nodeInfo": {
                "machineID": uid("machine", &n.name).replace('-', ""),
                "systemUUID": uid("system", &n.name),
                "bootID": uid("boot", &format!("{}{}", n.name, n.talos_version)),
                "kernelVersion": "6.12.57-talos",
                "osImage": format!("Talos ({})", n.talos_version),
                "containerRuntimeVersion": "containerd://2.1.5",
                "kubeletVersion": n.kubelet_version,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    })
}

/// A control-plane static pod as the kubelet mirrors it: labelled `k8s-app`/`tier`, annotated
/// with the version of the component config it was rendered from
/// (siderolabs/talos internal/app/machined/pkg/controllers/k8s/control_plane_static_pod.go,
/// `talos.dev/config-version`), `status.hostIP` the node's address.
pub fn static_pod(facts: &KubeClusterFacts, n: &KubeNodeFacts, p: &StaticPodFacts) -> Value {
    let name = format!("{}-{}", p.component, n.name);
    let ready = if p.ready && n.ready { "True" } else { "False" };
    let created = rfc3339(facts.created_unix);
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": "kube-system",
            "uid": uid("Pod", &name),
            "creationTimestamp": created,
            "labels": {"k8s-app": p.component, "tier": "control-plane"},
            "annotations": {"talos.dev/config-version": p.config_version.to_string()},
        },
        "spec": {
            "nodeName": n.name,
            "hostNetwork": true,
            "priorityClassName": "system-cluster-critical",
            "containers": [{
                "name": p.component,
                "image": format!("registry.k8s.io/{}:{}", p.component, p.version),
            }],
        },
        "status": {
            "phase": if n.ready { "Running" } else { "Pending" },
            "hostIP": n.address.to_string(),
            "podIP": n.address.to_string(),
            "conditions": [
                {"type": "Ready", "status": ready},
                {"type": "ContainersReady", "status": ready},
            ],
            "containerStatuses": [{
                "name": p.component,
                "image": format!("registry.k8s.io/{}:{}", p.component, p.version),
                "ready": p.ready && n.ready,
                "restartCount": 0,
            }],
        },
    })
}

pub(crate) fn kube_proxy_daemonset(
    facts: &KubeClusterFacts,
    ds: &super::manifests::KubeProxyDaemonSet,
) -> Value {
    let total = facts.nodes.len();
    let ready = facts.nodes.iter().filter(|n| n.ready).count();
    json!({
        "kind": "DaemonSet",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": "kube-proxy",
            "namespace": "kube-system",
            "uid": uid("DaemonSet", "kube-proxy"),
            "creationTimestamp": rfc3339(facts.created_unix),
            "labels": {"k8s-app": "kube-proxy", "tier": "node"},
            "generation": ds.generation,
        },
        "spec": {
            "selector": {"matchLabels": {"k8s-app": "kube-proxy"}},
            "template": {
                "metadata": {"labels": {"k8s-app": "kube-proxy", "tier": "node"}},
                "spec": {"containers": [{
                    "name": "kube-proxy",
                    "image": ds.image,
                }]},
            },
        },
        "status": {
            "currentNumberScheduled": total, "desiredNumberScheduled": total,
            "numberReady": ready, "numberAvailable": ready, "updatedNumberScheduled": total,
            "numberMisscheduled": 0, "observedGeneration": ds.generation,
        },
    })
}

/// Objects stored in an API version a later release removes: `/apis/<group>/<version>/<resource>`
/// listed with `count` items named `<resource>-<n>`.
pub fn stored_list(path: &str, count: usize, rv: u64) -> Value {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, resource) = match parts.as_slice() {
        ["apis", g, v, r] => (*g, *v, *r),
        _ => ("", "v1", "objects"),
    };
    let api_version = format!("{group}/{version}");
    let items = (1..=count)
        .map(|i| {
            let name = format!("{resource}-{i}");
            json!({"apiVersion": api_version, "metadata": {"name": name, "uid": uid(resource, &name)}})
        })
        .collect();
    list("List", &api_version, items, rv)
}

pub fn list(kind: &str, api_version: &str, items: Vec<Value>, rv: u64) -> Value {
    json!({
        "kind": kind,
        "apiVersion": api_version,
        "metadata": {"resourceVersion": rv.to_string()},
        "items": items,
    })
}

/// The server-side print table for nodes (`kubectl get nodes [-o wide]`).
pub fn node_table(nodes: &[Value], now_unix: i64, created_unix: i64, rv: u64) -> Value {
    let col = |name: &str, priority: u8| json!({"name": name, "type": "string", "format": "", "description": "", "priority": priority});
    let age = human_age(now_unix - created_unix);
    let rows: Vec<Value> = nodes
        .iter()
        .map(|n| {
            let ready = n["status"]["conditions"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
                .map(|c| c["status"] == "True")
                .unwrap_or(false);
            let mut status = if ready { "Ready".to_string() } else { "NotReady".to_string() };
            if n["spec"]["unschedulable"] == true {
                status.push_str(",SchedulingDisabled");
            }
            let roles = if n["metadata"]["labels"].get(CONTROL_PLANE_LABEL).is_some() {
                "control-plane"
            } else {
                "<none>"
            };
            let ip = n["status"]["addresses"][0]["address"].clone();
            let info = &n["status"]["nodeInfo"];
            json!({
                "cells": [n["metadata"]["name"], status, roles, age, info["kubeletVersion"], ip,
                          "<none>", info["osImage"], info["kernelVersion"], info["containerRuntimeVersion"]],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                           "metadata": n["metadata"]},
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": rv.to_string()},
        "columnDefinitions": [
            col("Name", 0), col("Status", 0), col("Roles", 0), col("Age", 0), col("Version", 0),
            col("Internal-IP", 1), col("External-IP", 1), col("OS-Image", 1),
            col("Kernel-Version", 1), col("Container-Runtime", 1),
        ],
        "rows": rows,
    })
}

/// The server-side print table for leases (`kubectl get leases`): name,
/// holder and age, from `(lease, created_unix)` pairs.
pub fn lease_table(leases: &[(Value, i64)], now_unix: i64, rv: u64) -> Value {
    let col = |name: &str, format: &str| json!({"name": name, "type": "string", "format": format, "description": "", "priority": 0});
    let rows: Vec<Value> = leases
        .iter()
        .map(|(l, created)| {
            json!({
                "cells": [l["metadata"]["name"], l["spec"]["holderIdentity"].as_str().unwrap_or(""),
                          human_age(now_unix - created)],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                           "metadata": l["metadata"]},
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": rv.to_string()},
        "columnDefinitions": [col("Name", "name"), col("Holder", ""), col("Age", "")],
        "rows": rows,
    })
}

pub(crate) fn human_age(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 3 * 3600 => format!("{}m", s / 60),
        s if s < 2 * 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

pub fn version(git_version: &str) -> Value {
    let (major, minor) = git_version
        .trim_start_matches('v')
        .split_once('.')
        .map(|(maj, rest)| {
            (
                maj.to_string(),
                rest.split('.').next().unwrap_or("0").to_string(),
            )
        })
        .unwrap_or_else(|| ("1".into(), "0".into()));
    json!({
        "major": major, "minor": minor, "gitVersion": git_version,
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2025-09-09T00:00:00Z", "goVersion": "go1.24.6", "compiler": "gc",
        "platform": "linux/amd64",
    })
}

pub fn core_api_versions(server: &str) -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
           "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server}]})
}

/// Groups served besides the core group, with their resources.
pub const GROUPS: &[(&str, &str)] = &[("apps", "v1"), ("coordination.k8s.io", "v1")];

pub fn api_group_list() -> Value {
    let groups: Vec<Value> = GROUPS
        .iter()
        .map(|(g, v)| {
            let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
            json!({"name": g, "versions": [gv.clone()], "preferredVersion": gv})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn resource(name: &str, kind: &str, namespaced: bool, verbs: &[&str], short: &[&str]) -> Value {
    json!({"name": name, "singularName": kind.to_lowercase(), "namespaced": namespaced, "kind": kind,
           "verbs": verbs, "shortNames": short})
}

pub fn resource_list(group_version: &str) -> Option<Value> {
    let read = ["get", "list", "watch"];
    let resources = match group_version {
        "v1" => vec![
            resource(
                "nodes",
                "Node",
                false,
                &["get", "list", "watch", "patch"],
                &["no"],
            ),
            resource("pods", "Pod", true, &read, &["po"]),
            resource("namespaces", "Namespace", false, &read, &["ns"]),
        ],
        "apps/v1" => vec![resource("daemonsets", "DaemonSet", true, &read, &["ds"])],
        "coordination.k8s.io/v1" => vec![resource(
            "leases",
            "Lease",
            true,
            &["create", "delete", "get", "list", "patch", "update"],
            &[],
        )],
        _ => return None,
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
                "resources": resources}),
    )
}

pub fn namespace(name: &str, created_unix: i64) -> Value {
    json!({"kind": "Namespace", "apiVersion": "v1",
           "metadata": {"name": name, "uid": uid("Namespace", name), "creationTimestamp": rfc3339(created_unix)},
           "status": {"phase": "Active"}})
}

pub fn status_error(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn calendar_dates_cross_leap_days_and_the_epoch() {
        // 2000 is a leap year (divisible by 400), 1900 and 2100 are not.
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
        assert_eq!(rfc3339(1_735_689_599), "2024-12-31T23:59:59Z");
    }

    #[test]
    fn version_splits_major_minor() {
        let v = version("v1.34.1");
        assert_eq!(v["major"], "1");
        assert_eq!(v["minor"], "34");
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_age(30), "30s");
        assert_eq!(human_age(600), "10m");
        assert_eq!(human_age(5 * 3600), "5h");
        assert_eq!(human_age(3 * 86_400), "3d");
    }
}
