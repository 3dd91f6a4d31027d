//! Conversion between `cluster.x-k8s.io` v1beta2 (the storage version since CAPI v1.11) and
//! v1beta1, as the CAPI conversion webhook does it (kubernetes-sigs/cluster-api
//! api/core/v1beta1/conversion.go): references, conditions, replica counters and the rollout
//! strategy move; the same object is served in both versions.
use serde_json::{Map, Value, json};

use super::resources::{BOOTSTRAP, CONTROL_PLANE, CORE, INFRASTRUCTURE};

/// The API version a v1beta2 `ContractVersionedObjectReference` resolves to (the provider's
/// storage version, as the contract labels on its CRDs say).
fn version_of_group(group: &str) -> &'static str {
    match group {
        INFRASTRUCTURE => "v1beta1",
        BOOTSTRAP | CONTROL_PLANE => "v1alpha3",
        CORE => "v1beta2",
        _ => "v1",
    }
}

/// v1beta2 `{apiGroup, kind, name}` → v1beta1 `corev1.ObjectReference`.
fn ref_down(r: &Value, namespace: &Value) -> Value {
    if r.is_null() {
        return Value::Null;
    }
    let group = r["apiGroup"].as_str().unwrap_or_default();
    json!({"apiVersion": format!("{group}/{}", version_of_group(group)), "kind": r["kind"],
        "name": r["name"], "namespace": namespace})
}

/// v1beta1 `corev1.ObjectReference` → v1beta2 `{apiGroup, kind, name}`.
fn ref_up(r: &Value) -> Value {
    if r.is_null() {
        return Value::Null;
    }
    let api_version = r["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    json!({"apiGroup": group, "kind": r["kind"], "name": r["name"]})
}

fn set(obj: &mut Value, key: &str, value: Value) {
    if !value.is_null()
        && let Some(m) = obj.as_object_mut()
    {
        m.insert(key.to_string(), value);
    }
}

fn machine_spec_down(spec: &Value, ns: &Value) -> Value {
    let mut out = spec.clone();
    set(
        &mut out,
        "infrastructureRef",
        ref_down(&spec["infrastructureRef"], ns),
    );
    if !spec["bootstrap"]["configRef"].is_null() {
        out["bootstrap"]["configRef"] = ref_down(&spec["bootstrap"]["configRef"], ns);
    }
    out
}

fn machine_spec_up(spec: &Value) -> Value {
    let mut out = spec.clone();
    set(
        &mut out,
        "infrastructureRef",
        ref_up(&spec["infrastructureRef"]),
    );
    if !spec["bootstrap"]["configRef"].is_null() {
        out["bootstrap"]["configRef"] = ref_up(&spec["bootstrap"]["configRef"]);
    }
    out
}

/// The v1beta1 view of a stored (v1beta2) object of `kind`.
pub(crate) fn down(kind: &str, stored: &Value) -> Value {
    let mut out = stored.clone();
    out["apiVersion"] = json!(format!("{CORE}/v1beta1"));
    let ns = stored["metadata"]["namespace"].clone();
    let status = &stored["status"];
    let old = &status["deprecated"]["v1beta1"];
    let mut st = Map::new();
    let mut v1beta2 = Map::new();
    if let Some(c) = status.get("conditions") {
        v1beta2.insert("conditions".into(), c.clone());
    }
    if let Some(c) = old.get("conditions") {
        st.insert("conditions".into(), c.clone());
    }
    for k in [
        "phase",
        "selector",
        "observedGeneration",
        "addresses",
        "nodeInfo",
    ] {
        if let Some(v) = status.get(k) {
            st.insert(k.into(), v.clone());
        }
    }
    match kind {
        "Cluster" => {
            let spec = &stored["spec"];
            out["spec"]["controlPlaneRef"] = ref_down(&spec["controlPlaneRef"], &ns);
            out["spec"]["infrastructureRef"] = ref_down(&spec["infrastructureRef"], &ns);
            let init = &status["initialization"];
            st.insert(
                "infrastructureReady".into(),
                json!(init["infrastructureProvisioned"].as_bool().unwrap_or(false)),
            );
            st.insert(
                "controlPlaneReady".into(),
                json!(init["controlPlaneInitialized"].as_bool().unwrap_or(false)),
            );
            for k in ["controlPlane", "workers"] {
                if let Some(v) = status.get(k) {
                    v1beta2.insert(k.into(), v.clone());
                }
            }
        }
        "Machine" => {
            out["spec"] = machine_spec_down(&stored["spec"], &ns);
            if let Some(name) = status["nodeRef"]["name"].as_str() {
                st.insert(
                    "nodeRef".into(),
                    json!({"apiVersion": "v1", "kind": "Node", "name": name,
                        "uid": crate::kube_api::objects::uid("Node", name)}),
                );
            }
            let init = &status["initialization"];
            st.insert(
                "bootstrapReady".into(),
                json!(
                    init["bootstrapDataSecretCreated"]
                        .as_bool()
                        .unwrap_or(false)
                ),
            );
            st.insert(
                "infrastructureReady".into(),
                json!(init["infrastructureProvisioned"].as_bool().unwrap_or(false)),
            );
        }
        _ => {
            let spec = &stored["spec"];
            out["spec"]["template"]["spec"] = machine_spec_down(&spec["template"]["spec"], &ns);
            if kind == "MachineDeployment" {
                if let Some(m) = out["spec"].as_object_mut() {
                    m.remove("rollout");
                }
                if !spec["rollout"]["strategy"].is_null() {
                    out["spec"]["strategy"] = spec["rollout"]["strategy"].clone();
                }
            }
            deletion_order_down(kind, &mut out["spec"]);
            st.insert(
                "replicas".into(),
                json!(status["replicas"].as_i64().unwrap_or(0)),
            );
            for k in [
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
                "unavailableReplicas",
                "fullyLabeledReplicas",
            ] {
                if let Some(v) = old.get(k) {
                    st.insert(k.into(), v.clone());
                }
            }
            for k in ["readyReplicas", "availableReplicas", "upToDateReplicas"] {
                if let Some(v) = status.get(k) {
                    v1beta2.insert(k.into(), v.clone());
                }
            }
        }
    }
    if !v1beta2.is_empty() {
        st.insert("v1beta2".into(), Value::Object(v1beta2));
    }
    out["status"] = Value::Object(st);
    out
}

/// A v1beta1 object a client sent (a patched copy) back in v1beta2: metadata and spec convert;
/// the status is the stored one (clients change status through the controller only).
pub(crate) fn up(kind: &str, sent: &Value, stored_status: &Value) -> Value {
    let mut out = sent.clone();
    out["apiVersion"] = json!(format!("{CORE}/v1beta2"));
    match kind {
        "Cluster" => {
            let spec = &sent["spec"];
            out["spec"]["controlPlaneRef"] = ref_up(&spec["controlPlaneRef"]);
            out["spec"]["infrastructureRef"] = ref_up(&spec["infrastructureRef"]);
        }
        "Machine" => out["spec"] = machine_spec_up(&sent["spec"]),
        _ => {
            out["spec"]["template"]["spec"] = machine_spec_up(&sent["spec"]["template"]["spec"]);
            deletion_order_up(kind, &mut out["spec"]);
            if kind == "MachineDeployment"
                && let Some(m) = out["spec"].as_object_mut()
                && let Some(strategy) = m.remove("strategy")
            {
                m.insert("rollout".into(), json!({"strategy": strategy}));
            }
        }
    }
    out["status"] = stored_status.clone();
    out
}

/// A stored spec's `deletion.order` moved to where v1beta1 keeps it (cluster-api
/// api/core/v1beta1/conversion.go): a MachineSet's `spec.deletePolicy`, a MachineDeployment's
/// `spec.strategy.rollingUpdate.deletePolicy`.
fn deletion_order_down(kind: &str, spec: &mut Value) {
    let order = spec
        .as_object_mut()
        .and_then(|m| m.remove("deletion"))
        .map(|d| d["order"].clone())
        .filter(|o| !o.is_null());
    match (kind, order) {
        ("MachineSet", Some(order)) => spec["deletePolicy"] = order,
        ("MachineDeployment", Some(order)) => {
            spec["strategy"]["rollingUpdate"]["deletePolicy"] = order
        }
        _ => {}
    }
}

/// A v1beta1 spec's delete policy moved to `deletion.order`.
fn deletion_order_up(kind: &str, spec: &mut Value) {
    let order = match kind {
        "MachineSet" => spec.as_object_mut().and_then(|m| m.remove("deletePolicy")),
        "MachineDeployment" => spec
            .pointer_mut("/strategy/rollingUpdate")
            .and_then(Value::as_object_mut)
            .and_then(|m| m.remove("deletePolicy")),
        _ => None,
    };
    if let Some(order) = order.filter(|o| !o.is_null()) {
        spec["deletion"]["order"] = order;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": "m", "namespace": "default"},
            "spec": {"clusterName": "c", "version": "v1.34.1",
                "infrastructureRef": {"apiGroup": INFRASTRUCTURE, "kind": "ONEMachine", "name": "m"},
                "bootstrap": {"configRef": {"apiGroup": BOOTSTRAP, "kind": "TalosConfig", "name": "m"}}},
            "status": {"phase": "Running", "nodeRef": {"name": "n"},
                "initialization": {"infrastructureProvisioned": true, "bootstrapDataSecretCreated": true},
                "conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}],
                "deprecated": {"v1beta1": {"conditions": [{"type": "Ready", "status": "True"}]}}}})
    }

    #[test]
    fn deletion_order_is_the_v1beta1_delete_policy() {
        let set = json!({"metadata": {"name": "s", "namespace": "default"},
            "spec": {"replicas": 2, "deletion": {"order": "Oldest"},
                "template": {"spec": {"clusterName": "c"}}}, "status": {}});
        let old = down("MachineSet", &set);
        assert_eq!(old["spec"]["deletePolicy"], "Oldest");
        assert!(old["spec"]["deletion"].is_null());
        let back = up("MachineSet", &old, &json!({}));
        assert_eq!(back["spec"]["deletion"]["order"], "Oldest");
        assert!(back["spec"]["deletePolicy"].is_null());
        let md = json!({"metadata": {"name": "d", "namespace": "default"},
            "spec": {"deletion": {"order": "Newest"},
                "rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
                "template": {"spec": {"clusterName": "c"}}}, "status": {}});
        let old = down("MachineDeployment", &md);
        assert_eq!(
            old["spec"]["strategy"]["rollingUpdate"]["deletePolicy"],
            "Newest"
        );
        assert_eq!(old["spec"]["strategy"]["rollingUpdate"]["maxSurge"], 1);
        let back = up("MachineDeployment", &old, &json!({}));
        assert_eq!(back["spec"]["deletion"]["order"], "Newest");
        assert_eq!(
            back["spec"]["rollout"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}})
        );
    }

    #[test]
    fn machines_convert_both_ways_keeping_the_spec() {
        let stored = machine();
        let old = down("Machine", &stored);
        assert_eq!(old["apiVersion"], "cluster.x-k8s.io/v1beta1");
        assert_eq!(
            old["spec"]["infrastructureRef"]["apiVersion"],
            "infrastructure.cluster.x-k8s.io/v1beta1"
        );
        assert_eq!(old["status"]["nodeRef"]["kind"], "Node");
        assert_eq!(old["status"]["infrastructureReady"], true);
        assert_eq!(old["status"]["conditions"][0].get("reason"), None);
        assert_eq!(old["status"]["v1beta2"]["conditions"][0]["reason"], "Ready");
        let back = up("Machine", &old, &stored["status"]);
        assert_eq!(back, stored);
    }

    #[test]
    fn machine_deployment_strategy_moves_under_rollout() {
        let stored = json!({"kind": "MachineDeployment", "apiVersion": "cluster.x-k8s.io/v1beta2",
            "metadata": {"name": "md", "namespace": "default"},
            "spec": {"replicas": 2, "rollout": {"strategy": {"type": "RollingUpdate"}},
                "template": {"spec": {"version": "v1.34.1"}}},
            "status": {"replicas": 2, "upToDateReplicas": 1,
                "deprecated": {"v1beta1": {"updatedReplicas": 1}}}});
        let old = down("MachineDeployment", &stored);
        assert_eq!(old["spec"]["strategy"]["type"], "RollingUpdate");
        assert_eq!(old["status"]["updatedReplicas"], 1);
        assert_eq!(old["status"]["v1beta2"]["upToDateReplicas"], 1);
        assert_eq!(up("MachineDeployment", &old, &stored["status"]), stored);
    }
}
