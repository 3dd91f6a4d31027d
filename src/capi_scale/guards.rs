//! The guards of a Cluster API scale: no other rollout (the cluster's rollout Lease), the
//! object at rest, the count in bounds, etcd healthy (over the Talos API) with a majority
//! through the change, and an odd control-plane count. Pure: the console and `taloscope
//! scale` build the same list, before the patch and again while the scale is followed.
use crate::capi::{ClusterTree, MachineRole};
use crate::fleet::{ClusterStatus, Quorum};
use crate::guards::{Guard, GuardId};
use crate::provision::guards::EVEN_MEMBERS_ACK;
use crate::upgrade::guards::{no_other_rollout, no_other_rollout_read};
use crate::upgrade::kubernetes::guards::etcd_healthy;

use super::plan::ScalePlan;

/// The most control planes a scale may ask for: more etcd members slow every write.
pub const MAX_CONTROL_PLANES: u32 = 7;
/// The most workers one MachineDeployment may be scaled to in one go.
pub const MAX_WORKERS: u32 = 100;

/// What the guards look at, read by the caller (command, console, runner).
#[derive(Debug, Clone, Copy)]
pub struct ScaleFacts<'a> {
    pub plan: &'a ScalePlan,
    /// The workload cluster's tree as its management cluster shows it now.
    pub tree: &'a ClusterTree,
    /// The workload cluster now: etcd over the Talos API, its nodes, its rollout Lease.
    pub status: &'a ClusterStatus,
    /// This run's holder (`user@host/pid-start`): its own Lease is no other rollout.
    pub me: &'a str,
}

/// Every guard, in [`GuardId::SCALE`] order. A rollout Lease that could not be read is not a
/// free one: nothing here expects the workload's API down, so that fails.
pub fn scale_guards(f: &ScaleFacts<'_>) -> Vec<Guard> {
    vec![
        no_other_rollout_read(&f.plan.cluster, &f.status.other_rollout_read(f.me), None),
        settled(f.plan, f.tree),
        bounds(f.plan),
        etcd_now(f.plan, f.status),
        quorum_through(f.plan, f.status),
        odd_control_planes(f.plan),
    ]
}

/// What is checked on every poll while the scale goes on: no other rollout took the cluster
/// and, for control planes, etcd stays healthy.
pub fn follow_guards(f: &ScaleFacts<'_>) -> Vec<Guard> {
    vec![
        no_other_rollout(&f.plan.cluster, f.status.other_rollout(f.me).as_ref()),
        etcd_now(f.plan, f.status),
    ]
}

/// As many Machines as `spec.replicas`, none outdated, none being deleted; Machines not
/// Ready yet are only a warning.
pub fn settled(plan: &ScalePlan, tree: &ClusterTree) -> Guard {
    let id = GuardId::ScaleSettled;
    let object = plan.object();
    let Some(counts) = plan.counts_in(tree) else {
        return Guard::fail(id, format!("{object} is gone"));
    };
    let machines = plan.machines_of(tree);
    let names = |keep: &dyn Fn(&&&crate::capi::MachineNode) -> bool| {
        let picked: Vec<&str> = machines
            .iter()
            .filter(keep)
            .map(|m| m.name.as_str())
            .collect();
        picked.join(", ")
    };
    let deleting = names(&|m| m.deleting);
    if !deleting.is_empty() {
        return Guard::fail(id, format!("{object}: Machines being deleted: {deleting}"));
    }
    let outdated = names(&|m| !m.up_to_date);
    if !outdated.is_empty() {
        return Guard::fail(
            id,
            format!("{object} is rolling out: outdated Machines {outdated}"),
        );
    }
    if machines.len() != counts.replicas as usize {
        return Guard::fail(
            id,
            format!(
                "{object} is scaling: {} Machines for spec.replicas {}",
                machines.len(),
                counts.replicas
            ),
        );
    }
    let not_ready = names(&|m| !m.ready);
    if !not_ready.is_empty() {
        return Guard::warn(id, format!("{object}: not Ready yet: {not_ready}"));
    }
    Guard::pass(
        id,
        format!(
            "{object}: {} Machines, all up to date and Ready",
            machines.len()
        ),
    )
}

/// 1..=7 control planes, 0..=100 workers, and not the count it has.
pub fn bounds(plan: &ScalePlan) -> Guard {
    let id = GuardId::ScaleBounds;
    let (low, high, what) = match plan.role {
        MachineRole::Controlplane => (1, MAX_CONTROL_PLANES, "control planes"),
        MachineRole::Worker => (0, MAX_WORKERS, "workers"),
    };
    if plan.to == plan.from {
        return Guard::fail(
            id,
            format!(
                "{} already has spec.replicas {}: nothing to change",
                plan.object(),
                plan.to
            ),
        );
    }
    if plan.to < low || plan.to > high {
        return Guard::fail(
            id,
            format!("{} {what}: the bounds are {low} to {high}", plan.to),
        );
    }
    Guard::pass(id, format!("{} -> {} {what}", plan.from, plan.to))
}

/// For control planes, every etcd member answers healthy and there is a leader.
pub fn etcd_now(plan: &ScalePlan, status: &ClusterStatus) -> Guard {
    if plan.role == MachineRole::Worker {
        return Guard::pass(GuardId::EtcdHealthy, "workers do not join etcd");
    }
    if let Some(error) = &status.error {
        return Guard::fail(
            GuardId::EtcdHealthy,
            format!("the Talos API could not be asked: {error}"),
        );
    }
    etcd_healthy(status)
}

/// A join needs a majority now; after the members leave, the healthy ones left (counting
/// those that leave as healthy ones) must still be a majority.
pub fn quorum_through(plan: &ScalePlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::ScaleQuorum;
    if plan.role == MachineRole::Worker {
        return Guard::pass(id, "workers do not join etcd");
    }
    let q = status.etcd.quorum;
    if q.members == 0 {
        return Guard::fail(id, "etcd members unknown: cannot tell whether quorum holds");
    }
    let counts = q.counts_text();
    if !q.has_quorum() {
        return Guard::fail(
            id,
            format!("etcd has no quorum now ({counts}): repair it before scaling"),
        );
    }
    let leaving = plan.delete as usize;
    if leaving == 0 {
        return Guard::pass(id, format!("members join one at a time ({counts})"));
    }
    let members = q.members.saturating_sub(leaving);
    let after = Quorum::from_counts(members, q.healthy.saturating_sub(leaving));
    if members == 0 || !after.has_quorum() {
        return Guard::fail(
            id,
            format!(
                "removing {leaving} member(s) breaks etcd quorum: {} of {members} healthy left, {} needed ({counts} now)",
                after.healthy, after.needed
            ),
        );
    }
    Guard::pass(
        id,
        format!(
            "{} of {members} members healthy after removing {leaving}, {} needed",
            after.healthy, after.needed
        ),
    )
}

/// An even control-plane count needs its acknowledgement, as at create.
pub fn odd_control_planes(plan: &ScalePlan) -> Guard {
    let id = GuardId::ScaleOddControlPlanes;
    match (plan.role, plan.to) {
        (MachineRole::Worker, _) => Guard::pass(id, "workers do not join etcd"),
        (_, n) if n > 0 && n.is_multiple_of(2) => Guard::warn(
            id,
            format!(
                "{n} control planes: an even etcd member count tolerates no more failures than {}",
                n - 1
            ),
        )
        .acked_by(EVEN_MEMBERS_ACK),
        (_, n) => Guard::pass(id, format!("{n} control plane(s)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::{CapiOwner, tree_tests::fixture_tree};
    use crate::capi_scale::plan::plan_scale;
    use crate::fleet::{EtcdMemberReport, EtcdReport};
    use crate::guards::{Verdict, blocking};
    use crate::kube::CapiVersion;

    fn plan(role: MachineRole, to: u32) -> (ScalePlan, ClusterTree) {
        let tree = fixture_tree(CapiVersion::V1beta2);
        let owner = CapiOwner {
            management: "mgmt".into(),
            namespace: "clusters".into(),
            name: "workload".into(),
        };
        let plan = plan_scale("workload", &owner, &tree, (role, None), to).unwrap();
        (plan, tree)
    }

    fn etcd(healthy: &[bool]) -> ClusterStatus {
        let members: Vec<EtcdMemberReport> = healthy
            .iter()
            .enumerate()
            .map(|(i, ok)| EtcdMemberReport {
                id: format!("{i:016x}"),
                hostname: format!("cp-{i}"),
                leader: i == 0,
                healthy: *ok,
                errors: if *ok { vec![] } else { vec!["timeout".into()] },
                ..EtcdMemberReport::default()
            })
            .collect();
        let quorum = Quorum::of_members(members.iter().map(|m| (false, m.healthy)));
        ClusterStatus {
            name: "workload".into(),
            etcd: EtcdReport {
                members,
                alarms: vec![],
                quorum,
            },
            ..ClusterStatus::default()
        }
    }

    fn verdict(guards: &[Guard], id: GuardId) -> (Verdict, String) {
        let g = guards.iter().find(|g| g.id == id).expect("guard");
        (g.verdict, g.reason.clone())
    }

    #[test]
    fn the_guards_come_in_their_order() {
        let (plan, tree) = plan(MachineRole::Controlplane, 5);
        let status = etcd(&[true, true, true]);
        let f = ScaleFacts {
            plan: &plan,
            tree: &tree,
            status: &status,
            me: "me@here/1-2",
        };
        let ids: Vec<GuardId> = scale_guards(&f).iter().map(|g| g.id).collect();
        assert_eq!(ids, GuardId::SCALE.to_vec());
        // The fixture's control plane is mid-rollout (one Machine outdated).
        let (v, reason) = verdict(&scale_guards(&f), GuardId::ScaleSettled);
        assert_eq!(v, Verdict::Fail, "{reason}");
        assert!(reason.contains("rolling out"), "{reason}");
    }

    #[test]
    fn scaling_down_must_leave_a_majority() {
        let (mut p, _) = plan(MachineRole::Controlplane, 1);
        assert_eq!(
            quorum_through(&p, &etcd(&[true, true, true])).verdict,
            Verdict::Pass
        );
        // 5 members, 4 healthy, 2 leave: 3 members with (at worst) 2 healthy: a majority.
        p.from = 5;
        p.to = 3;
        p.delete = 2;
        let four_of_five = etcd(&[true, true, true, true, false]);
        assert_eq!(quorum_through(&p, &four_of_five).verdict, Verdict::Pass);
        // 5 members, 3 healthy, 2 leave: 1 healthy of 3 left.
        let three_of_five = etcd(&[true, true, true, false, false]);
        let g = quorum_through(&p, &three_of_five);
        assert_eq!(g.verdict, Verdict::Fail, "{}", g.reason);
        assert!(g.reason.contains("breaks etcd quorum"), "{}", g.reason);
    }

    #[test]
    fn no_quorum_now_refuses_any_control_plane_scale() {
        let (p, _) = plan(MachineRole::Controlplane, 3);
        let stopped = etcd(&[false]);
        assert_eq!(quorum_through(&p, &stopped).verdict, Verdict::Fail);
        assert_eq!(etcd_now(&p, &stopped).verdict, Verdict::Fail);
        let unknown = ClusterStatus::default();
        assert_eq!(quorum_through(&p, &unknown).verdict, Verdict::Fail);
        // Workers do not care.
        let (w, _) = plan(MachineRole::Worker, 3);
        assert_eq!(quorum_through(&w, &stopped).verdict, Verdict::Pass);
        assert_eq!(etcd_now(&w, &stopped).verdict, Verdict::Pass);
    }

    #[test]
    fn an_even_count_needs_its_ack_and_bounds_hold() {
        let (p, _) = plan(MachineRole::Controlplane, 4);
        let even = odd_control_planes(&p);
        assert!(blocking(std::slice::from_ref(&even), &[]));
        assert!(!blocking(&[even], &[EVEN_MEMBERS_ACK.to_string()]));
        let (same, _) = plan(MachineRole::Controlplane, 3);
        assert!(bounds(&same).reason.contains("nothing to change"));
        let (zero, _) = plan(MachineRole::Controlplane, 0);
        assert_eq!(bounds(&zero).verdict, Verdict::Fail);
        let (many, _) = plan(MachineRole::Worker, MAX_WORKERS + 1);
        assert_eq!(bounds(&many).verdict, Verdict::Fail);
        let (none, _) = plan(MachineRole::Worker, 0);
        assert_eq!(bounds(&none).verdict, Verdict::Pass);
    }
}
