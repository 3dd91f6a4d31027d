//! What a create does before its runner runs, the same for `taloscope create` and the
//! console's wizard: the provider looked up and connected, the plan and its guards over the
//! discovered context names, the journal claimed (a killed run's resumed) and the runner built;
//! the create journals a killed run left; the Talos releases a new cluster can be made of.
use std::collections::BTreeSet;
use std::path::Path;

use tokio::sync::mpsc;

use crate::cluster_config::{ConfigContract, ContextFiles};
use crate::config::{Config, ProviderConfig};
use crate::discovery::Cluster;
use crate::guards::Guard;
use crate::opennebula::auth::OneEnvironment;
use crate::provision::{Provider, connect};
use crate::versions::{Minor, TalosVersion, known_talos_releases};

use super::guards::{CreateFacts, create_guards};
use super::journal::{CreateJournal, CreateJournalError, CreateRecord};
use super::plan::CreatePlan;
use super::planner::{CreateRequest, PlanError, plan_create};
use super::progress::{CreatePhase, LifecycleEvent};
use super::provider_steps::ProviderSteps;
use super::runner::{CreateOptions, CreateRunner, FingerprintPolicy};

/// Why no plan was made: the request or the configuration is wrong (`Usage`), or the provider
/// did not answer as needed (`Provider`).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Provider(String),
}

/// A plan and its guards, with the provider it was made from.
pub struct PlannedCreate {
    pub plan: CreatePlan,
    pub guards: Vec<Guard>,
    pub provider: Provider,
}

/// Every talos and every kube context name among `clusters` (in use or alternate).
pub fn context_names(clusters: &[Cluster]) -> (BTreeSet<String>, BTreeSet<String>) {
    let talos = clusters
        .iter()
        .flat_map(|c| c.talos.iter().chain(&c.alternate_talos))
        .map(|t| t.name.clone())
        .collect();
    let kube = clusters
        .iter()
        .flat_map(|c| c.kube.iter().chain(&c.alternate_kube))
        .map(|k| k.name.clone())
        .collect();
    (talos, kube)
}

/// The provider named `name` in taloscope's config, connected.
pub fn provider_named<'c>(
    config: &'c Config,
    one_env: &OneEnvironment,
    name: &str,
) -> Result<(Provider, &'c ProviderConfig), SetupError> {
    let (key, provider_config) = config.providers.get_key_value(name).ok_or_else(|| {
        let known: Vec<&str> = config.providers.keys().map(String::as_str).collect();
        SetupError::Usage(format!(
            "{}: no provider named {name:?} under providers: (known: {})",
            config.file_label(),
            if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            }
        ))
    })?;
    let provider =
        connect(key, provider_config, one_env).map_err(|e| SetupError::Usage(e.to_string()))?;
    Ok((provider, provider_config))
}

/// The plan of `request` from its provider, and every create guard over the context names
/// of `clusters` and the operator's `files` the run will merge into (or why there are none).
pub async fn plan_with_guards(
    config: &Config,
    one_env: &OneEnvironment,
    request: &CreateRequest,
    state_dir: &Path,
    clusters: &[Cluster],
    files: Result<&ContextFiles, &str>,
) -> Result<PlannedCreate, SetupError> {
    let (provider, provider_config) = provider_named(config, one_env, &request.provider)?;
    let plan = plan_create(&provider, provider_config, request, state_dir)
        .await
        .map_err(|e| match e {
            PlanError::Provider(e) => SetupError::Provider(e.to_string()),
            other => SetupError::Usage(other.to_string()),
        })?;
    let (talos_contexts, kube_contexts) = context_names(clusters);
    let mut guards = create_guards(&CreateFacts {
        plan: &plan,
        talos_contexts: &talos_contexts,
        kube_contexts: &kube_contexts,
    });
    let resumed = CreateJournal::read(state_dir, &plan.cluster)
        .ok()
        .flatten()
        .is_some_and(|r| r.bundle.is_some());
    for guard in guards.iter_mut() {
        if guard.id == crate::guards::GuardId::NameFree {
            *guard = super::guards::bundle_free(
                guard.clone(),
                &plan.bundle_path,
                resumed,
                plan.with_secrets.as_deref(),
            );
        }
    }
    let checked = files.map_err(str::to_string).and_then(|f| {
        crate::cluster_config::check_merge(f, &plan.cluster).map_err(|e| e.to_string())
    });
    let context_files =
        super::guards::context_files(checked.as_ref().map_err(String::as_str), files.ok());
    guards.insert(1, context_files);
    Ok(PlannedCreate {
        plan,
        guards,
        provider,
    })
}

/// Claims the plan's journal (a killed run's is resumed from where it stands) and builds the
/// runner over the provider; the run's events go to `events`.
pub fn create_runner(
    state_dir: &Path,
    plan: CreatePlan,
    provider: Provider,
    files: ContextFiles,
    options: CreateOptions,
    fingerprints: FingerprintPolicy,
    events: mpsc::Sender<LifecycleEvent>,
) -> Result<CreateRunner<ProviderSteps>, CreateJournalError> {
    let journal = CreateJournal::claim(state_dir, &plan)?;
    let steps = ProviderSteps::new(plan.clone(), provider, files);
    Ok(CreateRunner::new(
        plan,
        steps,
        journal,
        options,
        fingerprints,
        events,
    ))
}

/// A create a killed run left unfinished: its cluster, how far it got, and the request that
/// plans it again (its run then resumes from the journal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedCreate {
    pub cluster: String,
    pub reached: Option<CreatePhase>,
    pub request: CreateRequest,
}

impl UnfinishedCreate {
    fn of(record: CreateRecord) -> Option<UnfinishedCreate> {
        if record.is_done(CreatePhase::ContextsWritten) {
            return None;
        }
        Some(UnfinishedCreate {
            cluster: record.cluster.clone(),
            reached: record.done,
            request: CreateRequest::from_plan(&record.plan),
        })
    }
}

/// The create journals in the state dir whose run did not end with its contexts written, by
/// cluster name; an unreadable journal is named in the errors.
pub fn unfinished_creates(state_dir: &Path) -> (Vec<UnfinishedCreate>, Vec<String>) {
    let dir = state_dir.join("clusters");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut found = Vec::new();
    let mut errors = Vec::new();
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    for path in paths {
        match super::journal::read_record(&path) {
            Ok(Some(record)) => found.extend(UnfinishedCreate::of(record)),
            Ok(None) => {}
            Err(e) => errors.push(e.to_string()),
        }
    }
    (found, errors)
}

/// The Talos releases a new cluster can be made of: the newest known patch of every minor the
/// config generator follows, newest first.
pub fn offered_talos_releases() -> Vec<String> {
    let mut newest: std::collections::BTreeMap<Minor, TalosVersion> = Default::default();
    for release in known_talos_releases() {
        if ConfigContract::for_talos(&release).is_ok() {
            newest.insert(release.minor_key(), release);
        }
    }
    newest.values().rev().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_lifecycle::guards::tests::plan;
    use crate::cluster_lifecycle::plan::{Delivery, EndpointChoice};

    #[test]
    fn offered_releases_are_newest_first_and_each_generates() {
        let offered = offered_talos_releases();
        assert!(offered.len() >= 2, "{offered:?}");
        assert!(
            offered.iter().any(|r| r.starts_with("v1.11.")),
            "{offered:?}"
        );
        let parsed: Vec<TalosVersion> = offered
            .iter()
            .map(|r| TalosVersion::parse(r).unwrap())
            .collect();
        assert!(parsed.windows(2).all(|w| w[0] > w[1]), "{offered:?}");
    }

    #[test]
    fn a_killed_runs_journal_is_offered_again_with_its_request_and_a_finished_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let lab = plan(3, Delivery::Maintenance, EndpointChoice::FirstControlPlane);
        let mut j = CreateJournal::claim(dir.path(), &lab).unwrap();
        j.update(|r| r.done = Some(CreatePhase::Booted)).unwrap();
        j.release().unwrap();
        let (found, errors) = unfinished_creates(dir.path());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].reached, Some(CreatePhase::Booted));
        assert_eq!(found[0].request, CreateRequest::from_plan(&lab));
        j.update(|r| r.done = Some(CreatePhase::ContextsWritten))
            .unwrap();
        assert!(unfinished_creates(dir.path()).0.is_empty());
        std::fs::write(dir.path().join("clusters/bad.json"), "{").unwrap();
        let (_, errors) = unfinished_creates(dir.path());
        assert!(errors[0].contains("bad.json"), "{errors:?}");
    }
}
