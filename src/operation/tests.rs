use std::collections::BTreeSet;
use std::path::Path;

use super::*;

/// One action of every shape the dispatcher is asked for.
fn every_action() -> Vec<MutatingAction> {
    let cluster = || "prod".to_string();
    let node = |operation| MutatingAction::Node {
        cluster: cluster(),
        node: "w-1".into(),
        operation,
    };
    let etcd = |action| MutatingAction::Etcd {
        cluster: cluster(),
        action,
        target: "cp-1".into(),
    };
    vec![
        MutatingAction::UpgradeTalos {
            cluster: cluster(),
            target: "v1.12.0".into(),
        },
        MutatingAction::UpgradeKubernetes {
            cluster: cluster(),
            target: "1.35.0".into(),
        },
        MutatingAction::CapiUpgrade {
            cluster: cluster(),
            owner: "mgmt/default/prod".into(),
            product: "Kubernetes".into(),
            target: "1.35.0".into(),
        },
        node(NodeOperation::Reboot),
        node(NodeOperation::Shutdown),
        node(NodeOperation::Cordon),
        node(NodeOperation::Uncordon),
        node(NodeOperation::Drain),
        node(NodeOperation::Rollback),
        node(NodeOperation::EtcdLeave),
        node(NodeOperation::ServiceRestart("kubelet".into())),
        etcd(EtcdAction::Disarm),
        etcd(EtcdAction::Defragment),
        etcd(EtcdAction::Snapshot),
        etcd(EtcdAction::ForfeitLeadership),
        etcd(EtcdAction::RemoveMember),
        MutatingAction::Provision {
            cluster: cluster(),
            provider: "one".into(),
            role: "worker".into(),
            count: 1,
        },
        MutatingAction::TerminateVm {
            cluster: cluster(),
            provider: "one".into(),
            vm: "41".into(),
        },
        MutatingAction::CreateCluster {
            cluster: cluster(),
            provider: "one".into(),
            controlplanes: 3,
            workers: 2,
            talos: "v1.12.0".into(),
        },
        MutatingAction::DeleteCluster {
            cluster: cluster(),
            vms: 5,
        },
        MutatingAction::ScaleCapi {
            cluster: cluster(),
            object: "MachineDeployment default/prod-md-0".into(),
            from: 2,
            to: 3,
        },
        MutatingAction::CapiDeleteMachine {
            cluster: cluster(),
            namespace: "default".into(),
            machine: "prod-cp-x".into(),
        },
        MutatingAction::ForgetNode {
            cluster: cluster(),
            context: "prod".into(),
            address: "127.10.0.9".into(),
        },
        MutatingAction::ConfigPatch {
            cluster: cluster(),
            nodes: vec!["w-1".into(), "w-2".into()],
            mode: "auto".into(),
        },
    ]
}

#[test]
fn every_action_the_dispatcher_approves_has_a_kind_and_every_kind_is_listed() {
    let reached: BTreeSet<OperationKind> = every_action().iter().map(OperationKind::of).collect();
    let listed: BTreeSet<OperationKind> = OperationKind::ALL.into_iter().collect();
    assert_eq!(
        listed.len(),
        OperationKind::ALL.len(),
        "a kind listed twice"
    );
    assert_eq!(
        reached, listed,
        "kinds no action reaches, or actions of unlisted kinds"
    );
}

#[test]
fn each_kinds_journal_lives_under_the_state_dir_by_the_one_path_rule() {
    let state = Path::new("/state");
    for kind in OperationKind::ALL {
        let journal = kind.journal();
        let path = journal.path_for(state, "prod");
        assert!(
            path.starts_with(state.join(journal.dir)),
            "{kind:?}: {}",
            path.display()
        );
    }
}

#[test]
fn rollouts_node_and_etcd_actions_stop_after_their_step() {
    for kind in [
        OperationKind::TalosUpgrade,
        OperationKind::CapiUpgrade,
        OperationKind::NodeReboot,
        OperationKind::NodeDrain,
        OperationKind::EtcdDisarm,
        OperationKind::EtcdDefragment,
        OperationKind::EtcdSnapshot,
        OperationKind::EtcdForfeit,
        OperationKind::EtcdRemoveMember,
    ] {
        assert_eq!(kind.cancel(), CancelRule::AfterStep, "{kind:?}");
    }
    assert_eq!(OperationKind::Create.cancel(), CancelRule::RunsToItsEnd);
}

#[test]
fn the_doctors_fixes_scale_and_delete_keep_the_action_journal() {
    for kind in [
        OperationKind::DeleteMachine,
        OperationKind::NodeReboot,
        OperationKind::EtcdRemoveMember,
        OperationKind::Scale,
        OperationKind::Delete,
    ] {
        assert_eq!(kind.journal(), ACTIONS, "{kind:?}");
    }
}

/// The name [`OperationKind::carried_by`] gives an implementation of [`Operation`].
fn operation_named<O: Operation>() -> &'static str {
    std::any::type_name::<O>()
}

#[test]
fn every_implementation_a_kind_names_is_an_operation() {
    let operations = [
        operation_named::<node::NodeAction>(),
        operation_named::<etcd::EtcdOperation>(),
        operation_named::<capi_fix::CapiFix>(),
        operation_named::<scale::CapiScale>(),
        operation_named::<terminate::VmTermination>(),
        operation_named::<provision::Provisioning>(),
        operation_named::<
            create::ClusterCreate<crate::cluster_lifecycle::provider_steps::ProviderSteps>,
        >(),
        operation_named::<delete::ClusterDelete<crate::cluster_lifecycle::ProviderDelete>>(),
        operation_named::<forget::NodeForget>(),
        operation_named::<config_patch::ConfigPatchRollout>(),
        operation_named::<capi_upgrade::CapiUpgrade>(),
        operation_named::<upgrade::UpgradeOperation<crate::upgrade::TalosOs>>(),
        operation_named::<upgrade::UpgradeOperation<crate::upgrade::kubernetes::Kubernetes>>(),
    ];
    for kind in OperationKind::ALL {
        if let Some(by) = kind.carried_by() {
            assert!(operations.contains(&by), "{kind:?}: {by}");
        }
    }
}
