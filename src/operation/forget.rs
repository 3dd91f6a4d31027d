//! Forgetting a node that is no longer a member: its address taken out of the talosconfig
//! context's `nodes`, and out of its `endpoints` when listed there (the two lists of a context,
//! siderolabs/talos pkg/machinery/client/config/config.go `Context`, which `talosctl config
//! node` and `talosctl config endpoint` rewrite whole, cmd/talosctl/cmd/talos/config.go). Here
//! the file is edited as a splice of its own text (comments, order, line endings stay), under
//! its lock, a backup first. It edits a local file only: no Talos role is needed.
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::cluster_config::operator_file::{self, OperatorFileError};
use crate::cluster_config::yaml_splice::{self, SpliceError};
use crate::discovery::TalosContext;
use crate::fleet::ClusterStatus;
use crate::guards::{Guard, GuardId};
use crate::upgrade::observe::ClusterObserver;

/// The most the edit may take (a lock, a read, a backup and a write of a small file).
const EDIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a node cannot be forgotten; names the node, the context or the file.
#[derive(Debug, thiserror::Error)]
pub enum ForgetError {
    #[error(
        "{address}: talosconfig context {context} ({}) names it in neither its nodes nor its endpoints",
        file.display()
    )]
    NotInContext {
        address: String,
        context: String,
        file: PathBuf,
    },
    #[error("cluster {cluster} has no talosconfig context to forget a node from")]
    NoContext { cluster: String },
    #[error("{}: cannot edit context {context}: {source}", file.display())]
    Edit {
        file: PathBuf,
        context: String,
        source: SpliceError,
    },
    #[error("{}: cannot read it: {reason}", file.display())]
    Read { file: PathBuf, reason: String },
    #[error(transparent)]
    File(#[from] OperatorFileError),
}

/// What forgetting one node changes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ForgetPlan {
    pub cluster: String,
    /// The talosconfig context the address is taken out of.
    pub context: String,
    /// The talosconfig file that defines the context.
    pub file: PathBuf,
    /// The node's name as status lists it (its address when it has none).
    pub node: String,
    pub address: String,
    /// Whether the context's `nodes` lists the address.
    pub in_nodes: bool,
    /// The context's `endpoints` entry of the address (`127.0.0.5` or `127.0.0.5:50000`).
    pub endpoint: Option<String>,
    /// The context's nodes and endpoints left once the address is gone.
    pub nodes_left: usize,
    pub endpoints_left: usize,
    /// How many backups of the file are kept (taloscope's config `kept_backups`).
    #[serde(skip)]
    pub kept_backups: usize,
}

impl ForgetPlan {
    /// The forget of `node` (its name or address, as status lists it) from the cluster's
    /// talosconfig context.
    pub fn new(
        cluster: &str,
        ctx: Option<&TalosContext>,
        status: &ClusterStatus,
        node: &str,
        kept_backups: usize,
    ) -> Result<ForgetPlan, ForgetError> {
        let ctx = ctx.ok_or_else(|| ForgetError::NoContext {
            cluster: cluster.to_string(),
        })?;
        let known = status.node(node);
        let address = known.map_or(node, |n| n.address.as_str()).to_string();
        let in_nodes = ctx.nodes.contains(&address);
        let endpoint = ctx
            .endpoints
            .iter()
            .find(|e| endpoint_host(e) == address)
            .cloned();
        if !in_nodes && endpoint.is_none() {
            return Err(ForgetError::NotInContext {
                address,
                context: ctx.name.clone(),
                file: ctx.file.clone(),
            });
        }
        Ok(ForgetPlan {
            cluster: cluster.to_string(),
            context: ctx.name.clone(),
            file: ctx.file.clone(),
            node: known.map_or_else(|| address.clone(), |n| n.name.clone()),
            nodes_left: ctx.nodes.iter().filter(|n| **n != address).count(),
            endpoints_left: ctx
                .endpoints
                .iter()
                .filter(|e| endpoint_host(e) != address)
                .count(),
            in_nodes,
            endpoint,
            address,
            kept_backups,
        })
    }

    pub fn action(&self) -> MutatingAction {
        MutatingAction::ForgetNode {
            cluster: self.cluster.clone(),
            context: self.context.clone(),
            address: self.address.clone(),
        }
    }

    /// The lists the address is taken out of: "nodes", "nodes and endpoints".
    pub fn lists(&self) -> &'static str {
        match (self.in_nodes, self.endpoint.is_some()) {
            (true, true) => "nodes and endpoints",
            (false, true) => "endpoints",
            _ => "nodes",
        }
    }

    /// The backup the run makes first, as named before it exists.
    pub fn backup_named(&self) -> String {
        format!("{}.taloscope-backup-<UTC time>", self.file.display())
    }

    /// The one step, in the operator's words.
    pub fn step(&self) -> String {
        format!(
            "remove {} from the {} of talosconfig context {} in {} (backup first)",
            self.address,
            self.lists(),
            self.context,
            self.file.display()
        )
    }
}

/// The host of an endpoint (`host`, `host:port`, `[v6]:port`).
fn endpoint_host(endpoint: &str) -> &str {
    let trimmed = endpoint.trim();
    if let Some(rest) = trimmed.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match trimmed.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.parse::<u16>().is_ok() => host,
        _ => trimmed,
    }
}

/// The forget's guards, from `status` read now: the node is still not a member, the file can be
/// written, the context keeps a node and an endpoint; no Talos role is needed.
pub fn forget_guards(plan: &ForgetPlan, status: &ClusterStatus) -> Vec<Guard> {
    vec![
        member_guard(plan, status),
        file_guard(plan),
        left_guard(plan),
        Guard::pass(
            GuardId::ClientRole,
            "it only edits the local talosconfig file: no Talos role is needed",
        ),
    ]
}

fn member_guard(plan: &ForgetPlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::NotAMember;
    if let Some(error) = &status.error {
        return Guard::fail(id, format!("no status of {}: {error}", plan.cluster));
    }
    let Some(node) = status.node(&plan.address) else {
        return Guard::fail(
            id,
            format!("{}'s status does not list {}", plan.cluster, plan.address),
        );
    };
    if node.not_a_member {
        Guard::pass(
            id,
            format!(
                "{} does not answer, and etcd and Kubernetes answered without it",
                plan.address
            ),
        )
    } else if node.error.is_none() {
        Guard::fail(
            id,
            format!(
                "{} answers the Talos API: it is still part of {}",
                plan.address, plan.cluster
            ),
        )
    } else {
        Guard::fail(
            id,
            format!(
                "{} does not answer, but etcd or Kubernetes still name it (or did not answer): it may be down, not gone",
                plan.address
            ),
        )
    }
}

/// What the edit would refuse, checked without writing: the file's lock, mode, directory and
/// room, and the edit itself made on the text as it is now.
fn file_guard(plan: &ForgetPlan) -> Guard {
    let id = GuardId::ContextFiles;
    if let Err(e) = operator_file::check_can_write(&plan.file) {
        return Guard::fail(id, e.to_string());
    }
    match edited_text(plan) {
        Ok(_) => Guard::pass(
            id,
            format!(
                "{} can be written; {} is made first",
                plan.file.display(),
                plan.backup_named()
            ),
        ),
        Err(e) => Guard::fail(id, e.to_string()),
    }
}

fn left_guard(plan: &ForgetPlan) -> Guard {
    let id = GuardId::OtherNodesLeft;
    if plan.in_nodes && plan.nodes_left == 0 {
        Guard::fail(
            id,
            format!("{} is context {}'s last node", plan.address, plan.context),
        )
    } else if plan.endpoint.is_some() && plan.endpoints_left == 0 {
        Guard::fail(
            id,
            format!(
                "{} is context {}'s last endpoint",
                plan.address, plan.context
            ),
        )
    } else {
        Guard::pass(
            id,
            format!(
                "context {} keeps {} node(s) and {} endpoint(s)",
                plan.context, plan.nodes_left, plan.endpoints_left
            ),
        )
    }
}

/// `text` (a talosconfig) without `address` in context `context`'s `nodes` and without
/// `endpoint` in its `endpoints`: exactly those lines cut, every other byte kept. `None` when
/// neither list holds them.
pub fn forget_in_text(
    text: &str,
    context: &str,
    address: &str,
    endpoint: Option<&str>,
) -> Result<Option<String>, SpliceError> {
    let nodes =
        yaml_splice::remove_nested_list_scalar(text, ("contexts", context, "nodes"), address)?;
    let after = nodes.as_deref().unwrap_or(text);
    let endpoints = match endpoint {
        Some(e) => {
            yaml_splice::remove_nested_list_scalar(after, ("contexts", context, "endpoints"), e)?
        }
        None => None,
    };
    Ok(endpoints.or(nodes))
}

/// The file the plan's edit writes (the end of its symlinks) and its text without the address.
fn edited_text(plan: &ForgetPlan) -> Result<(PathBuf, String), ForgetError> {
    let target = operator_file::write_target(&plan.file);
    let text = crate::bounded::read_to_string(&target, crate::bounded::CONFIG_FILE_LIMIT).map_err(
        |e| ForgetError::Read {
            file: target.clone(),
            reason: e.to_string(),
        },
    )?;
    let edited = forget_in_text(
        &text,
        &plan.context,
        &plan.address,
        plan.endpoint.as_deref(),
    )
    .map_err(|source| ForgetError::Edit {
        file: plan.file.clone(),
        context: plan.context.clone(),
        source,
    })?
    .ok_or_else(|| ForgetError::NotInContext {
        address: plan.address.clone(),
        context: plan.context.clone(),
        file: plan.file.clone(),
    })?;
    Ok((target, edited))
}

/// Forgets the plan's address in its file: the lock taken, the text read, the backup written
/// (its path handed to `said`), the edit written with the file's mode kept. The backup.
pub fn forget_in_file(
    plan: &ForgetPlan,
    now: SystemTime,
    said: impl Fn(String),
) -> Result<PathBuf, ForgetError> {
    let _lock = operator_file::lock(&plan.file)?;
    let (target, edited) = edited_text(plan)?;
    let backup = operator_file::backup(&plan.file, now, plan.kept_backups)?
        .unwrap_or_else(|| plan.file.clone());
    said(format!(
        "backed up {} to {}",
        plan.file.display(),
        backup.display()
    ));
    operator_file::check_writable(&target)?;
    operator_file::write_keeping_mode(&target, &edited)?;
    Ok(backup)
}

/// A planned forget and the cluster it re-reads before its step.
pub struct NodeForget {
    plan: ForgetPlan,
    observer: ClusterObserver,
}

impl NodeForget {
    pub fn new(plan: ForgetPlan, observer: ClusterObserver) -> NodeForget {
        NodeForget { plan, observer }
    }
}

impl Operation for NodeForget {
    fn kind(&self) -> OperationKind {
        OperationKind::ForgetNode
    }

    fn action(&self) -> MutatingAction {
        self.plan.action()
    }

    fn node(&self) -> Option<&str> {
        Some(&self.plan.address)
    }

    fn steps(&self) -> Vec<Step> {
        vec![Step {
            what: self.plan.step(),
            timeout: EDIT_TIMEOUT,
        }]
    }

    async fn guards(&self, _index: usize) -> Vec<Guard> {
        let status = self.observer.status().await;
        forget_guards(&self.plan, &status)
    }

    async fn run_step(
        &mut self,
        _index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        let backup = forget_in_file(&self.plan, SystemTime::now(), |line| step.say(line))
            .map_err(|e| e.to_string())?;
        Ok(format!(
            "{} removed from the {} of context {} (backup {})",
            self.plan.address,
            self.plan.lists(),
            self.plan.context,
            backup.display()
        ))
    }
}

#[cfg(test)]
#[path = "forget_tests.rs"]
mod tests;
