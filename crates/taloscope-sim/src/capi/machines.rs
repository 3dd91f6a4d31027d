//! Machines as CAPI's machine controller and the infrastructure provider keep them: a new
//! Machine gets its ONEMachine (cloned from a template) and TalosConfig, the ONEMachine its VM,
//! and the Machine a status from the VM and the workload node (phase, nodeRef, addresses,
//! nodeInfo, conditions); a deleted Machine takes its VM, Node and provider objects with it.
use std::sync::Arc;

use serde_json::{Value, json};

use super::Ctx;
use super::conditions::{Cond, set_v1beta1, set_v1beta2};
use super::resources::{BOOTSTRAP, INFRASTRUCTURE};
use super::store::random_suffix;
use crate::model::scenario::NodeRole;
use crate::model::state::SimNode;

pub(crate) const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
pub(crate) const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
pub(crate) const DEPLOYMENT_NAME_LABEL: &str = "cluster.x-k8s.io/deployment-name";
pub(crate) const SET_NAME_LABEL: &str = "cluster.x-k8s.io/set-name";
/// Marks the Machine to remove first on a scale-down (cluster-api api/core/v1beta2/common_types.go).
pub(crate) const DELETE_ANNOTATION: &str = "cluster.x-k8s.io/delete-machine";
/// Set on objects cloned from a template (cluster-api internal/controllers/external/util.go
/// `CreateFromTemplate`); the control-plane provider compares it to find outdated Machines.
pub(crate) const CLONED_FROM_NAME: &str = "cluster.x-k8s.io/cloned-from-name";

/// What a new Machine is made from.
pub(crate) struct NewMachine<'a> {
    pub prefix: &'a str,
    pub labels: Value,
    pub owner: Value,
    pub version: &'a str,
    /// The ONEMachineTemplate to clone.
    pub infra_template: &'a str,
    /// The TalosConfig spec (from the TalosControlPlane or the TalosConfigTemplate).
    pub bootstrap: Value,
}

/// Creates the ONEMachine, TalosConfig and Machine (all of one name); returns the name.
pub(crate) fn create(ctx: &Ctx, m: &NewMachine<'_>) -> Option<String> {
    let ns = ctx.spec.namespace.as_str();
    let template = ctx.store.get("onemachinetemplates", ns, m.infra_template)?;
    let name = format!(
        "{}{}",
        m.prefix,
        random_suffix(crate::model::clock::random_u64())
    );
    let mut infra_spec = template["spec"]["template"]["spec"].clone();
    infra_spec["providerID"] = Value::Null;
    ctx.store
        .create(
            "onemachines",
            json!({"apiVersion": format!("{INFRASTRUCTURE}/v1beta1"), "kind": "ONEMachine",
                "metadata": {"name": name, "namespace": ns, "labels": m.labels,
                    "annotations": {CLONED_FROM_NAME: m.infra_template,
                        "cluster.x-k8s.io/cloned-from-groupkind": "ONEMachineTemplate.infrastructure.cluster.x-k8s.io"}},
                "spec": infra_spec, "status": {"ready": false}}),
        )
        .ok()?;
    ctx.store
        .create(
            "talosconfigs",
            json!({"apiVersion": format!("{BOOTSTRAP}/v1alpha3"), "kind": "TalosConfig",
                "metadata": {"name": name, "namespace": ns, "labels": m.labels},
                "spec": m.bootstrap,
                "status": {"ready": true, "dataSecretName": format!("{name}-bootstrap-data")}}),
        )
        .ok()?;
    ctx.store
        .create(
            "machines",
            json!({"apiVersion": super::routes::core_api_version(), "kind": "Machine",
                "metadata": {"name": name, "namespace": ns, "labels": m.labels,
                    "ownerReferences": [m.owner]},
                "spec": {"clusterName": ctx.spec.workload, "version": m.version,
                    "bootstrap": {"configRef": {"apiGroup": BOOTSTRAP, "kind": "TalosConfig", "name": name},
                        "dataSecretName": format!("{name}-bootstrap-data")},
                    "infrastructureRef": {"apiGroup": INFRASTRUCTURE, "kind": "ONEMachine", "name": name}},
                "status": {"phase": "Pending"}}),
        )
        .ok()?;
    Some(name)
}

/// The workload node a Machine's VM became (not one that was deleted).
pub(crate) fn node_of(ctx: &Ctx, name: &str) -> Option<Arc<SimNode>> {
    let cluster = ctx.fleet.cluster(&ctx.spec.workload)?;
    cluster
        .node(name)
        .filter(|n| !n.removed.load(std::sync::atomic::Ordering::Relaxed))
        .cloned()
}

/// The Kubernetes Node name of the workload node `hostname`: the hostname itself, or its FQDN
/// when the scenario names Nodes in a domain (`capi-fqdn`).
pub(crate) fn node_name(ctx: &Ctx, hostname: &str) -> String {
    match &ctx.spec.node_domain {
        Some(domain) => format!("{hostname}.{domain}"),
        None => hostname.to_string(),
    }
}

/// The Machine's Node is Ready (kubelet up on a running node).
pub(crate) fn is_ready(ctx: &Ctx, name: &str) -> bool {
    node_of(ctx, name).is_some_and(|n| {
        let s = n.status();
        s.up && s.ready && !s.rebooting
    })
}

/// The Machine's `UpToDate` condition as its owner judges it (v1beta2 only; cluster-api
/// api/core/v1beta2/machine_types.go `MachineUpToDateCondition`).
pub(crate) fn mark_up_to_date(ctx: &Ctx, name: &str, up_to_date: bool) {
    ctx.store
        .modify("machines", &ctx.spec.namespace, name, |m| {
            let generation = m["metadata"]["generation"].as_i64().unwrap_or(1);
            let c = Cond {
                kind: "UpToDate",
                ok: up_to_date,
                reason: if up_to_date {
                    "UpToDate"
                } else {
                    "NotUpToDate"
                },
                message: if up_to_date {
                    ""
                } else {
                    "* Version or infrastructure template differ from the owner's spec"
                },
                severity: "Info",
            };
            set_v1beta2(&mut m["status"]["conditions"], &c, generation);
        });
}

/// Deletes a Machine through its deletion phases (machine_deletion.rs).
pub(crate) fn delete(ctx: &Ctx, name: &str) {
    super::machine_deletion::delete(ctx, name);
}

/// Terminates the VM, removes the Node and the provider objects of a Machine that is gone.
pub(crate) fn release(ctx: &Ctx, name: &str) {
    let ns = ctx.spec.namespace.as_str();
    ctx.store.delete("onemachines", ns, name);
    ctx.store.delete("talosconfigs", ns, name);
    ctx.released
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_string());
    finish_releases(ctx);
}

/// A VM still booting cannot be terminated yet (oned refuses `terminate` in PROLOG/BOOT), and
/// its Talos may join after its Machine went: both are retried until the VM is DONE.
fn finish_releases(ctx: &Ctx) {
    let mut released = ctx.released.lock().unwrap_or_else(|e| e.into_inner());
    released.retain(|name| {
        if let Some(vm) = ctx.one.vm_by_name(name).filter(|v| !v.done) {
            ctx.one.terminate(vm.id);
        }
        ctx.fleet.remove_node(&ctx.spec.workload, name);
        ctx.one.vm_by_name(name).is_some_and(|v| !v.done)
    });
}

/// One pass: provider objects of deleted Machines released, VMs for new ONEMachines, and every
/// Machine's status.
pub(crate) fn reconcile(ctx: &Ctx) {
    let ns = ctx.spec.namespace.as_str();
    let machines = ctx.store.list("machines", Some(ns));
    let names: Vec<String> = machines
        .iter()
        .filter_map(|m| m["metadata"]["name"].as_str().map(String::from))
        .collect();
    for infra in ctx.store.list("onemachines", Some(ns)) {
        let Some(name) = infra["metadata"]["name"].as_str() else {
            continue;
        };
        if !names.iter().any(|n| n == name) {
            release(ctx, name);
        }
    }
    finish_releases(ctx);
    for m in &machines {
        if !m["metadata"]["deletionTimestamp"].is_null() {
            super::machine_deletion::reconcile_delete(ctx, m);
            continue;
        }
        super::machine_deletion::hold(ctx, m);
        provision(ctx, m);
        update_status(ctx, m);
    }
}

/// CAPONE's ONEMachine reconcile: a VM from `spec.templateName` with the bootstrap data, and
/// `providerID: one://<vm id>` once it exists.
fn provision(ctx: &Ctx, machine: &Value) {
    let ns = ctx.spec.namespace.as_str();
    let Some(name) = machine["metadata"]["name"].as_str() else {
        return;
    };
    let Some(infra) = ctx.store.get("onemachines", ns, name) else {
        return;
    };
    let vm = match ctx.one.vm_by_name(name) {
        Some(vm) => vm,
        None => {
            let role = if machine["metadata"]["labels"]
                .get(CONTROL_PLANE_LABEL)
                .is_some()
            {
                NodeRole::ControlPlane
            } else {
                NodeRole::Worker
            };
            if role == NodeRole::ControlPlane && stalls(ctx, name) {
                return;
            }
            let template = infra["spec"]["templateName"].as_str().unwrap_or_default();
            let version = machine["spec"]["version"].as_str().unwrap_or_default();
            if let Err(e) = ctx
                .one
                .create_vm(template, name, &ctx.spec.workload, role, version)
            {
                tracing::warn!(machine = name, "ONEMachine cannot get a VM: {e}");
                return;
            }
            match ctx.one.vm_by_name(name) {
                Some(vm) => vm,
                None => return,
            }
        }
    };
    let provider_id = format!("one://{}", vm.id);
    ctx.store.modify("onemachines", ns, name, |o| {
        o["spec"]["providerID"] = json!(provider_id);
        o["status"]["ready"] = json!(vm.running);
        o["status"]["addresses"] = json!([{"type": "InternalIP", "address": vm.ip.to_string()}]);
    });
    ctx.store.modify("machines", ns, name, |m| {
        m["spec"]["providerID"] = json!(provider_id);
    });
}

/// Whether the Machine's VM never comes (the NodeRefLessSurge fault: the next control plane
/// created after the fault is armed, and that one for good).
fn stalls(ctx: &Ctx, name: &str) -> bool {
    let mut stalled = ctx.knobs.stalled.lock().unwrap_or_else(|e| e.into_inner());
    if stalled.contains(name) {
        return true;
    }
    let armed = ctx
        .knobs
        .stall_next_control_plane
        .swap(false, std::sync::atomic::Ordering::Relaxed);
    if armed {
        stalled.insert(name.to_string());
    }
    armed
}

/// The Machine's status from its VM and Node (cluster-api internal/controllers/machine:
/// phases from machine_controller_phases.go, conditions from machine_controller_status.go).
fn update_status(ctx: &Ctx, machine: &Value) {
    let ns = ctx.spec.namespace.as_str();
    let Some(name) = machine["metadata"]["name"].as_str() else {
        return;
    };
    let vm = ctx.one.vm_by_name(name);
    let node = node_of(ctx, name).map(|n| n.status());
    let running = vm.as_ref().is_some_and(|v| v.running);
    let ready = node
        .as_ref()
        .is_some_and(|s| s.up && s.ready && !s.rebooting);
    let phase = match (&vm, &node) {
        (Some(v), _) if v.failed => "Failed",
        (_, Some(_)) => "Running",
        (Some(v), None) if v.running => "Provisioned",
        (Some(_), None) => "Provisioning",
        (None, None) => "Pending",
    };
    let generation = machine["metadata"]["generation"].as_i64().unwrap_or(1);
    let (node_reason, node_message) = match &node {
        None => (
            "NodeDoesNotExist",
            "Waiting for a Node with spec.providerID".to_string(),
        ),
        Some(_) if ready => ("NodeReady", String::new()),
        Some(s) => (
            "NodeNotReady",
            format!(
                "Node {} is not ready (kubelet not posting ready status)",
                s.name
            ),
        ),
    };
    let ready_message = if ready {
        String::new()
    } else {
        format!("* NodeReady: {node_message}")
    };
    let conds = [
        Cond {
            kind: "BootstrapConfigReady",
            ok: true,
            reason: "DataSecretProvided",
            message: "",
            severity: "",
        },
        Cond {
            kind: "InfrastructureReady",
            ok: running,
            reason: if running { "Ready" } else { "NotReady" },
            message: if running {
                ""
            } else {
                "ONEMachine status.ready is false"
            },
            severity: "Info",
        },
        Cond {
            kind: "NodeReady",
            ok: ready,
            reason: node_reason,
            message: &node_message,
            severity: "Warning",
        },
        Cond {
            kind: "NodeHealthy",
            ok: ready,
            reason: if ready {
                "NodeHealthy"
            } else {
                "NodeNotHealthy"
            },
            message: &node_message,
            severity: "Warning",
        },
        Cond {
            kind: "Ready",
            ok: ready,
            reason: if ready { "Ready" } else { "NotReady" },
            message: &ready_message,
            severity: "Warning",
        },
        Cond {
            kind: "Available",
            ok: ready,
            reason: if ready { "Available" } else { "NotReady" },
            message: if ready { "" } else { "* Ready: not ready" },
            severity: "Warning",
        },
        Cond {
            kind: "Deleting",
            ok: false,
            reason: "NotDeleting",
            message: "",
            severity: "Info",
        },
        Cond {
            kind: "Paused",
            ok: false,
            reason: "NotPaused",
            message: "",
            severity: "Info",
        },
    ];
    ctx.store.modify("machines", ns, name, |m| {
        let st = &mut m["status"];
        st["phase"] = json!(phase);
        st["observedGeneration"] = json!(generation);
        st["initialization"] =
            json!({"infrastructureProvisioned": running, "bootstrapDataSecretCreated": true});
        if let Some(v) = &vm {
            st["addresses"] = json!([{"type": "InternalIP", "address": v.ip.to_string()},
                {"type": "Hostname", "address": node_name(ctx, name)}]);
        }
        match &node {
            Some(s) => {
                st["nodeRef"] = json!({"name": node_name(ctx, &s.name)});
                st["nodeInfo"] = json!({"osImage": format!("Talos ({})", s.talos_version),
                    "kubeletVersion": s.kubernetes.kubelet.version, "kernelVersion": "6.12.57-talos",
                    "containerRuntimeVersion": "containerd://2.1.5", "operatingSystem": "linux",
                    "architecture": "amd64"});
            }
            None => {
                if let Some(o) = st.as_object_mut() {
                    o.remove("nodeRef");
                    o.remove("nodeInfo");
                }
            }
        }
        for c in &conds {
            if c.kind == "Deleting" || c.kind == "Paused" {
                // v1beta2 reports these as False; v1beta1 had none.
                set_v1beta2(&mut st["conditions"], c, generation);
                continue;
            }
            set_v1beta2(&mut st["conditions"], c, generation);
            if c.kind != "NodeReady" && c.kind != "Available" {
                let old_kind = match c.kind {
                    "BootstrapConfigReady" => "BootstrapReady",
                    other => other,
                };
                set_v1beta1(
                    &mut st["deprecated"]["v1beta1"]["conditions"],
                    &Cond { kind: old_kind, ..*c },
                );
            }
        }
    });
}
