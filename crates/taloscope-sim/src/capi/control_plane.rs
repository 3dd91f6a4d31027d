//! The TalosControlPlane reconcile as siderolabs/cluster-api-control-plane-provider-talos does
//! it (controllers/taloscontrolplane_controller.go `reconcile`): audit etcd against the Machines,
//! check etcd health, then roll out outdated Machines (upgrade.go: surge one, then scale down)
//! or scale up / down (scale.go: the etcd member leaves before the Machine is deleted), and
//! write status and conditions (updateStatus; conditions from api/v1alpha3/conditions.go).
use serde_json::{Value, json};

use super::Ctx;
use super::conditions::{Cond, is_true, set_v1beta1};
use super::machines::{
    self, CLONED_FROM_NAME, CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, DELETE_ANNOTATION, NewMachine,
};
use super::resources::CONTROL_PLANE;

const ETCD_HEALTHY: &str = "EtcdClusterHealthyCondition";

fn name_of(v: &Value) -> String {
    v["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The control-plane Machines of the workload cluster (getControlPlaneMachinesForCluster).
fn owned_machines(ctx: &Ctx) -> Vec<Value> {
    ctx.store
        .list("machines", Some(&ctx.spec.namespace))
        .into_iter()
        .filter(|m| {
            let l = &m["metadata"]["labels"];
            l.get(CONTROL_PLANE_LABEL).is_some()
                && l[CLUSTER_NAME_LABEL] == ctx.spec.workload.as_str()
        })
        .collect()
}

/// The template a Machine's ONEMachine was cloned from.
fn cloned_from(ctx: &Ctx, machine: &str) -> Option<String> {
    let infra = ctx.store.get("onemachines", &ctx.spec.namespace, machine)?;
    infra["metadata"]["annotations"][CLONED_FROM_NAME]
        .as_str()
        .map(String::from)
}

/// controlplane.go `MachinesWithOutdatedRolloutSpec`: a Kubernetes version, an infrastructure
/// template or a `controlPlaneConfig` other than the TalosControlPlane's (`MatchesControlPlaneConfig`
/// compares it with the Machine's TalosConfig spec; a Machine without one matches); a Machine
/// being deleted is not counted.
fn needs_rollout(ctx: &Ctx, tcp: &Value, m: &Value) -> bool {
    if !m["metadata"]["deletionTimestamp"].is_null() {
        return false;
    }
    let name = name_of(m);
    let version = tcp["spec"]["version"].as_str();
    let template = tcp["spec"]["infrastructureTemplate"]["name"].as_str();
    let config = ctx
        .store
        .get("talosconfigs", &ctx.spec.namespace, &name)
        .map(|c| c["spec"].clone());
    let config_differs =
        config.is_some_and(|spec| spec != tcp["spec"]["controlPlaneConfig"]["controlplane"]);
    m["spec"]["version"].as_str() != version
        || cloned_from(ctx, &name).as_deref() != template
        || config_differs
}

/// etcd.go `etcdHealthcheck`: every Machine's node runs a healthy etcd, and every member list
/// has as many members as there are Machines.
fn etcd_health(ctx: &Ctx, machines: &[Value]) -> Result<(), String> {
    let Some(cluster) = ctx.fleet.cluster(&ctx.spec.workload) else {
        return Err("workload cluster not found".into());
    };
    let etcd = cluster.etcd();
    // configs.go `talosconfigForMachines` gathers every Machine's addresses in turn and fails
    // when none are gathered yet: only Machines without addresses ahead of any with some stop
    // it; a later one is just not asked (and the member count below tells).
    let mut addressed = false;
    for m in machines {
        let name = name_of(m);
        let Some(node) = machines::node_of(ctx, &name) else {
            if !addressed {
                return Err(format!("no addresses were found for node {name:?}"));
            }
            continue;
        };
        addressed = true;
        let s = node.status();
        if !s.up {
            return Err(format!(
                "error checking etcd health on machine {name:?}: {name}: connection refused"
            ));
        }
        if !etcd.members.contains(&node.node_index) {
            return Err(format!(
                "error checking etcd health on machine {name:?}: {name}: service \"etcd\" not in expected state \"Running\": current state [Preparing] Running pre state"
            ));
        }
        if s.etcd_stopped {
            // The provider reads the service as pkg/cluster/check/service.go words it.
            return Err(format!(
                "error checking etcd health on machine {name:?}: {name}: service \"etcd\" not in expected state \"Running\": current state [{}] {}",
                crate::talos_api::etcd_service::STOPPED_STATE,
                crate::talos_api::etcd_service::STOPPED_MESSAGE
            ));
        }
        if !cluster.member_healthy(node.node_index) {
            return Err(format!(
                "error checking etcd health on machine {name:?}: {name}: service is not healthy: etcd"
            ));
        }
    }
    if etcd.members.len() != machines.len() {
        let node = machines.first().map(name_of).unwrap_or_default();
        return Err(format!(
            "error checking etcd health on machine {node:?}: {node}: expected to have {} members, got {}",
            machines.len(),
            etcd.members.len()
        ));
    }
    Ok(())
}

/// etcd.go `auditEtcd`: a member no control-plane Machine's node matches is removed
/// (`forceEtcdLeave`, EtcdRemoveMemberByID), unless some Machine has no nodeRef yet.
fn audit_etcd(ctx: &Ctx, machines: &[Value]) {
    if !ctx.knobs.audits_etcd() || machines.iter().any(|m| m["status"]["nodeRef"].is_null()) {
        return;
    }
    let Some(cluster) = ctx.fleet.cluster(&ctx.spec.workload) else {
        return;
    };
    // "break apart the noderef name in case it's an fqdn (like in AWS)"
    let hostnames: Vec<String> = machines
        .iter()
        .filter_map(|m| m["status"]["nodeRef"]["name"].as_str())
        .map(|n| n.split('.').next().unwrap_or(n).to_string())
        .collect();
    let mut etcd = cluster.etcd_lock();
    let orphans: Vec<usize> = etcd
        .members
        .iter()
        .copied()
        .filter(|&i| {
            cluster
                .nodes()
                .get(i)
                .is_some_and(|n| !hostnames.iter().any(|h| h.eq_ignore_ascii_case(n.name())))
        })
        .collect();
    for gone in orphans {
        etcd.members.retain(|&m| m != gone);
        etcd.raft_index += 1;
        if etcd.leader == Some(gone) {
            etcd.leader = None;
        }
    }
    drop(etcd);
    cluster.elect_if_leaderless();
}

/// etcd.go `gracefulEtcdLeave`: forfeit leadership, then leave the cluster.
pub(crate) fn etcd_leave(ctx: &Ctx, node_name: &str) {
    let Some(cluster) = ctx.fleet.cluster(&ctx.spec.workload) else {
        return;
    };
    let Some(node) = cluster.node(node_name) else {
        return;
    };
    cluster.move_leader_from(node.node_index);
    let mut etcd = cluster.etcd_lock();
    etcd.members.retain(|&m| m != node.node_index);
    etcd.raft_index += 1;
    if etcd.leader == Some(node.node_index) {
        etcd.leader = None;
    }
    drop(etcd);
    cluster.elect_if_leaderless();
}

/// One reconcile of every TalosControlPlane of the namespace.
pub(crate) fn reconcile(ctx: &Ctx) {
    for tcp in ctx
        .store
        .list("taloscontrolplanes", Some(&ctx.spec.namespace))
    {
        reconcile_one(ctx, &tcp);
    }
}

fn reconcile_one(ctx: &Ctx, tcp: &Value) {
    if super::is_paused(ctx, tcp) {
        return;
    }
    let tcp_name = name_of(tcp);
    let ns = ctx.spec.namespace.clone();
    audit_etcd(ctx, &owned_machines(ctx));
    let machines = owned_machines(ctx);
    let health = etcd_health(ctx, &machines);
    let mut conds: Vec<(String, bool, String, String, String)> = Vec::new();
    let mut mark = |kind: &str, ok: bool, reason: &str, severity: &str, message: String| {
        conds.push((kind.into(), ok, reason.into(), severity.into(), message));
    };
    match &health {
        Ok(()) => mark(ETCD_HEALTHY, true, "", "", String::new()),
        Err(e) => mark(
            ETCD_HEALTHY,
            false,
            "EtcdClusterUnhealthy",
            "Warning",
            e.clone(),
        ),
    }
    let desired = tcp["spec"]["replicas"].as_i64().unwrap_or(1) as usize;
    let outdated: Vec<&Value> = machines
        .iter()
        .filter(|m| needs_rollout(ctx, tcp, m))
        .collect();
    for m in &machines {
        machines::mark_up_to_date(ctx, &name_of(m), !needs_rollout(ctx, tcp, m));
    }
    // controlplane.go `MachinesNeedingRollout`: none under OnDelete; the scale-up below then
    // replaces a deleted Machine with the current spec (upgrade.go `OnDeleteStrategyType`).
    let on_delete = tcp["spec"]["rolloutStrategy"]["type"] == "OnDelete";
    if !outdated.is_empty() {
        mark(
            "MachinesSpecUpToDate",
            false,
            "RollingUpdateInProgress",
            "Warning",
            format!(
                "Rolling {} replicas with outdated spec ({} replicas up to date)",
                outdated.len(),
                machines.len() - outdated.len()
            ),
        );
        let surge = tcp["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"]
            .as_i64()
            .unwrap_or(1) as usize;
        if on_delete {
            if machines.len() < desired {
                scale_up(ctx, tcp, &machines, &mut mark);
            }
        } else if machines.len() < desired + surge {
            scale_up(ctx, tcp, &machines, &mut mark);
        } else {
            scale_down(
                ctx,
                &machines,
                &outdated,
                health.is_ok(),
                desired,
                &mut mark,
            );
        }
    } else {
        mark("MachinesSpecUpToDate", true, "", "", String::new());
        if machines.len() < desired {
            scale_up(ctx, tcp, &machines, &mut mark);
        } else if machines.len() > desired {
            scale_down(ctx, &machines, &[], health.is_ok(), desired, &mut mark);
        } else {
            mark("Resized", true, "", "", String::new());
        }
    }
    write_status(ctx, &ns, &tcp_name, &conds);
}

type Mark<'a> = dyn FnMut(&str, bool, &str, &str, String) + 'a;

/// scale.go `scaleUpControlPlane` → `bootControlPlane`: clone the infrastructure template,
/// generate a TalosConfig, create the Machine; one at a time, waiting for nodeRefs.
fn scale_up(ctx: &Ctx, tcp: &Value, machines: &[Value], mark: &mut Mark<'_>) {
    let desired = tcp["spec"]["replicas"].as_i64().unwrap_or(1);
    mark(
        "Resized",
        false,
        "ScalingUp",
        "Warning",
        format!(
            "Scaling up control plane to {desired} replicas (actual {})",
            machines.len()
        ),
    );
    if machines.iter().any(|m| m["status"]["nodeRef"].is_null()) {
        return;
    }
    let tcp_name = name_of(tcp);
    let labels = json!({CLUSTER_NAME_LABEL: ctx.spec.workload, CONTROL_PLANE_LABEL: ""});
    let owner = json!({"apiVersion": format!("{CONTROL_PLANE}/v1alpha3"), "kind": "TalosControlPlane",
        "name": tcp_name, "uid": tcp["metadata"]["uid"], "controller": true,
        "blockOwnerDeletion": true});
    machines::create(
        ctx,
        &NewMachine {
            prefix: &format!("{tcp_name}-"),
            labels,
            owner,
            version: tcp["spec"]["version"].as_str().unwrap_or_default(),
            infra_template: tcp["spec"]["infrastructureTemplate"]["name"]
                .as_str()
                .unwrap_or_default(),
            bootstrap: tcp["spec"]["controlPlaneConfig"]["controlplane"].clone(),
        },
    );
}

/// scale.go `scaleDownControlPlane`: never below one; all nodes booted and etcd healthy first;
/// the Machine chosen by `selectMachineForScaleDown` (delete annotation among outdated, then
/// any, then outdated; the oldest) leaves etcd, then is deleted with its Node.
fn scale_down(
    ctx: &Ctx,
    machines: &[Value],
    outdated: &[&Value],
    etcd_healthy: bool,
    desired: usize,
    mark: &mut Mark<'_>,
) {
    mark(
        "Resized",
        false,
        "ScalingDown",
        "Warning",
        format!(
            "Scaling down control plane to {desired} replicas (actual {})",
            machines.len()
        ),
    );
    if machines.len() <= 1 {
        mark(
            "Resized",
            false,
            "ScalingDown",
            "Error",
            "Cannot scale down control plane nodes to 0".into(),
        );
        return;
    }
    if machines
        .iter()
        .any(|m| !machines::is_ready(ctx, &name_of(m)))
    {
        // "waiting for all nodes to finish boot sequence"
        return;
    }
    if !etcd_healthy {
        // "waiting for etcd to become healthy before scaling down"
        return;
    }
    let annotated = |m: &&Value| {
        m["metadata"]["annotations"]
            .get(DELETE_ANNOTATION)
            .is_some()
    };
    let all: Vec<&Value> = machines.iter().collect();
    let pool: Vec<&Value> = if outdated.iter().any(annotated) {
        outdated.iter().copied().filter(annotated).collect()
    } else if all.iter().any(annotated) {
        all.iter().copied().filter(annotated).collect()
    } else if !outdated.is_empty() {
        outdated.to_vec()
    } else {
        all
    };
    let Some(victim) = pool.iter().min_by_key(|m| {
        m["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }) else {
        return;
    };
    let name = name_of(victim);
    // gracefulEtcdLeave talks to the Machine's own node (its talosconfig endpoint), whatever
    // its Node is named: the sim's node is named as the Machine.
    if !victim["status"]["nodeRef"].is_null() {
        etcd_leave(ctx, &name);
    }
    machines::delete(ctx, &name);
}

/// taloscontrolplane_controller.go `updateStatus` and the conditions of this pass.
fn write_status(ctx: &Ctx, ns: &str, name: &str, conds: &[(String, bool, String, String, String)]) {
    let machines = owned_machines(ctx);
    let replicas = machines.len() as i64;
    let ready = machines
        .iter()
        .filter(|m| machines::is_ready(ctx, &name_of(m)))
        .count() as i64;
    let lowest = machines
        .iter()
        .filter_map(|m| m["spec"]["version"].as_str())
        .min_by_key(|v| crate::model::scenario::parse_version(v))
        .map(String::from);
    ctx.store.modify("taloscontrolplanes", ns, name, |tcp| {
        let generation = tcp["metadata"]["generation"].clone();
        let st = &mut tcp["status"];
        st["selector"] = json!(format!(
            "{CLUSTER_NAME_LABEL}={},{CONTROL_PLANE_LABEL}",
            ctx.spec.workload
        ));
        st["replicas"] = json!(replicas);
        st["readyReplicas"] = json!(ready);
        st["unavailableReplicas"] = json!(replicas - ready);
        st["ready"] = json!(ready > 0);
        st["initialized"] = json!(true);
        st["bootstrapped"] = json!(true);
        st["observedGeneration"] = generation;
        if let Some(v) = &lowest {
            st["version"] = json!(v);
        }
        let available = ready > 0;
        let list = &mut st["conditions"];
        set_v1beta1(
            list,
            &Cond {
                kind: "Available",
                ok: available,
                reason: "WaitingForTalosBoot",
                message: "",
                severity: "Info",
            },
        );
        set_v1beta1(
            list,
            &Cond {
                kind: "MachinesBootstrapped",
                ok: true,
                reason: "",
                message: "",
                severity: "",
            },
        );
        set_v1beta1(
            list,
            &Cond {
                kind: "MachinesReady",
                ok: ready == replicas,
                reason: "NotReady",
                message: &format!("{} of {replicas} machines are not ready", replicas - ready),
                severity: "Warning",
            },
        );
        set_v1beta1(
            list,
            &Cond {
                kind: "ControlPlaneComponentsHealthy",
                ok: ready == replicas,
                reason: "ControlPlaneComponentsUnhealthy",
                message: "some control plane nodes are not ready",
                severity: "Warning",
            },
        );
        for (kind, ok, reason, severity, message) in conds {
            set_v1beta1(
                list,
                &Cond {
                    kind,
                    ok: *ok,
                    reason,
                    message,
                    severity,
                },
            );
        }
        set_v1beta1(
            list,
            &Cond {
                kind: "MachinesCreated",
                ok: true,
                reason: "",
                message: "",
                severity: "",
            },
        );
        // `patchTalosControlPlane`'s summary: neither etcd's health nor an outdated spec makes a
        // TalosControlPlane un-Ready (it stays Ready through an etcd deadlock).
        let ready_all = [
            "MachinesCreated",
            "Resized",
            "MachinesReady",
            "Available",
            "MachinesBootstrapped",
        ]
        .iter()
        .all(|kind| is_true(list, kind));
        set_v1beta1(
            list,
            &Cond {
                kind: "Ready",
                ok: ready_all,
                reason: "NotReady",
                message: "see the other conditions",
                severity: "Warning",
            },
        );
    });
}
