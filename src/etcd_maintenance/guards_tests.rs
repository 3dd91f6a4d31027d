//! The etcd plans and guards against the upgrade's fixture statuses: order, refusals and the
//! roles each action needs.
use std::path::PathBuf;

use super::*;
use crate::fleet::{ClusterStatus, EtcdAlarmReport};
use crate::guards::{GuardId, Verdict};
use crate::talos::{Role, Roles};
use crate::upgrade::fixtures::{cp2_down, healthy};

fn admin() -> Roles {
    Roles(vec![Role::Admin])
}

fn verdict(guards: &[crate::guards::Guard], id: GuardId) -> (Verdict, String) {
    let g = guards.iter().find(|g| g.id == id).expect("guard present");
    (g.verdict, g.reason.clone())
}

fn with_sizes(mut status: ClusterStatus, size: i64, in_use: i64) -> ClusterStatus {
    for m in &mut status.etcd.members {
        m.db_size = Some(size);
        m.db_size_in_use = Some(in_use);
    }
    status
}

fn nospace_on_cp3(in_use: i64) -> ClusterStatus {
    let mut status = with_sizes(healthy(), 20 << 20, 10 << 20);
    let cp3 = status
        .etcd
        .members
        .iter_mut()
        .find(|m| m.hostname == "cp-3")
        .unwrap();
    cp3.db_size = Some(QUOTA_BYTES + (4 << 20));
    cp3.db_size_in_use = Some(in_use);
    // As the fleet reports it: the member's own alarm makes it unhealthy.
    cp3.healthy = false;
    cp3.errors = vec![format!("memberID:{} alarm:NOSPACE", cp3.id)];
    let id = cp3.id.clone();
    status.etcd.alarms.push(EtcdAlarmReport {
        member_id: id,
        hostname: Some("cp-3".into()),
        alarm: "NOSPACE".into(),
    });
    status
}

fn nodes(plan: &EtcdPlan) -> Vec<(&str, &'static str)> {
    plan.steps
        .iter()
        .map(|s| (s.node.as_str(), s.call.as_str()))
        .collect()
}

#[test]
fn defragment_goes_through_the_followers_then_the_leader_and_refuses_an_unhealthy_member() {
    let status = with_sizes(healthy(), 20 << 20, 10 << 20);
    let plan = EtcdPlan::new(&status, &EtcdRequest::Defragment { node: None }).unwrap();
    assert_eq!(
        nodes(&plan),
        [
            ("cp-2", "defragment"),
            ("cp-3", "defragment"),
            ("cp-1", "defragment")
        ]
    );
    let guards = plan_guards(&plan, &status, &admin(), &Ok(None));
    assert!(
        guards.iter().all(|g| g.verdict == Verdict::Pass),
        "{guards:?}"
    );

    let down = cp2_down();
    let plan = EtcdPlan::new(&down, &EtcdRequest::Defragment { node: None }).unwrap();
    let (v, reason) = verdict(
        &plan_guards(&plan, &down, &admin(), &Ok(None)),
        GuardId::EtcdHealthy,
    );
    assert_eq!(v, Verdict::Fail);
    assert!(reason.contains("cp-2"), "{reason}");
}

#[test]
fn the_leader_alone_waits_for_followers_with_free_pages() {
    let status = with_sizes(healthy(), 20 << 20, 10 << 20);
    let request = EtcdRequest::Defragment {
        node: Some("cp-1".into()),
    };
    let plan = EtcdPlan::new(&status, &request).unwrap();
    let (v, reason) = verdict(
        &plan_guards(&plan, &status, &admin(), &Ok(None)),
        GuardId::DefragOrder,
    );
    assert_eq!(v, Verdict::Fail);
    assert!(
        reason.contains("cp-1 is the leader") && reason.contains("cp-2, cp-3"),
        "{reason}"
    );

    let done = with_sizes(healthy(), 10 << 20, 10 << 20);
    let plan = EtcdPlan::new(&done, &request).unwrap();
    let (v, _) = verdict(
        &plan_guards(&plan, &done, &admin(), &Ok(None)),
        GuardId::DefragOrder,
    );
    assert_eq!(v, Verdict::Pass, "followers already defragmented");
}

#[test]
fn disarm_defragments_the_member_over_quota_first_unless_defragmenting_frees_nothing() {
    let status = nospace_on_cp3(312 << 20);
    let plan = EtcdPlan::new(&status, &EtcdRequest::Disarm).unwrap();
    assert_eq!(
        nodes(&plan),
        [("cp-3", "defragment"), ("cp-1", "disarm alarms")]
    );
    let guards = plan_guards(&plan, &status, &admin(), &Ok(None));
    let (v, reason) = verdict(&guards, GuardId::EtcdHealthy);
    assert_eq!(
        v,
        Verdict::Pass,
        "the alarm is what the disarm repairs: {reason}"
    );
    assert!(reason.contains("alarm aside: cp-3"), "{reason}");
    let (v, reason) = verdict(&guards, GuardId::EtcdSpace);
    assert_eq!(v, Verdict::Pass);
    assert!(
        reason.contains("cp-3 2.0 GiB of 2.0 GiB (312.0 MiB in use)"),
        "{reason}"
    );

    let full = nospace_on_cp3(QUOTA_BYTES + 1);
    let plan = EtcdPlan::new(&full, &EtcdRequest::Disarm).unwrap();
    let (v, reason) = verdict(
        &plan_guards(&plan, &full, &admin(), &Ok(None)),
        GuardId::EtcdSpace,
    );
    assert_eq!(v, Verdict::Fail);
    assert!(
        reason.contains("compact or raise quota-backend-bytes"),
        "{reason}"
    );

    let quiet = EtcdPlan::new(&healthy(), &EtcdRequest::Disarm);
    assert!(matches!(quiet, Err(PlanError::NothingToDo(_))), "{quiet:?}");
}

#[test]
fn remove_member_needs_its_node_gone_and_quorum_without_it() {
    let status = healthy();
    let running = EtcdPlan::new(
        &status,
        &EtcdRequest::RemoveMember {
            member: "cp-2".into(),
        },
    )
    .unwrap();
    let guards = plan_guards(&running, &status, &admin(), &Ok(None));
    assert_eq!(
        verdict(&guards, GuardId::MemberWithoutNode).0,
        Verdict::Fail
    );

    let down = cp2_down();
    let gone = EtcdPlan::new(
        &down,
        &EtcdRequest::RemoveMember {
            member: "0000000000000002".into(),
        },
    )
    .unwrap();
    assert_eq!(gone.target, "cp-2 (0000000000000002)");
    assert_eq!(
        nodes(&gone),
        [("cp-1", "remove member")],
        "through the leader"
    );
    let guards = plan_guards(&gone, &down, &admin(), &Ok(None));
    assert!(
        guards.iter().all(|g| g.verdict == Verdict::Pass),
        "{guards:?}"
    );

    // Removing a healthy member while cp-2 is down leaves 1 of 2 healthy: no quorum.
    let plan = EtcdPlan::new(
        &down,
        &EtcdRequest::RemoveMember {
            member: "cp-3".into(),
        },
    )
    .unwrap();
    let (v, reason) = verdict(
        &plan_guards(&plan, &down, &admin(), &Ok(None)),
        GuardId::EtcdQuorum,
    );
    assert_eq!(v, Verdict::Fail, "{reason}");

    let unknown = EtcdPlan::new(
        &status,
        &EtcdRequest::RemoveMember {
            member: "w-1".into(),
        },
    );
    assert!(matches!(unknown, Err(PlanError::Unknown(_))), "{unknown:?}");
}

#[test]
fn forfeit_needs_the_leader_and_each_action_its_role() {
    let status = healthy();
    let follower = EtcdRequest::ForfeitLeadership {
        node: "cp-2".into(),
    };
    let plan = EtcdPlan::new(&status, &follower).unwrap();
    let (v, reason) = verdict(
        &plan_guards(&plan, &status, &admin(), &Ok(None)),
        GuardId::EtcdLeader,
    );
    assert_eq!(v, Verdict::Fail);
    assert!(reason.contains("cp-1 is"), "{reason}");
    assert_eq!(
        plan.steps[0].call.describe("cp-2"),
        "forfeit leadership (cp-2 does not lead: nothing moves)"
    );

    // The leader hands over to the first other member by id, as Talos does.
    let leader = EtcdRequest::ForfeitLeadership {
        node: "cp-1".into(),
    };
    let plan = EtcdPlan::new(&status, &leader).unwrap();
    let first_other = status
        .etcd
        .members
        .iter()
        .filter(|m| m.hostname != "cp-1")
        .min_by(|a, b| a.id.cmp(&b.id))
        .map(|m| m.hostname.clone())
        .unwrap();
    assert_eq!(
        plan.steps[0].call,
        EtcdCall::ForfeitLeadership {
            new_leader: Some(first_other.clone())
        }
    );
    assert_eq!(
        plan.steps[0].call.describe("cp-1"),
        format!("forfeit leadership to {first_other}")
    );

    let operator = Roles(vec![Role::Operator]);
    let backup = Roles(vec![Role::Reader, Role::parse("os:etcd:backup")]);
    let cases = [
        (
            EtcdRequest::Defragment { node: None },
            &operator,
            Verdict::Pass,
        ),
        (
            EtcdRequest::ForfeitLeadership {
                node: "cp-1".into(),
            },
            &operator,
            Verdict::Fail,
        ),
        (
            EtcdRequest::Snapshot {
                node: None,
                out: PathBuf::from("etcd.db"),
                overwrite: false,
            },
            &backup,
            Verdict::Pass,
        ),
        (
            EtcdRequest::Defragment { node: None },
            &backup,
            Verdict::Fail,
        ),
    ];
    for (request, roles, expected) in cases {
        let plan = EtcdPlan::new(&status, &request).unwrap();
        let (v, reason) = verdict(
            &plan_guards(&plan, &status, roles, &Ok(None)),
            GuardId::EtcdRole,
        );
        assert_eq!(v, expected, "{request:?} as {roles}: {reason}");
    }
}

#[test]
fn every_guard_a_plan_shows_is_in_the_etcd_list_in_its_order() {
    let status = nospace_on_cp3(312 << 20);
    let requests = [
        EtcdRequest::Disarm,
        EtcdRequest::Defragment { node: None },
        EtcdRequest::Snapshot {
            node: None,
            out: PathBuf::from("etcd.db"),
            overwrite: false,
        },
        EtcdRequest::ForfeitLeadership {
            node: "cp-1".into(),
        },
        EtcdRequest::RemoveMember {
            member: "cp-2".into(),
        },
    ];
    for request in requests {
        let plan = EtcdPlan::new(&status, &request).unwrap();
        let shown: Vec<usize> = plan_guards(&plan, &status, &admin(), &Ok(None))
            .iter()
            .map(|g| {
                GuardId::ETCD
                    .iter()
                    .position(|id| *id == g.id)
                    .expect("listed")
            })
            .collect();
        assert!(
            shown.windows(2).all(|w| w[0] < w[1]),
            "{request:?}: {shown:?}"
        );
    }
}

#[test]
fn a_defrag_during_a_rollout_is_refused_naming_the_holder_and_an_unread_lease_asks_the_ack() {
    let status = with_sizes(healthy(), 20 << 20, 10 << 20);
    let plan = EtcdPlan::new(&status, &EtcdRequest::Defragment { node: None }).unwrap();
    let held = Ok(Some(crate::rollout::RolloutInProgress {
        holder: "alice@jump-1".into(),
        node_index: 2,
        node_count: 3,
    }));
    let (v, reason) = verdict(
        &plan_guards(&plan, &status, &admin(), &held),
        GuardId::NoOtherRollout,
    );
    assert_eq!(v, Verdict::Fail);
    assert!(reason.contains("alice@jump-1"), "{reason}");
    let unread = Err("context deadline exceeded".to_string());
    let guards = plan_guards(&plan, &status, &admin(), &unread);
    let lease = guards
        .iter()
        .find(|g| g.id == GuardId::NoOtherRollout)
        .unwrap();
    assert_eq!(lease.verdict, Verdict::Warn);
    let ack = crate::upgrade::guards::LEASE_UNREAD_ACK.to_string();
    assert!(lease.blocks(&[]) && !lease.blocks(&[ack]));
    let snapshot = EtcdPlan::new(
        &status,
        &EtcdRequest::Snapshot {
            node: None,
            out: "/nonexistent/x.db".into(),
            overwrite: false,
        },
    )
    .unwrap();
    assert!(
        plan_guards(&snapshot, &status, &admin(), &held)
            .iter()
            .all(|g| g.id != GuardId::NoOtherRollout),
        "a snapshot changes nothing in the cluster"
    );
}
