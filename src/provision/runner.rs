//! The provision's steps (`operation::provision` runs them for an approved Provision): create
//! the VMs (instantiate per VM, or a OneFlow role's cardinality raised), then follow
//! each: PENDING → PROLOG → BOOT → RUNNING, its IP, Talos apid answering on
//! it, and the node joined (Talos member, Kubernetes node Ready). It owns its
//! clients, reports on a channel and journals the VMs it started.
use std::collections::BTreeSet;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::guards::Guard;
use crate::kube::KubeClient;
use crate::opennebula::{ExtraTemplate, Service};
use crate::talos::TalosClient;

use super::ProvisionError;
use super::cluster::{GuardInputs, check_guards};
use super::journal::ProvisionJournal;
use super::lease::ProvisionLease;
use super::machine_config::MachineConfig;
use super::plan::{PlanSource, ProvisionPlan};
use super::progress::{ProvisionEvent, ProvisionStage, ProvisionSummary, VmProgress};
use super::provider::{Provider, ProviderClients};

/// How often VMs are looked at, and how long a run may take in all.
#[derive(Debug, Clone, Copy)]
pub struct RunnerOptions {
    pub poll: Duration,
    pub timeout: Duration,
}

impl Default for RunnerOptions {
    fn default() -> Self {
        RunnerOptions {
            poll: Duration::from_secs(2),
            timeout: Duration::from_secs(20 * 60),
        }
    }
}

/// How the runner tells that a node is up and has joined.
#[derive(Clone)]
pub struct JoinChecks {
    /// The cluster's talosconfig context: apid on the new IP, and Members.
    pub talos: TalosClient,
    /// Asked for the cluster's members (an existing node); the new node's own
    /// IP when `None`.
    pub member_node: Option<String>,
    /// The cluster's kube context: the new node Ready. Without one, joined
    /// means a Talos member.
    pub kube: Option<KubeClient>,
}

struct Tracked {
    progress: VmProgress,
}

pub struct ProvisionRunner {
    plan: ProvisionPlan,
    provider: Provider,
    checks: JoinChecks,
    journal: Option<ProvisionJournal>,
    options: RunnerOptions,
    events: mpsc::Sender<ProvisionEvent>,
    /// OneFlow plans: the role's VM ids before it was scaled.
    flow_before: Option<BTreeSet<u64>>,
    /// The guards to check again before each VM is created (none: not checked).
    guards: Option<GuardInputs>,
    /// The cluster's rollout Lease while an approved run holds it.
    lease: Option<ProvisionLease>,
    /// The VMs this run started, followed.
    started: Vec<Tracked>,
}

impl ProvisionRunner {
    pub fn new(
        plan: ProvisionPlan,
        provider: Provider,
        checks: JoinChecks,
        journal: Option<ProvisionJournal>,
        options: RunnerOptions,
        events: mpsc::Sender<ProvisionEvent>,
    ) -> ProvisionRunner {
        ProvisionRunner {
            plan,
            provider,
            checks,
            journal,
            options,
            events,
            flow_before: None,
            guards: None,
            lease: None,
            started: Vec::new(),
        }
    }

    /// Checks the plan's guards again against the cluster before each VM is created (before
    /// the OneFlow role is scaled), as the upgrade runner does before each node.
    pub fn with_guards(mut self, inputs: GuardInputs) -> ProvisionRunner {
        self.guards = Some(inputs);
        self
    }

    /// Why the next VM may not be created: the first guard that blocks now.
    async fn refusal(&self) -> Option<String> {
        let inputs = self.guards.as_ref()?;
        let guards = check_guards(&self.plan, inputs, &self.checks).await;
        let g = guards.iter().find(|g| g.blocks(&inputs.acks))?;
        Some(format!(
            "refused by the {} guard: {}",
            g.id.title(),
            g.reason
        ))
    }

    /// The guards as they stand now, with the acknowledgements given (none when the runner
    /// was given none to check).
    pub async fn guards_now(&self) -> Vec<Guard> {
        match &self.guards {
            Some(inputs) => check_guards(&self.plan, inputs, &self.checks).await,
            None => Vec::new(),
        }
    }

    /// Takes the cluster's rollout Lease and the provision journal, then creates the VMs (or
    /// raises the OneFlow role), each after the guards again: how many it asked for.
    pub async fn start_run(&mut self) -> Result<String, String> {
        self.take_lease().await?;
        self.claim_journal()?;
        let vms = self.start().await.map_err(|e| e.to_string())?;
        self.started = vms;
        Ok(format!(
            "{} new VM(s) asked of {}",
            self.plan.count, self.provider.name
        ))
    }

    /// Follows the started VMs to a final stage: `Err` says why not every one joined.
    pub async fn follow_run(&mut self) -> Result<String, String> {
        let mut vms = std::mem::take(&mut self.started);
        let error = self.follow(&mut vms).await;
        self.started = vms;
        match error {
            None => Ok(format!("{} new VM(s) at a final stage", self.started.len())),
            Some(e) => Err(e),
        }
    }

    /// Gives back the Lease the run took; a line when that failed (also sent as a note).
    pub async fn release_lease(&mut self) -> Option<String> {
        let lease = self.lease.take()?;
        let note = lease.release().await.err()?;
        self.send(ProvisionEvent::Note(note.clone())).await;
        Some(note)
    }

    /// `Ok` with its line when every node asked for joined; else the summary's line.
    pub fn all_joined(&self) -> Result<String, String> {
        let summary = self.summary(None);
        if summary.succeeded() {
            Ok(summary.line())
        } else {
            Err(summary.line())
        }
    }

    /// How the run ended (`error`: why, beyond the VMs that did not join), sent as
    /// [`ProvisionEvent::Finished`] too.
    pub async fn finish(&mut self, error: Option<String>) -> ProvisionSummary {
        let summary = self.summary(error);
        self.send(ProvisionEvent::Finished(summary.clone())).await;
        summary
    }

    fn summary(&self, error: Option<String>) -> ProvisionSummary {
        ProvisionSummary {
            cluster: self.plan.cluster.clone(),
            requested: self.plan.count,
            vms: self.started.iter().map(|t| t.progress.clone()).collect(),
            error,
        }
    }

    pub fn plan(&self) -> &ProvisionPlan {
        &self.plan
    }

    pub fn options(&self) -> RunnerOptions {
        self.options
    }

    /// Takes the cluster's rollout Lease for this run (none without a kube context); refused,
    /// naming the holder, while another run upgrades or provisions the cluster.
    async fn take_lease(&mut self) -> Result<(), String> {
        self.lease = ProvisionLease::take(self.checks.kube.as_ref(), &self.plan).await?;
        Ok(())
    }

    /// Keeps the Lease alive while the VMs are followed; a failure is said, and the run goes
    /// on following the VMs it has started (it creates no more).
    async fn renew_lease(&mut self) {
        let Some(lease) = &mut self.lease else { return };
        if let Err(note) = lease.renew_when_due("following new nodes").await {
            self.send(ProvisionEvent::Note(note)).await;
        }
    }

    /// Follows VMs an earlier run started (read back from its journal) to a
    /// final stage, creating nothing: a console killed mid-provision picks
    /// them up again when reopened. It only reads, so it takes no approval.
    /// A OneFlow provider without an XML-RPC endpoint cannot be followed so.
    pub async fn follow_again(mut self, vms: Vec<VmProgress>) -> ProvisionSummary {
        let mut tracked: Vec<Tracked> = vms
            .into_iter()
            .map(|progress| Tracked { progress })
            .collect();
        let error = match self.claim_journal() {
            Ok(()) => self.follow(&mut tracked).await,
            Err(e) => Some(e),
        };
        let summary = ProvisionSummary {
            cluster: self.plan.cluster.clone(),
            requested: tracked.len(),
            vms: tracked.into_iter().map(|t| t.progress).collect(),
            error,
        };
        self.send(ProvisionEvent::Finished(summary.clone())).await;
        summary
    }

    /// Takes the journal for this run (see [`ProvisionJournal::claim`]); refused while another
    /// live run holds it.
    fn claim_journal(&mut self) -> Result<(), String> {
        match &mut self.journal {
            Some(j) => j.claim().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    async fn send(&self, event: ProvisionEvent) {
        // A closed receiver (the pane went away) does not stop the run.
        let _ = self.events.send(event).await;
    }

    async fn changed(&mut self, t: &mut Tracked, next: VmProgress) {
        if t.progress == next {
            return;
        }
        t.progress = next;
        if let Some(j) = &mut self.journal
            && let Err(e) = j.record(
                &self.plan.provider_at(),
                self.plan.role.as_str(),
                &t.progress,
            )
        {
            let _ = self.events.send(ProvisionEvent::Note(e.to_string())).await;
        }
        self.send(ProvisionEvent::Vm(t.progress.clone())).await;
    }

    /// Creates the VMs (template providers) or raises the role (OneFlow).
    async fn start(&mut self) -> Result<Vec<Tracked>, ProvisionError> {
        let source = self.plan.source.clone();
        let clients = self.provider.clients.clone();
        match (&source, &clients) {
            (PlanSource::Template { id, .. }, ProviderClients::Templates(client)) => {
                let path = self.plan.machine_config.clone().ok_or_else(|| {
                    ProvisionError::NotApproved("the plan has no machine config".into())
                })?;
                let config = MachineConfig::load(&path, self.plan.role)?;
                let template = client.template(*id).await?;
                let extra = ExtraTemplate::with_user_data(&template.context, config.bytes())
                    .attribute("TALOSCOPE_CLUSTER", &self.plan.cluster)
                    .attribute("TALOSCOPE_ROLE", self.plan.role.as_str());
                let mut vms = Vec::new();
                let mut refused = None;
                for name in self.plan.vm_names.clone() {
                    let mut t = Tracked {
                        progress: blank(None, &name),
                    };
                    if refused.is_none() {
                        refused = self.refusal().await;
                    }
                    let created = match &refused {
                        Some(why) => Err(why.clone()),
                        None => client
                            .instantiate(*id, &name, &extra)
                            .await
                            .map_err(|e| e.to_string()),
                    };
                    let next = match created {
                        Ok(vm) => VmProgress {
                            id: Some(vm),
                            ..blank(None, &name)
                        },
                        Err(reason) => VmProgress {
                            stage: ProvisionStage::Failed,
                            reason: Some(reason),
                            ..blank(None, &name)
                        },
                    };
                    self.changed(&mut t, next).await;
                    vms.push(t);
                }
                Ok(vms)
            }
            (
                PlanSource::ServiceRole {
                    service_id,
                    role,
                    target,
                    ..
                },
                ProviderClients::Flow { flow, .. },
            ) => {
                // The role's VMs before scaling: the new ones are the others.
                let service = flow.service(*service_id).await?;
                self.flow_before = Some(
                    service
                        .role(role)
                        .map(|r| r.vms.iter().map(|v| v.id).collect())
                        .unwrap_or_default(),
                );
                if let Some(why) = self.refusal().await {
                    return Err(ProvisionError::Refused(why));
                }
                flow.scale(*service_id, role, *target).await?;
                self.send(ProvisionEvent::Note(format!(
                    "OneFlow service {service_id}: role {role} cardinality set to {target}"
                )))
                .await;
                Ok(Vec::new())
            }
            _ => Err(ProvisionError::NotApproved(format!(
                "provider {} cannot carry out this plan's source",
                self.provider.name
            ))),
        }
    }

    /// Follows every VM to a final stage, or until the run's time is up.
    /// Returns a run-level error, if any.
    async fn follow(&mut self, vms: &mut Vec<Tracked>) -> Option<String> {
        let deadline = Instant::now() + self.options.timeout;
        let before = self.flow_before.clone();
        loop {
            let service = match (&self.plan.source, &self.provider.clients) {
                (
                    PlanSource::ServiceRole { service_id, .. },
                    ProviderClients::Flow { flow, .. },
                ) => flow.service(*service_id).await.ok(),
                _ => None,
            };
            if let (Some(s), Some(before)) = (&service, &before) {
                self.adopt_new_service_vms(s, before, vms).await;
            }
            for t in vms.iter_mut() {
                if t.progress.stage.is_final() {
                    continue;
                }
                let next = self.look_at(&t.progress).await;
                self.changed(t, next).await;
            }
            let all_there = vms.len() >= self.plan.count;
            if all_there && vms.iter().all(|t| t.progress.stage.is_final()) {
                return None;
            }
            if Instant::now() >= deadline {
                for t in vms.iter_mut() {
                    if !t.progress.stage.is_final() {
                        let waiting = t.progress.stage.as_str();
                        let next = VmProgress {
                            stage: ProvisionStage::Failed,
                            reason: Some(format!("timed out at stage {waiting}")),
                            ..t.progress.clone()
                        };
                        self.changed(t, next).await;
                    }
                }
                return (!all_there).then(|| {
                    format!(
                        "only {} of {} new VM(s) appeared in the service before the time ran out",
                        vms.len(),
                        self.plan.count
                    )
                });
            }
            self.renew_lease().await;
            tokio::time::sleep(self.options.poll).await;
        }
    }

    async fn adopt_new_service_vms(
        &mut self,
        service: &Service,
        before: &BTreeSet<u64>,
        vms: &mut Vec<Tracked>,
    ) {
        let PlanSource::ServiceRole { role, .. } = &self.plan.source else {
            return;
        };
        let Some(r) = service.role(role) else { return };
        let mut fresh: Vec<_> = r
            .vms
            .iter()
            .filter(|v| !before.contains(&v.id))
            .filter(|v| !vms.iter().any(|t| t.progress.id == Some(v.id)))
            .cloned()
            .collect();
        fresh.sort_by_key(|v| v.id);
        for v in fresh {
            if vms.len() >= self.plan.count {
                break;
            }
            let name = if v.name.is_empty() {
                format!("vm-{}", v.id)
            } else {
                v.name.clone()
            };
            let mut t = Tracked {
                progress: blank(None, &name),
            };
            let next = VmProgress {
                id: Some(v.id),
                ..blank(None, &name)
            };
            self.changed(&mut t, next).await;
            vms.push(t);
        }
    }

    /// The next progress of one VM.
    /// The VM is read with `one.vm.info` for both kinds of provider: a OneFlow role's node
    /// carries only the VM's identity (OpenNebula/one src/flow/lib/models/role.rb).
    async fn look_at(&self, now: &VmProgress) -> VmProgress {
        let Some(id) = now.id else {
            return now.clone();
        };
        let vm = match self.provider.vm_client().vm(id).await {
            Ok(vm) => vm,
            // Perhaps passing: say so, and look again next time.
            Err(e) => {
                return VmProgress {
                    reason: Some(format!("cannot read the VM: {e}")),
                    ..now.clone()
                };
            }
        };
        let mut next = VmProgress {
            id: Some(id),
            name: if vm.name.is_empty() {
                now.name.clone()
            } else {
                vm.name.clone()
            },
            state: vm.state.name(),
            lcm_state: vm.lcm_state.name(),
            ip: vm.ip().map(str::to_string),
            stage: now.stage,
            reason: None,
        };
        if let Some(failure) = vm.failure() {
            next.stage = ProvisionStage::Failed;
            next.reason = Some(format!(
                "{failure}; it will not come up by itself: terminate it (`taloscope provision --context {c} --terminate {id} --yes --confirm {c}`)",
                c = self.plan.cluster
            ));
            return next;
        }
        if !vm.is_running() {
            next.stage = if vm.state == crate::opennebula::VmState::ACTIVE
                && vm.lcm_state.name().starts_with("BOOT")
            {
                ProvisionStage::Booting
            } else {
                ProvisionStage::Creating
            };
            return next;
        }
        let Some(ip) = next.ip.clone() else {
            next.stage = ProvisionStage::Running;
            next.reason = Some("waiting for an IP on the VM's NIC".into());
            return next;
        };
        if now.stage < ProvisionStage::Apid {
            next.stage = ProvisionStage::Running;
            if self.checks.talos.version(&ip).await.is_err() {
                next.reason = Some("waiting for Talos apid".into());
                return next;
            }
            next.stage = ProvisionStage::Apid;
        }
        match self.joined(&ip, &next.name).await {
            Ok(()) => next.stage = ProvisionStage::Joined,
            Err(waiting) => next.reason = Some(waiting),
        }
        next
    }

    /// Ok when Talos lists the node as a member and (with a kube context) its
    /// Kubernetes node is Ready; else what it is waiting for.
    async fn joined(&self, ip: &str, name: &str) -> Result<(), String> {
        let asked = self.checks.member_node.as_deref().unwrap_or(ip);
        let members = self
            .checks
            .talos
            .cluster_members(asked)
            .await
            .map_err(|_| "waiting for Talos cluster members".to_string())?;
        let member = members
            .iter()
            .any(|m| m.addresses.iter().any(|a| a == ip) || m.hostname == name || m.id == name);
        if !member {
            return Err("waiting for the node among Talos cluster members".into());
        }
        let Some(kube) = &self.checks.kube else {
            return Ok(());
        };
        let nodes = kube
            .nodes()
            .await
            .map_err(|_| "waiting for the Kubernetes API".to_string())?;
        match nodes
            .iter()
            .find(|n| n.internal_ips.iter().any(|a| a == ip) || n.name == name)
        {
            Some(n) if n.ready => Ok(()),
            Some(n) => Err(format!(
                "waiting for Kubernetes node {} to be Ready",
                n.name
            )),
            None => Err("waiting for the Kubernetes node to register".into()),
        }
    }
}

fn blank(id: Option<u64>, name: &str) -> VmProgress {
    VmProgress {
        id,
        name: name.to_string(),
        state: "PENDING".into(),
        lcm_state: "LCM_INIT".into(),
        ip: None,
        stage: ProvisionStage::Creating,
        reason: None,
    }
}

/// Terminates VM `id` of `cluster` through `provider` (the operation runner carries out an
/// approved `TerminateVm` with it), and notes it in the cluster's provision journal.
pub async fn terminate_vm(
    provider: &Provider,
    (cluster, id): (&str, u64),
    journal: Option<&mut ProvisionJournal>,
) -> Result<VmProgress, ProvisionError> {
    let client = provider.vm_client();
    client.terminate(id).await?;
    // The state it is leaving by (SHUTDOWN, EPILOG… on its way to DONE).
    let before = client.vm(id).await.ok();
    let name = before
        .as_ref()
        .map_or_else(|| format!("vm-{id}"), |v| v.name.clone());
    let progress = VmProgress {
        id: Some(id),
        name,
        state: before.as_ref().map_or_else(String::new, |v| v.state.name()),
        lcm_state: before
            .as_ref()
            .map_or_else(String::new, |v| v.lcm_state.name()),
        ip: before.as_ref().and_then(|v| v.ip().map(str::to_string)),
        stage: ProvisionStage::Terminated,
        reason: Some(format!(
            "terminated at the request of the operator (cluster {cluster})"
        )),
    };
    if let Some(j) = journal {
        let at = provider.at();
        let role = j
            .entries()
            .iter()
            .find(|e| e.progress.id == Some(id) && e.is_on(&at))
            .map_or_else(String::new, |e| e.role.clone());
        j.record(&at, &role, &progress)?;
    }
    Ok(progress)
}
