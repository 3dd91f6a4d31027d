//! Carrying out an approved node action and following the node until it is done: a reboot
//! until the node is back (booted again, running, ready, Kubernetes Ready, its etcd member
//! healthy), a shutdown until it stops answering, a restarted service until it runs healthy
//! again. Reboot and shutdown cordon and drain the Kubernetes node first, as the upgrade does;
//! the whole action is bounded by the node timeout.
use std::time::Duration;

use super::{NodeActionPlan, NodeOperation};
use crate::approval::{ApprovedAction, MutatingAction};
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

/// Runs the approved action of `plan`; `Ok` says how it ended, `Err` why it did not finish.
pub async fn run_node_action(
    approved: &ApprovedAction,
    plan: &NodeActionPlan,
    observer: &ClusterObserver,
    options: NodeActionOptions,
    progress: Progress<'_>,
) -> Result<String, String> {
    let wanted = MutatingAction::Node {
        cluster: plan.cluster.clone(),
        node: plan.node.clone(),
        operation: plan.operation.clone(),
    };
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
    };
    let bound = options.node_timeout;
    tokio::time::timeout(bound, run.carry_out())
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "{}: not done after {}s (--node-timeout)",
                plan.node,
                bound.as_secs()
            ))
        })
}

struct Run<'a> {
    plan: &'a NodeActionPlan,
    observer: &'a ClusterObserver,
    options: NodeActionOptions,
    progress: Progress<'a>,
}

impl Run<'_> {
    fn say(&self, line: impl AsRef<str>) {
        (self.progress)(format!("{}: {}", self.plan.node, line.as_ref()));
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
                Some((name, evicted)) => Ok(format!("{name} drained: {evicted} pods evicted")),
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
            tokio::time::sleep(self.options.poll_interval).await;
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
        Ok(())
    }

    async fn shutdown(&self) -> Result<String, String> {
        self.cordon_and_drain().await?;
        self.observer
            .talos
            .shutdown(&self.plan.address, false)
            .await
            .map_err(|e| e.to_string())?;
        self.say("shutdown requested");
        loop {
            tokio::time::sleep(self.options.poll_interval).await;
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
            tokio::time::sleep(self.options.poll_interval).await;
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
