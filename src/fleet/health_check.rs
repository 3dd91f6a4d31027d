//! The cluster health checklist as it fills in: which path the checks take and why
//! (`route`: a node's server-side stream, or the client-side checks), the one loop that follows its `HealthCheck` stream (`follow_health_check`), and
//! the list those checks fill in, addresses named after the cluster's model. The command and
//! the console take the same route and fold the same stream.
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;

use super::status::{ClusterStatus, NodeRole};
use crate::talos::{CheckState, HealthProgress, TalosClient};

/// How long the checks may take to pass by default (`taloscope health --timeout`).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// The checks of the server-side `ClusterService/HealthCheck`, in the order it runs them:
/// upstream's `DefaultClusterChecks` (siderolabs/talos v1.11 pkg/cluster/check/default.go:
/// `PreBootSequenceChecks`, `K8sComponentsReadinessChecks`, then the node readiness checks),
/// which `check.Wait` (pkg/cluster/check/check.go) runs one after the other, returning the
/// first check's error that does not pass in time: the checks after it never run.
pub const SERVER_CHECKS: [&str; 16] = [
    "etcd to be healthy",
    "etcd members to be consistent across nodes",
    "etcd members to be control plane nodes",
    "apid to be ready",
    "all nodes memory sizes",
    "all nodes disk sizes",
    "no diagnostics",
    "kubelet to be healthy",
    "all nodes to finish boot sequence",
    "all k8s nodes to report",
    "all control plane static pods to be running",
    "all control plane components to be ready",
    "all k8s nodes to report ready",
    "kube-proxy to report ready",
    "coredns to report ready",
    "all k8s nodes to report schedulable",
];

/// The roles that may call `ClusterService/HealthCheck` (siderolabs/talos
/// internal/app/machined/pkg/system/services/machined.go: admin, operator, reader).
const HEALTH_CHECK_ROLES: [&str; 3] = ["os:admin", "os:operator", "os:reader"];

/// Where the checks run: the server-side `ClusterService/HealthCheck` of one control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRoute {
    /// The node's address (the `node` the call is routed to).
    pub address: String,
    pub name: String,
    /// The client's role that may call it (why this path).
    pub role: String,
}

impl CheckRoute {
    /// Which path and why, in a few words.
    pub fn why(&self) -> String {
        format!(
            "server-side ClusterService/HealthCheck, which {} may call",
            self.role
        )
    }
}

/// Which path the checks take, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckPath {
    /// The server-side stream of one control plane, which the role may call.
    Server(CheckRoute),
    /// The checks the status model answers ([`super::client_checks`]), evaluated here: the
    /// role may not call HealthCheck, or the operator asked for them after the server's
    /// checks stopped at a failing one.
    ClientSide {
        /// Why this path, worded: `role os:etcd:backup may not call HealthCheck`.
        reason: String,
    },
}

impl CheckPath {
    /// Which path and why, in a few words.
    pub fn why(&self) -> String {
        match self {
            CheckPath::Server(route) => route.why(),
            CheckPath::ClientSide { reason } => {
                format!("client-side checks (talosctl health --server=false): {reason}")
            }
        }
    }
}

/// The path of the cluster's checks: the server-side stream of the first control plane that
/// answers when the client's role (`status.role`, as the certificate carries it) may call
/// HealthCheck; otherwise (`os:etcd:backup`) the client-side checks, as talosctl's
/// `--server=false`.
pub fn route(status: &ClusterStatus) -> Result<CheckPath, String> {
    let roles: Vec<&str> = status
        .role
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .collect();
    let allowed = roles.iter().find(|r| HEALTH_CHECK_ROLES.contains(r));
    let Some(role) = allowed else {
        let held = if roles.is_empty() {
            "no known role".to_string()
        } else {
            format!("role {}", roles.join(", "))
        };
        let reason = format!("{held} may not call HealthCheck");
        return Ok(CheckPath::ClientSide { reason });
    };
    let node = status
        .nodes
        .iter()
        .find(|n| n.role == NodeRole::Controlplane && n.error.is_none())
        .ok_or_else(|| format!("cluster {}: no control plane node answers", status.name))?;
    Ok(CheckPath::Server(CheckRoute {
        address: node.address.clone(),
        name: node.name.clone(),
        role: role.to_string(),
    }))
}

/// Runs the checks on `node` for at most `wait` and hands each progress message to `each`
/// as it comes; returns how the stream ended (`None`: cleanly). `each` may stop the run
/// with its own error. The node ends the stream at its deadline; a bound past it guards
/// against one that does not.
pub async fn follow_health_check<E>(
    talos: &TalosClient,
    node: &str,
    wait: Duration,
    mut each: impl FnMut(HealthProgress) -> Result<(), E>,
) -> Result<Option<String>, E> {
    let mut stream = match talos.health_check(node, wait).await {
        Ok(stream) => stream,
        Err(e) => return Ok(Some(e.to_string())),
    };
    let bound = wait + talos.options().call_timeout;
    let read = async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(progress) => each(progress)?,
                Err(e) => return Ok(Some(e.to_string())),
            }
        }
        Ok(None)
    };
    match tokio::time::timeout(bound, read).await {
        Ok(ended) => ended,
        Err(_) => Ok(Some(format!("no answer from {node} within {bound:?}"))),
    }
}

/// Where a check of the list stands (`waiting`, `ok`, `fail` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckMark {
    Waiting,
    Ok,
    Fail,
}

/// One check of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HealthCheckRow {
    pub name: String,
    pub state: CheckMark,
    /// Why it fails, addresses named (`127.10.0.2 (cp-2)`); empty unless failing.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// The checklist of one cluster.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HealthChecklist {
    /// The node addresses the checks ask, named.
    pub nodes: Vec<String>,
    pub checks: Vec<HealthCheckRow>,
    /// Every check passed and the stream ended.
    pub healthy: bool,
    /// How the stream ended, if not with every check passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Address → node name, from the cluster's model.
    #[serde(skip)]
    names: Vec<(String, String)>,
}

impl HealthChecklist {
    /// An empty list whose reasons will name the nodes of `status`.
    pub fn new(status: &ClusterStatus) -> HealthChecklist {
        let names = status
            .nodes
            .iter()
            .filter(|n| !n.address.is_empty() && n.name != n.address)
            .map(|n| (n.address.clone(), n.name.clone()))
            .collect();
        HealthChecklist {
            names,
            ..HealthChecklist::default()
        }
    }

    /// Learns the names `status` knows that the list did not (a node named only once the
    /// model caught up) and names their addresses in what the list already shows.
    pub fn learn_names(&mut self, status: &ClusterStatus) {
        let known: Vec<(String, String)> = status
            .nodes
            .iter()
            .filter(|n| !n.address.is_empty() && n.name != n.address)
            .filter(|n| !self.names.iter().any(|(a, _)| *a == n.address))
            .map(|n| (n.address.clone(), n.name.clone()))
            .collect();
        for (address, name) in known {
            let rename = |text: &mut String| *text = replace_address(text, &address, &name);
            self.nodes.iter_mut().for_each(rename);
            self.checks.iter_mut().for_each(|c| rename(&mut c.reason));
            self.error.iter_mut().for_each(rename);
            self.names.push((address, name));
        }
    }

    /// `text` with each known address followed by its node's name.
    pub fn named(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (address, name) in &self.names {
            out = replace_address(&out, address, name);
        }
        out
    }

    /// Folds one progress message in; returns the index of the row it changed, if any.
    pub fn apply(&mut self, progress: HealthProgress) -> Option<usize> {
        match progress {
            HealthProgress::Discovered(nodes) => {
                self.nodes = nodes.iter().map(|n| self.named(n)).collect();
                None
            }
            HealthProgress::Check { name, state } => {
                let (state, reason) = match state {
                    CheckState::Waiting => (CheckMark::Waiting, String::new()),
                    CheckState::Passed => (CheckMark::Ok, String::new()),
                    CheckState::Failing(why) => (CheckMark::Fail, self.named(&one_line(&why))),
                };
                let row = HealthCheckRow {
                    name,
                    state,
                    reason,
                };
                match self.checks.iter().position(|c| c.name == row.name) {
                    Some(i) => {
                        self.checks[i] = row;
                        Some(i)
                    }
                    None => {
                        self.checks.push(row);
                        Some(self.checks.len() - 1)
                    }
                }
            }
            HealthProgress::Note(_) => None,
        }
    }

    /// The stream ended: healthy when it ended cleanly with every check passed; otherwise a
    /// check still waiting becomes failing, with the stream's error as its reason.
    pub fn finish(&mut self, error: Option<String>) {
        let all_passed =
            !self.checks.is_empty() && self.checks.iter().all(|c| c.state == CheckMark::Ok);
        self.healthy = error.is_none() && all_passed;
        if let Some(error) = &error {
            for c in self
                .checks
                .iter_mut()
                .filter(|c| c.state == CheckMark::Waiting)
            {
                c.state = CheckMark::Fail;
                c.reason = error.clone();
            }
        }
        self.error = error;
    }

    /// How a client-side run (talosctl's `--server=false`, evaluated round after round) ends
    /// after a round, `waited` since it began: every check passed (`Some(None)`), or not
    /// every one within `wait` (`Some(Some(why))`); `None` while it goes on. The command and
    /// the console's checklist end it alike.
    pub fn client_side_end(&self, waited: Duration, wait: Duration) -> Option<Option<String>> {
        if self.checks.iter().all(|c| c.state == CheckMark::Ok) {
            return Some(None);
        }
        (waited >= wait).then(|| Some(format!("not every check passed within {wait:?}")))
    }

    /// The checks that passed, in the list's order (the command prints each once, the
    /// console's verdict counts them).
    pub fn passed(&self) -> impl Iterator<Item = &HealthCheckRow> {
        self.checks.iter().filter(|c| c.state == CheckMark::Ok)
    }

    /// The first failing check, if any.
    pub fn first_failure(&self) -> Option<&HealthCheckRow> {
        self.checks.iter().find(|c| c.state == CheckMark::Fail)
    }

    /// Why the checks are not healthy: the first failing check and its error, else how the
    /// run ended.
    pub fn failure(&self) -> String {
        match self.first_failure() {
            Some(c) => format!("{}: {}", c.name, c.reason),
            None => (self.error.clone()).unwrap_or_else(|| "not every check ran".into()),
        }
    }

    /// The server's checks the list has no row of yet: once the server's run ended
    /// unhealthy, those it never ran (`check.Wait`, siderolabs/talos
    /// pkg/cluster/check/check.go, returns at the first check that fails).
    pub fn not_reached(&self) -> impl Iterator<Item = &'static str> {
        (SERVER_CHECKS.iter().copied()).filter(|name| !self.checks.iter().any(|c| c.name == *name))
    }
}

/// A multi-line reason (hashicorp's multierror lists) as one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` with `address` replaced where it stands alone (not inside a longer address).
fn replace_address(text: &str, address: &str, name: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(address) {
        let end = at + address.len();
        let before = rest[..at].chars().next_back();
        let after = rest[end..].chars().next();
        let part_of_more = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == '.');
        out.push_str(&rest[..at]);
        rest = &rest[end..];
        if part_of_more(before) || part_of_more(after) {
            out.push_str(address);
            continue;
        }
        // `address:port` (a dial error) keeps the pair whole: `w-2 (127.10.1.5:50000)`.
        let port_len = rest
            .strip_prefix(':')
            .map_or(0, |p| p.chars().take_while(char::is_ascii_digit).count());
        if port_len > 0 {
            let port = &rest[1..=port_len];
            out.push_str(&format!("{name} ({address}:{port})"));
            rest = &rest[1 + port_len..];
        } else {
            out.push_str(&format!("{address} ({name})"));
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> HealthChecklist {
        HealthChecklist {
            names: vec![("10.5.0.3".into(), "cp-2".into())],
            ..HealthChecklist::default()
        }
    }

    #[test]
    fn failing_reasons_name_the_node() {
        let mut l = list();
        l.apply(HealthProgress::Check {
            name: "etcd to be healthy".into(),
            state: CheckState::Failing("* 10.5.0.3: service is not healthy; 10.5.0.30: ok".into()),
        });
        assert_eq!(
            l.checks[0].reason,
            "* 10.5.0.3 (cp-2): service is not healthy; 10.5.0.30: ok"
        );
        l.finish(Some("deadline".into()));
        assert!(!l.healthy);
        assert_eq!(
            l.first_failure().map(|c| c.name.as_str()),
            Some("etcd to be healthy")
        );
    }

    #[test]
    fn an_address_with_its_port_is_named_as_the_node_then_the_pair() {
        let mut l = list();
        l.apply(HealthProgress::Check {
            name: "apid to be ready".into(),
            state: CheckState::Failing(
                "10.5.0.3: transport: Error while dialing: dial tcp 10.5.0.3:50000: connect: connection refused".into(),
            ),
        });
        assert_eq!(
            l.checks[0].reason,
            "10.5.0.3 (cp-2): transport: Error while dialing: dial tcp cp-2 (10.5.0.3:50000): connect: connection refused"
        );
    }

    #[test]
    fn names_learnt_later_name_what_is_already_shown() {
        let mut l = HealthChecklist::default();
        l.apply(HealthProgress::Discovered(vec!["10.5.0.3".into()]));
        l.apply(HealthProgress::Check {
            name: "etcd to be healthy".into(),
            state: CheckState::Failing("* 10.5.0.3: unavailable; 10.5.0.30: ok".into()),
        });
        let node = |address: &str, name: &str| crate::fleet::NodeStatus {
            address: address.into(),
            name: name.into(),
            ..Default::default()
        };
        let status = ClusterStatus {
            nodes: vec![node("10.5.0.3", "cp-2"), node("10.5.0.4", "10.5.0.4")],
            ..Default::default()
        };
        l.learn_names(&status);
        l.learn_names(&status);
        assert_eq!(l.nodes, vec!["10.5.0.3 (cp-2)".to_string()]);
        assert_eq!(
            l.checks[0].reason,
            "* 10.5.0.3 (cp-2): unavailable; 10.5.0.30: ok"
        );
    }

    #[test]
    fn a_check_updates_its_row_and_all_passed_is_healthy() {
        let mut l = list();
        let check = |state| HealthProgress::Check {
            name: "apid to be ready".into(),
            state,
        };
        assert_eq!(l.apply(check(CheckState::Waiting)), Some(0));
        assert_eq!(l.passed().count(), 0);
        assert_eq!(l.apply(check(CheckState::Passed)), Some(0));
        assert_eq!(l.checks.len(), 1);
        assert_eq!(
            l.passed().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["apid to be ready"]
        );
        l.finish(None);
        assert!(l.healthy);
    }

    #[test]
    fn a_check_still_waiting_at_the_deadline_fails() {
        let mut l = list();
        l.apply(HealthProgress::Check {
            name: "apid to be ready".into(),
            state: CheckState::Waiting,
        });
        l.finish(Some("timed out".into()));
        assert_eq!(l.checks[0].state, CheckMark::Fail);
        assert_eq!(l.checks[0].reason, "timed out");
    }

    #[test]
    fn a_client_side_run_ends_when_all_passed_or_out_of_time() {
        let mut l = list();
        let check = |state| HealthProgress::Check {
            name: "apid to be ready".into(),
            state,
        };
        let wait = Duration::from_secs(60);
        l.apply(check(CheckState::Waiting));
        assert_eq!(l.client_side_end(Duration::from_secs(59), wait), None);
        let late = l.client_side_end(wait, wait);
        assert_eq!(late, Some(Some("not every check passed within 60s".into())));
        l.apply(check(CheckState::Passed));
        assert_eq!(l.client_side_end(Duration::ZERO, wait), Some(None));
    }
}
