//! A machine-configuration patch rolled out node by node: planned from each target node's
//! running configuration with the patches applied (`cluster_config::patch`, talosctl's strategic
//! merge and JSON6902 rules) and a dry run of the result on the node itself
//! (`ApplyConfigurationRequest.dry_run`: the mode the node would use and its reasons,
//! siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go
//! `ApplyConfiguration`), then applied one node at a time, each followed until the node is back
//! (booted again when it rebooted, running, Ready, its etcd member healthy) before the next.
//! In `try` mode a node's change is confirmed (applied again in `no-reboot`) only once the node
//! is back; otherwise the node reverts it by itself when its try timeout ends, and the rollout
//! stops there.
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::cluster_config::{ConfigNode, ConfigPatch, PatchTarget};
use crate::fleet::{ClusterStatus, NodeRole};
use crate::guards::{Guard, GuardId};
use crate::machine_config::{ConfigChange, MAX_CONFIG_BYTES, config_changes};
use crate::node_actions::NodeActionOptions;
use crate::operation::node::{rollout_lease_read, wait_until_back};
use crate::rollout::LeaseReading;
use crate::talos::{AppliedMode, ApplyMode, Roles, TalosClient};
use crate::upgrade::guards::{
    etcd_alarms, lease_guard, nodes_healthy, role_guard, unhealthy_members,
};
use crate::upgrade::observe::{BootIdCheck, ClusterObserver};
use crate::upgrade::quorum_after_losing;

/// What the operator asks for: the patches, the nodes (by role, by name, or all) and the mode.
#[derive(Debug, Clone)]
pub struct ConfigPatchRequest {
    pub patches: Vec<ConfigPatch>,
    pub role: Option<NodeRole>,
    /// Names or addresses; empty: every node of `role` (or every node).
    pub nodes: Vec<String>,
    pub mode: ApplyMode,
    /// How long a node keeps a `try` change before it reverts it by itself.
    pub try_timeout: Duration,
}

/// Why a patch cannot be planned; names the node or the file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigPatchError {
    #[error("cluster {cluster} has no node named {node:?}; its nodes: {known}")]
    UnknownNode {
        cluster: String,
        node: String,
        known: String,
    },
    #[error("cluster {cluster}: no node to patch (none of role {role} answers)")]
    NoTarget { cluster: String, role: String },
    #[error("node {node}: cannot read its machine configuration: {reason}")]
    Read { node: String, reason: String },
    #[error("node {node}: {reason}")]
    Patch { node: String, reason: String },
}

/// One node of the plan: what changes on it and what its dry run said.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodePatch {
    pub node: String,
    pub address: String,
    pub role: String,
    /// Each path the patches change, secrets compared by their redaction.
    pub changes: Vec<ConfigChange>,
    /// The mode the node's dry run says it would apply with (`no-reboot`, `reboot`,
    /// `staged`, `try`).
    pub mode: String,
    /// Whether applying reboots the node.
    pub reboots: bool,
    /// The dry run's summary, its diff left out (it quotes secrets).
    pub mode_details: String,
    pub warnings: Vec<String>,
    /// The node's refusal of the patched configuration under the mode asked for, its diff
    /// left out.
    pub refused: Option<String>,
    #[serde(skip)]
    etcd_member: Option<String>,
    /// The whole patched configuration, secrets included: sent to the node, never shown.
    #[serde(skip)]
    config: Vec<u8>,
    /// The documents of the configuration it ran when planned, and of the patched one.
    #[serde(skip)]
    documents: (Vec<ConfigNode>, Vec<ConfigNode>),
}

/// The plan of a patch rollout: `--plan --output json` prints it beside the guards (read
/// back, what it leaves out is empty: a plan read so is for showing, never for applying).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigPatchPlan {
    pub cluster: String,
    pub patches: Vec<String>,
    /// The mode asked for (`auto`, `no-reboot`, `staged`, `try`).
    pub mode: String,
    pub try_timeout_seconds: Option<u64>,
    /// The nodes in the order they are patched; a node with no change is not among them.
    pub nodes: Vec<NodePatch>,
    /// Target nodes the patches leave as they are.
    pub unchanged: Vec<String>,
    #[serde(skip)]
    apply_mode: ApplyMode,
    #[serde(skip)]
    try_timeout: Duration,
}

/// `auto`, `no-reboot`, `staged`, `try`: the command line's spelling.
pub fn mode_name(mode: ApplyMode) -> &'static str {
    match mode {
        ApplyMode::Auto => "auto",
        ApplyMode::NoReboot => "no-reboot",
        ApplyMode::Staged => "staged",
        ApplyMode::Try => "try",
    }
}

fn applied_name(mode: AppliedMode) -> &'static str {
    match mode {
        AppliedMode::Auto => "auto",
        AppliedMode::NoReboot => "no-reboot",
        AppliedMode::Reboot => "reboot",
        AppliedMode::Staged => "staged",
        AppliedMode::Try => "try",
    }
}

impl ConfigPatchPlan {
    /// What the dispatcher is asked to approve.
    pub fn action(&self) -> MutatingAction {
        MutatingAction::ConfigPatch {
            cluster: self.cluster.clone(),
            nodes: self.nodes.iter().map(|n| n.node.clone()).collect(),
            mode: self.mode.clone(),
        }
    }

    /// The plan as `--plan` prints it above its guards and the console's plan screen shows
    /// it: per node its address, role, the node's own word on a reboot and its mode_details,
    /// each path changed (secrets by their redaction), its warnings and its refusal.
    pub fn table(&self) -> String {
        let indent = |text: &str, depth: usize| format!("{}{text}\n", "  ".repeat(depth));
        let mut out = format!(
            "PATCH the machine configuration of {} node(s) of {}, mode {}\n",
            self.nodes.len(),
            self.cluster,
            self.mode
        );
        out.push_str(&indent(&format!("patches: {}", self.patches.join(", ")), 1));
        if let Some(secs) = self.try_timeout_seconds {
            let trial = format!(
                "try: each node reverts the change by itself after {secs}s unless it is back and healthy, then confirmed"
            );
            out.push_str(&indent(&trial, 1));
        }
        let shown = |v: &Option<String>| {
            v.as_deref()
                .map_or("(absent)".to_string(), crate::printable::line)
        };
        for n in &self.nodes {
            let reboot = if n.reboots { "reboot" } else { "no reboot" };
            out.push_str(&indent(
                &format!(
                    "{} ({}, {}): {} - {}",
                    n.node, n.address, n.role, reboot, n.mode_details
                ),
                1,
            ));
            for c in &n.changes {
                let path = crate::printable::line(&c.path);
                let change = format!("{path}: {} -> {}", shown(&c.before), shown(&c.after));
                out.push_str(&indent(&change, 2));
            }
            for w in &n.warnings {
                out.push_str(&indent(
                    &format!("warning: {}", crate::printable::line(w)),
                    2,
                ));
            }
            if let Some(why) = &n.refused {
                out.push_str(&indent(&format!("refused: {why}"), 2));
            }
        }
        if !self.unchanged.is_empty() {
            out.push_str(&indent(
                &format!(
                    "unchanged (nothing to apply): {}",
                    self.unchanged.join(", ")
                ),
                1,
            ));
        }
        out
    }

    /// What each node's step does, as the run and its progress name it.
    pub fn steps(&self) -> Vec<String> {
        let word = |n: &NodePatch| {
            if n.reboots {
                "reboots"
            } else {
                n.mode.as_str()
            }
            .to_string()
        };
        self.nodes
            .iter()
            .map(|n| {
                format!(
                    "{}: apply ({}), wait until back and healthy",
                    n.node,
                    word(n)
                )
            })
            .collect()
    }
}

/// The target nodes of `request` in `status`, in the status's order.
fn targets<'a>(
    status: &'a ClusterStatus,
    request: &ConfigPatchRequest,
) -> Result<Vec<&'a crate::fleet::NodeStatus>, ConfigPatchError> {
    let mut chosen = Vec::new();
    for wanted in &request.nodes {
        let Some(node) = status.node(wanted) else {
            let known: Vec<&str> = status.nodes.iter().map(|n| n.name.as_str()).collect();
            return Err(ConfigPatchError::UnknownNode {
                cluster: status.name.clone(),
                node: wanted.clone(),
                known: known.join(", "),
            });
        };
        chosen.push(node);
    }
    if request.nodes.is_empty() {
        chosen = status
            .nodes
            .iter()
            .filter(|n| request.role.is_none_or(|r| n.role == r))
            .filter(|n| !n.address.is_empty())
            .collect();
    }
    chosen.retain(|n| request.role.is_none_or(|r| n.role == r));
    if chosen.is_empty() {
        return Err(ConfigPatchError::NoTarget {
            cluster: status.name.clone(),
            role: request.role.map_or("any", |r| r.as_str()).to_string(),
        });
    }
    Ok(chosen)
}

/// Whether `patch` applies to a node of `role` (`--config-patch-control-plane` / `-worker`).
fn applies_to(patch: &ConfigPatch, role: NodeRole) -> bool {
    match patch.target {
        PatchTarget::All => true,
        PatchTarget::ControlPlane => role == NodeRole::Controlplane,
        PatchTarget::Worker => role == NodeRole::Worker,
    }
}

/// One node's configuration and what the patches make of it.
struct Patched {
    before: Vec<ConfigNode>,
    after: Vec<ConfigNode>,
    /// The patched configuration as sent to the node.
    text: Vec<u8>,
}

/// The running configuration of one node with the patches applied.
fn patched(
    node: &str,
    role: NodeRole,
    running: &str,
    patches: &[ConfigPatch],
) -> Result<Patched, ConfigPatchError> {
    let fail = |reason: String| ConfigPatchError::Patch {
        node: node.to_string(),
        reason,
    };
    if running.len() > MAX_CONFIG_BYTES {
        return Err(fail(format!(
            "its configuration is {} bytes, more than a config can be",
            running.len()
        )));
    }
    let before: Vec<ConfigNode> = ConfigNode::parse_talos_documents(running)
        .map_err(|e| fail(format!("its configuration is not YAML: {e}")))?
        .into_iter()
        .filter(|d| *d != ConfigNode::Null)
        .collect();
    let mut after = before.clone();
    for patch in patches.iter().filter(|p| applies_to(p, role)) {
        patch.apply(&mut after).map_err(|e| fail(e.to_string()))?;
    }
    let mut text = String::new();
    for (i, doc) in after.iter().enumerate() {
        if i > 0 {
            text.push_str("---\n");
        }
        text.push_str(
            &doc.to_yaml()
                .map_err(|e| fail(format!("the patched document cannot be written: {e}")))?,
        );
    }
    Ok(Patched {
        before,
        after,
        text: text.into_bytes(),
    })
}

/// A node's words about a configuration with its diff left out: the diff quotes the
/// configuration, secrets included (a dry run's `Config diff:`, a refusal's or a reboot
/// reason's `diff:`, v1alpha1_server.go / configdiff).
fn without_diff(text: &str) -> String {
    let cut = ["Config diff:", "diff:"]
        .iter()
        .filter_map(|mark| text.find(mark))
        .min()
        .unwrap_or(text.len());
    crate::printable::line(
        &text[..cut]
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && *l != "Dry run summary:")
            .collect::<Vec<_>>()
            .join("; "),
    )
    .trim_end_matches(';')
    .to_string()
}

/// Reads each target node's running configuration, applies the patches and asks the node
/// what it would do with the result (a dry run changes nothing).
pub async fn plan_config_patch(
    talos: &TalosClient,
    status: &ClusterStatus,
    request: &ConfigPatchRequest,
) -> Result<ConfigPatchPlan, ConfigPatchError> {
    let mut nodes = Vec::new();
    let mut unchanged = Vec::new();
    for target in targets(status, request)? {
        let read =
            talos
                .machine_config(&target.address)
                .await
                .map_err(|e| ConfigPatchError::Read {
                    node: target.name.clone(),
                    reason: e.to_string(),
                })?;
        let Patched {
            before,
            after,
            text: config,
        } = patched(&target.name, target.role, &read.spec, &request.patches)?;
        let changes = config_changes(&before, &after);
        let documents = (before, after);
        if changes.is_empty() {
            unchanged.push(target.name.clone());
            continue;
        }
        let timeout = (request.mode == ApplyMode::Try).then_some(request.try_timeout);
        let dry = talos
            .apply_configuration(&target.address, &config, request.mode, true, timeout)
            .await;
        let etcd_member = status.etcd_member_of(target);
        let (mode, reboots, mode_details, warnings, refused) = match dry {
            Ok(answer) => (
                applied_name(answer.mode).to_string(),
                answer.mode == AppliedMode::Reboot,
                without_diff(&answer.mode_details),
                answer.warnings,
                None,
            ),
            Err(e) => (
                mode_name(request.mode).to_string(),
                false,
                String::new(),
                Vec::new(),
                Some(without_diff(&e.to_string())),
            ),
        };
        nodes.push(NodePatch {
            node: target.name.clone(),
            address: target.address.clone(),
            role: target.role.as_str().to_string(),
            changes,
            mode,
            reboots,
            mode_details,
            warnings,
            refused,
            etcd_member,
            config,
            documents,
        });
    }
    Ok(ConfigPatchPlan {
        cluster: status.name.clone(),
        patches: request
            .patches
            .iter()
            .map(|p| p.file.display().to_string())
            .collect(),
        mode: mode_name(request.mode).to_string(),
        try_timeout_seconds: (request.mode == ApplyMode::Try)
            .then_some(request.try_timeout.as_secs()),
        nodes,
        unchanged,
        apply_mode: request.mode,
        try_timeout: request.try_timeout,
    })
}

/// The guards before patching `node` (`None`: before the run, every node's): the client role
/// (os:admin: applying a configuration is an admin call), no other rollout, not owned by
/// Cluster API, the cluster healthy (every node reachable, running and ready, etcd healthy
/// with no alarm), the nodes' acceptance of the change, etcd quorum for a control plane that
/// reboots, and no etcd alarm that would keep a rebooted node's member unhealthy.
pub fn config_patch_guards(
    plan: &ConfigPatchPlan,
    node: Option<&str>,
    status: &ClusterStatus,
    roles: &Roles,
    lease: &LeaseReading,
    capi_owner: Option<&crate::capi::CapiOwner>,
) -> Vec<Guard> {
    let mut guards = vec![
        role_guard(
            GuardId::ClientRole,
            roles,
            roles.may_apply_configuration(),
            "apply a machine configuration; that needs os:admin",
        ),
        lease_guard(&plan.cluster, lease),
        capi_owned(plan, capi_owner),
    ];
    let every: Vec<(&str, Option<&crate::fleet::NodeStatus>)> = status
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), Some(n)))
        .collect();
    guards.extend(nodes_healthy(&every));
    guards.push(
        unhealthy_members(GuardId::EtcdHealthy, &status.etcd.members).unwrap_or_else(|| {
            Guard::pass(
                GuardId::EtcdHealthy,
                format!("all {} etcd members healthy", status.etcd.members.len()),
            )
        }),
    );
    guards.push(etcd_alarms(status));
    let nodes = plan
        .nodes
        .iter()
        .filter(|n| node.is_none_or(|wanted| n.node == wanted));
    for n in nodes {
        guards.push(accepted(n));
        if n.reboots && n.role == NodeRole::Controlplane.as_str() {
            guards.push(quorum_after_losing(status, &n.node));
        }
        if n.reboots
            && let Some(alarm) = n.etcd_member.as_ref().and_then(|m| {
                status
                    .etcd
                    .alarms
                    .iter()
                    .find(|a| &a.member_id == m)
                    .map(|a| a.alarm.clone())
            })
        {
            guards.push(Guard::fail(
                GuardId::WaitCanFinish,
                format!(
                    "{}'s etcd member has a {alarm} alarm: it stays unhealthy, so the reboot the change needs could never see it back; disarm the {alarm} alarm first (taloscope etcd disarm --context {})",
                    n.node, plan.cluster
                ),
            ));
        }
    }
    guards
}

/// A cluster Cluster API owns changes its configuration through its TalosControlPlane and
/// TalosConfigTemplate: the providers would put back what a patch on the nodes changes.
fn capi_owned(plan: &ConfigPatchPlan, owner: Option<&crate::capi::CapiOwner>) -> Guard {
    match owner {
        None => Guard::pass(
            GuardId::CapiOwned,
            "no Cluster API management cluster among the kube contexts owns it",
        ),
        Some(owner) => Guard::fail(
            GuardId::CapiOwned,
            format!(
                "cluster {} is owned by Cluster API ({owner}): change its machine configuration through its TalosControlPlane (spec.controlPlaneConfig) and TalosConfigTemplate, which the providers roll out; a patch on the nodes is not what new Machines get",
                plan.cluster
            ),
        ),
    }
}

fn accepted(n: &NodePatch) -> Guard {
    match &n.refused {
        Some(why) => Guard::fail(
            GuardId::ConfigAccepted,
            format!("{} refuses the patched configuration: {why}", n.node),
        ),
        None => Guard::pass(
            GuardId::ConfigAccepted,
            format!(
                "{} accepts it in its dry run: {}",
                n.node,
                if n.reboots {
                    "reboots"
                } else {
                    n.mode.as_str()
                }
            ),
        ),
    }
}

/// The rollout of a planned patch on a cluster connection.
pub struct ConfigPatchRollout {
    plan: ConfigPatchPlan,
    observer: ClusterObserver,
    options: NodeActionOptions,
    capi_owner: Option<crate::capi::CapiOwner>,
}

impl ConfigPatchRollout {
    pub fn new(
        plan: ConfigPatchPlan,
        observer: ClusterObserver,
        options: NodeActionOptions,
        capi_owner: Option<crate::capi::CapiOwner>,
    ) -> ConfigPatchRollout {
        ConfigPatchRollout {
            plan,
            observer,
            options,
            capi_owner,
        }
    }

    pub fn plan(&self) -> &ConfigPatchPlan {
        &self.plan
    }

    /// Applies the patched configuration to one node and follows it until it is back, each
    /// phase said as it begins (`w-1: applying (auto)`, `w-1: waiting: ...`, `w-1: checks:
    /// ...`): the progress shows it as the node's step's state.
    async fn patch_node(&self, n: &NodePatch, step: &StepContext<'_>) -> Result<String, StepError> {
        let talos = &self.observer.talos;
        let mode = self.plan.apply_mode;
        step.phase("applying");
        step.say(format!("{}: applying ({})", n.node, mode_name(mode)));
        let boot = if n.reboots {
            Some(
                BootIdCheck::from_read(talos.boot_id(&n.address).await)
                    .map_err(|e| format!("{}: reading the boot id: {e}", n.node))?,
            )
        } else {
            None
        };
        let timeout = (mode == ApplyMode::Try).then_some(self.plan.try_timeout);
        let applied = talos
            .apply_configuration(&n.address, &n.config, mode, false, timeout)
            .await
            .map_err(|e| {
                format!(
                    "{}: applying the configuration: {}",
                    n.node,
                    without_diff(&e.to_string())
                )
            })?;
        step.say(format!(
            "{}: applied ({}): {}",
            n.node,
            applied_name(applied.mode),
            without_diff(&applied.mode_details)
        ));
        for warning in &applied.warnings {
            step.say(format!(
                "{}: warning: {}",
                n.node,
                crate::printable::line(warning)
            ));
        }
        if applied.mode == AppliedMode::Staged {
            return Ok(format!("{}: staged; applied at its next reboot", n.node));
        }
        if applied.mode == AppliedMode::Try {
            return self.try_out(n, step).await;
        }
        step.phase("waiting");
        step.say(format!(
            "{}: waiting: for the node to run the patched configuration",
            n.node
        ));
        self.wait_until_it_runs(
            n,
            Runs::Patched,
            "the node to run the patched configuration",
            step,
        )
        .await?;
        step.phase("checks");
        step.say(format!("{}: checks: {}", n.node, checks_named(n)));
        wait_until_back(
            &self.observer,
            &n.node,
            &n.address,
            n.etcd_member.as_deref(),
            boot.as_ref(),
            self.options.poll_interval,
            step,
        )
        .await?;
        self.still_healthy(n, step).await?;
        Ok(format!("{}: patched, back and healthy", n.node))
    }

    /// Follows a change on trial: confirmed (applied again without a reboot) once the node
    /// runs it and is back and healthy; the node's own revert, or no health within the try
    /// timeout (then waiting for the revert), stops the rollout.
    async fn try_out(&self, n: &NodePatch, step: &StepContext<'_>) -> Result<String, StepError> {
        step.phase("on trial");
        step.say(format!(
            "{}: on trial: confirmed once {} pass, within {}s, else the node reverts it",
            n.node,
            checks_named(n),
            self.plan.try_timeout.as_secs()
        ));
        let reverted = || -> StepError {
            format!(
                "{}: not healthy within the try timeout; the node reverted the change by itself; the rollout stops here, the nodes after it untouched",
                n.node
            )
            .into()
        };
        let deadline = tokio::time::Instant::now() + self.plan.try_timeout;
        let mut last = String::new();
        let mut passed = 0;
        loop {
            let now = match self.runs(n).await {
                Runs::Before => return Err(reverted()),
                Runs::Patched => match self.back_now(n).await {
                    Ok(()) if passed + 1 >= SETTLE_READS => break,
                    Ok(()) => {
                        passed += 1;
                        format!("checks pass ({passed} of {SETTLE_READS} reads in a row)")
                    }
                    Err(why) => {
                        passed = 0;
                        why
                    }
                },
                Runs::Other => {
                    passed = 0;
                    "not answering with its configuration".to_string()
                }
            };
            if now != last {
                step.say(format!("{}: on trial: {now}", n.node));
                last = now;
            }
            if tokio::time::Instant::now() >= deadline {
                step.say(format!(
                    "{}: not back and healthy within the try timeout ({}s): waiting for the node to revert the change",
                    n.node,
                    self.plan.try_timeout.as_secs()
                ));
                self.wait_until_it_runs(n, Runs::Before, "the node to revert the change", step)
                    .await?;
                return Err(reverted());
            }
            step.wait(
                self.options.poll_interval,
                "the tried change to prove healthy",
            )
            .await?;
        }
        step.phase("confirming");
        step.say(format!(
            "{}: confirming: checks passed; applying the tried change again (no-reboot)",
            n.node
        ));
        self.observer
            .talos
            .apply_configuration(&n.address, &n.config, ApplyMode::NoReboot, false, None)
            .await
            .map_err(|e| {
                format!(
                    "{}: confirming the tried change: {}",
                    n.node,
                    without_diff(&e.to_string())
                )
            })?;
        Ok(format!("{}: tried, healthy, confirmed", n.node))
    }

    /// The node's checks read again until they have passed `SETTLE_READS` times in a row, a
    /// poll interval apart: a change applied without a reboot restarts what it touches some
    /// moments after the node answers (the kubelet on its new spec, KubeletSpecController), so
    /// one passing read may still be of the node before it took the change in. A failing
    /// read stops the rollout here.
    async fn still_healthy(&self, n: &NodePatch, step: &StepContext<'_>) -> Result<(), StepError> {
        for _ in 1..SETTLE_READS {
            step.wait(self.options.poll_interval, "the checks to hold")
                .await?;
            self.back_now(n).await.map_err(|why| {
                format!(
                    "{}: not healthy after the change: {why}; the rollout stops here, the nodes after it untouched",
                    n.node
                )
            })?;
        }
        Ok(())
    }

    /// Whether the node is back now: running, Ready, its etcd member healthy.
    async fn back_now(&self, n: &NodePatch) -> Result<(), String> {
        let status = self.observer.status().await;
        match status.node(&n.node).or_else(|| status.node(&n.address)) {
            None => Err("not in the cluster status".to_string()),
            Some(node) => crate::upgrade::observe::node_back(
                &status,
                node,
                n.etcd_member.as_deref(),
                self.observer.kube.is_some(),
            ),
        }
    }
}

/// How many reads in a row, a poll interval apart, a node's checks pass before a change
/// applied to it counts as healthy (`still_healthy`, and a tried change's confirmation).
const SETTLE_READS: u32 = 3;

/// The health checks a node passes before the next: running, Ready (when a Kubernetes API
/// is paired) and, for a control plane, its etcd member healthy (`upgrade::observe::node_back`).
fn checks_named(n: &NodePatch) -> &'static str {
    match n.etcd_member {
        Some(_) => "running, Ready, etcd member healthy",
        None => "running, Ready",
    }
}

/// Which of a node's two configurations it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runs {
    /// The patched one.
    Patched,
    /// The one it ran when planned (a `try` change reverted).
    Before,
    /// Neither, or it cannot say now (rebooting, not answering).
    Other,
}

impl ConfigPatchRollout {
    /// Which configuration the node runs now, as its `MachineConfigs` resource says.
    async fn runs(&self, n: &NodePatch) -> Runs {
        let Ok(running) = self.observer.talos.machine_config(&n.address).await else {
            return Runs::Other;
        };
        let Ok(documents) = ConfigNode::parse_talos_documents(&running.spec) else {
            return Runs::Other;
        };
        let documents: Vec<ConfigNode> = documents
            .into_iter()
            .filter(|d| *d != ConfigNode::Null)
            .collect();
        if documents == n.documents.1 {
            Runs::Patched
        } else if documents == n.documents.0 {
            Runs::Before
        } else {
            Runs::Other
        }
    }

    /// Polls until the node runs `wanted`.
    async fn wait_until_it_runs(
        &self,
        n: &NodePatch,
        wanted: Runs,
        what: &str,
        step: &StepContext<'_>,
    ) -> Result<(), StepError> {
        while self.runs(n).await != wanted {
            step.wait(self.options.poll_interval, what).await?;
        }
        Ok(())
    }
}

impl Operation for ConfigPatchRollout {
    fn kind(&self) -> OperationKind {
        OperationKind::ConfigPatch
    }

    fn action(&self) -> MutatingAction {
        self.plan.action()
    }

    fn steps(&self) -> Vec<Step> {
        self.plan
            .steps()
            .into_iter()
            .map(|what| Step {
                what,
                timeout: self.options.node_timeout,
            })
            .collect()
    }

    /// The node's guards from the status now: the cluster healthy enough to lose it.
    async fn guards(&self, index: usize) -> Vec<Guard> {
        let Some(n) = self.plan.nodes.get(index) else {
            return Vec::new();
        };
        let status = self.observer.status().await;
        let lease = rollout_lease_read(&self.observer).await;
        config_patch_guards(
            &self.plan,
            Some(&n.node),
            &status,
            self.observer.talos.roles(),
            &lease,
            self.capi_owner.as_ref(),
        )
    }

    async fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        match self.plan.nodes.get(index).cloned() {
            Some(n) => self.patch_node(&n, step).await,
            None => Err(format!("no step {}", index + 1).into()),
        }
    }

    fn finished(&self, _done: &[String]) -> String {
        format!(
            "{} node(s) of {} patched",
            self.plan.nodes.len(),
            self.plan.cluster
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_words_lose_their_diff_which_quotes_secrets() {
        let dry = "Dry run summary:\nApplied configuration without a reboot (skipped in dry-run).\n\nConfig diff:\n\n-  token: abc.def\n";
        assert_eq!(
            without_diff(dry),
            "Applied configuration without a reboot (skipped in dry-run)."
        );
        let refusal = "rpc error: this config change can't be applied in immediate mode\ndiff:\n--- a\n+++ b\n-    key: LS0tLS1CRUdJTi\n";
        assert_eq!(
            without_diff(refusal),
            "rpc error: this config change can't be applied in immediate mode"
        );
        assert_eq!(without_diff("Staged configuration"), "Staged configuration");
    }
}
