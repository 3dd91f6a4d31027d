//! MachineDeployments and MachineSets as CAPI's controllers reconcile them
//! (kubernetes-sigs/cluster-api internal/controllers/machinedeployment/machinedeployment_rolling.go:
//! a new MachineSet per template hash, surge up by maxSurge, old sets down while maxUnavailable
//! allows; internal/controllers/machineset/machineset_controller.go: Machines created or deleted
//! to match `spec.replicas`, the delete annotation first), with v1beta2 and deprecated v1beta1
//! status counters and conditions.
use serde_json::{Value, json};

use super::Ctx;
use super::conditions::{Cond, set_v1beta1, set_v1beta2};
use super::machines::{
    self, CLUSTER_NAME_LABEL, DELETE_ANNOTATION, DEPLOYMENT_NAME_LABEL, NewMachine, SET_NAME_LABEL,
};
use super::resources::CORE;
use super::store::random_suffix;

pub(crate) const HASH_LABEL: &str = "machine-template-hash";

fn name_of(v: &Value) -> String {
    v["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn replicas(v: &Value) -> usize {
    v["spec"]["replicas"].as_i64().unwrap_or(0).max(0) as usize
}

/// A stable hash of what makes Machines differ: version, infrastructure and bootstrap templates.
pub(crate) fn template_hash(md: &Value) -> String {
    let spec = &md["spec"]["template"]["spec"];
    let text = format!(
        "{}/{}/{}",
        spec["version"], spec["infrastructureRef"]["name"], spec["bootstrap"]["configRef"]["name"]
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    random_suffix(h)
}

fn sets_of(ctx: &Ctx, md: &str) -> Vec<Value> {
    ctx.store
        .list("machinesets", Some(&ctx.spec.namespace))
        .into_iter()
        .filter(|s| s["metadata"]["labels"][DEPLOYMENT_NAME_LABEL] == md)
        .collect()
}

fn machines_of(ctx: &Ctx, set: &str) -> Vec<Value> {
    ctx.store
        .list("machines", Some(&ctx.spec.namespace))
        .into_iter()
        .filter(|m| m["metadata"]["labels"][SET_NAME_LABEL] == set)
        .collect()
}

fn set_replicas(ctx: &Ctx, set: &str, n: usize) {
    ctx.store
        .modify("machinesets", &ctx.spec.namespace, set, |s| {
            s["spec"]["replicas"] = json!(n);
        });
}

/// One reconcile of every MachineDeployment, then every MachineSet.
pub(crate) fn reconcile(ctx: &Ctx) {
    for md in ctx
        .store
        .list("machinedeployments", Some(&ctx.spec.namespace))
    {
        if !super::is_paused(ctx, &md) {
            roll(ctx, &md);
        }
    }
    for set in ctx.store.list("machinesets", Some(&ctx.spec.namespace)) {
        if !super::is_paused(ctx, &set) {
            reconcile_set(ctx, &set);
        }
    }
    for md in ctx
        .store
        .list("machinedeployments", Some(&ctx.spec.namespace))
    {
        write_deployment_status(ctx, &md);
    }
}

/// The rolling update of one MachineDeployment (maxSurge / maxUnavailable from
/// `spec.rollout.strategy.rollingUpdate`, defaults 1 and 0).
fn roll(ctx: &Ctx, md: &Value) {
    let md_name = name_of(md);
    let desired = replicas(md);
    let hash = template_hash(md);
    let sets = sets_of(ctx, &md_name);
    let new_name = format!("{md_name}-{hash}");
    let Some(new) = sets.iter().find(|s| name_of(s) == new_name).cloned().or_else(|| {
        let first = sets.is_empty();
        let mut labels = md["spec"]["template"]["metadata"]["labels"].clone();
        labels[CLUSTER_NAME_LABEL] = json!(ctx.spec.workload);
        labels[DEPLOYMENT_NAME_LABEL] = json!(md_name);
        labels[HASH_LABEL] = json!(hash);
        ctx.store
            .create(
                "machinesets",
                json!({"apiVersion": format!("{CORE}/v1beta2"), "kind": "MachineSet",
                    "metadata": {"name": new_name, "namespace": ctx.spec.namespace, "labels": labels,
                        "ownerReferences": [{"apiVersion": format!("{CORE}/v1beta2"),
                            "kind": "MachineDeployment", "name": md_name, "uid": md["metadata"]["uid"],
                            "controller": true}]},
                    "spec": {"clusterName": ctx.spec.workload, "replicas": if first { desired } else { 0 },
                        "selector": {"matchLabels": {CLUSTER_NAME_LABEL: ctx.spec.workload,
                            DEPLOYMENT_NAME_LABEL: md_name, HASH_LABEL: hash}},
                        "template": md["spec"]["template"],
                        // machinedeployment sync.go: the MachineSet takes the deployment's
                        // deletion order (Random when it names none).
                        "deletion": {"order": md["spec"]["deletion"]["order"].as_str().unwrap_or("Random")}},
                    "status": {}}),
            )
            .ok()
    }) else {
        return;
    };
    let olds: Vec<&Value> = sets.iter().filter(|s| name_of(s) != new_name).collect();
    let strategy = &md["spec"]["rollout"]["strategy"]["rollingUpdate"];
    let surge = strategy["maxSurge"].as_i64().unwrap_or(1).max(0) as usize;
    let max_unavailable = strategy["maxUnavailable"].as_i64().unwrap_or(0).max(0) as usize;
    if olds.is_empty() {
        if replicas(&new) != desired {
            set_replicas(ctx, &new_name, desired);
        }
        return;
    }
    let total: usize = sets.iter().map(replicas).sum::<usize>().max(replicas(&new));
    // reconcileNewMachineSet: up to desired + maxSurge in all; with maxSurge 0 (the webhook
    // then asks maxUnavailable > 0) only once old Machines went (cluster-api
    // internal/controllers/machinedeployment/mdutil/util.go `NewMSNewReplicas`).
    if replicas(&new) < desired && total < desired + surge {
        set_replicas(ctx, &new_name, replicas(&new) + 1);
        return;
    }
    // reconcileOldMachineSets: down while the ready Machines stay above desired - maxUnavailable.
    let ready: usize = sets
        .iter()
        .flat_map(|s| machines_of(ctx, &name_of(s)))
        .filter(|m| machines::is_ready(ctx, &name_of(m)))
        .count();
    let new_ready = machines_of(ctx, &new_name)
        .iter()
        .filter(|m| machines::is_ready(ctx, &name_of(m)))
        .count();
    let may_scale_down = ready > desired.saturating_sub(max_unavailable)
        || (new_ready >= desired && total > desired);
    if may_scale_down && let Some(old) = olds.iter().find(|s| replicas(s) > 0) {
        set_replicas(ctx, &name_of(old), replicas(old) - 1);
    }
    for old in olds {
        if replicas(old) == 0 && machines_of(ctx, &name_of(old)).is_empty() {
            ctx.store
                .delete("machinesets", &ctx.spec.namespace, &name_of(old));
        }
    }
}

/// machineset_controller.go `syncReplicas`: create the missing Machines, delete the extra ones
/// (the delete annotation first, then ones not ready, then the oldest).
fn reconcile_set(ctx: &Ctx, set: &Value) {
    let set_name = name_of(set);
    let want = replicas(set);
    let mut have = machines_of(ctx, &set_name);
    if have.len() < want {
        let mut labels = set["spec"]["template"]["metadata"]["labels"].clone();
        labels[CLUSTER_NAME_LABEL] = json!(ctx.spec.workload);
        labels[SET_NAME_LABEL] = json!(set_name);
        labels[DEPLOYMENT_NAME_LABEL] = set["metadata"]["labels"][DEPLOYMENT_NAME_LABEL].clone();
        labels[HASH_LABEL] = set["metadata"]["labels"][HASH_LABEL].clone();
        let spec = &set["spec"]["template"]["spec"];
        let bootstrap = ctx
            .store
            .get(
                "talosconfigtemplates",
                &ctx.spec.namespace,
                spec["bootstrap"]["configRef"]["name"]
                    .as_str()
                    .unwrap_or_default(),
            )
            .map(|t| t["spec"]["template"]["spec"].clone())
            .unwrap_or_else(|| json!({"generateType": "worker"}));
        let owner = json!({"apiVersion": format!("{CORE}/v1beta2"), "kind": "MachineSet",
            "name": set_name, "uid": set["metadata"]["uid"], "controller": true});
        for _ in have.len()..want {
            machines::create(
                ctx,
                &NewMachine {
                    prefix: &format!("{set_name}-"),
                    labels: labels.clone(),
                    owner: owner.clone(),
                    version: spec["version"].as_str().unwrap_or_default(),
                    infra_template: spec["infrastructureRef"]["name"]
                        .as_str()
                        .unwrap_or_default(),
                    bootstrap: bootstrap.clone(),
                },
            );
        }
    } else if have.len() > want {
        // machineset_deletion_order.go: the delete annotation first, then Machines not ready,
        // then by `spec.deletion.order` (Random, the default, ranks the rest alike: by name;
        // Oldest / Newest by creationTimestamp, ties by name).
        let order = set["spec"]["deletion"]["order"]
            .as_str()
            .unwrap_or_default();
        let created = |m: &Value| {
            m["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        have.sort_by_key(name_of);
        match order {
            "Oldest" => have.sort_by_key(|m| created(m)),
            "Newest" => have.sort_by_key(|m| std::cmp::Reverse(created(m))),
            _ => {}
        }
        have.sort_by_key(|m| {
            (
                m["metadata"]["annotations"]
                    .get(DELETE_ANNOTATION)
                    .is_none(),
                machines::is_ready(ctx, &name_of(m)),
            )
        });
        for m in &have[..have.len() - want] {
            machines::delete(ctx, &name_of(m));
        }
    }
    write_set_status(ctx, &set_name);
}

/// (replicas, ready, up to date) of some Machines against `hash`.
fn counts(ctx: &Ctx, machines: &[Value], hash: &Value) -> (usize, usize, usize) {
    let ready = machines
        .iter()
        .filter(|m| machines::is_ready(ctx, &name_of(m)))
        .count();
    let current = machines
        .iter()
        .filter(|m| m["metadata"]["labels"][HASH_LABEL] == *hash)
        .count();
    (machines.len(), ready, current)
}

fn write_counters(st: &mut Value, replicas: usize, ready: usize, up_to_date: usize) {
    st["replicas"] = json!(replicas);
    st["readyReplicas"] = json!(ready);
    st["availableReplicas"] = json!(ready);
    st["upToDateReplicas"] = json!(up_to_date);
    let old = &mut st["deprecated"]["v1beta1"];
    old["readyReplicas"] = json!(ready);
    old["availableReplicas"] = json!(ready);
    old["unavailableReplicas"] = json!(replicas.saturating_sub(ready));
    old["fullyLabeledReplicas"] = json!(replicas);
    old["updatedReplicas"] = json!(up_to_date);
}

fn write_set_status(ctx: &Ctx, set_name: &str) {
    let ms = machines_of(ctx, set_name);
    let current = ctx
        .store
        .get("machinesets", &ctx.spec.namespace, set_name)
        .and_then(|s| {
            let md = s["metadata"]["labels"][DEPLOYMENT_NAME_LABEL]
                .as_str()?
                .to_string();
            ctx.store
                .get("machinedeployments", &ctx.spec.namespace, &md)
        })
        .map(|md| json!(template_hash(&md)));
    for m in &ms {
        let up_to_date = current.as_ref() == Some(&m["metadata"]["labels"][HASH_LABEL]);
        machines::mark_up_to_date(ctx, &name_of(m), up_to_date);
    }
    ctx.store
        .modify("machinesets", &ctx.spec.namespace, set_name, |s| {
            let hash = s["metadata"]["labels"][HASH_LABEL].clone();
            let (n, ready, current) = counts(ctx, &ms, &hash);
            let selector = format!(
                "{CLUSTER_NAME_LABEL}={},{SET_NAME_LABEL}={set_name}",
                ctx.spec.workload
            );
            let generation = s["metadata"]["generation"].as_i64().unwrap_or(1);
            let st = &mut s["status"];
            st["selector"] = json!(selector);
            st["observedGeneration"] = json!(generation);
            write_counters(st, n, ready, current);
            let c = Cond {
                kind: "MachinesReady",
                ok: ready == n,
                reason: if ready == n { "Ready" } else { "NotReady" },
                message: "",
                severity: "Warning",
            };
            set_v1beta2(&mut st["conditions"], &c, generation);
            set_v1beta1(&mut st["deprecated"]["v1beta1"]["conditions"], &c);
        });
}

/// MachineDeployment status: counters over its sets' Machines, `Available`, `RollingOut`,
/// `ScalingUp`/`ScalingDown` and `MachinesReady` (cluster-api api/core/v1beta2/machinedeployment_types.go).
fn write_deployment_status(ctx: &Ctx, md: &Value) {
    let md_name = name_of(md);
    let hash = json!(template_hash(md));
    let all: Vec<Value> = sets_of(ctx, &md_name)
        .iter()
        .flat_map(|s| machines_of(ctx, &name_of(s)))
        .collect();
    let (n, ready, current) = counts(ctx, &all, &hash);
    let desired = replicas(md);
    let rolling = current < n || n != desired && current < desired;
    ctx.store
        .modify("machinedeployments", &ctx.spec.namespace, &md_name, |d| {
            let generation = d["metadata"]["generation"].as_i64().unwrap_or(1);
            let st = &mut d["status"];
            st["selector"] = json!(format!(
                "{CLUSTER_NAME_LABEL}={},{DEPLOYMENT_NAME_LABEL}={md_name}",
                ctx.spec.workload
            ));
            st["observedGeneration"] = json!(generation);
            st["phase"] = json!(if n < desired {
                "ScalingUp"
            } else if n > desired {
                "ScalingDown"
            } else {
                "Running"
            });
            write_counters(st, n, ready, current);
            let rolling_msg = format!("Rolling out {} Machines not up to date", n - current);
            let conds = [
                Cond {
                    kind: "Available",
                    ok: ready >= desired,
                    reason: if ready >= desired {
                        "Available"
                    } else {
                        "NotAvailable"
                    },
                    message: if ready >= desired {
                        ""
                    } else {
                        "not enough available replicas"
                    },
                    severity: "Warning",
                },
                Cond {
                    kind: "RollingOut",
                    ok: rolling,
                    reason: if rolling {
                        "RollingOut"
                    } else {
                        "NotRollingOut"
                    },
                    message: if rolling { &rolling_msg } else { "" },
                    severity: "Info",
                },
                Cond {
                    kind: "MachinesReady",
                    ok: ready == n,
                    reason: if ready == n { "Ready" } else { "NotReady" },
                    message: "",
                    severity: "Warning",
                },
            ];
            for c in &conds {
                set_v1beta2(&mut st["conditions"], c, generation);
            }
            let old = &mut st["deprecated"]["v1beta1"]["conditions"];
            set_v1beta1(
                old,
                &Cond {
                    kind: "Available",
                    ok: ready >= desired,
                    reason: "WaitingForAvailableMachines",
                    message: "Minimum availability requires more ready Machines",
                    severity: "Warning",
                },
            );
            set_v1beta1(
                old,
                &Cond {
                    kind: "MachineSetReady",
                    ok: ready == n,
                    reason: "ScalingUp",
                    message: "waiting for Machines to become ready",
                    severity: "Warning",
                },
            );
            set_v1beta1(
                old,
                &Cond {
                    kind: "Ready",
                    ok: ready >= desired && !rolling,
                    reason: "WaitingForAvailableMachines",
                    message: "",
                    severity: "Warning",
                },
            );
        });
}
