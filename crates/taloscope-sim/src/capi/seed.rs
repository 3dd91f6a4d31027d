//! The objects the `capi` scenario starts with: the workload cluster as `clusterctl` and the
//! providers leave it once it runs (Cluster, ONECluster, TalosControlPlane, MachineDeployment and
//! its MachineSet, templates, one Machine + ONEMachine + TalosConfig per node, the kubeconfig
//! Secret as cluster-api util/kubeconfig writes it), the injected stuck faults, and the Cluster's
//! status (cluster-api internal/controllers/cluster/cluster_controller_status.go).
use base64::Engine as _;
use serde_json::{Value, json};

use super::conditions::{Cond, set_v1beta1, set_v1beta2};
use super::machines::{
    CLONED_FROM_NAME, CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, DEPLOYMENT_NAME_LABEL,
    SET_NAME_LABEL,
};
use super::resources::{BOOTSTRAP, CONTROL_PLANE, CORE, INFRASTRUCTURE};
use super::workers::{HASH_LABEL, template_hash};
use super::{Ctx, StuckFault};
use crate::model::scenario::NodeRole;

/// How clients and the controller reach the workload cluster's API.
pub(crate) struct WorkloadAccess {
    /// `https://127.10.1.1:PORT`.
    pub server: String,
    /// A kubeconfig with the workload cluster's admin context only.
    pub kubeconfig: String,
    /// Drains its nodes (a deleting Machine's drain).
    pub drain: crate::kube_api::NodeDrainer,
}

pub(crate) const TCP_NAME_SUFFIX: &str = "-cp";
pub(crate) const MD_NAME_SUFFIX: &str = "-md-0";

fn put(ctx: &Ctx, plural: &str, obj: Value) {
    if let Err(e) = ctx.store.create(plural, obj) {
        tracing::warn!(plural, "capi seed: {e:?}");
    }
}

/// The control-plane nodes the Machines of the scenario stand for; with `OrphanedMember` the
/// last one has no Machine.
fn machine_nodes(ctx: &Ctx) -> Vec<(String, NodeRole)> {
    let Some(cluster) = ctx.fleet.cluster(&ctx.spec.workload) else {
        return Vec::new();
    };
    let mut nodes: Vec<(String, NodeRole)> = cluster
        .nodes()
        .iter()
        .map(|n| (n.name().to_string(), n.role()))
        .collect();
    if ctx.spec.fault == Some(StuckFault::OrphanedMember)
        && let Some(i) = nodes
            .iter()
            .rposition(|(_, r)| *r == NodeRole::ControlPlane)
    {
        nodes.remove(i);
    }
    nodes
}

/// The kubelet version a node runs (the Machine's `spec.version`).
fn node_version(ctx: &Ctx, node: &str) -> String {
    ctx.fleet
        .cluster(&ctx.spec.workload)
        .and_then(|c| c.node(node))
        .map(|n| n.status().kubernetes.kubelet.version)
        .unwrap_or_else(|| crate::model::scenario::DEFAULT_KUBERNETES.into())
}

pub(crate) fn seed(ctx: &Ctx, access: &WorkloadAccess) {
    let ns = ctx.spec.namespace.clone();
    let work = ctx.spec.workload.clone();
    let tcp_name = format!("{work}{TCP_NAME_SUFFIX}");
    let md_name = format!("{work}{MD_NAME_SUFFIX}");
    let kube = crate::model::scenario::DEFAULT_KUBERNETES;
    let (host, port) = access
        .server
        .trim_start_matches("https://")
        .rsplit_once(':')
        .map(|(h, p)| (h.to_string(), p.parse::<u16>().unwrap_or(6443)))
        .unwrap_or_default();
    let cp_count = machine_nodes(ctx)
        .iter()
        .filter(|(_, r)| *r == NodeRole::ControlPlane)
        .count();
    let workers = machine_nodes(ctx)
        .iter()
        .filter(|(_, r)| *r == NodeRole::Worker)
        .count();
    let labels = json!({CLUSTER_NAME_LABEL: work});
    put(
        ctx,
        "clusters",
        json!({"apiVersion": format!("{CORE}/v1beta2"), "kind": "Cluster",
        "metadata": {"name": work, "namespace": ns, "labels": labels},
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["10.244.0.0/16"]},
                "services": {"cidrBlocks": ["10.96.0.0/12"]}},
            "controlPlaneEndpoint": {"host": host, "port": port},
            "controlPlaneRef": {"apiGroup": CONTROL_PLANE, "kind": "TalosControlPlane", "name": tcp_name},
            "infrastructureRef": {"apiGroup": INFRASTRUCTURE, "kind": "ONECluster", "name": work}},
        "status": {}}),
    );
    put(
        ctx,
        "oneclusters",
        json!({"apiVersion": format!("{INFRASTRUCTURE}/v1beta1"), "kind": "ONECluster",
        "metadata": {"name": work, "namespace": ns, "labels": labels},
        "spec": {"controlPlaneEndpoint": {"host": host, "port": port}},
        "status": {"ready": true}}),
    );
    // CAPONE's own cluster templates name them `${CLUSTER_NAME}-cp` and `${CLUSTER_NAME}-md-0`
    // (templates/cluster-template.yaml).
    for (role, name) in [("controlplane", &tcp_name), ("worker", &md_name)] {
        put(
            ctx,
            "onemachinetemplates",
            json!({"apiVersion": format!("{INFRASTRUCTURE}/v1beta1"),
            "kind": "ONEMachineTemplate",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"template": {"spec": {"templateName": format!("talos-{work}-{role}")}}}}),
        );
    }
    let cp_config = json!({"generateType": "controlplane", "talosVersion": "v1.11"});
    put(
        ctx,
        "taloscontrolplanes",
        json!({"apiVersion": format!("{CONTROL_PLANE}/v1alpha3"),
        "kind": "TalosControlPlane",
        "metadata": {"name": tcp_name, "namespace": ns, "labels": labels},
        "spec": {"replicas": cp_count, "version": kube,
            "infrastructureTemplate": {"apiVersion": format!("{INFRASTRUCTURE}/v1beta1"),
                "kind": "ONEMachineTemplate", "name": tcp_name, "namespace": ns},
            "controlPlaneConfig": {"controlplane": cp_config},
            "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
        "status": {}}),
    );
    put(
        ctx,
        "talosconfigtemplates",
        json!({"apiVersion": format!("{BOOTSTRAP}/v1alpha3"),
        "kind": "TalosConfigTemplate",
        "metadata": {"name": md_name, "namespace": ns, "labels": labels},
        "spec": {"template": {"spec": {"generateType": "worker", "talosVersion": "v1.11"}}}}),
    );
    let md = json!({"apiVersion": format!("{CORE}/v1beta2"), "kind": "MachineDeployment",
        "metadata": {"name": md_name, "namespace": ns, "labels": labels},
        "spec": {"clusterName": work, "replicas": workers,
            "selector": {"matchLabels": {CLUSTER_NAME_LABEL: work, DEPLOYMENT_NAME_LABEL: md_name}},
            "rollout": {"strategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}},
            "template": {"metadata": {"labels": {CLUSTER_NAME_LABEL: work, DEPLOYMENT_NAME_LABEL: md_name}},
                "spec": {"clusterName": work, "version": kube,
                    "bootstrap": {"configRef": {"apiGroup": BOOTSTRAP, "kind": "TalosConfigTemplate", "name": md_name}},
                    "infrastructureRef": {"apiGroup": INFRASTRUCTURE, "kind": "ONEMachineTemplate",
                        "name": md_name}}}},
        "status": {}});
    let hash = template_hash(&md);
    let set_name = format!("{md_name}-{hash}");
    put(ctx, "machinedeployments", md.clone());
    let md_uid = ctx
        .store
        .get("machinedeployments", &ns, &md_name)
        .map(|m| m["metadata"]["uid"].clone());
    put(
        ctx,
        "machinesets",
        json!({"apiVersion": format!("{CORE}/v1beta2"), "kind": "MachineSet",
        "metadata": {"name": set_name, "namespace": ns,
            "labels": {CLUSTER_NAME_LABEL: work, DEPLOYMENT_NAME_LABEL: md_name, HASH_LABEL: hash},
            "ownerReferences": [{"apiVersion": format!("{CORE}/v1beta2"), "kind": "MachineDeployment",
                "name": md_name, "uid": md_uid, "controller": true}]},
        "spec": {"clusterName": work, "replicas": workers,
            "selector": {"matchLabels": {CLUSTER_NAME_LABEL: work, DEPLOYMENT_NAME_LABEL: md_name, HASH_LABEL: hash}},
            "template": md["spec"]["template"]},
        "status": {}}),
    );
    let tcp_uid = ctx
        .store
        .get("taloscontrolplanes", &ns, &tcp_name)
        .map(|t| t["metadata"]["uid"].clone());
    for (node, role) in machine_nodes(ctx) {
        let cp = role == NodeRole::ControlPlane;
        let (labels, owner, template, bootstrap) = if cp {
            (
                json!({CLUSTER_NAME_LABEL: work, CONTROL_PLANE_LABEL: ""}),
                json!({"apiVersion": format!("{CONTROL_PLANE}/v1alpha3"), "kind": "TalosControlPlane",
                "name": tcp_name, "uid": tcp_uid, "controller": true}),
                tcp_name.clone(),
                cp_config.clone(),
            )
        } else {
            (
                json!({CLUSTER_NAME_LABEL: work, DEPLOYMENT_NAME_LABEL: md_name, SET_NAME_LABEL: set_name, HASH_LABEL: hash}),
                json!({"apiVersion": format!("{CORE}/v1beta2"), "kind": "MachineSet", "name": set_name, "controller": true}),
                md_name.clone(),
                json!({"generateType": "worker", "talosVersion": "v1.11"}),
            )
        };
        let provider_id = ctx.one.vm_by_name(&node).map(|v| format!("one://{}", v.id));
        put(
            ctx,
            "onemachines",
            json!({"apiVersion": format!("{INFRASTRUCTURE}/v1beta1"), "kind": "ONEMachine",
            "metadata": {"name": node, "namespace": ns, "labels": labels,
                "annotations": {CLONED_FROM_NAME: template,
                    "cluster.x-k8s.io/cloned-from-groupkind": "ONEMachineTemplate.infrastructure.cluster.x-k8s.io"}},
            "spec": {"providerID": provider_id, "templateName": format!("talos-{work}-{}", role.as_str())},
            "status": {"ready": true}}),
        );
        put(
            ctx,
            "talosconfigs",
            json!({"apiVersion": format!("{BOOTSTRAP}/v1alpha3"), "kind": "TalosConfig",
            "metadata": {"name": node, "namespace": ns, "labels": labels},
            "spec": bootstrap, "status": {"ready": true, "dataSecretName": format!("{node}-bootstrap-data")}}),
        );
        put(
            ctx,
            "machines",
            json!({"apiVersion": format!("{CORE}/v1beta2"), "kind": "Machine",
            "metadata": {"name": node, "namespace": ns, "labels": labels, "ownerReferences": [owner]},
            "spec": {"clusterName": work, "version": node_version(ctx, &node), "providerID": provider_id,
                "bootstrap": {"configRef": {"apiGroup": BOOTSTRAP, "kind": "TalosConfig", "name": node},
                    "dataSecretName": format!("{node}-bootstrap-data")},
                "infrastructureRef": {"apiGroup": INFRASTRUCTURE, "kind": "ONEMachine", "name": node}},
            "status": {}}),
        );
    }
    // cluster-api util/secret: `<cluster>-kubeconfig`, type cluster.x-k8s.io/secret, key `value`.
    let b64 = base64::engine::general_purpose::STANDARD.encode(&access.kubeconfig);
    put(
        ctx,
        "secrets",
        json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("{work}-kubeconfig"), "namespace": ns,
            "labels": {CLUSTER_NAME_LABEL: work}},
        "type": "cluster.x-k8s.io/secret", "data": {"value": b64}}),
    );
}

/// Puts the scenario's stuck fault in place.
pub(crate) fn inject(ctx: &Ctx) {
    let Some(cluster) = ctx.fleet.cluster(&ctx.spec.workload) else {
        return;
    };
    let mut cps: Vec<String> = cluster
        .nodes()
        .iter()
        .filter(|n| n.role() == NodeRole::ControlPlane)
        .map(|n| n.name().to_string())
        .collect();
    cps.sort();
    match ctx.spec.fault {
        None => {}
        Some(StuckFault::StuckRollout) => {
            // The outdated Machine scale-down picks first (oldest; ties by name) reports etcd
            // errors; the TalosControlPlane wants 3 replicas at the version the 4th runs.
            let outdated = cps
                .iter()
                .find(|n| node_version(ctx, n) != super::ROLLOUT_VERSION);
            if let Some(first) = outdated {
                let _ = cluster.set_etcd_unhealthy(first, true);
            }
            let tcp = format!("{}{TCP_NAME_SUFFIX}", ctx.spec.workload);
            ctx.store
                .modify("taloscontrolplanes", &ctx.spec.namespace, &tcp, |t| {
                    t["spec"]["version"] = json!(super::ROLLOUT_VERSION);
                    t["spec"]["replicas"] = json!(3);
                });
        }
        Some(StuckFault::OrphanedMember) => {
            ctx.knobs
                .no_etcd_audit
                .store(true, std::sync::atomic::Ordering::Relaxed);
            let last = cluster
                .nodes()
                .iter()
                .rev()
                .find(|n| n.role() == NodeRole::ControlPlane)
                .map(|n| n.name().to_string());
            if let Some(last) = last {
                ctx.fleet.remove_node(&ctx.spec.workload, &last);
                if let Some(vm) = ctx.one.vm_by_name(&last) {
                    ctx.one.terminate(vm.id);
                }
            }
        }
        Some(StuckFault::EtcdLeft) => {
            // The member of the first control plane left etcd; its Machine stays.
            if let Some(first) = cps.first() {
                super::control_plane::etcd_leave(ctx, first);
            }
        }
        Some(StuckFault::NodeRefLessSurge) => {
            ctx.knobs
                .stall_next_control_plane
                .store(true, std::sync::atomic::Ordering::Relaxed);
            let tcp = format!("{}{TCP_NAME_SUFFIX}", ctx.spec.workload);
            ctx.store
                .modify("taloscontrolplanes", &ctx.spec.namespace, &tcp, |t| {
                    t["spec"]["version"] = json!(super::ROLLOUT_VERSION);
                });
        }
        Some(StuckFault::DrainBlocked) => {
            // Two pods on each of the two workers, and none of the four may go.
            ctx.workload_drain.set_disruption_budget(Some(4));
            ctx.knobs
                .delete_a_worker_once_it_has_a_node
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Some(StuckFault::SingleMemberStopped) => {
            // The only member's etcd service stopped with its data intact (etcd_service).
            if let Some(only) = cps.first() {
                let _ = ctx.fleet.set_etcd_stopped(&ctx.spec.workload, only, true);
            }
        }
    }
}

/// DrainBlocked: the first worker Machine (by name) is deleted once it has a Node to drain.
pub(crate) fn delete_a_worker_for_a_blocked_drain(ctx: &Ctx) {
    let pending = &ctx.knobs.delete_a_worker_once_it_has_a_node;
    if !pending.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let worker = ctx
        .store
        .list("machines", Some(&ctx.spec.namespace))
        .into_iter()
        .filter(|m| m["metadata"]["labels"].get(CONTROL_PLANE_LABEL).is_none())
        .find(|m| !m["status"]["nodeRef"].is_null() && !m["metadata"]["finalizers"].is_null());
    if let Some(name) = worker.as_ref().and_then(|m| m["metadata"]["name"].as_str()) {
        pending.store(false, std::sync::atomic::Ordering::Relaxed);
        super::machines::delete(ctx, name);
    }
}

/// The Cluster's status: phase Provisioned, control plane and workers counted from Machines.
pub(crate) fn cluster_status(ctx: &Ctx) {
    let ns = ctx.spec.namespace.clone();
    let machines = ctx.store.list("machines", Some(&ns));
    let count = |cp: bool| {
        let of: Vec<&Value> = machines
            .iter()
            .filter(|m| m["metadata"]["labels"].get(CONTROL_PLANE_LABEL).is_some() == cp)
            .collect();
        let ready = of
            .iter()
            .filter(|m| {
                super::machines::is_ready(ctx, m["metadata"]["name"].as_str().unwrap_or_default())
            })
            .count();
        (of.len(), ready)
    };
    let (cp, cp_ready) = count(true);
    let (w, w_ready) = count(false);
    let tcp = ctx.store.get(
        "taloscontrolplanes",
        &ns,
        &format!("{}{TCP_NAME_SUFFIX}", ctx.spec.workload),
    );
    let md = ctx.store.get(
        "machinedeployments",
        &ns,
        &format!("{}{MD_NAME_SUFFIX}", ctx.spec.workload),
    );
    let desired_cp = tcp
        .as_ref()
        .and_then(|t| t["spec"]["replicas"].as_i64())
        .unwrap_or(0);
    let desired_w = md
        .as_ref()
        .and_then(|t| t["spec"]["replicas"].as_i64())
        .unwrap_or(0);
    ctx.store.modify("clusters", &ns, &ctx.spec.workload, |c| {
        let generation = c["metadata"]["generation"].as_i64().unwrap_or(1);
        let st = &mut c["status"];
        st["phase"] = json!("Provisioned");
        st["observedGeneration"] = json!(generation);
        st["initialization"] = json!({"infrastructureProvisioned": true, "controlPlaneInitialized": cp_ready > 0});
        st["controlPlane"] = json!({"desiredReplicas": desired_cp, "replicas": cp, "readyReplicas": cp_ready,
            "availableReplicas": cp_ready});
        st["workers"] = json!({"desiredReplicas": desired_w, "replicas": w, "readyReplicas": w_ready,
            "availableReplicas": w_ready});
        let available = cp_ready > 0;
        let c1 = Cond { kind: "Available", ok: available, reason: if available { "Available" } else { "NotAvailable" },
            message: "", severity: "Error" };
        let c2 = Cond { kind: "ControlPlaneAvailable", ok: available, reason: if available { "Available" } else { "NotAvailable" },
            message: "", severity: "Error" };
        set_v1beta2(&mut st["conditions"], &c1, generation);
        set_v1beta2(&mut st["conditions"], &c2, generation);
        let old = &mut st["deprecated"]["v1beta1"]["conditions"];
        set_v1beta1(old, &Cond { kind: "Ready", ..c1 });
        set_v1beta1(old, &Cond { kind: "ControlPlaneReady", ..c2 });
        set_v1beta1(old, &Cond { kind: "InfrastructureReady", ok: true, reason: "", message: "", severity: "" });
    });
}
