//! What every upgrade rollout does around its own steps: a new journal, a plan read back from
//! one, refusals before the first step (another run still alive on the cluster's journal),
//! connecting to the cluster and taking its rollout Lease.
use futures::FutureExt;
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::guards::Guard;
use super::observe::ClusterObserver;
use super::runner::RunOptions;
use crate::discovery::Cluster;
use crate::fleet::CollectOptions;
use crate::fleet::{LeaseError, RolloutLease};
use crate::kube::KubeClient;
use crate::rollout::claim::{Displaces, claim_run};
use crate::rollout::journal::RolloutJournal;
use crate::rollout::{
    LeaseProgress, LockProgress, RenewFailure, RolloutKind, RolloutLock, StepProgress,
};
use crate::run_holder::RunHolder;
use crate::talos::TalosClient;

/// What a new journal records about the rollout it starts.
pub(crate) struct NewJournal<'a, P: Serialize> {
    pub kind: RolloutKind,
    pub cluster: &'a str,
    pub target: String,
    pub acks: &'a [String],
    pub plan: &'a P,
    pub options: &'a RunOptions,
    pub steps: Vec<StepProgress>,
}

/// The journal of a rollout about to start: held by this run, every step as planned.
pub(crate) fn new_journal<P: Serialize>(new: NewJournal<'_, P>) -> RolloutJournal {
    let holder = RunHolder::this_process().to_string();
    RolloutJournal {
        acks: new.acks.to_vec(),
        plan: serde_json::to_value(new.plan).unwrap_or(serde_json::Value::Null),
        options: serde_json::to_value(new.options.for_journal()).unwrap_or(serde_json::Value::Null),
        steps: new.steps,
        ..RolloutJournal::begun(new.cluster, new.kind, &new.target, &holder)
    }
}

/// The plan a journal holds; `what` names the rollout ("upgrade", "Kubernetes upgrade").
pub(crate) fn journal_plan<P: DeserializeOwned>(
    journal: &RolloutJournal,
    kind: RolloutKind,
) -> Result<P, String> {
    let name = |k: RolloutKind| match k {
        RolloutKind::TalosUpgrade => "Talos OS upgrade",
        RolloutKind::KubernetesUpgrade => "Kubernetes upgrade",
    };
    if journal.kind != kind {
        return Err(format!(
            "the journal of {} is a {}, not a {}",
            journal.cluster,
            name(journal.kind),
            name(kind)
        ));
    }
    serde_json::from_value::<P>(journal.plan.clone()).map_err(|e| {
        format!(
            "the journal of {} holds no readable {} plan: {e}",
            journal.cluster,
            name(kind)
        )
    })
}

/// Whom this run may displace, from the unfinished journal at `path` (the one resumed, or one
/// a fresh run would write over): refused while that journal's run is alive on this host,
/// unless `options.take_over` names it.
pub(crate) fn claim_on_disk(
    path: &std::path::Path,
    options: &RunOptions,
) -> Result<Displaces, String> {
    let on_disk = RolloutJournal::load(path)
        .map_err(|e| e.to_string())?
        .filter(RolloutJournal::is_unfinished);
    claim_run(on_disk.as_ref(), options.take_over.as_deref())
}

/// Takes the cluster's rollout Lease for this run, from `displaces` too while it is live.
/// Without a paired kube context there is no Lease to take; the rollout still runs, alone on
/// this host (its journal keeps a second run of this host out).
pub(crate) async fn take_lease(
    observer: &ClusterObserver,
    journal: &RolloutJournal,
    displaces: Option<&str>,
    options: &RunOptions,
) -> Result<Option<Box<dyn RolloutLock>>, String> {
    let Some(kube) = &observer.kube else {
        return Ok(None);
    };
    let lease = kube
        .acquire_rollout_lease(
            &journal.cluster,
            &RunHolder::this_process().to_string(),
            displaces,
            (journal.kind, &journal.target, journal.steps.len()),
            options.lease_duration,
        )
        .await
        .map_err(|e| match e {
            LeaseError::HeldBy { .. } => format!("refused: {e}"),
            other => format!("cannot take the rollout lease: {other}"),
        })?;
    Ok(Some(Box::new(LeaseLock(lease))))
}

/// The Kubernetes Lease as the run's lock.
struct LeaseLock(RolloutLease);

impl RolloutLock for LeaseLock {
    fn renew<'a>(
        &'a mut self,
        progress: &'a LockProgress,
    ) -> BoxFuture<'a, Result<(), RenewFailure>> {
        async move {
            let progress = LeaseProgress {
                node_index: progress.node_index,
                current_node: Some(progress.current_node.clone()),
                phase: progress.phase.clone(),
            };
            self.0.renew(&progress).await.map_err(|e| match e {
                LeaseError::Lost { .. } | LeaseError::HeldBy { .. } => {
                    RenewFailure::Lost(e.to_string())
                }
                LeaseError::Kube(_) => RenewFailure::Failed(e.to_string()),
            })
        }
        .boxed()
    }

    fn release(self: Box<Self>) -> BoxFuture<'static, Result<(), String>> {
        async move { self.0.release().await.map_err(|e| e.to_string()) }.boxed()
    }
}

/// The Talos client of the cluster's talosconfig context, and its kube client when paired.
pub(crate) async fn connect(
    cluster: &Cluster,
    options: &RunOptions,
) -> Result<ClusterObserver, String> {
    let Some(ctx) = &cluster.talos else {
        return Err(format!(
            "cluster {} has no talosconfig context; the upgrade needs the Talos API",
            cluster.name
        ));
    };
    let talos = TalosClient::new(ctx, options.client).map_err(|e| e.to_string())?;
    let kube = match &cluster.kube {
        None => None,
        Some(kube_ctx) => {
            let kubeconfig = match &options.kubeconfig {
                Some(k) => k.clone(),
                None => crate::discovery::read_kubeconfig_file(&kube_ctx.file).map_err(|e| {
                    format!(
                        "kube context {}: cannot read {}: {e}",
                        kube_ctx.name,
                        kube_ctx.file.display()
                    )
                })?,
            };
            let client = KubeClient::new(&kubeconfig, &kube_ctx.name, Default::default())
                .await
                .map_err(|e| e.to_string())?;
            Some(client)
        }
    };
    Ok(ClusterObserver {
        cluster: cluster.name.clone(),
        talos,
        kube,
        nodes: ctx.nodes.clone(),
        options: CollectOptions {
            client: options.client,
            ..CollectOptions::default()
        },
    })
}

/// The first guard that blocks, as one line naming it.
pub(crate) fn first_blocking(guards: &[Guard], acks: &[String]) -> Option<String> {
    guards.iter().find(|g| g.blocks(acks)).map(|g| {
        let mut line = format!("{}: {}", g.id.title(), g.reason);
        if let Some(ack) = &g.needs_ack {
            line.push_str(&format!(" (acknowledge with \"{ack}\")"));
        }
        line
    })
}

/// Passes when no guard blocks; otherwise the first that does, as one line naming it.
pub(crate) fn guards_pass(guards: &[Guard], acks: &[String]) -> Result<(), String> {
    match first_blocking(guards, acks) {
        Some(reason) => Err(reason),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upgrade::UpgradePlan;

    fn journal(kind: RolloutKind) -> RolloutJournal {
        RolloutJournal::begun("lab", kind, "1.35.0", "alice@ops1")
    }

    #[test]
    fn a_journal_of_the_other_kind_is_refused_by_name() {
        let err = journal_plan::<UpgradePlan>(
            &journal(RolloutKind::KubernetesUpgrade),
            RolloutKind::TalosUpgrade,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "the journal of lab is a Kubernetes upgrade, not a Talos OS upgrade"
        );
        let err = journal_plan::<UpgradePlan>(
            &journal(RolloutKind::TalosUpgrade),
            RolloutKind::TalosUpgrade,
        )
        .unwrap_err();
        assert!(
            err.starts_with("the journal of lab holds no readable Talos OS upgrade plan"),
            "{err}"
        );
    }
}
