//! The guards of a provision: etcd can spare a member for a joining control plane, the member
//! count stays odd, one control plane at a time, the cluster's own template, a machine config
//! pointing at this cluster, a provider with room, and no Cluster API owner (`capi_owned`).
//! Pure: the same list for CLI and console.
use std::collections::BTreeSet;

use crate::capi::{CapiOwner, capi_owned_nodes};
use crate::config::{Config, MachineRole, NameOrId};
use crate::discovery::host_of;
use crate::fleet::EtcdReport;
use crate::guards::{Guard, GuardId};

use super::plan::{PlanSource, ProvisionPlan};
use super::room::{RoleBounds, role_room, room_findings, room_guard};

/// What the operator types to end with an even number of etcd members.
pub const EVEN_MEMBERS_ACK: &str = "an even etcd member count";
/// What the operator types to add several control planes in one go.
pub const SEVERAL_CONTROL_PLANES_ACK: &str = "several control planes at once";
/// What the operator types to use a template the config does not name for this role.
pub const OTHER_SOURCE_ACK: &str = "use this template";

/// What the guards look at, gathered by the caller (CLI, console, runner).
#[derive(Debug, Clone)]
pub struct ProvisionFacts<'a> {
    pub plan: &'a ProvisionPlan,
    pub config: &'a Config,
    /// etcd as the cluster reports it now.
    pub etcd: &'a EtcdReport,
    /// Addresses of this cluster: talos endpoints and nodes, members, the kube server.
    pub cluster_hosts: &'a BTreeSet<String>,
    /// The machine config's `cluster.controlPlane.endpoint` (`None`: not set or no config).
    pub machine_config_endpoint: Option<&'a str>,
    /// The Cluster API Cluster that owns the cluster (`capi::read_owner`, or the console's
    /// fleet model), if any.
    pub capi_owner: Option<&'a CapiOwner>,
}

/// Every guard of the plan, in [`GuardId::PROVISION`] order.
pub fn provision_guards(f: &ProvisionFacts<'_>) -> Vec<Guard> {
    vec![
        capi_owned_nodes(f.capi_owner, &f.plan.cluster),
        join_quorum(f.plan, f.etcd),
        odd_members(f.plan, f.etcd),
        one_control_plane(f.plan),
        provision_source(f.plan, f.config),
        machine_config_endpoint(f),
        provider_room(f.plan),
    ]
}

/// A control plane joins etcd only when etcd can lose a member now.
pub fn join_quorum(plan: &ProvisionPlan, etcd: &EtcdReport) -> Guard {
    let id = GuardId::JoinQuorum;
    if plan.role == MachineRole::Worker {
        return Guard::pass(id, "workers do not join etcd");
    }
    let q = etcd.quorum;
    if q.members == 0 {
        return Guard::fail(
            id,
            "etcd members unknown: cannot tell whether a join is safe",
        );
    }
    let counts = format!(
        "{} of {} members healthy, {} needed",
        q.healthy, q.members, q.needed
    );
    if q.tolerates == 0 {
        Guard::fail(
            id,
            format!(
                "etcd can lose 0 members now ({counts}): repair it before a control plane joins"
            ),
        )
    } else {
        Guard::pass(id, format!("etcd can lose {} ({counts})", q.tolerates))
    }
}

/// An even member count needs a larger majority without tolerating more failures.
pub fn odd_members(plan: &ProvisionPlan, etcd: &EtcdReport) -> Guard {
    let id = GuardId::OddMembers;
    if plan.role == MachineRole::Worker {
        return Guard::pass(id, "workers do not join etcd");
    }
    let after = etcd.quorum.members + plan.count;
    if after.is_multiple_of(2) {
        Guard::warn(
            id,
            format!(
                "{} -> {after} etcd members: an even count tolerates no more failures than {}",
                etcd.quorum.members,
                after - 1
            ),
        )
        .acked_by(EVEN_MEMBERS_ACK)
    } else {
        Guard::pass(
            id,
            format!("{} -> {after} etcd members", etcd.quorum.members),
        )
    }
}

/// More than one new control plane at a time needs its own acknowledgement.
pub fn one_control_plane(plan: &ProvisionPlan) -> Guard {
    let id = GuardId::OneControlPlane;
    match (plan.role, plan.count) {
        (MachineRole::Worker, _) => Guard::pass(id, "workers do not join etcd"),
        (_, 0 | 1) => Guard::pass(id, "one new control plane"),
        (_, n) => Guard::warn(
            id,
            format!("{n} new control planes at once: etcd grows by {n} members together"),
        )
        .acked_by(SEVERAL_CONTROL_PLANES_ACK),
    }
}

fn names(wanted: &NameOrId, id: u64, name: &str) -> bool {
    wanted.id() == Some(id) || matches!(wanted, NameOrId::Name(n) if n == name)
}

/// The template (or service) is the one the config names for this cluster and role, at the
/// cluster's provider; otherwise a warning that says whose it is.
pub fn provision_source(plan: &ProvisionPlan, config: &Config) -> Guard {
    let id = GuardId::ProvisionSource;
    let entry = config.clusters.get(&plan.cluster);
    let own_provider = entry.and_then(|e| e.provider.as_deref());
    if own_provider != Some(plan.provider.as_str()) {
        let own = own_provider.unwrap_or("none");
        return Guard::warn(
            id,
            format!(
                "provider {} is not {}'s provider ({own})",
                plan.provider, plan.cluster
            ),
        )
        .acked_by(OTHER_SOURCE_ACK);
    }
    let role = plan.role;
    match &plan.source {
        PlanSource::Template { id: tid, name } => {
            let configured = entry.and_then(|e| e.templates.get(role));
            if configured.is_some_and(|w| names(w, *tid, name)) {
                return Guard::pass(id, format!("{name} is {}'s {role} template", plan.cluster));
            }
            let owner = config.clusters.iter().find_map(|(cluster, e)| {
                let same_provider = e.provider.as_deref() == Some(plan.provider.as_str());
                [MachineRole::Controlplane, MachineRole::Worker]
                    .into_iter()
                    .find(|r| {
                        same_provider && e.templates.get(*r).is_some_and(|w| names(w, *tid, name))
                    })
                    .map(|r| format!("{cluster}'s {r} template"))
            });
            let configured = configured.map_or("none configured".to_string(), |w| w.to_string());
            let whose = owner.map_or(String::new(), |o| format!(" (it is {o})"));
            Guard::warn(
                id,
                format!(
                    "{name} is not {}'s {role} template ({configured}){whose}",
                    plan.cluster
                ),
            )
            .acked_by(OTHER_SOURCE_ACK)
        }
        PlanSource::ServiceRole {
            service_id,
            service_name,
            ..
        } => {
            let configured = entry.and_then(|e| e.service.as_ref());
            if configured.is_some_and(|w| names(w, *service_id, service_name)) {
                Guard::pass(
                    id,
                    format!("service {service_name} is {}'s service", plan.cluster),
                )
            } else {
                Guard::warn(
                    id,
                    format!(
                        "service {service_name} is not the service configured for {}",
                        plan.cluster
                    ),
                )
                .acked_by(OTHER_SOURCE_ACK)
            }
        }
    }
}

/// The node joins what its machine config's endpoint points at: it must be this cluster.
pub fn machine_config_endpoint(f: &ProvisionFacts<'_>) -> Guard {
    let id = GuardId::MachineConfigEndpoint;
    let Some(path) = &f.plan.machine_config else {
        return Guard::pass(id, "the OneFlow role carries its own machine config");
    };
    let Some(endpoint) = f.machine_config_endpoint else {
        return Guard::fail(
            id,
            format!("{} sets no cluster.controlPlane.endpoint", path.display()),
        );
    };
    match host_of(endpoint) {
        Some(host) if f.cluster_hosts.contains(&host) => Guard::pass(
            id,
            format!("{endpoint} is an address of {}", f.plan.cluster),
        ),
        _ => Guard::fail(
            id,
            format!(
                "{} joins {endpoint}, which is not an address of {}",
                path.display(),
                f.plan.cluster
            ),
        ),
    }
}

/// The provider answered (the plan was made from its answers) and has room: the OneFlow role
/// stays within its `max_vms`, the template's VMs within the user's and group's VM quotas.
pub fn provider_room(plan: &ProvisionPlan) -> Guard {
    let id = GuardId::ProviderRoom;
    let mut findings = Vec::new();
    let answered = match &plan.source {
        PlanSource::ServiceRole {
            role,
            target,
            max_vms,
            ..
        } => {
            findings.push(role_room(&RoleBounds {
                role: role.clone(),
                vms: *target,
                min_vms: None,
                max_vms: *max_vms,
            }));
            String::new()
        }
        PlanSource::Template { name, .. } => {
            format!("{} answered with template {name}", plan.provider)
        }
    };
    findings.extend(room_findings(&plan.room));
    room_guard(id, &answered, &findings)
}

/// Addresses of a cluster as the guards compare them: hosts of its talos endpoints and nodes,
/// its kube server and the node addresses it reports.
pub fn cluster_hosts<'a>(addresses: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    addresses.into_iter().filter_map(host_of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ClusterConfig, ProviderKind, RoleMap};
    use crate::fleet::Quorum;
    use crate::guards::{Verdict, blocking};

    fn plan(role: MachineRole, count: usize, template: &str) -> ProvisionPlan {
        ProvisionPlan {
            cluster: "prod".into(),
            provider: "one".into(),
            provider_kind: ProviderKind::Opennebula,
            endpoint: "http://127.0.0.1:2633/RPC2".into(),
            role,
            count,
            source: PlanSource::Template {
                id: 7,
                name: template.into(),
            },
            machine_config: Some("/c/prod-cp.yaml".into()),
            name_pattern: "{cluster}-{role}-{n}".into(),
            vm_names: vec![],
            room: Default::default(),
        }
    }

    fn config() -> Config {
        let entry = |cp: &str, w: &str| ClusterConfig {
            provider: Some("one".into()),
            templates: RoleMap {
                controlplane: Some(NameOrId::Name(cp.into())),
                worker: Some(NameOrId::Name(w.into())),
            },
            ..ClusterConfig::default()
        };
        let mut config = Config::default();
        config
            .clusters
            .insert("prod".into(), entry("prod-cp", "prod-w"));
        config
            .clusters
            .insert("lab".into(), entry("lab-cp", "lab-w"));
        config
    }

    fn etcd(members: usize, healthy: usize) -> EtcdReport {
        EtcdReport {
            quorum: Quorum::from_counts(members, healthy),
            ..EtcdReport::default()
        }
    }

    fn guards(plan: &ProvisionPlan, etcd: &EtcdReport, endpoint: Option<&str>) -> Vec<Guard> {
        let hosts = cluster_hosts(["127.0.0.1:50000", "https://127.0.0.2:6443"]);
        let config = config();
        provision_guards(&ProvisionFacts {
            plan,
            config: &config,
            etcd,
            cluster_hosts: &hosts,
            machine_config_endpoint: endpoint,
            capi_owner: None,
        })
    }

    fn verdict(guards: &[Guard], id: GuardId) -> (Verdict, String) {
        let g = guards.iter().find(|g| g.id == id).expect("guard");
        (g.verdict, g.reason.clone())
    }

    const OK: Option<&str> = Some("https://127.0.0.1:6443");

    #[test]
    fn a_control_plane_on_a_cluster_that_can_lose_none_is_refused() {
        let gs = guards(
            &plan(MachineRole::Controlplane, 1, "prod-cp"),
            &etcd(3, 2),
            OK,
        );
        let (v, reason) = verdict(&gs, GuardId::JoinQuorum);
        assert_eq!(v, Verdict::Fail, "{reason}");
        assert!(reason.contains("can lose 0"), "{reason}");
        assert!(blocking(&gs, &[]));
        // A worker does not join etcd: the same cluster takes it.
        let gs = guards(&plan(MachineRole::Worker, 1, "prod-w"), &etcd(3, 2), OK);
        assert!(!blocking(&gs, &[]), "{gs:?}");
    }

    #[test]
    fn a_fourth_control_plane_warns_of_an_even_count_until_acknowledged() {
        let gs = guards(
            &plan(MachineRole::Controlplane, 1, "prod-cp"),
            &etcd(3, 3),
            OK,
        );
        let (v, reason) = verdict(&gs, GuardId::OddMembers);
        assert_eq!(v, Verdict::Warn);
        assert!(reason.contains("3 -> 4"), "{reason}");
        assert!(blocking(&gs, &[]));
        assert!(!blocking(&gs, &[EVEN_MEMBERS_ACK.to_string()]));
        // Two more make five: odd, but two at once needs its own acknowledgement.
        let gs = guards(
            &plan(MachineRole::Controlplane, 2, "prod-cp"),
            &etcd(3, 3),
            OK,
        );
        assert_eq!(verdict(&gs, GuardId::OddMembers).0, Verdict::Pass);
        assert_eq!(verdict(&gs, GuardId::OneControlPlane).0, Verdict::Warn);
        assert!(blocking(&gs, &[]));
        assert!(!blocking(&gs, &[SEVERAL_CONTROL_PLANES_ACK.to_string()]));
    }

    #[test]
    fn another_roles_or_clusters_template_is_named_and_needs_an_ack() {
        let gs = guards(&plan(MachineRole::Worker, 1, "prod-cp"), &etcd(3, 3), OK);
        let (v, reason) = verdict(&gs, GuardId::ProvisionSource);
        assert_eq!(v, Verdict::Warn);
        assert!(reason.contains("prod's controlplane template"), "{reason}");
        let gs = guards(&plan(MachineRole::Worker, 1, "lab-w"), &etcd(3, 3), OK);
        let (_, reason) = verdict(&gs, GuardId::ProvisionSource);
        assert!(reason.contains("lab's worker template"), "{reason}");
        assert!(!blocking(&gs, &[OTHER_SOURCE_ACK.to_string()]));
    }

    #[test]
    fn a_machine_config_for_another_cluster_fails() {
        let p = plan(MachineRole::Worker, 1, "prod-w");
        let gs = guards(&p, &etcd(3, 3), Some("https://127.0.0.99:6443"));
        assert_eq!(
            verdict(&gs, GuardId::MachineConfigEndpoint).0,
            Verdict::Fail
        );
        let gs = guards(&p, &etcd(3, 3), None);
        assert_eq!(
            verdict(&gs, GuardId::MachineConfigEndpoint).0,
            Verdict::Fail
        );
        let gs = guards(&p, &etcd(3, 3), OK);
        assert!(gs.iter().all(|g| g.verdict == Verdict::Pass), "{gs:?}");
    }

    #[test]
    fn a_oneflow_role_past_its_max_vms_fails() {
        let mut p = plan(MachineRole::Worker, 2, "x");
        p.source = PlanSource::ServiceRole {
            service_id: 0,
            service_name: "talos-prod".into(),
            role: "worker".into(),
            cardinality: 2,
            target: 4,
            max_vms: Some(3),
        };
        assert_eq!(provider_room(&p).verdict, Verdict::Fail);
        if let PlanSource::ServiceRole { max_vms, .. } = &mut p.source {
            *max_vms = Some(4);
        }
        assert_eq!(provider_room(&p).verdict, Verdict::Pass);
    }

    #[test]
    fn template_vms_past_the_vm_quota_fail_with_the_figures() {
        use crate::opennebula::quota::HolderKind;
        use crate::opennebula::{Amount, QuotaMetric};
        use crate::provision::room::tests::holder;
        use crate::provision::room::{ProviderRoom, QuotaReading, VmDemand};
        let mut p = plan(MachineRole::Worker, 2, "prod-w");
        let reading = QuotaReading {
            holders: vec![holder(
                HolderKind::Group,
                100,
                "lab",
                &[(QuotaMetric::Cpu, 4, 3)],
            )],
            unreadable: Vec::new(),
        };
        let two = VmDemand {
            vms: 2,
            cpu: Amount::whole(2),
            memory: Amount::ZERO,
        };
        p.room = ProviderRoom {
            roles: Vec::new(),
            quotas: Some((reading, two)),
        };
        let g = provider_room(&p);
        assert_eq!(g.verdict, Verdict::Fail);
        assert_eq!(
            g.reason,
            "one answered with template prod-w; group lab: CPU quota 4, 3 used, the plan needs 2"
        );
    }
}
