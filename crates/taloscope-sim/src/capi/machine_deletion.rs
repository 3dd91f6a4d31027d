//! A Machine's deletion as cluster-api's machine controller runs it
//! (internal/controllers/machine/machine_controller.go `reconcileDelete`): the Machine keeps
//! the `machine.cluster.x-k8s.io` finalizer, so a DELETE only sets its `deletionTimestamp`;
//! then pre-drain hooks, the drain of its Node (cordon, evictions a PodDisruptionBudget may
//! refuse), the wait for volumes to detach, pre-terminate hooks, the infrastructure and
//! bootstrap objects and the Node go, and the finalizer is dropped, which removes the Machine.
//! Each phase shows in the `Deleting` condition's reason and message.
use serde_json::{Value, json};

use super::Ctx;
use super::conditions::{Cond, set_v1beta1, set_v1beta2};
use super::machines::release;
use super::store::now_unix;
use crate::kube_api::objects::rfc3339;

/// api/core/v1beta2/machine_types.go `MachineFinalizer`.
pub(crate) const MACHINE_FINALIZER: &str = "machine.cluster.x-k8s.io";
/// `PreDrainDeleteHookAnnotationPrefix`: the Machine waits while one such annotation is set.
const PRE_DRAIN_HOOK: &str = "pre-drain.delete.hook.machine.cluster.x-k8s.io";
/// `PreTerminateDeleteHookAnnotationPrefix`.
const PRE_TERMINATE_HOOK: &str = "pre-terminate.delete.hook.machine.cluster.x-k8s.io";
/// `ExcludeNodeDrainingAnnotation`: the drain is skipped.
const EXCLUDE_DRAIN: &str = "machine.cluster.x-k8s.io/exclude-node-draining";

/// Adds the finalizer to a Machine not being deleted, as `Reconcile` does before anything else.
pub(crate) fn hold(ctx: &Ctx, machine: &Value) {
    let held = machine["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x == MACHINE_FINALIZER));
    if held || !machine["metadata"]["deletionTimestamp"].is_null() {
        return;
    }
    let name = machine["metadata"]["name"].as_str().unwrap_or_default();
    ctx.store.modify(
        "machines",
        &ctx.spec.namespace,
        name,
        |m| match m["metadata"]["finalizers"].as_array_mut() {
            Some(list) => list.push(json!(MACHINE_FINALIZER)),
            None => m["metadata"]["finalizers"] = json!([MACHINE_FINALIZER]),
        },
    );
}

/// Asks for a Machine's deletion (its owner scaling down, or a client's DELETE) and runs its
/// deletion phases as far as they go now.
pub(crate) fn delete(ctx: &Ctx, name: &str) {
    if let Some(machine) = ctx
        .store
        .request_deletion("machines", &ctx.spec.namespace, name)
    {
        reconcile_delete(ctx, &machine);
    }
}

/// The annotations of `machine` starting with `prefix`, sorted (the hooks still waited for).
fn hooks(machine: &Value, prefix: &str) -> Vec<String> {
    let mut found: Vec<String> = machine["metadata"]["annotations"]
        .as_object()
        .map(|a| {
            a.keys()
                .filter(|k| k.starts_with(prefix))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// Where a deleting Machine stands: the `Deleting` reason and message.
fn set_deleting(
    ctx: &Ctx,
    name: &str,
    reason: &str,
    message: &str,
    extra: impl FnOnce(&mut Value),
) {
    ctx.store
        .modify("machines", &ctx.spec.namespace, name, |m| {
            let generation = m["metadata"]["generation"].as_i64().unwrap_or(1);
            // machine_controller_phases.go `reconcilePhase`: a Machine being deleted is Deleting.
            m["status"]["phase"] = json!("Deleting");
            let c = Cond {
                kind: "Deleting",
                ok: true,
                reason,
                message,
                severity: "Info",
            };
            set_v1beta2(&mut m["status"]["conditions"], &c, generation);
            extra(m);
        });
}

/// One pass of `reconcileDelete` over a Machine whose deletion was asked for.
pub(crate) fn reconcile_delete(ctx: &Ctx, machine: &Value) {
    let Some(name) = machine["metadata"]["name"].as_str() else {
        return;
    };
    let annotations = &machine["metadata"]["annotations"];
    // `isDeleteNodeAllowed`: only a Machine with a Node has one to drain and delete.
    if !machine["status"]["nodeRef"].is_null() {
        let waiting = hooks(machine, PRE_DRAIN_HOOK);
        if !waiting.is_empty() {
            let message = format!(
                "Waiting for pre-drain hooks to succeed (hooks: {})",
                waiting.join(",")
            );
            set_deleting(ctx, name, "WaitingForPreDrainHook", &message, |m| {
                let c = Cond {
                    kind: "PreDrainDeleteHookSucceeded",
                    ok: false,
                    reason: "WaitingExternalHook",
                    message: "",
                    severity: "Info",
                };
                set_v1beta1(&mut m["status"]["v1beta1"]["conditions"], &c);
            });
            return;
        }
        if annotations.get(EXCLUDE_DRAIN).is_none() {
            let started = machine["status"]["deletion"]["nodeDrainStartTime"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| rfc3339(now_unix()));
            // The sim's node is named as its Machine, whatever its Node's name (capi-fqdn).
            let refused = ctx.workload_drain.drain(name);
            if !refused.is_empty() {
                // drain.go `EvictionResult` as the Deleting message lists it: each pod and why.
                let pods: Vec<String> = refused
                    .iter()
                    .map(|(pod, why)| format!("* Pod {pod}: {why}"))
                    .collect();
                let message = format!(
                    "Drain not completed yet (started at {started}):\n{}",
                    pods.join("\n")
                );
                set_deleting(ctx, name, "DrainingNode", &message, |m| {
                    m["status"]["deletion"]["nodeDrainStartTime"] = json!(started);
                    let c = Cond {
                        kind: "DrainingSucceeded",
                        ok: false,
                        reason: "Draining",
                        message: "Draining the node before deletion",
                        severity: "Info",
                    };
                    set_v1beta1(&mut m["status"]["v1beta1"]["conditions"], &c);
                });
                return;
            }
            set_deleting(ctx, name, "DrainingNode", "", |m| {
                m["status"]["deletion"]["nodeDrainStartTime"] = json!(started);
                // The sim's nodes attach no volumes: the wait for their detach ends at once.
                m["status"]["deletion"]["waitForNodeVolumeDetachStartTime"] =
                    json!(rfc3339(now_unix()));
            });
        }
    }
    let waiting = hooks(machine, PRE_TERMINATE_HOOK);
    if !waiting.is_empty() {
        let message = format!(
            "Waiting for pre-terminate hooks to succeed (hooks: {})",
            waiting.join(",")
        );
        set_deleting(ctx, name, "WaitingForPreTerminateHook", &message, |_| {});
        return;
    }
    // The ONEMachine and the TalosConfig hold no finalizer in the sim: they go at once, the
    // VM's termination and the Node's removal follow (machines.rs `release`).
    release(ctx, name);
    ctx.store
        .modify("machines", &ctx.spec.namespace, name, |m| {
            if let Some(list) = m["metadata"]["finalizers"].as_array_mut() {
                list.retain(|f| f != MACHINE_FINALIZER);
            }
        });
}
