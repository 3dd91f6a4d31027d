//! The CAPI doctor's fix of a stuck control plane as an operation: an orphaned etcd member
//! removed (the etcd action's steps), the Machine a rollout waits on deleted on the management
//! cluster, or the stopped single member's node rebooted through the Talos API alone (the node
//! action's reboot: the Kubernetes API is down with etcd, so there is nothing to drain). Its
//! guards are the doctor's, read again from both clusters before the step.
use std::time::Duration;

use super::etcd::EtcdOperation;
use super::node::{NodeAction, rollout_lease_read};
use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::capi::CapiOwner;
use crate::capi_doctor::{FixPlan, delete_machine, fix_guards, read_tree};
use crate::etcd_maintenance::SnapshotLimits;
use crate::guards::Guard;
use crate::kube::{DrainOptions, KubeClient};
use crate::node_actions::NodeActionOptions;
use crate::upgrade::observe::ClusterObserver;

/// What carries the fix out.
enum Carried {
    Etcd(EtcdOperation),
    Reboot(NodeAction),
    DeleteMachine,
}

/// A planned fix, with the workload cluster's connection and the management cluster's.
pub struct CapiFix {
    plan: FixPlan,
    carried: Carried,
    observer: ClusterObserver,
    management: KubeClient,
    owner: CapiOwner,
    /// How long the step, and the following after it, may take; how often the following reads.
    bounds: (Duration, Duration),
}

impl CapiFix {
    /// The fix of `plan`; a reboot waits at most `bound` for the node to be back, reading
    /// every `poll`.
    pub fn new(
        plan: FixPlan,
        observer: ClusterObserver,
        (management, owner): (KubeClient, CapiOwner),
        (bound, poll): (Duration, Duration),
    ) -> CapiFix {
        let carried = match &plan {
            FixPlan::Etcd(etcd) => {
                // A removal streams nothing: the snapshot cap is never reached.
                let limits = SnapshotLimits::within(bound);
                Carried::Etcd(EtcdOperation::new(etcd.clone(), observer.clone(), limits))
            }
            FixPlan::RebootNode(node) => {
                let talos_only = ClusterObserver {
                    kube: None,
                    ..observer.clone()
                };
                let options = NodeActionOptions {
                    node_timeout: bound,
                    poll_interval: poll,
                    drain: DrainOptions {
                        timeout: poll,
                        retry_every: poll,
                    },
                };
                Carried::Reboot(NodeAction::new(node.clone(), talos_only, options))
            }
            FixPlan::DeleteMachine(_) => Carried::DeleteMachine,
        };
        CapiFix {
            plan,
            carried,
            observer,
            management,
            owner,
            bounds: (bound, poll),
        }
    }

    /// [`CapiFix::new`], the management cluster `owner` names reached through `kubeconfig`:
    /// the fix as the command and the console open it.
    pub async fn connect(
        plan: FixPlan,
        observer: ClusterObserver,
        kubeconfig: &kube::config::Kubeconfig,
        owner: CapiOwner,
        bounds: (Duration, Duration),
    ) -> Result<CapiFix, String> {
        let management = KubeClient::new(kubeconfig, &owner.management, Default::default())
            .await
            .map_err(|e| crate::error_chain(&e))?;
        Ok(CapiFix::new(plan, observer, (management, owner), bounds))
    }

    /// The cluster followed after the fix until `finding` clears, within the fix's bounds;
    /// each change said.
    pub async fn follow(
        &self,
        finding: &crate::capi_doctor::Finding,
        say: impl FnMut(String),
    ) -> Result<String, String> {
        let (management, owner) = (&self.management, &self.owner);
        crate::capi_doctor::follow(finding, management, owner, &self.observer, self.bounds, say)
            .await
    }
}

impl Operation for CapiFix {
    fn kind(&self) -> OperationKind {
        OperationKind::of(&self.action())
    }

    fn action(&self) -> MutatingAction {
        self.plan.mutating_action()
    }

    fn node(&self) -> Option<&str> {
        match &self.carried {
            Carried::Reboot(reboot) => reboot.node(),
            _ => None,
        }
    }

    fn steps(&self) -> Vec<Step> {
        match (&self.carried, &self.plan) {
            (Carried::Etcd(etcd), _) => etcd.steps(),
            (Carried::Reboot(reboot), _) => reboot.steps(),
            (Carried::DeleteMachine, FixPlan::DeleteMachine(d)) => vec![Step {
                what: format!("delete Machine {}/{}", d.namespace, d.machine),
                timeout: self.bounds.0,
            }],
            (Carried::DeleteMachine, _) => Vec::new(),
        }
    }

    async fn guards(&self, _index: usize) -> Vec<Guard> {
        let (tree, status) = tokio::join!(
            read_tree(&self.management, &self.owner),
            self.observer.status()
        );
        let tree = match tree {
            Ok(tree) => tree,
            Err(e) => {
                return vec![Guard::fail(
                    crate::guards::GuardId::CapiOwned,
                    format!("the management cluster was not read: {e}"),
                )];
            }
        };
        // Only a reboot asks the workload cluster's rollout Lease (another console's rollout).
        let other = match self.plan {
            FixPlan::RebootNode(_) => rollout_lease_read(&self.observer).await,
            _ => Ok(None),
        };
        fix_guards(
            &self.plan,
            &tree,
            &status,
            self.observer.talos.roles(),
            &other,
        )
    }

    async fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        match (&mut self.carried, &self.plan) {
            (Carried::Etcd(etcd), _) => etcd.run_step(index, step).await,
            (Carried::Reboot(reboot), FixPlan::RebootNode(node)) => {
                if index == 0 {
                    step.say(format!(
                        "{}: the Kubernetes API is down with etcd: rebooting without a drain",
                        node.node
                    ));
                }
                reboot.run_step(index, step).await.map_err(|e| match e {
                    StepError::Failed(why) => StepError::Failed(format!(
                        "{why}. {}",
                        crate::capi_doctor::recovery_steps(&node.node)
                    )),
                    cancelled => cancelled,
                })
            }
            (Carried::DeleteMachine, FixPlan::DeleteMachine(d)) => {
                Ok(delete_machine(d, &self.management).await?)
            }
            _ => Err(format!(
                "the fix of {} has no step {}",
                self.plan.cluster(),
                index + 1
            )
            .into()),
        }
    }

    fn finished(&self, done: &[String]) -> String {
        done.join("; ")
    }
}
