//! An upgrade plan for one cluster: the target and installer image, the options, and the node
//! order (control planes one at a time with the etcd leader last, then workers in batches),
//! with the operator's edits (reorder, leave out, include). Pure: built from a status snapshot.
use crate::natural::natural_cmp;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::image_ref::check_image_reference;
use super::releases::{LearnedReleases, ReleasesOrigin};
use crate::fleet::{ClusterStatus, NodeRole, NodeStatus};
use crate::talos::RebootMode;
use crate::versions::{
    Minor, OfferedRelease, ReleaseSource, TalosVersion, Version, check_fleet_talos_path,
    fleet_talos_upgrade_targets, fleet_talos_upgrade_targets_among,
};

/// The installer image talosctl uses by default for `target`.
pub fn default_installer_image(target: &TalosVersion) -> String {
    format!("ghcr.io/siderolabs/installer:{target}")
}

/// The targets the plan screen offers for `status`: from the lowest node, one minor at a time,
/// that every node may take (or already runs); downgrades only when asked.
pub fn offered_targets(status: &ClusterStatus, allow_downgrade: bool) -> Vec<TalosVersion> {
    fleet_talos_upgrade_targets(&running_talos_versions(status), allow_downgrade)
}

/// The targets offered for `status` among the releases learned at run time, in the order the
/// operator reads them: the running minor's patches newest first, then the next minor's.
pub fn offered_among(
    status: &ClusterStatus,
    allow_downgrade: bool,
    learned: &LearnedReleases,
) -> Vec<OfferedRelease> {
    let running = running_talos_versions(status);
    let Some(lowest) = Version::lowest(&running) else {
        return Vec::new();
    };
    let targets = fleet_talos_upgrade_targets_among(&learned.releases, &running, allow_downgrade);
    learned.releases.offer(&targets, lowest.minor_key())
}

/// The Talos targets offered for a cluster among the releases learned at run time, and the one
/// offered first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TalosTargets {
    /// The running minor's patches newest first, then the next minor's.
    pub offered: Vec<OfferedRelease>,
    /// The running minor's newest patch, else the next minor's newest.
    pub default: Option<TalosVersion>,
}

/// The targets `taloscope upgrade --plan` lists and the console's plan screen offers for
/// `status`, with their default, from the same learned releases (a registry's listing, or the
/// built-in table when none answered).
pub fn talos_targets(
    status: &ClusterStatus,
    allow_downgrade: bool,
    learned: &LearnedReleases,
) -> TalosTargets {
    let offered = offered_among(status, allow_downgrade, learned);
    let versions: Vec<TalosVersion> = offered.iter().map(|o| o.version.clone()).collect();
    let default = crate::versions::default_talos_target(&versions, &running_talos_versions(status));
    TalosTargets { offered, default }
}

/// Why `target` is no target at all: no release list knows it and no version path reaches it
/// (a mistyped `--to v9.9.9`), naming the versions that can be targeted. A listed target off
/// the path is the version-path guard's to refuse, and an unlisted one on the path the
/// listed-release guard's to have acknowledged: both are planned.
pub fn unknown_target(
    status: &ClusterStatus,
    target: &TalosVersion,
    allow_downgrade: bool,
    learned: &LearnedReleases,
) -> Result<(), String> {
    let running = running_talos_versions(status);
    if learned.releases.source_of(target).is_some()
        || running.is_empty()
        || check_fleet_talos_path(&running, target, allow_downgrade).is_ok()
    {
        return Ok(());
    }
    let offered = offered_among(status, allow_downgrade, learned);
    let targets = if offered.is_empty() {
        "none is offered".to_string()
    } else {
        let names: Vec<String> = offered.iter().map(|o| o.version.to_string()).collect();
        format!("it can target {}", names.join(", "))
    };
    Err(format!(
        "--to {target}: not a Talos release {} can be upgraded to ({}); {targets}",
        status.name,
        learned.origin.describe()
    ))
}

/// The targets the console's plan screens offer for `status` (sorted) and the one chosen: the
/// `named` one, which may be any release `learned` or the built-in table know (the version-path
/// guard then says whether it may be taken), else the default of [`talos_targets`]. Errors are
/// one line for the message line.
pub fn chosen_talos_target(
    status: &ClusterStatus,
    named: Option<&str>,
    learned: &LearnedReleases,
) -> Result<(Vec<TalosVersion>, TalosVersion), String> {
    let offered = talos_targets(status, false, learned);
    let mut targets: Vec<TalosVersion> = offered.offered.into_iter().map(|o| o.version).collect();
    targets.sort();
    let Some(first) = targets.first().cloned() else {
        return Err(format!(
            "no Talos upgrade target is offered for {} (every node on the newest release, or versions unknown)",
            status.name
        ));
    };
    let Some(text) = named else {
        return Ok((targets, offered.default.unwrap_or(first)));
    };
    let wanted = Version::parse(text).map_err(|e| format!(":upgrade {text}: {e}"))?;
    if !targets.contains(&wanted) {
        let known = learned.releases.source_of(&wanted).is_some()
            || crate::versions::is_known_talos_release(&wanted);
        if !known {
            let list: Vec<String> = targets.iter().map(ToString::to_string).collect();
            return Err(format!(
                "Talos {wanted} is not a known release (offered for {}: {})",
                status.name,
                list.join(", ")
            ));
        }
        targets.push(wanted.clone());
        targets.sort();
    }
    Ok((targets, wanted))
}

/// The Talos version of every node that reports a valid one.
pub fn running_talos_versions(status: &ClusterStatus) -> Vec<TalosVersion> {
    status
        .nodes
        .iter()
        .filter_map(|n| n.talos_version.as_deref())
        .filter_map(|v| Version::parse(v).ok())
        .collect()
}

/// How each node is upgraded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpgradeOptions {
    /// Stage the upgrade: reboot first and install early in the next boot, before pods and
    /// volumes are in use. Only the legacy API has it; Talos 1.13+ nodes upgrade unstaged.
    pub stage: bool,
    /// Keep the EPHEMERAL partition. Only meaningful on nodes below Talos 1.8: from 1.8 on an
    /// upgrade always keeps EPHEMERAL and the flag does nothing (talosctl hides it).
    pub preserve: bool,
    #[serde(
        serialize_with = "reboot_mode_name",
        deserialize_with = "reboot_mode_from_name"
    )]
    pub reboot_mode: RebootMode,
    /// Workers upgraded at once; control planes always go one at a time.
    pub max_parallel: usize,
    /// Allow a target below the running version (one minor back at most).
    pub allow_downgrade: bool,
}

impl Default for UpgradeOptions {
    fn default() -> Self {
        UpgradeOptions {
            stage: false,
            preserve: false,
            reboot_mode: RebootMode::Default,
            max_parallel: 1,
            allow_downgrade: false,
        }
    }
}

impl UpgradeOptions {
    /// Whether `preserve` changes anything on a node running `from` (below Talos 1.8 only).
    pub fn preserve_applies(from: &TalosVersion) -> bool {
        from.minor_key() < Minor::new(1, 8)
    }
}

/// The API a node is upgraded through, chosen by the Talos version it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpgradeApi {
    /// `MachineService.Upgrade`: below Talos 1.13. The server checks etcd itself and holds an
    /// upgrade mutex on control planes.
    MachineUpgrade,
    /// `ImageService.Pull` + `LifecycleService.Upgrade` + `MachineService.Reboot`: Talos 1.13
    /// and later. The server no longer checks etcd, so our guards are the only gate.
    Lifecycle,
}

impl UpgradeApi {
    /// talosctl switches to the new path for servers `>1.13.0-alpha.2`; so do we.
    pub fn for_version(running: &TalosVersion) -> UpgradeApi {
        let last_legacy = Version {
            major: 1,
            minor: 13,
            patch: 0,
            pre: Some("alpha.2".to_string()),
        };
        if *running > last_legacy {
            UpgradeApi::Lifecycle
        } else {
            UpgradeApi::MachineUpgrade
        }
    }

    /// The calls made, in the operator's words.
    pub fn calls(self) -> &'static str {
        match self {
            UpgradeApi::MachineUpgrade => "MachineService.Upgrade",
            UpgradeApi::Lifecycle => {
                "ImageService.Pull + LifecycleService.Upgrade + MachineService.Reboot"
            }
        }
    }
}

/// Whether a step's node is upgraded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    Upgrade,
    /// Already runs the target; skipped.
    AlreadyOnTarget,
    /// The operator left it out; skipped.
    LeftOut,
}

/// Up or down in the node order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

/// One node of the plan, in rollout order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    pub node: String,
    pub address: String,
    pub role: NodeRole,
    /// The Talos version it ran when planned; `None` when it did not say.
    pub from: Option<TalosVersion>,
    /// `None` until the node reports a version.
    pub api: Option<UpgradeApi>,
    /// Its etcd member id, when it is a member.
    pub etcd_member: Option<String>,
    /// Hand etcd leadership to another member before rebooting (the current leader).
    pub forfeit_leadership: bool,
    pub state: StepState,
    /// Steps with the same batch number run together; `None` when skipped. Control planes are
    /// always alone in their batch. Counted from 1, as the plan table shows it (journals
    /// written before counted from 0; only equal numbers matter to the runner).
    pub batch: Option<usize>,
}

impl PlanStep {
    pub fn is_skipped(&self) -> bool {
        self.state != StepState::Upgrade
    }

    fn answers_to(&self, name: &str) -> bool {
        self.node == name || self.address == name
    }
}

/// Why a plan could not be made or edited; one line naming the cluster or node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("cluster {cluster} reported no nodes; nothing to plan")]
    NoNodes { cluster: String },
    #[error("every node of {cluster} already runs Talos {target}; nothing to upgrade")]
    NothingToUpgrade {
        cluster: String,
        target: TalosVersion,
    },
    #[error("max-parallel for {cluster} must be at least 1")]
    MaxParallelZero { cluster: String },
    #[error(
        "installer image {image:?} for {cluster} is not an image reference: {why} (expected [registry/]repository[:tag][@digest], e.g. ghcr.io/siderolabs/installer:v1.12.0)"
    )]
    InvalidImage {
        cluster: String,
        image: String,
        why: String,
    },
    #[error("{node} is not a node in the plan for {cluster}")]
    UnknownNode { cluster: String, node: String },
    #[error("{node} is already {edge} in the plan")]
    AtEdge { node: String, edge: &'static str },
    #[error("cannot move {node} past {other}: control planes go before workers")]
    CrossesRole { node: String, other: String },
}

/// A rolling upgrade of one cluster to one Talos version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpgradePlan {
    pub cluster: String,
    pub target: TalosVersion,
    pub image: String,
    pub options: UpgradeOptions,
    pub steps: Vec<PlanStep>,
    /// The etcd leader when planned, if etcd has more than one voting member (a lone member has
    /// nobody to hand leadership to).
    pub leader: Option<String>,
    /// The targets offered when planned (the running minor's newest patch first, then the next
    /// minor's), each with where it was learned.
    #[serde(default)]
    pub offered: Vec<OfferedRelease>,
    /// Where the releases were learned: a registry's listing and its age, or the built-in
    /// table and why.
    #[serde(default)]
    pub releases: ReleasesOrigin,
    /// Where the target was learned; `None` when neither the registry nor the table lists it.
    #[serde(default)]
    pub target_source: Option<ReleaseSource>,
}

impl UpgradePlan {
    /// The default plan: control planes in name order (natural: `cp-2` before `cp-10`) with
    /// the etcd leader last, then nodes of unknown role one at a time, then workers in batches
    /// of `max_parallel`, each in name order: the same plan whatever order the nodes answered
    /// in, in the console and on the command line. Whether the
    /// version path is valid is a guard, not an error here, so the plan can show why.
    pub fn new(
        status: &ClusterStatus,
        target: TalosVersion,
        options: UpgradeOptions,
    ) -> Result<UpgradePlan, PlanError> {
        let built_in = LearnedReleases::built_in("no registry was asked");
        UpgradePlan::among(status, target, options, &built_in)
    }

    /// [`UpgradePlan::new`] with the releases learned at run time: the plan records the offered
    /// targets and where the target was learned (an unlisted one is a guard's to refuse).
    pub fn among(
        status: &ClusterStatus,
        target: TalosVersion,
        options: UpgradeOptions,
        learned: &LearnedReleases,
    ) -> Result<UpgradePlan, PlanError> {
        let cluster = status.name.clone();
        if status.nodes.is_empty() {
            return Err(PlanError::NoNodes { cluster });
        }
        if options.max_parallel == 0 {
            return Err(PlanError::MaxParallelZero { cluster });
        }
        let offered = offered_among(status, options.allow_downgrade, learned);
        let mut steps: Vec<PlanStep> = status
            .nodes
            .iter()
            .map(|node| step_for(status, node, &target))
            .collect();
        steps.sort_by(|a, b| natural_cmp(&a.node, &b.node).then_with(|| a.address.cmp(&b.address)));
        if steps.iter().all(|s| s.state == StepState::AlreadyOnTarget) {
            return Err(PlanError::NothingToUpgrade { cluster, target });
        }
        let voting = status.etcd.members.iter().filter(|m| !m.is_learner).count();
        let leader = status.etcd.leader().filter(|_| voting > 1).and_then(|m| {
            steps
                .iter()
                .find(|s| s.answers_to(&m.hostname))
                .map(|s| s.node.clone())
        });
        let mut ordered: Vec<PlanStep> = Vec::with_capacity(steps.len());
        let (leader_steps, rest): (Vec<PlanStep>, Vec<PlanStep>) = steps
            .into_iter()
            .partition(|s| Some(&s.node) == leader.as_ref());
        for rank in 0..3 {
            ordered.extend(rest.iter().filter(|s| role_rank(s.role) == rank).cloned());
            ordered.extend(
                leader_steps
                    .iter()
                    .filter(|s| role_rank(s.role) == rank)
                    .cloned(),
            );
        }
        let mut plan = UpgradePlan {
            image: default_installer_image(&target),
            target_source: learned.releases.source_of(&target),
            cluster,
            target,
            options,
            steps: ordered,
            leader,
            offered,
            releases: learned.origin.clone(),
        };
        plan.renumber();
        Ok(plan)
    }

    /// Use a custom or factory installer image instead of the default.
    pub fn set_image(&mut self, image: &str) -> Result<(), PlanError> {
        let image = image.trim();
        if let Err(why) = check_image_reference(image) {
            return Err(PlanError::InvalidImage {
                cluster: self.cluster.clone(),
                image: crate::printable::line(image),
                why,
            });
        }
        self.image = image.to_string();
        Ok(())
    }

    /// Index of the step for `node` (name or address).
    pub fn position(&self, node: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.answers_to(node))
    }

    /// Move a node one place up or down. Control planes stay before workers.
    pub fn move_node(&mut self, node: &str, direction: Direction) -> Result<(), PlanError> {
        let from = self.find(node)?;
        let to = match direction {
            Direction::Up => from.checked_sub(1),
            Direction::Down => Some(from + 1).filter(|i| *i < self.steps.len()),
        };
        let Some(to) = to else {
            let edge = match direction {
                Direction::Up => "first",
                Direction::Down => "last",
            };
            return Err(PlanError::AtEdge {
                node: self.steps[from].node.clone(),
                edge,
            });
        };
        if role_rank(self.steps[from].role) != role_rank(self.steps[to].role) {
            return Err(PlanError::CrossesRole {
                node: self.steps[from].node.clone(),
                other: self.steps[to].node.clone(),
            });
        }
        self.steps.swap(from, to);
        self.renumber();
        Ok(())
    }

    /// Skip a node in this rollout.
    pub fn leave_out(&mut self, node: &str) -> Result<(), PlanError> {
        let i = self.find(node)?;
        self.steps[i].state = StepState::LeftOut;
        self.renumber();
        Ok(())
    }

    /// Take a left-out node back in (it stays skipped if it already runs the target).
    pub fn include(&mut self, node: &str) -> Result<(), PlanError> {
        let i = self.find(node)?;
        let on_target = self.steps[i].from.as_ref() == Some(&self.target);
        self.steps[i].state = if on_target {
            StepState::AlreadyOnTarget
        } else {
            StepState::Upgrade
        };
        self.renumber();
        Ok(())
    }

    /// Step indices grouped by batch, in rollout order; skipped steps are not listed. A batch
    /// is a run of steps with one batch number, whatever it counts from.
    pub fn batches(&self) -> Vec<Vec<usize>> {
        let mut batches: Vec<Vec<usize>> = Vec::new();
        let mut current = None;
        for (i, step) in self.steps.iter().enumerate() {
            let Some(batch) = step.batch else { continue };
            match batches.last_mut() {
                Some(group) if current == Some(batch) => group.push(i),
                _ => batches.push(vec![i]),
            }
            current = Some(batch);
        }
        batches
    }

    /// The steps that will upgrade their node.
    pub fn nodes_to_upgrade(&self) -> impl Iterator<Item = &PlanStep> {
        self.steps.iter().filter(|s| !s.is_skipped())
    }

    /// What the chosen options mean for these nodes, one line each (shown under the options).
    pub fn option_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let old: Vec<&str> = self
            .nodes_to_upgrade()
            .filter(|s| {
                s.from
                    .as_ref()
                    .is_some_and(UpgradeOptions::preserve_applies)
            })
            .map(|s| s.node.as_str())
            .collect();
        match (self.options.preserve, old.is_empty()) {
            (true, true) => notes.push(
                "preserve does nothing here: from Talos 1.8 on every upgrade keeps EPHEMERAL"
                    .to_string(),
            ),
            (false, false) => notes.push(format!(
                "without preserve, {} (below Talos 1.8) wipe EPHEMERAL, and control planes leave etcd while upgrading",
                old.join(", ")
            )),
            _ => {}
        }
        if self.options.stage {
            let unstaged: Vec<&str> = self
                .nodes_to_upgrade()
                .filter(|s| s.api == Some(UpgradeApi::Lifecycle))
                .map(|s| s.node.as_str())
                .collect();
            if !unstaged.is_empty() {
                notes.push(format!(
                    "stage applies only to MachineService.Upgrade; {} (Talos 1.13+) upgrade unstaged",
                    unstaged.join(", ")
                ));
            }
        }
        notes
    }

    fn find(&self, node: &str) -> Result<usize, PlanError> {
        self.position(node).ok_or_else(|| PlanError::UnknownNode {
            cluster: self.cluster.clone(),
            node: node.to_string(),
        })
    }

    /// Recompute batches and the forfeit flag after any edit.
    fn renumber(&mut self) {
        let max_parallel = self.options.max_parallel.max(1);
        let mut next = 1;
        let mut open_workers = 0;
        for step in &mut self.steps {
            step.forfeit_leadership =
                !step.is_skipped() && self.leader.as_deref() == Some(step.node.as_str());
            if step.is_skipped() {
                step.batch = None;
                continue;
            }
            let joins_open_batch =
                step.role == NodeRole::Worker && open_workers > 0 && open_workers < max_parallel;
            if joins_open_batch {
                open_workers += 1;
                step.batch = Some(next - 1);
            } else {
                step.batch = Some(next);
                next += 1;
                open_workers = usize::from(step.role == NodeRole::Worker);
            }
        }
    }
}

/// `default`, `powercycle` or `force`, as talosctl's `--reboot-mode` spells them.
fn reboot_mode_name<S: Serializer>(mode: &RebootMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match mode {
        RebootMode::Default => "default",
        RebootMode::Powercycle => "powercycle",
        RebootMode::Force => "force",
    })
}

fn reboot_mode_from_name<'de, D: Deserializer<'de>>(d: D) -> Result<RebootMode, D::Error> {
    let name = String::deserialize(d)?;
    match name.as_str() {
        "default" => Ok(RebootMode::Default),
        "powercycle" => Ok(RebootMode::Powercycle),
        "force" => Ok(RebootMode::Force),
        other => Err(serde::de::Error::custom(format!(
            "unknown reboot mode {other:?} (default, powercycle or force)"
        ))),
    }
}

/// Whether `node` must hand over etcd leadership before it reboots, by live status: it leads
/// now and another voting member exists. The plan's `forfeit_leadership` is the expectation
/// when planned; leadership can move meanwhile, so the runner asks again.
pub fn must_forfeit_leadership(status: &ClusterStatus, node: &str) -> bool {
    let voting = status.etcd.members.iter().filter(|m| !m.is_learner).count();
    let names = status
        .node(node)
        .map(|n| [n.name.as_str(), n.address.as_str()]);
    status.etcd.leader().is_some_and(|leader| {
        voting > 1
            && (leader.hostname == node
                || names.is_some_and(|names| names.contains(&leader.hostname.as_str())))
    })
}

/// Control planes first, then nodes of unknown role (one at a time, in case they are control
/// planes), then workers.
fn role_rank(role: NodeRole) -> usize {
    match role {
        NodeRole::Controlplane => 0,
        NodeRole::Unknown => 1,
        NodeRole::Worker => 2,
    }
}

fn step_for(status: &ClusterStatus, node: &NodeStatus, target: &TalosVersion) -> PlanStep {
    let from = node
        .talos_version
        .as_deref()
        .and_then(|v| Version::parse(v).ok());
    let state = if from.as_ref() == Some(target) {
        StepState::AlreadyOnTarget
    } else {
        StepState::Upgrade
    };
    let etcd_member = status
        .etcd
        .members
        .iter()
        .find(|m| m.hostname == node.name || m.hostname == node.address)
        .map(|m| m.id.clone());
    PlanStep {
        node: node.name.clone(),
        address: node.address.clone(),
        role: node.role,
        api: from.as_ref().map(UpgradeApi::for_version),
        from,
        etcd_member,
        forfeit_leadership: false,
        state,
        batch: None,
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
