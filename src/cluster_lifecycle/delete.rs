//! Deleting a cluster: the plan (the VMs its create journal names or `--adopt` names, the
//! OneFlow service, the contexts, the journals) and the world it goes through, behind
//! [`DeleteSteps`] so the order `operation::delete` runs it in is tested with a fake.
use std::path::Path;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::opennebula::VmState;
use crate::provision::{Provider, ProviderClients};

use super::journal::CreateRecord;
use super::plan::{DeletePlan, KnownVm, VmsKnownBy};
use crate::cluster_config::{
    ContextFiles, ContextsError, ContextsWritten, MergedEntries, remove_contexts, remove_merged,
};

/// How often a delete looks at the VMs, and how long they may take to be gone: `taloscope
/// delete`'s defaults and the console's.
pub const DELETE_BOUNDS: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(600));

/// What the delete plan is made from, gathered by the caller.
#[derive(Debug, Clone, Default)]
pub struct DeleteInputs {
    pub cluster: String,
    /// The cluster's create journal, if taloscope created it.
    pub record: Option<CreateRecord>,
    /// `--adopt`: VMs by id, with the names the provider gave them.
    pub adopted: Vec<KnownVm>,
    /// The provider the adopted VMs are on (the journal's otherwise).
    pub provider: Option<(String, String)>,
    pub talos_context: Option<String>,
    pub kube_context: Option<String>,
    /// The rollout Lease's holder, when a rollout holds the cluster.
    pub lease_holder: Option<String>,
    /// Why the rollout Lease could not be read.
    pub lease_unread: Option<String>,
}

/// The delete plan. Adopted VMs take the place of the journal's, when given.
pub fn plan_delete(inputs: DeleteInputs, state_dir: &Path) -> DeletePlan {
    let (known_by, vms, service, provider) = match (&inputs.record, inputs.adopted.is_empty()) {
        (_, false) => (
            VmsKnownBy::Adopted,
            inputs.adopted.clone(),
            None,
            inputs.provider.clone(),
        ),
        (Some(r), true) => (
            VmsKnownBy::CreateJournal,
            r.vms
                .iter()
                .map(|v| KnownVm {
                    id: v.id,
                    name: v.name.clone(),
                })
                .collect(),
            r.service,
            Some((r.plan.provider.clone(), r.plan.provider_endpoint.clone())),
        ),
        (None, true) => (
            VmsKnownBy::Unknown,
            Vec::new(),
            None,
            inputs.provider.clone(),
        ),
    };
    let journals = [
        crate::journal::CREATES.path_for(state_dir, &inputs.cluster),
        crate::journal::PROVISIONS.path_for(state_dir, &inputs.cluster),
        crate::journal::ROLLOUTS.path_for(state_dir, &inputs.cluster),
    ]
    .into_iter()
    .filter(|p| p.exists())
    .collect();
    // A cluster taloscope created: its own entries, by the names it wrote, whatever
    // discovery paired.
    let merged = inputs
        .record
        .as_ref()
        .and_then(|r| r.merged.clone())
        .map(Box::new);
    let (talos_context, kube_context) = match &merged {
        Some(m) => (
            Some(m.talos_context.name.clone()),
            Some(m.kube_context.name.clone()),
        ),
        None => (inputs.talos_context, inputs.kube_context),
    };
    let secrets_bundle = Some(super::journal::CreateJournal::bundle_path_for(
        state_dir,
        &inputs.cluster,
    ))
    .filter(|b| b.exists());
    DeletePlan {
        cluster: inputs.cluster,
        provider: provider.as_ref().map(|p| p.0.clone()),
        provider_endpoint: provider.map(|p| p.1),
        known_by,
        service,
        vms,
        talos_context,
        kube_context,
        merged,
        secrets_bundle,
        journals,
        lease_holder: inputs.lease_holder,
        lease_unread: inputs.lease_unread,
    }
}

/// The delete's world.
pub trait DeleteSteps: Send + Sync + 'static {
    /// Asks for the service or every VM to be terminated (one already gone is not an error).
    fn terminate<'a>(&'a self, plan: &'a DeletePlan) -> BoxFuture<'a, Result<(), String>>;
    /// The plan's VMs not yet gone.
    fn remaining<'a>(&'a self, plan: &'a DeletePlan) -> BoxFuture<'a, Result<Vec<u64>, String>>;
    fn remove_contexts<'a>(&'a self, plan: &'a DeletePlan)
    -> BoxFuture<'a, Result<String, String>>;
}

/// The secrets bundle copied to `<bundle>.taloscope-backup-<time>` (owner-only), then removed;
/// one already gone is said.
pub fn remove_bundle(bundle: &Path) -> Result<String, String> {
    // A bundle's name is its cluster's: its backups are few, and kept as many as by default.
    let keep = crate::config::DEFAULT_KEPT_BACKUPS;
    let backup = crate::cluster_config::backup_file(bundle, std::time::SystemTime::now(), keep)
        .map_err(|e| e.to_string())?;
    let Some(backup) = backup else {
        return Ok(format!("secrets bundle {}: already gone", bundle.display()));
    };
    std::fs::remove_file(bundle)
        .map_err(|e| format!("secrets bundle {}: cannot remove: {e}", bundle.display()))?;
    Ok(format!(
        "removed secrets bundle {} (backup {})",
        bundle.display(),
        backup.display()
    ))
}

/// The real world: the provider and the operator's context files.
pub struct ProviderDelete {
    pub provider: Provider,
    pub files: ContextFiles,
}

/// What a merge or removal did, in one line: the files and their backups.
pub fn written_line(
    done: &str,
    name: &str,
    files: &ContextFiles,
    written: &ContextsWritten,
) -> String {
    let backup = |b: &Option<std::path::PathBuf>| {
        b.as_ref().map_or(
            if done == "merged" {
                "no backup: the file was new"
            } else {
                "unchanged"
            }
            .to_string(),
            |p| format!("backup {}", p.display()),
        )
    };
    format!(
        "context {name} {done}: {} ({}), {} ({})",
        files.talosconfig.display(),
        backup(&written.talosconfig_backup),
        files.kubeconfig.display(),
        backup(&written.kubeconfig_backup)
    )
}

/// What removing a create's own entries did: the entries removed, those left and why, and
/// the backups.
pub fn removed_line(merged: &MergedEntries, written: &ContextsWritten) -> String {
    let removed: Vec<String> = merged
        .described()
        .into_iter()
        .filter(|d| !written.left.iter().any(|l| l.starts_with(&format!("{d}:"))))
        .collect();
    let mut line = if removed.is_empty() {
        "no entry of the create removed".to_string()
    } else {
        format!("removed {}", removed.join(", "))
    };
    if !written.left.is_empty() {
        line.push_str(&format!("; left {}", written.left.join("; ")));
    }
    for (file, backup) in [
        (&merged.talosconfig, &written.talosconfig_backup),
        (&merged.kubeconfig, &written.kubeconfig_backup),
    ] {
        if let Some(b) = backup {
            line.push_str(&format!("; {} (backup {})", file.display(), b.display()));
        }
    }
    line.push_str("; every other entry kept");
    line
}

impl DeleteSteps for ProviderDelete {
    fn terminate<'a>(&'a self, plan: &'a DeletePlan) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if let (Some(service), ProviderClients::Flow { flow, .. }) =
                (plan.service, &self.provider.clients)
            {
                return flow
                    .delete_service(service)
                    .await
                    .map_err(|e| e.to_string());
            }
            let client = self.provider.vm_client();
            for vm in &plan.vms {
                if let Err(e) = client.terminate(vm.id).await {
                    let gone = client
                        .vm(vm.id)
                        .await
                        .is_ok_and(|v| v.state == VmState::DONE);
                    if !gone {
                        return Err(format!("VM {} ({}): {e}", vm.id, vm.name));
                    }
                }
            }
            Ok(())
        })
    }

    fn remaining<'a>(&'a self, plan: &'a DeletePlan) -> BoxFuture<'a, Result<Vec<u64>, String>> {
        Box::pin(async move {
            let client = self.provider.vm_client();
            let mut left = Vec::new();
            for vm in &plan.vms {
                match client.vm(vm.id).await {
                    Ok(v) if v.state == VmState::DONE => {}
                    Ok(_) => left.push(vm.id),
                    Err(e) if e.kind() == Some(crate::opennebula::FailureKind::NoSuchObject) => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(left)
        })
    }

    fn remove_contexts<'a>(
        &'a self,
        plan: &'a DeletePlan,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            if let Some(merged) = &plan.merged {
                let written = remove_merged(
                    merged,
                    self.files.kept_backups,
                    std::time::SystemTime::now(),
                )
                .map_err(|e| e.to_string())?;
                return Ok(removed_line(merged, &written));
            }
            let names: Vec<&str> = [plan.talos_context.as_deref(), plan.kube_context.as_deref()]
                .into_iter()
                .flatten()
                .fold(Vec::new(), |mut names, n| {
                    if !names.contains(&n) {
                        names.push(n);
                    }
                    names
                });
            let mut lines = Vec::new();
            for name in names {
                match remove_contexts(&self.files, name, std::time::SystemTime::now()) {
                    Ok(w) => lines.push(written_line("removed", name, &self.files, &w)),
                    Err(ContextsError::NotFound { .. }) => {
                        lines.push(format!("context {name}: not in the files"))
                    }
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(if lines.is_empty() {
                "no context to remove".to_string()
            } else {
                lines.join("; ")
            })
        })
    }
}

#[cfg(test)]
#[path = "delete_tests.rs"]
pub(crate) mod tests;
