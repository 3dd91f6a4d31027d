//! The one gate every mutating action passes: refused in read-only mode,
//! confirmed only when the operator types the cluster name (the node's, for an
//! action on one node) in full (Cancel is the default), and written to the
//! audit log whatever the outcome.
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::clock::utc_timestamp;
use crate::run_holder::local_identity;

/// An action that changes a cluster. Runners (upgrade, provision, terminate…)
/// only accept an [`ApprovedAction`], which only the dispatcher makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MutatingAction {
    /// Rolling Talos OS upgrade of a cluster to `target` ("v1.12.0").
    UpgradeTalos { cluster: String, target: String },
    /// Rolling Kubernetes upgrade of a cluster to `target` ("1.35.0").
    UpgradeKubernetes { cluster: String, target: String },
    /// Create `count` new VMs of `role` for a cluster through `provider`.
    Provision {
        cluster: String,
        provider: String,
        role: String,
        count: usize,
    },
    /// Terminate one VM a provision started (by its provider's id).
    TerminateVm {
        cluster: String,
        provider: String,
        vm: String,
    },
    /// An action on one node of a cluster: reboot, shutdown, cordon, drain…
    Node {
        cluster: String,
        node: String,
        operation: NodeOperation,
    },
    /// An etcd maintenance action; `target` names the node or member ("cp-2", "all members").
    Etcd {
        cluster: String,
        action: EtcdAction,
        target: String,
    },
    /// Create a whole new cluster: its VMs through `provider`, its configs, its bootstrap.
    CreateCluster {
        cluster: String,
        provider: String,
        controlplanes: usize,
        workers: usize,
        talos: String,
    },
    /// Delete a whole cluster: terminate its VMs, remove its contexts.
    DeleteCluster { cluster: String, vms: usize },
    /// Delete the Cluster API Machine (`namespace/machine` on the management cluster) a
    /// control-plane rollout of workload `cluster` is stuck on; the provider replaces it.
    CapiDeleteMachine {
        cluster: String,
        namespace: String,
        machine: String,
    },
    /// Scale a Cluster API workload cluster: `spec.replicas` of `object` ("TalosControlPlane
    /// default/w-cp") from `from` to `to`, on its management cluster.
    ScaleCapi {
        cluster: String,
        object: String,
        from: u32,
        to: u32,
    },
    /// Remove the address of a node that is no longer a member from talosconfig context
    /// `context` (its `nodes`, and its `endpoints` when listed there) in `file`.
    ForgetNode {
        cluster: String,
        context: String,
        address: String,
    },
    /// Patch the machine configuration of `nodes`, one after another, in `mode` (`auto`,
    /// `no-reboot`, `staged`, `try`).
    ConfigPatch {
        cluster: String,
        nodes: Vec<String>,
        mode: String,
    },
    /// Upgrade a cluster Cluster API owns the CAPI way: `product` ("Kubernetes", "Talos") to
    /// `target` by patching its objects in `owner` (`mgmt/namespace/name`).
    CapiUpgrade {
        cluster: String,
        owner: String,
        product: String,
        target: String,
    },
}

/// What a [`MutatingAction::Node`] does to its node. Each one's facts are said here once
/// ([`NodeOperation::facts`], its words and what it does): the command line's `node`
/// subcommands, the console's action menu, the plan, its guards and the steps of its run are
/// made from them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeOperation {
    Reboot,
    Shutdown,
    Cordon,
    Uncordon,
    Drain,
    /// Boot the previously installed Talos (the bootloader's other entry), as
    /// `talosctl rollback` does.
    Rollback,
    /// Take the node's etcd member out of the cluster, as `talosctl etcd leave` does: Talos
    /// removes the member, stops etcd and wipes its data; the node joins again when it boots.
    EtcdLeave,
    /// Restart one Talos service (`kubelet`).
    ServiceRestart(String),
}

/// When the console's action menu offers a node operation on a node (an answering member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuOffer {
    Always,
    /// When its Kubernetes node is schedulable.
    Schedulable,
    /// When its Kubernetes node is cordoned.
    Cordoned,
    /// When it has a Kubernetes node.
    KubeNode,
    /// When it runs an etcd member.
    EtcdMember,
    /// Once per service Talos restarts through its API.
    PerService,
}

/// What the action menu knows of the node it offers operations on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OfferedOn {
    /// Whether its Kubernetes node is cordoned (`None`: it has none, or none is known).
    pub cordoned: Option<bool>,
    /// Whether it runs an etcd member (the etcd member list names it).
    pub etcd_member: bool,
}

impl MenuOffer {
    /// Whether the menu offers it on the node `on` describes.
    pub fn offered(self, on: OfferedOn) -> bool {
        match self {
            MenuOffer::Always => true,
            MenuOffer::Schedulable => on.cordoned == Some(false),
            MenuOffer::Cordoned => on.cordoned == Some(true),
            MenuOffer::KubeNode => on.cordoned.is_some(),
            MenuOffer::EtcdMember => on.etcd_member,
            MenuOffer::PerService => false,
        }
    }
}

/// What a node operation is, besides its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeFacts {
    /// Its command line, of the [`NodeOperation::ON_NODE`] ones: `taloscope node VERB`.
    pub cli_verb: &'static str,
    /// The command line's help of it.
    pub about: &'static str,
    pub menu: MenuOffer,
    /// It acts on the Kubernetes node only, so needs a paired kube context.
    pub needs_kube: bool,
    /// It takes the node down: etcd must keep quorum without its member.
    pub takes_node_down: bool,
    /// It cordons the node and evicts its pods first, as their disruption budgets allow.
    pub drains: bool,
    /// Its run ends once the node is back on a new boot (its boot id read before), and then
    /// uncordons what it cordoned; what that wait needs is guarded.
    pub comes_back: bool,
    /// Its guards read the node's services.
    pub reads_services: bool,
    /// Talos answers it for os:admin only, not os:operator (machined.go's rules).
    pub admin_only: bool,
}

impl NodeOperation {
    /// The operations that name nothing but their node, in the order the action menu and
    /// `taloscope node` list them.
    pub const ON_NODE: [NodeOperation; 7] = [
        NodeOperation::Reboot,
        NodeOperation::Shutdown,
        NodeOperation::Cordon,
        NodeOperation::Uncordon,
        NodeOperation::Drain,
        NodeOperation::Rollback,
        NodeOperation::EtcdLeave,
    ];

    pub fn facts(&self) -> NodeFacts {
        let plain = NodeFacts {
            cli_verb: "",
            about: "",
            menu: MenuOffer::Always,
            needs_kube: false,
            takes_node_down: false,
            drains: false,
            comes_back: false,
            reads_services: false,
            admin_only: false,
        };
        match self {
            NodeOperation::Reboot => NodeFacts {
                cli_verb: "reboot",
                about: "Cordon and drain, reboot, and follow the node until it is back and Ready",
                takes_node_down: true,
                drains: true,
                comes_back: true,
                ..plain
            },
            NodeOperation::Shutdown => NodeFacts {
                cli_verb: "shutdown",
                about: "Cordon and drain, then shut the node down",
                takes_node_down: true,
                drains: true,
                ..plain
            },
            NodeOperation::Cordon => NodeFacts {
                cli_verb: "cordon",
                about: "Mark the Kubernetes node unschedulable",
                menu: MenuOffer::Schedulable,
                needs_kube: true,
                ..plain
            },
            NodeOperation::Uncordon => NodeFacts {
                cli_verb: "uncordon",
                about: "Mark the Kubernetes node schedulable again",
                menu: MenuOffer::Cordoned,
                needs_kube: true,
                ..plain
            },
            NodeOperation::Drain => NodeFacts {
                cli_verb: "drain",
                about: "Cordon, then evict every pod but DaemonSet and static ones, as disruption budgets allow",
                menu: MenuOffer::KubeNode,
                needs_kube: true,
                drains: true,
                ..plain
            },
            // machined.go: Rollback is os:admin's alone.
            NodeOperation::Rollback => NodeFacts {
                cli_verb: "rollback",
                about: "Cordon and drain, boot the node's previously installed Talos (Talos's Rollback), and follow the node until it is back and Ready.",
                takes_node_down: true,
                drains: true,
                comes_back: true,
                admin_only: true,
                ..plain
            },
            // machined.go: EtcdLeaveCluster is os:admin's alone.
            NodeOperation::EtcdLeave => NodeFacts {
                cli_verb: "etcd-leave",
                about: "Take the node's etcd member out of the cluster (Talos's EtcdLeaveCluster): its etcd stops and its data is wiped; the node joins etcd again when it next boots",
                menu: MenuOffer::EtcdMember,
                admin_only: true,
                ..plain
            },
            // `taloscope service restart SERVICE`: it names a service besides its node.
            NodeOperation::ServiceRestart(_) => NodeFacts {
                menu: MenuOffer::PerService,
                reads_services: true,
                ..plain
            },
        }
    }

    /// The operation in the operator's words, without its node ("restart service kubelet").
    pub fn verb(&self) -> String {
        match self {
            NodeOperation::Reboot => "reboot".into(),
            NodeOperation::Shutdown => "shut down".into(),
            NodeOperation::Cordon => "cordon".into(),
            NodeOperation::Uncordon => "uncordon".into(),
            NodeOperation::Drain => "drain".into(),
            NodeOperation::Rollback => "roll back".into(),
            NodeOperation::EtcdLeave => "etcd leave".into(),
            NodeOperation::ServiceRestart(service) => format!("restart service {service} on"),
        }
    }

    /// What it does to `node`, in the order its run does it (the plan says it).
    pub fn does(&self, node: &str) -> String {
        match self {
            NodeOperation::Reboot => format!(
                "cordon and drain {node}, reboot it, follow it until it is back (booted again, \
                 running, ready, Kubernetes Ready, etcd healthy), uncordon"
            ),
            NodeOperation::Shutdown => {
                format!("cordon and drain {node}, shut it down, wait until it stops answering")
            }
            NodeOperation::Cordon => format!("mark {node} unschedulable"),
            NodeOperation::Uncordon => format!("mark {node} schedulable again"),
            NodeOperation::Drain => {
                format!("cordon {node}, evict its pods as their disruption budgets allow")
            }
            NodeOperation::Rollback => format!(
                "cordon and drain {node}, boot its previously installed Talos (Talos refuses a \
                 node never upgraded, which stays cordoned), follow it until it is back (booted \
                 again, running, ready, Kubernetes Ready, etcd healthy), uncordon"
            ),
            NodeOperation::EtcdLeave => format!(
                "take {node}'s etcd member out of the cluster (Talos removes it, stops etcd on \
                 {node} and wipes its data), wait until the member list no longer has it and \
                 etcd on {node} has stopped; {node} runs no etcd until it next boots, when it \
                 joins again as a new member"
            ),
            NodeOperation::ServiceRestart(service) => {
                format!("restart {service} on {node}, wait until it runs healthy again")
            }
        }
    }
}

/// The etcd maintenance actions that go through the dispatcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EtcdAction {
    /// Clear the cluster's alarms (defragmenting the members over quota first).
    Disarm,
    Defragment,
    /// Copy a member's database to a local file (it holds every secret of the cluster).
    Snapshot,
    ForfeitLeadership,
    RemoveMember,
}

impl EtcdAction {
    /// The action in the operator's words.
    pub fn as_str(self) -> &'static str {
        match self {
            EtcdAction::Disarm => "disarm etcd alarms",
            EtcdAction::Defragment => "defragment etcd",
            EtcdAction::Snapshot => "snapshot etcd",
            EtcdAction::ForfeitLeadership => "forfeit etcd leadership",
            EtcdAction::RemoveMember => "remove etcd member",
        }
    }
}

impl MutatingAction {
    /// The cluster the action changes; the name the operator must type.
    pub fn cluster(&self) -> &str {
        match self {
            MutatingAction::UpgradeTalos { cluster, .. }
            | MutatingAction::UpgradeKubernetes { cluster, .. }
            | MutatingAction::Provision { cluster, .. }
            | MutatingAction::TerminateVm { cluster, .. }
            | MutatingAction::Etcd { cluster, .. }
            | MutatingAction::Node { cluster, .. }
            | MutatingAction::CreateCluster { cluster, .. }
            | MutatingAction::DeleteCluster { cluster, .. }
            | MutatingAction::CapiDeleteMachine { cluster, .. }
            | MutatingAction::ScaleCapi { cluster, .. }
            | MutatingAction::CapiUpgrade { cluster, .. }
            | MutatingAction::ForgetNode { cluster, .. }
            | MutatingAction::ConfigPatch { cluster, .. } => cluster,
        }
    }

    /// What the operator types to confirm: the node for an action on one node, else the
    /// cluster.
    pub fn confirm_name(&self) -> &str {
        match self {
            MutatingAction::Node { node, .. } => node,
            MutatingAction::ForgetNode { address, .. } => address,
            other => other.cluster(),
        }
    }

    /// What [`MutatingAction::confirm_name`] names: "node" or "cluster".
    pub fn confirm_noun(&self) -> &'static str {
        match self {
            MutatingAction::Node { .. } | MutatingAction::ForgetNode { .. } => "node",
            _ => "cluster",
        }
    }

    /// What the action does, in the operator's words.
    pub fn describe(&self) -> String {
        match self {
            MutatingAction::UpgradeTalos { target, .. } => format!("upgrade Talos to {target}"),
            MutatingAction::UpgradeKubernetes { target, .. } => {
                format!("upgrade Kubernetes to {target}")
            }
            MutatingAction::Provision {
                provider,
                role,
                count,
                ..
            } => format!("provision {count} {role} VM(s) through {provider}"),
            MutatingAction::TerminateVm { provider, vm, .. } => {
                format!("terminate VM {vm} on {provider}")
            }
            MutatingAction::Node {
                node, operation, ..
            } => format!("{} node {node}", operation.verb()),
            MutatingAction::Etcd { action, target, .. } => {
                format!("{} on {target}", action.as_str())
            }
            MutatingAction::CreateCluster {
                provider,
                controlplanes,
                workers,
                talos,
                ..
            } => format!(
                "create cluster ({controlplanes} control plane(s), {workers} worker(s), Talos {talos}) through {provider}"
            ),
            MutatingAction::DeleteCluster { vms, .. } => {
                format!("delete cluster: terminate {vms} VM(s), remove its contexts")
            }
            MutatingAction::CapiDeleteMachine {
                namespace, machine, ..
            } => format!("delete stuck Machine {namespace}/{machine} (Cluster API replaces it)"),
            MutatingAction::ScaleCapi {
                object, from, to, ..
            } => format!("scale {object} from {from} to {to} replicas (Cluster API)"),
            MutatingAction::CapiUpgrade {
                owner,
                product,
                target,
                ..
            } => format!("upgrade {product} to {target} the Cluster API way through {owner}"),
            MutatingAction::ForgetNode {
                context, address, ..
            } => format!("forget node {address}: remove it from talosconfig context {context}"),
            MutatingAction::ConfigPatch { nodes, mode, .. } => format!(
                "patch the machine configuration of {} node(s) ({}), {mode}",
                nodes.len(),
                nodes.join(", ")
            ),
        }
    }
}

/// A mutating action waiting for the operator to type the cluster name. Only
/// the dispatcher creates one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingConfirmation {
    action: MutatingAction,
}

impl PendingConfirmation {
    pub fn action(&self) -> &MutatingAction {
        &self.action
    }
}

/// A mutating action the operator confirmed; the only thing runners accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovedAction {
    action: MutatingAction,
}

impl ApprovedAction {
    pub fn action(&self) -> &MutatingAction {
        &self.action
    }

    /// `Ok` when this is the approval of `planned`; runners check it before they start.
    pub fn check_for(&self, planned: &MutatingAction) -> Result<(), String> {
        if &self.action == planned {
            return Ok(());
        }
        Err(format!(
            "the approval ({}) is not for this plan ({})",
            self.action.describe(),
            planned.describe()
        ))
    }
}

/// How the operator answered the confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Typed(String),
    Cancel,
}

/// The first step: refused, or ask for confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    Refused(String),
    Confirm(PendingConfirmation),
}

/// The second step: go ahead, or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Proceed(ApprovedAction),
    Cancelled(String),
}

#[derive(Debug, thiserror::Error)]
#[error("audit log {}: cannot write: {source}", path.display())]
pub struct AuditError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// The append-only audit log: one line per decision about a mutating action.
#[derive(Debug, Clone)]
pub struct AuditLog {
    path: PathBuf,
    identity: String,
    clock: fn() -> SystemTime,
}

impl AuditLog {
    /// The audit log at `path`, signed with this process's `user@host`.
    pub fn new(path: PathBuf) -> AuditLog {
        AuditLog::with_identity(path, local_identity(), SystemTime::now)
    }

    /// For tests: a fixed identity and clock.
    pub fn with_identity(path: PathBuf, identity: String, clock: fn() -> SystemTime) -> AuditLog {
        AuditLog {
            path,
            identity,
            clock,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `timestamp user@host cluster=".." action=".." outcome=".."`.
    /// Values are quoted and escaped so a name cannot forge a second line.
    pub fn record(&self, action: &MutatingAction, outcome: &str) -> Result<(), AuditError> {
        self.record_described(action.cluster(), &action.describe(), outcome)
    }

    /// [`AuditLog::record`] of an action known by its cluster and words only (a journal's).
    pub fn record_described(
        &self,
        cluster: &str,
        action: &str,
        outcome: &str,
    ) -> Result<(), AuditError> {
        let line = format!(
            "{} {} cluster={:?} action={:?} outcome={:?}\n",
            utc_timestamp((self.clock)()),
            self.identity,
            cluster,
            action,
            outcome
        );
        let write = || -> std::io::Result<()> {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            // Owner only, like the journals: it names clusters, nodes and people.
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&self.path)?;
            file.write_all(line.as_bytes())
        };
        write().map_err(|source| AuditError {
            path: self.path.clone(),
            source,
        })
    }
}

/// Read-only refusal, typed confirmation and the audit log, in one place.
#[derive(Debug, Clone)]
pub struct Dispatcher {
    readonly: bool,
    audit: AuditLog,
}

impl Dispatcher {
    pub fn new(readonly: bool, audit: AuditLog) -> Dispatcher {
        Dispatcher { readonly, audit }
    }

    /// First step for every mutating action.
    pub fn request(&self, action: MutatingAction) -> Gate {
        if self.readonly {
            let note = match self.audit.record(&action, "refused: read-only") {
                Ok(()) => String::new(),
                Err(e) => format!(" ({e})"),
            };
            return Gate::Refused(format!(
                "read-only mode: {} in {} refused{note}",
                action.describe(),
                action.cluster()
            ));
        }
        Gate::Confirm(PendingConfirmation { action })
    }

    /// Second step: proceeds only when the typed text is the cluster name (the
    /// node's, for a node action) in full. An action that cannot be audited does not run.
    pub fn answer(&self, pending: PendingConfirmation, answer: Answer) -> Verdict {
        let action = pending.action;
        let (outcome, proceed) = match &answer {
            Answer::Typed(text) if text == action.confirm_name() => ("confirmed", true),
            Answer::Typed(_) => ("cancelled: typed name did not match", false),
            Answer::Cancel => ("cancelled", false),
        };
        let what = format!("{} in {}", action.describe(), action.cluster());
        match self.audit.record(&action, outcome) {
            Err(e) => Verdict::Cancelled(format!("{what} not run: {e}")),
            Ok(()) if proceed => Verdict::Proceed(ApprovedAction { action }),
            Ok(()) => Verdict::Cancelled(format!("{what} {outcome}")),
        }
    }

    /// Records that a guard refused `action` before it was confirmed (the console refuses
    /// up front what the command line refuses after `--confirm`); the message says why.
    pub fn refused(&self, action: &MutatingAction, why: &str) -> String {
        let what = format!("{} in {}", action.describe(), action.cluster());
        match self.audit.record(action, &format!("refused: {why}")) {
            Ok(()) => format!("refused: {what}: {why}"),
            Err(e) => format!("refused: {what}: {why} ({e})"),
        }
    }

    /// Records how an approved action ended (runners call this when done).
    pub fn finished(
        &self,
        approved: &ApprovedAction,
        result: Result<(), String>,
    ) -> Result<(), AuditError> {
        let outcome = match result {
            Ok(()) => "succeeded".to_string(),
            Err(e) if e.starts_with("cancelled") => e,
            Err(e) => format!("failed: {e}"),
        };
        self.audit.record(&approved.action, &outcome)
    }

    /// Records how far an approved action's run got: `started`, then `step N of M: …`.
    pub fn progressed(&self, approved: &ApprovedAction, outcome: &str) -> Result<(), AuditError> {
        self.audit.record(&approved.action, outcome)
    }

    /// Records that the operator stopped an approved action's run between two of its steps,
    /// its journal kept for the same command to resume: `left` says what it leaves.
    pub fn stopped(&self, action: &MutatingAction, left: &str) -> Result<(), AuditError> {
        self.audit.record(action, &format!("cancelled: {left}"))
    }

    /// Records that an action a run now gone had started never ended: `action` as that run's
    /// journal describes it.
    pub fn interrupted(&self, cluster: &str, action: &str) -> Result<(), AuditError> {
        self.audit.record_described(cluster, action, "interrupted")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn fixed_clock() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_796_052_057) // 2026-11-30T15:20:57Z
    }

    fn upgrade() -> MutatingAction {
        MutatingAction::UpgradeTalos {
            cluster: "prod-eu".into(),
            target: "v1.12.0".into(),
        }
    }

    fn dispatcher(dir: &Path, readonly: bool) -> Dispatcher {
        let audit = AuditLog::with_identity(
            dir.join("state/audit.log"),
            "alice@ops1".into(),
            fixed_clock,
        );
        Dispatcher::new(readonly, audit)
    }

    fn audit_lines(dir: &Path) -> Vec<String> {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(dir.join("state/audit.log")) {
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "audit log mode");
        }
        std::fs::read_to_string(dir.join("state/audit.log"))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    #[test]
    fn readonly_refuses_and_audits() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(dir.path(), true);
        let Gate::Refused(msg) = d.request(upgrade()) else {
            panic!("read-only mode let a mutating action through");
        };
        assert!(
            msg.contains("read-only") && msg.contains("prod-eu"),
            "{msg}"
        );
        assert_eq!(
            audit_lines(dir.path()),
            vec![
                "2026-11-30T15:20:57Z alice@ops1 cluster=\"prod-eu\" action=\"upgrade Talos to v1.12.0\" outcome=\"refused: read-only\""
            ]
        );
    }

    #[test]
    fn exact_cluster_name_confirms() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(dir.path(), false);
        let Gate::Confirm(pending) = d.request(upgrade()) else {
            panic!("expected a confirmation");
        };
        assert!(
            audit_lines(dir.path()).is_empty(),
            "asking is not an outcome"
        );
        let verdict = d.answer(pending, Answer::Typed("prod-eu".into()));
        let Verdict::Proceed(approved) = verdict else {
            panic!("exact name did not confirm");
        };
        assert_eq!(approved.action(), &upgrade());
        d.finished(&approved, Err("node unreachable".into()))
            .unwrap();
        let lines = audit_lines(dir.path());
        assert_eq!(lines.len(), 2);
        assert!(lines[0].ends_with("outcome=\"confirmed\""), "{}", lines[0]);
        assert!(
            lines[1].ends_with("outcome=\"failed: node unreachable\""),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn mismatch_or_cancel_does_not_proceed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(dir.path(), false);
        for typed in ["prod", "PROD-EU", "prod-eu ", ""] {
            let Gate::Confirm(p) = d.request(upgrade()) else {
                panic!()
            };
            let v = d.answer(p, Answer::Typed(typed.into()));
            assert!(matches!(v, Verdict::Cancelled(_)), "{typed:?} confirmed");
        }
        let Gate::Confirm(p) = d.request(upgrade()) else {
            panic!()
        };
        assert!(matches!(d.answer(p, Answer::Cancel), Verdict::Cancelled(_)));
        let lines = audit_lines(dir.path());
        assert_eq!(lines.len(), 5);
        assert!(
            lines[..4]
                .iter()
                .all(|l| l.ends_with("outcome=\"cancelled: typed name did not match\""))
        );
        assert!(lines[4].ends_with("outcome=\"cancelled\""));
    }

    #[test]
    fn unwritable_audit_log_blocks_the_action() {
        let dir = tempfile::tempdir().unwrap();
        // The log's parent is a file, so the log cannot be created.
        std::fs::write(dir.path().join("state"), "not a dir").unwrap();
        let d = dispatcher(dir.path(), false);
        let Gate::Confirm(p) = d.request(upgrade()) else {
            panic!()
        };
        let Verdict::Cancelled(msg) = d.answer(p, Answer::Typed("prod-eu".into())) else {
            panic!("an unaudited action proceeded");
        };
        assert!(
            msg.contains("audit log") && msg.contains("audit.log"),
            "{msg}"
        );
    }

    #[test]
    fn a_node_action_is_confirmed_by_the_node_name() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(dir.path(), false);
        let reboot = || MutatingAction::Node {
            cluster: "prod-eu".into(),
            node: "cp-2".into(),
            operation: NodeOperation::Reboot,
        };
        let Gate::Confirm(p) = d.request(reboot()) else {
            panic!()
        };
        assert!(matches!(
            d.answer(p, Answer::Typed("prod-eu".into())),
            Verdict::Cancelled(_)
        ));
        let Gate::Confirm(p) = d.request(reboot()) else {
            panic!()
        };
        assert!(matches!(
            d.answer(p, Answer::Typed("cp-2".into())),
            Verdict::Proceed(_)
        ));
        let lines = audit_lines(dir.path());
        assert!(
            lines[1]
                .ends_with("cluster=\"prod-eu\" action=\"reboot node cp-2\" outcome=\"confirmed\""),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn names_cannot_forge_audit_lines() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(dir.path(), true);
        let evil = MutatingAction::UpgradeTalos {
            cluster: "x\n2026 root@h cluster=\"y\"".into(),
            target: "v1.12.0".into(),
        };
        let _ = d.request(evil);
        assert_eq!(audit_lines(dir.path()).len(), 1);
    }
}
