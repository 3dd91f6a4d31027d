//! Every operation taloscope runs against a cluster, by kind, and the one guarded pipeline
//! (plan → guards → gate → journal → steps → progress → audit): the [`Operation`] trait, its
//! runner [`run`], and the implementations it carries out; each kind's journal, how a cancel
//! stops it and which implementation runs it. Every approval names its kind ([`OperationKind::of`] matches every
//! `MutatingAction`), so a new mutating action does not compile until it has one here.
pub mod capi_fix;
pub mod capi_upgrade;
pub mod config_patch;
pub mod create;
pub mod delete;
pub mod etcd;
pub mod forget;
pub mod node;
pub mod provision;
pub mod run;
pub mod scale;
pub mod terminate;
pub mod upgrade;

pub use run::{
    CancelSignal, DETACHED, Events, HeldLease, Operation, OperationEvent, Runner, Step,
    StepContext, StepError, StepStart, interrupted_told, report_interrupted, run,
};

use crate::approval::{EtcdAction, MutatingAction, NodeOperation};
use crate::journal::{ACTIONS, CREATES, JournalKind, PROVISIONS, ROLLOUTS};

pub mod planned;
pub mod progress;
pub mod runner_events;

/// One kind of operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationKind {
    TalosUpgrade,
    KubernetesUpgrade,
    /// A Talos or Kubernetes upgrade of a cluster Cluster API owns, the CAPI way.
    CapiUpgrade,
    NodeReboot,
    NodeShutdown,
    NodeCordon,
    NodeUncordon,
    NodeDrain,
    /// The node's previously installed Talos booted (Talos's Rollback).
    NodeRollback,
    /// The node's etcd member taken out of the cluster (Talos's EtcdLeaveCluster).
    NodeEtcdLeave,
    ServiceRestart,
    EtcdDisarm,
    EtcdDefragment,
    EtcdSnapshot,
    EtcdForfeit,
    EtcdRemoveMember,
    Provision,
    Terminate,
    Create,
    Delete,
    /// `spec.replicas` of a TalosControlPlane or MachineDeployment.
    Scale,
    /// The CAPI doctor's fix of a stuck rollout: the Machine it waits on deleted. (Its other
    /// fixes are an etcd member removal and a node reboot, of those kinds.)
    DeleteMachine,
    /// A node that is no longer a member removed from its talosconfig context.
    ForgetNode,
    /// A machine-configuration patch rolled out node by node.
    ConfigPatch,
}

/// How a running operation of a kind stops when the operator cancels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelRule {
    /// After the step under way (never mid-step); what that leaves is said by the run.
    AfterStep,
    /// It cannot be cancelled once started: it runs to its end or its timeout.
    RunsToItsEnd,
}

impl OperationKind {
    pub const ALL: [OperationKind; 24] = [
        OperationKind::TalosUpgrade,
        OperationKind::KubernetesUpgrade,
        OperationKind::CapiUpgrade,
        OperationKind::NodeReboot,
        OperationKind::NodeShutdown,
        OperationKind::NodeCordon,
        OperationKind::NodeUncordon,
        OperationKind::NodeDrain,
        OperationKind::NodeRollback,
        OperationKind::NodeEtcdLeave,
        OperationKind::ServiceRestart,
        OperationKind::EtcdDisarm,
        OperationKind::EtcdDefragment,
        OperationKind::EtcdSnapshot,
        OperationKind::EtcdForfeit,
        OperationKind::EtcdRemoveMember,
        OperationKind::Provision,
        OperationKind::Terminate,
        OperationKind::Create,
        OperationKind::Delete,
        OperationKind::Scale,
        OperationKind::DeleteMachine,
        OperationKind::ForgetNode,
        OperationKind::ConfigPatch,
    ];

    /// The kind of an action the dispatcher is asked for.
    pub fn of(action: &MutatingAction) -> OperationKind {
        match action {
            MutatingAction::UpgradeTalos { .. } => OperationKind::TalosUpgrade,
            MutatingAction::UpgradeKubernetes { .. } => OperationKind::KubernetesUpgrade,
            MutatingAction::CapiUpgrade { .. } => OperationKind::CapiUpgrade,
            MutatingAction::Node { operation, .. } => match operation {
                NodeOperation::Reboot => OperationKind::NodeReboot,
                NodeOperation::Shutdown => OperationKind::NodeShutdown,
                NodeOperation::Cordon => OperationKind::NodeCordon,
                NodeOperation::Uncordon => OperationKind::NodeUncordon,
                NodeOperation::Drain => OperationKind::NodeDrain,
                NodeOperation::Rollback => OperationKind::NodeRollback,
                NodeOperation::EtcdLeave => OperationKind::NodeEtcdLeave,
                NodeOperation::ServiceRestart(_) => OperationKind::ServiceRestart,
            },
            MutatingAction::Etcd { action, .. } => match action {
                EtcdAction::Disarm => OperationKind::EtcdDisarm,
                EtcdAction::Defragment => OperationKind::EtcdDefragment,
                EtcdAction::Snapshot => OperationKind::EtcdSnapshot,
                EtcdAction::ForfeitLeadership => OperationKind::EtcdForfeit,
                EtcdAction::RemoveMember => OperationKind::EtcdRemoveMember,
            },
            MutatingAction::Provision { .. } => OperationKind::Provision,
            MutatingAction::TerminateVm { .. } => OperationKind::Terminate,
            MutatingAction::CreateCluster { .. } => OperationKind::Create,
            MutatingAction::DeleteCluster { .. } => OperationKind::Delete,
            MutatingAction::ScaleCapi { .. } => OperationKind::Scale,
            MutatingAction::CapiDeleteMachine { .. } => OperationKind::DeleteMachine,
            MutatingAction::ForgetNode { .. } => OperationKind::ForgetNode,
            MutatingAction::ConfigPatch { .. } => OperationKind::ConfigPatch,
        }
    }

    /// The journal a run of this kind keeps (resumed or reported interrupted on the next
    /// start).
    pub fn journal(self) -> JournalKind {
        self.facts().journal
    }

    /// The [`Operation`] implementation [`run`] carries a run of this kind out with, by its
    /// type's name; `None` for a kind whose runner is still its own (tests/one_pipeline.rs
    /// lists those, and fails when the list and this disagree).
    pub fn carried_by(self) -> Option<&'static str> {
        Some(self.facts().carried_by)
    }

    /// How a run of this kind stops on cancel: rollouts after the steps under way (their
    /// abort; their pause holds the run there), a CAPI-way upgrade after its phase or at the
    /// phase's next poll, node and etcd actions after their step
    /// ([`CancelSignal`], set by the console's cancel key or the command line's
    /// SIGINT/SIGTERM).
    pub fn cancel(self) -> CancelRule {
        self.facts().cancel
    }

    /// What each kind is, one line a kind.
    fn facts(self) -> KindFacts {
        use CancelRule::{AfterStep, RunsToItsEnd};
        use OperationKind as K;
        use std::any::type_name as by;
        let facts = |journal, cancel, carried_by| KindFacts {
            journal,
            cancel,
            carried_by,
        };
        match self {
            K::TalosUpgrade => facts(
                ROLLOUTS,
                AfterStep,
                by::<upgrade::UpgradeOperation<crate::upgrade::TalosOs>>(),
            ),
            K::KubernetesUpgrade => facts(
                ROLLOUTS,
                AfterStep,
                by::<upgrade::UpgradeOperation<crate::upgrade::kubernetes::Kubernetes>>(),
            ),
            K::CapiUpgrade => facts(ACTIONS, AfterStep, by::<capi_upgrade::CapiUpgrade>()),
            K::NodeReboot
            | K::NodeShutdown
            | K::NodeCordon
            | K::NodeUncordon
            | K::NodeDrain
            | K::NodeRollback
            | K::NodeEtcdLeave
            | K::ServiceRestart => facts(ACTIONS, AfterStep, by::<node::NodeAction>()),
            K::EtcdDisarm
            | K::EtcdDefragment
            | K::EtcdSnapshot
            | K::EtcdForfeit
            | K::EtcdRemoveMember => facts(ACTIONS, AfterStep, by::<etcd::EtcdOperation>()),
            K::ConfigPatch => facts(ACTIONS, AfterStep, by::<config_patch::ConfigPatchRollout>()),
            K::Provision => facts(PROVISIONS, RunsToItsEnd, by::<provision::Provisioning>()),
            K::Terminate => facts(PROVISIONS, RunsToItsEnd, by::<terminate::VmTermination>()),
            K::Create => facts(
                CREATES,
                RunsToItsEnd,
                by::<create::ClusterCreate<crate::cluster_lifecycle::provider_steps::ProviderSteps>>(
                ),
            ),
            // A delete reads and then removes the create journal; its own run is an action.
            K::Delete => facts(
                ACTIONS,
                RunsToItsEnd,
                by::<delete::ClusterDelete<crate::cluster_lifecycle::ProviderDelete>>(),
            ),
            K::Scale => facts(ACTIONS, RunsToItsEnd, by::<scale::CapiScale>()),
            K::DeleteMachine => facts(ACTIONS, RunsToItsEnd, by::<capi_fix::CapiFix>()),
            K::ForgetNode => facts(ACTIONS, RunsToItsEnd, by::<forget::NodeForget>()),
        }
    }
}

/// What a kind of operation is: the journal its run keeps, how a cancel stops it, and the
/// [`Operation`] implementation that carries it out, by its type's name.
struct KindFacts {
    journal: JournalKind,
    cancel: CancelRule,
    carried_by: &'static str,
}

#[cfg(test)]
mod tests;
