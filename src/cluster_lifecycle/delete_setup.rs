//! What a delete's plan is read from, gathered the one way `taloscope delete` and the console's
//! `D` both use: the create journal, the cluster as discovered, its provider (the journal's or
//! the config's), the VMs `--adopt` names, and the rollout Lease's holder.
use std::path::Path;

use crate::config::Config;
use crate::discovery::{Cluster, Discovery};
use crate::opennebula::OneEnvironment;
use crate::provision::{Provider, connect};

use super::delete::{DeleteInputs, ProviderDelete, plan_delete};
use super::journal::CreateJournal;
use super::plan::{DeletePlan, KnownVm};
use crate::cluster_config::ContextFiles;

/// Where a delete's plan is read from, as the caller resolved it.
#[derive(Debug, Clone, Copy)]
pub struct DeleteSources<'a> {
    pub config: &'a Config,
    pub discovery: &'a Discovery,
    pub one_env: &'a OneEnvironment,
    pub state_dir: &'a Path,
}

/// A delete plan and the provider its VMs are on.
#[derive(Debug, Clone)]
pub struct PreparedDelete {
    pub plan: DeletePlan,
    /// `None` for a cluster taloscope did not create whose entry names no provider: its plan
    /// knows no VM, and the known-VMs guard refuses it, naming `--adopt`.
    pub provider: Option<Provider>,
    /// What could not be read (the rollout Lease), to tell the operator.
    pub warnings: Vec<String>,
}

/// The plan of deleting cluster (or context) `name`, with the VMs `adopt` names in place of
/// the create journal's. Errors are one line naming the file, provider or VM.
pub async fn prepare_delete(
    sources: &DeleteSources<'_>,
    name: &str,
    adopt: &[u64],
) -> Result<PreparedDelete, String> {
    let record = CreateJournal::read(sources.state_dir, name).map_err(|e| e.to_string())?;
    let cluster = sources.discovery.select(name);
    if cluster.is_none() && record.is_none() && adopt.is_empty() {
        return Err(format!(
            "no cluster, context or create journal named {name:?}; `taloscope contexts` lists them"
        ));
    }
    let journal_provider = record.as_ref().map(|r| r.plan.provider.as_str());
    // Without a journal or --adopt no VM is known, and the guards refuse: the plan is shown
    // even when no provider is named.
    let provider = match provider_name(sources.config, name, journal_provider) {
        Ok(pname) => Some(delete_provider(sources.config, sources.one_env, &pname)?),
        Err(_) if record.is_none() && adopt.is_empty() => None,
        Err(e) => return Err(e),
    };
    let adopted = match &provider {
        Some(p) => adopted_vms(p, adopt).await?,
        None => Vec::new(),
    };
    let mut warnings = Vec::new();
    let lease_holder = match &cluster {
        Some(c) => rollout_holder(c, sources.discovery).await,
        None => Err(format!(
            "no context of {name} among the discovered files, so not its Kubernetes API"
        )),
    };
    if let Err(e) = &lease_holder {
        warnings.push(format!("cannot read the rollout lease: {e}"));
    }
    let plan = plan_delete(
        DeleteInputs {
            cluster: name.to_string(),
            record,
            adopted,
            provider: provider
                .as_ref()
                .map(|p| (p.name.clone(), p.endpoint.clone())),
            talos_context: cluster
                .as_ref()
                .and_then(|c| c.talos_context().map(str::to_string)),
            kube_context: cluster
                .as_ref()
                .and_then(|c| c.kube_context().map(str::to_string)),
            lease_unread: lease_holder.as_ref().err().cloned(),
            lease_holder: lease_holder.ok().flatten(),
        },
        sources.state_dir,
    );
    Ok(PreparedDelete {
        plan,
        provider,
        warnings,
    })
}

/// The provider the cluster's VMs are on: the create journal's, else the cluster's entry in
/// taloscope's config.
fn provider_name(
    config: &Config,
    cluster: &str,
    from_journal: Option<&str>,
) -> Result<String, String> {
    from_journal
        .map(str::to_string)
        .or_else(|| {
            config
                .clusters
                .get(cluster)
                .and_then(|c| c.provider.clone())
        })
        .ok_or_else(|| {
            format!(
                "{}: cluster {cluster:?} names no provider; add provider: NAME to its entry under clusters:",
                config.file_label()
            )
        })
}

/// Provider `name` of taloscope's config, its clients built (nothing dialled yet).
pub fn delete_provider(
    config: &Config,
    one_env: &OneEnvironment,
    name: &str,
) -> Result<Provider, String> {
    let cfg = config.providers.get(name).ok_or_else(|| {
        format!(
            "{}: no provider named {name:?} under providers:",
            config.file_label()
        )
    })?;
    connect(name, cfg, one_env).map_err(|e| e.to_string())
}

/// The VMs `--adopt` names, each read from the provider (an id it does not know is refused).
async fn adopted_vms(provider: &Provider, ids: &[u64]) -> Result<Vec<KnownVm>, String> {
    let mut vms = Vec::new();
    for id in ids {
        let vm = provider
            .vm_client()
            .vm(*id)
            .await
            .map_err(|e| format!("--adopt {id}: {e}"))?;
        vms.push(KnownVm {
            id: *id,
            name: vm.name,
        });
    }
    Ok(vms)
}

/// Who holds the cluster's rollout Lease now, read from the cluster's own API through its own
/// kube context; `Err` when it cannot be read, a cluster without a kube context included (a
/// kubeconfig of other clusters says nothing about this one's rollouts).
async fn rollout_holder(
    cluster: &Cluster,
    discovery: &Discovery,
) -> Result<Option<String>, String> {
    let Some(kube) = crate::fleet::kube_client_for(cluster, discovery.kubeconfig.as_ref()).await
    else {
        return Err(format!(
            "no kube context of {} in the kubeconfig",
            cluster.name
        ));
    };
    let kube = kube.map_err(|e| e.to_string())?;
    let info = kube.read_rollout_lease().await.map_err(|e| e.to_string())?;
    Ok(info.filter(|i| !i.expired).map(|i| i.holder.clone()))
}

impl ProviderDelete {
    /// The world of an approved `plan` whose provider is connected again by name (the console
    /// keeps plans, not clients): refused when the provider now has another endpoint than
    /// the one the plan's VM ids belong to.
    pub fn for_plan(
        plan: &DeletePlan,
        config: &Config,
        one_env: &OneEnvironment,
        files: ContextFiles,
    ) -> Result<ProviderDelete, String> {
        let name = plan
            .provider
            .as_deref()
            .ok_or_else(|| format!("the delete plan of {} names no provider", plan.cluster))?;
        let provider = delete_provider(config, one_env, name)?;
        match plan.provider_endpoint.as_deref() {
            Some(planned) if planned != provider.endpoint => Err(format!(
                "provider {name} is now at {}, not {planned} where the plan's VMs are: plan again",
                provider.endpoint
            )),
            _ => Ok(ProviderDelete { provider, files }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_lifecycle::{VmsKnownBy, delete_guards};
    use crate::guards::{GuardId, Verdict};

    fn discovery_of(name: &str) -> Discovery {
        Discovery {
            clusters: vec![Cluster {
                name: name.into(),
                ..Cluster::default()
            }],
            ..Discovery::default()
        }
    }

    #[tokio::test]
    async fn a_cluster_with_no_journal_and_no_provider_is_planned_and_refused_naming_adopt() {
        let dir = tempfile::tempdir().unwrap();
        let (config, env, discovery) = (
            Config::default(),
            OneEnvironment::default(),
            discovery_of("prod"),
        );
        let sources = DeleteSources {
            config: &config,
            discovery: &discovery,
            one_env: &env,
            state_dir: dir.path(),
        };
        let prepared = prepare_delete(&sources, "prod", &[]).await.unwrap();
        assert!(prepared.provider.is_none());
        assert_eq!(prepared.plan.known_by, VmsKnownBy::Unknown);
        let guards = delete_guards(&prepared.plan);
        let known = guards.iter().find(|g| g.id == GuardId::KnownVms).unwrap();
        assert_eq!(known.verdict, Verdict::Fail);
        assert!(known.reason.contains("--adopt VMID"), "{}", known.reason);
        // --adopt needs the provider the VMs are on.
        let adopt = prepare_delete(&sources, "prod", &[7]).await.unwrap_err();
        assert!(adopt.contains("names no provider"), "{adopt}");
        let none = prepare_delete(&sources, "nothing", &[]).await.unwrap_err();
        assert!(
            none.contains("no cluster, context or create journal"),
            "{none}"
        );
    }
}
