//! The create's phases (`operation::create` runs them for an approved CreateCluster): with its
//! journal, it goes through the phases VMs → booted → configured → bootstrapped → etcd → API → nodes Ready → contexts
//! written, skipping what the journal says is done. It journals before it acts where acting
//! twice would harm (VMs asked for, Bootstrap sent), bounds every wait, and reports on a
//! channel.
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::config::MachineRole;

use super::journal::{CreateJournal, CreatedVm};
use super::plan::{CreatePlan, Delivery, EndpointChoice};
use super::progress::{CreatePhase, LifecycleEvent, PhaseState, RunSummary};
use super::steps::{BootView, CreateSteps, NewVms};

/// How often things are looked at, and how long each phase may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateOptions {
    pub poll: Duration,
    pub phase_timeout: Duration,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            poll: Duration::from_secs(2),
            phase_timeout: Duration::from_secs(10 * 60),
        }
    }
}

/// A maintenance certificate fingerprint for the operator to confirm.
#[derive(Debug)]
pub struct FingerprintQuestion {
    pub vm: String,
    pub address: String,
    pub fingerprint: String,
    pub answer: oneshot::Sender<bool>,
}

/// Who confirms maintenance fingerprints.
#[derive(Debug, Clone)]
pub enum FingerprintPolicy {
    /// Headless `--yes --ack` [`PIN_FINGERPRINTS_ACK`](super::PIN_FINGERPRINTS_ACK): the
    /// fingerprint is printed and pinned as first seen; it must not change afterwards (a
    /// resumed run checks it against the journal).
    PinFirstSeen,
    /// Headless `--fingerprint VM=SHA256`: a named VM's certificate must be the one given; a
    /// VM not named is pinned as first seen only when `pin_unnamed` (the acknowledgement was
    /// typed too), else refused.
    Given {
        fingerprints: std::collections::BTreeMap<String, String>,
        pin_unnamed: bool,
    },
    /// The console asks the operator for each.
    Ask(mpsc::Sender<FingerprintQuestion>),
}

/// What a phase's probe saw: done, not yet (and what it is waiting for), or a failure that
/// waiting will not mend.
pub enum Probe<T> {
    Ready(T),
    NotYet(String),
    Failed(String),
}

pub struct CreateRunner<S: CreateSteps> {
    plan: CreatePlan,
    steps: Arc<S>,
    journal: CreateJournal,
    options: CreateOptions,
    fingerprints: FingerprintPolicy,
    events: mpsc::Sender<LifecycleEvent>,
    /// The configs are in the steps' memory (this run prepared or loaded them).
    configs_ready: bool,
}

impl<S: CreateSteps> CreateRunner<S> {
    pub fn new(
        plan: CreatePlan,
        steps: S,
        journal: CreateJournal,
        options: CreateOptions,
        fingerprints: FingerprintPolicy,
        events: mpsc::Sender<LifecycleEvent>,
    ) -> Self {
        CreateRunner {
            plan,
            steps: Arc::new(steps),
            journal,
            options,
            fingerprints,
            events,
            configs_ready: false,
        }
    }

    pub fn plan(&self) -> &CreatePlan {
        &self.plan
    }

    pub fn options(&self) -> &CreateOptions {
        &self.options
    }

    /// Carries out `phase` unless the journal says an earlier run did, and journals it done;
    /// its events say how it went (`operation::create` runs the phases in order).
    pub async fn run_phase(&mut self, phase: CreatePhase) -> Result<String, String> {
        if self.journal.record().is_done(phase) {
            let done = "done by an earlier run".to_string();
            self.phase_state(phase, PhaseState::Done(done.clone()))
                .await;
            return Ok(format!("{}: {done}", phase.title()));
        }
        match self.phase(phase).await {
            Ok(detail) => {
                self.journal
                    .update(|r| r.done = Some(phase))
                    .map_err(|e| e.to_string())?;
                self.phase_state(phase, PhaseState::Done(detail.clone()))
                    .await;
                Ok(format!("{}: {detail}", phase.title()))
            }
            Err(e) => {
                self.phase_state(phase, PhaseState::Failed(e.clone())).await;
                Err(e)
            }
        }
    }

    /// Lets go of the create journal (a later run may resume it); a line when that failed.
    pub async fn release_journal(&mut self) -> Option<String> {
        let e = self.journal.release().err()?.to_string();
        self.note(e.clone()).await;
        Some(e)
    }

    /// How the run ended (`error`: why not), sent as [`LifecycleEvent::Finished`] too.
    pub async fn finish(&mut self, error: Option<String>) -> RunSummary {
        let summary = RunSummary {
            cluster: self.plan.cluster.clone(),
            what: "create".into(),
            reached: self.journal.record().done,
            error,
        };
        self.send(LifecycleEvent::Finished {
            summary: summary.clone(),
        })
        .await;
        summary
    }

    async fn phase(&mut self, phase: CreatePhase) -> Result<String, String> {
        match phase {
            CreatePhase::Vms => self.vms().await,
            CreatePhase::Booted => self.booted().await,
            CreatePhase::Configured => self.configured().await,
            CreatePhase::Bootstrapped => self.bootstrapped().await,
            CreatePhase::Etcd => self.etcd().await,
            CreatePhase::Api => self.api().await,
            CreatePhase::NodesReady => self.nodes_ready().await,
            CreatePhase::ContextsWritten => {
                self.ensure_configs().await?;
                let control_planes: Vec<String> = self
                    .journal
                    .record()
                    .vms_of(MachineRole::Controlplane)
                    .filter_map(|v| v.ip.clone())
                    .collect();
                let merged = self.steps.write_contexts(&control_planes).await?;
                if let Some(entries) = merged.entries {
                    self.journal
                        .update(|r| r.merged = Some(entries))
                        .map_err(|e| e.to_string())?;
                }
                Ok(merged.said)
            }
        }
    }

    /// The VMs: those a killed run asked for are looked for first, so a second set is never
    /// made; "asked for" is journaled before the provider is called.
    async fn vms(&mut self) -> Result<String, String> {
        if self.plan.delivery == Delivery::UserData {
            self.ensure_configs().await?;
        }
        let record = self.journal.record().clone();
        let existing = if record.vms_requested {
            let found = self.steps.find_vms().await?;
            if !found.vms.is_empty() || found.service.is_some() {
                self.note(format!(
                    "found {} VM(s) an earlier run asked for; they are kept",
                    found.vms.len()
                ))
                .await;
            }
            found
        } else {
            NewVms::default()
        };
        self.journal
            .update(|r| r.vms_requested = true)
            .map_err(|e| e.to_string())?;
        let created = self.steps.create_vms(&existing).await?;
        let mut all = existing;
        all.vms.extend(created.vms);
        all.service = all.service.or(created.service);
        self.journal
            .update(|r| {
                r.vms = all.vms.clone();
                r.service = all.service;
            })
            .map_err(|e| e.to_string())?;
        let ids: Vec<String> = all.vms.iter().map(|v| v.id.to_string()).collect();
        Ok(match all.service {
            Some(s) => format!("OneFlow service {s}"),
            None => format!("VM ids {}", ids.join(", ")),
        })
    }

    /// Every VM RUNNING with an address (a OneFlow service's VMs appear as it deploys them).
    async fn booted(&mut self) -> Result<String, String> {
        let wanted = self.plan.node_count();
        let steps = self.steps.clone();
        let record = self.journal.record();
        let current = NewVms {
            vms: record.vms.clone(),
            service: record.service,
        };
        let view = self
            .wait_for(CreatePhase::Booted, || {
                let steps = steps.clone();
                let current = current.clone();
                async move {
                    let view = steps.look_at_vms(&current).await?;
                    if let Some(f) = view.vms.iter().find_map(|v| {
                        v.failure
                            .as_ref()
                            .map(|f| format!("VM {} ({}): {f}", v.vm.id, v.vm.name))
                    }) {
                        return Ok(Probe::Failed(f));
                    }
                    let up = view
                        .vms
                        .iter()
                        .filter(|v| v.running && v.vm.ip.is_some())
                        .count();
                    Ok(if up >= wanted && view.vms.len() >= wanted {
                        Probe::Ready(view)
                    } else {
                        Probe::NotYet(format!("{up} of {wanted} VMs running with an address"))
                    })
                }
            })
            .await?;
        let endpoint = self.endpoint_of(&view)?;
        self.journal
            .update(|r| {
                r.vms = view
                    .vms
                    .iter()
                    .map(|b| CreatedVm {
                        fingerprint: r
                            .vms
                            .iter()
                            .find(|old| old.id == b.vm.id)
                            .and_then(|old| old.fingerprint.clone()),
                        ..b.vm.clone()
                    })
                    .collect();
                r.endpoint = Some(endpoint.clone());
            })
            .map_err(|e| e.to_string())?;
        Ok(format!("{wanted} VMs running; endpoint {endpoint}"))
    }

    /// The Kubernetes endpoint the plan chose, resolved.
    fn endpoint_of(&self, view: &BootView) -> Result<String, String> {
        if let Some(e) = &self.journal.record().endpoint {
            return Ok(e.clone());
        }
        let address = match &self.plan.endpoint {
            EndpointChoice::Given(a) => Some(a.clone()),
            EndpointChoice::Gateway => view.gateway_ip.clone(),
            EndpointChoice::FirstControlPlane => view
                .vms
                .iter()
                .find(|v| v.vm.role == MachineRole::Controlplane)
                .and_then(|v| v.vm.ip.clone()),
        };
        address.map(|a| EndpointChoice::url_for(&a)).ok_or_else(|| {
            format!(
                "no address for the endpoint: {}",
                self.plan.endpoint.describe()
            )
        })
    }

    /// The bundle and configs in the steps' memory: generated the first time, loaded after.
    async fn ensure_configs(&mut self) -> Result<(), String> {
        if self.configs_ready {
            return Ok(());
        }
        let record = self.journal.record().clone();
        let endpoint = match (&record.endpoint, &self.plan.endpoint) {
            (Some(e), _) => e.clone(),
            (None, EndpointChoice::Given(a)) => EndpointChoice::url_for(a),
            (None, other) => {
                return Err(format!(
                    "the configs need the endpoint, and {} is not known yet",
                    other.describe()
                ));
            }
        };
        let bundle = self.plan.bundle_path.clone();
        // The bundle file is written atomically: there whole, or not at all. Configs made from
        // it may already be on VMs; then it must be there.
        let fresh = !bundle.exists();
        let handed_out = !record.configured.is_empty()
            || (self.plan.delivery == Delivery::UserData && record.vms_requested);
        if fresh && handed_out {
            return Err(format!(
                "the secrets bundle {} is gone, and the VMs already have configs made from it: restore it, or delete the cluster",
                bundle.display()
            ));
        }
        self.steps
            .prepare_configs(&endpoint, &bundle, fresh)
            .await?;
        self.journal
            .update(|r| {
                r.bundle = Some(bundle.clone());
                r.endpoint = Some(endpoint.clone());
            })
            .map_err(|e| e.to_string())?;
        if fresh {
            self.note(format!(
                "secrets bundle written to {} (adding nodes later needs it)",
                bundle.display()
            ))
            .await;
        }
        self.configs_ready = true;
        Ok(())
    }

    /// Every node has its config: applied over the maintenance API (control planes first), or
    /// read from USER_DATA (its Talos answers with the cluster's credentials).
    async fn configured(&mut self) -> Result<String, String> {
        self.ensure_configs().await?;
        let mut vms = self.journal.record().vms.clone();
        vms.sort_by_key(|v| v.role != MachineRole::Controlplane);
        for vm in vms {
            if self.journal.record().configured.contains(&vm.id) {
                continue;
            }
            match self.plan.delivery {
                Delivery::Maintenance => self.apply_to(&vm).await?,
                Delivery::UserData => {
                    self.until_talos_answers(CreatePhase::Configured, &vm)
                        .await?
                }
            }
            self.journal
                .update(|r| {
                    r.configured.insert(vm.id);
                })
                .map_err(|e| e.to_string())?;
        }
        Ok(format!(
            "{} node(s) configured ({})",
            self.plan.node_count(),
            self.plan.delivery.as_str()
        ))
    }

    async fn until_talos_answers(&self, phase: CreatePhase, vm: &CreatedVm) -> Result<(), String> {
        let steps = self.steps.clone();
        self.wait_for(phase, || {
            let steps = steps.clone();
            let vm = vm.clone();
            async move {
                Ok(match steps.talos_answers(&vm).await {
                    Ok(true) => Probe::Ready(()),
                    Ok(false) => Probe::NotYet(format!("{}: Talos not answering yet", vm.name)),
                    Err(e) => Probe::NotYet(format!("{}: {e}", vm.name)),
                })
            }
        })
        .await
    }

    fn first_control_plane(&self) -> Result<(CreatedVm, String), String> {
        let record = self.journal.record();
        let vm = record
            .vms_of(MachineRole::Controlplane)
            .next()
            .cloned()
            .ok_or("the journal holds no control plane")?;
        let ip = vm
            .ip
            .clone()
            .ok_or("the first control plane has no address")?;
        Ok((vm, ip))
    }

    async fn etcd(&mut self) -> Result<String, String> {
        self.ensure_configs().await?;
        let (_, node) = self.first_control_plane()?;
        let wanted = self.plan.controlplanes;
        let steps = self.steps.clone();
        self.wait_for(CreatePhase::Etcd, || {
            let steps = steps.clone();
            let node = node.clone();
            async move {
                let e = steps.etcd(&node).await?;
                Ok(match &e.leader {
                    Some(leader) if e.members >= wanted => {
                        Probe::Ready(format!("{}/{wanted} members, leader {leader}", e.members))
                    }
                    _ => Probe::NotYet(format!(
                        "{}/{wanted} members, {}",
                        e.members,
                        e.leader
                            .as_deref()
                            .map_or("no leader yet".to_string(), |l| format!("leader {l}"))
                    )),
                })
            }
        })
        .await
    }

    async fn api(&mut self) -> Result<String, String> {
        self.ensure_configs().await?;
        let (_, node) = self.first_control_plane()?;
        let steps = self.steps.clone();
        self.wait_for(CreatePhase::Api, || {
            let steps = steps.clone();
            let node = node.clone();
            async move {
                Ok(match steps.api(&node).await? {
                    Some(what) => Probe::Ready(what),
                    None => Probe::NotYet("the Kubernetes API does not answer yet".into()),
                })
            }
        })
        .await
    }

    async fn nodes_ready(&mut self) -> Result<String, String> {
        self.ensure_configs().await?;
        let (_, node) = self.first_control_plane()?;
        let wanted = self.plan.node_count();
        let steps = self.steps.clone();
        self.wait_for(CreatePhase::NodesReady, || {
            let steps = steps.clone();
            let node = node.clone();
            async move {
                let n = steps.nodes_ready(&node).await?;
                let line = format!(
                    "{}/{wanted} nodes Ready ({} registered)",
                    n.ready, n.registered
                );
                Ok(if n.ready >= wanted {
                    Probe::Ready(line)
                } else {
                    Probe::NotYet(line)
                })
            }
        })
        .await
    }

    /// Probes until ready, at most the phase timeout; a probe's `Err` is read again next
    /// time (the node may be rebooting) and named if time runs out. Each new "waiting" detail
    /// is reported once.
    async fn wait_for<T, F, Fut>(&self, phase: CreatePhase, mut probe: F) -> Result<T, String>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Probe<T>, String>>,
    {
        let deadline = Instant::now() + self.options.phase_timeout;
        let mut last = String::new();
        loop {
            let detail = match probe().await {
                Ok(Probe::Ready(v)) => return Ok(v),
                Ok(Probe::NotYet(d)) => d,
                Ok(Probe::Failed(e)) => return Err(e),
                Err(e) => e,
            };
            if detail != last {
                self.phase_state(phase, PhaseState::Waiting(detail.clone()))
                    .await;
                last = detail;
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "timed out after {:?}: {last}",
                    self.options.phase_timeout
                ));
            }
            tokio::time::sleep(self.options.poll).await;
        }
    }

    async fn phase_state(&self, phase: CreatePhase, state: PhaseState) {
        self.send(LifecycleEvent::Phase { phase, state }).await;
    }

    async fn note(&self, text: String) {
        self.send(LifecycleEvent::Note { text }).await;
    }

    async fn send(&self, event: LifecycleEvent) {
        // A closed receiver (the pane went away) does not stop the run.
        let _ = self.events.send(event).await;
    }
}

mod bootstrap;
mod maintenance_apply;

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
