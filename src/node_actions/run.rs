//! Carrying out an approved node action and following the node until it is done: a reboot
//! until the node is back (booted again, running, ready, Kubernetes Ready, its etcd member
//! healthy), a shutdown until it stops answering, a restarted service until it runs healthy
//! again. Reboot and shutdown cordon and drain the Kubernetes node first, as the upgrade does;
//! the whole action is bounded by the node timeout. Every step is written to the action's
//! journal (a node it cordoned is recorded before the cordon, cleared after the uncordon), and
//! a cancel stops it between steps or while it waits, never in the middle of a call, saying
//! what state it leaves.
use std::time::Duration;

use tokio::sync::watch;

use super::{NodeActionPlan, NodeOperation};
use crate::approval::ApprovedAction;
use crate::journal::action::RunningAction;
use crate::kube::drain::CORDONED_BY_TALOSCOPE;
use crate::kube::{DrainOptions, KubeClient, match_talos_node};
use crate::talos::RebootMode;
use crate::upgrade::observe::{BootIdCheck, ClusterObserver, node_back};

/// How a node action runs.
#[derive(Debug, Clone, Copy)]
pub struct NodeActionOptions {
    /// The most the whole action may take (`--node-timeout`).
    pub node_timeout: Duration,
    /// Between two status reads while following the node.
    pub poll_interval: Duration,
    pub drain: DrainOptions,
}

impl NodeActionOptions {
    /// The command line's defaults (`--node-timeout 900 --drain-timeout 300`), polling every
    /// second: what the console runs an action with.
    pub fn console() -> NodeActionOptions {
        NodeActionOptions {
            node_timeout: Duration::from_secs(900),
            poll_interval: Duration::from_secs(1),
            drain: DrainOptions {
                timeout: Duration::from_secs(300),
                retry_every: Duration::from_secs(1),
            },
        }
    }
}

/// Where progress lines go, in the operator's words ("cp-2: rebooting: not answering").
pub type Progress<'a> = &'a (dyn Fn(String) + Send + Sync);

/// The operator's cancel of a running action: set once, seen by the runner between steps and
/// while it waits.
#[derive(Debug, Clone)]
pub struct CancelSignal(watch::Receiver<bool>);

impl CancelSignal {
    /// A signal and the sender that sets it.
    pub fn new() -> (watch::Sender<bool>, CancelSignal) {
        let (tx, rx) = watch::channel(false);
        (tx, CancelSignal(rx))
    }

    /// A signal nobody sets (a headless run ends with the process): its sender is gone, so
    /// it stays unset and waiting on it waits for ever.
    pub fn never() -> CancelSignal {
        CancelSignal::new().1
    }

    pub fn is_set(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until it is set (for ever when its sender is gone unset).
    async fn wait(&mut self) {
        if self.0.wait_for(|set| *set).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// What a run of a node action is given besides its plan.
pub struct NodeActionRun<'a> {
    pub approved: &'a ApprovedAction,
    pub observer: &'a ClusterObserver,
    pub options: NodeActionOptions,
    pub progress: Progress<'a>,
    /// The action's journal, when the caller keeps one.
    pub journal: Option<&'a RunningAction>,
    pub cancel: CancelSignal,
}

/// Runs the approved action of `plan`; `Ok` says how it ended, `Err` why it did not finish
/// (a cancel included, with the state it leaves).
pub async fn run_node_action(
    plan: &NodeActionPlan,
    run: NodeActionRun<'_>,
) -> Result<String, String> {
    let NodeActionRun {
        approved,
        observer,
        options,
        progress,
        journal,
        cancel,
    } = run;
    let wanted = plan.mutating_action();
    if approved.action() != &wanted {
        return Err(format!(
            "the approval is for {}, not {}",
            approved.action().describe(),
            wanted.describe()
        ));
    }
    let run = Run {
        plan,
        observer,
        options,
        progress,
        journal,
        cancel,
    };
    let bound = options.node_timeout;
    let result = tokio::time::timeout(bound, run.carry_out())
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "{}: not done after {}s (--node-timeout){}",
                plan.node,
                bound.as_secs(),
                run.leaves()
            ))
        });
    if let Some(journal) = journal {
        journal.end(&result);
    }
    result
}

struct Run<'a> {
    plan: &'a NodeActionPlan,
    observer: &'a ClusterObserver,
    options: NodeActionOptions,
    progress: Progress<'a>,
    journal: Option<&'a RunningAction>,
    cancel: CancelSignal,
}

impl Run<'_> {
    fn say(&self, line: impl AsRef<str>) {
        let line = format!("{}: {}", self.plan.node, line.as_ref());
        if let Some(journal) = self.journal {
            journal.record(|r| r.step = line.clone());
        }
        (self.progress)(line);
    }

    /// Records (before it happens) that the run may leave `kube_node` cordoned, or (after the
    /// uncordon) that it does not.
    fn cordoned(&self, kube_node: Option<&str>) {
        if let Some(journal) = self.journal {
            journal.record(|r| r.left_cordoned = kube_node.map(str::to_string));
        }
    }

    /// What the node is left like if the run stops now, for the end's message.
    fn leaves(&self) -> String {
        match self.journal.map(|j| j.snapshot().left_cordoned) {
            Some(Some(node)) => {
                format!(
                    "; {node} stays cordoned (uncordon it from the action menu when it is back)"
                )
            }
            Some(None) => "; no node was left cordoned".to_string(),
            None => String::new(),
        }
    }

    /// Stops here when the operator cancelled: between steps only, never mid-call.
    fn checkpoint(&self, before: &str) -> Result<(), String> {
        if self.cancel.is_set() {
            return Err(format!("cancelled before {before}{}", self.leaves()));
        }
        Ok(())
    }

    /// Sleeps one poll interval, or returns the cancel while it waits for `what`.
    async fn pause(&self, what: &str) -> Result<(), String> {
        let mut cancel = self.cancel.clone();
        tokio::select! {
            () = tokio::time::sleep(self.options.poll_interval) => Ok(()),
            () = cancel.wait() => Err(format!("cancelled while waiting for {what}{}", self.leaves())),
        }
    }

    async fn carry_out(&self) -> Result<String, String> {
        let node = &self.plan.node;
        match &self.plan.operation {
            NodeOperation::Reboot => self.reboot().await,
            NodeOperation::Shutdown => self.shutdown().await,
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
                Ok(format!("{name} uncordoned"))
            }
            NodeOperation::Drain => match self.cordon_and_drain().await? {
                Some((name, evicted)) => {
                    // Drained as asked: cordoned on purpose, not left behind.
                    self.cordoned(None);
                    Ok(format!("{name} drained: {evicted} pods evicted"))
                }
                None => Err(format!("{node} has no Kubernetes node to drain")),
            },
            NodeOperation::ServiceRestart(service) => self.restart_service(service).await,
        }
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

    /// Cordons and drains the Kubernetes node, when there is one: its name and how many pods
    /// were evicted.
    async fn cordon_and_drain(&self) -> Result<Option<(String, usize)>, String> {
        if self.observer.kube.is_none() {
            self.say("no Kubernetes API to drain through: not draining");
            return Ok(None);
        }
        let (kube, name) = self.kube_node().await?;
        let Some(name) = name else {
            self.say("no Kubernetes node matches: not draining");
            return Ok(None);
        };
        self.checkpoint(&format!("cordoning {name}"))?;
        self.cordoned(Some(&name));
        let say = |line: String| self.say(line);
        let report = kube
            .cordon_and_drain(&name, self.options.drain, &say)
            .await
            .map_err(|e| format!("{e}; {name} stays cordoned"))?;
        Ok(Some((name, report.evicted.len())))
    }

    async fn reboot(&self) -> Result<String, String> {
        let talos = &self.observer.talos;
        let address = &self.plan.address;
        let boot = BootIdCheck::from_read(talos.boot_id(address).await)
            .map_err(|e| format!("reading the boot id: {e}"))?;
        let cordoned = self.cordon_and_drain().await?;
        self.checkpoint("the reboot was requested")?;
        talos
            .reboot(address, RebootMode::Default)
            .await
            .map_err(|e| e.to_string())?;
        self.say("reboot requested");
        self.wait_until_back(&boot).await?;
        if let Some((name, _)) = &cordoned {
            self.uncordon_ours(name).await?;
        }
        Ok(format!("{} rebooted and back", self.plan.node))
    }

    /// Polls until the node is back: booted again (or, when the boot id cannot be read, seen
    /// down and answering again) and [`node_back`].
    async fn wait_until_back(&self, boot: &BootIdCheck) -> Result<(), String> {
        let kube_checked = self.observer.kube.is_some();
        let mut seen_down = false;
        let mut last = String::new();
        loop {
            self.pause("the node to come back").await?;
            let status = self.observer.status().await;
            let node = status
                .node(&self.plan.node)
                .or_else(|| status.node(&self.plan.address));
            let back = match node {
                None => Err("not in the cluster status".to_string()),
                Some(n) => node_back(&status, n, self.plan.etcd_member.as_deref(), kube_checked),
            };
            seen_down |= back.is_err();
            let verdict = match (back, boot) {
                (Err(why), _) => Err(why),
                (Ok(()), BootIdCheck::Skipped(_)) if !seen_down => {
                    Err("not seen going down yet".to_string())
                }
                (Ok(()), BootIdCheck::Skipped(_)) => Ok(()),
                (Ok(()), BootIdCheck::Before(_)) => {
                    let now = self.observer.talos.boot_id(&self.plan.address).await.ok();
                    boot.verdict(now.as_deref())
                }
            };
            match verdict {
                Ok(()) => {
                    self.say("back, running and ready");
                    return Ok(());
                }
                Err(why) if why != last => {
                    self.say(format!("rebooting: {why}"));
                    last = why;
                }
                Err(_) => {}
            }
        }
    }

    async fn uncordon_ours(&self, name: &str) -> Result<(), String> {
        let (kube, _) = self.kube_node().await?;
        let nodes = kube.nodes().await.map_err(|e| e.to_string())?;
        let ours = nodes.iter().any(|n| {
            n.name == name
                && n.unschedulable
                && n.cordoned_by.as_deref() == Some(CORDONED_BY_TALOSCOPE)
        });
        if ours {
            kube.uncordon_marked(name)
                .await
                .map_err(|e| format!("uncordoning {name}: {e}"))?;
            self.say(format!("uncordoned {name}"));
        }
        self.cordoned(None);
        Ok(())
    }

    async fn shutdown(&self) -> Result<String, String> {
        self.cordon_and_drain().await?;
        self.checkpoint("the shutdown was requested")?;
        self.observer
            .talos
            .shutdown(&self.plan.address, false)
            .await
            .map_err(|e| e.to_string())?;
        self.say("shutdown requested");
        loop {
            self.pause("the node to stop answering").await?;
            let status = self.observer.status().await;
            let off = status
                .node(&self.plan.node)
                .or_else(|| status.node(&self.plan.address))
                .is_none_or(|n| n.error.is_some());
            if off {
                return Ok(format!("{} is off (not answering)", self.plan.node));
            }
        }
    }

    async fn restart_service(&self, service: &str) -> Result<String, String> {
        let talos = &self.observer.talos;
        let address = &self.plan.address;
        let answer = talos
            .service_restart(address, service)
            .await
            .map_err(|e| e.to_string())?;
        self.say(&answer);
        let mut last = String::new();
        loop {
            self.pause(&format!("{service} to run healthy")).await?;
            let services = talos.service_list(address).await;
            let now = match &services {
                Ok(list) => match list.iter().find(|s| s.id == service) {
                    Some(s) if s.state == "Running" && s.healthy == Some(true) => {
                        return Ok(format!(
                            "{service} on {} running and healthy",
                            self.plan.node
                        ));
                    }
                    Some(s) => format!("{service} {}", s.state),
                    None => format!("{service} not listed"),
                },
                Err(e) => format!("listing services: {e}"),
            };
            if now != last {
                self.say(&now);
                last = now;
            }
        }
    }
}
