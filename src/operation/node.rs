//! A node action (reboot, shutdown, cordon, uncordon, drain, rollback, etcd leave, service
//! restart) as an operation: a reboot, rollback or shutdown cordons and drains its Kubernetes node first (as
//! the upgrade does), then requests the change and follows the node until it is done (a reboot
//! or rollback until it is back: booted again, running, ready, Kubernetes Ready, its etcd
//! member healthy; a shutdown until it stops answering), then uncordons what it cordoned.
//! Talos's reboot and shutdown follow `cmd/talosctl/cmd/talos/reboot.go` / `shutdown.go` (the
//! boot id read before, compared after), its rollback `rollback.go`, its etcd leave
//! `etcd.go` (`etcd leave`, followed until the member list no longer has the member and etcd
//! on the node has stopped); the drain follows kubectl's (`kube::drain`).
use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::guards::Guard;
use crate::kube::drain::CORDONED_BY_TALOSCOPE;
use crate::kube::{KubeClient, match_talos_node};
use crate::node_actions::{NodeActionOptions, NodeActionPlan, NodeOperation, gather_guards};
use crate::rollout::LeaseReading;
use crate::talos::RebootMode;
use crate::upgrade::observe::{BootIdCheck, ClusterObserver, node_back};

/// One step of a node action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeStep {
    /// Cordon and drain the Kubernetes node (reboot, shutdown, drain).
    Drain,
    /// The action's own call, followed until it is done.
    Act,
    /// Uncordon what the drain cordoned (reboot).
    Uncordon,
}

/// A planned node action on a cluster connection.
pub struct NodeAction {
    plan: NodeActionPlan,
    observer: ClusterObserver,
    options: NodeActionOptions,
    steps: Vec<NodeStep>,
    /// The boot id read before the drain (reboot).
    boot: Option<BootIdCheck>,
    /// The Kubernetes node the drain cordoned.
    cordoned: Option<String>,
}

impl NodeAction {
    /// The action of `plan` through `observer` (its own clone of the connection). Without a Kubernetes API (none paired, or the
    /// API is down with etcd) a reboot or shutdown goes through the Talos API alone.
    pub fn new(
        plan: NodeActionPlan,
        observer: ClusterObserver,
        options: NodeActionOptions,
    ) -> NodeAction {
        let (kube, facts) = (observer.kube.is_some(), plan.operation.facts());
        // A drain is all of a drain; the others drain first only through a Kubernetes API.
        let only_drains = plan.operation == NodeOperation::Drain;
        let steps = [
            (facts.drains && (kube || only_drains), NodeStep::Drain),
            (!only_drains, NodeStep::Act),
            (facts.comes_back && kube, NodeStep::Uncordon),
        ];
        let steps = steps
            .into_iter()
            .filter(|(s, _)| *s)
            .map(|(_, s)| s)
            .collect();
        NodeAction {
            plan,
            observer,
            options,
            steps,
            boot: None,
            cordoned: None,
        }
    }

    pub fn plan(&self) -> &NodeActionPlan {
        &self.plan
    }

    fn name(&self) -> &str {
        &self.plan.node
    }

    /// The kube client and the Kubernetes node matching the plan's node.
    async fn kube_node(&self) -> Result<(&KubeClient, Option<String>), String> {
        let Some(kube) = &self.observer.kube else {
            return Err(format!(
                "cluster {} has no paired kube context",
                self.plan.cluster
            ));
        };
        let nodes = kube
            .nodes()
            .await
            .map_err(|e| format!("reading the Kubernetes nodes: {e}"))?;
        let name =
            match_talos_node(&self.plan.address, &self.plan.node, &nodes).map(|n| n.name.clone());
        Ok((kube, name))
    }

    async fn drain(&mut self, step: &StepContext<'_>) -> Result<String, StepError> {
        let node = self.name().to_string();
        if self.plan.operation.facts().comes_back {
            let boot =
                BootIdCheck::from_read(self.observer.talos.boot_id(&self.plan.address).await)
                    .map_err(|e| format!("reading the boot id: {e}"))?;
            self.boot = Some(boot);
        }
        let (kube, name) = self.kube_node().await?;
        let Some(name) = name else {
            return match self.plan.operation {
                NodeOperation::Drain => {
                    Err(format!("{node} has no Kubernetes node to drain").into())
                }
                _ => Ok(format!("{node}: no Kubernetes node matches: not draining")),
            };
        };
        step.left_cordoned(Some(&name));
        let say = |line: String| step.say(format!("{node}: {line}"));
        let report = kube
            .cordon_and_drain(&name, self.options.drain, &say)
            .await
            .map_err(|e| format!("{node}: {e}; {name} stays cordoned"))?;
        let evicted = report.evicted.len();
        if self.plan.operation == NodeOperation::Drain {
            // Drained as asked: cordoned on purpose, not left behind.
            step.left_cordoned(None);
            return Ok(format!("{name} drained: {evicted} pods evicted"));
        }
        self.cordoned = Some(name.clone());
        Ok(format!(
            "{node}: {name} cordoned and drained: {evicted} pods evicted"
        ))
    }

    async fn act(&mut self, step: &StepContext<'_>) -> Result<String, StepError> {
        let node = self.name().to_string();
        match self.plan.operation.clone() {
            NodeOperation::Reboot => self.reboot(step).await,
            NodeOperation::Shutdown => self.shutdown(step).await,
            NodeOperation::Cordon => {
                let (kube, name) = self.kube_node().await?;
                let name = name.ok_or_else(|| format!("{node} has no Kubernetes node"))?;
                kube.set_cordoned(&name, true)
                    .await
                    .map_err(|e| format!("cordoning {name}: {e}"))?;
                Ok(format!("{name} cordoned"))
            }
            NodeOperation::Uncordon => {
                let (kube, name) = self.kube_node().await?;
                let name = name.ok_or_else(|| format!("{node} has no Kubernetes node"))?;
                kube.uncordon_marked(&name)
                    .await
                    .map_err(|e| format!("uncordoning {name}: {e}"))?;
                // An uncordon clears what an interrupted run left cordoned.
                step.left_cordoned(None);
                Ok(format!("{name} uncordoned"))
            }
            NodeOperation::Drain => Err(format!("a drain of {node} has no call of its own").into()),
            NodeOperation::Rollback => self.rollback(step).await,
            NodeOperation::EtcdLeave => self.leave_etcd(step).await,
            NodeOperation::ServiceRestart(service) => self.restart_service(&service, step).await,
        }
    }

    async fn reboot(&mut self, step: &StepContext<'_>) -> Result<String, StepError> {
        let boot = self.boot_before().await?;
        (self.observer.talos)
            .reboot(&self.plan.address, RebootMode::Default)
            .await
            .map_err(|e| e.to_string())?;
        step.say(format!("{}: reboot requested", self.name()));
        self.back_from(&boot, step).await?;
        Ok(format!("{}: back, running and ready", self.name()))
    }

    /// Talos's Rollback, then the node followed until it is back on a new boot; its Talos
    /// version before and after said.
    async fn rollback(&mut self, step: &StepContext<'_>) -> Result<String, StepError> {
        let boot = self.boot_before().await?;
        let (talos, address) = (&self.observer.talos, &self.plan.address);
        let version = async || talos.version(address).await.map(|v| v.tag);
        let before = version()
            .await
            .map_err(|e| format!("reading the version: {e}"))?;
        talos.rollback(address).await.map_err(|e| e.to_string())?;
        step.say(format!(
            "{}: rollback requested, booting the install before {before}",
            self.name()
        ));
        self.back_from(&boot, step).await?;
        let after = version()
            .await
            .map_err(|e| format!("reading the version: {e}"))?;
        Ok(format!(
            "{}: back on Talos {after} (was {before}), running and ready",
            self.name()
        ))
    }

    /// Talos's EtcdLeaveCluster, then followed until the member list (the cluster's status,
    /// which the other members answer) no longer has the node's member and the node says its
    /// etcd service has stopped (`Finished`, as Talos's `Stop` leaves it).
    async fn leave_etcd(&self, step: &StepContext<'_>) -> Result<String, StepError> {
        let (node, address) = (self.name(), &self.plan.address);
        let Some(member) = &self.plan.etcd_member else {
            return Err(format!("{node} runs no etcd member: there is nothing to leave").into());
        };
        let talos = &self.observer.talos;
        talos
            .etcd_leave_cluster(address)
            .await
            .map_err(|e| e.to_string())?;
        step.say(format!("{node}: etcd member {member} leaving"));
        let mut last = String::new();
        loop {
            step.wait(self.options.poll_interval, "the member to be gone")
                .await?;
            let status = self.observer.status().await;
            let members = &status.etcd.members;
            let gone = !members.is_empty() && members.iter().all(|m| &m.id != member);
            let etcd = match talos.service_list(address).await {
                Ok(list) => (list.into_iter().find(|s| s.id == "etcd")).map(|s| s.state),
                Err(e) => Some(format!("unknown ({e})")),
            };
            let now = match (gone, etcd.as_deref()) {
                (true, Some("Finished") | None) => {
                    return Ok(format!(
                        "{node}: member {member} gone, etcd stopped; {node} joins etcd again when it next boots"
                    ));
                }
                (true, Some(state)) => format!("member gone, etcd {state}"),
                (false, _) if members.is_empty() => "the member list could not be read".into(),
                (false, _) => format!("member {member} still listed"),
            };
            if now != last {
                step.say(format!("{node}: leaving etcd: {now}"));
                last = now;
            }
        }
    }

    /// The boot id the drain read, or read now.
    async fn boot_before(&mut self) -> Result<BootIdCheck, StepError> {
        match self.boot.take() {
            Some(boot) => Ok(boot),
            None => BootIdCheck::from_read(self.observer.talos.boot_id(&self.plan.address).await)
                .map_err(|e| format!("reading the boot id: {e}").into()),
        }
    }

    /// Until the node is back on a boot after `boot`.
    async fn back_from(&self, boot: &BootIdCheck, step: &StepContext<'_>) -> Result<(), StepError> {
        let plan = &self.plan;
        wait_until_back(
            &self.observer,
            &plan.node,
            &plan.address,
            plan.etcd_member.as_deref(),
            Some(boot),
            self.options.poll_interval,
            step,
        )
        .await
    }

    async fn shutdown(&self, step: &StepContext<'_>) -> Result<String, StepError> {
        self.observer
            .talos
            .shutdown(&self.plan.address, false)
            .await
            .map_err(|e| e.to_string())?;
        step.say(format!("{}: shutdown requested", self.name()));
        loop {
            step.wait(self.options.poll_interval, "the node to stop answering")
                .await?;
            let status = self.observer.status().await;
            let off = status
                .node(&self.plan.node)
                .or_else(|| status.node(&self.plan.address))
                .is_none_or(|n| n.error.is_some());
            if off {
                return Ok(format!("{} is off (not answering)", self.name()));
            }
        }
    }

    async fn restart_service(
        &self,
        service: &str,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        let talos = &self.observer.talos;
        let address = &self.plan.address;
        let answer = talos
            .service_restart(address, service)
            .await
            .map_err(|e| e.to_string())?;
        step.say(format!("{}: {answer}", self.name()));
        let mut last = String::new();
        loop {
            step.wait(
                self.options.poll_interval,
                &format!("{service} to run healthy"),
            )
            .await?;
            let now = match talos.service_list(address).await {
                Ok(list) => match list.iter().find(|s| s.id == service) {
                    Some(s) if s.state == "Running" && s.healthy == Some(true) => {
                        return Ok(format!("{service} on {} running and healthy", self.name()));
                    }
                    Some(s) => format!("{service} {}", s.state),
                    None => format!("{service} not listed"),
                },
                Err(e) => format!("listing services: {e}"),
            };
            if now != last {
                step.say(format!("{}: {now}", self.name()));
                last = now;
            }
        }
    }

    /// Uncordons the Kubernetes node the drain cordoned, when it is still cordoned by us.
    async fn uncordon_ours(&mut self, step: &StepContext<'_>) -> Result<String, StepError> {
        let node = self.name().to_string();
        let Some(name) = self.cordoned.take() else {
            return Ok(format!("{node}: nothing to uncordon"));
        };
        let (kube, _) = self.kube_node().await?;
        let nodes = kube.nodes().await.map_err(|e| e.to_string())?;
        let ours = nodes.iter().any(|n| {
            n.name == name
                && n.unschedulable
                && n.cordoned_by.as_deref() == Some(CORDONED_BY_TALOSCOPE)
        });
        if ours {
            kube.uncordon_marked(&name)
                .await
                .map_err(|e| format!("uncordoning {name}: {e}"))?;
        }
        step.left_cordoned(None);
        Ok(format!("{node}: uncordoned {name}"))
    }
}

/// Polls until `node` (at `address`) is back (`node_back`: running, Ready, its etcd member
/// healthy), and, after a reboot (`boot`, read before it), booted again: its boot id changed,
/// or, when that cannot be read, seen down and answering again.
pub async fn wait_until_back(
    observer: &ClusterObserver,
    node: &str,
    address: &str,
    etcd_member: Option<&str>,
    boot: Option<&BootIdCheck>,
    poll: std::time::Duration,
    step: &StepContext<'_>,
) -> Result<(), StepError> {
    let kube_checked = observer.kube.is_some();
    let doing = if boot.is_some() {
        "rebooting"
    } else {
        "waiting"
    };
    let mut seen_down = false;
    let mut last = String::new();
    loop {
        step.wait(poll, "the node to come back").await?;
        let status = observer.status().await;
        let back = match status.node(node).or_else(|| status.node(address)) {
            None => Err("not in the cluster status".to_string()),
            Some(n) => node_back(&status, n, etcd_member, kube_checked),
        };
        seen_down |= back.is_err();
        let verdict = match (back, boot) {
            (Err(why), _) => Err(why),
            (Ok(()), None) => Ok(()),
            (Ok(()), Some(BootIdCheck::Skipped(_))) if !seen_down => {
                Err("not seen going down yet".to_string())
            }
            (Ok(()), Some(BootIdCheck::Skipped(_))) => Ok(()),
            (Ok(()), Some(boot @ BootIdCheck::Before(_))) => {
                let now = observer.talos.boot_id(address).await.ok();
                boot.verdict(now.as_deref())
            }
        };
        match verdict {
            Ok(()) => return Ok(()),
            Err(why) if why != last => {
                step.say(format!("{node}: {doing}: {why}"));
                last = why;
            }
            Err(_) => {}
        }
    }
}

/// The cluster's rollout Lease as the guards read it: `None` when no unexpired one names a
/// run (or no Kubernetes API is paired).
pub async fn rollout_lease_read(observer: &ClusterObserver) -> LeaseReading {
    let Some(kube) = observer.kube.as_ref() else {
        return Ok(None);
    };
    kube.read_rollout_lease()
        .await
        .map(|info| info.filter(|i| !i.expired).map(|i| i.as_in_progress()))
        .map_err(|e| e.to_string())
}

impl Operation for NodeAction {
    fn kind(&self) -> OperationKind {
        OperationKind::of(&self.action())
    }

    fn action(&self) -> MutatingAction {
        self.plan.mutating_action()
    }

    fn node(&self) -> Option<&str> {
        Some(&self.plan.node)
    }

    fn cordons(&self) -> bool {
        self.steps.contains(&NodeStep::Drain)
    }

    fn steps(&self) -> Vec<Step> {
        let node = self.name();
        self.steps
            .iter()
            .map(|s| Step {
                what: match s {
                    NodeStep::Drain => format!("{node}: cordon and drain"),
                    NodeStep::Act => format!("{node}: {}", self.plan.operation.verb()),
                    NodeStep::Uncordon => format!("{node}: uncordon"),
                },
                timeout: self.options.node_timeout,
            })
            .collect()
    }

    /// Every guard of the plan, from the status now, before the drain and the action's call;
    /// none before the uncordon that undoes this run's cordon.
    async fn guards(&self, index: usize) -> Vec<Guard> {
        if self.steps.get(index) == Some(&NodeStep::Uncordon) {
            return Vec::new();
        }
        let status = self.observer.status().await;
        let lease = rollout_lease_read(&self.observer).await;
        let mut guards = gather_guards(&self.plan, &status, &self.observer, &lease).await;
        if self.steps.get(index) == Some(&NodeStep::Act) && self.cordoned.is_some() {
            // Drained by this run: the pods it evicted are gone, by design.
            guards.retain(|g| g.id != crate::guards::GuardId::WorkloadsDrainable);
        }
        guards
    }

    async fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        match self.steps.get(index).copied() {
            Some(NodeStep::Drain) => self.drain(step).await,
            Some(NodeStep::Act) => self.act(step).await,
            Some(NodeStep::Uncordon) => self.uncordon_ours(step).await,
            None => Err(format!("{}: no step {}", self.name(), index + 1).into()),
        }
    }

    fn finished(&self, done: &[String]) -> String {
        let node = self.name();
        match self.plan.operation {
            NodeOperation::Reboot => format!("{node} rebooted and back"),
            // What it booted: the act's line.
            NodeOperation::Rollback => (self.steps.iter().position(|s| *s == NodeStep::Act))
                .and_then(|act| done.get(act).cloned())
                .unwrap_or_else(|| format!("{node} rolled back")),
            _ => done
                .iter()
                .rev()
                .find(|line| !line.ends_with("nothing to uncordon"))
                .cloned()
                .unwrap_or_else(|| format!("{node}: done")),
        }
    }
}
